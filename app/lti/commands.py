"""`autograder lti ...` (declared in `app.cli`): the LMS platforms that may launch the tool.

    autograder lti add-platform --issuer ... --client-id ... --deployment-id ... \\
        --auth-login-url ... --auth-token-url ... --key-set-url ... [--course C]
        registers a platform, or updates the one with this issuer and client id; every URL
        must be https (http only on loopback)
    autograder lti platforms list        every registration
    autograder lti platforms remove ID   forgets one, with its launches
"""

from __future__ import annotations

import argparse

from app.commands import print_table
from app.db import command_session
from app.lti.registrations import (
    add_platform,
    list_platforms,
    remove_platform,
)
from app.settings import get_settings
from grader.cli_output import EXIT_OK
from grader.settings import GraderSettings


def add(args: argparse.Namespace, _engine: GraderSettings) -> int:
    with command_session(get_settings().sqlalchemy_url()) as session:
        row = add_platform(
            session,
            args.issuer,
            args.client_id,
            args.deployment_id,
            args.auth_login_url,
            args.auth_token_url,
            args.key_set_url,
            course=args.course,
        )
        platform_id, deployments = row.id, row.deployment_ids
    print(
        f"platform {platform_id}: {args.issuer} (client {args.client_id}), deployments "
        f"{', '.join(deployments)}"
    )
    return EXIT_OK


def list_all(_args: argparse.Namespace, _engine: GraderSettings) -> int:
    with command_session(get_settings().sqlalchemy_url()) as session:
        rows = [
            (row.id, row.issuer, row.client_id, ",".join(row.deployment_ids))
            for row in list_platforms(session)
        ]
    print_table(("id", "issuer", "client", "deployments"), rows)
    return EXIT_OK


def remove(args: argparse.Namespace, _engine: GraderSettings) -> int:
    with command_session(get_settings().sqlalchemy_url()) as session:
        row = remove_platform(session, args.platform_id)
        issuer = row.issuer
    print(f"removed platform {args.platform_id} ({issuer})")
    return EXIT_OK
