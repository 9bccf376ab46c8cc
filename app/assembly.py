"""How a process is put together from its settings: `build_api` and `build_worker`.

Each owns what it starts in an ExitStack and closes it last-started-first. The catalog is read
at start and followed after (app.grading.catalog_watch: a broken exercise is set apart, a changed
one served once checked) and, where the process grades, the grader is loaded and warmed once
(`load_grader`, app.grading.job.warm_up).

    an API process                            a worker (scale-out)
    database, metrics, waiters, outbox        database, metrics exporter, grader (warm before
                                                the first message), grade task
    embedded: grader, EmbeddedDispatcher,     heartbeat: its leases and its registry entry
      heartbeat; what the last run left       regrade runner
      unfinished is dispatched at start;
      regrade runner
    scale-out: CeleryDispatcher, rate
      limits in Redis, done listener
    catalog watch, sweeper                    catalog watch, sweeper

The integrations that follow a report (webhooks, LTI grade passback) are wired here, as hooks
of the grading job (and of a regrade that changed a score) and channels of the outbox:
app.grading.job and app.regrades know none of them.
"""

from __future__ import annotations

import logging
from contextlib import ExitStack
from dataclasses import dataclass

from celery import Celery

from app import starting
from app.api.api_process import ApiProcess
from app.core.db import Database
from app.core.metrics import Metrics
from app.core.ratelimit import Limiter, RateLimiter
from app.core.settings import AppSettings
from app.grading.catalog_watch import (
    CatalogHolder,
    FollowedCatalog,
    PreloadingGrader,
    log_changes,
)
from app.grading.dispatch import Dispatcher, EmbeddedDispatcher
from app.grading.job import GradingContext, OnDone, OnGraded, warm_up
from app.grading.leases import Held, Leases, process_name
from app.grading.waiters import Waiters, finished_among
from app.lti.passback import mark_graded, post_again
from app.outbox.webhooks import record_delivery, record_regraded
from app.regrades.runner import RegradeRunner, release_regrades
from app.regrades.store import OnRegraded
from app.scaleout.dispatcher import CeleryDispatcher
from app.scaleout.notify import DoneListener, DonePublisher
from app.scaleout.ratelimit import RedisRateLimiter
from app.scaleout.registry import WorkerInfo, WorkerRegistry
from app.scaleout.worker import consume, register_grade_task, serve_metrics
from grader.catalog import Catalog, catalog_fingerprint
from grader.plan_cache import PlanCache
from grader.runner import Grader
from grader.sandbox.process import WarmProcessSandbox

log = logging.getLogger(__name__)

# What follows a stored report, recorded in its transaction (app.outbox.sender sends it).
ON_GRADED: tuple[OnGraded, ...] = (record_delivery, mark_graded)
# What follows a score that a regrade changed (app.regrades.store).
ON_REGRADED: tuple[OnRegraded, ...] = (record_regraded, post_again)


def load_grader(settings: AppSettings, stack: ExitStack) -> PreloadingGrader:
    """The catalog and a Grader over the real sandbox: children of a warm process, one per slot,
    preloading what the exercises allow. A broken exercise is set apart, not fatal."""
    catalog = Catalog.scan(settings.exercises_dir)
    sandbox = WarmProcessSandbox(slots=settings.sandbox_slots, preload=catalog.allowed_imports())
    stack.callback(sandbox.close)
    secret = settings.master_secret()
    plans = PlanCache(settings.plan_cache_dir(), secret)  # a restart builds none again
    return PreloadingGrader(Grader(catalog, sandbox, secret, plans), sandbox)


def build_api(settings: AppSettings, *, grader: Grader | None = None) -> ApiProcess:
    """Connect and migrate the database, start the outbox and the dispatcher, resume unfinished
    work, start the sweeper. `grader` (tests) replaces the one this would load; with a broker
    it only lends its catalog, since the workers grade."""
    with ExitStack() as stack:
        seen = catalog_fingerprint(settings.exercises_dir)
        database = starting.open_database(settings, stack)
        leases = Leases(database, settings)
        metrics = Metrics()
        metrics.track_submissions(database)
        metrics.track_queue(leases.depth)
        waiters = Waiters(settings.wait_poll_s, finished_among(database))
        outbox = starting.start_outbox(settings, database, metrics, stack)

        def on_done(submission_id: str, outbox_due: bool) -> None:
            waiters.notify(submission_id)
            if outbox_due:
                outbox.wake()

        exercises: CatalogHolder
        if settings.broker_url:
            path = _scale_out_api(settings, leases, on_done, stack)
            scanned = grader.catalog if grader else Catalog.scan(settings.exercises_dir)
            exercises = FollowedCatalog(scanned)
            log_changes(Catalog([]), scanned)
        else:
            grader, exercises = _embedded_grader(settings, grader, stack)
            holder = process_name()
            context = _grading(settings, database, grader, holder, metrics, on_done)
            path = _embedded_api(context, leases, stack)
        starting.watch_exercises(settings, exercises, seen, stack)
        starting.start_sweeper(settings, leases, path.dispatcher, stack)
        api = ApiProcess(
            settings=settings,
            database=database,
            exercises=exercises,
            leases=leases,
            dispatcher=path.dispatcher,
            waiters=waiters,
            metrics=metrics,
            key_limiter=path.key_limiter,
            student_limiter=path.student_limiter,
            lti_login_limiter=path.lti_login_limiter,
            resources=stack.pop_all(),
        )
    return api


