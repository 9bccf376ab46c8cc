"""A busy machine does not decide a verdict: under three CPU hogs per CPU (six on two cores), an
endless loop still reads `timeout` (its CPU limit, the student's) and a correct submission still
passes.

Each hog runs in a session of its own, as other users' work does: the kernel shares the CPU
between sessions first (autogroup scheduling), so hogs started in this test's own session would
barely slow the sandboxed child, which runs in a session of its own. The exercise's limits are
cut so that the loop is over in seconds: half a second of CPU (RLIMIT_CPU counts whole seconds
from the fork: one) and 1.5 s of wall-clock time. Getting at most a quarter of a CPU, the loop
waits for one for two thirds of its wall time or more, which once made its time-out the
platform's fault ("submit it again"); it now needs a share above 1 s in 7.5 s (the ceiling).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator

import pytest

from grader.catalog import Catalog
from grader.report import ReportStatus, TestStatus
from grader.runner import Grader
from grader.sandbox.cpus import usable_cpus
from grader.sandbox.process import WarmProcessSandbox
from grader.settings import GraderSettings

SLUG = "multi-headed-self-attention"
HOGS_PER_CPU = 3
# A hog ends by itself after this long, should this test process die before its teardown.
HOG_LIFETIME_S = 150
HOG = f"""
import os, time
end = time.monotonic() + {HOG_LIFETIME_S}
os.write(1, b"spinning")
while time.monotonic() < end:
    pass
"""
SOLUTION = GraderSettings().exercises_dir / SLUG / "solutions" / "neetcode_common_answer.py"


@pytest.fixture(scope="module")
def grader(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Grader]:
    """The exercise with tight limits; its plan built and its warm process started before any
    hog runs, as on a service that was up before the deadline's rush."""
    folder = tmp_path_factory.mktemp("exercises") / SLUG
    shutil.copytree(GraderSettings().exercises_dir / SLUG, folder)
    toml = folder / "exercise.toml"
    limits = "[limits]\ncpu_s = 0.5\nwall_s = 1.5\n"
    toml.write_text(re.sub(r"\[limits\]\ncpu_s = .*\nwall_s = .*\n", limits, toml.read_text()))
    sandbox = WarmProcessSandbox(slots=2)
    try:
        grader = Grader(Catalog.from_folder(folder.parent), sandbox, "busy machine")
        assert grader.plan(SLUG).exercise.spec.limits.wall_s == 1.5
        sandbox.layers()
        yield grader
    finally:
        sandbox.close()


@pytest.fixture
def hogs() -> Iterator[None]:
    """Processes that spin, three per CPU, each in a session of its own, spinning before the
    test starts and killed (their whole group) after it."""
    started: list[subprocess.Popen[bytes]] = []
    try:
        for _ in range(HOGS_PER_CPU * usable_cpus()):
            hog = subprocess.Popen(
                [sys.executable, "-c", HOG], stdout=subprocess.PIPE, start_new_session=True
            )
            started.append(hog)
        for hog in started:
            assert hog.stdout is not None and hog.stdout.read(8) == b"spinning"
        yield
    finally:
        for hog in started:
            os.killpg(hog.pid, signal.SIGKILL)  # its own group: it leads its session
            hog.wait()
            if hog.stdout is not None:
                hog.stdout.close()


def endless_loop() -> str:
    """The correct answer, with a loop that never ends at the top of its forward pass."""
    source = SOLUTION.read_text()
    forward = re.search(r"\n( +)def forward\(self.*\n", source)
    assert forward is not None
    indent = forward.group(1) * 2
    loop = f"{indent}while True:\n{indent}    pass\n"
    return source[: forward.end()] + loop + source[forward.end() :]


@pytest.mark.slow
def test_under_cpu_hogs_an_endless_loop_is_a_timeout_and_a_correct_answer_passes(
    grader: Grader, hogs: None
) -> None:
    looping = grader.grade(SLUG, endless_loop())
    assert looping.status is ReportStatus.FAILED, looping.message
    statuses: dict[str, set[TestStatus]] = {}
    for test in looping.tests:
        statuses.setdefault(test.visibility.value, set()).add(test.status)
    assert statuses == {"visible": {TestStatus.TIMEOUT}, "hidden": {TestStatus.FAILED}}
    assert "CPU" in next(test.message for test in looping.tests if "not run" not in test.message)

    correct = grader.grade(SLUG, SOLUTION.read_text())
    assert correct.status is ReportStatus.PASSED, correct.message
