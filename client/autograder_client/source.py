"""What to send: the source of a class or function, a file's text, or a string as given.

For a class or function the source is its own definition, found through the code of its methods
(a notebook cell is a file that exists only in `linecache`, where IPython and Jupyter register
every cell they run), preceded by the import statements that bind names it uses. The imports come
from the module that defined it or, in a notebook, from every cell run so far: a student imports
torch in one cell and writes the class in another. Only imports are gathered; a helper the class
calls that is defined elsewhere (a function, a constant) must be inside the class, or the
submission passed as a file or a string.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import os
import sys
import textwrap
from pathlib import Path
from types import CodeType
from typing import Any

from autograder_client.errors import SubmissionError


def source_of(submission: object) -> str:
    """A path (a `Path`, or a one-line string ending in .py) is read; other strings are source."""
    if isinstance(submission, os.PathLike):
        return read_file(Path(submission))
    if isinstance(submission, str):
        if "\n" not in submission and submission.strip().endswith(".py"):
            return read_file(Path(submission.strip()))
        return submission
    if inspect.isclass(submission) or inspect.isfunction(submission):
        return _object_source(submission)
    raise SubmissionError(
        f"cannot submit {type(submission).__name__!s} object: pass the class or function itself, "
        "a file path, or the source as a string"
    )


def read_file(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise SubmissionError(f"{path} is not UTF-8 text") from None
    except OSError as error:
        raise SubmissionError(f"cannot read {path}: {error.strerror}") from None


def _object_source(obj: Any) -> str:
    for code in _codes(obj):
        text = "".join(linecache.getlines(code.co_filename))
        body = _definition(text, obj.__name__, code.co_firstlineno)
        if body is None:
            continue
        # A real file is the module, with its imports; a notebook cell exists only in linecache.
        contexts = [text] if os.path.isfile(code.co_filename) else [*_notebook_cells(), text]
        return _with_imports(body, contexts, defining=text)
    raise SubmissionError(
        f"cannot find the source of {obj.__qualname__}: pass the source as a string or a file"
    )


def _codes(obj: Any) -> list[CodeType]:
    """The code objects that say where `obj` was written: its own, or its methods'."""
    members = [obj] if inspect.isfunction(obj) else list(vars(obj).values())
    codes = []
    for member in members:
        function = getattr(member, "__func__", None) or getattr(member, "fget", None) or member
        if inspect.isfunction(function):
            # Through decorators (functools.wraps) to the code written in the definition.
            codes.append(inspect.unwrap(function).__code__)
    return codes


def _definition(text: str, name: str, line: int) -> str | None:
    """The innermost class or function called `name` whose lines (decorators too) hold `line`."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    spans = [
        (min([node.lineno, *(d.lineno for d in node.decorator_list)]), node.end_lineno or 0)
        for node in ast.walk(tree)
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.name == name
    ]
    holding = [(first, last) for first, last in spans if first <= line <= last]
    if not holding:
        return None
    first, last = max(holding)  # the innermost starts last
    return textwrap.dedent("".join(text.splitlines(keepends=True)[first - 1 : last]))


def _notebook_cells() -> list[str]:
    """Every cell IPython has run in this session, oldest first (none outside IPython)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None:
        return []
    return [cell for cell in shell.history_manager.input_hist_parsed if isinstance(cell, str)]


def _with_imports(body: str, contexts: list[str], *, defining: str) -> str:
    used = {node.id for node in ast.walk(ast.parse(body)) if isinstance(node, ast.Name)}
    future = [ast.unparse(node) for node in _imports(defining) if _is_future(node)]
    imports: list[str] = []
    for context in contexts:
        for node in _imports(context):
            if _is_future(node):
                continue
            needed = [alias for alias in node.names if _bound_name(alias) in used]
            if needed:
                node.names = needed
                imports.append(ast.unparse(node))
    head = list(dict.fromkeys([*future, *imports]))
    return "\n".join(head) + "\n\n\n" + body if head else body


def _imports(text: str) -> list[ast.Import | ast.ImportFrom]:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    return [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]


def _is_future(node: ast.Import | ast.ImportFrom) -> bool:
    return isinstance(node, ast.ImportFrom) and node.module == "__future__"


def _bound_name(alias: ast.alias) -> str:
    # `import torch.nn` binds `torch`; `import torch.nn as nn` binds `nn`.
    return alias.asname or alias.name.split(".")[0]
