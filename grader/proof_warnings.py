"""What `autograder check-exercise` warns about without failing the exercise (`grader.proof`):
tests that tell the known mistakes (the files of `mistakes/`) apart less than they could.

- Two tests that catch exactly the same mistakes: one of them may be redundant.
- A hidden test passed by a known mistake that every visible test catches: code that the
  student sees fail everywhere earns that test's points. A test with one token is passed by
  every mistake of the attention itself (a softmax over one key is 1), so it gives points to
  code with no attention at all. A mistake that passes a visible test too is left out: it is
  right on a whole kind of input (a mask mistake on tests without a mask), which the student
  sees already. Only a warning: a statement may promise a case where a mistake is right (with
  one head, mixing heads is no mistake), and a hidden test must still keep the promise.
"""

from __future__ import annotations

from collections.abc import Sequence

from grader.proof_files import Mistake
from grader.report import Report, TestStatus
from grader.spec import TestCaseSpec, Visibility

GradedMistakes = Sequence[tuple[Mistake, Report]]


def caught_by(report: Report) -> set[str]:
    """The names of the tests a report failed."""
    return {test.name for test in report.tests if test.status is not TestStatus.PASSED}


def same_catches(toml: str, tests: Sequence[TestCaseSpec], mistakes: GradedMistakes) -> list[str]:
    tests_by_catch: dict[frozenset[str], list[str]] = {}
    for test in tests:
        caught = frozenset(m.name for m, report in mistakes if test.name in caught_by(report))
        if caught:
            tests_by_catch.setdefault(caught, []).append(test.name)
    return [
        f"{toml}: tests {', '.join(map(repr, names))} catch exactly the same mistakes "
        f"({', '.join(sorted(caught))}): make one of them tell another mistake apart, or drop one"
        for caught, names in tests_by_catch.items()
        if len(names) > 1
    ]


def hidden_tests_passed(
    toml: str, tests: Sequence[TestCaseSpec], mistakes: GradedMistakes
) -> list[str]:
    return [
        f"{toml}: hidden test {test!r} gives its points to known mistakes that fail every "
        f"visible test ({', '.join(names)}): give it a case they get wrong (at least two tokens "
        "where it is about attention), unless it keeps a promise they are right on"
        for test, names in lenient_hidden_tests(tests, mistakes).items()
    ]


def lenient_hidden_tests(
    tests: Sequence[TestCaseSpec], mistakes: GradedMistakes
) -> dict[str, list[str]]:
    """Each hidden test that a known mistake failing every visible test passes, with the names
    of those mistakes."""
    visible = {test.name for test in tests if test.visibility is Visibility.VISIBLE}
    caught_everywhere = [(m.name, caught_by(r)) for m, r in mistakes if visible <= caught_by(r)]
    lenient = {
        test.name: sorted(name for name, caught in caught_everywhere if test.name not in caught)
        for test in tests
        if test.visibility is Visibility.HIDDEN
    }
    return {test: names for test, names in lenient.items() if names}
