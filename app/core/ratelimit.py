"""Token buckets per API key and per student: a burst up to the per-minute rate, refilled evenly.

`RateLimiter` keeps them in this process's memory (the embedded default). With a broker
configured the service uses app.scaleout.ratelimit.RedisRateLimiter instead, the same buckets in
Redis, so the limit holds across API replicas; both are a `Limiter`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

# Past this many tracked names, buckets that have refilled completely are forgotten.
_PRUNE_AT = 10_000


@dataclass
class _Bucket:
    tokens: float
    updated: float


class Limiter(Protocol):
    per_minute: int

    def acquire(self, name: str) -> float | None:
        """Take one token for `name`: None when allowed, else the seconds until one is free."""
        ...


class RateLimiter:
    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_minute = per_minute
        self._clock = clock
        self._buckets: dict[str, _Bucket] = {}
        self._lock = threading.Lock()

    def acquire(self, name: str) -> float | None:
        """Take one token for `name`: None when allowed, else the seconds until one is free."""
        if self.per_minute <= 0:
            return None
        rate = self.per_minute / 60.0
        now = self._clock()
        with self._lock:
            bucket = self._buckets.get(name)
            if bucket is None:
                if len(self._buckets) >= _PRUNE_AT:
                    self._prune(now, rate)
                bucket = self._buckets[name] = _Bucket(float(self.per_minute), now)
            bucket.tokens = min(self.per_minute, bucket.tokens + (now - bucket.updated) * rate)
            bucket.updated = now
            if bucket.tokens >= 1.0:
                bucket.tokens -= 1.0
                return None
            return (1.0 - bucket.tokens) / rate

    def _prune(self, now: float, rate: float) -> None:
        full = [
            name
            for name, bucket in self._buckets.items()
            if bucket.tokens + (now - bucket.updated) * rate >= self.per_minute
        ]
        for name in full:
            del self._buckets[name]
