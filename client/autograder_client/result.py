"""A graded submission: the report, shown as HTML in Jupyter and as text everywhere else."""

from __future__ import annotations

from typing import Any

from autograder_client.errors import SubmissionError
from autograder_client.render import render_html, render_text


class Result:
    """`submission` is the server's JSON (`GET /v1/submissions/{id}`), `report` its report."""

    def __init__(self, submission: dict[str, Any]) -> None:
        report = submission.get("report")
        if submission.get("status") != "done" or not isinstance(report, dict):
            raise SubmissionError(f"submission {submission.get('id')} has no report yet")
        self.submission = submission
        self.report: dict[str, Any] = report

    @property
    def id(self) -> str:
        return str(self.submission["id"])

    @property
    def status(self) -> str:
        """passed, failed, rejected (refused by the grader's policy) or error (the grader's)."""
        return str(self.report["status"])

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def score(self) -> float:
        return float(self.report["score"])

    @property
    def max_score(self) -> float:
        return float(self.report["max_score"])

    def reproduce(self, test: str | None = None) -> Code:
        """The Python that runs `test` (a visible test's name) as the grader does, or, without
        one, every visible test that failed: inputs, weights and calls, with your code saved as
        solution.py beside it. A notebook shows it as code; `exec` or a file runs it."""
        tests: list[dict[str, Any]] = self.report.get("tests", [])
        if test is not None and not any(t["name"] == test and t.get("reproduce") for t in tests):
            raise ValueError(f"{test!r} is not a visible test that ran: {_visible_names(tests)}")
        chosen = [
            t["reproduce"]
            for t in tests
            if t.get("reproduce")
            and (t["name"] == test or (test is None and t["status"] != "passed"))
        ]
        return Code("\n".join(chosen) or "# No visible test failed: nothing to reproduce.\n")

    def __str__(self) -> str:
        return render_text(self.report)

    # The terminal's and plain IPython's display: the report itself, not an object address.
    __repr__ = __str__

    def _repr_html_(self) -> str:
        return render_html(self.report)


class Code(str):
    """Python source that shows as itself, not as a quoted string, at a notebook's prompt."""

    __slots__ = ()

    def __repr__(self) -> str:
        return str(self)


def _visible_names(tests: list[dict[str, Any]]) -> str:
    names = "; ".join(t["name"] for t in tests if t.get("reproduce"))
    return f"the visible tests are {names}" if names else "none ran"
