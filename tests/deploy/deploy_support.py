"""Reading the deployment files as Docker and compose read them, for tests that have no engine.

    build_context(dest)     the build context: the repository through .dockerignore
    read_dockerfile()       its stages: what the web and builder stages COPY and RUN, what the
                            runtime stage sets; stage(name) one of them
    load_compose(vars)      docker-compose.yml with its ${...} interpolated and merge keys resolved

Only the forms these files use are understood; anything else fails loudly rather than being
read some other way than Docker would.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
COMPOSE_FILE = ROOT / "docker-compose.yml"


# --- the build context ----------------------------------------------------------------------


@dataclass(frozen=True)
class _Rule:
    pattern: str
    regex: re.Pattern[str]
    keep: bool  # a "!" exception


def _ignore_rules() -> list[_Rule]:
    rules = []
    for line in DOCKERIGNORE.read_text().splitlines():
        entry = line.strip()
        if not entry or entry.startswith("#"):
            continue
        keep = entry.startswith("!")
        pattern = os.path.normpath(entry.removeprefix("!").strip()).lstrip("/")
        rules.append(_Rule(pattern, _pattern_regex(pattern), keep))
    return rules


def _pattern_regex(pattern: str) -> re.Pattern[str]:
    """Docker's matching: `*` and `?` stop at a slash, `**` crosses any number of folders."""
    regex, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            regex, i = regex + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            regex, i = regex + ".*", i + 2
        elif pattern[i] == "*":
            regex, i = regex + "[^/]*", i + 1
        elif pattern[i] == "?":
            regex, i = regex + "[^/]", i + 1
        elif pattern[i] in "[\\":
            raise ValueError(f".dockerignore: {pattern!r}: character classes are not read here")
        else:
            regex, i = regex + re.escape(pattern[i]), i + 1
    return re.compile(regex + r"\Z")


def _ignored(path: str, rules: list[_Rule]) -> bool:
    """The last rule that matches the path or one of its folders decides."""
    prefixes = [path[:i] for i, char in enumerate(path) if char == "/"] + [path]
    ignored = False
    for rule in rules:
        if any(rule.regex.match(prefix) for prefix in prefixes):
            ignored = not rule.keep
    return ignored


def context_files() -> list[str]:
    """The files `docker build .` sends, relative to the repository root."""
    rules = _ignore_rules()
    exceptions = [rule.pattern for rule in rules if rule.keep]
    files = []
    for folder, dirs, names in os.walk(ROOT):
        relative = os.path.relpath(folder, ROOT)
        base = "" if relative == "." else relative + "/"
        # Skip a folder that is ignored and that no exception reaches into (.git, .venv).
        dirs[:] = [
            d
            for d in dirs
            if not _ignored(base + d, rules)
            or any(e.startswith(base + d + "/") or e.startswith("*") for e in exceptions)
        ]
        files += [base + name for name in names if not _ignored(base + name, rules)]
    return sorted(files)


def build_context(dest: Path) -> None:
    """Copy the build context to `dest`, modes included (the scripts must stay executable)."""
    for name in context_files():
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)


# --- the Dockerfile -------------------------------------------------------------------------


@dataclass
class Stage:
    name: str | None
    runs: list[str] = field(default_factory=list)
    # COPY destination -> (stage it comes from or None for the context, source)
    copies: list[tuple[str | None, str, str]] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    volumes: list[str] = field(default_factory=list)
    user: str | None = None
    workdir: str = "/"
    entrypoint: list[str] = field(default_factory=list)
    cmd: list[str] = field(default_factory=list)
    healthcheck: list[str] = field(default_factory=list)


def _instructions(text: str) -> list[tuple[str, str]]:
    """(KEYWORD, arguments) per instruction, continuation lines joined, comments dropped."""
    instructions, pending = [], ""
    for line in text.splitlines():
        if line.lstrip().startswith("#") or (not line.strip() and not pending):
            continue
        pending += line.rstrip()
        if pending.endswith("\\"):
            pending = pending[:-1] + " "
            continue
        keyword, _, arguments = pending.strip().partition(" ")
        instructions.append((keyword.upper(), arguments.strip()))
        pending = ""
    return instructions


