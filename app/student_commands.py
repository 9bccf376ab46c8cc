"""`autograder students link|links|revoke`: student links, for a course without an LMS.

autograder students link --course C --student S [--expires 30d] [--exercise SLUG]
    mints a link (app.student_links) and prints the page's URL, alone on the last line; it is
    built from AUTOGRADER_PUBLIC_URL
autograder students links [--course C]
    every link: id, course, student, created, expires, revoked (never the tokens)
autograder students revoke --course C --student S
    revokes every live link of that student: their open pages stop working at the next call
"""

from __future__ import annotations

import argparse
import shlex
import sys

from app import student_links
from app.commands import moment, print_table
from app.db import command_session
from app.settings import get_settings
from grader import cli as engine_cli
from grader.cli_output import EXIT_OK
from grader.settings import GraderSettings


def add_student_commands(commands: engine_cli.Commands) -> None:
    students = commands.add_parser("students", help="links for students without an LMS")
    actions = students.add_subparsers(required=True, metavar="ACTION")
    link = actions.add_parser("link", help="mint a student's link to the exercise page")
    _student_arguments(link)
    link.add_argument("--expires", default="30d", help="its lifetime: 90m, 12h, 30d, 2w")
    link.add_argument(
        "--exercise", metavar="SLUG", help="open this exercise (default: the list of exercises)"
    )
    link.set_defaults(handler=_link)
    listing = actions.add_parser("links", help="every link, without the tokens")
    listing.add_argument("--course", help="only this course's")
    listing.set_defaults(handler=_list)
    revoke = actions.add_parser("revoke", help="revoke every live link of a student")
    _student_arguments(revoke)
    revoke.set_defaults(handler=_revoke)


def _student_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--course", required=True, help="the course (see `keys list`)")
    parser.add_argument("--student", required=True, help="the student's id in that course")


def _link(args: argparse.Namespace, engine: GraderSettings) -> int:
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
        expires = row.expires_at.isoformat(timespec="minutes")
    revoke = (
        f"autograder students revoke --course {args.course} --student {shlex.quote(args.student)}"
    )
    print(
        f"Link for {args.student!r} of course {args.course!r}, valid until {expires}; "
        f"`{revoke}` ends it. Send it to the student alone: whoever has it submits as them.",
        file=sys.stderr,
    )
    print(student_links.page_url(base, token, args.exercise))
    return EXIT_OK


def _list(args: argparse.Namespace, _engine: GraderSettings) -> int:
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


def _revoke(args: argparse.Namespace, _engine: GraderSettings) -> int:
    with command_session(get_settings().sqlalchemy_url()) as session:
        count = student_links.revoke(session, course=args.course, student=args.student)
    print(f"revoked {count} live link(s) of {args.student!r} in course {args.course!r}")
    return EXIT_OK
