"""The image's own install and start commands, run here as the image runs them, with no engine.

From a copy of the build context (the repository through .dockerignore), the web stage's COPYs
and RUNs bundle the exercise page (`npm ci` from the committed lock file, `npm run build`, with
this machine's Node), the builder stage copies that bundle into the sources as its COPY --from
does, and its RUN installs the project into a fresh virtual environment (docker/install.sh,
pointed at no torch index: pip's configuration finds the local CPU wheel). Then the runtime
stage's ENTRYPOINT with docker-compose.yml's commands starts the API and one worker, with the
image's ENV and compose's environment, the compose service names of the database and the
broker pointed at the local PostgreSQL (a fresh database, dropped afterwards) and Redis (a
database number of its own, emptied before and after). The API key is made as the compose file
documents (`autograder keys create` through the entrypoint); both health checks run as Docker
would run them; a correct submission is graded over HTTP through the worker; /readyz tells
which sandbox layers the worker applies; the exercise page is served with its bundle, from the
installed package alone.

Run as root, the services drop to the image's USER with no capabilities and no new privileges
(setpriv), as compose's cap_drop and no-new-privileges leave them. Not reproduced here: the
read-only root filesystem, the tmpfs mounts, the memory and pids limits, Docker's seccomp profile.
"""

from __future__ import annotations

import json
import os
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
import redis
from deploy_support import ROOT, Stage, build_context, load_compose, read_dockerfile, stage
from sqlalchemy import create_engine, text
from sqlalchemy.engine import Engine, make_url

from grader.catalog import Catalog
from grader.sandbox import landlock

pytestmark = pytest.mark.slow

SEED = "multi-headed-self-attention"
CORRECT = ROOT / "exercises" / SEED / "solutions/neetcode_common_answer.py"
PG_HOST, PG_PORT, PG_USERS = "127.0.0.1", 5432, ("postgres", "root")
REDIS_HOST, REDIS_PORT = "127.0.0.1", 6379
# A database number no other test uses; emptied before and after.
REDIS_DB = 13
# What a container's PATH is before the image's ENV prepends to it (the python base image's).
BASE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
INSTALL_TIMEOUT_S = 1200
BUNDLE_TIMEOUT_S = 300
# Where the page's bundle lies in the sources and in the installed package; what the page says
# when it is missing (app/ui/page.py).
DIST = "app/ui/static/dist"
NOT_BUILT = "scripts are not built"
START_TIMEOUT_S = 240


