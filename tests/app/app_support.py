"""Helpers for the service's tests: a sandbox that needs no fork, a webhook receiver, waiting."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from fastapi.testclient import TestClient

from app.settings import AppSettings
from grader.call_execution import (
    SUBMISSION_FILENAME,
    describe_exception,
    missing_entry_point,
    run_calls,
)
from grader.contract import CallOutcome, Execution, Job, Termination
from grader.sandbox.interface import Layer

ROOT = Path(__file__).resolve().parents[2]
CORRECT = (ROOT / "tests/submissions/multi-headed-self-attention/correct.py").read_text()
SEED = "multi-headed-self-attention"

SettingsFactory = Callable[..., AppSettings]  # make_settings(**overrides)
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
        finished = run_calls(namespace[job.entry_point], job)
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
    """A webhook receiver on 127.0.0.1 that answers with the next status of `statuses`."""

    url: str
    requests: list[Received] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)


@contextmanager
def webhook_receiver(statuses: list[int] | None = None) -> Iterator[Receiver]:
    receiver = Receiver(url="", statuses=list(statuses or []))
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with lock:
                receiver.requests.append(Received(dict(self.headers.items()), body))
                status = receiver.statuses.pop(0) if receiver.statuses else 200
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
