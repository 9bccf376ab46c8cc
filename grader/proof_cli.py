"""`autograder check-exercise SLUG|--all` and `autograder new-exercise SLUG`: an instructor's
commands to write an exercise and prove it (`grader.proof`, `grader.skeleton`). A proof that holds
publishes the exercise (its record, `grader.proof_record`); one that fails removes the record.

check-exercise exits 0 when every exercise holds (warnings allowed), 1 on any problem, 2 when a
folder is not a valid exercise or no such exercise exists. new-exercise exits 2 when it refuses.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grader.catalog import Catalog
from grader.cli_output import EXIT_FAILED, EXIT_OK, EXIT_USAGE, print_problems
from grader.errors import ExerciseDefinitionError, UnknownExerciseError
from grader.proof import Progress, Proof, diagnosed, prove, shown
from grader.proof_files import load_proof_files
from grader.proof_record import (
    ProofRecord,
    read_proof_record,
    remove_proof_record,
    write_proof_record,
)
from grader.proof_warnings import caught_by
from grader.runner import Grader
from grader.sandbox.process import WarmProcessSandbox
from grader.settings import GraderSettings
from grader.skeleton import SkeletonRefused, write_skeleton
from grader.spec import EntryKind, Framework, Visibility, load_exercise
from grader.versions import PROOF_RECORD

# Not the deployment's secret: a proof needs no data dir, and draws its hidden inputs from the
# same input sets on every machine.
PROOF_SECRET = "check-exercise"


def check_exercise(args: argparse.Namespace, settings: GraderSettings) -> int:
    try:
        catalog = _catalog_to_check(settings.exercises_dir, args.slug)
        proofs = prove_catalog(catalog, settings.sandbox_slots, show_progress=args.all)
    except ExerciseDefinitionError as error:
        print_problems(error)
        return EXIT_USAGE
    print("\n\n".join(f"{render_proof(proof)}\n{record_proof(proof)}" for proof in proofs))
    return EXIT_OK if all(proof.holds for proof in proofs) else EXIT_FAILED


def _catalog_to_check(exercises_dir: Path, slug: str | None) -> Catalog:
    if slug is None:
        return Catalog.from_folder(exercises_dir)
    if not (exercises_dir / slug / "exercise.toml").is_file():
        known = sorted(path.parent.name for path in exercises_dir.glob("*/exercise.toml"))
        raise UnknownExerciseError(slug, known)
    return Catalog([load_exercise(exercises_dir / slug)])


def prove_catalog(catalog: Catalog, slots: int, *, show_progress: bool = False) -> list[Proof]:
    """Prove every exercise of the catalog with one warm sandbox; raise ExerciseDefinitionError,
    before any process starts, when an exercise's proof files can't be read."""
    files = {exercise.spec.slug: load_proof_files(exercise.folder) for exercise in catalog}
    sandbox = WarmProcessSandbox(slots=slots, preload=catalog.allowed_imports())
    grader = Grader(catalog, sandbox, PROOF_SECRET)
    count = len(catalog.slugs())
    try:
        return [
            prove(
                exercise,
                files[exercise.spec.slug],
                grader,
                _progress(index, count, exercise.spec.slug, show_progress),
            )
            for index, exercise in enumerate(catalog, start=1)
        ]
    finally:
        sandbox.close()


def record_proof(proof: Proof) -> str:
    """Publish the proven exercise, or take a failed one back to a draft; say which."""
    exercise = proof.exercise
    if not proof.holds:
        removed = remove_proof_record(exercise.folder)
        return "a draft: students do not see it" + (" (its proof record removed)" * removed)
    fresh = ProofRecord.now(
        exercise.version, solutions=proof.solutions, mistakes=len(proof.mistakes)
    )
    kept = read_proof_record(exercise.folder)
    # Rewritten only when what it certifies changed: a proof run again changes no file.
    if kept is None or kept.model_copy(update={"proved_at": fresh.proved_at}) != fresh:
        write_proof_record(exercise.folder, fresh)
    where = shown(exercise.folder / PROOF_RECORD)
    return f"published at version {exercise.version}: recorded in {where}"


def _progress(index: int, count: int, slug: str, shown_on_stderr: bool) -> Progress:
    def report(file: str) -> None:
        if shown_on_stderr:
            print(f"[{index}/{count}] {slug}: grading {file}", file=sys.stderr, flush=True)

    return report


def render_proof(proof: Proof) -> str:
    """The table of which tests catch which mistake, then one line per problem and warning."""
    spec = proof.exercise.spec
    lines = [f"{spec.slug}: {len(proof.mistakes)} mistakes against {len(spec.tests)} tests"]
    lines += [
        f"  T{number:<2} {test.name}"
        + (" (hidden)" if test.visibility is Visibility.HIDDEN else "")
        for number, test in enumerate(spec.tests, start=1)
    ]
    if proof.mistakes:
        width = max(len(mistake.name) for mistake, _ in proof.mistakes)
        header = " ".join(f"T{number:<2}" for number in range(1, len(spec.tests) + 1))
        lines.append(f"  {'':<{width}}  {header}  diagnosis")
        for mistake, report in proof.mistakes:
            caught = caught_by(report)
            marks = " ".join(" x " if test.name in caught else " . " for test in spec.tests)
            codes = ", ".join(diagnosed(report)) or "-"
            lines.append(f"  {mistake.name:<{width}}  {marks}  {codes}")
    lines += [f"PROBLEM {problem}" for problem in proof.problems]
    lines += [f"warning {warning}" for warning in proof.warnings]
    count = len(proof.problems)
    verdict = "holds" if proof.holds else f"does not hold: {count} problem{'s' * (count != 1)}"
    lines.append(f"{spec.slug} {verdict} ({shown(proof.exercise.folder)})")
    return "\n".join(lines)


def new_exercise(args: argparse.Namespace, settings: GraderSettings) -> int:
    try:
        written = write_skeleton(
            settings.exercises_dir, args.slug, EntryKind(args.kind), Framework(args.framework)
        )
    except SkeletonRefused as error:
        print(f"autograder: {error}", file=sys.stderr)
        return EXIT_USAGE
    for path in written:
        print(shown(path))
    print(f"fill in the FILL IN marks, then run: autograder check-exercise {args.slug}")
    return EXIT_OK
