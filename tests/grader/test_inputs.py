import numpy as np
import pytest
import torch

from grader.inputs import causal_mask, draw_parameters, hidden_seed, make_inputs, perturb
from grader.spec import TestCaseSpec

CASE = TestCaseSpec.model_validate(
    {
        "name": "self-attention",
        "seed": 7,
        "inputs": [{"shape": [2, 3, 4]}, {"same_as": 0}, {"causal_mask": 3}],
    }
)
HIDDEN = TestCaseSpec.model_validate(
    {"name": "hidden", "visibility": "hidden", "inputs": [{"shape": [2, 3, 4]}]}
)
SEED = hidden_seed("s3cret", "slug", "hidden/0")


def test_inputs_do_not_depend_on_the_global_rng() -> None:
    torch.manual_seed(0)
    first = make_inputs(CASE, 7)
    torch.manual_seed(12345)
    torch.rand(10)
    second = make_inputs(CASE, 7)
    assert np.array_equal(first[0], second[0])  # type: ignore[arg-type]


def test_same_as_is_the_very_same_array_and_masks_are_causal() -> None:
    inputs = make_inputs(CASE, 7)
    assert inputs[1] is inputs[0]
    assert np.array_equal(inputs[2], causal_mask(3))  # type: ignore[arg-type]
    assert causal_mask(3)[0, 1] == -np.inf and causal_mask(3)[1, 0] == 0


def test_inputs_have_their_spec_dtype_and_distribution() -> None:
    case = TestCaseSpec.model_validate(
        {
            "name": "kinds",
            "seed": 3,
            "inputs": [
                {"shape": [64, 64], "dist": "rand", "dtype": "float64"},
                {"shape": [64, 64]},
                {"causal_mask": 4, "dtype": "float64"},
            ],
        }
    )
    uniform, normal, mask = make_inputs(case, 3)
    assert uniform is not None and normal is not None and mask is not None
    assert [str(array.dtype) for array in (uniform, normal, mask)] == [
        "float64",
        "float32",
        "float64",
    ]
    assert uniform.min() >= 0 and uniform.max() < 1 and abs(uniform.mean() - 0.5) < 0.05
    assert normal.min() < 0 and abs(normal.mean()) < 0.1 and abs(normal.std() - 1) < 0.1


def test_hidden_seeds_depend_on_the_secret_and_the_test() -> None:
    seed = hidden_seed("s3cret", "slug", "hidden 1")
    assert seed == hidden_seed("s3cret", "slug", "hidden 1")
    assert seed != hidden_seed("other", "slug", "hidden 1")
    assert seed != hidden_seed("s3cret", "slug", "hidden 2")
    assert 0 <= seed < 2**256


def test_hidden_seeds_carry_the_whole_digest() -> None:
    # 63 bits before: a hidden input set was one of 2^63 at most, whatever drew it.
    seeds = [hidden_seed("s3cret", "slug", f"hidden/{index}") for index in range(8)]
    assert max(seed.bit_length() for seed in seeds) > 192


@pytest.mark.parametrize("bit", [32, 40, 64, 100, 128, 200, 255])
def test_hidden_inputs_change_with_any_bit_of_the_seed(bit: int) -> None:
    # torch's generator kept the low 32 bits: seeds that agreed there drew the same inputs.
    other = SEED ^ (1 << bit)
    assert not np.array_equal(make_inputs(HIDDEN, SEED)[0], make_inputs(HIDDEN, other)[0])  # type: ignore[arg-type]
    module = torch.nn.Linear(4, 3)
    ours, theirs = draw_parameters(module, SEED), draw_parameters(module, other)
    assert not np.array_equal(ours["weight"], theirs["weight"])


def test_perturbation_changes_only_the_region_and_its_aliases() -> None:
    inputs = make_inputs(CASE, 7)
    changed = perturb(CASE, inputs, 7, (slice(None), 2))
    assert changed[1] is changed[0]
    assert np.array_equal(changed[0][:, :2], inputs[0][:, :2])  # type: ignore[index]
    assert not np.allclose(changed[0][:, 2], inputs[0][:, 2])  # type: ignore[index]
    assert changed[2] is inputs[2]


def test_drawn_parameters_cover_every_parameter_and_are_never_constant() -> None:
    module = torch.nn.MultiheadAttention(8, 2, batch_first=True)
    drawn = draw_parameters(module, seed=3)
    assert set(drawn) == {name for name, _ in module.named_parameters()}
    assert all(values.dtype == np.float32 for values in drawn.values())
    assert np.abs(drawn["in_proj_bias"]).min() > 0  # the module's own init leaves zeros
    assert np.abs(drawn["in_proj_weight"]).max() <= 1 / np.sqrt(8)
    assert np.array_equal(drawn["out_proj.weight"], draw_parameters(module, 3)["out_proj.weight"])
