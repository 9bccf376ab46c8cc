"""An exercise's statement, from markdown to HTML, on the server.

Why here and not in the browser: the statement is trusted text that never changes while the
service runs, so rendering it once per request costs little, ships no markdown parser to the
student, and leaves a page that reads (and that tests can check) without any script. Code blocks
are highlighted here too, by Pygments, so they don't change colour or height after load.
Formulas are the one part left to the browser: `$...$` and `$$...$$` become elements holding
the TeX source (readable as is), and KaTeX, bundled into the page's script, typesets them.
Raw HTML in a statement is not passed through.
"""

from __future__ import annotations

from functools import cache

from markdown_it import MarkdownIt
from mdit_py_plugins.dollarmath import dollarmath_plugin
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound


def _highlight(code: str, language: str, _attrs: str) -> str:
    """Pygments' markup for a fenced block; empty (markdown-it escapes it) for unknown languages."""
    try:
        lexer = get_lexer_by_name(language or "text")
    except ClassNotFound:
        return ""
    return str(highlight(code, lexer, _formatter()))


@cache
def _formatter() -> HtmlFormatter[str]:
    # nowrap: markdown-it supplies <pre><code class="language-...">; classes styled in the CSS.
    return HtmlFormatter(nowrap=True)


@cache
def _markdown() -> MarkdownIt:
    return (
        MarkdownIt("commonmark", {"html": False, "highlight": _highlight})
        .enable("table")
        .use(dollarmath_plugin)
    )


def render(markdown: str) -> str:
    html: str = _markdown().render(markdown)
    # A code block wider than the page scrolls: focusable, the keyboard can scroll it too. Raw
    # HTML is escaped, so every `<pre>` here is a code block's.
    return html.replace("<pre>", '<pre tabindex="0">')
