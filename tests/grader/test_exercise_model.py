"""The exercise model beyond one call of one entry: keep masks, train mode, a sequence of calls
on one instance, a second entry point, literal and integer inputs, dict outputs and tolerances,
graded end to end through the policy (the in-process sandbox) on the engine's own test exercise
(tests/grader/course_model)."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.catalog import Catalog
from grader.report import Report, TestStatus
from grader.runner import Grader
from grader.sandbox.inprocess import InProcessSandbox
from grader.sandbox.process import WarmProcessSandbox

FOLDER = Path(__file__).parent / "course_model"
REFERENCE = (FOLDER / "reference" / "course_model.py").read_text()


@pytest.fixture(scope="module")
def grader() -> Grader:
    return Grader(Catalog.from_folder(FOLDER / "exercises"), InProcessSandbox(), "model")


def grade(grader: Grader, source: str) -> Report:
    return grader.grade("course-model", source)


def failed(report: Report) -> dict[str, str]:
    return {
        test.name: test.message for test in report.tests if test.status is not TestStatus.PASSED
    }


def changed(old: str, new: str) -> str:
    assert old in REFERENCE
    return REFERENCE.replace(old, new, 1)


def test_the_reference_passes_every_kind_of_test(grader: Grader) -> None:
    report = grade(grader, REFERENCE)
    assert failed(report) == {}
    assert report.score == report.max_score == 6


def test_a_tuple_is_as_good_as_a_dict(grader: Grader) -> None:
    tuple_outputs = changed('return {"out": out, "sum": out.sum(-1)}', "return out, out.sum(-1)")
    assert failed(grade(grader, tuple_outputs)) == {}


def test_functional_dropout_at_the_same_place_draws_the_same_mask(grader: Grader) -> None:
    functional = changed(
        "out = self.dropout(self.linear(x))",
        "out = torch.nn.functional.dropout(self.linear(x), 0.5, training=self.training)",
    )
    assert failed(grade(grader, functional)) == {}


def test_dropout_in_the_wrong_place_fails_the_train_mode_test_alone(grader: Grader) -> None:
    misplaced = changed("out = self.dropout(self.linear(x))", "out = self.linear(self.dropout(x))")
    assert list(failed(grade(grader, misplaced))) == ["dropout in train mode"]


def test_dropout_left_on_in_eval_mode_fails_the_eval_tests(grader: Grader) -> None:
    always = changed(
        "out = self.dropout(self.linear(x))",
        "out = torch.nn.functional.dropout(self.linear(x), 0.5)",
    )
    assert "a keep mask" in failed(grade(grader, always))


def test_a_keep_mask_read_the_other_way_fails(grader: Grader) -> None:
    inverted = changed("out = out * keep[..., None]", "out = out * ~keep[..., None]")
    assert list(failed(grade(grader, inverted))) == ["a keep mask"]


def test_every_step_of_a_sequence_is_compared_by_name(grader: Grader) -> None:
    stateless = changed(
        "self.total = x.sum(0) if self.total is None else self.total + x.sum(0)",
        "self.total = x.sum(0)",
    )
    report = grade(grader, stateless)
    message = failed(report)["a running total"]
    assert message.startswith("`step 2 accumulate: total` differs"), message
    assert "hidden running total" in failed(report)


def test_state_kept_across_a_reset_fails_the_step_after_it(grader: Grader) -> None:
    kept = changed("        self.total = None\n\n\ndef", "        pass\n\n\ndef")
    message = failed(grade(grader, kept))["a running total"]
    assert message.startswith("`step 4 accumulate: total` differs"), message


def test_a_missing_method_is_named(grader: Grader) -> None:
    renamed = changed("def accumulate(self, x", "def add(self, x")
    message = failed(grade(grader, renamed))["a running total"]
    assert "`Scaler.accumulate(...)`" in message


def test_the_second_entry_point_is_graded_on_its_own_tests(grader: Grader) -> None:
    off_by_one = changed(".to(torch.float32)", ".to(torch.float32) + 1")
    assert set(failed(grade(grader, off_by_one))) == {"token counts", "a worked example"}


def test_a_counter_from_collections_counts_as_well(grader: Grader) -> None:
    tallied = changed(
        "    return torch.bincount(ids, minlength=vocab).to(torch.float32)",
        """    from collections import Counter

    tally = Counter(ids.tolist())
    return torch.tensor([float(tally[token]) for token in range(vocab)])""",
    )
    assert failed(grade(grader, tallied)) == {}


def test_a_missing_second_entry_point_is_refused_by_name(grader: Grader) -> None:
    report = grade(grader, changed("def counts(", "def count_tokens("))
    assert report.score == 0
    assert "`counts`" in report.message and "`count_tokens`" in report.message


def test_an_output_with_fewer_decimals_tolerates_what_the_others_do_not(grader: Grader) -> None:
    near_sum = changed('"sum": out.sum(-1)}', '"sum": out.sum(-1) + 0.003}')
    assert failed(grade(grader, near_sum)) == {}
    near_out = changed('{"out": out,', '{"out": out + 0.003,')
    assert set(failed(grade(grader, near_out))) == {"a keep mask", "dropout in train mode"}


def test_a_test_with_fewer_decimals_tolerates_more(grader: Grader) -> None:
    near = changed(
        "return torch.bincount(ids, minlength=vocab).to(torch.float32)",
        "return torch.bincount(ids, minlength=vocab).to(torch.float32) + 0.03",
    )
    assert list(failed(grade(grader, near))) == ["token counts"]


@pytest.mark.slow
def test_the_sandboxed_child_draws_the_masks_and_carries_the_calls_as_this_process() -> None:
    """Dropout's masks, a sequence's steps, scalars and integer and boolean inputs cross the
    process boundary and come out as the reference's, computed here."""
    sandbox = WarmProcessSandbox(slots=1)
    try:
        catalog = Catalog.from_folder(FOLDER / "exercises")
        report = Grader(catalog, sandbox, "model").grade("course-model", REFERENCE)
    finally:
        sandbox.close()
    assert failed(report) == {}
