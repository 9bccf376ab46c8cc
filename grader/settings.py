"""Settings read from the environment (prefix AUTOGRADER_); one class, read once, overridable."""

from __future__ import annotations

import contextlib
import os
import secrets
import tempfile
from functools import lru_cache
from pathlib import Path

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from grader.sandbox.cpus import usable_cpus

_PROJECT_ROOT = Path(__file__).resolve().parent.parent
_MOST_SLOTS = 64


class GraderSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="AUTOGRADER_", extra="ignore")

    # Everything kept on disk: the SQLite file, the generated secret. The service's default is
    # ./var, beside the repository it runs from; the one-shot `grade` uses the user's data dir
    # (`in_user_data_dir`) unless this is set.
    data_dir: Path = Path("var")
    # Where exercise plans are kept, if not under the data dir: a folder several services of one
    # secret share (workers on one volume) builds each exercise's plan once between them.
    plans_dir: Path | None = None
    exercises_dir: Path = _PROJECT_ROOT / "exercises"
    # The master secret (`master_secret`). Unset: one is generated on first use and kept in the
    # data dir, so hidden inputs and signatures stay stable across restarts.
    secret: SecretStr | None = None
    # Sandboxed processes running at once: gradings in parallel, and a grading's visible and
    # hidden tests at the same time when there are two or more. By default one per CPU this
    # process may use (grader.sandbox.cpus); more buys nothing: past the CPUs, runs wait for one
    # (a run that waited for a CPU while its clock ran would be starved, the platform's fault).
    sandbox_slots: int = Field(
        default_factory=lambda: min(usable_cpus(), _MOST_SLOTS), ge=1, le=_MOST_SLOTS
    )

    def in_user_data_dir(self) -> GraderSettings:
        """These settings with the data dir in the user's data directory (XDG: under
        $XDG_DATA_HOME, else ~/.local/share), unless AUTOGRADER_DATA_DIR names one: a command run
        in a student's homework folder leaves nothing there."""
        if "data_dir" in self.model_fields_set:
            return self
        return self.model_copy(update={"data_dir": user_data_dir()})

    def plan_cache_dir(self) -> Path:
        """Where exercise plans are kept (`grader.plan_cache`): they hold hidden expected
        outputs, so they live beside the secret they derive from, unless `plans_dir` says."""
        return self.plans_dir or self.data_dir / "plans"

    def master_secret(self) -> str:
        """The deployment's master secret: it seeds the hidden tests, and the service derives its
        webhook signatures and LTI session keys from it."""
        if self.secret is not None:
            return self.secret.get_secret_value()
        path = self.data_dir / "secret"
        if not path.exists():
            _create_secret(path)
        return path.read_text(encoding="utf-8").strip()


def user_data_dir() -> Path:
    """$XDG_DATA_HOME/autograder, or ~/.local/share/autograder (the XDG base directory spec
    ignores a relative $XDG_DATA_HOME)."""
    base = Path(os.environ.get("XDG_DATA_HOME", ""))
    if not base.is_absolute():
        base = Path.home() / ".local" / "share"
    return base / "autograder"


def _create_secret(path: Path) -> None:
    """Write a new secret at `path` unless another process got there first.

    Processes sharing a data dir may all find it empty at once: each writes its own token to a
    file of its own, then links that into place, which fails where `path` exists. The first link
    wins and every process reads that one, never a half-written file.
    """
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # holds the secret: ours only
    descriptor, written = tempfile.mkstemp(prefix=".secret-", dir=path.parent)  # mode 0600
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(secrets.token_urlsafe(32))
            file.flush()
            os.fsync(file.fileno())  # a crash must not leave an empty secret in place
        with contextlib.suppress(FileExistsError):  # another process's secret is the one
            os.link(written, path)
    finally:
        os.unlink(written)


@lru_cache
def get_settings() -> GraderSettings:
    return GraderSettings()
