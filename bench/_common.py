"""What the benchmarks share: the seed exercise's submissions, the in-process floor, the
fresh-interpreter floor, real service processes on loopback, and their CPU and memory from /proc.

Every number a benchmark prints is compared against a baseline measured in the same run, so a
busy machine slows both sides alike; nothing here asserts on absolute times.
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from grader.catalog import Catalog
from grader.report import ReportStatus
from grader.runner import Grader
from grader.sandbox.inprocess import InProcessSandbox
from grader.sandbox.supervision import kill_group
from grader.sandbox.torch_setup import configure_torch
from grader.settings import GraderSettings

SLUG = "multi-headed-self-attention"
ROOT = Path(__file__).resolve().parent.parent
EXERCISE = ROOT / "exercises" / SLUG
CORRECT = EXERCISE / "solutions" / "neetcode_common_answer.py"
MISTAKES = EXERCISE / "mistakes"
# The server and the in-process floor grade with the same secret, hence the same hidden inputs.
SECRET = "benchmark"


# --- numbers ------------------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100), interpolated between the closest ranks."""
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(q) - 1]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.1f} ms"


def ratio_line(name: str, value: float, target: str | None = None) -> str:
    return f"{name:<40} = {value:7.3f}x" + (f"  (target {target})" if target else "")


# --- the floors ---------------------------------------------------------------------------------


def measure(grader: Grader, source: str, runs: int, pause_s: float = 0.0) -> list[float]:
    """Seconds per grading, after one untimed run that warms caches and processes; `pause_s`
    between gradings, as between students' submissions to an idle service."""
    grade_checked(grader, source)
    timings = []
    for _ in range(runs):
        time.sleep(pause_s)
        started = time.perf_counter()
        grade_checked(grader, source)
        timings.append(time.perf_counter() - started)
    return timings


def grade_checked(grader: Grader, source: str) -> None:
    report = grader.grade(SLUG, source)
    if report.status is not ReportStatus.PASSED:
        raise SystemExit(f"the benchmark's submission did not pass: {report.message}")


@functools.cache
def _configure_torch_once() -> None:
    """`configure_torch`, which torch lets a process do once (a run may build several floors)."""
    configure_torch()


@contextmanager
def in_process_grader(exercises_dir: Path | None = None) -> Iterator[Grader]:
    """The engine with no isolation at all: the floor of any grader, the work itself."""
    # The floor does the same work the same way as the sandboxed children: torch set up as in
    # the warm process (one thread; without it OpenMP spin-waits dominate on a busy machine).
    _configure_torch_once()
    sandbox = InProcessSandbox()
    try:
        folder = exercises_dir or GraderSettings().exercises_dir
        grader = Grader(Catalog.from_folder(folder), sandbox, secret=SECRET)
        grader.warm()  # reference outputs are computed once, before any timing
        yield grader
    finally:
        sandbox.close()


@contextmanager
def exercises_forward_only() -> Iterator[Path]:
    """A copy of the exercises with their trainability checks off: the baseline their cost is
    measured against."""
    with tempfile.TemporaryDirectory(prefix="autograder-forward-only-") as folder:
        copy = Path(folder) / "exercises"
        shutil.copytree(ROOT / "exercises", copy)
        for spec in copy.glob("*/exercise.toml"):
            text = spec.read_text(encoding="utf-8")
            if "[trainability]" in text:  # its one `counts`, whatever it says
                text = re.sub(r'^counts = "\w+"$', 'counts = "off"', text, flags=re.MULTILINE)
            else:
                text += '\n[trainability]\ncounts = "off"\n'
            spec.write_text(text, encoding="utf-8")
        yield copy


# A new interpreter that imports torch: what a grader that starts one per submission pays
# before it grades anything.
TORCH_IMPORT = (sys.executable, "-c", "import torch")


def fresh_torch_import(runs: int) -> list[float]:
    """Seconds for `TORCH_IMPORT`, `runs` times."""
    return [process_seconds(TORCH_IMPORT) for _ in range(runs)]


def process_seconds(argv: Sequence[str], env: Mapping[str, str] | None = None) -> float:
    """Wall-clock seconds of a whole process, from its start to its exit; it must succeed."""
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited with {done.returncode}:\n{done.stderr.decode()}")
    return elapsed


