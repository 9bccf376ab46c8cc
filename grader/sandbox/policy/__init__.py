"""The sandbox's first layer: a RestrictedPython policy and the runtime guards its code calls.

- `static`: the source checked and rewritten before anything runs (`compile_submission`);
- `namespace`: the builtins and hooks the rewritten code runs with (`restricted_globals`);
- `guards`: what those hooks check at run time;
- `names`: which names and attributes are allowed, judged by name alone;
- `ownership`: which classes, objects and private names are the submission's own;
- `modules`: which modules may be imported, and what may be read from each;
- `autograd`: what of `torch.autograd` may be used (a custom Function, whose `ctx` is the
  submission's own), and why the rest is refused;
- `output`, `formatter`, `refusals`: print, `str.format`, and what a refusal may say;
- `unsafe`: attributes and calls of objects refused for what they reach (files, raw memory);
- `library_guards`: checks put into torch for one job, which hold whoever calls: a forbidden
  API run inside an allowed layer (`forbidden_calls`), a special name given to a container
  (`naming`), both installed through `patches`.

This layer is assumed to fail on its own: the process layer (a fresh hardened child with nothing
secret in reach) contains whatever slips through.
"""

from grader.sandbox.policy.library_guards import guarded_libraries
from grader.sandbox.policy.modules import import_importable, importable_modules
from grader.sandbox.policy.names import DEFINABLE_DUNDERS, SUBMISSION_MODULE
from grader.sandbox.policy.namespace import restricted_globals
from grader.sandbox.policy.output import StdoutCapture
from grader.sandbox.policy.static import (
    CompiledSubmission,
    SubmissionRejected,
    compile_submission,
)

__all__ = [
    "DEFINABLE_DUNDERS",
    "SUBMISSION_MODULE",
    "CompiledSubmission",
    "StdoutCapture",
    "SubmissionRejected",
    "compile_submission",
    "guarded_libraries",
    "import_importable",
    "importable_modules",
    "restricted_globals",
]
