"""`autograder`: the engine's commands (grade, exercises, doctor) plus the service's.

    autograder serve [--host H] [--port P]   run the HTTP service (embedded defaults)
    autograder keys create [--name N]        make an API key; printed once, stored hashed

The scale-out worker (`autograder worker`) registers in `add_service_commands`, like these.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

import uvicorn

from app import logs
from app.db import Database
from app.keys import create_key
from app.main import create_app
from app.services import ConfigurationError
from app.settings import AppSettings, get_settings
from grader import cli as engine_cli
from grader.settings import GraderSettings

log = logging.getLogger("app.serve")


def main(argv: Sequence[str] | None = None) -> int:
    parser, commands = engine_cli.build_parser()
    add_service_commands(commands)
    return engine_cli.main(argv, parser)


def add_service_commands(commands: engine_cli.Commands) -> None:
    serve = commands.add_parser("serve", help="run the HTTP service")
    serve.add_argument("--host", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port to listen on (default 8000)")
    serve.set_defaults(handler=_serve)

    keys = commands.add_parser("keys", help="manage API keys")
    key_commands = keys.add_subparsers(required=True, metavar="ACTION")
    create = key_commands.add_parser("create", help="make a key; it is printed once")
    create.add_argument("--name", default="default", help="who or what the key is for")
    create.set_defaults(handler=_keys_create)
    # `worker` (Celery on Redis, scale-out) goes here: a parser whose handler builds a
    # GradingContext (app.grading) over a ForkServerSandbox and runs the Celery worker.


def _app_settings(args: argparse.Namespace) -> AppSettings:
    updates = {
        name: value for name in ("host", "port") if (value := getattr(args, name, None)) is not None
    }
    return get_settings().model_copy(update=updates)


def _serve(args: argparse.Namespace, _engine: GraderSettings) -> int:
    settings = _app_settings(args)
    logs.configure(settings.log_level, settings.log_json)
    if not settings.listens_on_loopback() and settings.require_api_keys is False:
        print(
            "autograder: refusing to listen on a non-loopback address without API keys "
            "(unset AUTOGRADER_REQUIRE_API_KEYS)",
            file=sys.stderr,
        )
        return engine_cli.EXIT_USAGE
    if settings.api_keys_required():
        log.info("API keys required (create one with `autograder keys create`)")
    else:
        log.warning(
            "running OPEN, without API keys: listening on loopback (%s) only", settings.host
        )
    log.info(
        "serving on http://%s:%d, database %s, grading %s",
        settings.host,
        settings.port,
        settings.sqlalchemy_url().split("://", 1)[0],
        "through the broker"
        if settings.broker_url
        else f"in-process, {settings.sandbox_slots} slots",
    )
    try:
        app = create_app(settings)
        uvicorn.run(app, host=settings.host, port=settings.port, log_config=None)
    except ConfigurationError as error:
        print(f"autograder: {error}", file=sys.stderr)
        return engine_cli.EXIT_USAGE
    return engine_cli.EXIT_OK


def _keys_create(args: argparse.Namespace, _engine: GraderSettings) -> int:
    settings = get_settings()
    database = Database.from_url(settings.sqlalchemy_url())
    try:
        database.migrate()
        with database.session() as session:
            row, key = create_key(session, args.name)
            key_id = row.id
    finally:
        database.close()
    print(key)
    print(
        f"API key {key_id} ({args.name!r}): shown once, stored hashed. Send it as "
        "`Authorization: Bearer <key>` or `X-API-Key: <key>`.",
        file=sys.stderr,
    )
    return engine_cli.EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
