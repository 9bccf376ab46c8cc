"""Helpers of the scale-out tests: a namespace of their own on the local Redis.

Redis at 127.0.0.1:6379, database 9, every key under a prefix made for the test module and
deleted afterwards (the broker's queues included: the service puts its whole keyspace under
AUTOGRADER_REDIS_PREFIX). Tests are skipped, saying why, only when no Redis answers there.
"""

from __future__ import annotations

import socket
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest
import redis

REDIS_SERVER = "127.0.0.1:6379"
REDIS_DB = 9


@dataclass(frozen=True)
class RedisNamespace:
    url: str
    prefix: str
    client: redis.Redis

    def stored_keys(self) -> list[str]:
        return sorted(k.decode() for k in self.client.scan_iter(match=f"{self.prefix}*"))


@contextmanager
def redis_namespace() -> Iterator[RedisNamespace]:
    url = f"redis://{REDIS_SERVER}/{REDIS_DB}"
    client = redis.Redis.from_url(url, socket_connect_timeout=3, socket_timeout=10)
    try:
        client.ping()
    except redis.RedisError as error:
        client.close()
        pytest.skip(f"no Redis server answers at {REDIS_SERVER}: {error}")
    namespace = RedisNamespace(url, f"test-{uuid.uuid4().hex[:10]}:", client)
    try:
        yield namespace
    finally:
        keys = list(client.scan_iter(match=f"{namespace.prefix}*"))
        if keys:
            client.delete(*keys)
        client.close()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port
