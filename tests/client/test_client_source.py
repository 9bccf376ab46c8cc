"""What the client sends: a definition with the imports it needs, from a module or from a
notebook's earlier cells; a file; a string as given."""

from __future__ import annotations

import functools
import math
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from autograder_client import SubmissionError, source_of
from notebook_support import run_notebook


def logged(function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    def wrapper(*args: Any) -> Any:
        return function(*args)

    return wrapper


class Scaled:
    """Uses a module-level import (math), a decorator defined here, and nothing else."""

    @logged
    def scale(self, x: float) -> float:
        return x / math.sqrt(2)


def halve(x: float) -> float:
    return x / 2


def test_a_class_is_sent_with_the_imports_it_uses_and_no_others() -> None:
    source = source_of(Scaled)
    head, body = source.split("\n\n\n", 1)
    assert head == "from __future__ import annotations\nimport math"
    assert body.startswith("class Scaled:") and "return x / math.sqrt(2)" in body
    assert "def halve" not in body
    # `logged` is a helper of this module, not an import: it is not sent (docs/notebook.md).
    exec(compile(source, "<submission>", "exec"), {"logged": lambda f: f})


def test_a_function_is_sent_as_its_definition() -> None:
    assert source_of(halve).endswith("\n\n\ndef halve(x: float) -> float:\n    return x / 2\n")


def test_paths_are_read_and_other_strings_sent_as_given(tmp_path: Path) -> None:
    solution = tmp_path / "solution.py"
    solution.write_text("x = 1\n", encoding="utf-8")
    assert source_of(solution) == "x = 1\n"
    assert source_of(str(solution)) == "x = 1\n"
    assert source_of("x = 2") == "x = 2"
    with pytest.raises(SubmissionError, match="cannot read"):
        source_of(str(tmp_path / "missing.py"))
    with pytest.raises(SubmissionError, match="pass the class or function itself"):
        source_of(Scaled())


def test_a_notebook_class_takes_its_imports_from_earlier_cells() -> None:
    cells = [
        "import math\nimport os\nfrom functools import reduce as fold",
        "%precision 3",
        textwrap.dedent(
            """\
            class Norm:
                def __call__(self, xs):
                    return math.sqrt(fold(lambda a, b: a + b * b, xs, 0))
            """
        ),
        "from autograder_client import source_of\nprint(source_of(Norm), end='')",
    ]
    printed = run_notebook(cells)
    assert printed.startswith("Out[2]: '%.3f'\n")
    source = printed.split("\n", 1)[1]
    assert source.startswith("import math\nfrom functools import reduce as fold\n\n\nclass Norm:")
    namespace: dict[str, Any] = {}
    exec(compile(source, "<submission>", "exec"), namespace)
    assert namespace["Norm"]()([3, 4]) == 5.0
