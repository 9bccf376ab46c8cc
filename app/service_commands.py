"""The handlers of `autograder serve`, `worker` and `submit` (declared in `app.cli`)."""

from __future__ import annotations

import argparse
import json
import logging
import sys

from app.api import serving
from app.assembly import build_worker
from app.core import logs
from app.core.settings import AppSettings, get_settings, url_address
from app.main import create_app
from app.scaleout.worker import yield_to_the_api
from grader.cli_output import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from grader.settings import GraderSettings

log = logging.getLogger("app.serve")
worker_log = logging.getLogger("app.worker")


def _app_settings(args: argparse.Namespace) -> AppSettings:
    updates = {
        name: value for name in ("host", "port") if (value := getattr(args, name, None)) is not None
    }
    return get_settings().model_copy(update=updates)


def serve(args: argparse.Namespace, _engine: GraderSettings) -> int:
    settings = _app_settings(args)
    logs.configure(settings.log_level, settings.log_format)
    if settings.require_api_keys is False and not settings.may_run_open():
        print(
            "autograder: refusing to run without API keys on a non-loopback address or behind a "
            "trusted proxy (unset AUTOGRADER_REQUIRE_API_KEYS)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    sock = serving.bind(settings.host, settings.port)
    if settings.api_keys_required():
        log.info("API keys required (create one with `autograder keys create`)")
    else:
        log.warning(
            "running OPEN, without API keys: listening on loopback (%s) only", settings.host
        )
    log.info(
        "starting on http://%s, database %s, grading %s",
        url_address(settings.host, sock.getsockname()[1]),
        settings.sqlalchemy_url().split("://", 1)[0],
        "through the broker"
        if settings.broker_url
        else f"in-process, {settings.sandbox_slots} slots",
    )
    started = serving.run(create_app(settings), sock, settings.host, settings.proxies())
    return EXIT_OK if started else EXIT_FAILED


def worker(args: argparse.Namespace, _engine: GraderSettings) -> int:
    settings = get_settings()
    if args.slots is not None:
        settings = settings.model_copy(update={"sandbox_slots": args.slots})
    logs.configure(settings.log_level, settings.log_format)
    if not settings.broker_url:
        print(
            "autograder: a worker takes its jobs from a broker: set AUTOGRADER_BROKER_URL to a "
            "redis:// URL (and AUTOGRADER_DATABASE_URL to the API's database)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if args.slots is not None and not 1 <= args.slots <= 64:
        print("autograder: --slots must be between 1 and 64", file=sys.stderr)
        return EXIT_USAGE
    if settings.database_url is None:
        worker_log.warning(
            "AUTOGRADER_DATABASE_URL is unset: grading into the SQLite file in %s, which only "
            "an API on this machine with the same data dir sees",
            settings.data_dir,
        )
    worker_log.info(
        "worker starting: broker %s, database %s, %d slots",
        settings.broker_url.split("://", 1)[0],
        settings.sqlalchemy_url().split("://", 1)[0],
        settings.sandbox_slots,
    )
    yield_to_the_api()  # before the warm process starts, which inherits it
    return build_worker(settings, name=args.name).run()


def submit(args: argparse.Namespace, _engine: GraderSettings) -> int:
    """The API key comes from AUTOGRADER_API_KEY only: a key on the command line is kept in
    shell history."""
    # Imported here: the client is its own distribution (client/), installed by `make install`
    # but not in the service's image, which must start without it.
    try:
        from autograder_client import Client, SubmissionError  # noqa: PLC0415
    except ImportError:
        print("autograder: `submit` needs the client: pip install ./client", file=sys.stderr)
        return EXIT_USAGE
    try:
        with Client(args.url) as client:
            result = client.submit(args.slug, args.file)
    except SubmissionError as error:
        print(f"autograder: {error}", file=sys.stderr)
        return EXIT_USAGE
    print(json.dumps(result.submission, indent=2) if args.json else result, end="\n")
    return EXIT_OK if result.passed else EXIT_FAILED
