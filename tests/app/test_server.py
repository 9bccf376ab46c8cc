"""The real server: `autograder serve` as a process on a free loopback port, grading in the
real sandbox; killed with SIGKILL mid-work and started again, it finishes what it accepted."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from app_support import CORRECT, SEED

from app.core.db import Database
from app.core.models import Submission, SubmissionStatus

pytestmark = pytest.mark.slow

AUTOGRADER = str(Path(sys.executable).with_name("autograder"))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def server(
    data_dir: Path, port: int, **settings: str
) -> Iterator[tuple[subprocess.Popen[str], httpx.Client]]:
    """`autograder serve` on `port`; `settings` are more AUTOGRADER_ variables."""
    env = {
        **os.environ,
        "AUTOGRADER_DATA_DIR": str(data_dir),
        "AUTOGRADER_SECRET": "integration",
        "AUTOGRADER_SANDBOX_SLOTS": "2",
        "AUTOGRADER_LOG_FORMAT": "json",
        **settings,
    }
    log = (data_dir / f"serve-{time.monotonic_ns()}.log").open("w")
    process = subprocess.Popen(
        [AUTOGRADER, "serve", "--port", str(port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
    )
    client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert process.poll() is None, Path(log.name).read_text()
            try:
                if client.get("/readyz").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, Path(log.name).read_text()
            time.sleep(0.2)
        yield process, client
    finally:
        client.close()
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        log.close()


def test_the_real_server_grades_a_correct_submission(tmp_path: Path) -> None:
    with server(tmp_path, free_port()) as (_, client):
        readiness = client.get("/readyz").json()
        assert readiness["status"] == "ready"
        assert any(layer["active"] for layer in readiness["sandbox_layers"])
        response = client.post(
            "/v1/submissions?wait=true",
            json={"exercise": SEED, "source": CORRECT, "student_id": "s1"},
        )
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["status"] == "done"
        assert body["report"]["status"] == "passed", body["report"]
        assert body["report"]["score"] == body["report"]["max_score"]
        assert client.get(f"/v1/submissions/{body['id']}/results.json").json()["score"] > 0
    logs = "".join(path.read_text() for path in tmp_path.glob("serve-*.log"))
    assert "running OPEN, without API keys" in logs
    assert f'"submission_id": "{body["id"]}"' in logs


def test_work_accepted_before_a_sigkill_is_finished_after_restart(tmp_path: Path) -> None:
    port = free_port()
    with server(tmp_path, port) as (process, client):
        ids = [
            client.post(
                "/v1/submissions", json={"exercise": SEED, "source": f"{CORRECT}\n# {n}\n"}
            ).json()["id"]
            for n in range(8)
        ]
        process.send_signal(signal.SIGKILL)
        process.wait()
    database = Database.from_url(f"sqlite:///{tmp_path / 'autograder.db'}")
    try:
        with database.session() as session:
            statuses = [session.get(Submission, i).status for i in ids]  # type: ignore[union-attr]
    finally:
        database.close()
    # The kill came while work was waiting (the test proves nothing otherwise).
    assert statuses.count(SubmissionStatus.DONE) < len(ids), "all finished before the kill"
    with server(tmp_path, port) as (_, client):
        deadline = time.monotonic() + 120
        while True:
            bodies = [client.get(f"/v1/submissions/{i}").json() for i in ids]
            if all(body["status"] == "done" for body in bodies):
                break
            assert time.monotonic() < deadline, [body["status"] for body in bodies]
            time.sleep(0.2)
    assert [body["report"]["status"] for body in bodies] == ["passed"] * 8


def test_forged_proxy_headers_change_nothing_and_other_hosts_are_refused(tmp_path: Path) -> None:
    with server(tmp_path, free_port(), AUTOGRADER_RATE_LIMIT_PER_KEY="2") as (_, client):
        codes = [
            client.post(
                "/v1/submissions",
                json={"exercise": SEED, "source": CORRECT},
                headers={"X-Forwarded-For": f"203.0.113.{n}", "X-Forwarded-Proto": "https"},
            ).status_code
            for n in range(3)
        ]
        assert codes == [202, 202, 429]  # one client, whatever it claims to forward for
        # A page on another site whose name was rebound to this machine gets nothing.
        assert client.get("/v1/exercises", headers={"Host": "rebound.example"}).status_code == 400
        assert client.get("/v1/exercises", headers={"Host": "localhost:1"}).status_code == 200