# --- service processes --------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def autograder_argv(*args: str) -> list[str]:
    """The `autograder` console script of this interpreter's environment."""
    script = Path(sys.executable).with_name("autograder")
    return [str(script), *args] if script.exists() else [sys.executable, "-m", "app.cli", *args]


def service_env(
    data_dir: Path, extra: Mapping[str, str] | None = None, *, lift_rate_limits: bool = True
) -> dict[str, str]:
    """The embedded defaults, in a data dir of the benchmark's own, whatever the caller's shell
    sets: settings come from `extra` only. `lift_rate_limits` where one client stands in for a
    whole class (the limits would measure themselves); not where each student signs in."""
    inherited = {
        name: value for name, value in os.environ.items() if not name.startswith("AUTOGRADER_")
    }
    unlimited = {"AUTOGRADER_RATE_LIMIT_PER_KEY": "0", "AUTOGRADER_RATE_LIMIT_PER_STUDENT": "0"}
    return {
        **inherited,
        "AUTOGRADER_DATA_DIR": str(data_dir),
        "AUTOGRADER_SECRET": SECRET,
        "AUTOGRADER_LOG_FORMAT": "json",
        **(unlimited if lift_rate_limits else {}),
        **(extra or {}),
    }


@dataclass
class Processes:
    """Processes this benchmark started, each in its own process group, logging to files."""

    log_dir: Path
    started: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def start(self, name: str, argv: list[str], env: Mapping[str, str]) -> None:
        log = (self.log_dir / f"{name}.log").open("wb")
        with log:
            process = subprocess.Popen(
                argv,
                env=dict(env),
                cwd=ROOT,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.started.append(process)

    def check_alive(self) -> None:
        for process in self.started:
            if process.poll() is not None:
                raise SystemExit(
                    f"{process.args!r} exited with {process.returncode}:\n{self.logs()}"
                )

    def logs(self, tail: int = 4000) -> str:
        return "\n".join(
            f"--- {path.name}\n{path.read_text(errors='replace')[-tail:]}"
            for path in sorted(self.log_dir.glob("*.log"))
        )

    def pids(self) -> list[int]:
        """Every process of their trees: sandbox processes live in sessions of their own, so
        they are found by parentage, not by process group."""
        return process_tree([process.pid for process in self.started])

    def stop(self, grace_s: float = 15.0) -> None:
        survivors = self.pids()
        for process in self.started:
            _terminate_group(process.pid)
        deadline = time.monotonic() + grace_s
        for process in self.started:
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                kill_group(process.pid)
                process.wait()
        for pid in survivors:  # orphans of a tree that did not take its own down
            if pid not in {process.pid for process in self.started}:
                _kill(pid)


def _terminate_group(pid: int) -> None:
    with suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGTERM)


def _kill(pid: int) -> None:
    with suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


@contextmanager
def processes() -> Iterator[Processes]:
    """Processes torn down on the way out, whatever happens, in a temporary directory that
    also serves as their data dir."""
    with ExitStack() as stack:
        log_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="autograder-bench-")))
        started = Processes(log_dir)
        stack.callback(started.stop)
        yield started


def add_service_env_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--service-env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a setting for the service's processes, e.g. AUTOGRADER_QUEUE_CAPACITY=8 (repeatable)",
    )


def service_env_option(values: Sequence[str]) -> dict[str, str]:
    settings = dict(value.partition("=")[::2] for value in values)
    if malformed := [name for name in settings if not name.startswith("AUTOGRADER_")]:
        raise SystemExit(f"--service-env takes AUTOGRADER_NAME=VALUE, not {malformed}")
    return settings


def start_server(
    started: Processes, extra_env: Mapping[str, str] | None = None, *, lift_rate_limits: bool = True
) -> str:
    """`autograder serve` on a free loopback port (embedded defaults unless `extra_env` says
    otherwise); its base URL."""
    port = free_port()
    args = ["serve", "--port", str(port)]
    start_autograder(started, "serve", args, extra_env, lift_rate_limits=lift_rate_limits)
    return f"http://127.0.0.1:{port}"


def start_autograder(
    started: Processes,
    name: str,
    args: Sequence[str],
    extra_env: Mapping[str, str] | None,
    *,
    lift_rate_limits: bool = True,
) -> None:
    env = service_env(started.log_dir, extra_env, lift_rate_limits=lift_rate_limits)
    started.start(name, autograder_argv(*args), env)


