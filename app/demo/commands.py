"""`autograder demo-course SLUG [--students N] [--attempts N] [--seed N]` (declared in
`app.cli`): a course of its own, seeded with a demo class (app.demo.data), for an operator
to try the course dashboard and its API on before a real class uses them.

It prints the dashboard's URL with an instructor key of the course in its fragment (which the
browser never sends; the page takes it out of the address bar): the service's open mode is the
default course's staff, not this one's, so the bare URL would greet the operator with a 404.
"""

from __future__ import annotations

import argparse
import sys

from sqlalchemy import exists, select

from app.access.api_keys import create_key
from app.core.commands import CommandRefused
from app.core.db import Database
from app.core.models import Course, Role, Submission
from app.core.settings import get_settings
from app.courses.registry import COURSE_PATTERN
from app.demo.data import seed_course
from grader.catalog import Catalog
from grader.cli_output import EXIT_OK
from grader.settings import GraderSettings

_MAX_STUDENTS = 10_000
_MAX_ATTEMPTS = 100
_KEY_NAME = "demo-course dashboard"


def demo_course(args: argparse.Namespace, engine: GraderSettings) -> int:
    _check(args)
    settings = get_settings()
    database = Database.from_url(settings.sqlalchemy_url())
    try:
        database.migrate()
        _refuse_a_course_in_use(database, args.slug)
        catalog = Catalog.scan(engine.exercises_dir)
        written = seed_course(
            database,
            catalog,
            args.slug,
            students=args.students,
            attempts=args.attempts,
            seed=args.seed,
        )
        with database.session() as session:
            row, key = create_key(session, _KEY_NAME, course=args.slug, role=Role.INSTRUCTOR)
            prefix = row.prefix
    finally:
        database.close()
    print(
        f"course {args.slug!r}: {written} submissions of {args.students} students on "
        f"{len(catalog.slugs())} exercises. Open its dashboard at the URL below, with the "
        f"service running: it holds an instructor key of the course ({prefix}; "
        f"`autograder keys revoke {prefix}` ends it).",
        file=sys.stderr,
    )
    print(f"{settings.browser_url()}/courses/{args.slug}/dashboard#key={key}")
    return EXIT_OK


def _check(args: argparse.Namespace) -> None:
    if not COURSE_PATTERN.fullmatch(args.slug):
        raise CommandRefused(
            f"a course is named in lowercase letters, digits and '-', not {args.slug!r}"
        )
    if not 1 <= args.students <= _MAX_STUDENTS:
        raise CommandRefused(f"--students must be between 1 and {_MAX_STUDENTS}")
    if not 1 <= args.attempts <= _MAX_ATTEMPTS:
        raise CommandRefused(f"--attempts must be between 1 and {_MAX_ATTEMPTS}")


def _refuse_a_course_in_use(database: Database, slug: str) -> None:
    """Demo submissions never mix with a real course's."""
    with database.session() as session:
        used = session.scalar(
            select(exists().where(Submission.course_id == Course.id, Course.slug == slug))
        )
    if used:
        raise CommandRefused(f"course {slug!r} has submissions already; name a new course")
