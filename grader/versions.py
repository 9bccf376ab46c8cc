"""Content digests: an exercise's version, and the fingerprint of everything a catalog reads.

Both hash file contents, not modification times: a folder shared between machines, or
restored by `git checkout`, may change content without a newer time, or the time alone.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
from collections.abc import Iterable
from pathlib import Path

# Twelve hex digits: short enough to read in a report, and two versions of one exercise
# colliding is a one in 2**48 chance.
VERSION_LENGTH = 12
# The record a holding proof writes in the exercise's folder (`grader.proof_record`): not part
# of the version it certifies.
PROOF_RECORD = "proof.toml"


def exercise_version(folder: Path, reference_file: Path) -> str:
    """A hash of the exercise's folder and its reference module: what a report was graded with.
    The folder's proof record is left out: writing it changes nothing it certifies."""
    files = [
        (path.relative_to(folder).as_posix(), path)
        for path in content_files(folder)
        if path != folder / PROOF_RECORD
    ]
    return _digest([*files, ("reference", reference_file)])[:VERSION_LENGTH]


def fingerprint(folders: Iterable[Path]) -> str:
    """A hash of every file under these folders: equal while nothing in them changed."""
    return _digest((path.as_posix(), path) for folder in folders for path in content_files(folder))


def add_references_beside(exercises: Path) -> None:
    """The one rule for where reference modules live: in `reference/` beside the exercises
    folder (where `new-exercise` writes them). That folder joins the `reference` package, first,
    so a course's own catalog, mounted anywhere, has its references found, imported (one
    importing another included) and watched as the project's are."""
    folder = exercises.resolve().parent / "reference"
    package = importlib.import_module("reference")  # its __init__ imports nothing
    if folder.is_dir() and str(folder) not in {
        str(Path(path).resolve()) for path in package.__path__
    }:
        package.__path__.insert(0, str(folder))


def reference_folders() -> list[Path]:
    """The folders of the `reference` package, where every exercise's reference module and the
    helpers they share lie; found, not imported."""
    found = importlib.util.find_spec("reference")
    return [Path(path) for path in (found.submodule_search_locations or [])] if found else []


def content_files(folder: Path) -> list[Path]:
    """The files under `folder` that make an exercise, sorted: caches and hidden files (an
    editor's swap file) left out, so neither changes a version."""
    return sorted(
        path for path in folder.rglob("*") if path.is_file() and _is_content(path, folder)
    )


def _is_content(path: Path, folder: Path) -> bool:
    parts = path.relative_to(folder).parts
    return not any(part.startswith(".") or part == "__pycache__" for part in parts)


def _digest(named_files: Iterable[tuple[str, Path]]) -> str:
    digest = hashlib.sha256()
    for name, path in named_files:
        digest.update(name.encode() + b"\0")
        try:
            digest.update(path.read_bytes())
        except OSError:  # removed while read: the next look sees the folder as it is then
            digest.update(b"\0unreadable")
        digest.update(b"\0")
    return digest.hexdigest()
