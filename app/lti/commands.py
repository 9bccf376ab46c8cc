"""`autograder lti ...` (declared in `app.cli`): the LMS platforms that may launch the tool, and
the LMS courses (contexts) bound to ours.

    autograder lti add-platform --issuer ... --client-id ... --deployment-id ... \\
        --auth-login-url ... --auth-token-url ... --key-set-url ... [--course C] \\
        [--contexts bound|own]
        registers a platform, or updates the one with this issuer and client id; every URL
        must be https (http only on loopback). `--contexts` says what a launch from an LMS
        course bound to none of ours gets: refused (bound, the default) or a course of its own
    autograder lti platforms list        every registration
    autograder lti platforms remove ID   forgets one, with its launches
    autograder lti contexts list [--platform ID]
        every LMS course seen or bound, and the platforms that bind none
    autograder lti contexts bind --platform ID --context CONTEXT [--deployment D] [--course C]
        binds an LMS course to C (default: the platform's course)
    autograder lti contexts unbind --platform ID --context CONTEXT [--deployment D]
"""

from __future__ import annotations

import argparse
import sys

from app.core.commands import moment, print_table
from app.core.db import command_session
from app.core.settings import get_settings
from app.lti import contexts
from app.lti.models import ContextPolicy
from app.lti.registrations import (
    add_platform,
    list_platforms,
    remove_platform,
)
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
            context_policy=ContextPolicy(args.contexts),
        )
        platform_id, deployments = row.id, row.deployment_ids
    print(
        f"platform {platform_id}: {args.issuer} (client {args.client_id}), deployments "
        f"{', '.join(deployments)}"
    )
    if args.contexts == ContextPolicy.BOUND:
        print(
            "its launches are refused until their LMS course is bound to a course: "
            "`autograder lti contexts list`, then `autograder lti contexts bind`"
        )
    return EXIT_OK


def list_all(_args: argparse.Namespace, _engine: GraderSettings) -> int:
    with command_session(get_settings().sqlalchemy_url()) as session:
        rows = [
            (row.id, row.issuer, row.client_id, ",".join(row.deployment_ids), row.context_policy)
            for row in list_platforms(session)
        ]
    print_table(("id", "issuer", "client", "deployments", "contexts"), rows)
    return EXIT_OK


def remove(args: argparse.Namespace, _engine: GraderSettings) -> int:
    with command_session(get_settings().sqlalchemy_url()) as session:
        row = remove_platform(session, args.platform_id)
        issuer = row.issuer
    print(f"removed platform {args.platform_id} ({issuer})")
    return EXIT_OK


def list_contexts(args: argparse.Namespace, _engine: GraderSettings) -> int:
    """The table on stdout; what needs the operator's hand, in words, on stderr."""
    with command_session(get_settings().sqlalchemy_url()) as session:
        rows = [
            (
                line.row.platform_id,
                line.row.deployment_id,
                line.row.context_id,
                line.row.title or "-",
                line.row.label or "-",
                line.course or "-",
                line.row.refused_launches,
                moment(line.row.last_seen_at),
            )
            for line in contexts.listing(session, args.platform)
        ]
        unbound = contexts.unbound_platforms(session)
    header = ("platform", "deployment", "context", "title", "label", "course", "refused", "seen")
    print_table(header, rows)
    for waiting in unbound:
        if args.platform in (None, waiting.platform.id):
            print(_unbound_note(waiting), file=sys.stderr)
    return EXIT_OK


def _unbound_note(waiting: contexts.Unbound) -> str:
    platform = waiting.platform
    note = (
        f"platform {platform.id} ({platform.issuer}) binds no LMS course: all its launches are "
        f"refused. Bind its course's context: autograder lti contexts bind --platform "
        f"{platform.id} --context CONTEXT (to the course {waiting.course!r})"
    )
    if waiting.earlier_launches:
        note += f"; it had {waiting.earlier_launches} launches before contexts were recorded" + (
            f", the latest to {waiting.last_lineitem_url}" if waiting.last_lineitem_url else ""
        )
    return note


def bind(args: argparse.Namespace, _engine: GraderSettings) -> int:
    with command_session(get_settings().sqlalchemy_url()) as session:
        row, course = contexts.bind(
            session,
            args.platform,
            args.context,
            deployment_id=args.deployment,
            course=args.course,
        )
        said = f"context {row.context_id!r} ({row.title or 'not launched yet'})"
        slug = course.slug
    print(f"bound {said} of platform {args.platform} to the course {slug!r}")
    return EXIT_OK


def unbind(args: argparse.Namespace, _engine: GraderSettings) -> int:
    with command_session(get_settings().sqlalchemy_url()) as session:
        row, course = contexts.unbind(
            session, args.platform, args.context, deployment_id=args.deployment
        )
        context_id, slug = row.context_id, course.slug
    print(
        f"unbound context {context_id!r} of platform {args.platform} from the course {slug!r}: "
        "its launches are refused; the course keeps its work"
    )
    return EXIT_OK
