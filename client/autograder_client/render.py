"""A report (the server's JSON) for people: plain text for a terminal, HTML for Jupyter.

The text mirrors the grader's own text report (grader/render.py) line for line, so a student
reads the same words from `autograder grade`, `autograder submit` and a notebook; the client
cannot import it, since the grader needs torch. The HTML shows the same facts as a table. Every
string in a report may be student-controlled (a test's printed output, a message quoting it), so
the text goes through `_inert` (no terminal control characters) and the HTML escapes each
string once made inert.
"""

from __future__ import annotations

from html import escape as _escape_html
from itertools import chain
from typing import Any

Report = dict[str, Any]

_MARKS = {
    "passed": "PASS",
    "failed": "FAIL",
    "error": "ERR ",
    "timeout": "TIME",
    "resource_limit": "LIM ",
    "rejected": "REJ ",
}
_PROPERTY_MARKS = {"passed": "ok", "failed": "VIOLATED"}
# A refusal is "refused" wherever a person reads it, as on the exercise page.
_STATUS_WORDS = {"rejected": "refused"}
# Test names hold commas ("batch 1, 2 heads"): grader.report.TEST_NAMES_SEPARATOR, copied.
_TEST_NAMES_SEPARATOR = "; "

# A copy of grader/text.py's `inert` (the client cannot import the grader, and a shared module
# would need a third package for five lines); tests/grader/test_text.py keeps the two equal.
# Control characters but newline and tab, DEL, C1 controls and bidi overrides and isolates are
# replaced, not stripped: the reader sees that something was there.
_UNSAFE = chain(
    (code for code in range(0x20) if chr(code) not in "\n\t"),
    [0x7F],
    range(0x80, 0xA0),
    range(0x202A, 0x202F),
    range(0x2066, 0x206A),
)
_TABLE = dict.fromkeys(_UNSAFE, "\ufffd")


def _inert(text: str) -> str:
    return text.translate(_TABLE)


def escape(text: str) -> str:
    """Text for HTML: escaped, and inert (a bidi override would reorder what a reader sees)."""
    return _escape_html(_inert(text))


def render_text(report: Report) -> str:
    """The verdict, then the diagnosis, then a row per test, then the properties; each fact
    once (as grader.render.render_text)."""
    tests: list[dict[str, Any]] = report.get("tests", [])
    message = _continued(report.get("message", ""))
    lines = [f"{report['exercise']}: {report['status'].upper()}. {message}"]
    findings = _findings_to_say(report)
    if findings:
        lines += ["", "Diagnosis:"]
        for number, finding in enumerate(findings, start=1):
            mark = f"{number}." if len(findings) > 1 else "-"
            message = _continued(finding["message"])
            lines.append(f"  {mark} {message}{_where(finding)}{_tests_of(finding)}")
    if tests:
        lines += ["", "Tests:"]
    width = max((len(test["name"]) for test in tests), default=0)
    above = None  # the words right above a row (none past a row's printed output)
    for test in tests:
        details = _details_said(test, findings)
        repeated = details is not None and details == above
        lines.extend(_test_lines(test, width, "as above" if repeated else details))
        above = None if test.get("stdout") else details
    if report.get("properties"):
        lines += ["", "Properties:"]
        for check in report["properties"]:
            mark = _PROPERTY_MARKS.get(check["status"], "skipped")
            lines.append(f"  - {check['name']}: {mark}: {_continued(check['message'])}")
    return _inert("\n".join(lines) + "\n")


def _details_said(test: dict[str, Any], findings: list[dict[str, Any]]) -> str | None:
    """What a row says past its status: nothing for a pass, nor for a hidden test whose words
    only repeat its status; a finding's words are a pointer to the finding."""
    if test["status"] == "passed" or test["message"] == _hidden_words(test["status"]):
        return None
    details = _message(test)
    for number, finding in enumerate(findings, start=1):
        which = "the diagnosis" if len(findings) == 1 else f"diagnosis {number}"
        details = details.replace(finding["message"], f"see {which} above")
    return details


def _hidden_words(status: str) -> str:
    """A hidden test's message, which says its status and nothing more (as
    grader.hidden_verdicts.hidden_message)."""
    return f"hidden test: {_STATUS_WORDS.get(status, status)}"


def _test_lines(test: dict[str, Any], width: int, details: str | None) -> list[str]:
    mark = _MARKS.get(test["status"], "????")
    head = f"  {mark}  {test['name']:<{width}}  {test['visibility']:<7}  {_points(test)}"
    lines = [head]
    if details is not None:
        lines.append(f"        {_continued(details)}")
    if test.get("stdout"):
        printed = test["stdout"].rstrip("\n").replace("\n", "\n        | ")
        lines.append(f"        printed:\n        | {printed}")
    return lines


def _message(test: dict[str, Any]) -> str:
    """The message, and the first mismatch where the message leaves it to its own field (as
    grader.report.TestResult.details)."""
    first = test.get("first_mismatch")
    if not first:
        return str(test["message"])
    where = f"first at index {first['index']}: expected {first['expected']:g}"
    return f"{test['message']}; {where}, got {first['actual']:g}"


