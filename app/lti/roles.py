"""Whether a launch comes from the course's staff: its roles claim names an Instructor or a
Teaching Assistant. A roster member's roles (Names and Role Provisioning) read the same.

The claim is a list of LIS role URIs (LTI 1.3 § 5.3.7): context roles
(`.../membership#Instructor`, sub-roles as `.../membership/Instructor#TeachingAssistant`) say
what the user is in this course; institution roles (`.../institution/person#Instructor`) say
what the user is in the school. A context role decides; an institution role counts only when the
launch carries no context role, so a faculty member enrolled as a learner stays a learner.
Simple names (`Instructor`) are the deprecated form of context roles, and read as such.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

ROLES_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/roles"

_LIS = "http://purl.imsglobal.org/vocab/lis/v2/"
_CONTEXT = _LIS + "membership"
_INSTITUTION = _LIS + "institution/person#"
# Context roles whose holders see the whole course; a sub-role of Instructor is staff too.
_STAFF_CONTEXT_ROLES = frozenset({"Instructor", "TeachingAssistant"})
_STAFF_INSTITUTION_ROLES = frozenset({"Instructor"})


def _context_role(uri: str) -> str | None:
    """`membership#Instructor` → Instructor; `membership/Instructor#TeachingAssistant` →
    Instructor (the principal role of the sub-role); a simple name → itself; else None."""
    if uri.startswith(_CONTEXT + "#"):
        return uri.removeprefix(_CONTEXT + "#")
    if uri.startswith(_CONTEXT + "/"):
        return uri.removeprefix(_CONTEXT + "/").partition("#")[0]
    if ":" not in uri and "/" not in uri:
        return uri
    return None


def is_staff(body: Mapping[str, object]) -> bool:
    """Whether the launch's roles claim makes the user staff of the launching course."""
    claim = body.get(ROLES_CLAIM)
    uris = [role for role in claim if isinstance(role, str)] if isinstance(claim, list) else []
    return holds_staff_role(uris)


def holds_staff_role(uris: Iterable[str]) -> bool:
    """Whether these roles (a launch's, or a roster member's: app.lti.roster) make staff."""
    uris = list(uris)
    context = {role for role in map(_context_role, uris) if role is not None}
    if context:
        return not context.isdisjoint(_STAFF_CONTEXT_ROLES)
    institution = {uri.removeprefix(_INSTITUTION) for uri in uris if uri.startswith(_INSTITUTION)}
    return not institution.isdisjoint(_STAFF_INSTITUTION_ROLES)
