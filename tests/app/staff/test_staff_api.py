"""The staff routes over HTTP, on SQLite and PostgreSQL: the course's staff (its admins and
instructors) get every one, anyone else a 404 as for a course that does not exist; one
student's page, the gradebook CSV (safe to open in a spreadsheet), the export zip, and the
exercise policy's validation."""

from __future__ import annotations

import csv
import io
import json
import zipfile
from dataclasses import dataclass
from datetime import timedelta

import pytest
from app_support import ClientFactory, SettingsFactory
from fastapi.testclient import TestClient
from sqlalchemy import select
from staff_support import Class, failing

from app.access import student_links
from app.access.api_keys import create_key
from app.core.models import Course, Role
from app.demo.reports import Outcome
from grader.catalog import Catalog

SEED = "multi-headed-self-attention"
COURSE = "ml-101"
# What a policy says of due dates when it sets none (tests/app/courses/test_due_dates.py).
NO_DUE_DATE = {"due_at": None, "late_policy": "accept", "penalty_per_day": None, "lms_due_at": None}
ROUTES = [
    ("GET", "/exercises"),
    ("GET", f"/exercises/{SEED}/stats"),
    ("GET", "/students"),
    ("GET", "/students/ada"),
    ("GET", "/gradebook.csv"),
    ("GET", f"/exercises/{SEED}/export.zip"),
    ("GET", f"/exercises/{SEED}/policy"),
    ("PUT", f"/exercises/{SEED}/policy"),
    ("GET", "/concepts"),
    ("GET", "/concepts.csv"),
    ("GET", "/concepts.json"),
]
# Student ids a spreadsheet would run as formulas in some locale, and how they are written.
FORMULAS = {
    '=HYPERLINK("http://x")': '\'=HYPERLINK("http://x")',
    "+1": "'+1",
    "-1": "'-1",
    "@SUM(A1)": "'@SUM(A1)",
    " =1": "' =1",  # a leading space
    "\u00a0=1": "'\u00a0=1",  # NBSP
    "\u202e=1": "'\u202e=1",  # a bidi override
    "\uff1d1": "'\uff1d1",  # a full-width equals sign
    "a;=1": "a;'=1",  # opened where the list separator is `;`
}


@dataclass(frozen=True)
class Staffed:
    client: TestClient
    keys: dict[str, str]  # caller → API key or student link token
    class_: Class

    def call(self, caller: str, method: str, path: str, course: str = COURSE) -> int:
        body = {"gradebook": "best"} if method == "PUT" else None
        response = self.client.request(
            method, f"/v1/courses/{course}{path}", json=body, headers=self.headers(caller)
        )
        return response.status_code

    def headers(self, caller: str) -> dict[str, str]:
        return {"X-API-Key": self.keys[caller]}


@pytest.fixture
def staffed(
    make_client: ClientFactory, make_settings: SettingsFactory, database_url: str
) -> Staffed:
    client = make_client(make_settings(require_api_keys=True, database_url=database_url))
    api = client.app.state.api  # type: ignore[attr-defined]
    keys = {}
    with api.database.session() as session:
        for name, course, role in (
            ("admin", COURSE, Role.ADMIN),
            ("instructor", COURSE, Role.INSTRUCTOR),
            ("submitter", COURSE, Role.SUBMITTER),
            ("other course's instructor", "cv-202", Role.INSTRUCTOR),
        ):
            _, keys[name] = create_key(session, name, course=course, role=role)
        _, keys["student"] = student_links.mint(
            session, api.settings, course=COURSE, student="ada", lifetime=timedelta(days=1)
        )
        course_id = session.scalars(select(Course.id).where(Course.slug == COURSE)).one()
    return Staffed(client, keys, Class(api.database, course_id))


def test_the_course_s_staff_get_every_route_and_anyone_else_a_404(
    staffed: Staffed, catalog: Catalog
) -> None:
    staffed.class_.submit(catalog.get(SEED), "ada")
    for method, path in ROUTES:
        for caller in ("admin", "instructor"):
            assert staffed.call(caller, method, path) == 200, (caller, method, path)
        for caller in ("submitter", "student", "other course's instructor"):
            assert staffed.call(caller, method, path) == 404, (caller, method, path)
        assert staffed.call("admin", method, path, course="no-such-course") == 404


def test_a_non_staff_caller_is_told_only_that_there_is_no_such_course(staffed: Staffed) -> None:
    response = staffed.client.get(
        f"/v1/courses/{COURSE}/students", headers=staffed.headers("submitter")
    )

    assert response.status_code == 404
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["type"] == "urn:autograder:problem:unknown-course"


