"""Every exercise of the repository is published: its proof record names its current version,
so a change committed without proving it again fails here, with the command to run."""

from __future__ import annotations

from grader.catalog import Catalog
from grader.settings import GraderSettings


def test_every_exercise_is_proven_at_its_current_version() -> None:
    drafts = Catalog.from_folder(GraderSettings().exercises_dir).drafts()
    assert drafts == {}, "students would not see: " + "; ".join(
        f"{slug}: {reason} (and commit its proof.toml)" for slug, reason in drafts.items()
    )