@dataclass
class Image:
    """The runtime stage laid out on this machine: image paths map to local ones."""

    stage: Stage
    context: Path
    venv: Path
    data: Path
    logs: Path
    run_as: list[str]  # the setpriv prefix that drops to the image's USER, or nothing
    bundle_s: float
    install_s: float

    def local(self, path: str) -> str:
        """The local path of an image path (the longest mapped prefix), else it unchanged."""
        mapping = {volume: self.data for volume in self.stage.volumes}
        for origin, copied, to in self.stage.copies:
            source, dest = copied.rstrip("/"), to.rstrip("/")
            # From the builder comes its one product, the venv; the rest from the context.
            mapping[dest] = self.venv if origin else self.context / source
            if not origin and dest.endswith("/" + source):  # a folder that mirrors the context
                mapping[dest.removesuffix("/" + source)] = self.context
        for prefix in sorted(mapping, key=len, reverse=True):
            if path == prefix or path.startswith(prefix + "/"):
                return str(mapping[prefix]) + path[len(prefix) :]
        return path

    def environment(self, service: Mapping[str, str]) -> dict[str, str]:
        """A container's environment: HOME from the image's user, the image's ENV, compose's."""
        env = {"HOME": "/nonexistent", "LANG": "C.UTF-8"}
        for name, value in self.stage.env.items():
            parts = value.replace("$PATH", BASE_PATH).split(":")
            env[name] = ":".join(self.local(part) for part in parts)
        env.update(service)
        return env

    def command(self, argv: list[str]) -> list[str]:
        return [*self.run_as, *(self.local(arg) for arg in argv)]

    def run(self, argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        """`argv` in a container of the image (`docker run`/`docker exec`), to its end."""
        return subprocess.run(
            self.command(argv),
            cwd=self.local(self.stage.workdir),
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )


def _stage_path(stage: Stage, path: str) -> str:
    """An image path of `stage`, absolute: a relative one is under the stage's WORKDIR."""
    return os.path.normpath(os.path.join(stage.workdir, path))


def _build_web_stage(web: Stage, context: Path, root: Path) -> Path:
    """The web stage in `root` (its filesystem): its COPYs from the context, then its RUNs, each
    in a shell in its WORKDIR, as `docker build` runs them. With this machine's Node and npm's
    configuration (its registry and cache), and as this user: the stage's Node image runs them
    as root, and nothing of that stage but the bundle goes further."""
    for origin, source, dest in web.copies:
        assert origin is None, f"COPY --from={origin} in the web stage"
        target = root / _stage_path(web, dest).lstrip("/")
        if dest.endswith("/"):
            target.mkdir(parents=True, exist_ok=True)
        if (context / source).is_dir():
            shutil.copytree(context / source, target, symlinks=True, dirs_exist_ok=True)
        else:
            shutil.copy2(context / source, target)  # into it, when it is a folder
    workdir = root / _stage_path(web, ".").lstrip("/")
    for run in web.runs:
        step = subprocess.run(
            ["/bin/sh", "-c", run],
            cwd=workdir,
            capture_output=True,
            text=True,
            timeout=BUNDLE_TIMEOUT_S,
            check=False,
        )
        assert step.returncode == 0, f"RUN {run}\n{step.stdout[-4000:]}{step.stderr[-4000:]}"
    return root


def _copy_from_stages(builder: Stage, stages: Mapping[str, Path], context: Path) -> None:
    """The builder's COPY --from=STAGE: a stage's product into the sources (the context is the
    builder's WORKDIR, where its `COPY . .` put it)."""
    for origin, source, dest in builder.copies:
        if origin is None:
            continue
        copied = stages[origin] / _stage_path(builder, source).lstrip("/")
        relative = os.path.relpath(_stage_path(builder, dest), builder.workdir)
        assert copied.is_dir() and not relative.startswith(".."), (origin, source, dest)
        shutil.copytree(copied, context / relative, dirs_exist_ok=True)


def _python_for(run_as: list[str]) -> str:
    """An interpreter the image's user can run (one under /root, as pyenv's, is out of its
    reach). Probed from a shell: setpriv's own exec still has root's rights."""
    base = str(getattr(sys, "_base_executable", sys.executable))
    candidates = [os.path.realpath(base), "/usr/bin/python3.11"]
    for python in candidates:
        argv = [*run_as, "/bin/sh", "-c", 'exec "$0" -c "import venv"', python]
        if subprocess.run(argv, capture_output=True, check=False).returncode == 0:
            return python
    pytest.fail(f"none of {candidates} runs as {run_as or 'this user'}")


@pytest.fixture(scope="session")
def image() -> Iterator[Image]:
    """One fresh install per session: the builder stage's RUN, in a copy of the context."""
    web, builder, runtime = stage("web"), stage("builder"), read_dockerfile()[-1]
    root = Path(tempfile.mkdtemp(prefix="autograder-image-"))
    try:
        root.chmod(0o755)  # the image's user reads the venv and the context
        uid, _, gid = (runtime.user or "").partition(":")
        run_as: list[str] = []
        if os.geteuid() == 0:
            run_as = [
                "setpriv",
                f"--reuid={uid}",
                f"--regid={gid}",
                "--clear-groups",
                "--inh-caps=-all",
                "--bounding-set=-all",
                "--no-new-privs",
                "--",
            ]
        context, venv, data, logs = (root / name for name in ("context", "venv", "data", "logs"))
        build_context(context)
        # No bundle in the context (.dockerignore): the install packages the web stage's.
        assert not (context / DIST).exists()
        started = time.monotonic()
        web_root = _build_web_stage(web, context, root / "web-stage")
        bundle_s = time.monotonic() - started
        _copy_from_stages(builder, {"web": web_root}, context)
        for folder in (data, logs):
            folder.mkdir(mode=0o700)
            if run_as:
                os.chown(folder, int(uid), int(gid))
        # The builder's environment: nothing of this test's venv; pip's own configuration stays.
        env = {
            name: value
            for name, value in os.environ.items()
            if name not in ("VIRTUAL_ENV", "PYTHONPATH", "TORCH_INDEX_URL")
        }
        env["PYTHON"] = _python_for(run_as)
        started = time.monotonic()
        # Each RUN in order: the dependencies' layer, then the project's.
        for run in builder.runs:
            argv = [str(venv) if word == "/opt/venv" else word for word in shlex.split(run)]
            install = subprocess.run(
                [str(context / argv[0]), *argv[1:]],
                cwd=context,
                env=env,
                capture_output=True,
                text=True,
                timeout=INSTALL_TIMEOUT_S,
                check=False,
            )
            assert install.returncode == 0, install.stdout[-4000:] + install.stderr[-4000:]
        install_s = time.monotonic() - started
        # The runtime stage keeps the venv, not the sources: without the bundle in the context,
        # what the API serves can only come from the installed package.
        shutil.rmtree(context / DIST)
        yield Image(runtime, context, venv, data, logs, run_as, bundle_s, install_s)
    finally:
        shutil.rmtree(root, ignore_errors=True)


# --- the local servers, standing in for compose's postgres and redis services -----------------


def _pg_admin() -> tuple[Engine, str]:
    for user in PG_USERS:
        engine = create_engine(
            f"postgresql+psycopg://{user}@{PG_HOST}:{PG_PORT}/postgres",
            isolation_level="AUTOCOMMIT",
            connect_args={"connect_timeout": 3},
        )
        try:
            with engine.connect() as connection:
                connection.execute(text("SELECT 1"))
        except Exception:
            engine.dispose()
            continue
        return engine, user
    pytest.fail(f"no PostgreSQL answers at {PG_HOST}:{PG_PORT} as any of {PG_USERS}")


@contextmanager
def _fresh_database() -> Iterator[tuple[str, str]]:
    """(database, user): a new database on the local server, dropped afterwards."""
    admin, user = _pg_admin()
    name = f"autograder_image_{uuid.uuid4().hex[:12]}"
    try:
        with admin.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{name}"'))
        yield name, user
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@contextmanager
def _empty_redis_database() -> Iterator[None]:
    client = redis.Redis(host=REDIS_HOST, port=REDIS_PORT, db=REDIS_DB, socket_timeout=5)
    try:
        client.flushdb()
        yield
    finally:
        client.flushdb()
        client.close()


def _wired_locally(
    environment: Mapping[str, str], services: Mapping[str, Any], database: str, user: str
) -> dict[str, str]:
    """Compose's environment with the service names of the database and the broker replaced by
    the local servers. PostgreSQL's user and database too: the local server has no role named
    as in compose, and trusts its clients, so the password goes along unused."""
    env = dict(environment)
    db_url = make_url(env["AUTOGRADER_DATABASE_URL"])
    assert db_url.host in services, db_url.host
    env["AUTOGRADER_DATABASE_URL"] = db_url.set(
        host=PG_HOST, port=PG_PORT, username=user, database=database
    ).render_as_string(hide_password=False)
    broker = urlsplit(env["AUTOGRADER_BROKER_URL"])
    assert broker.hostname in services, broker.hostname
    env["AUTOGRADER_BROKER_URL"] = f"redis://{REDIS_HOST}:{REDIS_PORT}/{REDIS_DB}"
    return env


# --- the services ------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class Service:
    name: str
    process: subprocess.Popen[bytes]
    log: Path

    def alive(self) -> None:
        assert self.process.poll() is None, f"{self.name} exited:\n{self.tail()}"

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-6000:]


