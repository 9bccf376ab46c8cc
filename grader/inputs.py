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

from grader.contract import Arg, Inputs
from grader.input_specs import (
    CausalMask,
    InputSpec,
    IntegerTensor,
    KeepPrefix,
    LiteralInput,
    RandomTensor,
    SameAs,
)
from grader.spec import ExerciseSpec, TestCaseSpec

# Streams of one test's seed, so that inputs, weights and perturbations are independent. The
# first two, and the pool's width, are public: a visible test's snippet (grader.reproduce) draws
# with them too.
INPUTS_STREAM = 0
WEIGHTS_STREAM = 1
_PERTURBATION_STREAM = 2
_COTANGENT_STREAM = 3
POOL_WORDS = 8  # 8 x 32 bits: a pool as wide as a hidden seed


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


def _generator(seed: int, stream: int = INPUTS_STREAM) -> np.random.Generator:
    """The generator of one stream of `seed`; every bit of `seed` decides what it draws."""
    sequence = np.random.SeedSequence(seed, spawn_key=(stream,), pool_size=POOL_WORDS)
    return np.random.Generator(np.random.PCG64(sequence))


def make_inputs(test: TestCaseSpec, seed: int) -> Inputs:
    """The inputs of a test's one call (of its first step, for a sequence)."""
    return make_call_inputs(test, seed)[0]


def make_call_inputs(test: TestCaseSpec, seed: int) -> tuple[Inputs, ...]:
    """The inputs of each of the test's calls, in order, all drawn from the one seed."""
    draws = _generator(seed)
    return tuple(_draw(step.inputs, draws) for step in test.calls)


def _draw(specs: list[InputSpec], draws: np.random.Generator) -> Inputs:
    values: list[Arg] = []
    for spec in specs:
        if isinstance(spec, SameAs):
            values.append(values[spec.same_as])
        elif isinstance(spec, CausalMask):
            values.append(causal_mask(spec.causal_mask, spec.dtype))
        elif isinstance(spec, LiteralInput):
            values.append(literal(spec))
        elif isinstance(spec, RandomTensor):
            values.append(_random(spec, draws))
        elif isinstance(spec, IntegerTensor):
            values.append(_integers(spec, draws))
        else:
            values.append(_keep_prefix(spec, draws))
    return tuple(values)


def _random(spec: RandomTensor, draws: np.random.Generator) -> np.ndarray:
    """Standard normal ("randn") or uniform in [0, 1) ("rand"), drawn in the spec's dtype,
    times its scale."""
    dtype = np.dtype(spec.dtype)
    if spec.dist == "randn":
        values = draws.standard_normal(spec.shape, dtype=dtype)
    else:
        values = draws.random(spec.shape, dtype=dtype)
    return values if spec.scale == 1.0 else values * dtype.type(spec.scale)


def _integers(spec: IntegerTensor, draws: np.random.Generator) -> np.ndarray:
    """Uniform integers; where some are ignored, at least one is and one is not."""
    values = draws.integers(spec.low, spec.high, size=spec.integers, dtype=np.int64)
    if spec.ignore_index is None:
        return values
    flat = values.reshape(-1)
    ignored = draws.random(flat.size) < spec.ignored
    if flat.size > 1:
        ignored[0], ignored[-1] = True, False
    flat[ignored] = spec.ignore_index
    return values


def _keep_prefix(spec: KeepPrefix, draws: np.random.Generator) -> np.ndarray:
    """True for each row's first L positions, L in [1, tokens]; the first row keeps all."""
    rows, tokens = spec.keep_prefix
    lengths = draws.integers(1, tokens + 1, size=rows)
    lengths[0] = tokens
    keep: np.ndarray = np.arange(tokens)[None, :] < lengths[:, None]
    return keep


def literal(spec: LiteralInput) -> Arg:
    """A scalar as it is written; a list as an array of the spec's dtype, else of its values'
    kind (bool, int64, float32)."""
    if not isinstance(spec.literal, list):
        return spec.literal
    values = np.array(spec.literal)
    dtype = spec.dtype or {"b": "bool", "i": "int64"}.get(values.dtype.kind, "float32")
    return values.astype(dtype)


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
    draws = _generator(seed, WEIGHTS_STREAM)
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
    same tensor as the first (self-attention's key and value) change with it. Only a float
    tensor is redrawn: token ids and masks are left as they are."""
    first = inputs[0]
    if not isinstance(first, np.ndarray) or first.dtype.kind != "f":
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
        if isinstance(value, np.ndarray) and position in drawn
    }
    return tuple(copies.get(id(value), value) for value in inputs)
