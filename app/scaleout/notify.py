"""Finished submissions, announced over Redis pub/sub: a worker publishes each id once its
report is stored, and every API replica wakes the ?wait=true requests waiting on it
(app.grading.waiters). Best effort by design: a waiter also re-reads the database every
`Waiters.poll_s`, so a lost announcement costs a fraction of a second, never a result."""

from __future__ import annotations

import json
import logging
import threading

import redis
from redis.client import PubSub

from app.grading.job import OnDone

log = logging.getLogger(__name__)


def channel(prefix: str) -> str:
    return f"{prefix}done"


class DonePublisher:
    """An app.grading.job.OnDone that announces over Redis."""

    def __init__(self, client: redis.Redis, prefix: str) -> None:
        self._client = client
        self._channel = channel(prefix)

    def __call__(self, submission_id: str, outbox_due: bool) -> None:
        message = json.dumps({"id": submission_id, "outbox_due": outbox_due})
        try:
            self._client.publish(self._channel, message)
        except redis.RedisError:
            log.warning("could not announce a finished submission; its waiters poll instead")


class DoneListener:
    """A thread that calls `notify(id, outbox_due)` for every announcement, reconnecting when
    Redis drops."""

    def __init__(self, client: redis.Redis, prefix: str, notify: OnDone) -> None:
        self._client = client
        self._channel = channel(prefix)
        self._notify = notify
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._run, name="done-listener", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self._closed.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._closed.is_set():
            try:
                self._listen()
            except redis.RedisError:
                log.warning("lost the finished-submissions channel; reconnecting")
                self._closed.wait(1.0)

    def _listen(self) -> None:
        pubsub: PubSub = self._client.pubsub(  # type: ignore[no-untyped-call, unused-ignore]  # untyped before redis 8
            ignore_subscribe_messages=True
        )
        with pubsub:
            pubsub.subscribe(self._channel)
            while not self._closed.is_set():
                message = pubsub.get_message(timeout=1.0)
                if message is not None and message["type"] == "message":
                    done = json.loads(message["data"])
                    self._notify(str(done["id"]), bool(done["outbox_due"]))