@contextmanager
def _started(image: Image, name: str, argv: list[str], env: dict[str, str]) -> Iterator[Service]:
    log_path = image.logs / f"{name}.log"
    with log_path.open("wb") as log:
        # In the image's WORKDIR. The image's user can write neither there nor anywhere else
        # but /tmp and the data dir: as on the containers' read-only root.
        process = subprocess.Popen(
            image.command([*image.stage.entrypoint, *argv]),
            cwd=image.local(image.stage.workdir),
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    service = Service(name, process, log_path)
    try:
        yield service
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)  # what `docker stop` sends
            try:
                process.wait(timeout=45)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


@dataclass(frozen=True)
class Footprint:
    pss_mib: float  # proportional set size: shared pages counted once, as a memory limit does
    tasks: int  # processes and threads, as pids_limit counts them


def _footprint(pid: int) -> Footprint:
    """What a process and its descendants (a container's processes) hold."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
        except (OSError, ValueError):
            continue
        if entry.name.isdigit():
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(parent, []).append(int(entry.name))
    pss_kib, tasks, pending = 0, 0, [pid]
    while pending:
        current = pending.pop()
        pending += children.get(current, [])
        try:
            rollup = Path(f"/proc/{current}/smaps_rollup").read_text()
            tasks += len(list(Path(f"/proc/{current}/task").iterdir()))
        except OSError:
            continue
        pss_kib += next(int(line.split()[1]) for line in rollup.splitlines() if "Pss:" in line)
    return Footprint(pss_kib / 1024, tasks)


def _mib(size: str) -> float:
    """A compose byte value ("6g", "512m") in MiB."""
    units = {"b": 1 / 2**20, "k": 1 / 2**10, "m": 1, "g": 2**10}
    return float(size[:-1]) * units[size[-1].lower()]


def _wait_until_ready(client: httpx.Client, services: list[Service]) -> dict[str, Any]:
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        for service in services:
            service.alive()
        try:
            answer = client.get("/readyz")
            readiness: dict[str, Any] = answer.json()
            if answer.status_code == 200 and readiness["sandbox_layers"]:
                return readiness  # ready, and a worker has announced its layers
        except (httpx.TransportError, ValueError):
            readiness = {}
        logs = "\n".join(f"--- {s.name}\n{s.tail()}" for s in services)
        assert time.monotonic() < deadline, f"not ready: {readiness}\n{logs}"
        time.sleep(0.5)


@dataclass
class Deployment:
    """The API and one worker, started from the image's commands, as compose wires them."""

    services: dict[str, Any]  # docker-compose.yml's, interpolated
    api: Service
    worker: Service
    api_env: dict[str, str]
    worker_env: dict[str, str]
    client: httpx.Client
    key: str
    readiness: dict[str, Any]


