"""Fair order on the embedded path, on SQLite and PostgreSQL: with grading held back, a student's
first submission is graded before another student's resubmissions of the same minute; two
grading threads grade each submission once and leave none. (The scale-out task's order:
tests/app/scaleout/test_scaleout.py; racing graders: test_leases.py.)"""

from __future__ import annotations

from app_support import (
    CORRECT,
    RUNS_PER_GRADING,
    SEED,
    ClientFactory,
    FakeSandbox,
    SettingsFactory,
    wait_until,
)


def test_a_first_submission_is_graded_before_anothers_resubmissions(
    make_client: ClientFactory,
    make_settings: SettingsFactory,
    database_url: str,
    sandbox: FakeSandbox,
) -> None:
    settings = make_settings(
        database_url=database_url, sandbox_slots=1, max_in_flight_per_student=10
    )
    client = make_client(settings)
    sandbox.gate.clear()  # the first grading blocks the only slot
    sources = [f"{CORRECT}\n# {n} ada" for n in range(5)] + [f"{CORRECT}\n# 0 bob"]
    for source in sources:
        body = {"exercise": SEED, "source": source, "student_id": source.rsplit(" ", 1)[-1]}
        assert client.post("/v1/submissions", json=body).status_code == 202
    sandbox.gate.set()
    wait_until(lambda: len([s for s in sandbox.runs if s in sources]) == 6 * RUNS_PER_GRADING)
    order = list(dict.fromkeys(s for s in sandbox.runs if s in sources))
    assert order == [sources[0], sources[5], *sources[1:5]]


def test_two_grading_threads_grade_each_submission_once_and_leave_none(
    make_client: ClientFactory,
    make_settings: SettingsFactory,
    database_url: str,
    sandbox: FakeSandbox,
) -> None:
    client = make_client(make_settings(database_url=database_url, sandbox_slots=2))
    sources = [f"{CORRECT}\n# {n} s{n % 7}" for n in range(20)]
    ids = []
    for source in sources:
        body = {"exercise": SEED, "source": source, "student_id": source.rsplit(" ", 1)[-1]}
        ids.append(client.post("/v1/submissions", json=body).json()["id"])

    def all_done() -> bool:
        return all(client.get(f"/v1/submissions/{i}").json()["status"] == "done" for i in ids)

    wait_until(all_done)
    assert [client.get(f"/v1/submissions/{i}").json()["attempts"] for i in ids] == [1] * 20
    assert all(sandbox.runs.count(source) == RUNS_PER_GRADING for source in sources)
