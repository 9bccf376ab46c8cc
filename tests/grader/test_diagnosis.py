"""Diagnosis: outputs compared with the variants' only where their shapes are the same."""

import numpy as np
import pytest
from grader_support import plan, visible

from grader.contract import CallOutcome, OutputValue
from grader.diagnosis import diagnose


def returning(output: OutputValue) -> dict[str, CallOutcome]:
    outcomes = {}
    for test in visible():
        for call in (test.call, *(probe.call for probe in test.probes)):
            outcomes[call.id] = CallOutcome(call.id, outputs=(output,))
    return outcomes


def test_a_huge_output_of_another_shape_is_never_compared_elementwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(*args: object) -> None:
        raise AssertionError("compared elementwise")

    monkeypatch.setattr("grader.compare.compare_arrays", refuse)
    huge = np.zeros((1, 1 << 22), dtype=np.float32)
    output = OutputValue("Tensor", array=huge, dtype="torch.float32", shape=huge.shape)
    assert diagnose(plan(), visible(), returning(output)) == []


def test_a_variant_of_another_shape_than_the_references_is_still_recognised() -> None:
    """Some mistakes change the shape ("concatenated along the sequence"): the bound on work is
    the shape of the trusted output compared with, not the reference's shape alone."""
    test = visible()[0]
    mistake = next(m for m in plan().mistakes if m.code == "concat-along-sequence")
    outputs = mistake.outputs[test.spec.name]
    assert outputs is not None and outputs[0].shape != test.expected[0].shape
    outcomes = {test.call.id: CallOutcome(test.call.id, outputs=outputs)}
    findings = diagnose(plan(), [test], outcomes)
    assert [finding.code for finding in findings] == ["concat-along-sequence"]
