"""`autograder keys create|list|revoke` (declared in `app.cli`): the API keys of each course.

autograder keys create --course C --role admin|instructor|submitter --name N
    makes the key (and the course, if new); the key is printed alone on the last line
autograder keys list
    every key: prefix, course, role, name, created, revoked
autograder keys revoke PREFIX
    revokes the one live key whose prefix starts with PREFIX
"""

from __future__ import annotations

import argparse
import sys

from app.access.api_keys import create_key, list_keys, revoke_key
from app.core.commands import moment, print_table
from app.core.db import command_session
from app.core.models import Role
from app.core.settings import get_settings
from grader.cli_output import EXIT_OK
from grader.settings import GraderSettings


def create(args: argparse.Namespace, _engine: GraderSettings) -> int:
    with command_session(get_settings().sqlalchemy_url()) as session:
        row, key = create_key(session, args.name, course=args.course, role=Role(args.role))
        key_id = row.id
    print(
        f"API key {key_id} ({args.name!r}), {args.role} of course {args.course!r}: shown once, "
        "stored hashed. Send it as `Authorization: Bearer <key>` or `X-API-Key: <key>`.",
        file=sys.stderr,
    )
    print(key)
    return EXIT_OK


def list_all(_args: argparse.Namespace, _engine: GraderSettings) -> int:
    with command_session(get_settings().sqlalchemy_url()) as session:
        keys = [
            (
                key.prefix,
                course,
                key.role.value,
                key.name,
                moment(key.created_at),
                moment(key.revoked_at),
            )
            for key, course in list_keys(session)
        ]
    print_table(("prefix", "course", "role", "name", "created", "revoked"), keys)
    return EXIT_OK


def revoke(args: argparse.Namespace, _engine: GraderSettings) -> int:
    with command_session(get_settings().sqlalchemy_url()) as session:
        row = revoke_key(session, args.prefix)
        prefix, name = row.prefix, row.name
    print(f"revoked {prefix} ({name!r})")
    return EXIT_OK
