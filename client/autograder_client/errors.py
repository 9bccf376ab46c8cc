"""The one error the client raises: the submission could not be graded.

    SubmissionError      the source could not be read, the server could not be reached, or it
                         refused the request (unknown exercise 404, too large 413, invalid 422,
                         still busy after the Retry-After budget 429/503, ...)
    └── ConfigurationError   a setting that cannot be used (autograder_client.config)

A submission that was graded and failed is not an error: it is a `Result` whose report says so.
"""

from __future__ import annotations


class SubmissionError(Exception):
    """`detail` is the server's problem detail (or what went wrong on this side); `status` the
    HTTP status when the server answered, None when it was never reached."""

    def __init__(self, detail: str, *, status: int | None = None, title: str = "") -> None:
        super().__init__(f"{title}: {detail}" if title else detail)
        self.detail = detail
        self.status = status
        self.title = title


class ConfigurationError(SubmissionError):
    """A setting that cannot be used: a student id the server would refuse (an `lti:` one), a
    student link cut short, an unreadable config file. Raised before anything is sent."""
