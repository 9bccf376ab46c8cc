"""Logs: one JSON object per line for a collector, or one readable line per record for a person
(by default, when stderr is a terminal); each carries the submission being handled.

`bound_submission(id)` puts the id into every record logged inside it, in this thread or task
(a context variable), so a grading's lines can be found by id across the request, the grading
thread and the webhook sender.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Literal

LogFormat = Literal["text", "json"]

_LINE_BREAKS = re.compile(r"\s*[\r\n]+\s*")

submission_id_var: ContextVar[str | None] = ContextVar("submission_id", default=None)

# Attributes every LogRecord has; anything else was passed with `extra=` and is logged as a field,
# but for uvicorn's copy of its message with terminal colour codes.
_STANDARD = set(vars(logging.makeLogRecord({}))) | {
    "message",
    "asctime",
    "taskName",
    "color_message",
}


@contextmanager
def bound_submission(submission_id: str) -> Iterator[None]:
    token = submission_id_var.set(submission_id)
    try:
        yield
    finally:
        submission_id_var.reset(token)


class _SubmissionFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "submission_id"):
            record.submission_id = submission_id_var.get()
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and value is not None:
                entry[key] = value if isinstance(value, str | int | float | bool) else str(value)
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """`2026-12-06 09:14:03 INFO app.serve: message [submission ID]`, on one line: a message's
    own line breaks (a migration's description) become spaces. A traceback follows the line."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s", "%Y-%m-%d %H:%M:%S")

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 - logging's name
        line = _LINE_BREAKS.sub(" ", super().formatMessage(record))
        submission = getattr(record, "submission_id", None)
        return f"{line} [submission {submission}]" if submission else line


def configure(level: str = "INFO", log_format: LogFormat | None = None) -> None:
    """Send every logger (uvicorn's included) to stderr in one format: `log_format`, else text
    on a terminal and JSON lines anywhere else (a collector, a file, a container's log)."""
    json_lines = log_format == "json" if log_format else not sys.stderr.isatty()
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(_SubmissionFilter())
    handler.setFormatter(JsonFormatter() if json_lines else TextFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        logger.handlers[:] = []
        logger.propagate = True
    # httpx logs each request's full URL at INFO; a webhook's URL may carry the receiver's
    # secret in its path or query.
    logging.getLogger("httpx").setLevel(logging.WARNING)
