"""Everything a running service holds, built at start-up (never at import) and closed at stop.

`build_services` is also where the embedded path does its restart recovery: submissions left
queued or running by the previous process are dispatched again, and webhook deliveries left
pending are sent again, before the first request is served.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from app.completions import Completions
from app.db import Database
from app.dispatch import Dispatcher, EmbeddedDispatcher
from app.grading import (
    GradingContext,
    WebhookQueue,
    pending_deliveries,
    unfinished_submissions,
)
from app.metrics import Metrics
from app.ratelimit import RateLimiter
from app.settings import AppSettings
from app.webhooks import WebhookSender
from grader.catalog import Catalog
from grader.runner import Grader
from grader.sandbox.interface import Sandbox
from grader.sandbox.process import ForkServerSandbox

log = logging.getLogger(__name__)

SandboxFactory = Callable[[AppSettings], Sandbox]


class ConfigurationError(Exception):
    """The settings ask for something this service cannot do; it refuses to start."""


def fork_server_sandbox(settings: AppSettings) -> Sandbox:
    """The real sandbox: warm forked processes, one per slot."""
    return ForkServerSandbox(slots=settings.sandbox_slots)


@dataclass
class Services:
    settings: AppSettings
    database: Database
    catalog: Catalog
    dispatcher: Dispatcher
    webhooks: WebhookSender
    completions: Completions
    metrics: Metrics
    key_limiter: RateLimiter
    student_limiter: RateLimiter
    _closers: list[Callable[[], None]] = field(default_factory=list)

    def close(self) -> None:
        self.close_all(self._closers)

    @staticmethod
    def close_all(closers: list[Callable[[], None]]) -> None:
        for closer in reversed(closers):
            try:
                closer()
            except Exception:
                log.exception("closing %r failed", closer)


def build_services(
    settings: AppSettings,
    *,
    sandbox_factory: SandboxFactory = fork_server_sandbox,
    grader: Grader | None = None,
) -> Services:
    """Connect and migrate the database, load the catalog, start grading and webhooks, resume
    unfinished work. `grader` (tests) replaces the sandbox and grader this would make."""
    if settings.broker_url:
        # The scale-out seam: here a Celery dispatcher (its `submit` sends a task; the task, in
        # `autograder worker`, calls app.grading.grade_submission with a context made by
        # grading_context()) takes the place of the embedded pool, and no sandbox is started.
        raise ConfigurationError(
            "AUTOGRADER_BROKER_URL is set, but this build grades only in its own pool: unset it"
        )
    closers: list[Callable[[], None]] = []
    try:
        database = Database.from_url(settings.sqlalchemy_url())
        closers.append(database.close)
        database.migrate()
        metrics = Metrics()
        metrics.track_submissions(database)
        webhooks = WebhookSender(database, settings, metrics)
        closers.append(webhooks.close)
        if grader is None:
            sandbox = sandbox_factory(settings)
            closers.append(sandbox.close)
            grader = Grader(
                Catalog.from_folder(settings.exercises_dir), sandbox, settings.hidden_test_secret()
            )
        completions = Completions()
        context = grading_context(
            settings, database, grader, webhooks, metrics, on_done=completions.notify
        )
        dispatcher = EmbeddedDispatcher(context)
        closers.append(dispatcher.close)  # closed first: its gradings may still send webhooks
        metrics.track_queue(dispatcher.depth)
        webhooks.start()
        dispatcher.start()
        # Restart recovery: this process is the only grader of the embedded database, so what
        # the last one left running died with it; everything unfinished is dispatched again.
        unfinished = unfinished_submissions(database, reset_running=True)
        if unfinished:
            log.warning("resuming %d unfinished submissions from the last run", len(unfinished))
        dispatcher.resume(unfinished)
        webhooks.resume(pending_deliveries(database))
    except BaseException:
        Services.close_all(closers)
        raise
    return Services(
        settings=settings,
        database=database,
        catalog=grader.catalog,
        dispatcher=dispatcher,
        webhooks=webhooks,
        completions=completions,
        metrics=metrics,
        key_limiter=RateLimiter(settings.rate_limit_per_key),
        student_limiter=RateLimiter(settings.rate_limit_per_student),
        _closers=closers,
    )


def grading_context(
    settings: AppSettings,
    database: Database,
    grader: Grader,
    webhooks: WebhookQueue,
    metrics: Metrics | None = None,
    *,
    on_done: Callable[[str], None] = lambda submission_id: None,
) -> GradingContext:
    """What `grade_submission` needs; the worker process builds its own with this."""
    return GradingContext(
        settings=settings,
        database=database,
        grader=grader,
        webhooks=webhooks,
        metrics=metrics,
        on_done=on_done,
    )