def test_one_student_s_page_has_their_scores_and_submissions_newest_first(
    staffed: Staffed, catalog: Catalog
) -> None:
    seed = catalog.get(SEED)
    first = staffed.class_.submit(seed, "ada", failing(seed, 4, "missing-scaling"))
    last = staffed.class_.submit(seed, "ada", Outcome.PASSED)
    staffed.class_.submit(seed, "bob", Outcome.PASSED)

    page = staffed.client.get(
        f"/v1/courses/{COURSE}/students/ada", headers=staffed.headers("instructor")
    ).json()

    assert page["student_id"] == "ada"
    assert [row["id"] for row in page["submissions"]] == [last, first]
    (exercise,) = page["exercises"]
    assert exercise | {"title": None} == {
        "exercise": SEED,
        "title": None,
        "gradebook": "best",
        "best": 10.0,
        "latest": 10.0,
        "max_score": 10.0,
        "attempts": 2,
        "passed": True,
    }
    source = staffed.client.get(f"/v1/submissions/{first}", headers=staffed.headers("instructor"))
    assert source.json()["source"] == "print('hi')\n"  # the code, read through the same key


def test_the_gradebook_has_each_maximum_then_a_row_per_student_with_the_policy_s_score_as_text(
    staffed: Staffed, catalog: Catalog
) -> None:
    seed = catalog.get(SEED)
    for student in FORMULAS:
        staffed.class_.submit(seed, student, Outcome.PASSED)
    staffed.class_.submit(seed, "ada", Outcome.PASSED)
    staffed.class_.submit(seed, "ada", failing(seed, 7))
    admin = staffed.headers("admin")

    best = staffed.client.get(f"/v1/courses/{COURSE}/gradebook.csv", headers=admin)
    staffed.client.put(
        f"/v1/courses/{COURSE}/exercises/{SEED}/policy", json={"gradebook": "latest"}, headers=admin
    )
    latest = staffed.client.get(f"/v1/courses/{COURSE}/gradebook.csv", headers=admin)

    assert best.headers["content-type"].startswith("text/csv")
    assert "attachment" in best.headers["content-disposition"]
    heading, maxima, *rows = list(csv.reader(io.StringIO(best.text)))
    # The roster's columns last: no roster here, so no names, and everyone submitted; none late.
    assert heading == ["student_id", *catalog.slugs(), "late", "name", "status"]
    assert maxima == ["Points Possible", *(f"{e.spec.max_score:g}" for e in catalog), "", "", ""]
    assert {tuple(row[-3:]) for row in rows} == {("", "", "submitted")}
    column = heading.index(SEED)
    scores = {row[0]: row[column] for row in rows}
    assert scores["ada"] == "10"
    assert {student for student in scores if student != "ada"} == set(FORMULAS.values())
    assert {row[heading.index("scaled-dot-product-attention")] for row in rows} == {""}
    latest_scores = {row[0]: row[column] for row in csv.reader(io.StringIO(latest.text))}
    assert latest_scores["ada"] == "3"


def test_the_export_holds_every_submission_s_code_and_report_and_a_manifest(
    staffed: Staffed, catalog: Catalog
) -> None:
    seed = catalog.get(SEED)
    ids = [
        staffed.class_.submit(seed, "ada", failing(seed, 2), source="x = 1\n"),
        staffed.class_.submit(seed, "=cmd", Outcome.PASSED, source="y = 2\n"),
    ]
    other = catalog.get("scaled-dot-product-attention")
    staffed.class_.submit(other, "ada", Outcome.PASSED)

    response = staffed.client.get(
        f"/v1/courses/{COURSE}/exercises/{SEED}/export.zip", headers=staffed.headers("admin")
    )

    assert response.headers["content-type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    assert sorted(archive.namelist()) == sorted(
        ["manifest.csv", *(f"submissions/{i}.{ext}" for i in ids for ext in ("py", "json"))]
    )
    assert archive.read(f"submissions/{ids[0]}.py") == b"x = 1\n"
    report = json.loads(archive.read(f"submissions/{ids[0]}.json"))
    assert (report["exercise"], report["status"], report["score"]) == (SEED, "failed", 8.0)
    manifest = list(csv.DictReader(io.StringIO(archive.read("manifest.csv").decode())))
    assert [(row["id"], row["student_id"], row["report_status"]) for row in manifest] == [
        (ids[0], "ada", "failed"),
        (ids[1], "'=cmd", "passed"),
    ]


