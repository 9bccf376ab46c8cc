"""`autograder worker`: what a grading worker of the scale-out path runs (app.assembly builds it).

One process: a Celery consumer whose thread pool (one thread per sandbox slot) runs the grade
task over one GradingContext. Threads rather than Celery's prefork pool, because the isolation
is the sandbox's own fork per submission: a second layer of pool processes would buy nothing,
and would cost a warm sandbox, and a copy of every reference plan, per pool process.

Stopping: SIGTERM (`docker stop`) is Celery's warm shutdown: gradings in flight finish and
reserved messages go back to the queue. SIGKILL, the OOM killer, a lost host: see
app.scaleout.broker (what the broker does) and app.grading.sweeper (what brings the work back within
`worker_lease_s`).

Metrics: grading latency (`autograder_grading_seconds`) and reports by status exist only in the
process that grades, so each worker serves them itself at
    http://AUTOGRADER_WORKER_METRICS_HOST:AUTOGRADER_WORKER_METRICS_PORT/metrics
(127.0.0.1:9101 by default; 0.0.0.0 in a container, to be scraped per replica; port 0 turns the
exporter off). A worker is one process with one registry, so prometheus-client's multiprocess
mode is not needed. The API's /metrics keeps the deployment-wide gauges that are counted in the
database (submissions by status, queue depth) and the outbox's.
"""

from __future__ import annotations

import logging
import os
from contextlib import ExitStack
from typing import Any

from celery import Celery, Task, signals
from prometheus_client import start_http_server

from app.core.metrics import Metrics
from app.core.settings import AppSettings
from app.grading.job import GradingContext, grade_next
from app.scaleout.broker import GRADE_TASK, GRADING_QUEUE

log = logging.getLogger(__name__)

# A worker yields the CPU to the API wherever the two share a cgroup (one container or systemd
# unit for both, or a host's one session): at a deadline a POST is answered first, and grading
# takes what it leaves. Six steps make a busy worker weigh about a quarter of the API (272
# against 1024 in the kernel's table), as compose's `cpu_shares: 256` makes a worker's container;
# its warm process stays ten steps nicer than the worker. In a cgroup of the worker's own every
# one of its processes is shifted alike, so this changes nothing there. An idle API takes
# nothing, and the workers then have every core.
WORKER_NICENESS = 6


def yield_to_the_api() -> None:
    """Make this process, and what it starts from now on, WORKER_NICENESS steps nicer."""
    os.nice(WORKER_NICENESS)


# A hand-over that fails (the database gone for a moment) is sent again, every RETRY_S for about
# a minute: each accepted submission counts on one hand-over grading one submission in line, and
# a failed one is acknowledged all the same (late acks ack a failure), which would leave the
# line a submission longer than its hand-overs until the sweeper took it back when its dispatch
# lease ran out, an hour later. A hand-over sent once too often finds nothing queued: harmless.
RETRY_S = 5
RETRIES = 12


def register_grade_task(celery: Celery, context: GradingContext) -> None:
    """The one task: the grading job both paths share, on this worker's context; it grades the
    first submission in line, the one it names when none is queued."""

    def grade(task: Task[[str], None], submission_id: str) -> None:
        try:
            grade_next(submission_id, context)
        except Exception as error:
            log.exception("the hand-over failed; it is sent again in %d s", RETRY_S)
            raise task.retry(exc=error, countdown=RETRY_S, max_retries=RETRIES) from error

    # Not shared: Celery would register it, bound to this context, on every app made later too.
    celery.task(name=GRADE_TASK, shared=False, bind=True)(grade)


def serve_metrics(settings: AppSettings, metrics: Metrics, stack: ExitStack) -> None:
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
    stack.callback(server.shutdown)
    log.info(
        "metrics on http://%s:%d/metrics",
        settings.worker_metrics_host,
        settings.worker_metrics_port,
    )


def consume(settings: AppSettings, celery: Celery, name: str) -> int:
    """Celery's worker, in this thread, until its shutdown; returns its exit code."""
    signals.setup_logging.connect(_keep_our_logging, weak=False)
    worker = celery.Worker(
        hostname=name,
        pool="threads",
        concurrency=settings.sandbox_slots,
        queues=[GRADING_QUEUE],
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
    """Connected to Celery's setup_logging signal: app.core.logs configured logging already."""
