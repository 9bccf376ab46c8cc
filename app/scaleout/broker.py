"""The Celery app of the scale-out path, and the delivery guarantees it is configured for.

Celery is used as a transport only: a message carries a submission id, the work and its result
live in the database, and there is no result backend.

How a message survives a worker killed mid-grade (SIGKILL), with Redis as the broker:
- `task_acks_late`: the message is acknowledged after the task returns, not when it starts.
  Until then kombu keeps it in Redis's "unacked" set, and any worker's consumer puts it back on
  the queue once it is older than the broker's `visibility_timeout` (Redis has no connection-
  bound delivery as AMQP has: the timeout is the only thing that notices a dead consumer).
- `task_reject_on_worker_lost`: without it Celery acknowledges a task whose pool process died
  (by signal, or sys.exit), even with late acks; with it the message is requeued. The worker
  runs a thread pool, so a SIGKILL takes the whole worker and this never fires; it is set so
  that a change of pool cannot quietly turn a lost grading into an acknowledged one. The
  "message loop" Celery warns of is bounded by the database: every claim counts an attempt and
  past `max_attempts` the submission ends in an error report.
- `worker_prefetch_multiplier = 1`: a worker reserves one message per grading thread, so a
  busy worker does not sit on work an idle one could take, and a killed worker strands only
  the messages it was running.
- The visibility timeout (an hour by default) is far longer than any grading, so live work is
  never handed out twice; a killed worker's submissions come back long before it through their
  expired leases (app.grading.leases and app.grading.sweeper).
"""

from __future__ import annotations

from typing import Any

import redis
from celery import Celery

from app.core.settings import AppSettings

GRADE_TASK = "autograder.grade"
GRADING_QUEUE = "grading"

# How long one broker call (a connect, a publish, a command) waits on a broker that stopped
# answering: a wedged Redis, a half-open connection. Redis answers in a millisecond, so a
# second means it is not there. A request makes at most three such calls (two rate limits, the
# send) and a failed send is left to the sweeper, so a silent broker costs a request seconds,
# never a hang, and the requests it holds never starve the others of threads.
_TIMEOUT_S = 1.0


def make_celery(settings: AppSettings) -> Celery:
    """A Celery app for this deployment's broker; connects only when first used."""
    app = Celery("autograder", broker=settings.broker_url, set_as_current=False)
    transport: dict[str, Any] = {
        "visibility_timeout": settings.broker_visibility_timeout_s,
        # Every kombu key (queues, unacked set, bindings) under the deployment's prefix.
        "global_keyprefix": settings.redis_prefix,
        "socket_timeout": _TIMEOUT_S,
        "socket_connect_timeout": _TIMEOUT_S,
    }
    app.conf.update(
        broker_transport_options=transport,
        broker_connection_retry_on_startup=True,
        broker_connection_timeout=_TIMEOUT_S,
        # One try per send: a send that fails is logged, and the sweeper sends the stored
        # submission again once its lease expires (app.scaleout.dispatcher), so retrying here
        # would only hold the request.
        task_publish_retry=False,
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        # On a lost broker connection the late-acked tasks cannot be acknowledged any more and
        # come back through the visibility timeout; Celery 6's default, set now. (A grading
        # thread cannot be stopped; it finishes and stores its report, and the copy that comes
        # back finds the submission done.)
        worker_cancel_long_running_tasks_on_connection_loss=True,
        task_ignore_result=True,
        task_serializer="json",
        accept_content=["json"],
        task_default_queue=GRADING_QUEUE,
        # The service's own logging (JSON lines carrying the submission id) stays in charge.
        worker_hijack_root_logger=False,
        worker_redirect_stdouts=False,
        enable_utc=True,
    )
    return app


def redis_client(settings: AppSettings) -> redis.Redis:
    """A client of the broker's Redis for this service's own keys (workers, limits, done)."""
    assert settings.broker_url is not None
    return redis.Redis.from_url(
        settings.broker_url,
        socket_timeout=_TIMEOUT_S,
        socket_connect_timeout=_TIMEOUT_S,
        health_check_interval=30,
    )
