"""Live workers, for /readyz: each worker announces itself (name, grading slots, the sandbox
layers it could apply) under {prefix}worker:{name}, renewed with its leases, so a worker that
died drops out within `worker_lease_s`."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

import redis

from app.core.settings import AppSettings
from grader.sandbox.interface import Layer


@dataclass(frozen=True)
class WorkerInfo:
    name: str
    slots: int
    layers: list[Layer]


class WorkerRegistry:
    def __init__(self, client: redis.Redis, prefix: str, *, ttl_s: float) -> None:
        self._client = client
        self._prefix = f"{prefix}worker:"
        self._ttl_ms = max(1, round(ttl_s * 1000))

    @classmethod
    def for_settings(cls, settings: AppSettings, client: redis.Redis) -> WorkerRegistry:
        """An entry lasts a lease: a worker that stops renewing drops out with its leases."""
        return cls(client, settings.redis_prefix, ttl_s=settings.worker_lease_s)

    def announce(self, info: WorkerInfo) -> None:
        body = json.dumps(
            {"name": info.name, "slots": info.slots, "layers": [asdict(x) for x in info.layers]}
        )
        self._client.set(self._prefix + info.name, body, px=self._ttl_ms)

    def withdraw(self, name: str) -> None:
        self._client.delete(self._prefix + name)

    def alive(self) -> list[WorkerInfo]:
        keys = sorted(self._client.scan_iter(match=self._prefix + "*", count=100))
        values = self._client.mget(keys) if keys else []
        workers = []
        for value in values:
            if value is None:  # lapsed between the scan and the read
                continue
            entry = json.loads(value)
            workers.append(
                WorkerInfo(
                    name=entry["name"],
                    slots=int(entry["slots"]),
                    layers=[Layer(**layer) for layer in entry["layers"]],
                )
            )
        return workers
