"""`utc_day(column)`: the UTC calendar day of a timestamp, as text YYYY-MM-DD, on both backends.

One expression for the queries that group by day (app.staff.stats); each backend spells it its
own way. SQLite holds UTC timestamps as text already (app.core.models.UTCDateTime), so their first
ten characters are the day; PostgreSQL's `timestamptz` is turned to UTC first, whatever the
session's time zone.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import String
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.functions import FunctionElement


class utc_day(FunctionElement[str]):  # noqa: N801 (used as a SQL function is)
    type = String()
    name = "utc_day"
    inherit_cache = True


@compiles(utc_day)
def _sqlite(element: utc_day, compiler: SQLCompiler, **kw: Any) -> str:
    return f"substr({compiler.process(element.clauses, **kw)}, 1, 10)"


@compiles(utc_day, "postgresql")
def _postgresql(element: utc_day, compiler: SQLCompiler, **kw: Any) -> str:
    column = compiler.process(element.clauses, **kw)
    return f"to_char({column} AT TIME ZONE 'UTC', 'YYYY-MM-DD')"
