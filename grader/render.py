"""A report as plain text for people at a terminal (the CLI without --json), or as JSON that a
terminal can show as well (the CLI with --json).

Much of a report is the submission's own text (its prints, an exception's message, a refusal
quoting its code), so the whole text goes through `inert` before anyone's terminal sees it, and
the lines of a multi-line message stay indented under it, where no line of the report starts.
"""

from __future__ import annotations

import json

from grader.report import (
    TEST_NAMES_SEPARATOR,
    PropertyStatus,
    Report,
    TestResult,
    TestStatus,
)
from grader.text import inert

_MARKS = {
    TestStatus.PASSED: "PASS",
    TestStatus.FAILED: "FAIL",
    TestStatus.ERROR: "ERR ",
    TestStatus.TIMEOUT: "TIME",
    TestStatus.RESOURCE_LIMIT: "LIM ",
    TestStatus.REJECTED: "REJ ",
}


def render_json(report: Report) -> str:
    """The report's JSON with every character past ASCII escaped (`\\u009b`, `\\u202e`): the
    same data for a program, and nothing for a terminal to act on (JSON escapes C0 anyway)."""
    return json.dumps(report.model_dump(mode="json"), indent=2, ensure_ascii=True)


def render_text(report: Report) -> str:
    message = _continued(report.message)
    lines = [f"{report.exercise}: {report.status.value.upper()}. {message}", ""]
    width = max((len(test.name) for test in report.tests), default=0)
    for test in report.tests:
        lines.extend(_test_lines(test, width))
    if findings := report.findings_to_say():
        lines += ["", "Diagnosis:"]
        for finding in findings:
            where = f" (line {finding.line})" if finding.line else ""
            tests = f" [tests: {TEST_NAMES_SEPARATOR.join(finding.tests)}]" if finding.tests else ""
            lines.append(f"  - {_continued(finding.message)}{where}{tests}")
    if report.properties:
        lines += ["", "Properties:"]
        for check in report.properties:
            mark = {PropertyStatus.PASSED: "ok", PropertyStatus.FAILED: "VIOLATED"}.get(
                check.status, "skipped"
            )
            lines.append(f"  - {check.name}: {mark}: {_continued(check.message)}")
    return inert("\n".join(lines) + "\n")


def _test_lines(test: TestResult, width: int) -> list[str]:
    points = f"{test.score:g}/{test.max_score:g}"
    head = f"  {_MARKS[test.status]}  {test.name:<{width}}  {test.visibility.value:<7}  {points}"
    lines = [head]
    if test.status is not TestStatus.PASSED:
        lines.append(f"        {_continued(test.details())}")
    if test.stdout:
        printed = test.stdout.rstrip("\n").replace("\n", "\n        | ")
        lines.append(f"        printed:\n        | {printed}")
    return lines


def _continued(message: str) -> str:
    """A message's later lines indented as its first, so none can pass for a line of the
    report (a fake `PASS` line in an exception's message)."""
    return message.replace("\n", "\n        ")
