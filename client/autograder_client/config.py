"""Who submits, and where to: set once, by `configure()`, the environment or each call.

Each setting comes from the first of: the argument passed (`submit(..., student_id=...)`), the
environment (AUTOGRADER_URL, AUTOGRADER_API_KEY, AUTOGRADER_STUDENT_ID), the config file that
`configure()` writes, and the default (http://127.0.0.1:8000, no key, no student id).

The config file is `autograder/client.json` under XDG_CONFIG_HOME (else ~/.config). It holds a
student id, or a student link's address and token (the link an instructor sends, from
`autograder students link`): with the link's token as its key the client submits as that
student, whom the server reads from the token.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from autograder_client.errors import ConfigurationError

DEFAULT_URL = "http://127.0.0.1:8000"
LTI_STUDENTS = "lti:"  # app.core.models.LTI_STUDENTS: ids only an LMS launch may carry
_STUDENT_ID = re.compile(r"[^\x00-\x1f\x7f]{1,200}")  # what the API accepts as a student id
_LINK_TOKEN = "student_token"  # app.access.student_links.FRAGMENT_KEY
_LINK_PREFIX = "ags_"  # app.access.student_links.TOKEN_PREFIX
_PAGES = re.compile(r"/exercises(/[^/]*)?/?$")


@dataclass(frozen=True)
class Settings:
    url: str
    api_key: str | None
    student_id: str | None


def config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(base) / "autograder" / "client.json"


def configure(*, student_id: str | None = None, link: str | None = None) -> Path:
    """Remember who submits from this account: a student id, or the student link your instructor
    sent (which names you, and where the autograder is). Replaces what was configured before;
    `configure()` with neither forgets it. Returns the file written."""
    saved = {"student_id": checked_student_id(student_id)}
    if link is not None:
        saved["url"], saved["api_key"] = parse_link(link)
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    # The link's token lets whoever reads it submit as the student: readable by its owner only.
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.chmod(path, 0o600)  # a file made before, by hand, keeps its mode through os.open
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        json.dump({key: value for key, value in saved.items() if value is not None}, file)
    return path


def resolve(url: str | None, api_key: str | None, student_id: str | None) -> Settings:
    """The settings in force: each argument, else its environment variable, else the file."""
    saved = _saved()
    address = url or os.environ.get("AUTOGRADER_URL") or saved.get("url") or DEFAULT_URL
    address = address.rstrip("/")
    # A link's token goes only to the autograder of that link, never to another one named later.
    link_token = saved.get("api_key") if address == saved.get("url") else None
    return Settings(
        url=address,
        api_key=api_key or os.environ.get("AUTOGRADER_API_KEY") or link_token,
        student_id=checked_student_id(
            student_id or os.environ.get("AUTOGRADER_STUDENT_ID") or saved.get("student_id")
        ),
    )


def checked_student_id(student_id: str | None) -> str | None:
    if student_id is None:
        return None
    if not _STUDENT_ID.fullmatch(student_id):
        raise ConfigurationError(
            f"a student id is 1 to 200 printable characters, not {student_id!r}"
        )
    if student_id.startswith(LTI_STUDENTS):
        raise ConfigurationError(
            f"student ids starting {LTI_STUDENTS!r} are reserved for students who come from an "
            f"LMS, not {student_id!r}: choose another id"
        )
    return student_id


def parse_link(link: str) -> tuple[str, str]:
    """The autograder's address and the token of a student link
    (`https://grader.example.edu/exercises#student_token=ags_...`)."""
    parts = urlsplit(link.strip())
    tokens = parse_qs(parts.fragment).get(_LINK_TOKEN, [])
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigurationError(f"a student link is an http(s) address, not {link!r}")
    if len(tokens) != 1 or not tokens[0].startswith(_LINK_PREFIX):
        raise ConfigurationError(
            f"this address is not a whole student link: it should end in "
            f"#{_LINK_TOKEN}={_LINK_PREFIX}... (copy all of the link your instructor sent)"
        )
    base = f"{parts.scheme}://{parts.netloc}{_PAGES.sub('', parts.path)}"
    return base.rstrip("/"), tokens[0]


def _saved() -> dict[str, str]:
    path = config_path()
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as error:
        raise ConfigurationError(
            f"cannot read {path} ({error}); run autograder_client.configure() again"
        ) from None
    if not isinstance(saved, dict) or not all(isinstance(value, str) for value in saved.values()):
        raise ConfigurationError(f"{path} is not what configure() writes; run it again")
    return saved
