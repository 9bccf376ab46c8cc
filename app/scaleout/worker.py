"""`autograder worker`: one grading worker of the scale-out path.

One process: a Celery consumer whose thread pool (one thread per sandbox slot) runs the tasks
of app.scaleout.tasks over one GradingContext built here, once: a Grader over a
ForkServerSandbox with `sandbox_slots` slots, the database, and the outbox for webhooks.
Threads rather than Celery's prefork pool, because the isolation is the sandbox's own fork per
submission: a second layer of pool processes would buy nothing, and would cost a warm sandbox,
and a copy of every reference plan, per pool process.

Start-up migrates the database (an advisory lock serialises it with the API replicas), builds
every exercise's plan and starts the warm sandbox process before the first message is taken, so
no submission waits for torch's import or the references.

Stopping: SIGTERM (`docker stop`) is Celery's warm shutdown: gradings in flight finish and
reserved messages go back to the queue. SIGKILL, the OOM killer, a lost host: see
app.scaleout.broker (what the broker does) and app.scaleout.sweeper (what brings the work back
within `worker_lease_s`).

Metrics: grading latency (`autograder_grading_seconds`), reports by status and webhook outcomes
exist only in the process that grades, so each worker serves them itself at
    http://AUTOGRADER_WORKER_METRICS_HOST:AUTOGRADER_WORKER_METRICS_PORT/metrics
(127.0.0.1:9101 by default; 0.0.0.0 in a container, to be scraped per replica; port 0 turns the
exporter off). A worker is one process with one registry, so prometheus-client's multiprocess
mode is not needed. The API's /metrics keeps the deployment-wide gauges that are counted in the
database (submissions by status, queue depth).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable
from typing import Any

import httpx
from celery import Celery, signals
from prometheus_client import start_http_server

from app.db import Database
from app.grading import GradingContext
from app.metrics import Metrics
from app.scaleout.broker import GRADING_QUEUE, WEBHOOK_QUEUE, make_celery, redis_client
from app.scaleout.notify import DonePublisher
from app.scaleout.outbox import Outbox
from app.scaleout.registry import WorkerInfo, WorkerRegistry
from app.scaleout.sweeper import Sweeper
from app.scaleout.tasks import Held, register_tasks
from app.scaleout.tickets import Tickets
from app.services import SandboxFactory, Services, fork_server_sandbox
from app.settings import AppSettings
from grader.catalog import Catalog
from grader.runner import Grader

log = logging.getLogger(__name__)


def default_name() -> str:
    # Unique per process on a host, and per container across hosts (their pid is often 1).
    return f"autograder-{os.getpid()}@{socket.gethostname()}"


class Heartbeat:
    """Renews this worker's leases and its entry in the registry, every third of a lease."""

    def __init__(self, period_s: float, beat: Callable[[], None]) -> None:
        self._period_s = period_s
        self._beat = beat
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="heartbeat", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join(timeout=5)

    def _loop(self) -> None:
        while True:
            try:
                self._beat()
            except Exception:  # Redis away: leases lapse, and the work is sent again; say so
                log.exception("renewing this worker's leases failed")
            if self._stopped.wait(self._period_s):
                return


def run_worker(
    settings: AppSettings,
    *,
    name: str | None = None,
    sandbox_factory: SandboxFactory = fork_server_sandbox,
) -> int:
    """Run until Celery's shutdown; returns the worker's exit code."""
    assert settings.broker_url is not None
    name = name or default_name()
    closers: list[Callable[[], None]] = []
    try:
        database = Database.from_url(settings.sqlalchemy_url())
        closers.append(database.close)
        database.migrate()
        grader = _warm_grader(settings, sandbox_factory, closers)
        metrics = Metrics()
        _serve_metrics(settings, metrics, closers)
        celery = make_celery(settings)
        client = redis_client(settings)
        closers.append(client.close)
        tickets = Tickets.for_settings(client, settings)
        outbox = Outbox(celery, tickets)
        http = httpx.Client()
        closers.append(http.close)
        context = GradingContext(
            settings=settings,
            database=database,
            grader=grader,
            webhooks=outbox,
            metrics=metrics,
            on_done=DonePublisher(client, settings.redis_prefix),
        )
        holder, held = Tickets.holder(name), Held()
        register_tasks(
            celery,
            context=context,
            tickets=tickets,
            holder=holder,
            held=held,
            outbox=outbox,
            client=http,
        )
        registry = WorkerRegistry(client, settings.redis_prefix, ttl_s=settings.worker_lease_s)
        info = WorkerInfo(name=name, slots=settings.sandbox_slots, layers=grader.sandbox.layers())

        def beat() -> None:
            tickets.renew(held.snapshot(), holder)
            registry.announce(info)

        heartbeat = Heartbeat(settings.worker_lease_s / 3, beat)
        heartbeat.start()
        closers.append(lambda: registry.withdraw(name))
        closers.append(heartbeat.stop)
        sweeper = Sweeper(
            settings=settings,
            database=database,
            client=client,
            tickets=tickets,
            dispatch=outbox.grade,
            deliver=outbox.enqueue,
        )
        sweeper.start()
        closers.append(sweeper.close)
        log.info("worker %s ready: %d slots", name, settings.sandbox_slots)
        return _consume(settings, celery, name)
    finally:
        Services.close_all(closers)


def _warm_grader(
    settings: AppSettings,
    sandbox_factory: SandboxFactory,
    closers: list[Callable[[], None]],
) -> Grader:
    sandbox = sandbox_factory(settings)
    closers.append(sandbox.close)
    grader = Grader(
        Catalog.from_folder(settings.exercises_dir), sandbox, settings.hidden_test_secret()
    )
    grader.warm()  # every exercise's plan: the references run once, now
    sandbox.layers()  # starts the warm process now
    return grader


def _serve_metrics(
    settings: AppSettings, metrics: Metrics, closers: list[Callable[[], None]]
) -> None:
    if not settings.worker_metrics_port:
        log.info("metrics exporter off (AUTOGRADER_WORKER_METRICS_PORT=0)")
        return
    try:
        server, _ = start_http_server(
            settings.worker_metrics_port, settings.worker_metrics_host, registry=metrics.registry
        )
    except OSError:
        # Grading matters more than its metrics: go on, loudly (a health check on the
        # exporter will say so too). Several workers on one host need a port each, or 0.
        log.exception(
            "no metrics exporter: %s:%d is not free (set AUTOGRADER_WORKER_METRICS_PORT)",
            settings.worker_metrics_host,
            settings.worker_metrics_port,
        )
        return
    closers.append(server.shutdown)
    log.info(
        "metrics on http://%s:%d/metrics",
        settings.worker_metrics_host,
        settings.worker_metrics_port,
    )


def _consume(settings: AppSettings, celery: Celery, name: str) -> int:
    """Celery's worker, in this thread, until its shutdown."""
    signals.setup_logging.connect(_keep_our_logging, weak=False)
    worker = celery.Worker(
        hostname=name,
        pool="threads",
        concurrency=settings.sandbox_slots,
        queues=[GRADING_QUEUE, WEBHOOK_QUEUE],
        loglevel=settings.log_level.upper(),
        quiet=True,
        without_mingle=True,
        without_gossip=True,
        without_heartbeat=True,
        optimization="fair",
    )
    worker.start()
    exitcode: int = worker.exitcode or 0
    return exitcode


def _keep_our_logging(**_: Any) -> None:
    """Connected to Celery's setup_logging signal: app.logs configured logging already."""
