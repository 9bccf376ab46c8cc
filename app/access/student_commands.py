"""`autograder students link|links|revoke` (declared in `app.cli`): student links.

autograder students link --course C --student S [--expires 30d] [--exercise SLUG]
    mints a link (app.access.student_links) for the student's id in its normal form
    (app.core.student_ids) and prints the page's URL, alone on the last line; it is built from
    AUTOGRADER_PUBLIC_URL.
    --exercise only picks the page it opens on: the link lets the student into every exercise
autograder students links [--course C]
    every link: id, course, student, created, expires, revoked (never the tokens)
autograder students revoke --course C --student S
    revokes every live link of that student: their open pages stop working at the next call
"""

from __future__ import annotations

import argparse
import shlex
import sys

from app.access import student_links
from app.core.commands import moment, print_table
from app.core.db import command_session
from app.core.settings import get_settings
from grader.cli_output import EXIT_OK
from grader.settings import GraderSettings


def link(args: argparse.Namespace, engine: GraderSettings) -> int:
    settings = get_settings()
    lifetime = student_links.parse_lifetime(args.expires)
    if args.exercise is not None and not (engine.exercises_dir / args.exercise).is_dir():
        raise student_links.StudentLinkRefused(
            f"there is no exercise {args.exercise!r}; `autograder exercises` lists them"
        )
    base = student_links.public_base(settings)
    with command_session(settings.sqlalchemy_url()) as session:
        row, token = student_links.mint(
            session, settings, course=args.course, student=args.student, lifetime=lifetime
        )
        student, expires = row.student_id, row.expires_at.isoformat(timespec="minutes")
    revoke = f"autograder students revoke --course {args.course} --student {shlex.quote(student)}"
    print(
        f"Link for {student!r} of course {args.course!r}, valid until {expires}; "
        f"`{revoke}` ends it. Send it to the student alone: whoever has it submits as them.",
        file=sys.stderr,
    )
    print(student_links.page_url(base, token, args.exercise))
    return EXIT_OK


def list_all(args: argparse.Namespace, _engine: GraderSettings) -> int:
    with command_session(get_settings().sqlalchemy_url()) as session:
        links = [
            (
                link.id,
                course,
                link.student_id,
                *map(moment, (link.created_at, link.expires_at, link.revoked_at)),
            )
            for link, course in student_links.list_links(session, args.course)
        ]
    print_table(("id", "course", "student", "created", "expires", "revoked"), links)
    return EXIT_OK


def revoke(args: argparse.Namespace, _engine: GraderSettings) -> int:
    with command_session(get_settings().sqlalchemy_url()) as session:
        count = student_links.revoke(session, course=args.course, student=args.student)
    print(f"revoked {count} live link(s) of {args.student!r} in course {args.course!r}")
    return EXIT_OK
