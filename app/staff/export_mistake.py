"""`autograder export-mistake COURSE EXERCISE CODE [--into FOLDER]` (declared in `app.cli`): a
mistake the course's staff named (app.courses.models.CourseMistake) written into the exercise's
folder as a known-wrong variant (docs/exercises.md, "A file that is its own variant"): one
example submission of the group as `mistakes/<code with _>.py`, and its entry in
`mistakes/mistakes.toml` with `diagnosis` = the code and `variant = {message, concepts}`. Then
`autograder check-exercise` proves it with the exercise's other mistakes, and every course knows
it once the exercise is deployed.
"""

from __future__ import annotations

import argparse
import json
import tomllib
from pathlib import Path

from sqlalchemy import select

from app.core.commands import CommandRefused
from app.core.db import Database
from app.core.models import Course, Submission
from app.core.settings import get_settings
from app.courses.mistakes import student_message
from app.courses.models import CourseMistake
from app.grading.models import OutcomeKind, ReportOutcome
from grader.cli_output import EXIT_OK
from grader.settings import GraderSettings

MISTAKES_FILE = "mistakes.toml"


def export_mistake(args: argparse.Namespace, engine: GraderSettings) -> int:
    folder: Path = args.into or engine.exercises_dir / args.exercise
    index = folder / "mistakes" / MISTAKES_FILE
    if not (folder / "exercise.toml").is_file():
        raise CommandRefused(f"{folder} is not an exercise's folder (it has no exercise.toml)")
    stem = args.code.replace("-", "_")
    source = folder / "mistakes" / f"{stem}.py"
    declared = tomllib.loads(index.read_text(encoding="utf-8")) if index.is_file() else {}
    if source.exists() or stem in declared:
        raise CommandRefused(f"{source} or its entry in {index} exists already")
    database = Database.from_url(get_settings().sqlalchemy_url())
    try:
        mistake, example = _named(database, args.course, args.exercise, args.code)
    finally:
        database.close()
    source.parent.mkdir(exist_ok=True)
    source.write_text(example, encoding="utf-8")
    with index.open("a", encoding="utf-8") as file:
        file.write(declaration(stem, mistake))
    print(f"wrote {source} and its entry in {index}; now run `autograder check-exercise`")
    return EXIT_OK


def declaration(stem: str, mistake: CourseMistake) -> str:
    """The mistake's entry in mistakes.toml. (A JSON string is a TOML basic string.)"""
    concepts = ", ".join(json.dumps(tag) for tag in mistake.concepts)
    message = json.dumps(student_message(mistake), ensure_ascii=False)
    return (
        f"\n[{stem}]\n"
        f"description = {json.dumps(mistake.message, ensure_ascii=False)}\n"
        f"diagnosis = {json.dumps(mistake.code)}\n"
        f"variant = {{ message = {message}, concepts = [{concepts}] }}\n"
    )


def _named(database: Database, course: str, exercise: str, code: str) -> tuple[CourseMistake, str]:
    """The mistake, and the source of the first submission that got it."""
    with database.session() as session:
        mistake = session.scalars(
            select(CourseMistake).where(
                CourseMistake.course_id == Course.id,
                Course.slug == course,
                CourseMistake.exercise == exercise,
                CourseMistake.code == code,
            )
        ).one_or_none()
        if mistake is None:
            raise CommandRefused(f"course {course!r} named no mistake {code!r} of {exercise!r}")
        example = session.scalars(
            select(Submission.source)
            .where(
                Submission.course_id == mistake.course_id,
                Submission.exercise == exercise,
                ReportOutcome.submission_id == Submission.id,
                ReportOutcome.kind == OutcomeKind.FINDING,
                ReportOutcome.name == code,
            )
            .order_by(Submission.id)
            .limit(1)
        ).one()
        session.expunge(mistake)
        return mistake, example
