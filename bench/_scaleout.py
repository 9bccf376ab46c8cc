"""The service in compose's shape for a benchmark: the API and `autograder worker` processes on
the local Redis (a dedicated DB, a key prefix of the run's own) and PostgreSQL (a fresh
database, dropped after), loopback only."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager

import psycopg
import redis
from _common import Processes, Readiness, start_autograder, start_server, wait_ready
from psycopg import sql


@contextmanager
def postgres_database(server: str) -> Iterator[str]:
    """A fresh database on `server` (user@host:port) for one run, dropped after it."""
    name = f"autograder_bench_{os.getpid()}_{secrets.token_hex(4)}"
    admin_url = f"postgresql://{server}/postgres"
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield f"postgresql+psycopg://{server}/{name}"
    finally:
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


@contextmanager
def redis_namespace(server: str, db: int) -> Iterator[tuple[str, str]]:
    """The broker URL of a dedicated Redis DB and a key prefix of this run's own (others' tests
    may share the DB), and the run's keys deleted after it."""
    url = f"{server.rstrip('/')}/{db}"
    prefix = f"autograder-bench-{os.getpid()}-{secrets.token_hex(4)}:"
    client = redis.Redis.from_url(url)
    client.ping()
    try:
        yield url, prefix
    finally:
        for key in client.scan_iter(match=f"{prefix}*"):
            client.delete(key)
        client.close()


def loopback_only(*urls: str) -> None:
    for url in urls:
        if "127.0.0.1" not in url and "localhost" not in url:
            raise SystemExit(f"loopback only: {url}")


@contextmanager
def scaled_out(
    started: Processes,
    settings: Mapping[str, str],
    *,
    workers: int,
    postgres: str,
    redis_server: str,
    redis_db: int,
    lift_rate_limits: bool = True,
) -> Iterator[tuple[str, dict[str, str]]]:
    """The API and `workers` workers started and ready; the API's base URL, and the settings
    they were given beyond the embedded defaults (for a command on the same data)."""
    loopback_only(postgres, redis_server)
    with ExitStack() as stack:
        database_url = stack.enter_context(postgres_database(postgres))
        broker_url, prefix = stack.enter_context(redis_namespace(redis_server, redis_db))
        env = {
            **settings,
            "AUTOGRADER_DATABASE_URL": database_url,
            "AUTOGRADER_BROKER_URL": broker_url,
            "AUTOGRADER_REDIS_PREFIX": prefix,
            # Several workers on one host: their metrics exporters would fight over one port.
            "AUTOGRADER_WORKER_METRICS_PORT": "0",
        }
        # Stopped before the database is dropped and the keys deleted (the stack unwinds first).
        stack.callback(started.stop)
        base_url = start_server(started, env, lift_rate_limits=lift_rate_limits)
        for n in range(workers):
            start_autograder(
                started, f"worker-{n}", ["worker"], env, lift_rate_limits=lift_rate_limits
            )
        wait_ready(started, base_url, lambda readiness: workers_alive(readiness) >= workers)
        yield base_url, env


def workers_alive(readiness: Readiness) -> int:
    """From /readyz's "grading workers" check ("2 alive, 4 slots"): workers announce themselves
    once warm, so every one is ready to grade."""
    for check in readiness["checks"]:
        if check["name"] == "grading workers":
            return int(check["detail"].split()[0])
    return 0