@contextmanager
def _deployment(image: Image) -> Iterator[Deployment]:
    variables = {
        "AUTOGRADER_SECRET": secrets.token_urlsafe(32),
        "POSTGRES_PASSWORD": secrets.token_urlsafe(16),
    }
    services = load_compose(variables)["services"]
    api_port, metrics_port = _free_port(), _free_port()
    with ExitStack() as stack:
        database, user = stack.enter_context(_fresh_database())
        stack.enter_context(_empty_redis_database())

        def service_env(name: str, **extra: str) -> dict[str, str]:
            wired = _wired_locally(services[name]["environment"], services, database, user)
            return image.environment({**wired, **extra})

        # On loopback here, where the containers listen on every interface; the API requires
        # keys all the same (AUTOGRADER_REQUIRE_API_KEYS in compose).
        api_env = service_env("api", AUTOGRADER_HOST="127.0.0.1", AUTOGRADER_PORT=str(api_port))
        worker_env = service_env(
            "worker",
            AUTOGRADER_WORKER_METRICS_HOST="127.0.0.1",
            AUTOGRADER_WORKER_METRICS_PORT=str(metrics_port),
        )
        # `docker compose run --rm api autograder keys create --name ci`
        created = image.run(
            [*image.stage.entrypoint, "autograder", "keys", "create", "--name", "ci"], api_env
        )
        assert created.returncode == 0, created.stderr
        api = stack.enter_context(_started(image, "api", services["api"]["command"], api_env))
        worker = stack.enter_context(
            _started(image, "worker", services["worker"]["command"], worker_env)
        )
        client = stack.enter_context(
            httpx.Client(base_url=f"http://127.0.0.1:{api_port}", timeout=60, trust_env=False)
        )
        readiness = _wait_until_ready(client, [api, worker])
        yield Deployment(
            services, api, worker, api_env, worker_env, client, created.stdout.split()[0], readiness
        )


