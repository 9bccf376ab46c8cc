"""Token buckets in Redis, shared by every API replica: the same buckets as app.core.ratelimit (a
burst up to the per-minute rate, refilled evenly), kept in one hash per name and updated by
one script, so concurrent replicas take tokens atomically. Redis's clock is the only clock.

If Redis cannot be reached the request is let through: the broker is then down too, and the
submission is still stored and bounded by admission (app.submissions.admission); refusing it
would add nothing.
"""

from __future__ import annotations

import hashlib
import logging

import redis

log = logging.getLogger(__name__)

# KEYS[1]: the bucket. ARGV[1]: tokens per minute (the burst). Returns the milliseconds until a
# token is free, "0" when one was taken. An idle bucket refills in a minute, so it expires then.
_TAKE = """
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local burst = tonumber(ARGV[1])
local per_ms = burst / 60000
local bucket = redis.call('HMGET', KEYS[1], 'tokens', 'updated')
local tokens = tonumber(bucket[1]) or burst
local updated = tonumber(bucket[2]) or now_ms
tokens = math.min(burst, tokens + math.max(0, now_ms - updated) * per_ms)
local wait_ms = 0
if tokens >= 1 then tokens = tokens - 1 else wait_ms = (1 - tokens) / per_ms end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'updated', tostring(now_ms))
redis.call('PEXPIRE', KEYS[1], 60000)
return tostring(wait_ms)
"""


class RedisRateLimiter:
    """app.core.ratelimit.Limiter over Redis; `kind` keeps the per-key and per-student buckets
    apart."""

    def __init__(self, client: redis.Redis, prefix: str, kind: str, per_minute: int) -> None:
        self.per_minute = per_minute
        self._prefix = f"{prefix}rate:{kind}:"
        self._take = client.register_script(_TAKE)

    def acquire(self, name: str) -> float | None:
        if self.per_minute <= 0:
            return None
        # Hashed: names carry student ids, which need not be readable in Redis.
        key = self._prefix + hashlib.sha256(name.encode()).hexdigest()[:32]
        try:
            wait_ms = float(self._take(keys=[key], args=[self.per_minute]))
        except redis.RedisError:
            log.warning("rate limit not checked: Redis is unreachable", exc_info=True)
            return None
        return wait_ms / 1000 if wait_ms > 0 else None
