"""Prove an exercise against its own files: the checks behind `autograder check-exercise`.

An exercise holds when:
- no file still carries the skeleton's FILL IN marks (`autograder new-exercise`);
- the reference builds the plan and keeps the exercise's properties (causality, ...);
- the starter runs under the policy and earns nothing;
- every file of `solutions/` passes every test with full marks;
- every file of `solutions/` gets no diagnosis (no trainability finding, where it costs no points);
- every file of `mistakes/` fails at least one visible test and gets exactly the diagnosis (or
  the two) `mistakes/mistakes.toml` declares for it (`grader.proof_files`); where the exercise
  only reports trainability, a trainability mistake passes its tests and is named all the same;
- each case the statement promises (`grader.promises`) is exercised by a hidden test.
Tests that tell the known mistakes apart less than they could are warnings, which do not fail
it (`grader.proof_warnings`).

Every file is graded through the same `Grader` as `autograder grade`, sandbox and all.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from grader.contract import CallOutcome
from grader.diagnosis import WEIGHTS_CODE
from grader.errors import ExerciseDefinitionError, ReferenceFailure
from grader.input_specs import SameAs, shape_of
from grader.judge import NOT_ALLOWED_CODE
from grader.plan import WEIGHTS, ExercisePlan, make_job
from grader.promises import Promise
from grader.proof_files import MISTAKES_FILE, Mistake, ProofFile, ProofFiles
from grader.proof_warnings import caught_by, hidden_tests_passed, same_catches
from grader.property_checks import check_properties
from grader.reference import Reference
from grader.report import PropertyStatus, Report, ReportStatus, TestStatus
from grader.runner import Grader
from grader.spec import EntryKind, Exercise, TestCaseSpec, Visibility
from grader.trainability import TRAINABILITY_CODES, codes_of

FILL_IN = "FILL IN"
# The corpus every exercise needs, as docs/exercises.md asks for it (CI proves every exercise).
MIN_SOLUTIONS = 4
MIN_MISTAKES = 4

Progress = Callable[[str], None]


@dataclass
class Proof:
    exercise: Exercise
    plan: ExercisePlan | None = None  # None where the reference could not build one
    solutions: int = 0  # how many it graded
    mistakes: list[tuple[Mistake, Report]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def holds(self) -> bool:
        return not self.problems


def prove(
    exercise: Exercise, files: ProofFiles, grader: Grader, progress: Progress = lambda _: None
) -> Proof:
    """Check one exercise of `grader`'s catalog against its files (`load_proof_files`)."""
    proof = Proof(exercise)
    proof.problems += _unfilled(exercise, files)
    proof.problems += _missing_files(exercise, files)
    proof.problems += _unkept_promises(exercise)
    try:
        plan = grader.plan(exercise.spec.slug)
    except (ExerciseDefinitionError, ReferenceFailure) as error:
        proof.problems.append(_reference_failure(exercise, error))
        return proof  # nothing to grade against
    proof.plan = plan
    proof.problems += _reference_problems(plan)
    _grade_files(plan, files, _grader_of(grader, exercise, progress), proof)
    toml, tests = shown(exercise.folder / "exercise.toml"), exercise.spec.tests
    proof.warnings += same_catches(toml, tests, proof.mistakes)
    proof.warnings += hidden_tests_passed(toml, tests, proof.mistakes)
    return proof


def diagnosed(report: Report) -> list[str]:
    """The codes of a report's findings, once each (a refusal has one finding per violation)."""
    return list(dict.fromkeys(finding.code for finding in report.diagnosis))


def shown(path: Path) -> str:
    """A path as the author typed it: relative to the working directory where it can be."""
    return str(path.relative_to(Path.cwd())) if path.is_relative_to(Path.cwd()) else str(path)


def _grade_files(
    plan: ExercisePlan, files: ProofFiles, grade: Callable[[Path, str], Report], proof: Proof
) -> None:
    exercise = plan.exercise
    starter = grade(exercise.folder / "starter.py", exercise.starter)
    proof.problems += _starter_problems(exercise, starter)
    for solution in files.solutions:
        proof.problems += _solution_problems(solution, grade(solution.path, solution.source))
        proof.solutions += 1
    for mistake in files.mistakes:
        report = grade(mistake.path, mistake.source)
        proof.mistakes.append((mistake, report))
        proof.problems += _mistake_problems(plan, mistake, report)


