"""The HTML of the exercise page and of its 404, built here and nowhere else.

The page is server-rendered around three islands that the bundled script (web/src, built into
`DIST`) brings to life: the editor, the report and the history. Every island has its room
reserved by the stylesheet before the script runs, so nothing moves when it does. The exercise's
starter travels in a JSON script element, escaped so no `</script>` in it can close the element.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from html import escape
from pathlib import Path
from urllib.parse import quote

from app.ui import statement
from grader.proof_record import draft_reason
from grader.spec import Exercise

# Where `npm run build` in web/ writes the bundle (git-ignored), and the URL it is served under.
DIST = Path(__file__).parent / "static" / "dist"
ASSETS_URL = "/ui/assets"
BUILD_HINT = "make install (or: cd web && npm ci && npm run build)"


_BUNDLE = ("page.js", "catalog.js", "page.css", "dashboard.js", "dashboard.css")
# The API's docs pages (app.ui.api_docs): the libraries from their packages, what starts them.
_API_DOCS = (
    "swagger-ui-bundle.js",
    "swagger-ui.css",
    "swagger.js",
    "swagger.css",
    "redoc.standalone.js",
    "redoc.js",
    "redoc.css",
)


def assets_built() -> bool:
    return all((DIST / name).is_file() for name in (*_BUNDLE, *_API_DOCS))


def document(
    title: str,
    body: str,
    *,
    built: bool,
    script: str | None,
    stylesheets: tuple[str, ...] = ("page.css",),
) -> str:
    """The page around `body`, with the bundle's `stylesheets` and `script` once built."""
    head_assets = ""
    if built:
        head_assets = "".join(
            f'<link rel="stylesheet" href="{ASSETS_URL}/{name}">' for name in stylesheets
        )
        if script is not None:
            head_assets += f'<script type="module" src="{ASSETS_URL}/{script}"></script>'
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)} · autograder</title>
<link rel="icon" href="data:,">
{head_assets}
</head>
<body>
{body}
</body>
</html>
"""


def _not_built_notice() -> str:
    return (
        '<div class="notice" role="alert"><strong>The page\'s scripts are not built.</strong> '
        "The statement is below, but the editor and the Submit button need the front-end "
        f"bundle: run <code>{escape(BUILD_HINT)}</code> in the repository, then reload.</div>"
    )


# On a narrow screen, one pane at a time (web/src/panes.js): the bar is hidden until it runs.
_PANES = (("statement", "Statement"), ("code", "Code"), ("report", "Report"))
_PANE_TABS = (
    '<div class="pane-tabs" id="pane-tabs" role="tablist" aria-label="What to show" hidden>'
    + "".join(
        f'<button type="button" role="tab" id="tab-{name}" data-pane="{name}" '
        f'aria-controls="pane-{name}">{label}</button>'
        for name, label in _PANES
    )
    + "</div>"
)


def _draft_notice(exercise: Exercise) -> str:
    """What staff see on a draft (students never open one): why, and what publishes it."""
    reason = draft_reason(exercise)
    if reason is None:
        return ""
    return (
        '<div class="notice" role="note" id="draft-notice"><strong>Draft: students do not see '
        f"this exercise.</strong> {_with_code(reason)}</div>"
    )


def _with_code(reason: str) -> str:
    """A draft's reason, its `command` set as code."""
    parts = escape(reason).split("`")
    return "".join(
        f"<code>{part}</code>" if index % 2 else part for index, part in enumerate(parts)
    )


