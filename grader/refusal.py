"""Why a submission was refused, said once: by the report's message, every reason with its line
where known (a syntax error, each forbidden import). The visible tests say only that they were
not run for it; the report's findings keep the reasons structured (code, message, line) for the
editor's marks, and a renderer leaves them out of a refusal's text (`Report.findings_to_say`)."""

from __future__ import annotations

from collections.abc import Sequence

from grader.contract import Termination, Violation

# Beside a status that says "rejected": when the refusal came, not the word again.
_LEADS = {Termination.REJECTED: "Nothing ran", Termination.VIOLATION: "Stopped while running"}
_TEST_MESSAGES = {
    Termination.REJECTED: "not run: the submission was refused",
    Termination.VIOLATION: "not judged: the submission was refused while it ran",
}


def refusal_message(termination: Termination, violations: Sequence[Violation], detail: str) -> str:
    """The report's message: one reason on its line, several each on a line of their own as a
    list (a reason may hold a semicolon); `detail` where the sandbox said no reason."""
    reasons = [_reason(violation) for violation in violations] or [detail]
    lead = _LEADS[termination]
    if len(reasons) == 1:
        return f"{lead}: {reasons[0]}"
    return "\n".join([f"{lead}:", *(f"- {reason}" for reason in reasons)])


def refused_test_message(termination: Termination) -> str:
    """A visible test's message in a refused report: that it was not run, and why in one word."""
    return _TEST_MESSAGES[termination]


def _reason(violation: Violation) -> str:
    return f"line {violation.line}: {violation.message}" if violation.line else violation.message
