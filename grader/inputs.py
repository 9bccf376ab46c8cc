"""Seeded test data: the inputs of a test case, the weights the grader loads, hidden seeds.

Every draw comes from a generator of its own, keyed by the whole seed: NumPy's PCG64 under a
`SeedSequence`, which mixes every bit of a seed of any size into a 256-bit pool and fills the
generator's whole state from it. A hidden test's seed is a full HMAC-SHA256 digest, so its input
sets are as hard to rebuild as the secret is to guess. (torch's CPU generator keeps the low 32
bits of its seed: a hidden input set drawn by it was one of 2^32, found offline from a few of its
values.) Never the global RNG: a submission's constructor reseeds it (the seed exercise does, on
purpose), which must not move the inputs.
"""

from __future__ import annotations

import hashlib
import hmac
import math

import numpy as np
import torch

from grader.spec import CausalMask, ExerciseSpec, RandomTensor, SameAs, TestCaseSpec

Inputs = tuple[np.ndarray | None, ...]

# Streams of one test's seed, so that inputs, weights and perturbations are independent.
_INPUTS_STREAM = 0
_WEIGHTS_STREAM = 1
_PERTURBATION_STREAM = 2
_COTANGENT_STREAM = 3
_POOL_WORDS = 8  # 8 x 32 bits: a pool as wide as a hidden seed


def hidden_seed(secret: str, slug: str, test_name: str) -> int:
    """A seed that only the deployment secret can reproduce, so hidden inputs can't be looked up:
    the whole HMAC-SHA256 of the test under the secret, 256 bits."""
    digest = hmac.new(secret.encode(), f"{slug}/{test_name}".encode(), hashlib.sha256).digest()
    return int.from_bytes(digest, "big")


def seeds_for(spec: ExerciseSpec, test: TestCaseSpec, secret: str, sets: int) -> tuple[int, ...]:
    """A visible test's seed; `sets` seeds for a hidden test, one per input set."""
    if test.seed is not None:
        return (test.seed,)
    return tuple(hidden_seed(secret, spec.slug, f"{test.name}/{index}") for index in range(sets))


def _generator(seed: int, stream: int = _INPUTS_STREAM) -> np.random.Generator:
    """The generator of one stream of `seed`; every bit of `seed` decides what it draws."""
    sequence = np.random.SeedSequence(seed, spawn_key=(stream,), pool_size=_POOL_WORDS)
    return np.random.Generator(np.random.PCG64(sequence))


def make_inputs(test: TestCaseSpec, seed: int) -> Inputs:
    draws = _generator(seed)
    values: list[np.ndarray | None] = []
    for spec in test.inputs:
        if isinstance(spec, RandomTensor):
            values.append(_random(spec, draws))
        elif isinstance(spec, CausalMask):
            values.append(causal_mask(spec.causal_mask, spec.dtype))
        elif isinstance(spec, SameAs):
            values.append(values[spec.same_as])
    return tuple(values)


def _random(spec: RandomTensor, draws: np.random.Generator) -> np.ndarray:
    """Standard normal ("randn") or uniform in [0, 1) ("rand"), drawn in the spec's dtype."""
    dtype = np.dtype(spec.dtype)
    if spec.dist == "randn":
        return draws.standard_normal(spec.shape, dtype=dtype)
    return draws.random(spec.shape, dtype=dtype)


def causal_mask(size: int, dtype: str = "float32") -> np.ndarray:
    """Additive mask: 0 where a position may attend (itself and earlier), -inf where it may not."""
    mask = np.zeros((size, size), dtype=dtype)
    mask[np.triu_indices(size, k=1)] = -np.inf
    return mask


def draw_parameters(module: torch.nn.Module, seed: int) -> dict[str, np.ndarray]:
    """Values for every parameter of `module`, uniform in ±1/sqrt(fan_in) like nn.Linear's init.

    Drawn by the grader rather than taken from the module's own init, which leaves some
    parameters constant (nn.MultiheadAttention's biases start at zero and would hide a
    submission that ignores them).
    """
    draws = _generator(seed, _WEIGHTS_STREAM)
    drawn = {}
    for name, parameter in module.named_parameters():
        bound = 1.0 / math.sqrt(parameter.shape[-1])
        values = draws.uniform(-bound, bound, size=tuple(parameter.shape))
        drawn[name] = values.astype(parameter.detach().numpy().dtype)
    return drawn


def perturb(
    test: TestCaseSpec, inputs: Inputs, seed: int, index: tuple[int | slice, ...]
) -> Inputs:
    """The inputs with the entries at `index` of the first input redrawn; inputs that are the
    same tensor as the first (self-attention's key and value) change with it."""
    first = inputs[0]
    if first is None:
        return inputs
    changed = first.copy()
    region = changed[index]
    noise = _generator(seed, _PERTURBATION_STREAM).standard_normal(region.shape)
    changed[index] = region + 1.0 + noise  # +1 keeps the change far from zero
    aliases = {0} | {
        position
        for position, spec in enumerate(test.inputs)
        if isinstance(spec, SameAs) and spec.same_as == 0
    }
    return tuple(changed if position in aliases else value for position, value in enumerate(inputs))


def drawn_positions(test: TestCaseSpec) -> tuple[int, ...]:
    """The positions of the inputs drawn at random: the ones a gradient is taken with respect
    to and that stability scales (a mask is neither)."""
    return tuple(
        position for position, spec in enumerate(test.inputs) if isinstance(spec, RandomTensor)
    )


def draw_cotangents(seed: int, like: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
    """A standard normal cotangent for each output, of its shape and dtype."""
    draws = _generator(seed, _COTANGENT_STREAM)
    return tuple(draws.standard_normal(array.shape).astype(array.dtype) for array in like)


def scaled(test: TestCaseSpec, inputs: Inputs, scale: float) -> Inputs:
    """The inputs with every drawn tensor multiplied by `scale`; an argument passed twice stays
    one array."""
    drawn = drawn_positions(test)
    copies = {
        id(value): value * value.dtype.type(scale)
        for position, value in enumerate(inputs)
        if value is not None and position in drawn
    }
    return tuple(None if value is None else copies.get(id(value), value) for value in inputs)
