"""The log formats: JSON lines for a collector, one readable line per record for a person, and
which one `serve` picks when AUTOGRADER_LOG_FORMAT is unset (text on a terminal, else JSON)."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest
from pydantic import ValidationError

from app.core import logs
from app.core.logs import LogFormat
from app.core.settings import AppSettings


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    saved = root.handlers[:], root.level, logging.getLogger("httpx").level
    yield
    root.handlers[:], level, httpx_level = saved
    root.setLevel(level)
    logging.getLogger("httpx").setLevel(httpx_level)


def _logged(
    monkeypatch: pytest.MonkeyPatch, stderr: io.StringIO, log_format: LogFormat | None
) -> str:
    monkeypatch.setattr("sys.stderr", stderr)
    logs.configure("INFO", log_format)
    with logs.bound_submission("01SUB"):
        logging.getLogger("app.test").info(
            "Running upgrade 0001 -> 0002, two\nlines.", extra={"color_message": "\x1b[36mx"}
        )
    return stderr.getvalue()


@pytest.mark.parametrize(
    ("stderr", "log_format", "json_lines"),
    [
        (io.StringIO(), "json", True),
        (_Terminal(), "json", True),
        (io.StringIO(), "text", False),
        (_Terminal(), "text", False),
        (io.StringIO(), None, True),  # a file, a pipe, a container's log: a collector reads it
        (_Terminal(), None, False),  # a person reads it
    ],
)
def test_the_format_is_the_one_set_else_text_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch,
    stderr: io.StringIO,
    log_format: LogFormat | None,
    json_lines: bool,
) -> None:
    output = _logged(monkeypatch, stderr, log_format)
    assert len(output.splitlines()) == 1
    if json_lines:
        record = json.loads(output)
        assert record["message"] == "Running upgrade 0001 -> 0002, two\nlines."
        assert record["submission_id"] == "01SUB"
        assert "color_message" not in record  # uvicorn's message again, with terminal colours
    else:
        assert output.rstrip("\n").endswith(
            " INFO app.test: Running upgrade 0001 -> 0002, two lines. [submission 01SUB]"
        )


def test_an_unknown_format_is_refused_naming_the_choices() -> None:
    with pytest.raises(ValidationError, match="'text' or 'json'"):
        AppSettings(log_format="yaml")  # type: ignore[arg-type]
