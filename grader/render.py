"""A report as plain text for people at a terminal (the CLI without --json)."""

from __future__ import annotations

from grader.report import PropertyStatus, Report, TestResult, TestStatus

_MARKS = {
    TestStatus.PASSED: "PASS",
    TestStatus.FAILED: "FAIL",
    TestStatus.ERROR: "ERR ",
    TestStatus.TIMEOUT: "TIME",
    TestStatus.RESOURCE_LIMIT: "LIM ",
    TestStatus.REJECTED: "REJ ",
}


def render_text(report: Report) -> str:
    lines = [f"{report.exercise}: {report.status.value.upper()}. {report.message}", ""]
    width = max((len(test.name) for test in report.tests), default=0)
    for test in report.tests:
        lines.extend(_test_lines(test, width))
    if report.diagnosis:
        lines += ["", "Diagnosis:"]
        for finding in report.diagnosis:
            where = f" (line {finding.line})" if finding.line else ""
            tests = f" [tests: {', '.join(finding.tests)}]" if finding.tests else ""
            lines.append(f"  - {finding.message}{where}{tests}")
    if report.properties:
        lines += ["", "Properties:"]
        for check in report.properties:
            mark = {PropertyStatus.PASSED: "ok", PropertyStatus.FAILED: "VIOLATED"}.get(
                check.status, "skipped"
            )
            lines.append(f"  - {check.name}: {mark}: {check.message}")
    return "\n".join(lines) + "\n"


def _test_lines(test: TestResult, width: int) -> list[str]:
    points = f"{test.score:g}/{test.max_score:g}"
    head = f"  {_MARKS[test.status]}  {test.name:<{width}}  {test.visibility.value:<7}  {points}"
    lines = [head]
    if test.status is not TestStatus.PASSED:
        lines.append(f"        {test.message}")
    if test.stdout:
        printed = test.stdout.rstrip("\n").replace("\n", "\n        | ")
        lines.append(f"        printed:\n        | {printed}")
    return lines
