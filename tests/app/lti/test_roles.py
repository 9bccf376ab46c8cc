"""Which launches are the course's staff: an Instructor or a Teaching Assistant of the course,
by context role (or sub-role), or by institution role when the launch has no context role."""

from __future__ import annotations

import pytest

from app.lti.roles import ROLES_CLAIM, is_staff

LIS = "http://purl.imsglobal.org/vocab/lis/v2/"


@pytest.mark.parametrize(
    "roles",
    [
        [f"{LIS}membership#Instructor"],
        [f"{LIS}membership#TeachingAssistant"],
        [f"{LIS}membership/Instructor#TeachingAssistant"],
        [f"{LIS}membership/Instructor#Grader", f"{LIS}institution/person#Student"],
        [f"{LIS}institution/person#Instructor"],
        ["Instructor"],
        [f"{LIS}membership#Learner", f"{LIS}membership#Instructor"],
    ],
)
def test_instructors_and_teaching_assistants_are_staff(roles: list[str]) -> None:
    assert is_staff({ROLES_CLAIM: roles})


@pytest.mark.parametrize(
    "roles",
    [
        [f"{LIS}membership#Learner"],
        [f"{LIS}membership#Learner", f"{LIS}institution/person#Instructor"],
        [f"{LIS}membership#Mentor"],
        [f"{LIS}membership#ContentDeveloper"],
        [f"{LIS}institution/person#Student"],
        [f"{LIS}system/person#Administrator"],
        ["Learner"],
        [],
    ],
)
def test_learners_and_other_roles_are_not(roles: list[str]) -> None:
    assert not is_staff({ROLES_CLAIM: roles})


@pytest.mark.parametrize("claim", [None, "Instructor", {"role": "Instructor"}, [42]])
def test_a_missing_or_malformed_claim_is_no_staff(claim: object) -> None:
    body = {} if claim is None else {ROLES_CLAIM: claim}
    assert not is_staff(body)
