"""The deployment files, checked without a Docker engine: hadolint on the Dockerfile, ShellCheck on
the scripts it runs, docker-compose.yml against the compose specification's JSON schema, and the
properties the deployment promises (hardened graders, health checks, no secret in the files,
settings that exist). Any finding fails.

compose-spec.json is the compose-spec project's schema (Apache-2.0, compose-spec.LICENSE), as
check-jsonschema 0.39.0 vendors it (sha256 d549057e...0e64); refresh it from a newer release
of that package when compose gains keys this file needs.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import pytest
from deploy_support import (
    COMPOSE_FILE,
    DOCKERFILE,
    ROOT,
    Stage,
    context_files,
    interpolate,
    load_compose,
    read_dockerfile,
    stage,
)
from sqlalchemy.engine import make_url

from app.core.settings import AppSettings

BIN = Path(sys.executable).parent
SCHEMA = Path(__file__).with_name("compose-spec.json")
SCRIPTS = [ROOT / "docker/install.sh", ROOT / "docker/start"]
# What a developer's .env would hold; any value does for reading the file.
VARIABLES = {"AUTOGRADER_SECRET": "lint-secret", "POSTGRES_PASSWORD": "lint-password"}
# Services built from this repository's Dockerfile: they run submissions, or could.
GRADERS = ("api", "worker")


def _run(*argv: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(arg) for arg in argv], cwd=ROOT, capture_output=True, text=True, check=False
    )


def test_hadolint_finds_nothing_in_the_dockerfile() -> None:
    # Every level counts, style included (hadolint's default threshold lets style through).
    result = _run(BIN / "hadolint", "--no-color", "--failure-threshold", "style", DOCKERFILE)
    assert (result.returncode, result.stdout + result.stderr) == (0, "")


def test_shellcheck_finds_nothing_in_the_image_scripts() -> None:
    result = _run(BIN / "shellcheck", "--severity", "style", *SCRIPTS)
    assert (result.returncode, result.stdout + result.stderr) == (0, "")


def test_the_compose_file_follows_the_compose_specification() -> None:
    schema = json.loads(SCHEMA.read_text())
    validator = jsonschema.Draft202012Validator(schema)
    validator.check_schema(schema)
    errors = [
        f"{'/'.join(map(str, error.absolute_path))}: {error.message}"
        for error in validator.iter_errors(load_compose(VARIABLES))
    ]
    assert errors == []


def test_the_schema_check_catches_a_misspelt_key() -> None:
    """Guards the check above: the vendored schema refuses keys it does not know."""
    compose = load_compose(VARIABLES)
    compose["services"]["worker"]["read_onyl"] = True
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text()))
    assert not validator.is_valid(compose)


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return load_compose(VARIABLES)


@pytest.fixture(scope="module")
def runtime() -> Stage:
    return read_dockerfile()[-1]


def test_the_secrets_come_from_the_environment_never_from_the_file() -> None:
    with pytest.raises(KeyError, match="AUTOGRADER_SECRET"):
        load_compose({"POSTGRES_PASSWORD": "x"})
    with pytest.raises(KeyError, match="POSTGRES_PASSWORD"):
        load_compose({"AUTOGRADER_SECRET": "x"})
    text = COMPOSE_FILE.read_text()
    assert all(value not in text for value in VARIABLES.values())


def test_every_service_has_a_health_check_and_waits_for_healthy_dependencies(
    compose: dict[str, Any], runtime: Stage
) -> None:
    for name, service in compose["services"].items():
        built_here = service.get("build") == "."
        assert service.get("healthcheck") or (built_here and runtime.healthcheck), name
        for dependency, condition in service.get("depends_on", {}).items():
            assert condition == {"condition": "service_healthy"}, (name, dependency)


@pytest.mark.parametrize("name", GRADERS)
def test_the_graders_are_hardened(compose: dict[str, Any], runtime: Stage, name: str) -> None:
    service = compose["services"][name]
    assert service["build"] == "."
    assert service["read_only"] is True
    assert service["cap_drop"] == ["ALL"]
    assert "cap_add" not in service
    assert "no-new-privileges:true" in service["security_opt"]
    assert service["init"] is True
    assert int(service["pids_limit"]) > 0
    assert service["mem_limit"] == service["memswap_limit"]
    # Writable: the sandbox's scratch parent and the data dir, and nothing else.
    mounts = {entry.split(":")[0]: entry for entry in service["tmpfs"]}
    assert sorted(mounts) == sorted(["/tmp", *runtime.volumes])
    uid, _, gid = (runtime.user or "").partition(":")
    assert f"uid={uid},gid={gid}" in mounts[runtime.env["AUTOGRADER_DATA_DIR"]]


def test_workers_can_be_scaled(compose: dict[str, Any]) -> None:
    worker = compose["services"]["worker"]
    assert "container_name" not in worker
    assert "ports" not in worker


def test_the_workers_yield_the_cpu_to_the_api(compose: dict[str, Any]) -> None:
    services = compose["services"]
    default_weight = 1024  # Docker's, for a container that names none
    assert services["api"].get("cpu_shares", default_weight) >= default_weight
    assert services["worker"]["cpu_shares"] <= default_weight // 4


def test_the_api_requires_keys(compose: dict[str, Any]) -> None:
    api = compose["services"]["api"]
    assert api["command"] == ["api"]
    assert api["environment"]["AUTOGRADER_REQUIRE_API_KEYS"] == "true"


def test_graders_reach_the_database_and_broker_services(compose: dict[str, Any]) -> None:
    services = compose["services"]
    postgres = services["postgres"]["environment"]
    for name in GRADERS:
        environment = services[name]["environment"]
        database = make_url(environment["AUTOGRADER_DATABASE_URL"])
        assert database.drivername == "postgresql+psycopg"
        assert database.host in services
        assert services[database.host]["image"].startswith("postgres:")
        assert (database.username, database.password, database.database) == (
            postgres["POSTGRES_USER"],
            postgres["POSTGRES_PASSWORD"],
            postgres["POSTGRES_DB"],
        )
        broker = urlsplit(environment["AUTOGRADER_BROKER_URL"])
        assert broker.scheme == "redis"
        assert broker.hostname in services
        assert services[broker.hostname]["image"].startswith("redis:")
        assert {database.host, broker.hostname} <= set(services[name]["depends_on"])


def test_every_setting_named_exists(compose: dict[str, Any], runtime: Stage) -> None:
    """A misspelt AUTOGRADER_* variable would be ignored silently by the service."""
    names = [*runtime.env] + [
        variable for name in GRADERS for variable in compose["services"][name]["environment"]
    ]
    fields = set(AppSettings.model_fields)
    unknown = [
        name
        for name in names
        if name.startswith("AUTOGRADER_") and name.removeprefix("AUTOGRADER_").lower() not in fields
    ]
    assert unknown == []


def test_the_runtime_image_runs_unprivileged_from_the_installed_venv(runtime: Stage) -> None:
    builder = stage("builder")
    uid, _, gid = (runtime.user or "").partition(":")
    assert uid.isdigit() and int(uid) != 0 and gid.isdigit(), runtime.user
    assert runtime.volumes == [runtime.env["AUTOGRADER_DATA_DIR"]]
    # The dependencies in a layer of their own, from pyproject.toml alone, then the project.
    assert builder.runs == [
        "docker/install.sh --dependencies /opt/venv",
        "docker/install.sh /opt/venv",
    ]
    assert (builder.name, "/opt/venv", "/opt/venv") in runtime.copies
    assert runtime.env["PATH"].startswith("/opt/venv/bin:")
    assert runtime.entrypoint == ["/app/docker/start"]
    # /app mirrors the context's folders: docker/start finds the catalog beside itself, and CI
    # runs the scripts from a copy of the context (test_image_commands).
    from_context = {(source, dest) for origin, source, dest in runtime.copies if origin is None}
    assert from_context == {("docker/", "/app/docker/"), ("exercises/", "/app/exercises/")}


def test_the_image_bundles_the_page_from_the_lock_file_and_installs_it() -> None:
    """The web stage builds the page's bundle with `npm ci` (the committed lock file, nothing
    resolved anew) and the builder puts it where the package data is taken from before its
    install; nothing of Node reaches the runtime stage."""
    web, builder = stage("web"), stage("builder")
    names = [each.name for each in read_dockerfile()]
    assert names.index("web") < names.index("builder")  # COPY --from names an earlier stage
    assert "&& npm ci " in web.runs[0] and web.runs[-1] == "npm run build"
    assert not any("npm install" in run for run in web.runs)
    assert {source for _, source, _ in web.copies} >= {"web/package-lock.json", "web/.npmrc"}
    assert builder.copies == [
        (None, "pyproject.toml", "./"),
        (None, "docker/install.sh", "docker/"),
        (None, ".", "."),
        ("web", "/src/app/ui/static/dist/", "app/ui/static/dist/"),
    ]
    assert (web.workdir, builder.workdir) == ("/src/web", "/src")
    assert all(origin in (None, "builder") for origin, _, _ in read_dockerfile()[-1].copies)
    text = DOCKERFILE.read_text()
    # An official Node image, on a major version (an LTS line), never `latest`.
    assert re.search(r"^ARG NODE_IMAGE=node:\d+-[a-z-]*slim$", text, re.MULTILINE), text


def test_the_build_context_holds_what_the_image_needs_and_nothing_local() -> None:
    files = context_files()
    for needed in ("pyproject.toml", "README.md", "docker/install.sh", "docker/start"):
        assert needed in files
    for needed in ("web/package.json", "web/package-lock.json", "web/.npmrc", "web/build.mjs"):
        assert needed in files
    for package in ("app/", "grader/", "reference/", "exercises/", "web/src/"):
        assert any(name.startswith(package) for name in files), package
    # The bundle and the packages of a local build stay out: the web stage makes its own.
    local_builds = ("web/node_modules/", "app/ui/static/dist/")
    for local in (".venv/", "var/", ".git/", "tests/", "build/", *local_builds):
        assert not any(name.startswith(local) for name in files), local
    assert not any("__pycache__" in name or ".egg-info" in name for name in files)


def test_compose_interpolation_reads_as_compose_does() -> None:
    variables = {"SET": "value", "EMPTY": ""}
    assert interpolate("a${SET}b$$c", variables) == "avalueb$c"
    assert interpolate("${UNSET:-fallback}${EMPTY:-x}${EMPTY-y}", variables) == "fallbackx"
    with pytest.raises(KeyError, match="needed"):
        interpolate("${EMPTY:?needed}", variables)
    with pytest.raises(ValueError):
        interpolate("$SET", variables)
