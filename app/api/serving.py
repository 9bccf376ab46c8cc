"""How `autograder serve` listens: the socket is bound before anything starts, and one plain
line says where to open the service once it answers.

Binding first turns a port in use into one line and exit 2 before the database, the sandboxes
and the event loop exist; uvicorn, left to bind it itself, failed only after the whole start-up
(migrations, warm sandboxes), said so in a JSON log line, and the process then aborted on its way
out (exit 134, "terminate called without an active exception").
"""

from __future__ import annotations

import errno
import socket

import uvicorn
from fastapi import FastAPI

from app.core.commands import CommandRefused
from app.core.settings import url_address

_WHAT_TO_DO = {
    errno.EADDRINUSE: "is in use by another process: stop it, or choose another port "
    "(`autograder serve --port 8001`, or AUTOGRADER_PORT=8001)",
    errno.EACCES: "may not be listened on by this user: ports below 1024 need privileges; "
    "choose another port (`autograder serve --port 8001`, or AUTOGRADER_PORT=8001)",
    errno.EADDRNOTAVAIL: "names an address this machine does not have: choose another host "
    "(`autograder serve --host 127.0.0.1`, or AUTOGRADER_HOST)",
}


def bind(host: str, port: int) -> socket.socket:
    """A socket bound to host:port, not yet listening (uvicorn listens once the app is ready,
    so a client is refused until then rather than left hanging); CommandRefused if it cannot."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        what = _WHAT_TO_DO.get(error.errno or 0, f"cannot be listened on ({error.strerror})")
        raise CommandRefused(f"{url_address(host, port)} {what}") from None
    return sock


class _AnnouncingServer(uvicorn.Server):
    """uvicorn's server, which prints where to open the service once it accepts connections."""

    def __init__(self, config: uvicorn.Config, host: str) -> None:
        super().__init__(config)
        self._host = host

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started and sockets:
            port = sockets[0].getsockname()[1]  # the one chosen, where --port 0 asked for any
            # Plain, on stdout, whatever the log format: the one line a person needs.
            print(f"open http://{url_address(self._host, port)}/exercises", flush=True)


def run(app: FastAPI, sock: socket.socket, host: str, proxies: list[str]) -> bool:
    """Serves on `sock` until stopped; False if the service never started."""
    config = uvicorn.Config(
        app,
        log_config=None,
        # Their C event loop and HTTP parser (pyproject.toml says why), never a silent fallback.
        loop="uvloop",
        http="httptools",
        # Off unless proxies are named: uvicorn would otherwise believe 127.0.0.1's headers.
        proxy_headers=bool(proxies),
        forwarded_allow_ips=proxies,
    )
    server = _AnnouncingServer(config, host)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
    return server.started
