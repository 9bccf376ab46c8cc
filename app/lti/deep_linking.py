"""Deep linking: an instructor picks an exercise from the published catalog (a draft is left out:
its students could not open the link until it is proven); the tool answers the platform
with a signed LtiDeepLinkingResponse holding one ltiResourceLink: the launch URL, the exercise's
slug as a custom parameter (it comes back in every launch of that link), a custom `due_at` that
the platform fills with the link's due date (app.lti.due_dates) and a line item, so the platform
makes a gradebook column that the scores go to.

The answer is a page that posts to the request's `deep_link_return_url`: only an https URL (http
on a loopback host, for a platform on the same machine) is followed, never `javascript:` or
`data:`, which would run in the tool's origin.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pylti1p3.deep_link import DeepLink
from pylti1p3.deep_link_resource import DeepLinkResource
from pylti1p3.lineitem import LineItem

from app.access.signed_tokens import InvalidToken
from app.api.api_process import ApiProcess
from app.lti.claims import DEPLOYMENT_CLAIM
from app.lti.due_dates import DUE_AT_VARIABLE
from app.lti.models import LtiPlatform
from app.lti.pages import LaunchRefused, Remedy
from app.lti.registrations import is_lms_url, to_registration
from app.lti.sessions import DeepLinkContext
from app.lti.tool_key import tool_key
from grader.errors import ExerciseDefinitionError, UnknownExerciseError

SETTINGS_CLAIM = "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"
# Scores are posted with the report's own maximum; platforms scale them to the column's.
LINE_ITEM_MAXIMUM = 100


@dataclass(frozen=True)
class Picker:
    """The catalog to choose from and the signed context each choice posts back."""

    slugs_and_titles: list[tuple[str, str]]
    context: str


@dataclass(frozen=True)
class Answer:
    return_url: str
    jwt: str


def picker(api: ApiProcess, platform: LtiPlatform, body: dict[str, Any]) -> Picker:
    settings = body.get(SETTINGS_CLAIM)
    if not isinstance(settings, dict) or not settings.get("deep_link_return_url"):
        raise LaunchRefused(
            "the deep-linking request has no deep_link_return_url", remedy=Remedy.ASK_INSTRUCTOR
        )
    if not is_lms_url(settings["deep_link_return_url"]):
        raise LaunchRefused(
            "the deep-linking request's deep_link_return_url is not an https URL (http only on "
            "loopback)",
            remedy=Remedy.ASK_INSTRUCTOR,
        )
    context = DeepLinkContext(platform.id, str(body.get(DEPLOYMENT_CLAIM, "")), settings)
    return Picker(
        [(exercise.spec.slug, exercise.spec.title) for exercise in api.catalog.published],
        context.sign(api.settings),
    )


def answer(api: ApiProcess, context_token: str, slug: str, launch_url: str) -> Answer:
    """The signed response that adds exercise `slug` to the instructor's course."""
    try:
        context = DeepLinkContext.verify(api.settings, context_token)
    except InvalidToken as error:
        raise LaunchRefused(
            f"the deep-linking choice is not valid any more ({error}); open the picker again"
        ) from None
    try:
        exercise = api.catalog.published.get(slug)
    except UnknownExerciseError:
        raise LaunchRefused(
            f"no exercise is called {slug!r}", 404, remedy=Remedy.ASK_INSTRUCTOR
        ) from None
    except ExerciseDefinitionError as error:
        raise LaunchRefused(str(error), 503, remedy=Remedy.ASK_INSTRUCTOR) from None
    with api.database.session() as session:
        platform = session.get(LtiPlatform, context.platform_id)
    if platform is None:
        raise LaunchRefused(
            "the deep-linking platform is not registered any more", remedy=Remedy.ASK_INSTRUCTOR
        )
    link = (
        DeepLinkResource()
        .set_url(launch_url)
        .set_title(exercise.spec.title)
        .set_custom_params({"exercise": slug, "due_at": DUE_AT_VARIABLE})
        .set_lineitem(
            LineItem()
            .set_score_maximum(LINE_ITEM_MAXIMUM)
            .set_label(exercise.spec.title)
            .set_resource_id(slug)
        )
    )
    registration = to_registration(platform, tool_key(api.database, api.settings))
    deep_link = DeepLink(registration, context.deployment_id, context.settings)  # type: ignore[arg-type]
    return Answer(context.settings["deep_link_return_url"], deep_link.get_response_jwt([link]))
