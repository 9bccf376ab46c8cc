"""What runs inside a sandbox: compile the submission under the policy, load it, run the calls.

The process layer (`grader.sandbox.process`) calls `execute` in a freshly forked, already
hardened child; `InProcessSandbox` calls it directly, for tests and as the benchmark's floor.
Everything is reported through a `Reporter`, in order: `rejected` alone, or `started` and
`finished` for each call. A runtime guard violation goes to `on_violation`, which must not return:
a bare `except:` in the submission must not be able to swallow it and keep probing.

The checks that must hold whoever calls (a forbidden API run inside an allowed layer, a special
name passed to a container) go into the libraries for the job (`guarded_libraries`), before the
submission's code runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import CodeType
from typing import NoReturn, Protocol

from grader.call_execution import describe_exception, missing_entry_point, run_calls
from grader.contract import Call, CallOutcome, Job, Violation
from grader.sandbox.policy import (
    StdoutCapture,
    SubmissionRejected,
    compile_submission,
    guarded_libraries,
    restricted_globals,
)


class Reporter(Protocol):
    def rejected(self, violations: Sequence[Violation]) -> None: ...

    def started(self, call: Call) -> None: ...

    def finished(self, outcome: CallOutcome) -> None: ...


def execute(job: Job, reporter: Reporter, on_violation: Callable[[Violation], NoReturn]) -> None:
    try:
        compiled = compile_submission(job.source, job.policy)
    except SubmissionRejected as rejection:
        reporter.rejected(rejection.violations)
        return
    stdout = StdoutCapture(job.limits.stdout_chars)
    with guarded_libraries(job.policy, on_violation):
        # Built inside: a forbidden function replaced for the job is then refused by identity
        # too, when read under a computed name.
        namespace = restricted_globals(job.policy, stdout, on_violation, compiled.private_names)
        _run(job, compiled.code, namespace, stdout, reporter)


def _run(
    job: Job,
    code: CodeType,
    namespace: dict[str, object],
    stdout: StdoutCapture,
    reporter: Reporter,
) -> None:
    try:
        exec(code, namespace)
    except Exception as exc:  # the submission failed while loading: every call reports it
        load_error = describe_exception(exc)
        for call in job.calls:
            reporter.started(call)
            reporter.finished(
                CallOutcome(call_id=call.id, outputs=None, error=load_error, stdout=stdout.take())
            )
        return
    missing = missing_entry_point(job, namespace)
    if missing is not None:
        reporter.rejected([missing])
        return
    for outcome in run_calls(namespace, job, stdout.take, on_start=reporter.started):
        reporter.finished(outcome)
