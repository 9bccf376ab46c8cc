"""Settings read from the environment (prefix AUTOGRADER_); one class, read once, overridable."""

from __future__ import annotations

import secrets
from functools import lru_cache
from pathlib import Path

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

_PROJECT_ROOT = Path(__file__).resolve().parent.parent


class GraderSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="AUTOGRADER_", extra="ignore")

    # Everything kept on disk: the SQLite file, the generated secret, scratch directories.
    data_dir: Path = Path("var")
    exercises_dir: Path = _PROJECT_ROOT / "exercises"
    # Seeds hidden tests and signs what the service hands out. Unset: one is generated on first
    # use and kept in the data dir, so hidden inputs stay stable across restarts.
    secret: SecretStr | None = None
    # Sandboxed processes running at once: gradings in parallel, and a grading's visible and
    # hidden tests at the same time when there are two or more.
    sandbox_slots: int = Field(default=2, ge=1, le=64)

    def hidden_test_secret(self) -> str:
        if self.secret is not None:
            return self.secret.get_secret_value()
        path = self.data_dir / "secret"
        if not path.exists():
            self.data_dir.mkdir(parents=True, exist_ok=True)
            path.touch(mode=0o600)
            path.write_text(secrets.token_urlsafe(32), encoding="utf-8")
        return path.read_text(encoding="utf-8").strip()


@lru_cache
def get_settings() -> GraderSettings:
    return GraderSettings()
