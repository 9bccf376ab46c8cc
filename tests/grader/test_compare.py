import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from grader.compare import Check, agree, agreement, compare, compare_arrays
from grader.contract import OutputValue


def tensor(array: np.ndarray, dtype: str = "torch.float32") -> OutputValue:
    return OutputValue("Tensor", array=array, dtype=dtype, shape=array.shape)


EXPECTED = tensor(np.array([[0.12344, -1.5], [2.0, 0.0]], dtype=np.float32))


def test_equal_values_match() -> None:
    result = compare("output", EXPECTED, EXPECTED)
    assert result.passed
    assert result.max_abs_error == 0.0


def test_checks_run_in_order_type_before_shape_before_dtype() -> None:
    wrong_everything = OutputValue("list", shape=None)
    assert compare("output", wrong_everything, EXPECTED).check is Check.TYPE

    wrong_shape = tensor(np.zeros((2, 3), dtype=np.float64), dtype="torch.float64")
    result = compare("output", wrong_shape, EXPECTED)
    assert result.check is Check.SHAPE
    assert result.message == "`output` has shape (2, 3); expected (2, 2)"

    wrong_dtype = tensor(np.zeros((2, 2), dtype=np.float64), dtype="torch.float64")
    result = compare("output", wrong_dtype, EXPECTED)
    assert result.check is Check.DTYPE
    assert "torch.float64" in result.message and "torch.float32" in result.message


def test_type_message_names_what_was_returned() -> None:
    result = compare("output", OutputValue("list of 2 Tensor"), EXPECTED)
    assert result.message == "`output` should be a torch.Tensor; got list of 2 Tensor"


def test_non_finite_values_are_reported_before_values() -> None:
    actual = EXPECTED.array.copy()  # type: ignore[union-attr]
    actual[1, 0] = np.nan
    actual[0, 1] = 7.0
    result = compare("output", tensor(actual), EXPECTED)
    assert result.check is Check.NON_FINITE
    assert result.first_mismatch is not None and result.first_mismatch.index == (1, 0)
    assert "1 NaN" in result.message


def test_value_mismatch_reports_count_max_error_and_first_index() -> None:
    actual = EXPECTED.array.copy()  # type: ignore[union-attr]
    actual[1, 1] = 0.25
    actual[0, 1] = -1.4
    result = compare("output", tensor(actual), EXPECTED)
    assert result.check is Check.VALUES
    assert result.mismatch_count == 2
    assert result.max_abs_error == pytest.approx(0.25)
    assert result.first_mismatch is not None
    assert result.first_mismatch.index == (0, 1)
    assert result.first_mismatch.expected == pytest.approx(-1.5)
    assert result.first_mismatch.actual == pytest.approx(-1.4)


def test_a_mismatch_is_said_once_its_first_value_in_its_own_field() -> None:
    actual = EXPECTED.array.copy()  # type: ignore[union-attr]
    actual[0, 1] = -1.4
    result = compare("output", tensor(actual), EXPECTED)
    assert result.message == "`output` differs in 1 of 4 values (max abs error 0.1)"


def test_float32_values_come_out_as_their_shortest_float32_decimals() -> None:
    """A float32 0.0571 is 0.057100001722574234 as a float64: the report says 0.0571."""
    expected = tensor(np.array([[0.0571, 1.0]], dtype=np.float32))
    actual = tensor(np.array([[0.0824, 1.0]], dtype=np.float32))
    result = compare("output", actual, expected)
    assert result.first_mismatch is not None
    assert (result.first_mismatch.expected, result.first_mismatch.actual) == (0.0571, 0.0824)
    assert result.max_abs_error == 0.0253
    wide = compare(
        "output",
        tensor(np.array([[0.1 + 0.2]]), "torch.float64"),
        tensor(np.array([[1.0]]), "torch.float64"),
    )
    assert wide.first_mismatch is not None and wide.first_mismatch.actual == 0.1 + 0.2


def test_one_unit_in_the_fourth_decimal_is_tolerated_two_are_not() -> None:
    expected = np.array([0.12345], dtype=np.float64)
    assert compare_arrays("o", np.array([0.12354]), expected).passed  # rounds 0.1235 vs 0.1234
    assert not compare_arrays("o", np.array([0.12365]), expected).passed


def test_expected_infinities_must_be_matched_exactly() -> None:
    expected = np.array([-np.inf, 1.0])
    assert compare_arrays("o", np.array([-np.inf, 1.0]), expected).passed
    assert not compare_arrays("o", np.array([5.0, 1.0]), expected).passed


def test_overflowing_values_fail_without_warnings() -> None:
    assert not compare_arrays("o", np.array([1e308]), np.array([0.0])).passed


