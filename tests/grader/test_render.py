"""The text report, pinned by a golden file: rewrite it with UPDATE_GOLDEN=1 after a deliberate
change of wording, and review the diff as feedback students will read."""

import os
from pathlib import Path

from grader_support import plan

from grader.contract import Execution, Termination, Violation
from grader.judge import judge
from grader.render import render_json, render_text
from grader.report import Report

GOLDEN = Path(__file__).parent / "golden"

REPORT = Report.model_validate(
    {
        "exercise": "multi-headed-self-attention",
        "status": "failed",
        "score": 1.0,
        "max_score": 3.0,
        "message": "1 of 3 tests passed (1/3 points)",
        "tests": [
            {
                "name": "batch 1, 2 heads",
                "visibility": "visible",
                "status": "passed",
                "score": 1.0,
                "max_score": 1.0,
                "message": "all outputs match to 4 decimals",
            },
            {
                "name": "16 heads",
                "visibility": "visible",
                "status": "failed",
                "score": 0.0,
                "max_score": 1.0,
                "message": "`output` differs in 12 of 64 values (max abs error 0.031)",
                "max_abs_error": 0.031,
                "mismatch_count": 12,
                "first_mismatch": {"index": [0, 2, 1], "expected": 0.1234, "actual": 0.1534},
                "stdout": "shape torch.Size([3, 7, 64])\n",
            },
            {
                "name": "one head",
                "visibility": "hidden",
                "status": "failed",
                "score": 0.0,
                "max_score": 1.0,
                "message": "hidden test: failed",
            },
        ],
        "diagnosis": [
            {
                "code": "missing-scaling",
                "message": "Your output matches attention without the 1/sqrt(d) scaling.",
                "tests": ["batch 1, 2 heads", "16 heads"],
            }
        ],
        "properties": [
            {
                "name": "causal",
                "status": "passed",
                "message": "holds on the 2 visible tests it was checked on",
            },
            {
                "name": "batch_independent",
                "status": "skipped",
                "message": "no visible test produced an output of the right shape",
            },
        ],
    }
)


def test_text_report_matches_the_golden_file() -> None:
    golden = GOLDEN / "failed_report.txt"
    text = render_text(REPORT)
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(text, encoding="utf-8")
    assert text == golden.read_text(encoding="utf-8")


def refused(*violations: Violation) -> Report:
    return judge(plan(), Execution(Termination.REJECTED, {}, violations=violations))


SYNTAX_ERROR = Violation("syntax error: expected ':'", line=14)
FORBIDDEN = (
    Violation("importing `os` is not allowed in this exercise", line=1),
    Violation("importing `subprocess` is not allowed in this exercise", line=2),
)


def test_refused_text_report_matches_the_golden_file() -> None:
    golden = GOLDEN / "refused_report.txt"
    text = render_text(refused(*FORBIDDEN))
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(text, encoding="utf-8")
    assert text == golden.read_text(encoding="utf-8")


def test_a_refusal_is_said_once_with_its_line() -> None:
    text = render_text(refused(SYNTAX_ERROR))
    assert text.count("syntax error") == 1
    # The first test's words, not the reason's; the rest say "as above", a hidden row its REJ.
    assert text.count("refused") == 1
    assert text.startswith(
        "multi-headed-self-attention: REJECTED. Nothing ran: line 14: syntax error: expected ':'\n"
    )


def test_every_reason_of_a_refusal_is_said_once() -> None:
    text = render_text(refused(*FORBIDDEN))
    for violation in FORBIDDEN:
        assert text.count(violation.message) == 1
        assert f"\n        - line {violation.line}: {violation.message}\n" in text


def test_a_failing_test_says_its_first_mismatch_once() -> None:
    text = render_text(REPORT)
    assert text.count("0.1534") == 1
    assert "first at index [0, 2, 1]: expected 0.1234, got 0.1534" in text


def test_the_diagnosis_leads_and_the_tests_follow() -> None:
    text = render_text(REPORT)
    assert text.index("Diagnosis:") < text.index("Tests:") < text.index("PASS  batch 1")


def test_a_finding_is_said_once_and_a_row_points_at_it() -> None:
    finding = REPORT.diagnosis[0].message
    held = REPORT.tests[1].model_copy(
        update={"message": f"the outputs match, but {finding}", "first_mismatch": None}
    )
    text = render_text(REPORT.model_copy(update={"tests": [REPORT.tests[0], held]}))
    assert text.count(finding) == 1
    assert "the outputs match, but see the diagnosis above" in text


def test_rows_say_their_words_once_and_hidden_rows_only_their_status() -> None:
    failing = REPORT.tests[1].model_copy(update={"stdout": ""})
    again = failing.model_copy(update={"name": "17 heads"})
    text = render_text(REPORT.model_copy(update={"tests": [failing, again, REPORT.tests[2]]}))
    assert text.count("differs in 12 of 64") == 1
    assert "17 heads  visible  0/1\n        as above\n" in text
    assert "hidden test" not in text


def test_test_names_holding_commas_are_listed_apart() -> None:
    assert "[tests: batch 1, 2 heads; 16 heads]" in render_text(REPORT)


ATTACK = "\x1b[2J\x1b]0;pwned\x07\u202e"  # clear the screen, set the window title, reverse text


def hostile(report: Report) -> Report:
    """`report` with the attack in everything a submission's text can reach."""
    tests = [
        test.model_copy(
            update={"message": f"{test.message}{ATTACK}", "stdout": f"{ATTACK}\r  PASS\x9b2K\n"}
        )
        for test in report.tests
    ]
    diagnosis = [f.model_copy(update={"message": f"{f.message}{ATTACK}"}) for f in report.diagnosis]
    properties = [p.model_copy(update={"message": ATTACK}) for p in report.properties]
    return report.model_copy(
        update={
            "message": f"{report.message}{ATTACK}",
            "tests": tests,
            "diagnosis": diagnosis,
            "properties": properties,
        }
    )


def test_student_text_reaches_the_terminal_inert() -> None:
    text = render_text(hostile(REPORT))
    assert [c for c in "\x1b\x07\r\x9b\u202e" if c in text] == []
    assert "[2J\ufffd]0;pwned" in text  # shown, not acted on


def test_json_for_a_terminal_keeps_the_data_and_escapes_what_could_act() -> None:
    text = render_json(hostile(REPORT))
    assert [c for c in text if not (c.isascii() and (c.isprintable() or c == "\n"))] == []
    assert Report.model_validate_json(text) == hostile(REPORT)


def test_a_multi_line_message_stays_under_its_test() -> None:
    forged = "raised ValueError: no\n  PASS  one head          hidden   1/1"
    tests = [test.model_copy(update={"message": forged}) for test in REPORT.tests]
    text = render_text(REPORT.model_copy(update={"tests": tests}))
    assert "\n  PASS  one head" not in text
    assert "raised ValueError: no\n          PASS  one head" in text
