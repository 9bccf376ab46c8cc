"""The HTML the browser flows answer with: refusals in plain words, the new-window fallback, the
exercise picker of deep linking and the form that posts its answer back to the platform.

No page has an inline script or style (the Content-Security-Policy allows scripts from the
service's own URLs only): the form that posts itself runs RETURN_SCRIPT, served at
RETURN_SCRIPT_URL, and every page's look is STYLESHEET, served at STYLESHEET_URL.

A refusal is met by a student (or an instructor) in their LMS: the page says what happened and
what to do, in their words, and a reference; the reason, in an operator's words, goes to the log
under that reference (app.lti.router), never onto the page.
"""

from __future__ import annotations

from enum import Enum
from html import escape

from fastapi.responses import HTMLResponse

RETURN_SCRIPT_URL = "/lti/return.js"
RETURN_SCRIPT = "document.getElementById('return').submit();\n"
STYLESHEET_URL = "/lti/page.css"
STYLESHEET = (
    "body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;"
    "color:#1d232b}h1{font-size:1.5rem;line-height:1.3}button,a.button{font:inherit;"
    "padding:.4rem .9rem}"
    ".reference{color:#56606b;font-size:.9rem}\n"
)


class Remedy(Enum):
    """What the person who met a refusal can do about it: its page's heading and advice."""

    OPEN_AGAIN = (
        "This exercise did not open",
        "Go back to your course and open the exercise again. If this keeps happening, tell "
        "your instructor, with the reference below.",
    )
    ASK_INSTRUCTOR = (
        "This exercise cannot be opened from your course",
        "Nothing is wrong with your work: the course's link to the grader, or the grader, "
        "needs fixing. Tell your instructor, with the reference below.",
    )
    NOT_PUBLISHED = (
        "This exercise is not published yet",
        "The exercise your course links to is still being prepared. Nothing is wrong with your "
        "work: open it from your course again later, or tell your instructor, with the "
        "reference below.",
    )
    NOT_LINKED = (
        "This course is not linked to the grader",
        "The grader serves the courses it was linked to, and your course is not one of them yet. "
        "If you are a student, tell your instructor; if you teach this course, ask whoever runs "
        "the grader to link it. Give them the reference below.",
    )
    WAIT = (
        "Too many exercises are being opened",
        "Many exercises were opened from your network just now. Wait a minute, then go back to "
        "your course and open the exercise again.",
    )


class LaunchRefused(Exception):
    """A login, launch or deep-linking request the tool will not serve: `reason`, for the log,
    says why in an operator's words; `remedy` is all the page says."""

    def __init__(
        self,
        reason: str,
        status: int = 400,
        *,
        remedy: Remedy = Remedy.OPEN_AGAIN,
        retry_after_s: int | None = None,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status
        self.remedy = remedy
        self.retry_after_s = retry_after_s


def _page(
    title: str, body: str, status: int = 200, headers: dict[str, str] | None = None
) -> HTMLResponse:
    html = (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{escape(title)}</title>"
        f"<link rel='stylesheet' href='{STYLESHEET_URL}'>"
        f"</head><body><h1>{escape(title)}</h1>{body}</body></html>"
    )
    return HTMLResponse(
        html, status_code=status, headers={"Cache-Control": "no-store", **(headers or {})}
    )


def refused(error: LaunchRefused, reference: str) -> HTMLResponse:
    """The refusal's page; `reference` finds its reason in the log."""
    retry = {} if error.retry_after_s is None else {"Retry-After": str(error.retry_after_s)}
    title, advice = error.remedy.value
    return _page(
        title,
        f"<p>{escape(advice)}</p><p class='reference'>Reference: {escape(reference)}</p>",
        error.status,
        retry,
    )


def open_in_new_window(login_url: str) -> HTMLResponse:
    """The launch came without its state cookie: the browser blocks cookies in the LMS's
    frame. A top-level window is first-party, so the login works there."""
    return _page(
        "Open the exercise in a new window",
        "<p>Your browser blocked the cookie this launch needs inside the course page "
        "(third-party cookies are blocked).</p>"
        f"<p><a class='button' href='{escape(login_url)}' target='_blank' rel='opener'>"
        "Open in a new window</a></p>",
        401,
    )


def exercise_picker(choices: list[tuple[str, str]], action: str, context: str) -> HTMLResponse:
    """One form per exercise (slug, title); each posts the signed context and its slug."""
    items = "".join(
        f"<li><form method='post' action='{escape(action)}'>"
        f"<input type='hidden' name='context' value='{escape(context)}'>"
        f"<input type='hidden' name='exercise' value='{escape(slug)}'>"
        f"<button type='submit'>Add</button> {escape(title)}</form></li>"
        for slug, title in choices
    )
    return _page("Choose an exercise", f"<ul>{items}</ul>")


def post_to_platform(url: str, jwt_value: str) -> HTMLResponse:
    """The deep-linking answer: a form that posts the signed JWT to the platform at once."""
    return _page(
        "Returning to your course",
        f"<form id='return' method='post' action='{escape(url)}'>"
        f"<input type='hidden' name='JWT' value='{escape(jwt_value)}'>"
        "<noscript><button type='submit'>Continue</button></noscript></form>"
        f"<script src='{RETURN_SCRIPT_URL}'></script>",
    )