def _exec_form(arguments: str) -> list[str]:
    value = json.loads(arguments)
    assert isinstance(value, list), f"not the exec (JSON) form: {arguments}"
    return [str(item) for item in value]


def read_dockerfile() -> list[Stage]:
    stages: list[Stage] = []
    for keyword, arguments in _instructions(DOCKERFILE.read_text()):
        if keyword == "FROM":
            words = arguments.split()
            stages.append(Stage(words[2] if len(words) == 3 and words[1].upper() == "AS" else None))
        elif not stages:
            assert keyword == "ARG", f"{keyword} before the first FROM"
        elif keyword == "RUN":
            stages[-1].runs.append(arguments)
        elif keyword == "COPY":
            words = shlex.split(arguments)
            origin = None
            if words[0].startswith("--from="):
                origin = words.pop(0).removeprefix("--from=")
            assert len(words) >= 2 and not words[0].startswith("--"), f"COPY {arguments}"
            *sources, dest = words
            # Several sources go into one folder, as Docker requires (a trailing slash).
            assert len(sources) == 1 or dest.endswith("/"), f"COPY {arguments}"
            stages[-1].copies += [(origin, source, dest) for source in sources]
        elif keyword == "ENV":
            for item in shlex.split(arguments):
                name, equals, value = item.partition("=")
                assert equals, f"ENV {arguments}: only the NAME=VALUE form is read here"
                stages[-1].env[name] = value
        elif keyword == "VOLUME":
            stages[-1].volumes += _exec_form(arguments)
        elif keyword in ("USER", "WORKDIR"):
            setattr(stages[-1], keyword.lower(), arguments)
        elif keyword in ("ENTRYPOINT", "CMD"):
            setattr(stages[-1], keyword.lower(), _exec_form(arguments))
        elif keyword == "HEALTHCHECK":
            stages[-1].healthcheck = _exec_form(arguments.partition(" CMD ")[2])
    return stages


def stage(name: str) -> Stage:
    """The stage named `name` (FROM ... AS name)."""
    (found,) = [each for each in read_dockerfile() if each.name == name]
    return found


# --- docker-compose.yml ---------------------------------------------------------------------

# ${NAME}, ${NAME:?error}, ${NAME?error}, ${NAME:-default}, ${NAME-default}; $$ is a dollar.
_VARIABLE = re.compile(r"\$(?:\$|\{(?P<name>\w+)(?:(?P<op>:?[?-])(?P<arg>[^}]*))?\})")


def interpolate(text: str, variables: Mapping[str, str]) -> str:
    def substitute(match: re.Match[str]) -> str:
        name, op, arg = match.group("name", "op", "arg")
        if name is None:
            return "$"
        value = variables.get(name)
        empty = value is None or (value == "" and op is not None and op.startswith(":"))
        if op in (":?", "?") and empty:
            raise KeyError(f"{name}: {arg}")
        if op in (":-", "-") and empty:
            return arg
        return value or ""

    if "$" in _VARIABLE.sub("", text):
        raise ValueError(f"an interpolation form not read here: {text!r}")
    return _VARIABLE.sub(substitute, text)


def _interpolate_all(node: Any, variables: Mapping[str, str]) -> Any:
    if isinstance(node, str):
        return interpolate(node, variables)
    if isinstance(node, list):
        return [_interpolate_all(item, variables) for item in node]
    if isinstance(node, dict):
        return {key: _interpolate_all(value, variables) for key, value in node.items()}
    return node


def load_compose(variables: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The compose file as compose sees it: merge keys resolved (by YAML), and, given
    `variables`, every ${...} interpolated (a missing required one raises KeyError)."""
    document = yaml.safe_load(COMPOSE_FILE.read_text())
    assert isinstance(document, dict)
    if variables is not None:
        document = _interpolate_all(document, variables)
    compose: dict[str, Any] = document
    return compose
