"""The scale-out dispatcher's hand-over: the request that stored a submission does not wait for
the broker; the dispatcher's own thread sends in the order handed over, once however often a
submission is handed over while it waits, then leases what the broker took, together, and never
what it refused."""

from __future__ import annotations

import threading
import time
from typing import Any, cast

from app_support import wait_until

from app.scaleout.dispatcher import CeleryDispatcher

HELD_S = 5.0


class Broker:
    """Celery's `send_task`, held at the first send until `release`; refuses the ids in
    `refused`."""

    def __init__(self, refused: tuple[str, ...] = ()) -> None:
        self.attempted: list[str] = []
        self.sent: list[str] = []
        self.release = threading.Event()
        self.held = threading.Event()
        self._refused = refused

    def send_task(self, name: str, *, args: list[str], queue: str) -> None:
        (submission_id,) = args
        self.attempted.append(submission_id)
        if not self.held.is_set():
            self.held.set()
            self.release.wait(HELD_S)
        if submission_id in self._refused:
            raise ConnectionError("the broker refused it")
        self.sent.append(submission_id)


class Leases:
    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def dispatched(self, submission_ids: list[str], for_s: float) -> None:
        self.batches.append(list(submission_ids))


def dispatcher(broker: Broker, leases: Leases) -> CeleryDispatcher:
    return CeleryDispatcher(
        celery=cast(Any, broker),
        client=cast(Any, None),
        leases=cast(Any, leases),
        registry=cast(Any, None),
        lease_s=3600,
    )


def test_a_submission_is_handed_over_without_waiting_for_the_broker() -> None:
    broker, leases = Broker(), Leases()
    handing = dispatcher(broker, leases)
    handing.start()
    handing.submit("a")
    assert broker.held.wait(HELD_S)
    started = time.monotonic()
    for submission_id in ("b", "c", "b"):  # b handed over again (a sweeper) while it waits
        handing.submit(submission_id)
    assert time.monotonic() - started < HELD_S / 2  # while the broker holds the first send
    assert (broker.sent, leases.batches) == ([], [])
    broker.release.set()
    handing.close()
    assert broker.sent == ["a", "b", "c"]  # b once
    # What waited while the broker held the first send is leased in one transaction.
    assert leases.batches == [["a"], ["b", "c"]]


def test_what_the_broker_refused_is_not_leased_and_the_rest_is() -> None:
    broker, leases = Broker(refused=("b",)), Leases()
    broker.release.set()
    handing = dispatcher(broker, leases)
    handing.start()
    for submission_id in ("a", "b", "c"):
        handing.submit(submission_id)
    wait_until(lambda: [i for batch in leases.batches for i in batch] == ["a", "c"])
    handing.close()
    assert broker.sent == ["a", "c"]


def test_closing_stops_at_the_first_send_the_broker_fails() -> None:
    broker, leases = Broker(refused=("a", "b", "c")), Leases()
    handing = dispatcher(broker, leases)
    handing.start()
    for submission_id in ("a", "b", "c"):
        handing.submit(submission_id)
    assert broker.held.wait(HELD_S)
    closing = threading.Thread(target=handing.close)
    closing.start()
    wait_until(handing._closing.is_set)  # the held send fails after close began
    broker.release.set()
    closing.join(HELD_S)
    assert not closing.is_alive()
    assert (broker.attempted, leases.batches) == (["a"], [])  # b and c wait for the sweeper


def test_closing_sends_what_was_handed_over_before_it() -> None:
    broker, leases = Broker(), Leases()
    broker.release.set()
    handing = dispatcher(broker, leases)
    for submission_id in ("a", "b"):  # before the thread starts: kept, in order
        handing.submit(submission_id)
    handing.start()
    handing.close()
    assert broker.sent == ["a", "b"]
    assert [i for batch in leases.batches for i in batch] == ["a", "b"]
