"""A plugin of the suite (pyproject: `-p shared_plans`): one plans folder for the whole session.
Every service a test starts uses the tests' one secret, so an exercise's plan (the references
run on every test) is built once, not once per service."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session", autouse=True)
def shared_plans(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AUTOGRADER_PLANS_DIR", str(tmp_path_factory.mktemp("plans")))
        yield
