"""The seed exercise keeps its corpus of real correct answers (graded by test_proofs.py, a slow
test). Every other exercise's minimum is the proof's own (`grader.proof.MIN_SOLUTIONS`, the
number docs/exercises.md asks for), which `check-exercise --all` enforces in test_proofs.py."""

from grader.settings import GraderSettings

EXERCISES = GraderSettings().exercises_dir
SEED_EXERCISE = "multi-headed-self-attention"
# Real students' correct answers to the seed exercise, in as many styles as we have met: every
# one must pass, so none may be dropped quietly.
SEED_CORPUS = 14


def test_the_seed_exercise_keeps_its_corpus_of_real_answers() -> None:
    assert len(list((EXERCISES / SEED_EXERCISE / "solutions").glob("*.py"))) >= SEED_CORPUS
