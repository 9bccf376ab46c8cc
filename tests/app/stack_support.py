"""A scale-out deployment as processes: `autograder serve` and `autograder worker`s on the local
Redis and PostgreSQL, their logs in files, every process killed at the end whatever happened."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

import httpx
from scaleout_support import RedisNamespace, free_port

AUTOGRADER = str(Path(sys.executable).with_name("autograder"))


def stack_env(
    data_dir: Path, redis_ns: RedisNamespace, database_url: str, **overrides: str
) -> dict[str, str]:
    """The environment every process of one deployment shares."""
    return {
        **os.environ,
        "AUTOGRADER_DATA_DIR": str(data_dir),
        "AUTOGRADER_SECRET": "scale-out",
        "AUTOGRADER_DATABASE_URL": database_url,
        "AUTOGRADER_BROKER_URL": redis_ns.url,
        "AUTOGRADER_REDIS_PREFIX": redis_ns.prefix,
        "AUTOGRADER_SANDBOX_SLOTS": "1",
        "AUTOGRADER_SWEEP_INTERVAL_S": "1",
        "AUTOGRADER_LOG_FORMAT": "json",
        **overrides,
    }


def wait_for(what: str, condition: Callable[[], bool], timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"after {timeout_s} s, still not: {what}")
        time.sleep(0.1)


class Stack:
    """The API and the workers of one deployment, as processes with their logs in `logs`."""

    def __init__(self, logs: Path, env: dict[str, str], redis: RedisNamespace) -> None:
        self.logs = logs
        self.env = env
        self.redis = redis
        self.api: subprocess.Popen[bytes] | None = None
        self.workers: dict[str, subprocess.Popen[bytes]] = {}
        self.metrics_ports: dict[str, int] = {}
        self.port = free_port()
        self.http = httpx.Client(base_url=f"http://127.0.0.1:{self.port}", timeout=90)
        self._started = 0

    def _spawn(self, name: str, argv: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
        log = (self.logs / f"{name}.log").open("ab")
        try:
            return subprocess.Popen(
                [AUTOGRADER, *argv],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # so teardown can kill all it started
            )
        finally:
            log.close()

    def log_of(self, name: str) -> str:
        path = self.logs / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def start_api(self) -> None:
        assert self.api is None or self.api.poll() is not None
        self.api = self._spawn("api", ["serve", "--port", str(self.port)], self.env)

        def ready() -> bool:
            assert self.api is not None and self.api.poll() is None, self.log_of("api")
            try:
                return self.http.get("/readyz").status_code == 200
            except httpx.TransportError:
                return False

        wait_for("the API is ready", ready)

    def kill_api(self) -> None:
        assert self.api is not None
        self.api.send_signal(signal.SIGKILL)
        self.api.wait()

    def start_workers(self, count: int) -> list[str]:
        names = []
        for _ in range(count):
            self._started += 1
            name = f"w{self._started}"
            port = free_port()
            env = {**self.env, "AUTOGRADER_WORKER_METRICS_PORT": str(port)}
            self.workers[name] = self._spawn(name, ["worker", "--name", name], env)
            self.metrics_ports[name] = port
            names.append(name)
        for name in names:
            wait_for(f"worker {name} is ready", partial(self._announced, name), 120)
        return names

    def _announced(self, name: str) -> bool:
        process = self.workers[name]
        assert process.poll() is None, self.log_of(name)
        # Announced once warm, consuming a moment later: "ready." is Celery's own word.
        return bool(
            self.redis.client.exists(f"{self.redis.prefix}worker:{name}")
        ) and "ready." in self.log_of(name)

    def stop_worker(self, name: str, sig: signal.Signals = signal.SIGTERM) -> None:
        process = self.workers.pop(name)
        process.send_signal(sig)
        process.wait(timeout=60)

    def set_workers(self, count: int) -> None:
        for name in list(self.workers)[count:]:
            self.stop_worker(name)
        if len(self.workers) < count:
            self.start_workers(count - len(self.workers))

    def close(self) -> None:
        self.http.close()
        processes = [p for p in [self.api, *self.workers.values()] if p is not None]
        for process in processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


@contextmanager
def running_stack(
    logs: Path, env: dict[str, str], redis: RedisNamespace, *, workers: int
) -> Iterator[Stack]:
    """A deployment with its API and `workers` workers started; every process stopped after."""
    stack = Stack(logs, env, redis)
    try:
        stack.start_api()
        stack.start_workers(workers)
        yield stack
    finally:
        stack.close()
