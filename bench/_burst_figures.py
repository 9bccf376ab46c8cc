"""What a deadline burst measured, as the student and the operator see it, and the service
level it is held to (issue 29's goals).

Capacity time: the earliest the last report could come on the cores the service was left, had
they done nothing but the service's own work, measured in the same run (its process tree's CPU
per grading, c): first arrival + N x c / cores left, and never before the last arrival + c.
The cores left are the machine's, less the busy run's hog (one core) and the client's own CPU
share (a class's browsers are not on the server). The last report within capacity time + 10%
means the service never left a core idle while work waited, nor made anyone wait by refusing.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from _burst_client import Burst, Outcome
from _common import CpuAccount, percentile
from _mix import Verdict, expected_verdict


@dataclass(frozen=True)
class Scenario:
    mode: str  # "embedded" or "workers"
    rate: float  # arrivals per second
    busy: bool  # a CPU hog on one core during the burst
    follow: str  # "wait" (long polls, as the page) or "poll" (the old page)
    cgroup: bool = True  # the service in a CPU cgroup of its own (bench/_cgroup.py)

    def __str__(self) -> str:
        load = "busy" if self.busy else "quiet"
        follow = "" if self.follow == "wait" else ", clients polling"
        shape = "" if self.cgroup else ", in the host's sessions"
        return f"{self.mode} {self.rate:.3g}/s {load}{follow}{shape}"


@dataclass(frozen=True)
class Spent:
    """CPU-seconds spent during the burst, by whom."""

    service: CpuAccount  # the service's process tree, and the machine
    api_s: float  # the API process's own threads (neither workers nor sandbox children)
    client_s: float
    hog_s: float


@dataclass(frozen=True)
class Figures:
    scenario: Scenario
    students: int
    graded: int
    lost: int
    wrong: list[str]
    refusals: Counter[int]
    students_refused: int
    http_5xx: int
    codes: Counter[str]
    errors: Counter[str]
    report_s: Mapping[int, float]  # POST to report as the student sees it, by percentile
    accepted_s: Mapping[int, float]  # first POST to its accepting answer
    post_answer_s: Mapping[int, float]  # each POST's round trip, refused ones included
    sent_to_stored_s: Mapping[int, float]  # the accepted POST, until the service stored it
    stored_to_answered_s: Mapping[int, float]  # and from then until its answer came
    dropped: int  # requests sent again on a new connection
    first_arrival_s: float
    last_arrival_s: float
    last_report_s: float
    capacity_s: float
    cores_left: float
    tree_ms: float  # per grading, and what follows too
    api_ms: float
    work_ms: float  # the in-process work of the same mix
    spent: Spent
    places_told: int
    places_implausible: int
    estimate_over_actual: float | None  # median, over students told an estimate
    gets_per_student: float
    wait_ignored: int  # students whose long polls the server answered at once
    wall_s: float
    loadavg: str

    @property
    def failed(self) -> bool:
        """What makes a run fail, whatever the goals say."""
        return bool(self.lost or self.wrong or self.http_5xx)

    @property
    def over_work(self) -> float:
        return self.tree_ms / self.work_ms


def figures(
    scenario: Scenario,
    outcomes: Sequence[Outcome],
    *,
    held: Mapping[str, Verdict],
    burst: Burst,
    spent: Spent,
    work_s: float,
    cores: int,
    loadavg: str,
) -> Figures:
    codes, wall_s = burst.codes, burst.wall_s
    graded = [o for o in outcomes if o.reported_s is not None and o.posted_s is not None]
    n = max(len(graded), 1)
    tree_s = spent.service.tree / n
    first = min(o.student.arrival_s for o in outcomes)
    last = max(o.student.arrival_s for o in outcomes)
    cores_left = cores - (1 if scenario.busy else 0) - spent.client_s / wall_s
    told = [o.place for o in outcomes if o.place is not None]
    return Figures(
        scenario=scenario,
        students=len(outcomes),
        graded=len(graded),
        lost=sum(1 for o in outcomes if o.submission_id not in held),
        wrong=wrong_verdicts(outcomes, held),
        refusals=Counter(code for o in outcomes for code in o.refusals),
        students_refused=sum(1 for o in outcomes if o.refusals),
        http_5xx=sum(count for code, count in codes.items() if code.split()[1].startswith("5")),
        codes=codes,
        errors=Counter((o.error or "").split(":")[0] for o in outcomes if o.error),
        report_s=percentiles([(o.reported_s or 0.0) - (o.posted_s or 0.0) for o in graded]),
        accepted_s=percentiles(
            [o.accepted_s - o.posted_s for o in outcomes if o.accepted_s and o.posted_s]
        ),
        post_answer_s=percentiles([answer for o in outcomes for answer in o.post_answers_s]),
        sent_to_stored_s=percentiles(
            [o.stored_at - o.sent_at for o in outcomes if o.stored_at and o.sent_at]
        ),
        stored_to_answered_s=percentiles(
            [o.answered_at - o.stored_at for o in outcomes if o.answered_at and o.stored_at]
        ),
        dropped=burst.dropped,
        first_arrival_s=first,
        last_arrival_s=last,
        # Never, while anyone is left without a report.
        last_report_s=max(o.reported_s or 0.0 for o in graded)
        if len(graded) == len(outcomes)
        else float("inf"),
        capacity_s=max(first + len(outcomes) * tree_s / cores_left, last + tree_s),
        cores_left=cores_left,
        tree_ms=tree_s * 1000,
        api_ms=spent.api_s / n * 1000,
        work_ms=work_s * 1000,
        spent=spent,
        places_told=len(told),
        places_implausible=sum(1 for place in told if not place.plausible),
        estimate_over_actual=estimate_accuracy(outcomes),
        gets_per_student=sum(o.gets for o in outcomes) / len(outcomes),
        wait_ignored=sum(1 for o in outcomes if o.wait_ignored),
        wall_s=wall_s,
        loadavg=loadavg,
    )


def percentiles(values: Sequence[float]) -> dict[int, float]:
    return {q: percentile(values, q) if values else float("nan") for q in (50, 95, 99)}


def wrong_verdicts(outcomes: Sequence[Outcome], held: Mapping[str, Verdict]) -> list[str]:
    """Every report, as the student saw it and as the service holds it, against the expected."""
    wrong = []
    for outcome in outcomes:
        expected = expected_verdict(outcome.student.job.name)
        seen = [outcome.verdict, held.get(outcome.submission_id or "")]
        if any(verdict is not None and verdict != expected for verdict in seen):
            wrong.append(f"{outcome.student.job.name}: got {seen[0]}, expected {expected}")
    return wrong


def estimate_accuracy(outcomes: Sequence[Outcome]) -> float | None:
    """The median of estimate / actual wait, over the students told an estimate."""
    ratios = [
        o.place.estimate_s / (o.reported_s - o.place.told_s)
        for o in outcomes
        if o.place and o.place.estimate_s is not None and o.reported_s
        if o.reported_s > o.place.told_s
    ]
    return statistics.median(ratios) if ratios else None


def describe(f: Figures) -> str:
    c, a, cpu, n = f.report_s, f.accepted_s, f.spent.service, max(f.graded, 1)
    place = (
        f"{f.places_told} told a place in line, {f.places_implausible} implausible; median "
        f"estimate / actual wait {f.estimate_over_actual or float('nan'):.2f}"
        if f.places_told
        else "no place in line told"
    )
    return "\n".join(
        [
            f"== {f.scenario}: {f.students} students (loadavg {f.loadavg})",
            f"  reported {f.graded}, lost {f.lost}, wrong verdicts {len(f.wrong)}, 5xx "
            f"{f.http_5xx}, refusals honoured {dict(f.refusals) or 'none'} "
            f"({f.students_refused} students refused at least once); "
            f"errors {dict(f.errors) or 'none'}",
            f"  HTTP answers {dict(sorted(f.codes.items()))}, {f.dropped} sent again on a new "
            f"connection; GETs per student {f.gets_per_student:.1f}; {f.wait_ignored} "
            "students' long polls not held",
            f"  POST to report as the student sees it: p50 {c[50]:.2f} s, p95 {c[95]:.2f} s, "
            f"p99 {c[99]:.2f} s; POST accepted p50 {a[50]:.3f} s, p95 {a[95]:.3f} s (each POST "
            f"answered p50 {f.post_answer_s[50]:.3f} s, p95 {f.post_answer_s[95]:.3f} s)",
            f"  the accepted POST: sent to stored p50 {f.sent_to_stored_s[50]:.3f} s, p95 "
            f"{f.sent_to_stored_s[95]:.3f} s; stored to answered p50 "
            f"{f.stored_to_answered_s[50]:.3f} s, p95 {f.stored_to_answered_s[95]:.3f} s",
            f"  arrivals {f.first_arrival_s:.1f}..{f.last_arrival_s:.1f} s; last report at "
            f"{f.last_report_s:.1f} s, capacity time {f.capacity_s:.1f} s "
            f"({f.cores_left:.2f} cores left): {f.last_report_s / f.capacity_s:.2f}x",
            f"  CPU per grading: service's tree {f.tree_ms:.1f} ms = {f.over_work:.2f}x the "
            f"in-process work ({f.work_ms:.1f} ms); API process {f.api_ms:.1f} ms, other service "
            f"processes {cpu.service / n * 1000 - f.api_ms:.1f}, warm {cpu.warm / n * 1000:.1f}, "
            f"children {cpu.children / n * 1000:.1f}; machine {cpu.machine / n * 1000:.1f} ms",
            f"  client CPU {f.spent.client_s:.1f} s, hog {f.spent.hog_s:.1f} s, "
            f"over {f.wall_s:.1f} s; {place}",
            *(f"  wrong: {line}" for line in f.wrong[:5]),
        ]
    )


@dataclass(frozen=True)
class Goal:
    figure: str
    goal: str
    about: Callable[[Scenario], bool]  # the runs it is measured on
    measured: Callable[[Figures], str]
    holds: Callable[[Figures], bool]


def _refusals(f: Figures) -> str:
    return f"{f.lost} / {f.students_refused} / {f.http_5xx}"


def _none_refused(f: Figures) -> bool:
    return not (f.lost or f.students_refused or f.http_5xx)


GOALS = (
    Goal(
        "1,000 in 60 s: lost / refused / 5xx",
        "0 / 0 / 0, busy too",
        lambda s: s.mode == "embedded" and s.rate < 20,
        _refusals,
        _none_refused,
    ),
    Goal(
        "1,000 in 60 s: p99 POST-to-report",
        "<= 3 s quiet",
        lambda s: s.mode == "embedded" and s.rate < 20 and not s.busy,
        lambda f: f"{f.report_s[99]:.2f} s",
        lambda f: f.report_s[99] <= 3.0,
    ),
    Goal(
        "1,000 in 25 s: lost / refused / 5xx",
        "0 / 0 / 0",
        lambda s: s.mode == "embedded" and s.rate >= 20,
        _refusals,
        _none_refused,
    ),
    Goal(
        "1,000 in 25 s: last report / capacity time",
        "<= 1.10",
        lambda s: s.mode == "embedded" and s.rate >= 20,
        lambda f: (
            f"{f.last_report_s:.1f} / {f.capacity_s:.1f} s = {f.last_report_s / f.capacity_s:.2f}"
        ),
        lambda f: f.last_report_s <= 1.1 * f.capacity_s,
    ),
    Goal(
        "POST accepted p95",
        "<= 0.2 s",
        lambda s: s.mode == "workers",
        lambda f: f"{f.accepted_s[95]:.3f} s",
        lambda f: f.accepted_s[95] <= 0.2,
    ),
    Goal(
        "service CPU per grading / in-process work",
        "<= 1.8x",
        lambda s: not s.busy,
        lambda f: f"{f.tree_ms:.1f} / {f.work_ms:.1f} ms = {f.over_work:.2f}x",
        lambda f: f.over_work <= 1.8,
    ),
    Goal(
        "API CPU per grading, clients waiting",
        "<= 8 ms",
        lambda s: not s.busy and s.follow == "wait",
        lambda f: f"{f.api_ms:.1f} ms",
        lambda f: f.api_ms <= 8.0,
    ),
)


def goals_table(runs: Sequence[Figures]) -> str:
    rows = [("figure", "goal", "measured", "holds?"), ("---", "---", "---", "---")]
    for goal in GOALS:
        for run in runs:
            if goal.about(run.scenario):
                holds = "yes" if goal.holds(run) else "NO"
                rows.append(
                    (f"{run.scenario}: {goal.figure}", goal.goal, goal.measured(run), holds)
                )
    return "\n".join("| " + " | ".join(row) + " |" for row in rows)
