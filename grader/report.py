"""The report: the one JSON document a student, the CLI and the service all see."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from grader.spec import Visibility

# Test names hold commas ("batch 1, 2 heads"): a list of them is joined with what none holds.
TEST_NAMES_SEPARATOR = "; "


class TestStatus(StrEnum):
    __test__ = False  # a domain type, not a pytest test class

    PASSED = "passed"
    FAILED = "failed"  # ran, but an output is wrong
    ERROR = "error"  # raised, crashed, or broke the exercise's contract
    TIMEOUT = "timeout"
    RESOURCE_LIMIT = "resource_limit"  # memory or output limit
    REJECTED = "rejected"  # the submission was refused by the policy


class ReportStatus(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    REJECTED = "rejected"
    ERROR = "error"  # the grader itself failed: not the student's fault


class PropertyStatus(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True)


class MismatchDetail(_Model):
    index: list[int]
    expected: float
    actual: float

    def describe(self) -> str:
        """The one place a text report says where an output first went wrong."""
        return f"first at index {self.index}: expected {self.expected:g}, got {self.actual:g}"


class OutputCheck(_Model):
    """The comparison of one named output (visible tests only)."""

    name: str
    passed: bool
    check: str  # grader.compare.Check
    message: str
    max_abs_error: float | None = None
    mismatch_count: int = 0
    first_mismatch: MismatchDetail | None = None


class TestResult(_Model):
    __test__ = False  # a domain type, not a pytest test class

    name: str
    visibility: Visibility
    status: TestStatus
    score: float
    max_score: float
    message: str
    # Of the first output that failed (or of the first output when all passed).
    max_abs_error: float | None = None
    mismatch_count: int | None = None
    first_mismatch: MismatchDetail | None = None
    outputs: list[OutputCheck] = Field(default_factory=list)
    stdout: str = ""
    duration_ms: float | None = None
    # The submission's line an error was raised at (visible tests only; absent where unknown).
    line: int | None = None
    # Python that builds this test's inputs and calls the submission as the grader does, to run
    # at home (visible tests only).
    reproduce: str | None = None

    def details(self) -> str:
        """The message, and the first mismatch where the message leaves it to its own field."""
        first = self.first_mismatch
        return self.message if first is None else f"{self.message}; {first.describe()}"


class Finding(_Model):
    """A diagnosis: a likely cause, in the student's terms, and the tests that show it."""

    code: str
    message: str
    tests: list[str] = Field(default_factory=list)
    line: int | None = None
    # The knowledge components the mistake is about, shared across exercises ("scaling").
    concepts: list[str] = Field(default_factory=list)


class OutputExcerpt(_Model):
    """A few values of one visible test's output, the submission's beside the reference's."""

    test: str
    output: str
    index: list[int]  # of the first value shown
    expected: list[float]
    actual: list[float]


class Behaviour(_Model):
    """What a failing submission's outputs do on the visible tests, whatever its mistake: what
    staff group the wrong answers that no known mistake explains by. Visible tests only."""

    key: str  # equal for submissions whose outputs behave alike
    facts: list[str]  # in plain words: "attention: the reference's, scaled by 0.35"
    failing_tests: list[str]
    broken_properties: list[str] = Field(default_factory=list)
    excerpts: list[OutputExcerpt] = Field(default_factory=list)


class PropertyCheck(_Model):
    name: str
    status: PropertyStatus
    message: str


class Report(_Model):
    exercise: str
    # The exercise's version it was graded with (grader.versions); None where no exercise was
    # loaded (a report made after its exercise broke or went away).
    exercise_version: str | None = None
    status: ReportStatus
    score: float
    max_score: float
    tests: list[TestResult]
    diagnosis: list[Finding] = Field(default_factory=list)
    properties: list[PropertyCheck] = Field(default_factory=list)
    message: str = ""
    duration_ms: float | None = None
    # Of a failed report whose visible tests ran (grader.behaviour); None otherwise.
    behaviour: Behaviour | None = None

    def findings_to_say(self) -> list[Finding]:
        """The findings a reader is told after the message: none for a refusal, whose message
        already says each reason with its line (its findings stay for the editor's marks)."""
        return [] if self.status is ReportStatus.REJECTED else self.diagnosis

    def to_gradescope(self) -> dict[str, Any]:
        """The Gradescope autograder `results.json` for this report."""
        findings = (finding.message for finding in self.findings_to_say())
        return {
            "score": self.score,
            "output": "\n".join([self.message, *findings]).strip(),
            "tests": [
                {
                    "name": test.name,
                    "score": test.score,
                    "max_score": test.max_score,
                    "status": "passed" if test.status is TestStatus.PASSED else "failed",
                    "output": test.details(),
                    "visibility": "visible"
                    if test.visibility is Visibility.VISIBLE
                    else "after_published",
                }
                for test in self.tests
            ],
        }
