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

    def __str__(self) -> str:
        return render_text(self.report)

    # The terminal's and plain IPython's display: the report itself, not an object address.
    __repr__ = __str__

    def _repr_html_(self) -> str:
        return render_html(self.report)