@pytest.mark.parametrize(
    "body",
    [
        {"attempts": 5},
        {"window_s": 3600},
        {"attempts": 0, "window_s": 3600},
        {"gradebook": "median"},
    ],
)
def test_a_policy_with_half_a_budget_or_an_unknown_score_is_refused(
    staffed: Staffed, body: dict[str, object]
) -> None:
    path = f"/v1/courses/{COURSE}/exercises/{SEED}/policy"
    admin = staffed.headers("admin")

    response = staffed.client.put(path, json=body, headers=admin)

    assert response.status_code == 422
    assert staffed.client.get(path, headers=admin).json() == {
        "gradebook": "best",
        "attempts": None,
        "window_s": None,
        **NO_DUE_DATE,
    }


def test_a_policy_is_stored_and_replaced_whole(staffed: Staffed) -> None:
    path = f"/v1/courses/{COURSE}/exercises/{SEED}/policy"
    admin = staffed.headers("admin")
    budget = {"gradebook": "latest", "attempts": 5, "window_s": 3600}

    assert staffed.client.put(path, json=budget, headers=admin).json() == budget | NO_DUE_DATE
    assert staffed.client.get(path, headers=admin).json() == budget | NO_DUE_DATE
    staffed.client.put(path, json={"gradebook": "best"}, headers=admin)
    assert staffed.client.get(path, headers=admin).json() == {
        "gradebook": "best",
        "attempts": None,
        "window_s": None,
        **NO_DUE_DATE,
    }
    unknown = staffed.client.get(f"/v1/courses/{COURSE}/exercises/nope/policy", headers=admin)
    assert unknown.status_code == 404


def test_the_concept_figures_count_students_whose_latest_answer_holds_a_concept_s_mistake(
    staffed: Staffed, catalog: Catalog
) -> None:
    seed, sdpa = catalog.get(SEED), catalog.get("scaled-dot-product-attention")
    class_ = staffed.class_
    # The term's first week (from Monday 31 August).
    class_.submit(seed, "ada", failing(seed, 4, "missing-scaling"))
    class_.submit(seed, "cyd", failing(seed, 4, "missing-scaling"))
    class_.submit(sdpa, "bob", failing(sdpa, 2, "boolean-keep-mask"))
    class_.at += timedelta(weeks=1)
    class_.submit(seed, "ada", Outcome.PASSED)  # ada lets go of scaling
    class_.submit(sdpa, "bob", Outcome.PASSED)
    class_.submit(sdpa, "cyd", failing(sdpa, 2, "missing-scaling"))  # scaling in two exercises
    class_.submit(seed, "cyd", Outcome.FAULT)  # no answer: cyd's seed answer stays wrong
    class_.submit(seed, "dan", Outcome.REFUSED)
    class_.submit(seed, None, failing(seed, 4, "no-causal-mask"))  # no student: not counted

    response = staffed.client.get(
        f"/v1/courses/{COURSE}/concepts", headers=staffed.headers("admin")
    )

    figures = response.json()
    assert [week["start"] for week in figures["weeks"][:2]] == ["2026-08-31", "2026-09-07"]
    assert [week["students"] for week in figures["weeks"][:3]] == [3, 4, 4]
    assert figures["students"] == 4
    curves = {curve["concept"]: curve for curve in figures["concepts"]}
    assert curves["scaling"]["weekly"][:3] == [2, 1, 1]
    assert curves["scaling"]["students"] == 1
    assert curves["scaling"]["exercises"] == {SEED: 1, "scaled-dot-product-attention": 1}
    assert curves["masking"]["weekly"][:3] == [1, 0, 0]
    assert (curves["allowed-apis"]["students"], curves["allowed-apis"]["exercises"]) == (
        1,
        {SEED: 1},
    )
    assert [curve["concept"] for curve in figures["concepts"][:2]] == ["scaling", "allowed-apis"]

    csv_file = staffed.client.get(
        f"/v1/courses/{COURSE}/concepts.csv", headers=staffed.headers("instructor")
    )
    json_file = staffed.client.get(
        f"/v1/courses/{COURSE}/concepts.json", headers=staffed.headers("instructor")
    )
    assert csv_file.headers["content-type"].startswith("text/csv")
    assert 'filename="ml-101-concepts.csv"' in csv_file.headers["content-disposition"]
    rows = list(csv.reader(io.StringIO(csv_file.text)))
    weeks = [week["start"] for week in figures["weeks"]]
    assert rows[0] == ["concept", "description", *weeks, "now"]
    assert rows[1][:5] == ["scaling", curves["scaling"]["description"], "2", "1", "1"]
    assert rows[1][-1] == "1"
    assert [row[0] for row in rows[1:]] == list(curves)
    assert 'filename="ml-101-concepts.json"' in json_file.headers["content-disposition"]
    assert json.loads(json_file.text) == figures
