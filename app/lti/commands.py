"""`autograder lti ...`: the LMS platforms that may launch the tool.

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
from grader import cli as engine_cli
from grader.cli_output import EXIT_OK
from grader.settings import GraderSettings


def add_lti_commands(commands: engine_cli.Commands) -> None:
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
        "--course", default="default", help="the course its students' submissions belong to"
    )
    add.set_defaults(handler=_add)
    platforms = actions.add_parser("platforms", help="list or remove registrations")
    platform_actions = platforms.add_subparsers(required=True, metavar="ACTION")
    platform_actions.add_parser("list", help="every registration").set_defaults(handler=_list)
    remove = platform_actions.add_parser("remove", help="forget a registration")
    remove.add_argument("platform_id", metavar="ID", type=int, help="its id (see `list`)")
    remove.set_defaults(handler=_remove)


def _add(args: argparse.Namespace, _engine: GraderSettings) -> int:
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


def _list(_args: argparse.Namespace, _engine: GraderSettings) -> int:
    with command_session(get_settings().sqlalchemy_url()) as session:
        rows = [
            (row.id, row.issuer, row.client_id, ",".join(row.deployment_ids))
            for row in list_platforms(session)
        ]
    print_table(("id", "issuer", "client", "deployments"), rows)
    return EXIT_OK


def _remove(args: argparse.Namespace, _engine: GraderSettings) -> int:
    with command_session(get_settings().sqlalchemy_url()) as session:
        row = remove_platform(session, args.platform_id)
        issuer = row.issuer
    print(f"removed platform {args.platform_id} ({issuer})")
    return EXIT_OK
