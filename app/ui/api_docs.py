"""/docs (Swagger UI) and /redoc (ReDoc): the API's docs pages, built here and nowhere else.

FastAPI's own pages load their scripts from a CDN and start them with an inline script, so they
stay blank without internet and under the service's `script-src 'self'`. These load Swagger UI's
and ReDoc's prebuilt bundles from the page's bundle (web/build.mjs copies them from their npm
packages), each started by a module of its own (web/src/swagger.js, web/src/redoc.js) that reads
where the OpenAPI document is from its container's `data-spec-url`.
"""

from __future__ import annotations

from html import escape

from app.ui.page import ASSETS_URL, BUILD_HINT, assets_built, document


def swagger_page(openapi_url: str) -> str:
    return _docs_page(
        "API docs",
        openapi_url,
        root="swagger-ui",
        library="swagger-ui-bundle.js",
        starter="swagger.js",
        stylesheets=("swagger-ui.css", "swagger.css"),
    )


def redoc_page(openapi_url: str) -> str:
    return _docs_page(
        "API reference",
        openapi_url,
        root="redoc",
        library="redoc.standalone.js",
        starter="redoc.js",
        stylesheets=("redoc.css",),
    )


def _docs_page(
    title: str,
    openapi_url: str,
    *,
    root: str,
    library: str,
    starter: str,
    stylesheets: tuple[str, ...],
) -> str:
    """The `library`'s classic bundle, then the `starter` module: both deferred, so they run in
    this order once the document is parsed."""
    if not assets_built():
        return document(title, _not_built_notice(openapi_url), built=False, script=None)
    body = f"""<div id="{root}" data-spec-url="{escape(openapi_url)}"></div>
<script defer src="{ASSETS_URL}/{library}"></script>
<script type="module" src="{ASSETS_URL}/{starter}"></script>"""
    return document(title, body, built=True, script=None, stylesheets=stylesheets)


def _not_built_notice(openapi_url: str) -> str:
    return (
        '<main class="layout single"><div class="notice" role="alert">'
        "<strong>The docs pages' scripts are not built.</strong> Run "
        f"<code>{escape(BUILD_HINT)}</code> in the repository, then reload. The OpenAPI "
        f'document itself is at <a href="{escape(openapi_url)}">{escape(openapi_url)}</a>.'
        "</div></main>"
    )
