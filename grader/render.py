"""A report as plain text for people at a terminal (the CLI without --json), or as JSON that a
terminal can show as well (the CLI with --json).

Much of a report is the submission's own text (its prints, an exception's message, a refusal
quoting its code), so the whole text goes through `inert` before anyone's terminal sees it, and
the lines of a multi-line message stay indented under it, where no line of the report starts.
"""

from __future__ import annotations

import json

from grader.hidden_verdicts import hidden_message
from grader.report import (
    TEST_NAMES_SEPARATOR,
    Finding,
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
    """The verdict, then the diagnosis (the why, as the page leads with it), then a row per
    test, then the properties. Each fact once: a row points at a finding it would repeat, says
    "as above" for the row above's words, and a hidden row's status is all it has to say."""
    message = _continued(report.message)
    lines = [f"{report.exercise}: {report.status.value.upper()}. {message}"]
    findings = report.findings_to_say()
    if findings:
        lines += ["", "Diagnosis:"]
        for number, finding in enumerate(findings, start=1):
            where = f" (line {finding.line})" if finding.line else ""
            tests = f" [tests: {TEST_NAMES_SEPARATOR.join(finding.tests)}]" if finding.tests else ""
            mark = f"{number}." if len(findings) > 1 else "-"
            lines.append(f"  {mark} {_continued(finding.message)}{where}{tests}")
    if report.tests:
        lines += ["", "Tests:"]
    width = max((len(test.name) for test in report.tests), default=0)
    above = None  # the words right above a row (none past a row's printed output)
    for test in report.tests:
        details = _details(test, findings)
        repeated = details is not None and details == above
        lines.extend(_test_lines(test, width, "as above" if repeated else details))
        above = None if test.stdout else details
    if report.properties:
        lines += ["", "Properties:"]
        for check in report.properties:
            mark = {PropertyStatus.PASSED: "ok", PropertyStatus.FAILED: "VIOLATED"}.get(
                check.status, "skipped"
            )
            lines.append(f"  - {check.name}: {mark}: {_continued(check.message)}")
    return inert("\n".join(lines) + "\n")


def render_snippets(tests: list[TestResult]) -> str:
    """The code that reproduces each of `tests` (visible ones), one after another."""
    return inert("\n".join(test.reproduce for test in tests if test.reproduce))


def _details(test: TestResult, findings: list[Finding]) -> str | None:
    """What a row says past its status: nothing for a pass, nor for a hidden test whose words
    only repeat its status; a finding's words are a pointer to the finding."""
    if test.status is TestStatus.PASSED or test.message == hidden_message(test.status):
        return None
    details = test.details()
    for number, finding in enumerate(findings, start=1):
        which = "the diagnosis" if len(findings) == 1 else f"diagnosis {number}"
        details = details.replace(finding.message, f"see {which} above")
    return details


def _test_lines(test: TestResult, width: int, details: str | None) -> list[str]:
    points = f"{test.score:g}/{test.max_score:g}"
    head = f"  {_MARKS[test.status]}  {test.name:<{width}}  {test.visibility.value:<7}  {points}"
    lines = [head]
    if details is not None:
        lines.append(f"        {_continued(details)}")
    if test.stdout:
        printed = test.stdout.rstrip("\n").replace("\n", "\n        | ")
        lines.append(f"        printed:\n        | {printed}")
    return lines


def _continued(message: str) -> str:
    """A message's later lines indented as its first, so none can pass for a line of the
    report (a fake `PASS` line in an exception's message)."""
    return message.replace("\n", "\n        ")
