"""The list of exercises: `/` leads to it, and each exercise has the room its script fills with
the student's status."""

from __future__ import annotations

import html as html_text

from fastapi.testclient import TestClient

from grader.catalog import Catalog


def test_the_root_leads_to_the_list_with_the_address_query(client: TestClient) -> None:
    for asked, lands in (("/", "/exercises"), ("/?course=ml-101", "/exercises?course=ml-101")):
        response = client.get(asked, follow_redirects=False)
        assert (response.status_code, response.headers["location"]) == (307, lands)
    assert client.get("/").headers["content-type"].startswith("text/html")


def test_every_exercise_has_a_room_for_the_students_status(
    client: TestClient, catalog: Catalog
) -> None:
    html = client.get("/exercises").text
    for slug in catalog.slugs():
        assert (
            f'<li data-exercise="{slug}"><a href="/exercises/{slug}">'
            f"{html_text.escape(catalog.get(slug).spec.title)}</a>"
            '<span class="progress" hidden></span>'
        ) in html