# Within ±64 a float32 ULP is under 4e-6, so "4 decimals" is meaningful for float32 there;
# attention outputs are of order 1.
finite = st.floats(-64, 64, allow_nan=False, width=32)


@given(arrays(np.float32, st.integers(1, 40), elements=finite))
def test_reordering_noise_never_fails_a_correct_answer(values: np.ndarray) -> None:
    """A correct solution computed in another order differs by a few ULPs: it must pass, even
    where that flips a value across a rounding boundary of the 4th decimal."""
    noisy = np.nextafter(np.nextafter(values, np.inf), np.inf)
    assert agree(noisy, values)


@given(arrays(np.float64, st.integers(1, 40), elements=st.floats(-10, 10)), st.integers(0, 39))
def test_an_error_of_three_units_always_fails(values: np.ndarray, position: int) -> None:
    wrong = values.copy()
    wrong[position % values.size] += 3e-4
    assert not agree(wrong, values)


def test_arrays_of_two_shapes_are_a_shape_failure_never_broadcast() -> None:
    """Broadcast, a (1, n) against an (n, 1) would be n * n values: 1.7e13 here."""
    n = 1 << 22
    row, column = np.zeros((1, n), dtype=np.float32), np.zeros((n, 1), dtype=np.float32)
    result = compare_arrays("output", row, column)
    assert result.check is Check.SHAPE
    assert result.message == f"`output` has shape (1, {n}); expected ({n}, 1)"
    assert not agree(row, column)
    with pytest.raises(ValueError, match="not compared"):
        agreement(row, column)


def test_the_arrays_shapes_are_checked_not_only_the_shapes_they_claim() -> None:
    array = np.zeros((1, 4), dtype=np.float32)
    lying = OutputValue("Tensor", array=array, dtype="torch.float32", shape=EXPECTED.shape)
    assert compare("output", lying, EXPECTED).check is Check.SHAPE


def test_a_shape_failure_does_no_elementwise_work(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object) -> None:
        raise AssertionError("compared elementwise")

    monkeypatch.setattr("grader.compare._compare_values", refuse)
    huge = tensor(np.zeros((1, 1 << 22), dtype=np.float32))
    assert compare("output", huge, EXPECTED).check is Check.SHAPE


def test_the_first_mismatch_is_the_first_in_c_order() -> None:
    expected = np.zeros((3, 4))
    actual = expected.copy()
    actual[2, 0] = actual[1, 3] = actual[2, 3] = 1.0
    result = compare_arrays("o", actual, expected)
    assert result.first_mismatch is not None and result.first_mismatch.index == (1, 3)
    assert result.mismatch_count == 3


# --- elementwise agreement against its definition, one element at a time -----------------------


def agrees_one(got: float, want: float) -> bool:
    """The definition, on one pair: within one unit after rounding where both are finite (a
    difference that overflows to NaN is not "more than one unit"), else the same special value."""
    if math.isfinite(got) and math.isfinite(want):
        with np.errstate(all="ignore"):
            scaled = np.round(np.float64(got) * 1e4) - np.round(np.float64(want) * 1e4)
        return not abs(scaled) > 1
    return got == want or (math.isnan(got) and math.isnan(want))


specials = st.sampled_from([np.nan, np.inf, -np.inf, 1e308, -1e308, 0.00005, 0.00015, 0.0])
any_value = st.one_of(st.floats(-10, 10), st.floats(allow_nan=True, allow_infinity=True), specials)


@given(
    st.integers(0, 30).flatmap(
        lambda n: st.tuples(
            arrays(np.float64, n, elements=any_value), arrays(np.float64, n, elements=any_value)
        )
    )
)
def test_agreement_is_the_definition_element_by_element(pair: tuple[np.ndarray, ...]) -> None:
    got, want = pair
    one_by_one = [agrees_one(float(g), float(w)) for g, w in zip(got, want, strict=True)]
    assert agreement(got, want).tolist() == one_by_one
    assert agree(got, want) is all(one_by_one)
    assert compare_arrays("o", got, want).passed is all(one_by_one)


@given(
    arrays(
        np.float32,
        (3, 4),
        elements=st.floats(-64, 64, width=32) | st.sampled_from([np.nan, np.inf, -np.inf]),
    )
)
def test_float32_values_are_judged_as_their_float64_values(values: np.ndarray) -> None:
    shifted = values + np.float32(2e-4)
    expected = [
        agrees_one(float(s), float(v)) for s, v in zip(shifted.flat, values.flat, strict=True)
    ]
    assert agreement(shifted, values).reshape(-1).tolist() == expected
