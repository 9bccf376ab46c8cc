"""The properties' registry, and its judges: one vectorised pass that says what the per-position
loop it replaced said."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, arrays

from grader.compare import compare_arrays
from grader.properties import PROPERTIES, _batch_independent, _causal
from grader.spec import Property


def test_every_property_has_one_definition() -> None:
    assert list(PROPERTIES) == list(Property)


# --- the vectorised judges against the loops they replaced --------------------------------------


def loop_causal(main: np.ndarray, probed: np.ndarray) -> int | None:
    for position in range(main.shape[1] - 1):
        if not compare_arrays("", main[:, position], probed[:, position]).passed:
            return position
    return None


def loop_batch_independent(main: np.ndarray, probed: np.ndarray) -> int | None:
    for sample in range(1, main.shape[0]):
        if not compare_arrays("", main[sample], probed[sample]).passed:
            return sample
    return None


values = st.one_of(
    st.floats(-10, 10, width=32), st.sampled_from([np.nan, np.inf, -np.inf, 0.12345])
)
# Most entries stay put; the others move within the tolerance, past it, or to a special value.
changes = st.sampled_from([0.0, 0.0, 0.0, 0.0, 4e-5, 3e-4, 1.0, np.nan, np.inf, -np.inf])


@st.composite
def main_and_probed(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    shape = draw(array_shapes(min_dims=2, max_dims=3, min_side=0, max_side=5))
    main = draw(arrays(np.float32, shape, elements=values))
    change = draw(arrays(np.float64, shape, elements=changes))
    with np.errstate(all="ignore"):
        probed = np.where(np.isfinite(change), main + change, change).astype(np.float32)
    return main, probed


@given(main_and_probed())
def test_causal_judge_says_what_the_loop_said(pair: tuple[np.ndarray, np.ndarray]) -> None:
    main, probed = pair
    assert _causal(main, probed) == loop_causal(main, probed)
    assert _causal(probed, main) == loop_causal(probed, main)


@given(main_and_probed())
def test_batch_judge_says_what_the_loop_said(pair: tuple[np.ndarray, np.ndarray]) -> None:
    main, probed = pair
    assert _batch_independent(main, probed) == loop_batch_independent(main, probed)
    assert _batch_independent(probed, main) == loop_batch_independent(probed, main)
