"""`autograder`: the engine's commands (grade, exercises, doctor) plus the service's.

autograder serve [--host H] [--port P]   run the HTTP service (embedded defaults)
autograder worker [--slots N] [--name W] run a grading worker of the scale-out path: it
                                         takes jobs from AUTOGRADER_BROKER_URL (redis://)
                                         and grades into AUTOGRADER_DATABASE_URL
autograder keys create|list|revoke       API keys of each course, and their roles
                                         (app.access.key_commands)
autograder lti add-platform|platforms|contexts
                                         the LMSs (LTI 1.3) that may launch the tool, and
                                         the LMS courses bound to ours (app.lti.commands)
autograder students link|links|revoke    student links, for a course without an LMS
                                         (app.access.student_commands)
autograder submit SLUG FILE [--url U]    grade FILE on a running service (the notebook client's
                                         path; exit codes as `grade`)
autograder demo-course SLUG [--students N]
                                         a new course with a demo class's submissions, to try
                                         the course dashboard on (app.demo.commands)
autograder export-mistake COURSE EXERCISE CODE [--into FOLDER]
                                         a mistake the course named, into the exercise's
                                         mistakes/ as a variant (app.staff.export_mistake)

Declared here, run by the modules their handlers name, imported only when a command runs
(`grader.cli` says why): the service, its database and torch stay out of `--help`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from app.core.commands import CommandRefused
from grader import cli as engine_cli
from grader.cli_output import EXIT_USAGE

# `keys create --role`'s choices, as `app.core.models.Role` spells them: naming them here keeps the
# database's modules out of `--help`.
ROLES = ("admin", "instructor", "submitter")
# `lti add-platform --contexts`'s choices, as `app.lti.models.ContextPolicy` spells them.
CONTEXT_POLICIES = ("bound", "own")


def main(argv: Sequence[str] | None = None) -> int:
    parser, commands = engine_cli.build_parser()
    add_service_commands(commands)
    try:
        return engine_cli.main(argv, parser)
    except CommandRefused as error:
        print(f"autograder: {error}", file=sys.stderr)
        return EXIT_USAGE
    except ValidationError as error:  # the environment's settings: one line each, no traceback
        for problem in error.errors():
            name = "AUTOGRADER_" + "_".join(str(part) for part in problem["loc"]).upper()
            reason = problem["msg"].removeprefix("Value error, ")
            print(f"autograder: {name}: {reason}", file=sys.stderr)
        return EXIT_USAGE


def add_service_commands(commands: engine_cli.Commands) -> None:
    serve = commands.add_parser("serve", help="run the HTTP service")
    serve.add_argument("--host", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port to listen on (default 8000)")
    serve.set_defaults(handler="app.service_commands:serve")

    _add_key_commands(commands)

    worker = commands.add_parser(
        "worker", help="run a grading worker (scale-out: needs AUTOGRADER_BROKER_URL)"
    )
    worker.add_argument(
        "--slots", type=int, help="submissions graded at once (default AUTOGRADER_SANDBOX_SLOTS)"
    )
    worker.add_argument("--name", help="this worker's name (default autograder-PID@HOST)")
    worker.set_defaults(handler="app.service_commands:worker")

    _add_lti_commands(commands)
    _add_student_commands(commands)

    submit = commands.add_parser("submit", help="grade a file on a running service")
    submit.add_argument("slug", metavar="SLUG", help="the exercise")
    submit.add_argument("file", metavar="FILE", type=Path, help="the submission's Python source")
    submit.add_argument("--url", help="the service (default AUTOGRADER_URL, else 127.0.0.1:8000)")
    submit.add_argument("--json", action="store_true", help="print the submission as JSON")
    submit.set_defaults(handler="app.service_commands:submit")

    demo = commands.add_parser(
        "demo-course", help="make a course with a demo class's submissions (for trying it out)"
    )
    demo.add_argument("slug", metavar="SLUG", help="the course to make; it must have none yet")
    demo.add_argument("--students", type=int, default=1000, help="the class's size (default 1000)")
    demo.add_argument(
        "--attempts", type=int, default=20, help="at most per student and exercise (default 20)"
    )
    demo.add_argument("--seed", type=int, default=0, help="the same seed, the same course")
    demo.set_defaults(handler="app.demo.commands:demo_course")

    export = commands.add_parser(
        "export-mistake", help="write a mistake a course named into its exercise's mistakes/"
    )
    export.add_argument("course", metavar="COURSE", help="the course that named it")
    export.add_argument("exercise", metavar="EXERCISE", help="the exercise's slug")
    export.add_argument("code", metavar="CODE", help="the mistake's code")
    export.add_argument("--into", type=Path, help="the exercise's folder (default: the catalog's)")
    export.set_defaults(handler="app.staff.export_mistake:export_mistake")


def _add_key_commands(commands: engine_cli.Commands) -> None:
    keys = commands.add_parser("keys", help="manage API keys")
    actions = keys.add_subparsers(required=True, metavar="ACTION")
    create = actions.add_parser("create", help="make a key; it is printed once")
    create.add_argument("--course", default="default", help="the course it belongs to")
    create.add_argument(
        "--role",
        choices=ROLES,
        default="admin",
        help="what it may do in its course (default admin)",
    )
    create.add_argument("--name", default="default", help="who or what the key is for")
    create.set_defaults(handler="app.access.key_commands:create")
    listing = actions.add_parser("list", help="every key, without the keys themselves")
    listing.set_defaults(handler="app.access.key_commands:list_all")
    revoke = actions.add_parser("revoke", help="revoke a key by its prefix (see `keys list`)")
    revoke.add_argument("prefix", metavar="PREFIX", help="the key's first characters")
    revoke.set_defaults(handler="app.access.key_commands:revoke")


def _add_lti_commands(commands: engine_cli.Commands) -> None:
    lti = commands.add_parser("lti", help="LTI 1.3: the LMS platforms that may launch the tool")
    actions = lti.add_subparsers(required=True, metavar="ACTION")
    add = actions.add_parser(
        "add-platform", help="register a platform, or update the one with this issuer and client"
    )
    add.add_argument("--issuer", required=True, help="the platform's issuer (`iss`)")
    add.add_argument("--client-id", required=True, help="the client id it gave the tool")
    add.add_argument(
        "--deployment-id", action="append", required=True, help="a deployment id (repeatable)"
    )
    add.add_argument("--auth-login-url", required=True, help="its OIDC authorization URL")
    add.add_argument("--auth-token-url", required=True, help="its OAuth2 token URL")
    add.add_argument("--key-set-url", required=True, help="its public keys (JWKS) URL")
    add.add_argument(
        "--course", default="default", help="the course `contexts bind` binds to by default"
    )
    add.add_argument(
        "--contexts",
        choices=CONTEXT_POLICIES,
        default="bound",
        help="a launch from an LMS course bound to none of ours: refused (bound, the default) "
        "or given a course of its own (own)",
    )
    add.set_defaults(handler="app.lti.commands:add")
    platforms = actions.add_parser("platforms", help="list or remove registrations")
    platform_actions = platforms.add_subparsers(required=True, metavar="ACTION")
    listing = platform_actions.add_parser("list", help="every registration")
    listing.set_defaults(handler="app.lti.commands:list_all")
    remove = platform_actions.add_parser("remove", help="forget a registration")
    remove.add_argument("platform_id", metavar="ID", type=int, help="its id (see `list`)")
    remove.set_defaults(handler="app.lti.commands:remove")
    _add_lti_context_commands(actions)


def _add_lti_context_commands(lti_actions: engine_cli.Commands) -> None:
    contexts = lti_actions.add_parser("contexts", help="the LMS courses (contexts) bound to ours")
    actions = contexts.add_subparsers(required=True, metavar="ACTION")
    listing = actions.add_parser("list", help="every LMS course seen or bound")
    listing.add_argument("--platform", type=int, help="this platform's only")
    listing.set_defaults(handler="app.lti.commands:list_contexts")
    bind = actions.add_parser("bind", help="bind an LMS course to a course")
    _lms_course_arguments(bind)
    bind.add_argument("--course", help="the course (default: the platform's)")
    bind.set_defaults(handler="app.lti.commands:bind")
    unbind = actions.add_parser("unbind", help="unbind an LMS course: its launches are refused")
    _lms_course_arguments(unbind)
    unbind.set_defaults(handler="app.lti.commands:unbind")


def _lms_course_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--platform", type=int, required=True, help="its platform's id")
    parser.add_argument("--context", required=True, help="its context id (see `list`)")
    parser.add_argument("--deployment", help="its deployment (default: the platform's only)")


def _add_student_commands(commands: engine_cli.Commands) -> None:
    students = commands.add_parser("students", help="links for students without an LMS")
    actions = students.add_subparsers(required=True, metavar="ACTION")
    link = actions.add_parser("link", help="mint a student's link to the exercise page")
    _student_arguments(link)
    link.add_argument("--expires", default="30d", help="its lifetime: 90m, 12h, 30d, 2w")
    link.add_argument(
        "--exercise",
        metavar="SLUG",
        help="the page opens on this exercise (default: the list of exercises); the link "
        "still lets the student into every exercise of the course",
    )
    link.set_defaults(handler="app.access.student_commands:link")
    listing = actions.add_parser("links", help="every link, without the tokens")
    listing.add_argument("--course", help="only this course's")
    listing.set_defaults(handler="app.access.student_commands:list_all")
    revoke = actions.add_parser("revoke", help="revoke every live link of a student")
    _student_arguments(revoke)
    revoke.set_defaults(handler="app.access.student_commands:revoke")


def _student_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--course", required=True, help="the course (see `keys list`)")
    parser.add_argument(
        "--student",
        required=True,
        help="the student's id in that course, taken in its normal form (case-folded, NFKC, "
        "trimmed); invisible and control characters are refused",
    )


if __name__ == "__main__":
    sys.exit(main())