Readiness = dict[str, Any]  # /readyz's body


def wait_ready(
    started: Processes,
    base_url: str,
    also: Callable[[Readiness], bool] = lambda readiness: True,
    timeout_s: float = 180.0,
) -> None:
    """Until /readyz says ready (database, broker, sandbox pool warm) and `also` holds of it."""
    deadline = time.monotonic() + timeout_s
    with httpx.Client(base_url=base_url, timeout=10) as client:
        while True:
            started.check_alive()
            try:
                response = client.get("/readyz")
                if response.status_code == 200 and also(response.json()):
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit(f"not ready after {timeout_s:.0f} s:\n{started.logs()}")
            time.sleep(0.2)


# --- /proc: CPU time and memory of process trees ------------------------------------------------

_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def machine_cores() -> int:
    return len(os.sched_getaffinity(0))


def process_tree(roots: Sequence[int]) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            stat = _stat_fields(int(entry.name))
            if stat is not None:
                children.setdefault(int(stat[1]), []).append(int(entry.name))
    tree, frontier = [], list(roots)
    while frontier:
        pid = frontier.pop()
        tree.append(pid)
        frontier.extend(children.get(pid, []))
    return tree


def _stat_fields(pid: int) -> list[str] | None:
    """/proc/PID/stat from field 3 (state) on: the command name before it may hold spaces."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:  # gone since it was listed
        return None
    return text[text.rindex(")") + 2 :].split()


@dataclass(frozen=True)
class CpuAccount:
    """CPU-seconds (user + system) spent so far, by role in a service's process tree, and by the
    whole machine: two accounts taken at two moments differ by what was spent between them."""

    service: float  # the API and worker processes: HTTP, database, supervising and judging
    warm: float  # the sandbox's warm processes themselves: forking and reaping
    children: float  # the sandboxed children, counted into their warm process once reaped
    machine: float  # every process and kernel thread: the client, the database, kernel work

    @property
    def tree(self) -> float:
        return self.service + self.warm + self.children

    def __sub__(self, earlier: CpuAccount) -> CpuAccount:
        return CpuAccount(
            *(getattr(self, name) - getattr(earlier, name) for name in self.__dataclass_fields__)
        )


def cpu_account(pids: Sequence[int]) -> CpuAccount:
    service = warm = children = 0
    for pid in pids:
        stat = _stat_fields(pid)
        if stat is None:
            continue
        own, reaped = int(stat[11]) + int(stat[12]), int(stat[13]) + int(stat[14])
        if _is_warm_process(pid):
            warm, children = warm + own, children + reaped
        else:  # a warm process ends in its parent's reaped time only when it exits
            service += own + reaped
    return CpuAccount(
        service / _CLOCK_TICKS, warm / _CLOCK_TICKS, children / _CLOCK_TICKS, _machine_busy()
    )


def own_cpu_s(pid: int) -> float:
    """CPU-seconds (user + system) of one process's own threads, none of its children's."""
    stat = _stat_fields(pid)
    return 0.0 if stat is None else (int(stat[11]) + int(stat[12])) / _CLOCK_TICKS


def _is_warm_process(pid: int) -> bool:
    try:
        return b"grader.sandbox.warm_process" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _machine_busy() -> float:
    """Seconds of CPU the machine spent on anything, from /proc/stat: all but idle and iowait."""
    fields = [int(value) for value in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    idle = fields[3] + fields[4]
    return (sum(fields[:8]) - idle) / _CLOCK_TICKS


@dataclass(frozen=True)
class Memory:
    pss_bytes: int  # proportional: a page shared by n processes counts 1/n in each
    rss_bytes: int  # resident: shared pages counted in every process that maps them


def memory(pids: Sequence[int]) -> Memory:
    pss = rss = 0
    for pid in pids:
        try:
            lines = Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()
        except OSError:
            continue
        for line in lines:
            key, _, value = line.partition(":")
            if key == "Pss":
                pss += int(value.split()[0]) * 1024
            elif key == "Rss":
                rss += int(value.split()[0]) * 1024
    return Memory(pss, rss)


def mib(size: int) -> str:
    return f"{size / (1 << 20):7.0f} MiB"
