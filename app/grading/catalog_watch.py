"""How a running process follows the exercises folder: it polls the folder's fingerprint.

Every process that serves or grades (the API, embedded or not, and each `autograder worker`)
runs a `CatalogWatch` on a timer (app.core.periodic). Each period it hashes the contents of the
exercises folder and the reference package (a few hundred kilobytes: milliseconds); when the
hash differs from the last one seen, it scans the folder again and hands the scan to what it
feeds: the Grader (`Grader.update`: changed exercises get new plans before they are served, a
change that fails its check keeps the last good version; `PreloadingGrader` has the warm
sandbox preload the libraries a new exercise allows) or, in an API that does not grade, a
`FollowedCatalog`.

Why a poll and not a file watch or a signal: workers may run on other machines sharing the
folder (a network file system, where inotify does not see another machine's writes), and no
one has to find and signal every process after an edit. The cost is a delay of at most one
period (AUTOGRADER_CATALOG_POLL_S) and a hash of the folder per period.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from grader.catalog import Catalog, catalog_fingerprint
from grader.runner import Grader
from grader.sandbox.process import WarmProcessSandbox

log = logging.getLogger(__name__)


class CatalogHolder(Protocol):
    """What serves the catalog: it takes a new scan and says what it serves now."""

    @property
    def catalog(self) -> Catalog: ...

    def update(self, scanned: Catalog) -> Catalog: ...


class FollowedCatalog:
    """The catalog of an API process that does not grade (scale-out): a new scan is served as
    it is, except that a folder that broke keeps its last good version."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def update(self, scanned: Catalog) -> Catalog:
        self.catalog = scanned.succeeding(self.catalog)
        return self.catalog


@dataclass(frozen=True)
class PreloadingGrader:
    """A Grader over the real sandbox: a new scan's libraries are preloaded by the warm
    sandbox before any exercise of it is served."""

    grader: Grader
    sandbox: WarmProcessSandbox

    @property
    def catalog(self) -> Catalog:
        return self.grader.catalog

    def update(self, scanned: Catalog) -> Catalog:
        self.sandbox.preload(scanned.allowed_imports())
        return self.grader.update(scanned)


class CatalogWatch:
    def __init__(self, folder: Path, holder: CatalogHolder, seen: str) -> None:
        """`seen`: the fingerprint taken before the holder's catalog was scanned, so a change
        made during that scan is found at the first check."""
        self._folder = folder
        self._holder = holder
        self._seen = seen

    def check(self) -> None:
        """Scan again if anything changed since the last check."""
        if not self._folder.is_dir():  # unmounted, say: not a reason to serve nothing
            log.warning("%s is not a folder now; serving what was there", self._folder)
            return
        now = catalog_fingerprint(self._folder)
        if now == self._seen:
            return
        previous = self._holder.catalog
        log_changes(previous, self._holder.update(Catalog.scan(self._folder)))
        self._seen = now


def log_changes(previous: Catalog, current: Catalog) -> None:
    """What changed, one line each; every problem of a broken folder, one line each."""
    before = {exercise.spec.slug: exercise.version for exercise in previous}
    after = {exercise.spec.slug: exercise.version for exercise in current}
    for slug in sorted(after.keys() - before.keys()):
        log.info("exercise %s: serving version %s", slug, after[slug])
    for slug in sorted(before.keys() & after.keys()):
        if before[slug] != after[slug]:
            log.info("exercise %s: version %s replaces %s", slug, after[slug], before[slug])
    for slug in sorted(before.keys() - after.keys() - current.problems.keys()):
        log.info("exercise %s: removed", slug)
    _log_drafts(previous.drafts(), current.drafts(), set(after))
    for slug, error in sorted(current.problems.items()):
        told = previous.problems.get(slug)
        if told is not None and told.lines() == error.lines():
            continue
        serving = current.serving(slug)
        state = f"serving last good version {serving.version}" if serving else "not served"
        for line in error.lines():
            log.error("exercise %s is broken (%s): %s", slug, state, line)


def _log_drafts(before: dict[str, str], after: dict[str, str], served: set[str]) -> None:
    """Each exercise that became a draft (students lose it, or never had it) or was published."""
    for slug, reason in sorted(after.items()):
        if before.get(slug) != reason:
            log.warning("exercise %s is a draft, which students do not see: %s", slug, reason)
    for slug in sorted((before.keys() - after.keys()) & served):
        log.info("exercise %s: published", slug)