def _reference_failure(exercise: Exercise, error: Exception) -> str:
    cause, why = error.__cause__, ""
    if cause is not None and not (str(cause) and str(cause) in str(error)):  # not said already
        why = f" ({': '.join(filter(None, (type(cause).__name__, str(cause))))})"
    return f"{_reference_path(exercise)}: {error}{why}: fix the reference"


def _grader_of(
    grader: Grader, exercise: Exercise, progress: Progress
) -> Callable[[Path, str], Report]:
    def grade(path: Path, source: str) -> Report:
        progress(shown(path))
        return grader.grade(exercise.spec.slug, source)

    return grade


def _unfilled(exercise: Exercise, files: ProofFiles) -> list[str]:
    folder = exercise.folder
    paths = [folder / "exercise.toml", folder / "statement.md", folder / "starter.py"]
    paths += [path for path in [_reference_file(exercise)] if path is not None]
    paths += [file.path for file in (*files.solutions, *files.mistakes)]
    paths += [*files.undeclared, folder / "mistakes" / MISTAKES_FILE]
    return [problem for path in paths for problem in _fill_in_marks(path)]


def _fill_in_marks(path: Path) -> Iterable[str]:
    if not path.is_file():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    return [
        f"{shown(path)}:{number}: {line.strip().lstrip('#<!- ').rstrip(' ->')}"
        for number, line in enumerate(lines, start=1)
        if FILL_IN in line
    ]


def _missing_files(exercise: Exercise, files: ProofFiles) -> list[str]:
    mistakes = exercise.folder / "mistakes"
    problems = [
        f"{shown(path)}: not declared in {MISTAKES_FILE}: add [{path.stem}] with its "
        "description and diagnosis"
        for path in files.undeclared
    ]
    problems += [
        f"{shown(mistakes / MISTAKES_FILE)}: [{name}] has no file {name}.py: add the file or "
        "remove the entry"
        for name in files.orphans
    ]
    for kind, count, wanted in (
        ("solutions", len(files.solutions), MIN_SOLUTIONS),
        ("mistakes", len(files.mistakes) + len(files.undeclared), MIN_MISTAKES),
    ):
        if count < wanted:
            problems.append(
                f"{shown(exercise.folder / kind)}/: has {count}, needs at least {wanted}: add "
                + (
                    "correct files in the styles students write"
                    if kind == "solutions"
                    else "the wrong files students really submit"
                )
            )
    return problems


def _unkept_promises(exercise: Exercise) -> list[str]:
    toml = shown(exercise.folder / "exercise.toml")
    if not exercise.spec.promises:
        return [
            f"{toml}: no [[promises]]: declare the cases statement.md promises (batch 1, "
            "a single query, one head, ...) so that hidden tests must cover them"
        ]
    hidden = [test for test in exercise.spec.tests if test.visibility is Visibility.HIDDEN]
    return [
        f"{toml}: no hidden test exercises the promised case {promise.case!r} "
        f"({promise.describe()}): add one"
        for promise in exercise.spec.promises
        if not any(_exercises(promise, test) for test in hidden)
    ]


def _exercises(promise: Promise, test: TestCaseSpec) -> bool:
    if promise.init is not None:
        value = test.init.get(promise.init)
        return type(value) is int and promise.holds(value)
    assert promise.input is not None and promise.axis is not None  # the promise's validator
    inputs = test.calls[0].inputs
    if promise.input >= len(inputs):
        return False
    spec = inputs[promise.input]
    while isinstance(spec, SameAs):
        spec = inputs[spec.same_as]
    shape = shape_of(spec)
    if shape is None or not -len(shape) <= promise.axis < len(shape):
        return False
    return promise.holds(shape[promise.axis])


def _reference_file(exercise: Exercise) -> Path | None:
    found = importlib.util.find_spec(exercise.spec.reference)
    return None if found is None or found.origin is None else Path(found.origin)


