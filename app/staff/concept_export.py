"""A course's concept figures (app.staff.concept_stats) as files for its staff: CSV, a row per
concept and a column per week, for a spreadsheet's chart; and JSON, the API's document."""

from __future__ import annotations

import io

from app.staff.concept_schemas import CourseConcepts
from app.staff.spreadsheet import SafeCsvWriter


def concepts_csv(figures: CourseConcepts) -> str:
    """A row per concept: its tag, its description, the students who hold it as of each week's
    end (a column per week, headed by its Monday) and now."""
    out = io.StringIO()
    writer = SafeCsvWriter(out)
    writer.writerow(
        ["concept", "description", *(week.start.isoformat() for week in figures.weeks), "now"]
    )
    for curve in figures.concepts:
        writer.writerow([curve.concept, curve.description, *curve.weekly, curve.students])
    return out.getvalue()


def concepts_json(figures: CourseConcepts) -> str:
    return figures.model_dump_json(indent=2)
