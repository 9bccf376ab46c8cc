"""Submit an exercise to the autograder from a notebook or a script; only httpx is needed.

In a notebook: `submit("multi-headed-self-attention", MultiHeadedSelfAttention)` shows the report;
`configure(student_id=...)` (or `configure(link=...)`, with a student link) says once who submits.
"""

from autograder_client.client import Client, submit
from autograder_client.config import configure
from autograder_client.errors import ConfigurationError, SubmissionError
from autograder_client.render import render_html, render_text
from autograder_client.result import Result
from autograder_client.source import source_of

__all__ = [
    "Client",
    "ConfigurationError",
    "Result",
    "SubmissionError",
    "configure",
    "render_html",
    "render_text",
    "source_of",
    "submit",
]
