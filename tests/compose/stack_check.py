"""Steps 3 to 7 of `make compose-check` (tests/compose/check.sh), from outside the stack: every
request goes through the API's published port, as a user's would.

    stack_check.py grade       a correct and a wrong submission: verdicts and diagnosis
    stack_check.py readyz      the sandbox layers the containerized workers apply
    stack_check.py hostile     the whole hostile corpus through the API
    stack_check.py kill        a worker SIGKILLed mid-grade; the submission finishes elsewhere
    stack_check.py persisted   after `down` and `up`: the key and the submissions are still there

Environment: COMPOSE_CHECK_URL (the published address), COMPOSE_CHECK_KEY (an admin key),
COMPOSE_CHECK_WORK (check.sh's folder: .env, override.yml, the state kept between steps),
COMPOSE_CHECK_PROJECT (the compose project's name). The submissions are the seed exercise's
own proof files (exercises/<seed>/solutions and mistakes).
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

from grader.contract import Termination
from grader.sandbox import landlock

ROOT = Path(__file__).resolve().parents[2]
SEED = "multi-headed-self-attention"
EXERCISE = ROOT / "exercises" / SEED
CORRECT = (EXERCISE / "solutions" / "neetcode_common_answer.py").read_text()
WRONG = (EXERCISE / "mistakes" / "missing_scaling.py").read_text()
WRONG_DIAGNOSIS = "missing-scaling"
# About two seconds of work inside the sandbox (as tests/app/scaleout/test_worker_scaleout.py uses
# it): long enough to kill the worker that grades it while it does.
SLOW = f"{CORRECT}\ncount = 0\nfor i in range(12_000_000):\n    count += 1\n"
# What a hardened container lets the sandbox apply: no root, so neither namespaces nor a uid per
# slot (docker-compose.yml says why). Landlock where the kernel has it.
EXPECTED_LAYERS = {"process", "rlimits", "no_new_privs", "seccomp", "channel", "supervision"}
NEVER_LAYERS = {"unprivileged_uid"}
# Submissions of the corpus in flight at once: both slots of a worker and a queue behind them.
HOSTILE_CONCURRENCY = 4
WAIT_TIMEOUT_S = 180.0

WORK = Path(os.environ.get("COMPOSE_CHECK_WORK", "."))
STATE = WORK / "state.json"


def compose(*argv: str) -> str:
    command = [
        "docker",
        "compose",
        "--project-name",
        os.environ["COMPOSE_CHECK_PROJECT"],
        "--project-directory",
        str(ROOT),
        "--env-file",
        str(WORK / ".env"),
        "--file",
        str(ROOT / "docker-compose.yml"),
        "--file",
        str(WORK / "override.yml"),
        *argv,
    ]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout


def client() -> httpx.Client:
    return httpx.Client(
        base_url=os.environ["COMPOSE_CHECK_URL"],
        headers={"Authorization": f"Bearer {os.environ['COMPOSE_CHECK_KEY']}"},
        timeout=WAIT_TIMEOUT_S,
    )


def say(message: str) -> None:
    print(f"compose-check:   {message}", flush=True)


def fail(message: str) -> None:
    print(f"compose-check: FAILED: {message}", file=sys.stderr, flush=True)
    sys.exit(1)


def check(condition: bool, message: str) -> None:
    if not condition:
        fail(message)


def load_state() -> dict[str, Any]:
    state: dict[str, Any] = json.loads(STATE.read_text()) if STATE.exists() else {}
    return state


def save_state(**values: Any) -> None:
    STATE.write_text(json.dumps({**load_state(), **values}))


def submit(http: httpx.Client, source: str, exercise: str = SEED) -> dict[str, Any]:
    """Grade `source` and wait for the finished submission."""
    answer = http.post(
        "/v1/submissions", params={"wait": "true"}, json={"exercise": exercise, "source": source}
    )
    check(answer.status_code == 200, f"POST ?wait=true: {answer.status_code} {answer.text[:500]}")
    body: dict[str, Any] = answer.json()
    return body


def wait_for(what: str, condition: Callable[[], bool], timeout_s: float = WAIT_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            fail(f"not within {timeout_s:.0f} s: {what}")
        time.sleep(0.2)


# --- 3. grade ---------------------------------------------------------------------------------


def grade() -> None:
    with client() as http:
        right = submit(http, CORRECT)
        report = right["report"]
        check(
            right["status"] == "done" and report["status"] == "passed",
            f"the correct submission: {report}",
        )
        check(report["score"] == report["max_score"] > 0, f"its score: {report}")
        say(f"correct: passed, {report['score']}/{report['max_score']}")
        wrong = submit(http, WRONG)
        report = wrong["report"]
        codes = [finding["code"] for finding in report["diagnosis"]]
        check(report["status"] == "failed", f"the wrong submission: {report['status']}")
        check(codes == [WRONG_DIAGNOSIS], f"its diagnosis: {report['diagnosis']}")
        say(f"wrong: failed, {report['score']}/{report['max_score']}, diagnosis {codes}")
        save_state(graded={right["id"]: "passed", wrong["id"]: "failed"})


# --- 4. readyz --------------------------------------------------------------------------------


def readyz() -> None:
    with client() as http:
        answer = http.get("/readyz")
    check(answer.status_code == 200, f"/readyz: {answer.status_code} {answer.text[:500]}")
    readiness = answer.json()
    for entry in readiness["checks"]:
        say(f"check {entry['name']}: {'ok' if entry['ok'] else 'NOT OK'} ({entry['detail']})")
    layers = {layer["name"]: layer for layer in readiness["sandbox_layers"]}
    for name, layer in layers.items():
        say(f"layer {name}: {'active' if layer['active'] else 'inactive'} ({layer['detail']})")
    active = {name for name, layer in layers.items() if layer["active"]}
    check(active >= EXPECTED_LAYERS, f"layers not active: {sorted(EXPECTED_LAYERS - active)}")
    check(not NEVER_LAYERS & active, f"active where no root is: {sorted(NEVER_LAYERS & active)}")
    # The kernel of the host is the containers' own: Landlock is active where it has it.
    if landlock.abi():
        check("landlock" in active, "Landlock: the kernel has it, the workers do not apply it")
    save_state(layers={name: [layer["active"], layer["detail"]] for name, layer in layers.items()})


# --- 5. the hostile corpus --------------------------------------------------------------------


def hostile() -> None:
    # The corpus test's own table of cases, so that the two never drift apart.
    sys.path.insert(0, str(ROOT / "tests" / "security"))
    table = importlib.import_module("test_hostile")
    cases: list[Any] = table.CASES
    corpus: Path = table.CORPUS

    secret = _env_file()["AUTOGRADER_SECRET"]
    postgres_password = _env_file()["POSTGRES_PASSWORD"]
    started = time.monotonic()

    def run(case: Any) -> tuple[Any, dict[str, Any], float]:
        began = time.monotonic()
        with client() as http:
            body = submit(http, (corpus / f"{case.file}.py").read_text(), case.slug)
        return case, body, time.monotonic() - began

    problems: list[str] = []
    with ThreadPoolExecutor(HOSTILE_CONCURRENCY) as pool:
        for case, body, seconds in pool.map(run, cases):
            report = body["report"]
            text = json.dumps(body)
            visible = [test for test in report["tests"] if test["visibility"] == "visible"]
            # The exercise's own limits and forbidden list apply here, not the corpus test's
            # tight limits and replaced lists: where the verdict depends on those, only "not
            # passed" is asked; elsewhere the table's verdict and message, exactly.
            exact = (
                case.forbidden is None
                and case.layer is None
                and case.ending
                in (Termination.REJECTED, Termination.VIOLATION, Termination.COMPLETED)
            )
            verdict = f"{report['status']} ({', '.join(test['status'] for test in visible)})"
            if body["status"] != "done" or report["status"] == "passed":
                problems.append(f"{case.file}: {body['status']}, {verdict}")
            elif exact:
                statuses = {test["status"] for test in visible}
                # The cause is said once: on the report (a refusal, a stop outside any test) or
                # on the first test, as tests/security/test_hostile.py reads it.
                message = "\n".join([report["message"], *(test["message"] for test in visible[:1])])
                if statuses != {case.status.value} or case.message not in message:
                    problems.append(
                        f"{case.file}: {verdict}: {message[:200]!r}, expected "
                        f"{case.status.value}: {case.message!r}"
                    )
            for leaked, name in ((secret, "AUTOGRADER_SECRET"), (postgres_password, "password")):
                if leaked in text:
                    problems.append(f"{case.file}: the report holds the {name}")
            say(f"{case.file}: {verdict} in {seconds:.1f} s")
    say(f"{len(cases)} files in {time.monotonic() - started:.0f} s")
    check(not problems, "hostile corpus:\n  " + "\n  ".join(problems))
    with client() as http:
        after = submit(http, CORRECT)
    check(after["report"]["status"] == "passed", f"a correct one after the corpus: {after}")
    say("a correct submission after the corpus: passed")


def _env_file() -> dict[str, str]:
    lines = (WORK / ".env").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if "=" in line)


# --- 6. a worker killed mid-grade -------------------------------------------------------------


def kill() -> None:
    workers = compose("ps", "--quiet", "worker").split()
    check(len(workers) == 2, f"two workers, not {workers}")
    # A worker's name is autograder-PID@HOST, its host the container's short id.
    hosts = {
        subprocess.run(
            ["docker", "inspect", "--format", "{{.Config.Hostname}}", container],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip(): container
        for container in workers
    }
    with client() as http:
        answer = http.post("/v1/submissions", json={"exercise": SEED, "source": SLOW})
        check(answer.status_code == 202, f"POST: {answer.status_code} {answer.text[:300]}")
        submission_id = answer.json()["id"]
        holder: list[str] = []

        def graded_by_a_worker() -> bool:
            status = http.get(f"/v1/submissions/{submission_id}").json()["status"]
            lease = compose(
                "exec",
                "-T",
                "postgres",
                "psql",
                "--username=autograder",
                "--dbname=autograder",
                "--no-align",
                "--tuples-only",
                "--command",
                f"SELECT lease_holder FROM submissions WHERE id = '{submission_id}'",
            ).strip()
            host = lease.rpartition("@")[2]
            holder[:] = [hosts[host]] if host in hosts else []
            return status == "running" and bool(holder)

        wait_for("a worker grades it", graded_by_a_worker, timeout_s=60)
        victim = holder[0]
        subprocess.run(
            ["docker", "kill", "--signal", "KILL", victim], check=True, capture_output=True
        )
        killed_at = time.monotonic()
        say(f"SIGKILLed worker {victim[:12]} while it graded {submission_id}")

        def done() -> bool:
            body = http.get(f"/v1/submissions/{submission_id}").json()
            return bool(body["status"] == "done")

        wait_for("the submission finishes", done)
        body = http.get(f"/v1/submissions/{submission_id}").json()
    check(body["report"]["status"] == "passed", f"after the kill: {body['report']}")
    check(body["attempts"] == 2, f"attempts: {body['attempts']}")
    say(f"finished after the kill in {time.monotonic() - killed_at:.0f} s: passed, attempt 2")
    save_state(graded={**load_state()["graded"], submission_id: "passed"})


# --- 7. after `down` and `up` -----------------------------------------------------------------


def persisted() -> None:
    graded: dict[str, str] = load_state()["graded"]
    with client() as http:
        for submission_id, status in graded.items():
            answer = http.get(f"/v1/submissions/{submission_id}")
            check(answer.status_code == 200, f"{submission_id}: {answer.status_code}")
            report = answer.json()["report"]
            check(report["status"] == status, f"{submission_id}: {report['status']} not {status}")
        again = submit(http, CORRECT)
    check(again["report"]["status"] == "passed", f"a new submission: {again['report']}")
    say(f"the key still works, {len(graded)} submissions kept, a new one graded")


COMMANDS: dict[str, Callable[[], None]] = {
    "grade": grade,
    "readyz": readyz,
    "hostile": hostile,
    "kill": kill,
    "persisted": persisted,
}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in COMMANDS:
        sys.exit(f"usage: {sys.argv[0]} {'|'.join(COMMANDS)}")
    COMMANDS[sys.argv[1]]()
