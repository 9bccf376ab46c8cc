"""`autograder new-exercise`: the files of a new exercise, each saying what to fill in.

Every place to fill carries a `FILL IN` mark (`grader.proof.FILL_IN`): `check-exercise` reports
each mark left as a problem, so an unfilled skeleton never passes as an exercise. The spec is
valid from the start (two visible tests, two hidden ones, two promises), so the author edits a
working exercise rather than fixing a broken one.
"""

from __future__ import annotations

import re
from pathlib import Path
from string import Template

from grader.spec import EntryKind, Framework

SLUG = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")


class SkeletonRefused(Exception):
    pass


_SPEC = Template("""\
# The exercise's spec: docs/exercises.md explains each field.
slug = "$slug"
title = "$title"
summary = "FILL IN: one sentence, what the student builds"
kind = "$kind"
framework = "$framework"
entry_point = "$entry"
reference = "reference.$module"
$weights
outputs = ["output"]
allowed_imports = $imports
# FILL IN: the built-ins that would do the work for the student (or leave the list empty).
forbidden = []
properties = []
# Trainability (gradients, one SGD step, inputs scaled up) is checked and scored by default:
# docs/exercises.md says how to report it for no points, keep some checks, or turn it off.
# [trainability]
# counts = "scored"

# FILL IN: the tests: shapes that show every mistake in mistakes/ on the visible ones.
[[tests]]
name = "batch 1"
seed = 1
$init
inputs = [{ shape = [1, 4, 8] }]

[[tests]]
name = "batch 2, 5 tokens"
seed = 2
$init
inputs = [{ shape = [2, 5, 8] }]

[[tests]]
name = "context length 1"
visibility = "hidden"
$init
inputs = [{ shape = [3, 1, 8] }]

[[tests]]
name = "batch 3, 7 tokens"
visibility = "hidden"
$init
inputs = [{ shape = [3, 7, 8] }]

# The cases statement.md promises; each needs a hidden test where it holds.
[[promises]]
case = "context length 1"
input = 0
axis = -2
equals = 1

[[promises]]
case = "batch larger than 1"
input = 0
axis = 0
at_least = 2
""")

_STATEMENT = Template("""\
# $title

<!-- FILL IN: what to build, the exact signature, the shapes, a worked example, the cases it
must handle (those of exercise.toml's [[promises]]) and, where the grader loads the weights,
the parameters' names and shapes. -->
""")

_MODULE = Template("""\
# FILL IN: $role
$imports


class $entry(nn.Module):
    def __init__(self, embedding_dim: int) -> None:
        super().__init__()
        # FILL IN: the parameters, named as statement.md names them.

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # FILL IN: x is (B, T, embedding_dim); return (B, T, embedding_dim).
        raise NotImplementedError
""")

_FUNCTION = Template("""\
# FILL IN: $role
$imports


def $entry(x: $array) -> $array:
    # FILL IN: x is (B, T, 8); return the output.
    raise NotImplementedError
""")

_REFERENCE_IMPORT = "from grader.variants import WrongVariant"
_REFERENCE_FOOTER = """

# FILL IN: a WrongVariant per mistake of mistakes/ that earns a diagnosis (grader/variants.py).
VARIANTS: tuple[WrongVariant, ...] = ()
"""

_MISTAKES = """\
# One entry per file of this folder: what it gets wrong and the diagnosis code it must get,
# a WrongVariant's code from the reference; leave `diagnosis` out where it must just fail.
[fill_in_mistake]
description = "FILL IN: what this student file gets wrong"
"""

_ROLES = {
    "starter": "what students start from: the signature and hints, the work left undone.",
    "solution": "a correct file as a student writes it; name the file for its style.",
    "mistake": "a wrong file as students submit it; name it, declare it in mistakes.toml.",
    "reference": "the correct computation, in the paper's names, a shape comment per reshape.",
}


def write_skeleton(
    exercises_dir: Path, slug: str, kind: EntryKind, framework: Framework
) -> list[Path]:
    """Write the exercise's folder and its reference module (`reference/` beside the exercises
    folder); return the files written. Raise SkeletonRefused rather than overwrite anything."""
    if not SLUG.match(slug):
        raise SkeletonRefused(
            f"invalid slug {slug!r}: lowercase words joined by '-', e.g. my-attention"
        )
    if kind is EntryKind.MODULE and framework is Framework.NUMPY:
        raise SkeletonRefused("a module exercise is an nn.Module: a numpy exercise is a function")
    folder = exercises_dir / slug
    module = slug.replace("-", "_")
    reference = exercises_dir.parent / "reference" / f"{module}.py"
    for path in (folder, reference):
        if path.exists():
            raise SkeletonRefused(f"{path} exists already: choose another slug")
    entry = (
        "".join(word.title() for word in slug.split("-")) if kind is EntryKind.MODULE else module
    )
    files = {
        folder / "exercise.toml": _spec(slug, module, entry, kind, framework),
        folder / "statement.md": _STATEMENT.substitute(title=_title(slug)),
        folder / "starter.py": _code(entry, kind, framework, "starter"),
        folder / "solutions" / "fill_in_solution.py": _code(entry, kind, framework, "solution"),
        folder / "mistakes" / "fill_in_mistake.py": _code(entry, kind, framework, "mistake"),
        folder / "mistakes" / "mistakes.toml": _MISTAKES,
        reference: _reference(slug, entry, kind, framework),
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return list(files)


def _title(slug: str) -> str:
    return slug.replace("-", " ").capitalize()


def _spec(slug: str, module: str, entry: str, kind: EntryKind, framework: Framework) -> str:
    is_module = kind is EntryKind.MODULE
    return _SPEC.substitute(
        slug=slug,
        title=_title(slug),
        kind=kind.value,
        framework=framework.value,
        entry=entry,
        module=module,
        # The grader draws the weights and loads them by name: no test depends on the order in
        # which a submission creates its layers.
        weights='weights = "grader"' if is_module else "",
        init="init = { embedding_dim = 8 }" if is_module else "",
        imports=_ALLOWED_IMPORTS[framework],
    )


# What the seed exercises allow: a torch exercise numpy too, for the `import numpy as np` that
# notebooks leave behind (a refusal of correct code is a bug; forbid what would do the work).
_ALLOWED_IMPORTS = {Framework.TORCH: '["torch", "numpy"]', Framework.NUMPY: '["numpy"]'}


def _code(entry: str, kind: EntryKind, framework: Framework, role: str) -> str:
    template = _MODULE if kind is EntryKind.MODULE else _FUNCTION
    array = "torch.Tensor" if framework is Framework.TORCH else "np.ndarray"
    imports = "import numpy as np" if framework is Framework.NUMPY else "import torch"
    if kind is EntryKind.MODULE:
        imports += "\nfrom torch import nn"
    if role == "reference":
        imports = f"from __future__ import annotations\n\n{imports}\n\n{_REFERENCE_IMPORT}"
    return template.substitute(imports=imports, entry=entry, array=array, role=_ROLES[role])


def _reference(slug: str, entry: str, kind: EntryKind, framework: Framework) -> str:
    docstring = f'"""The reference of {slug}."""\n\n'
    return docstring + _code(entry, kind, framework, "reference") + _REFERENCE_FOOTER
