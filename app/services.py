"""Everything a running service holds, built at start-up (never at import) and closed at stop.

`build_services` picks the path from the settings: the embedded pool (AUTOGRADER_BROKER_URL
unset) or scale-out (a redis:// broker: grading in `autograder worker`, see app.scaleout). It is
also where each does its restart recovery before the first request is served. Embedded: this
process was the only grader, so submissions left queued or running by the previous one are
dispatched again and pending webhook deliveries sent again. Scale-out: workers may be grading
right now, so only what nobody holds is sent again (app.scaleout.sweeper).
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
from app.ratelimit import Limiter, RateLimiter
from app.scaleout.api import build_scale_out
from app.scaleout.broker import is_redis_url
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
    """The real sandbox: warm forked processes, one per slot, preloading what exercises allow."""
    catalog = Catalog.from_folder(settings.exercises_dir)
    return ForkServerSandbox(slots=settings.sandbox_slots, preload=catalog.allowed_imports())


@dataclass
class Services:
    settings: AppSettings
    database: Database
    catalog: Catalog
    dispatcher: Dispatcher
    webhooks: WebhookQueue
    completions: Completions
    metrics: Metrics
    key_limiter: Limiter
    student_limiter: Limiter
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
    unfinished work. `grader` (tests) replaces the sandbox and grader this would make; with a
    broker it only lends its catalog, since the workers grade."""
    if settings.broker_url and not is_redis_url(settings.broker_url):
        raise ConfigurationError(
            "AUTOGRADER_BROKER_URL must be a Redis URL (redis://host:6379/0), or unset to "
            "grade in this process"
        )
    closers: list[Callable[[], None]] = []
    try:
        database = Database.from_url(settings.sqlalchemy_url())
        closers.append(database.close)
        database.migrate()
        metrics = Metrics()
        metrics.track_submissions(database)
        completions = Completions()
        if settings.broker_url:
            services = _scale_out(
                settings,
                database=database,
                metrics=metrics,
                completions=completions,
                grader=grader,
                closers=closers,
            )
        else:
            services = _embedded(
                settings,
                database=database,
                metrics=metrics,
                completions=completions,
                sandbox_factory=sandbox_factory,
                grader=grader,
                closers=closers,
            )
    except BaseException:
        Services.close_all(closers)
        raise
    return services


def _embedded(
    settings: AppSettings,
    *,
    database: Database,
    metrics: Metrics,
    completions: Completions,
    sandbox_factory: SandboxFactory,
    grader: Grader | None,
    closers: list[Callable[[], None]],
) -> Services:
    webhooks = WebhookSender(database, settings, metrics)
    closers.append(webhooks.close)
    if grader is None:
        sandbox = sandbox_factory(settings)
        closers.append(sandbox.close)
        grader = Grader(
            Catalog.from_folder(settings.exercises_dir), sandbox, settings.hidden_test_secret()
        )
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


def _scale_out(
    settings: AppSettings,
    *,
    database: Database,
    metrics: Metrics,
    completions: Completions,
    grader: Grader | None,
    closers: list[Callable[[], None]],
) -> Services:
    parts = build_scale_out(settings, database, closers, on_done=completions.notify)
    metrics.track_queue(parts.dispatcher.depth)
    parts.dispatcher.start()
    # Restart recovery: workers may be grading right now; only what nobody holds is resent.
    parts.dispatcher.resume(unfinished_submissions(database, reset_running=False))
    return Services(
        settings=settings,
        database=database,
        catalog=grader.catalog if grader else Catalog.from_folder(settings.exercises_dir),
        dispatcher=parts.dispatcher,
        webhooks=parts.outbox,
        completions=completions,
        metrics=metrics,
        key_limiter=parts.key_limiter,
        student_limiter=parts.student_limiter,
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
