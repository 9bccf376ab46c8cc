import numpy as np
import pytest
import torch

from grader.inputs import (
    causal_mask,
    draw_parameters,
    hidden_seed,
    make_call_inputs,
    make_inputs,
    perturb,
)
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
    assert isinstance(uniform, np.ndarray) and isinstance(normal, np.ndarray)
    assert isinstance(mask, np.ndarray)
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


def kinds(*inputs: dict[str, object]) -> tuple[object, ...]:
    case = TestCaseSpec.model_validate({"name": "kinds", "seed": 5, "inputs": list(inputs)})
    return make_inputs(case, 5)


def test_integers_are_uniform_in_their_range_and_some_are_ignored() -> None:
    (ids,) = kinds({"integers": [4, 50], "high": 7, "low": 2})
    assert isinstance(ids, np.ndarray) and ids.dtype == np.int64 and ids.shape == (4, 50)
    assert set(np.unique(ids)) == set(range(2, 7))
    (targets,) = kinds({"integers": [400], "high": 5, "ignore_index": -100, "ignored": 0.25})
    assert isinstance(targets, np.ndarray)
    ignored = targets == -100
    assert ignored[0] and not ignored[-1] and 0.15 < ignored.mean() < 0.35
    assert set(np.unique(targets[~ignored])) == set(range(5))


def test_a_keep_prefix_keeps_each_row_from_its_start_and_the_first_row_whole() -> None:
    (keep,) = kinds({"keep_prefix": [64, 6]})
    assert isinstance(keep, np.ndarray) and keep.dtype == np.bool_ and keep[0].all()
    lengths = keep.sum(axis=1)
    assert lengths.min() >= 1 and len(set(lengths)) > 1
    pairs = zip(keep, lengths, strict=True)
    assert all(row[:length].all() and not row[length:].any() for row, length in pairs)


def test_literals_are_passed_as_written() -> None:
    count, ratio, floats, ids, flags, doubles = kinds(
        {"literal": 16},
        {"literal": 0.5},
        {"literal": [[1.0, 2.0]]},
        {"literal": [3, 1]},
        {"literal": [True, False]},
        {"literal": [1, 2], "dtype": "float64"},
    )
    assert (count, type(count), ratio) == (16, int, 0.5)
    arrays = (floats, ids, flags, doubles)
    assert [str(array.dtype) for array in arrays if isinstance(array, np.ndarray)] == [
        "float32",
        "int64",
        "bool",
        "float64",
    ]


def test_a_scaled_tensor_is_the_drawn_one_times_its_scale() -> None:
    (plain,), (large,) = kinds({"shape": [3, 3]}), kinds({"shape": [3, 3], "scale": 30.0})
    assert isinstance(plain, np.ndarray) and isinstance(large, np.ndarray)
    np.testing.assert_allclose(large, plain * 30, rtol=1e-6)


def test_each_step_of_a_sequence_draws_its_own_inputs_from_the_one_seed() -> None:
    steps = [{"inputs": [{"shape": [2]}]}, {"method": "grow", "inputs": [{"shape": [2]}]}]
    case = TestCaseSpec.model_validate({"name": "sequence", "seed": 5, "steps": steps})
    first, second = make_call_inputs(case, 5)
    assert not np.array_equal(first[0], second[0])  # type: ignore[arg-type]
    assert np.array_equal(make_call_inputs(case, 5)[1][0], second[0])  # type: ignore[arg-type]