def _grade(deployment: Deployment, source: str) -> dict[str, Any]:
    body = {"exercise": SEED, "source": source, "student_id": "ci"}
    assert deployment.client.post("/v1/submissions", json=body).status_code == 401
    answer = deployment.client.post(
        "/v1/submissions",
        params={"wait": "true"},
        json=body,
        headers={"Authorization": f"Bearer {deployment.key}"},
    )
    assert answer.status_code == 200, answer.text
    submission: dict[str, Any] = answer.json()
    assert submission["status"] == "done", submission
    return submission


def _active_layers(readiness: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The worker's sandbox layers, checked against what an unprivileged container allows."""
    checks = {check["name"]: check for check in readiness["checks"]}
    assert checks["database"]["detail"] == "postgresql"
    assert checks["broker"]["ok"]
    layers = {layer["name"]: layer for layer in readiness["sandbox_layers"]}
    expected = {"process", "rlimits", "no_new_privs", "seccomp", "channel", "supervision"}
    expected |= {"landlock"} if landlock.abi() else set()
    assert {name for name, layer in layers.items() if layer["active"]} == expected, layers
    # Not root: neither namespaces nor a uid per slot, as in the hardened containers.
    assert not layers["namespaces"]["active"]
    assert not layers["unprivileged_uid"]["active"]
    return layers


def _within_limits(deployment: Deployment) -> dict[str, Footprint]:
    """The containers' limits hold what runs, with room for what submissions may add: memory for
    each slot's child up to its exercise's memory limit (its RLIMIT_AS)."""
    services = deployment.services
    used = {s.name: _footprint(s.process.pid) for s in (deployment.api, deployment.worker)}
    catalog = Catalog.from_folder(ROOT / "exercises")
    child_mib = max(exercise.spec.limits.memory_mb for exercise in catalog)
    slots = int(services["worker"]["environment"]["AUTOGRADER_SANDBOX_SLOTS"])
    assert used["api"].pss_mib < _mib(services["api"]["mem_limit"]) / 2
    assert used["worker"].pss_mib + slots * child_mib < _mib(services["worker"]["mem_limit"])
    for name, footprint in used.items():
        assert footprint.tasks < int(services[name]["pids_limit"]) / 4, (name, footprint)
    return used


def _serves_the_page_with_its_bundle(client: httpx.Client) -> None:
    """The exercise page links the bundle, and the API serves it (from the installed package)."""
    page = client.get(f"/exercises/{SEED}")
    assert page.status_code == 200, page.text[:2000]
    assert NOT_BUILT not in page.text
    for asset, kind in (("page.js", "javascript"), ("page.css", "text/css")):
        assert f'/ui/assets/{asset}"' in page.text, asset
        answer = client.get(f"/ui/assets/{asset}")
        assert answer.status_code == 200, asset
        assert kind in answer.headers["content-type"], answer.headers
        assert len(answer.content) > 1000, asset


def test_the_image_commands_serve_and_grade_as_compose_wires_them(image: Image) -> None:
    with _deployment(image) as deployment:
        # The health checks, as Docker runs them: the image's for the API, compose's for a worker.
        api_check = image.run(image.stage.healthcheck, deployment.api_env)
        assert api_check.returncode == 0, api_check.stderr
        worker_test = deployment.services["worker"]["healthcheck"]["test"]
        assert worker_test[0] == "CMD"
        worker_check = image.run(worker_test[1:], deployment.worker_env)
        assert worker_check.returncode == 0, worker_check.stderr

        started = time.monotonic()
        report = _grade(deployment, CORRECT.read_text())["report"]
        grading_s = time.monotonic() - started
        assert report["status"] == "passed", report["message"]
        assert report["score"] == report["max_score"] > 0

        layers = _active_layers(deployment.readiness)
        used = _within_limits(deployment)
        _serves_the_page_with_its_bundle(deployment.client)
    # With -s: what the report on the deployment quotes.
    print(
        json.dumps(
            {
                "bundle_s": round(image.bundle_s, 1),
                "install_s": round(image.install_s, 1),
                "grading_s": round(grading_s, 3),
                "run_as": image.run_as[1:3] or "this user",
                "footprint": {name: vars(footprint) for name, footprint in used.items()},
                "layers": {
                    name: [layer["active"], layer["detail"]] for name, layer in layers.items()
                },
            },
            indent=2,
        )
    )
