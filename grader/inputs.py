"""Seeded test data: the inputs of a test case, the weights the grader loads, hidden seeds.

Every draw uses a dedicated `torch.Generator`, never the global RNG: a submission's constructor
reseeds the global RNG (the seed exercise does, on purpose), which must not move the inputs.
"""

from __future__ import annotations

import hashlib
import hmac
import math

import numpy as np
import torch

from grader.spec import CausalMask, ExerciseSpec, RandomTensor, SameAs, TestCaseSpec

Inputs = tuple[np.ndarray | None, ...]

# Streams derived from one test seed, so that inputs, weights and perturbations are independent.
_WEIGHTS_STREAM = 0x5EED_0001
_PERTURBATION_STREAM = 0x5EED_0002


def hidden_seed(secret: str, slug: str, test_name: str) -> int:
    """A seed that only the deployment secret can reproduce, so hidden inputs can't be looked up."""
    digest = hmac.new(secret.encode(), f"{slug}/{test_name}".encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") >> 1  # non-negative and within int64


def seeds_for(spec: ExerciseSpec, test: TestCaseSpec, secret: str, sets: int) -> tuple[int, ...]:
    """A visible test's seed; `sets` seeds for a hidden test, one per input set."""
    if test.seed is not None:
        return (test.seed,)
    return tuple(hidden_seed(secret, spec.slug, f"{test.name}/{index}") for index in range(sets))


def make_inputs(test: TestCaseSpec, seed: int) -> Inputs:
    generator = torch.Generator().manual_seed(seed)
    values: list[np.ndarray | None] = []
    for spec in test.inputs:
        if isinstance(spec, RandomTensor):
            values.append(_random(spec, generator))
        elif isinstance(spec, CausalMask):
            values.append(causal_mask(spec.causal_mask, spec.dtype))
        elif isinstance(spec, SameAs):
            values.append(values[spec.same_as])
    return tuple(values)


def _random(spec: RandomTensor, generator: torch.Generator) -> np.ndarray:
    dtype = getattr(torch, spec.dtype)
    draw = torch.randn if spec.dist == "randn" else torch.rand
    return draw(spec.shape, generator=generator, dtype=dtype).numpy()


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
    generator = torch.Generator().manual_seed(seed ^ _WEIGHTS_STREAM)
    drawn = {}
    for name, parameter in module.named_parameters():
        bound = 1.0 / math.sqrt(parameter.shape[-1])
        values = torch.rand(parameter.shape, generator=generator, dtype=parameter.dtype)
        drawn[name] = ((values * 2 - 1) * bound).numpy()
    return drawn


def perturb(
    test: TestCaseSpec, inputs: Inputs, seed: int, index: tuple[int | slice, ...]
) -> Inputs:
    """The inputs with the entries at `index` of the first input redrawn; inputs that are the
    same tensor as the first (self-attention's key and value) change with it."""
    first = inputs[0]
    if first is None:
        return inputs
    generator = torch.Generator().manual_seed(seed ^ _PERTURBATION_STREAM)
    changed = first.copy()
    region = changed[index]
    noise = torch.randn(region.shape, generator=generator, dtype=torch.float64).numpy()
    changed[index] = region + 1.0 + noise  # +1 keeps the change far from zero
    aliases = {0} | {
        position
        for position, spec in enumerate(test.inputs)
        if isinstance(spec, SameAs) and spec.same_as == 0
    }
    return tuple(changed if position in aliases else value for position, value in enumerate(inputs))