def _reference_path(exercise: Exercise) -> str:
    path = _reference_file(exercise)
    return shown(path) if path else exercise.spec.reference.replace(".", "/") + ".py"


def _reference_problems(plan: ExercisePlan) -> list[str]:
    """The reference run on the property probes: a reference that breaks causality, say, would
    make every correct submission fail it."""
    spec = plan.exercise.spec
    reference = Reference.load(plan.exercise)
    visible = [test for test in plan.tests if test.visible]
    outcomes = {test.call.id: CallOutcome(test.call.id, test.expected) for test in visible}
    for test in visible:
        for probe in test.probes:
            if probe.kind != WEIGHTS:
                job = make_job(spec, "", (probe.call,))
                outcomes[probe.call.id] = CallOutcome(probe.call.id, reference.run(probe.call, job))
    return [
        f"{_reference_path(plan.exercise)}: the reference fails the property {check.name!r} "
        f"({check.message}): fix the reference, or drop the property from exercise.toml"
        for check in check_properties(spec.properties, visible, outcomes)
        if check.status is PropertyStatus.FAILED
    ]


def _starter_problems(exercise: Exercise, report: Report) -> list[str]:
    starter = shown(exercise.folder / "starter.py")
    if report.status is ReportStatus.REJECTED:
        return [f"{starter}: refused ({report.message}): a starter must run under the policy"]
    if report.status is not ReportStatus.FAILED or report.score > 0:
        passed = sum(test.status is TestStatus.PASSED for test in report.tests)
        return [
            f"{starter}: passes {passed} of {len(report.tests)} tests: a starter must fail "
            "every test: leave the work undone (raise NotImplementedError)"
        ]
    return []


def _solution_problems(solution: ProofFile, report: Report) -> list[str]:
    if report.status is ReportStatus.REJECTED:
        return [
            f"{shown(solution.path)}: refused ({report.message}): fix the file if it is wrong, "
            "else the exercise's allowed_imports or forbidden, or the policy that refuses "
            "correct code"
        ]
    if report.status is ReportStatus.PASSED and report.score == report.max_score:
        # Full marks where trainability is only reported can still hide a finding.
        return [
            f"{shown(solution.path)}: gets diagnosis {finding.code} ({finding.message}): fix the "
            "file if it is wrong (move it to mistakes/), else the check that flags correct code"
            for finding in report.diagnosis
        ]
    failures = [
        f"{test.name!r} ({test.message})" if test.message else repr(test.name)
        for test in report.tests
        if test.status is not TestStatus.PASSED
    ] or [report.message]
    return [
        f"{shown(solution.path)}: fails {'; '.join(failures)}: fix the file if it is wrong, "
        "else the test or policy that refuses correct code"
    ]


def _mistake_problems(plan: ExercisePlan, mistake: Mistake, report: Report) -> list[str]:
    path = shown(mistake.path)
    problems = []
    visible = {test.spec.name for test in plan.tests if test.visible}
    reported_only = (
        bool(TRAINABILITY_CODES.intersection(mistake.spec.diagnoses))
        and not plan.exercise.spec.trainability.scored
    )
    if not caught_by(report) & visible and not reported_only:
        problems.append(
            f"{path}: passes every visible test: add or change a visible test that shows "
            "this mistake, or move the file to solutions/ if it is right"
        )
    got = diagnosed(report)
    declared = mistake.spec.diagnoses
    if sorted(got) != sorted(declared):
        problems.append(
            f"{path}: gets diagnosis {', '.join(got) or 'none'}, {MISTAKES_FILE} declares "
            f"{', '.join(declared) or 'none'} (this exercise's codes: "
            f"{', '.join(_known_codes(plan))}): fix the declaration or the reference's VARIANTS"
        )
    return problems


def _known_codes(plan: ExercisePlan) -> list[str]:
    codes = {mistake.code for mistake in plan.mistakes} | {NOT_ALLOWED_CODE}
    if plan.weight_probe_message is not None:
        codes.add(WEIGHTS_CODE)
    spec = plan.exercise.spec
    codes |= codes_of(spec.trainability_checks, module=spec.kind is EntryKind.MODULE)
    return sorted(codes)
