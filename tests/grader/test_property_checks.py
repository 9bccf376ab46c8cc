"""Property checks: judged only on outputs of the reference's shape, in one vectorised pass."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import numpy as np
import pytest
from grader_support import visible

from grader import properties
from grader.compare import agreement
from grader.contract import Call, CallOutcome, OutputValue
from grader.plan import Probe, TestPlan
from grader.property_checks import UNJUDGED, check_properties
from grader.report import PropertyCheck, PropertyStatus
from grader.spec import Property, TestCaseSpec

# The largest output a call may send back (`Call.max_output_elements`), laid out so that a loop
# over positions (or samples) in the grader would make four million comparisons.
HUGE = 1 << 22


def tensor(array: np.ndarray) -> OutputValue:
    return OutputValue("Tensor", array=array, dtype=f"torch.{array.dtype}", shape=array.shape)


def returning(
    main: Callable[[TestPlan], np.ndarray], probed: Callable[[TestPlan], np.ndarray]
) -> dict[str, CallOutcome]:
    """Every visible test's main call returns `main(test)`, each of its probes `probed(test)`."""
    outcomes = {}
    for test in visible():
        outcomes[test.call.id] = CallOutcome(test.call.id, outputs=(tensor(main(test)),))
        for probe in test.probes:
            outcomes[probe.call.id] = CallOutcome(probe.call.id, outputs=(tensor(probed(test)),))
    return outcomes


def expected(test: TestPlan) -> np.ndarray:
    array = test.expected[0].array
    assert array is not None
    return array


def check(outcomes: dict[str, CallOutcome]) -> list[PropertyCheck]:
    return check_properties(list(Property), visible(), outcomes)


@pytest.fixture
def no_elementwise_work(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(first: np.ndarray, second: np.ndarray) -> np.ndarray:
        raise AssertionError(f"compared {first.shape} elementwise")

    monkeypatch.setattr(properties, "agreement", refuse)


@pytest.mark.usefixtures("no_elementwise_work")
@pytest.mark.parametrize(
    "shape",
    # The last holds no element, so the protocol's element cap lets it through: a loop over its
    # positions would never end.
    [(1, HUGE), (HUGE, 1), (0, 1 << 40)],
)
def test_huge_outputs_of_another_shape_are_not_judged_nor_looked_at(shape: tuple[int, ...]) -> None:
    huge = np.zeros(shape, dtype=np.float32)
    results = check(returning(lambda test: huge, lambda test: huge))
    assert [(r.status, r.message) for r in results] == [(PropertyStatus.SKIPPED, UNJUDGED)] * 2


def another_shape(test: TestPlan) -> np.ndarray:
    shape = expected(test).shape
    other = shape[::-1] if shape[::-1] != shape else (*shape, 1)
    return np.zeros(other, dtype=np.float32)


@pytest.mark.usefixtures("no_elementwise_work")
def test_main_and_probe_of_one_shape_other_than_the_references_are_not_judged() -> None:
    """Before, a pair of one shape was judged whatever that shape; now it must be the test's."""
    results = check(returning(another_shape, another_shape))
    assert {r.status for r in results} == {PropertyStatus.SKIPPED}


@pytest.mark.usefixtures("no_elementwise_work")
def test_a_probe_of_another_shape_than_its_main_call_is_not_judged() -> None:
    huge = np.zeros((1, HUGE), dtype=np.float32)
    assert {r.status for r in check(returning(expected, lambda test: huge))} == {
        PropertyStatus.SKIPPED
    }


def test_outputs_of_the_references_shape_are_judged() -> None:
    results = check(returning(expected, expected))
    assert {r.status for r in results} == {PropertyStatus.PASSED}


def test_a_property_that_holds_counts_the_tests_it_was_checked_on_not_all_visible_ones() -> None:
    """Each property probes a few visible tests: "holds on 2 visible tests" read as if the
    exercise had two where it has five."""
    probed = [test for test in visible() if any(p.kind is Property.CAUSAL for p in test.probes)]
    assert 0 < len(probed) < len(visible())
    outcomes = returning(expected, expected)
    first = probed[0]
    outcomes[first.call.id] = CallOutcome(first.call.id, outputs=(tensor(another_shape(first)),))
    causal = next(r for r in check(outcomes) if r.name == Property.CAUSAL.value)
    checked = len(probed) - 1
    assert causal.message == (
        f"holds on the {checked} visible test{'s' * (checked != 1)} it was checked on"
        " (1 more returned an output of the wrong shape)"
    )


@dataclass(frozen=True)
class HugeTest:
    """What `check_properties` reads of a TestPlan, for a test whose reference output is huge."""

    spec: TestCaseSpec
    call: Call
    expected: tuple[OutputValue, ...]
    probes: tuple[Probe, ...]


@pytest.mark.parametrize(
    ("prop", "shape"), [(Property.CAUSAL, (1, HUGE)), (Property.BATCH_INDEPENDENT, (HUGE, 1))]
)
def test_huge_outputs_of_the_references_shape_are_judged_in_one_pass(
    monkeypatch: pytest.MonkeyPatch, prop: Property, shape: tuple[int, int]
) -> None:
    """A loop over four million positions (or samples) would take a minute; one pass does not,
    and is the only elementwise comparison made."""
    compared: list[tuple[int, ...]] = []

    def counted(first: np.ndarray, second: np.ndarray) -> np.ndarray:
        compared.append(first.shape)
        return agreement(first, second)

    monkeypatch.setattr(properties, "agreement", counted)
    output = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    main = Call(id="huge", args=())
    probe = Probe(prop, Call(id="huge [probe]", args=()))
    test = HugeTest(visible()[0].spec, main, (tensor(output),), (probe,))
    outcomes = {
        main.id: CallOutcome(main.id, outputs=(tensor(output),)),
        probe.call.id: CallOutcome(probe.call.id, outputs=(tensor(output.copy()),)),
    }

    (result,) = check_properties([prop], [cast(TestPlan, test)], outcomes)

    assert result.status is PropertyStatus.PASSED, result.message
    assert len(compared) == 1 and np.prod(compared[0]) == HUGE - 1


def test_the_messages_name_the_first_position_and_sample_that_moved() -> None:
    both = {Property.CAUSAL, Property.BATCH_INDEPENDENT}
    test = next(test for test in visible() if {probe.kind for probe in test.probes} >= both)
    main = expected(test)
    assert main.shape[0] >= 2 and main.shape[1] >= 4
    outcomes = returning(expected, expected)
    for probe in test.probes:
        probed = main.copy()
        if probe.kind is Property.CAUSAL:
            probed[:, 2:] += 1.0  # every position from 2 on: 2 is the first
        if probe.kind is Property.BATCH_INDEPENDENT:
            probed[1:, -1] += 1.0  # samples 1 and after, in their last position only
        outcomes[probe.call.id] = CallOutcome(probe.call.id, outputs=(tensor(probed),))
    causal, batch = check_properties(
        [Property.CAUSAL, Property.BATCH_INDEPENDENT], visible(), outcomes
    )
    assert causal.status is batch.status is PropertyStatus.FAILED
    assert causal.message.startswith(
        f"changing the last token changed the output at position 2 in test {test.spec.name!r}:"
    )
    assert batch.message.startswith(
        f"changing sample 0 changed the output of sample 1 in test {test.spec.name!r}:"
    )
