"""The generated master secret: made once per data dir, whoever asks first, however many at once."""

from __future__ import annotations

import multiprocessing
import stat
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from pathlib import Path

import pytest
from pydantic import SecretStr

from grader.settings import GraderSettings

RACERS = 8
RACES = 20  # data dirs raced for: the window between finding no secret and writing one is small


def test_a_set_secret_is_used_and_nothing_is_written(tmp_path: Path) -> None:
    settings = GraderSettings(data_dir=tmp_path / "data", secret=SecretStr("configured"))
    assert settings.master_secret() == "configured"
    assert not (tmp_path / "data").exists()


def test_a_generated_secret_is_kept_private_and_read_back(tmp_path: Path) -> None:
    first = GraderSettings(data_dir=tmp_path / "data").master_secret()
    assert GraderSettings(data_dir=tmp_path / "data").master_secret() == first
    assert len(first) >= 32
    assert [path.name for path in (tmp_path / "data").iterdir()] == ["secret"]
    assert stat.S_IMODE((tmp_path / "data" / "secret").stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "data").stat().st_mode) == 0o700


def read_secrets(root: str, start: Barrier, secrets: Queue[tuple[int, str]]) -> None:
    for race in range(RACES):
        settings = GraderSettings(data_dir=Path(root) / str(race))
        start.wait(timeout=60)  # every racer finds this race's data dir empty
        secrets.put((race, settings.master_secret()))


def test_processes_racing_on_an_empty_data_dir_all_read_one_secret(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(RACERS)
    secrets: Queue[tuple[int, str]] = context.Queue()
    racers = [
        context.Process(target=read_secrets, args=(str(tmp_path), start, secrets))
        for _ in range(RACERS)
    ]
    for racer in racers:
        racer.start()
    read: dict[int, set[str]] = {race: set() for race in range(RACES)}
    for _ in range(RACERS * RACES):
        race, secret = secrets.get(timeout=120)
        read[race].add(secret)
    for racer in racers:
        racer.join(timeout=60)
    assert [racer.exitcode for racer in racers] == [0] * RACERS
    for race, seen in read.items():
        written = (tmp_path / str(race) / "secret").read_text(encoding="utf-8").strip()
        assert seen == {written}
        assert [path.name for path in (tmp_path / str(race)).iterdir()] == ["secret"]


def test_one_shot_commands_keep_their_files_in_the_user_s_data_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("AUTOGRADER_DATA_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_DATA_HOME", "relative/is/ignored")
    assert GraderSettings().data_dir == Path("var")  # the service's default is kept
    assert GraderSettings().in_user_data_dir().data_dir == tmp_path / ".local/share/autograder"
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert GraderSettings().in_user_data_dir().data_dir == tmp_path / "xdg/autograder"
    monkeypatch.setenv("AUTOGRADER_DATA_DIR", str(tmp_path / "chosen"))
    assert GraderSettings().in_user_data_dir().data_dir == tmp_path / "chosen"


def test_plans_live_under_the_data_dir_unless_a_plans_dir_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AUTOGRADER_PLANS_DIR")
    assert GraderSettings(data_dir=tmp_path).plan_cache_dir() == tmp_path / "plans"
    monkeypatch.setenv("AUTOGRADER_PLANS_DIR", str(tmp_path / "shared"))
    assert GraderSettings(data_dir=tmp_path).plan_cache_dir() == tmp_path / "shared"
