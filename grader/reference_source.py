"""The static check of an exercise's reference module: read and parsed, never run.

A catalog scan (`autograder exercises`, `doctor`, the service's reload) checks every folder this
way, so that listing exercises imports no torch. A reference that parses but fails when run (an
import error, an exception at import, a crash on a test) is found where it is really loaded:
building the exercise's plan (`grader.plan_building`), which sets the exercise apart as broken
with the same kind of one-line problem.
"""

from __future__ import annotations

import ast

from grader.errors import DefinitionProblem, ExerciseDefinitionError
from grader.spec import Exercise, module_path

# Statements whose bodies still bind names of the module itself (`try: ... except ImportError:`).
_BLOCKS = (ast.If, ast.Try, ast.TryStar, ast.With, ast.For, ast.While)


def check_reference(exercise: Exercise) -> None:
    """Raise ExerciseDefinitionError unless the reference parses and defines the entry point at
    its top level."""
    spec = exercise.spec
    file = module_path(spec.reference)
    try:
        source = exercise.reference_file.read_bytes()
        tree = ast.parse(source, filename=str(exercise.reference_file))
    except OSError as error:
        raise _error(file, "-", f"a readable file ({error.strerror})") from error
    except (SyntaxError, ValueError) as error:  # ValueError: a null byte in the source
        line = f"line {error.lineno}: " if isinstance(error, SyntaxError) else ""
        message = error.msg if isinstance(error, SyntaxError) else str(error)
        raise _error(file, "-", f"valid Python ({line}{message})") from error
    names = _module_names(tree.body)
    for entry_point in (spec.entry_point, *spec.entries):
        if entry_point not in names and "*" not in names:
            raise _error(file, entry_point, "defined: the entry point")


def _module_names(statements: list[ast.stmt]) -> set[str]:
    """The names these statements bind in the module's namespace ("*" for a star import, which
    may bind anything)."""
    names: set[str] = set()
    for statement in statements:
        if isinstance(statement, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(statement.name)
        elif isinstance(statement, ast.Import | ast.ImportFrom):
            names.update((alias.asname or alias.name).split(".")[0] for alias in statement.names)
        elif isinstance(statement, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            names.update(
                node.id
                for target in targets
                for node in ast.walk(target)
                if isinstance(node, ast.Name)
            )
        elif isinstance(statement, _BLOCKS):
            names |= _module_names(_bodies(statement))
    return names


def _bodies(block: ast.stmt) -> list[ast.stmt]:
    handlers = getattr(block, "handlers", [])
    parts = [getattr(block, name, []) for name in ("body", "orelse", "finalbody")]
    return [statement for part in parts + [h.body for h in handlers] for statement in part]


def _error(file: str, field: str, expected: str) -> ExerciseDefinitionError:
    return ExerciseDefinitionError([DefinitionProblem(file, field, expected)])
