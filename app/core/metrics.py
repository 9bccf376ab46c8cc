"""Prometheus metrics: submissions by status, grading latency, queue depth, webhook outcomes.

Each app owns its registry (no process-global state, so tests may build several apps). The
submissions by status are counted in the database when scraped: the database is shared by API
replicas and workers, so every replica reports the same truth. One scrape at a time counts,
within a short limit; scrapes that come meanwhile get the last answer, so however many come
while a table is locked, one thread at most waits on it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from sqlalchemy import func, select

from app.core.db import Database
from app.core.models import Submission, SubmissionStatus

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
# The submissions' count may take this long; a scrape is worth less than a thread of the API.
_COUNT_LIMIT_S = 2.0


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.grading_seconds = Histogram(
            "autograder_grading_seconds",
            "Time from a grading's start to its stored report.",
            buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
            registry=self.registry,
        )
        self.reports = Counter(
            "autograder_reports_total",
            "Reports stored, by report status (passed, failed, rejected, error).",
            ["status"],
            registry=self.registry,
        )
        self.webhooks = Counter(
            "autograder_webhook_deliveries_total",
            "Webhook delivery attempts, by outcome.",
            ["outcome"],
            registry=self.registry,
        )
        self.queue_depth = Gauge(
            "autograder_queue_depth",
            "Submissions accepted and not yet finished: this process's pool, or with a broker"
            " the whole deployment's (counted in the database).",
            registry=self.registry,
        )
        self._rendering = threading.Lock()
        self._last: bytes | None = None

    def track_queue(self, depth: Callable[[float], int]) -> None:
        """`depth(limit_s)`: the queue's depth, counted within that many seconds."""
        self.queue_depth.set_function(lambda: float(depth(_COUNT_LIMIT_S)))

    def track_submissions(self, database: Database) -> None:
        self.registry.register(_SubmissionsByStatus(database))

    def render_alone(self) -> bytes | None:
        """A fresh rendering; while another is under way, the last one (None before the
        first)."""
        if not self._rendering.acquire(blocking=False):
            return self._last
        try:
            self._last = generate_latest(self.registry)
        finally:
            self._rendering.release()
        return self._last


class _SubmissionsByStatus(Collector):
    def __init__(self, database: Database) -> None:
        self._database = database

    def describe(self) -> list[GaugeMetricFamily]:
        return [self._family()]

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = self._family()
        with self._database.session(limit_s=_COUNT_LIMIT_S) as session:
            counts = dict(
                session.execute(
                    select(Submission.status, func.count()).group_by(Submission.status)
                ).all()
            )
        for status in SubmissionStatus:
            family.add_metric([status.value], float(counts.get(status, 0)))
        yield family

    @staticmethod
    def _family() -> GaugeMetricFamily:
        return GaugeMetricFamily(
            "autograder_submissions", "Stored submissions, by status.", labels=["status"]
        )
