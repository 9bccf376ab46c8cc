"""The course figures of app.staff recounted in plain Python from the reports' JSON, read back
from the database: the independent answer the SQL figures are checked against."""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select

from app.core.db import Database
from app.core.models import Submission, SubmissionStatus
from grader.spec import Exercise

BINS = 10


@dataclass(frozen=True)
class Graded:
    id: str
    exercise: str
    student: str | None
    created_at: datetime
    report: dict[str, Any]

    @property
    def status(self) -> str:
        return str(self.report["status"])

    @property
    def fraction(self) -> float:
        return float(self.report["score"]) / float(self.report["max_score"])


def read_graded(database: Database, course_id: int) -> list[Graded]:
    """The course's graded submissions, in id order."""
    with database.session() as session:
        rows = session.execute(
            select(
                Submission.id,
                Submission.exercise,
                Submission.student_id,
                Submission.created_at,
                Submission.report,
            )
            .where(Submission.course_id == course_id, Submission.status == SubmissionStatus.DONE)
            .order_by(Submission.id)
        ).all()
    return [Graded(*row) for row in rows]


def gradebook(submissions: list[Graded], policy: str) -> dict[str, dict[str, Any]]:
    """Per student: best, latest, max score (of the latest), attempts, passed, score, fraction."""
    by_student: dict[str, list[Graded]] = defaultdict(list)
    for submission in submissions:
        if submission.student is not None:
            by_student[submission.student].append(submission)
    book = {}
    for student, own in by_student.items():
        scored = [s for s in own if s.status != "error"]
        best = max((s.report["score"] for s in scored), default=None)
        latest = scored[-1] if scored else None
        score = latest.report["score"] if policy == "latest" and latest else best
        max_score = latest.report["max_score"] if latest else None
        book[student] = {
            "best": best,
            "latest": latest.report["score"] if latest else None,
            "max_score": max_score,
            "attempts": len(own),
            "passed": any(s.status == "passed" for s in own),
            "score": score,
            "fraction": None if score is None or max_score is None else score / max_score,
        }
    return book


def exercise_figures(
    submissions: list[Graded], exercise: Exercise, policy: str, mistakes: dict[str, str]
) -> dict[str, Any]:
    """The figures of `GET .../exercises/{slug}/stats`, less its names and version."""
    students = {s.student for s in submissions if s.student is not None}
    passed = {s.student for s in submissions if s.status == "passed" and s.student is not None}
    fractions = [
        figures["fraction"]
        for figures in gradebook(submissions, policy).values()
        if figures["fraction"] is not None
    ]
    bins = Counter(min(int(value * BINS), BINS - 1) for value in fractions)
    return {
        "gradebook": policy,
        "submissions": len(submissions),
        "students": len(students),
        "passed_students": len(passed),
        "outdated_submissions": sum(
            s.report["exercise_version"] != exercise.version for s in submissions
        ),
        "score_histogram": [
            {"low": n / BINS, "high": (n + 1) / BINS, "students": bins[n]} for n in range(BINS)
        ],
        "tests": _tests(submissions, exercise),
        "misconceptions": _misconceptions(submissions, mistakes),
        "properties": _properties(submissions, exercise),
        "attempts_to_pass": _attempts_to_pass(submissions, len(students)),
        "timeline": _timeline(submissions),
    }


def mean_score(submissions: list[Graded], policy: str) -> float | None:
    fractions = [
        figures["fraction"]
        for figures in gradebook(submissions, policy).values()
        if figures["fraction"] is not None
    ]
    return statistics.fmean(fractions) if fractions else None


def _tests(submissions: list[Graded], exercise: Exercise) -> list[dict[str, Any]]:
    ran: Counter[str] = Counter()
    passed: Counter[str] = Counter()
    for submission in submissions:
        if submission.status in ("passed", "failed"):
            for test in submission.report["tests"]:
                ran[test["name"]] += 1
                passed[test["name"]] += test["status"] == "passed"
    return [
        {
            "name": test.name,
            "visibility": test.visibility.value,
            "submissions": ran[test.name],
            "passed": passed[test.name],
            "pass_rate": passed[test.name] / ran[test.name] if ran[test.name] else None,
        }
        for test in exercise.spec.tests
    ]


def _misconceptions(submissions: list[Graded], mistakes: dict[str, str]) -> dict[str, Any]:
    failing = [s for s in submissions if s.status == "failed"]
    failing_students = {s.student for s in failing if s.student is not None}
    by_code: dict[str, list[Graded]] = defaultdict(list)
    for submission in failing:
        for code in {finding["code"] for finding in submission.report["diagnosis"]}:
            by_code[code].append(submission)
    unknown = [s for s in failing if not s.report["diagnosis"]]

    def figures(among: list[Graded]) -> dict[str, Any]:
        students = {s.student for s in among if s.student is not None}
        share = len(students) / len(failing_students) if failing_students else 0.0
        return {"students": len(students), "submissions": len(among), "share": share}

    known = [
        {"code": code, "message": mistakes.get(code, code), **figures(by_code[code])}
        for code in {*mistakes, *by_code}
    ]
    return {
        "failing_students": len(failing_students),
        "failing_submissions": len(failing),
        "known": sorted(known, key=lambda mistake: (-mistake["students"], mistake["code"])),
        "unrecognised": figures(unknown),
    }


def _properties(submissions: list[Graded], exercise: Exercise) -> list[dict[str, Any]]:
    names = [prop.value for prop in exercise.spec.properties]
    checked: Counter[str] = Counter()
    failed: Counter[str] = Counter()
    failed_students: dict[str, set[str]] = {name: set() for name in names}
    for submission in submissions:
        for check in submission.report["properties"]:
            checked[check["name"]] += check["status"] != "skipped"
            if check["status"] == "failed":
                failed[check["name"]] += 1
                if submission.student is not None:
                    failed_students[check["name"]].add(submission.student)
    return [
        {
            "name": name,
            "checked": checked[name],
            "failed": failed[name],
            "failed_students": len(failed_students[name]),
        }
        for name in names
    ]


def _attempts_to_pass(submissions: list[Graded], students: int) -> dict[str, Any]:
    seen: Counter[str] = Counter()
    first_pass: dict[str, int] = {}
    for submission in submissions:  # in id order
        if submission.student is None or submission.student in first_pass:
            continue
        seen[submission.student] += 1
        if submission.status == "passed":
            first_pass[submission.student] = seen[submission.student]
    counts = Counter(first_pass.values())
    return {
        "histogram": [{"attempts": k, "students": counts[k]} for k in sorted(counts)],
        "median": statistics.median(first_pass.values()) if first_pass else None,
        "never_passed": students - len(first_pass),
    }


def _timeline(submissions: list[Graded]) -> list[dict[str, Any]]:
    by_day: dict[str, list[Graded]] = defaultdict(list)
    for submission in submissions:
        by_day[submission.created_at.date().isoformat()].append(submission)
    days = []
    for day in sorted(by_day):
        own = by_day[day]
        scored = [s.fraction for s in own if s.status != "error"]
        days.append(
            {
                "day": day,
                "submissions": len(own),
                "students": len({s.student for s in own if s.student is not None}),
                "passed_submissions": sum(s.status == "passed" for s in own),
                "mean_score": statistics.fmean(scored) if scored else None,
            }
        )
    return days
