"""Helpers for the service's tests: a sandbox that needs no fork, a webhook receiver, waiting,
and a guard that keeps every packet on this machine."""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.core.db import Database
from app.core.models import Submission
from app.core.settings import AppSettings
from grader.call_execution import (
    SUBMISSION_FILENAME,
    describe_exception,
    missing_entry_point,
    run_calls,
)
from grader.contract import CallOutcome, Execution, Job, Termination
from grader.reference import GLOBAL_RNG
from grader.sandbox.interface import Layer

ROOT = Path(__file__).resolve().parents[2]
SEED = "multi-headed-self-attention"
SEED_EXERCISE = ROOT / "exercises" / SEED
CORRECT = (SEED_EXERCISE / "solutions/neetcode_common_answer.py").read_text()
# The seed's most common mistake: attention without the 1/sqrt(d) scaling.
MISSING_SCALING = (SEED_EXERCISE / "mistakes/missing_scaling.py").read_text()

SettingsFactory = Callable[..., AppSettings]  # make_settings(**overrides)


def store_submission(database: Database, **values: Any) -> str:
    """A submission row as some process left it (the seed exercise, the correct source, unless
    `values` say otherwise); returns its id."""
    with database.session() as session:
        row = Submission(**{"exercise": SEED, "source": CORRECT, **values})
        session.add(row)
        session.flush()
        return row.id


def load_submission(database: Database, submission_id: str) -> Submission:
    with database.session() as session:
        row = session.get(Submission, submission_id)
        assert row is not None
        return row


ClientFactory = Callable[[AppSettings], TestClient]  # make_client(settings): a started app


# A grading runs an accepted submission twice: its visible tests in one child, its hidden tests in
# another (grader.runner.Grader.grade).
RUNS_PER_GRADING = 2


class FakeSandbox:
    """Runs a job in this very process without isolation: the API's tests need real reports,
    not a fork per submission. `gate` holds every run until set (to keep work queued)."""

    parallel_runs = 1  # runs in this process

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.runs: list[str] = []
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        self.gate = threading.Event()
        self.gate.set()
        with self._lock:
            self.runs.clear()

    def run(self, job: Job) -> Execution:
        with self._lock:
            self.runs.append(job.source)
        if not self.gate.wait(timeout=60):
            raise RuntimeError("the test never opened the gate")
        # In this process a submission shares torch's global RNG with the references that other
        # threads build (a catalog reload, another grading): one at a time, or seeded weights mix.
        with GLOBAL_RNG:
            return self._execute(job)

    def _execute(self, job: Job) -> Execution:
        namespace: dict[str, object] = {"__name__": "submission"}
        try:
            exec(compile(job.source, SUBMISSION_FILENAME, "exec"), namespace)
        except Exception as exc:
            error = describe_exception(exc)
            outcomes = {
                c.id: CallOutcome(call_id=c.id, outputs=None, error=error) for c in job.calls
            }
            return Execution(Termination.COMPLETED, outcomes)
        missing = missing_entry_point(job, namespace)
        if missing is not None:
            return Execution(Termination.REJECTED, {}, violations=(missing,))
        finished = run_calls(namespace, job)
        return Execution(Termination.COMPLETED, {outcome.call_id: outcome for outcome in finished})

    def layers(self) -> list[Layer]:
        return [Layer("none", False, "test sandbox: no isolation")]

    def close(self) -> None:
        self.gate.set()


def wait_until(condition: Callable[[], bool], timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"still false after {timeout_s} s: {condition}")
        time.sleep(0.02)


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    """A webhook receiver on 127.0.0.1 that answers with the next status of `statuses` (and
    `Location: location` when one is given), once `hold` is set."""

    url: str
    requests: list[Received] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)
    port: int = 0


@contextmanager
def webhook_receiver(
    statuses: list[int] | None = None,
    *,
    location: str | None = None,
    hold: threading.Event | None = None,
) -> Iterator[Receiver]:
    receiver = Receiver(url="", statuses=list(statuses or []))
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with lock:
                receiver.requests.append(Received(dict(self.headers.items()), body))
                status = receiver.statuses.pop(0) if receiver.statuses else 200
            if hold is not None:
                hold.wait(timeout=60)
            self.send_response(status)
            if location is not None:
                self.send_header("Location", location)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver.port = server.server_address[1]
    receiver.url = f"http://127.0.0.1:{receiver.port}/hook"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        if hold is not None:
            hold.set()
        server.shutdown()
        server.server_close()


def keep_traffic_local(
    monkeypatch: pytest.MonkeyPatch, answer: Callable[[str], str | None]
) -> list[str]:
    """Let no packet leave this machine, whatever the service under test does: a host name
    resolves to `answer(name)` (None: it does not resolve) and no DNS server is asked, and a
    connection to anything but loopback fails before a packet is sent. Returns the names
    looked up, in order."""
    looked_up: list[str] = []
    real_getaddrinfo, real_connect = socket.getaddrinfo, socket.socket.connect

    def getaddrinfo(host: str | bytes | None, *args: object, **kwargs: object) -> object:
        name = host.decode() if isinstance(host, bytes) else host
        if name is not None and not _is_address(name):
            looked_up.append(name)
            address = answer(name)
            if address is None:
                raise socket.gaierror(socket.EAI_NONAME, f"{name}: not known to this test")
            name = address
        return real_getaddrinfo(name, *args, **kwargs)  # type: ignore[arg-type]

    def connect(self: socket.socket, address: object) -> None:
        if self.family in (socket.AF_INET, socket.AF_INET6):
            host = address[0] if isinstance(address, tuple) else ""
            if not ipaddress.ip_address(host.split("%")[0]).is_loopback:
                raise ConnectionRefusedError(f"this test connects to loopback only, not {host}")
        real_connect(self, address)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", connect)
    return looked_up


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True
