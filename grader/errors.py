"""The grader's exceptions: failures of the grader itself, never of a student.

A student's failing, crashing or hostile submission is not an exception: it comes back as a
`Report` whose tests say what went wrong. These exceptions mean the grader could not do its job.

    AutograderError
    ├── UnknownExerciseError     no exercise has that slug (the caller's mistake)
    ├── ExerciseDefinitionError  an exercise folder is invalid (the author's mistake)
    ├── ReferenceFailure         the trusted reference failed on a test case (a grader bug)
    └── SandboxUnavailable       the sandbox could not start or stopped answering
"""


class AutograderError(Exception):
    """Base class of every error the grading engine raises."""


class UnknownExerciseError(AutograderError):
    def __init__(self, slug: str, known: list[str]) -> None:
        self.slug = slug
        self.known = known
        super().__init__(f"unknown exercise {slug!r}; known: {', '.join(known) or 'none'}")


class ExerciseDefinitionError(AutograderError):
    pass


class ReferenceFailure(AutograderError):
    pass


class SandboxUnavailable(AutograderError):
    pass
