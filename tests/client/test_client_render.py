"""The client's rendering: its text is the grader's own text report, word for word, with no
terminal control character, and its HTML shows the same facts with every student-controlled
string escaped."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any

from autograder_client import render_html, render_text

from grader.contract import Termination, Violation
from grader.refusal import refusal_message, refused_test_message
from grader.render import render_text as grader_render_text
from grader.report import Report

SCRIPT = "<script>alert('x')</script>"
ATTACK = "\x1b[2J\x1b]0;pwned\x07\u202e"  # clear the screen, set the window title, reverse text
REPORT: dict[str, Any] = {
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
            "stdout": f"shape torch.Size([3, 7, 64])\n{SCRIPT}\n",
        },
        {
            "name": "one head",
            "visibility": "hidden",
            "status": "timeout",
            "score": 0.0,
            "max_score": 1.0,
            "message": "hidden test: timeout",
        },
    ],
    "diagnosis": [
        {
            "code": "missing-scaling",
            "message": "Your output matches attention without the 1/sqrt(d) scaling.",
            "tests": ["batch 1, 2 heads", "16 heads"],
            "line": 12,
        }
    ],
    "properties": [
        {"name": "causal", "status": "passed", "message": "holds on 5 visible tests"},
        {"name": "batch_independent", "status": "skipped", "message": "not checked"},
    ],
}


def test_text_is_the_grader_s_own_report() -> None:
    assert render_text(REPORT) == grader_render_text(Report.model_validate(REPORT))


def test_text_shows_student_text_inert() -> None:
    report = {
        **REPORT,
        "message": f"{REPORT['message']}{ATTACK}",
        "tests": [
            {**test, "message": f"{test['message']}\n{ATTACK}", "stdout": f"{ATTACK}\r\x9b2K\n"}
            for test in REPORT["tests"]
        ],
        "diagnosis": [{**f, "message": f"{f['message']}{ATTACK}"} for f in REPORT["diagnosis"]],
        "properties": [{**p, "message": ATTACK} for p in REPORT["properties"]],
    }
    text = render_text(report)
    assert [c for c in "\x1b\x07\r\x9b\u202e" if c in text] == []
    assert "[2J\ufffd]0;pwned" in text  # shown, not acted on
    assert text == grader_render_text(Report.model_validate(report))


# What JupyterLab's sanitizer keeps of an output it does not trust: these tags (among others),
# and on them `class` and `style` (a <style> element is dropped with its rules).
KEPT_TAGS = {"div", "p", "strong", "span", "table", "thead", "tbody", "tr", "th", "td", "ul", "li"}
KEPT_TAGS |= {"code", "pre", "br"}


class Cells(HTMLParser):
    """The tags and attributes of an HTML fragment, and each table cell's text and alignment."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.attributes: set[str] = set()
        self.cells: list[tuple[str, str]] = []
        self._open: list[int] = []  # the cells the parser is in, innermost last
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attributes |= {name for name, _ in attrs}
        if tag in ("th", "td"):
            align = re.search(r"text-align:(\w+)", dict(attrs).get("style") or "")
            self._open.append(len(self.cells))
            self.cells.append(("", align[1] if align else "none"))

    def handle_endtag(self, tag: str) -> None:
        if tag in ("th", "td"):
            self._open.pop()

    def handle_data(self, data: str) -> None:
        if self._open:
            text, align = self.cells[self._open[-1]]
            self.cells[self._open[-1]] = (text + data, align)


def test_html_shows_the_table_the_mismatch_and_the_diagnosis() -> None:
    html = render_html(REPORT)
    assert html.count("<tr>") >= 4  # header, three tests (plus the mismatch's own table)
    cells = Cells(html).cells
    assert ("[0, 2, 1]", "right") in cells and ("0.1534", "right") in cells
    assert "without the 1/sqrt(d) scaling. (line 12) [tests: batch 1, 2 heads; 16 heads]" in html
    # A hidden row's status says all it has to say; its words would say it again.
    assert ("timeout", "left") in cells and "hidden test: timeout" not in html
    assert "causal: ok: holds on 5 visible tests" in html


def test_both_lead_with_the_diagnosis_as_the_page_does() -> None:
    html, text = render_html(REPORT), render_text(REPORT)
    assert html.index("Diagnosis") < html.index("<table") < html.index(">16 heads</td>")
    assert text.index("Diagnosis:") < text.index("Tests:") < text.index("FAIL  16 heads")


def test_a_failing_test_says_its_first_mismatch_once() -> None:
    assert render_text(REPORT).count("0.1534") == 1
    assert render_html(REPORT).count("0.1534") == 1


def test_a_refused_hidden_test_reads_refused_as_on_the_page() -> None:
    refused = {**REPORT["tests"][2], "status": "rejected", "message": "hidden test: refused"}
    html = render_html({**REPORT, "status": "rejected", "tests": [refused]})
    assert ("refused", "left") in Cells(html).cells
    assert "rejected" not in html


SYNTAX_ERROR = Violation("syntax error: expected ':'", line=14)
REFUSED: dict[str, Any] = {
    **REPORT,
    "status": "rejected",
    "score": 0.0,
    "message": refusal_message(Termination.REJECTED, [SYNTAX_ERROR], ""),
    "tests": [
        {
            **REPORT["tests"][0],
            "status": "rejected",
            "score": 0.0,
            "message": refused_test_message(Termination.REJECTED),
        },
        {**REPORT["tests"][2], "status": "rejected", "message": "hidden test: refused"},
    ],
    "diagnosis": [{"code": "not-allowed", "message": SYNTAX_ERROR.message, "line": 14}],
    "properties": [],
}


def test_a_refusal_is_said_once_with_its_line() -> None:
    text, html = render_text(REFUSED), render_html(REFUSED)
    assert text == grader_render_text(Report.model_validate(REFUSED))
    for rendered in (text, html):
        assert rendered.count("syntax error") == 1
        assert "line 14: syntax error" in rendered
    assert "Diagnosis" not in html


def test_html_escapes_what_a_student_controls() -> None:
    report = {
        **REPORT,
        "tests": [
            {**test, "name": f"{test['name']} {SCRIPT}", "message": f"{test['message']}{ATTACK}"}
            for test in REPORT["tests"]
        ],
    }
    html = render_html(report)
    assert "<script>" not in html
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in html
    assert [c for c in "\x1b\x07\u202e" if c in html] == []  # a bidi override reorders text


def test_html_aligns_text_left_and_numbers_right_with_styles_jupyter_keeps() -> None:
    parsed = Cells(render_html(REPORT))
    assert parsed.tags <= KEPT_TAGS and parsed.attributes <= {"class", "style"}
    aligned = dict(parsed.cells)
    assert aligned["test"] == aligned["16 heads"] == aligned["hidden"] == "left"
    assert aligned["points"] == aligned["0/1"] == aligned["expected"] == "right"
    assert all(align in ("left", "right") for _, align in parsed.cells)


def test_html_shows_quoted_code_as_code_escaped() -> None:
    failing = {**REPORT["tests"][1], "message": f"`output` differs; `{SCRIPT}` printed"}
    html = render_html({**REPORT, "tests": [failing]})
    assert "<code>output</code> differs; <code>&lt;script&gt;" in html
    assert "`" not in html and "<script>" not in html
