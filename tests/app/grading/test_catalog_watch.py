"""The catalog watch, driven by hand: it scans again only when the folder's content changed,
and keeps what it serves when the folder is gone."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from exercise_folders import SEED, edit_toml, seed_catalog

from app.grading.catalog_watch import CatalogWatch, FollowedCatalog
from grader.catalog import Catalog, catalog_fingerprint


class Recording(FollowedCatalog):
    def __init__(self, catalog: Catalog) -> None:
        super().__init__(catalog)
        self.scans: list[Catalog] = []

    def update(self, scanned: Catalog) -> Catalog:
        self.scans.append(scanned)
        return super().update(scanned)


@pytest.fixture
def exercises(tmp_path: Path) -> Path:
    return seed_catalog(tmp_path)


def watching(folder: Path) -> tuple[CatalogWatch, Recording]:
    seen = catalog_fingerprint(folder)
    holder = Recording(Catalog.scan(folder))
    return CatalogWatch(folder, holder, seen), holder


def test_it_scans_again_only_after_a_change(exercises: Path) -> None:
    watch, holder = watching(exercises)
    watch.check()
    assert holder.scans == []
    edit_toml(exercises / SEED, "title =", "title = 'Renamed' #")
    watch.check()
    watch.check()
    assert len(holder.scans) == 1
    assert holder.catalog.get(SEED).spec.title == "Renamed"


def test_a_folder_gone_keeps_what_is_served(exercises: Path) -> None:
    watch, holder = watching(exercises)
    served = holder.catalog
    shutil.rmtree(exercises)
    watch.check()
    assert holder.scans == [] and holder.catalog is served
