"""What an API process and a worker both start, each closed by the ExitStack that owns it
(app.assembly puts them together): the database, the outbox sender, the catalog watch, the
sweeper, the heartbeat, the Redis and Celery clients."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from typing import Protocol

import httpx
import redis
from celery import Celery

from app.core.db import Database
from app.core.metrics import Metrics
from app.core.periodic import Periodic
from app.core.settings import AppSettings
from app.grading.catalog_watch import CatalogHolder, CatalogWatch
from app.grading.dispatch import Dispatcher
from app.grading.job import GradingContext
from app.grading.leases import Leases, renew_held
from app.grading.sweeper import Sweeper
from app.lti.passback import score_channel
from app.lti.roster import roster_channel
from app.outbox.sender import OutboxSender
from app.outbox.webhooks import webhook_channel
from app.scaleout.broker import make_celery, redis_client


class Background(Protocol):
    def start(self) -> None: ...
    def close(self) -> None: ...


def start(thing: Background, stack: ExitStack) -> None:
    thing.start()
    stack.callback(thing.close)


def start_heartbeat(
    context: GradingContext, stack: ExitStack, also: Callable[[], None] = lambda: None
) -> None:
    """Renews this process's leases, on the submissions it grades and the regrade it runs,
    every third of a lease (so one survives two lost beats), and does `also` (a worker
    announces itself)."""
    settings = context.settings

    def beat() -> None:
        renew_held(context.database, context.held, context.holder, settings.worker_lease_s)
        also()

    start(Periodic("heartbeat", settings.worker_lease_s / 3, beat), stack)


def open_database(settings: AppSettings, stack: ExitStack) -> Database:
    database = Database.from_url(settings.sqlalchemy_url(), settings.database_timeouts())
    stack.callback(database.close)
    database.migrate()
    return database


def start_outbox(
    settings: AppSettings, database: Database, metrics: Metrics, stack: ExitStack
) -> OutboxSender:
    # No connection is kept alive: webhooks and roster reads connect to an address, not a name
    # (app.core.callback_urls.pinned), so a kept connection, verified by TLS for one name, would
    # be reused for another name on the same address.
    http = stack.enter_context(httpx.Client(limits=httpx.Limits(max_keepalive_connections=0)))
    channels = [
        webhook_channel(database, settings, http, metrics),
        score_channel(database, settings),
        roster_channel(database, settings, http),
    ]
    outbox = OutboxSender(database, channels, poll_s=settings.outbox_poll_s)
    start(outbox, stack)
    return outbox


def watch_exercises(
    settings: AppSettings, holder: CatalogHolder, seen: str, stack: ExitStack
) -> None:
    watch = CatalogWatch(settings.exercises_dir, holder, seen)
    start(Periodic("catalog watch", settings.catalog_poll_s, watch.check), stack)


def start_sweeper(
    settings: AppSettings, leases: Leases, dispatcher: Dispatcher, stack: ExitStack
) -> None:
    start(Sweeper(leases, dispatcher.submit, period_s=settings.sweep_interval_s), stack)


def redis_connection(settings: AppSettings, stack: ExitStack) -> redis.Redis:
    client = redis_client(settings)
    stack.callback(client.close)
    return client


def celery_app(settings: AppSettings, stack: ExitStack) -> Celery:
    celery = make_celery(settings)
    stack.callback(celery.close)
    return celery