def _findings_to_say(report: Report) -> list[dict[str, Any]]:
    """As grader.report.Report.findings_to_say: none for a refusal, whose message says each
    reason with its line."""
    return [] if report["status"] == "rejected" else list(report.get("diagnosis", []))


def _continued(message: str) -> str:
    """A message's later lines indented as its first, so none can pass for a line of the
    report (a fake `PASS` line in an exception's message)."""
    return message.replace("\n", "\n        ")


def _points(test: dict[str, Any]) -> str:
    return f"{test['score']:g}/{test['max_score']:g}"


def _where(finding: dict[str, Any]) -> str:
    return f" (line {finding['line']})" if finding.get("line") else ""


def _tests_of(finding: dict[str, Any]) -> str:
    tests = _TEST_NAMES_SEPARATOR.join(finding.get("tests", []))
    return f" [tests: {tests}]" if tests else ""


# Inline styles, not a stylesheet: JupyterLab drops a <style> element from an output it does not
# trust, keeps `style` attributes, and right-aligns every cell of a rendered table with a rule
# that outweighs any class of ours. As on the exercise page: text left, numbers right.
_CELL = "border:1px solid #ccc;padding:.25em .5em;vertical-align:top"
_TEXT = f' style="{_CELL};text-align:left"'
_NUMBER = f' style="{_CELL};text-align:right;white-space:nowrap"'
_COLORS = {True: ' style="color:#137333"', False: ' style="color:#b3261e"'}


def render_html(report: Report) -> str:
    """The verdict, the diagnosis, a table of the tests, the properties: the text's order."""
    status = report["status"]
    score = f"{report['score']:g}/{report['max_score']:g}"
    findings = _findings_to_say(report)
    parts = [
        '<div class="ag-report">',
        f"<p><strong>{escape(report['exercise'])}</strong>: "
        f"<strong{_color(status)}>{escape(status.upper())}</strong> ({escape(score)}). "
        f"{prose(report.get('message', ''))}</p>",
    ]
    if findings:
        parts.append("<p><strong>Diagnosis</strong></p><ul>")
        for finding in findings:
            parts.append(
                f"<li>{prose(finding['message'])}{escape(_where(finding))}"
                f"{escape(_tests_of(finding))}</li>"
            )
        parts.append("</ul>")
    parts += [
        '<table style="border-collapse:collapse;margin:.5em 0"><thead><tr>',
        *(f"<th{_TEXT}>{name}</th>" for name in ("status", "test", "visibility")),
        f"<th{_NUMBER}>points</th><th{_TEXT}>details</th></tr></thead><tbody>",
        *(_test_row(test, findings) for test in report.get("tests", [])),
        "</tbody></table>",
    ]
    if report.get("properties"):
        parts.append("<p><strong>Properties</strong></p><ul>")
        for check in report["properties"]:
            mark = _PROPERTY_MARKS.get(check["status"], "skipped")
            parts.append(
                f"<li>{escape(check['name'])}: {escape(mark)}: {prose(check['message'])}</li>"
            )
        parts.append("</ul>")
    parts.append("</div>")
    return "".join(parts)


def prose(text: str) -> str:
    """A message for HTML, its `quoted code` as <code>, as the exercise page shows it."""
    return "".join(
        f"<code>{escape(part)}</code>" if index % 2 else escape(part)
        for index, part in enumerate(text.split("`"))
    )


def _test_row(test: dict[str, Any], findings: list[dict[str, Any]]) -> str:
    status = test["status"]
    cells = [
        f"<td{_TEXT}><span{_color(status)}>{escape(_STATUS_WORDS.get(status, status))}</span></td>",
        f"<td{_TEXT}>{escape(test['name'])}</td>",
        f"<td{_TEXT}>{escape(test['visibility'])}</td>",
        f"<td{_NUMBER}>{escape(_points(test))}</td>",
        f"<td{_TEXT}>{_details(test, findings)}</td>",
    ]
    return f"<tr>{''.join(cells)}</tr>"


def _details(test: dict[str, Any], findings: list[dict[str, Any]]) -> str:
    """The row's words as the text says them (its first mismatch as a table of its own), and
    what it printed."""
    said = _details_said({**test, "first_mismatch": None}, findings)
    details = [] if said is None else [prose(said)]
    mismatch = test.get("first_mismatch")
    if mismatch:
        index = ", ".join(str(i) for i in mismatch["index"])
        values = (f"[{escape(index)}]", _number(mismatch["expected"]), _number(mismatch["actual"]))
        details.append(
            '<table style="border-collapse:collapse;margin:.25em 0">'
            f"<tr>{_cells('th', ('index', 'expected', 'actual'))}</tr>"
            f"<tr>{_cells('td', values)}</tr></table>"
        )
    if test.get("stdout"):
        details.append(
            f'printed:<pre style="margin:.25em 0;white-space:pre-wrap;text-align:left">'
            f"{escape(test['stdout'])}</pre>"
        )
    return "<br>".join(details)


def _cells(tag: str, contents: tuple[str, ...]) -> str:
    return "".join(f"<{tag}{_NUMBER}>{content}</{tag}>" for content in contents)


def _number(value: object) -> str:
    return f"{value:.6g}" if isinstance(value, (int, float)) else escape(str(value))


def _color(status: str) -> str:
    return _COLORS[status == "passed"]