def _embedded_grader(
    settings: AppSettings, given: Grader | None, stack: ExitStack
) -> tuple[Grader, CatalogHolder]:
    """The grader of an embedded API, and what the catalog watch feeds; a given grader (tests:
    over a fake sandbox) is fed itself, with no warm process to preload anything."""
    if given is not None:
        return given, given
    loaded = load_grader(settings, stack)
    return loaded.grader, loaded


@dataclass(frozen=True)
class _Path:
    """What differs between the embedded and the scale-out API."""

    dispatcher: Dispatcher
    key_limiter: Limiter
    student_limiter: Limiter
    lti_login_limiter: Limiter


def _embedded_api(context: GradingContext, leases: Leases, stack: ExitStack) -> _Path:
    starting.start_heartbeat(context, stack)
    dispatcher = EmbeddedDispatcher(context)
    dispatcher.start()
    stack.callback(dispatcher.close)  # first of all: gradings in flight finish
    # This process is the only grader of its database: what the last one held died with it.
    unfinished = leases.release_all()
    if unfinished:
        log.warning("resuming %d unfinished submissions from the last run", len(unfinished))
    for submission_id in unfinished:
        dispatcher.submit(submission_id)
    release_regrades(context.database)
    starting.start(RegradeRunner(context, ON_REGRADED), stack)
    settings = context.settings
    return _Path(
        dispatcher,
        RateLimiter(settings.rate_limit_per_key),
        RateLimiter(settings.rate_limit_per_student),
        RateLimiter(settings.lti_login_rate_per_client),
    )


def _scale_out_api(
    settings: AppSettings, leases: Leases, on_done: OnDone, stack: ExitStack
) -> _Path:
    client = starting.redis_connection(settings, stack)
    starting.start(DoneListener(client, settings.redis_prefix, on_done), stack)
    prefix = settings.redis_prefix
    dispatcher = CeleryDispatcher.for_settings(
        settings, starting.celery_app(settings, stack), client, leases
    )
    starting.start(dispatcher, stack)
    return _Path(
        dispatcher,
        RedisRateLimiter(client, prefix, "key", settings.rate_limit_per_key),
        RedisRateLimiter(client, prefix, "student", settings.rate_limit_per_student),
        RedisRateLimiter(client, prefix, "lti-login", settings.lti_login_rate_per_client),
    )


@dataclass
class WorkerProcess:
    settings: AppSettings
    celery: Celery
    name: str
    resources: ExitStack

    def run(self) -> int:
        """Consume until Celery's shutdown, then close everything; returns the exit code."""
        with self.resources:
            return consume(self.settings, self.celery, self.name)


def build_worker(settings: AppSettings, *, name: str | None = None) -> WorkerProcess:
    """Migrate the database, load and warm the grader, register the grade task, start the
    heartbeat, the regrade runner and the sweeper; `WorkerProcess.run` then consumes until
    Celery's shutdown."""
    name = name or process_name()
    with ExitStack() as stack:
        seen = catalog_fingerprint(settings.exercises_dir)
        database = starting.open_database(settings, stack)
        loaded = load_grader(settings, stack)
        grader = loaded.grader
        warm_up(grader)
        starting.watch_exercises(settings, loaded, seen, stack)
        metrics = Metrics()
        serve_metrics(settings, metrics, stack)
        client = starting.redis_connection(settings, stack)
        celery = starting.celery_app(settings, stack)
        done = DonePublisher(client, settings.redis_prefix)
        context = _grading(settings, database, grader, name, metrics, done)
        register_grade_task(celery, context)
        registry = WorkerRegistry.for_settings(settings, client)
        info = WorkerInfo(name=name, slots=settings.sandbox_slots, layers=grader.sandbox.layers())
        stack.callback(registry.withdraw, name)
        starting.start_heartbeat(context, stack, also=lambda: registry.announce(info))
        starting.start(RegradeRunner(context, ON_REGRADED), stack)
        leases = context.leases
        dispatcher = CeleryDispatcher.for_settings(settings, celery, client, leases)
        starting.start(dispatcher, stack)
        starting.start_sweeper(settings, leases, dispatcher, stack)
        log.info("worker %s ready: %d slots", name, settings.sandbox_slots)
        worker = WorkerProcess(settings, celery, name, stack.pop_all())
    return worker


def _grading(  # noqa: PLR0917 (what one grading needs, as this process has it)
    settings: AppSettings,
    database: Database,
    grader: Grader,
    holder: str,
    metrics: Metrics,
    on_done: OnDone,
) -> GradingContext:
    return GradingContext(settings, database, grader, holder, Held(), ON_GRADED, metrics, on_done)
