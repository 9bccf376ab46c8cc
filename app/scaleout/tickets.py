"""Tickets: who answers for an unfinished submission right now, kept in Redis.

    {prefix}ticket:{submission id} = "queued"          a message for it is in the broker
                                   = "worker:<name>"   that worker is grading it (a lease)
                                   (absent)            nobody: the sweeper dispatches it again

The dispatcher issues "queued" after it sends the message; it lasts as long as the broker's
visibility timeout, since by then the broker itself hands an unacknowledged message out again.
A worker turns the ticket into its lease before it grades, renews it every third of
`worker_lease_s` while it works and deletes it when done. A worker killed mid-grade stops
renewing: its lease lapses within `worker_lease_s`, and the sweeper sends the submission to
another worker well before the broker's visibility timeout would.

Only a worker's lease is exclusive: a second message for a submission that a live worker
grades is dropped (`hold` says no). Everything else is best effort, since the database's
conditional claim already keeps any submission from being graded twice at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import redis

from app.settings import AppSettings

QUEUED = "queued"
_WORKER = "worker:"

# Set "queued" unless a worker holds it (its lease stays the truth until it lapses).
_ISSUE = """
local held = redis.call('GET', KEYS[1])
if held and string.sub(held, 1, 7) == 'worker:' then return 0 end
redis.call('SET', KEYS[1], 'queued', 'PX', ARGV[1])
return 1
"""
# Take or renew a lease, unless another worker's lease is live.
_HOLD = """
local held = redis.call('GET', KEYS[1])
if held and held ~= ARGV[1] and string.sub(held, 1, 7) == 'worker:' then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class Tickets:
    def __init__(
        self, client: redis.Redis, prefix: str, *, queued_ttl_s: float, lease_s: float
    ) -> None:
        self._client = client
        self._prefix = f"{prefix}ticket:"
        self._queued_ttl_ms = max(1, round(queued_ttl_s * 1000))
        self._lease_ms = max(1, round(lease_s * 1000))
        self._issue = client.register_script(_ISSUE)
        self._hold = client.register_script(_HOLD)
        self._release = client.register_script(_RELEASE)

    @classmethod
    def for_settings(cls, client: redis.Redis, settings: AppSettings) -> Tickets:
        """The tickets every API replica and worker of one deployment shares: a queued ticket
        lives as long as the broker's visibility timeout, a lease for `worker_lease_s`."""
        return cls(
            client,
            settings.redis_prefix,
            queued_ttl_s=settings.broker_visibility_timeout_s,
            lease_s=settings.worker_lease_s,
        )

    def key(self, submission_id: str) -> str:
        return self._prefix + submission_id

    @staticmethod
    def holder(worker_name: str) -> str:
        return _WORKER + worker_name

    def issue(self, submission_id: str) -> None:
        """A message for it is in the broker now."""
        self._issue(keys=[self.key(submission_id)], args=[self._queued_ttl_ms])

    def hold(self, submission_id: str, holder: str) -> bool:
        """Take (or renew) the lease; False when another worker holds a live one."""
        return bool(self._hold(keys=[self.key(submission_id)], args=[holder, self._lease_ms]))

    def renew(self, submission_ids: Iterable[str], holder: str) -> None:
        for submission_id in submission_ids:
            self.hold(submission_id, holder)

    def release(self, submission_id: str, holder: str) -> None:
        self._release(keys=[self.key(submission_id)], args=[holder])

    def unheld(self, submission_ids: Sequence[str]) -> set[str]:
        """Those of these submissions that have no ticket at all."""
        if not submission_ids:
            return set()
        pipeline = self._client.pipeline(transaction=False)
        for submission_id in submission_ids:
            pipeline.exists(self.key(submission_id))
        found = pipeline.execute()
        return {sid for sid, exists in zip(submission_ids, found, strict=True) if not exists}
