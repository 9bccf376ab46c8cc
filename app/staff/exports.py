"""A course's files for its staff: the gradebook as CSV, and an exercise's submissions (code
and report each, with a manifest) as a zip, for a spreadsheet, an LMS import, an offline review
or an instructor's own similarity check. Their CSV is written by app.staff.spreadsheet, which no
spreadsheet runs as formulas."""

from __future__ import annotations

import io
import json
import tempfile
import zipfile
from collections.abc import Iterator
from typing import IO

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core.models import Submission
from app.lti.roster_view import enrolled_students
from app.staff.scores import graded, student_scores
from app.staff.spreadsheet import SafeCsvWriter
from grader.catalog import Catalog

_CHUNK = 64 * 1024
NOT_SUBMITTED = "not submitted"
# Rows loaded at a time while the zip is written: its memory stays bounded by this.
_ROWS_AT_ONCE = 500
# The gradebook's second row, under the heading: each exercise's maximum. Canvas writes the same
# row in its own export and skips it on import; a spreadsheet divides by it.
POINTS_POSSIBLE = "Points Possible"
MANIFEST = (
    "id",
    "student_id",
    "created_at",
    "exercise_version",
    "report_status",
    "score",
    "max_score",
)


def _score(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def gradebook_csv(session: Session, course_id: int, catalog: Catalog) -> str:
    """One row per student (who submitted, or is enrolled in the LMS roster), a column per
    exercise served: the gradebook score (by the exercise's policy, its late penalty applied),
    empty where the student has none; then `late` (the exercises whose score is a late
    submission's, space-separated), their name in the roster, and whether they submitted
    anything. Under the heading, the row of each exercise's maximum."""
    exercises = list(catalog)
    slugs = [exercise.spec.slug for exercise in exercises]
    scores = student_scores(course_id)
    rows = session.execute(
        select(scores.c.student_id, scores.c.exercise, scores.c.score, scores.c.late)
    ).all()
    enrolled = enrolled_students(session, course_id)
    by_student: dict[str, dict[str, float | None]] = {student: {} for student in enrolled}
    late: dict[str, list[str]] = {}
    for student, exercise, score, was_late in rows:
        by_student.setdefault(student, {})[exercise] = score
        if was_late:
            late.setdefault(student, []).append(exercise)
    out = io.StringIO()
    writer = SafeCsvWriter(out)
    writer.writerow(["student_id", *slugs, "late", "name", "status"])
    maxima = (_score(exercise.spec.max_score) for exercise in exercises)
    writer.writerow([POINTS_POSSIBLE, *maxima, "", "", ""])
    for student, scored in sorted(by_student.items()):
        cells = (_score(scored.get(slug)) for slug in slugs)
        late_ones = " ".join(slug for slug in slugs if slug in late.get(student, ()))
        status = "submitted" if scored else NOT_SUBMITTED
        writer.writerow([student, *cells, late_ones, enrolled.get(student, ""), status])
    return out.getvalue()


def export_zip(session: Session, course_id: int, exercise: str) -> IO[bytes]:
    """Every graded submission of the exercise: `submissions/<id>.py` (its code),
    `submissions/<id>.json` (its report) and `manifest.csv` (a row each), in a temporary file
    (deleted once closed), read from its start."""
    spool = tempfile.TemporaryFile()  # noqa: SIM115 (the caller closes it; here on failure)
    try:
        with zipfile.ZipFile(spool, "w", zipfile.ZIP_DEFLATED) as archive:
            manifest = io.StringIO()
            writer = SafeCsvWriter(manifest)
            writer.writerow(MANIFEST)
            for row in _submissions(session, course_id, exercise):
                archive.writestr(f"submissions/{row.id}.py", row.source)
                archive.writestr(f"submissions/{row.id}.json", json.dumps(row.report, indent=2))
                writer.writerow(_manifest_row(row))
            archive.writestr("manifest.csv", manifest.getvalue())
    except BaseException:
        spool.close()
        raise
    spool.seek(0)
    return spool


def _submissions(session: Session, course_id: int, exercise: str) -> Iterator[Submission]:
    query = (
        select(Submission)
        .where(graded(course_id, exercise))
        .order_by(Submission.id)
        .execution_options(yield_per=_ROWS_AT_ONCE)
    )
    for row in session.scalars(query):
        yield row
        session.expunge(row)  # done with: let it go


def _manifest_row(row: Submission) -> list[str | None]:
    return [
        row.id,
        row.student_id,
        row.created_at.isoformat(),
        row.exercise_version or "",
        row.report_status or "",
        _score(row.score),
        _score(row.max_score),
    ]


def chunks(file: IO[bytes]) -> Iterator[bytes]:
    """The file's bytes in chunks, and the file closed after the last."""
    with file:
        while chunk := file.read(_CHUNK):
            yield chunk
