"""The real service for the client's tests: `autograder serve` on a free loopback port, with its
data in a temporary folder, and the sample submissions the other suites grade."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

AUTOGRADER = str(Path(sys.executable).with_name("autograder"))
SEED = "multi-headed-self-attention"
EXERCISE = Path(__file__).parents[2] / "exercises" / SEED
CORRECT = EXERCISE / "solutions" / "neetcode_common_answer.py"
MISSING_SCALING = EXERCISE / "mistakes" / "missing_scaling.py"


def unconfigured(monkeypatch: pytest.MonkeyPatch, config_home: Path) -> None:
    """A client as on a fresh account: no config file of whoever runs the tests, no settings
    from their environment. Each module that submits calls this from an autouse fixture."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config_home))
    for name in ("AUTOGRADER_URL", "AUTOGRADER_API_KEY", "AUTOGRADER_STUDENT_ID"):
        monkeypatch.delenv(name, raising=False)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _service_env(data_dir: Path) -> dict[str, str]:
    return {**os.environ, "AUTOGRADER_DATA_DIR": str(data_dir), "AUTOGRADER_SECRET": "client"}


@contextmanager
def serve(data_dir: Path) -> Iterator[str]:
    """Start the service and yield its URL once /readyz says ready; stop it afterwards."""
    url = f"http://127.0.0.1:{free_port()}"
    env = _service_env(data_dir)
    with (data_dir / "serve.log").open("w") as log:
        process = subprocess.Popen(
            [AUTOGRADER, "serve", "--port", url.rsplit(":", 1)[1]],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            _wait_ready(url, process, data_dir / "serve.log")
            yield url
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_ready(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 120
    while True:
        assert process.poll() is None, log.read_text()
        try:
            if httpx.get(f"{url}/readyz", timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.2)


def student_link(data_dir: Path, url: str, student: str) -> str:
    """A link to the service at `url` for a student of the default course, as an instructor
    mints it (`autograder students link`)."""
    minted = subprocess.run(
        [AUTOGRADER, "students", "link", "--course", "default", "--student", student],
        env={**_service_env(data_dir), "AUTOGRADER_PUBLIC_URL": url},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert minted.returncode == 0, minted.stderr
    return minted.stdout.strip()
