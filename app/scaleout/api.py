"""What an API process of the scale-out path holds, assembled for app.services: the dispatcher
that sends submissions to workers, the outbox that the sweeper sends webhooks through, the rate
limiters kept in Redis, and the listener that wakes ?wait=true requests when a worker is done."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from app.db import Database
from app.scaleout.broker import make_celery, redis_client
from app.scaleout.dispatcher import CeleryDispatcher
from app.scaleout.notify import DoneListener
from app.scaleout.outbox import Outbox
from app.scaleout.ratelimit import RedisRateLimiter
from app.scaleout.registry import WorkerRegistry
from app.scaleout.sweeper import Sweeper
from app.scaleout.tickets import Tickets
from app.settings import AppSettings


@dataclass(frozen=True)
class ScaleOut:
    dispatcher: CeleryDispatcher
    outbox: Outbox
    key_limiter: RedisRateLimiter
    student_limiter: RedisRateLimiter


def build_scale_out(
    settings: AppSettings,
    database: Database,
    closers: list[Callable[[], None]],
    *,
    on_done: Callable[[str], None],
) -> ScaleOut:
    """Starts the listener that calls `on_done(id)` for every submission a worker finishes;
    `closers` gets what must be closed at stop, in the order to close it last to first."""
    client = redis_client(settings)
    closers.append(client.close)
    listener = DoneListener(client, settings.redis_prefix, on_done)
    listener.start()
    closers.append(listener.close)
    celery = make_celery(settings)
    closers.append(celery.close)
    tickets = Tickets.for_settings(client, settings)
    outbox = Outbox(celery, tickets)
    sweeper = Sweeper(
        settings=settings,
        database=database,
        client=client,
        tickets=tickets,
        dispatch=outbox.grade,
        deliver=outbox.enqueue,
    )
    dispatcher = CeleryDispatcher(
        settings=settings,
        database=database,
        client=client,
        outbox=outbox,
        registry=WorkerRegistry(client, settings.redis_prefix, ttl_s=settings.worker_lease_s),
        sweeper=sweeper,
    )
    closers.append(dispatcher.close)
    prefix = settings.redis_prefix
    return ScaleOut(
        dispatcher=dispatcher,
        outbox=outbox,
        key_limiter=RedisRateLimiter(client, prefix, "key", settings.rate_limit_per_key),
        student_limiter=RedisRateLimiter(
            client, prefix, "student", settings.rate_limit_per_student
        ),
    )
