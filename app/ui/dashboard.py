"""The HTML of the course dashboard: the shell that web/src/dashboard.js fills from the staff
API (/v1/courses/{course}/...), one request per view.

The shell holds no figure: the page is public like the exercise page, and every figure comes
from an API call that only the course's staff may make (a key of the course, or the staff
session of an LMS launch as Instructor or TA). Each view has its room reserved by the
stylesheet, so nothing jumps when the data arrives.
"""

from __future__ import annotations

from html import escape

from app.ui.page import BUILD_HINT, article_page, assets_built, document, script_json


def _not_built_notice() -> str:
    return (
        '<div class="notice" role="alert"><strong>The dashboard\'s scripts are not built.'
        f"</strong> Run <code>{escape(BUILD_HINT)}</code> in the repository, then reload.</div>"
    )


def _sign_in_form(course: str) -> str:
    """Where a person without an LMS launch gives a key of the course (kept in this tab only)."""
    command = f"autograder keys create --course {course} --role instructor"
    return f"""<form id="sign-in" class="sign-in" hidden>
<p><strong>Sign in to see the course.</strong> Open the dashboard from your course's page in
your learning platform (as its instructor or a teaching assistant), or give an API key of this
course (<code>{escape(command)}</code>).</p>
<p><label for="api-key">API key</label>
<input id="api-key" name="api-key" type="password" autocomplete="off" spellcheck="false" required>
<button type="submit" class="primary">Open the dashboard</button></p>
<p id="sign-in-error" class="error" role="alert"></p>
</form>"""


def dashboard_page(course: str, *, keys_required: bool) -> str:
    """`keys_required`: the service needs a credential (else it runs open on loopback)."""
    built = assets_built()
    data = script_json({"course": course, "keysRequired": keys_required})
    body = f"""<a class="skip-link" href="#view">Skip to the figures</a>
{"" if built else _not_built_notice()}
<header class="dash-header">
<h1>Course <code>{escape(course)}</code></h1>
<nav class="dash-nav" aria-label="Dashboard">
<a href="?view=exercises" data-view="exercises">Exercises</a>
<a href="?view=students" data-view="students">Students</a>
<a href="?view=concepts" data-view="concepts">Concepts</a>
<button type="button" id="gradebook" class="link">Download the gradebook (CSV)</button>
</nav>
<p id="who" class="who" hidden></p>
<p id="dash-status" class="status" role="status"></p>
</header>
{_sign_in_form(course)}
<main id="view" class="dash-view" tabindex="-1" aria-live="polite" aria-busy="true">
<p class="placeholder">Loading the course's figures…</p>
</main>
<script type="application/json" id="dashboard-data">{data}</script>"""
    return document(
        f"Dashboard · {course}",
        body,
        built=built,
        script="dashboard.js",
        stylesheets=("page.css", "dashboard.css"),
    )


def not_found_page(course: str) -> str:
    article = f"""<p><code>{escape(course)}</code> is not a course's name: a course's name is
lower-case letters, digits and dashes. Open the dashboard from your course's page in your learning
platform, or check the link.</p>"""
    return article_page("No such course", article)