def exercise_page(exercise: Exercise, *, keys_required: bool) -> str:
    """`keys_required`: a student needs a link or a launch to submit (the page then says how)."""
    spec = exercise.spec
    built = assets_built()
    data = script_json(
        {
            "slug": spec.slug,
            "starter": exercise.starter,
            "maxScore": spec.max_score,
            "keysRequired": keys_required,
        }
    )
    body = f"""<a class="skip-link" href="#solution">Skip to the editor</a>
{"" if built else _not_built_notice()}{_draft_notice(exercise)}
<main class="layout">
{_PANE_TABS}
<article class="statement" id="pane-statement" aria-label="Statement">
<nav class="crumbs" id="crumbs" aria-label="Exercises"><a href="/exercises">All exercises</a></nav>
{statement.render(exercise.statement)}
</article>
<section class="workspace" id="solution" aria-labelledby="solution-heading" tabindex="-1">
<div class="pane" id="pane-code">
<h2 id="solution-heading">Your solution</h2>
<p class="hint" id="editor-hint">Python, {escape(spec.framework.value)}; define
<code>{escape(spec.entry_point)}</code>. Your draft is kept in this browser.
Press <kbd>Esc</kbd> then <kbd>Tab</kbd> to leave the editor.</p>
<div id="sign-in" class="notice" role="alert" hidden></div>
<div id="editor" class="editor" data-label="Code editor: your solution"></div>
<div class="actions">
<button type="button" id="submit" class="primary" disabled>Submit</button>
<button type="button" id="reset">Reset to the starter</button>
<p id="status" class="status" role="status" aria-live="polite"></p>
<p id="attempts" class="attempts" hidden></p>
<p id="due" class="due" hidden></p>
</div>
</div>
<div class="pane" id="pane-report">
<section class="report" aria-labelledby="report-heading">
<h2 id="report-heading">Report</h2>
<button type="button" id="load-code" hidden>Open this submission's code in the editor</button>
<div id="report" tabindex="-1"><p class="placeholder">Submit your solution to see how it
does on the {len(spec.tests)} tests ({spec.max_score:g} points).</p></div>
</section>
<section class="history" aria-labelledby="history-heading">
<h2 id="history-heading">Past submissions</h2>
<p id="who"><label for="student-id">Student id</label>
<input id="student-id" name="student-id" autocomplete="off" spellcheck="false"></p>
<ol id="history" class="history-list"></ol>
</section>
</div>
</section>
</main>
<script type="application/json" id="exercise-data">{data}</script>"""
    return document(spec.title, body, built=built, script="page.js")


def script_json(data: object) -> str:
    """JSON for a script element: no `</script>` in it can close the element."""
    return json.dumps(data).replace("<", "\\u003c")


def article_page(title: str, article: str, *, script: str | None = None, data: str = "") -> str:
    """A one-column page: the title, `article`'s HTML under it, then `data`."""
    body = f"""<main class="layout single">
<article class="statement">
<h1>{escape(title)}</h1>
{article}
</article>
</main>
{data}"""
    return document(title, body, built=assets_built(), script=script)


def catalog_page(exercises: Iterable[Exercise], *, keys_required: bool) -> str:
    """Every exercise, each linking to its page, a draft flagged; the script says who is signed
    in, and fills each exercise's room for the student's status."""
    items = "\n".join(_catalog_item(exercise) for exercise in exercises)
    article = f"""<div id="sign-in" class="notice" role="alert" hidden></div>
<p id="who" hidden></p>
<ul class="catalog">
{items}
</ul>"""
    data = script_json({"keysRequired": keys_required})
    script_data = f'<script type="application/json" id="catalog-data">{data}</script>'
    return article_page("Exercises", article, script="catalog.js", data=script_data)


def _catalog_item(exercise: Exercise) -> str:
    spec, reason = exercise.spec, draft_reason(exercise)
    draft = (
        ""
        if reason is None
        else f'<p class="draft"><strong>Draft:</strong> {_with_code(reason)}</p>'
    )
    return (
        f'<li data-exercise="{escape(spec.slug)}">'
        f'<a href="/exercises/{quote(spec.slug)}">{escape(spec.title)}</a>'
        f'<span class="progress" hidden></span><p>{escape(spec.summary)}</p>{draft}</li>'
    )


def unavailable_page(slug: str, problems: list[str]) -> str:
    items = "\n".join(f"<li><code>{escape(problem)}</code></li>" for problem in problems)
    article = f"""<p>The exercise <code>{escape(slug)}</code> is broken on this autograder; your
instructor can fix it (nothing is wrong with your work):</p>
<ul>
{items}
</ul>"""
    return article_page("Exercise unavailable", article)


def not_found_page(slug: str) -> str:
    article = f"""<p>There is no exercise called <code>{escape(slug)}</code>. Check the link you
followed, or ask your instructor for the right one.</p>"""
    return article_page("No such exercise", article)
