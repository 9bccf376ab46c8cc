"""The first submission is taught too: plain findings, said once, before any named mistake.

Every student's first submission meets one of these: the starter handed back as it was given,
or an entry point that returns None, a value of the wrong type, an output of the wrong shape
(`grader.output_contract`) or an error every beginner meets (`grader.error_findings`). Each
per-test row keeps its short message; the finding says the fact once, with what to do about it.

A starter is recognised by its code, comments, blank lines and spacing aside: a student who only
edited its comments has still changed nothing. The source is compared token by token and the
comparison stops at the first difference, so it reads no more of the submission's tokens than
the starter has, however long or deeply nested the submission (none of it is parsed into a
tree here, where a deep one could exhaust the stack).
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Iterator, Mapping, Sequence
from itertools import zip_longest

from grader.contract import CallOutcome
from grader.error_findings import error_findings
from grader.output_contract import output_findings
from grader.plan import ExercisePlan, TestPlan
from grader.report import Finding

STARTER_CODE = "starter-unchanged"

_NOT_CODE = {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING}
# Tokens whose text is layout (how far a block is indented): only where they stand counts.
_LAYOUT = {tokenize.INDENT, tokenize.DEDENT, tokenize.NEWLINE, tokenize.ENDMARKER}
_PASS = "pass"
_RAISE = "raise NotImplementedError"


def plain_findings(
    plan: ExercisePlan,
    source: str | None,
    failing: Sequence[TestPlan],
    outcomes: Mapping[str, CallOutcome],
    diagnosis: Sequence[Finding],
) -> list[Finding]:
    """The plain findings of a submission's visible run, to list before `diagnosis`: the starter
    unchanged (where it fails a visible test) says it all; else what the entry point returns, on
    the visible tests that no finding of `diagnosis` already explains. `source` None: not known,
    no starter finding."""
    exercise = plan.exercise
    if failing and source is not None and is_starter(source, exercise.starter):
        tests = [test.spec.name for test in failing]
        return [Finding(code=STARTER_CODE, message=starter_message(exercise.starter), tests=tests)]
    explained = {test for finding in diagnosis for test in finding.tests}
    return output_findings(plan, outcomes, explained) + error_findings(plan, outcomes)


def is_starter(source: str, starter: str) -> bool:
    """Whether `source` is the starter's code, comments, blank lines and spacing aside."""
    try:
        pairs = zip_longest(_code_tokens(source), _code_tokens(starter))
        return all(ours == theirs for ours, theirs in pairs)
    except (tokenize.TokenError, SyntaxError, ValueError):  # not Python: not the starter
        return False


def _code_tokens(source: str) -> Iterator[tuple[int, str]]:
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in _NOT_CODE:
            yield token.type, "" if token.type in _LAYOUT else token.string


def starter_message(starter: str) -> str:
    """What the student is told of the starter: which of its functions are left to write."""
    unfinished = _unfinished(ast.parse(starter).body, "")
    if not unfinished:
        return "This is the starter as it was given: nothing of it is filled in yet."
    names = [f"`{name}`" for name, _ in unfinished]
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    markers = " or ".join(dict.fromkeys(f"`{marker}`" for _, marker in unfinished))
    return f"This is the starter as it was given: fill in {listed}, where it still has {markers}."


def _unfinished(body: list[ast.stmt], prefix: str) -> list[tuple[str, str]]:
    """The functions of a body (in its classes too) left for the student: each one's qualified
    name and how it ends, `pass` or `raise NotImplementedError`."""
    found = []
    for node in body:
        if isinstance(node, ast.ClassDef):
            found += _unfinished(node.body, f"{prefix}{node.name}.")
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            marker = _placeholder(node.body[-1])
            if marker is not None:
                found.append((f"{prefix}{node.name}", marker))
    return found


def _placeholder(last: ast.stmt) -> str | None:
    if isinstance(last, ast.Pass):
        return _PASS
    if isinstance(last, ast.Raise) and last.exc is not None:
        raised = last.exc.func if isinstance(last.exc, ast.Call) else last.exc
        if isinstance(raised, ast.Name) and raised.id == "NotImplementedError":
            return _RAISE
    return None
