"""Token buckets: a burst up to the rate, then one per 60/rate seconds."""

from __future__ import annotations

from app.core.ratelimit import RateLimiter


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_burst_up_to_the_rate_then_waits_for_refill() -> None:
    clock = Clock()
    limiter = RateLimiter(per_minute=3, clock=clock)
    assert [limiter.acquire("a") for _ in range(3)] == [None, None, None]
    wait = limiter.acquire("a")
    assert wait is not None and abs(wait - 20.0) < 1e-9
    assert limiter.acquire("b") is None  # buckets are per name
    clock.now = 19.9
    assert limiter.acquire("a") is not None
    clock.now = 20.001
    assert limiter.acquire("a") is None


def test_zero_turns_the_limit_off() -> None:
    limiter = RateLimiter(per_minute=0)
    assert all(limiter.acquire("a") is None for _ in range(1000))
