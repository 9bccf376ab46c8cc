"""The static layer: the submission's source checked and rewritten before anything of it runs.

RestrictedPython's policy, widened for ordinary nn.Module code (`super().__init__()`, nested
classes, annotations, augmented assignment of attributes and items, private helpers) and narrowed
for one exercise (its imports, its forbidden APIs). Every problem comes back at once, each with
its line. The rewritten code reads attributes through `_getattr_`, items through `_getitem_`,
writes through `_write_`, imports through `__import__` and prints through `_print_`: the runtime
guards (`guards.py`) decide what the source cannot show, such as whose private name `x._y` is.
"""

from __future__ import annotations

import ast
import types
from collections.abc import Iterable
from dataclasses import dataclass

from RestrictedPython.transformer import (
    IOPERATOR_TO_STR,
    RestrictingNodeTransformer,
    copy_locations,
)

from grader.call_execution import SUBMISSION_FILENAME
from grader.contract import Policy, Violation
from grader.sandbox.policy.modules import importable_modules
from grader.sandbox.policy.names import (
    attribute_problem,
    forbidden_message,
    import_refusal,
    is_private,
    name_problem,
    private_refusal,
)
from grader.sandbox.policy.unsafe import OBJECT_ARRAYS, names_object_dtype


class SubmissionRejected(Exception):
    """The static layer refused the source: nothing of it ran."""

    def __init__(self, violations: Iterable[Violation]) -> None:
        self.violations = tuple(
            sorted(violations, key=lambda found: (found.line is None, found.line or 0))
        )
        super().__init__(
            "; ".join(f"line {found.line}: {found.message}" for found in self.violations)
        )


@dataclass(frozen=True)
class CompiledSubmission:
    code: types.CodeType
    # The private names the source defines (`def _split`, `self._cache = ...`, `"_mask"`): the
    # only ones that may be the submission's own at run time, besides those it sets by setattr.
    private_names: frozenset[str]


def compile_submission(source: str, policy: Policy) -> CompiledSubmission:
    """Check `source` against the policy and compile it, rewritten to call the runtime guards.

    Raises SubmissionRejected listing every problem found, each with its line.
    """
    try:
        tree = ast.parse(source, SUBMISSION_FILENAME)
        private_names = _PrivateNames.of(tree)
        checker = _SubmissionPolicy(policy, private_names)
        checker.visit(tree)
        if checker.violations:
            raise SubmissionRejected(checker.violations)
        # dont_inherit: this module's `from __future__ import annotations` is not the submission's.
        code = compile(tree, SUBMISSION_FILENAME, "exec", dont_inherit=True)
        return CompiledSubmission(code, private_names)
    except SyntaxError as error:
        raise SubmissionRejected([Violation(f"syntax error: {error.msg}", error.lineno)]) from None
    except (RecursionError, MemoryError):  # what CPython's parser and compiler raise past a depth
        raise SubmissionRejected(
            [Violation("the code is nested too deeply (or one expression is too long) to check")]
        ) from None
    except ValueError as error:  # a NUL character, for one
        raise SubmissionRejected([Violation(f"the source cannot be read: {error}")]) from None


_Visited = ast.AST | Iterable[ast.AST] | None


class _SubmissionPolicy(RestrictingNodeTransformer):
    """RestrictedPython's policy, widened for nn.Module code and narrowed for one exercise."""

    def __init__(self, policy: Policy, private_names: frozenset[str]) -> None:
        super().__init__()
        self.violations: list[Violation] = []
        self._private_names = private_names
        self._allowed_imports = importable_modules(policy.allowed_imports)
        self._forbidden = {dotted.rpartition(".")[2]: dotted for dotted in policy.forbidden}
        self._classes: list[str] = []  # the class statements being visited, innermost last

    def error(self, node: ast.AST, info: str) -> None:
        self.violations.append(Violation(info, getattr(node, "lineno", None)))

    def check_name(
        self, node: ast.AST, name: str | None, allow_magic_methods: bool = False
    ) -> None:
        # allow_magic_methods: RestrictedPython sets it for the name of a `def`.
        problem = None if name is None else name_problem(name, defining=allow_magic_methods)
        if problem is not None:
            self.error(node, problem)

    def visit_Name(self, node: ast.Name) -> _Visited:  # noqa: N802 (ast's naming)
        if node.id == "__name__" and isinstance(node.ctx, ast.Load):
            return node  # the string "submission": lets `if __name__ == "__main__":` skip demos
        if node.id == "printed":  # RestrictedPython would turn it into its print collector
            self.error(node, "`printed` is a reserved name in the grading sandbox; choose another")
            return node
        return super().visit_Name(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> _Visited:  # noqa: N802 (ast's naming)
        self._classes.append(node.name)
        try:
            rewritten = super().visit_ClassDef(node)
        finally:
            self._classes.pop()
        # RestrictedPython parses a new class statement (to add `metaclass=__metaclass__`) at
        # line 1: a refusal while the class is made must name the statement's own line.
        assert isinstance(rewritten, ast.ClassDef)
        copy_locations(rewritten, node)
        for keyword in rewritten.keywords:
            copy_locations(keyword, node)
            copy_locations(keyword.value, node)
        return rewritten

    def visit_Attribute(self, node: ast.Attribute) -> _Visited:  # noqa: N802 (ast's naming)
        self._check_attribute(node, storing=not isinstance(node.ctx, ast.Load))
        node = self.node_contents_visit(node)
        if isinstance(node.ctx, ast.Load):
            return _guard_call("_getattr_", node, node.value, ast.Constant(node.attr))
        node.value = _guard_call("_write_", node.value, node.value, ast.Constant(node.attr))
        return node

    def visit_AugAssign(self, node: ast.AugAssign) -> _Visited:  # noqa: N802 (ast's naming)
        """`x += 1` as RestrictedPython does it; `a.b += 1` and `a[k] += 1`, which it refuses,
        through guards that check the write and the read as `a.b = a.b + 1` would."""
        target = node.target
        if isinstance(target, ast.Name):
            return super().visit_AugAssign(node)
        symbol = ast.Constant(IOPERATOR_TO_STR[type(node.op)])
        owner, value = self.visit(target.value), self.visit(node.value)
        key: ast.expr
        if isinstance(target, ast.Attribute):
            self._check_attribute(target, storing=True)
            key, guard = ast.Constant(target.attr), "_inplace_attribute_"
        else:
            # `_key_[...]` evaluates the subscript's key, slices and all, as Python would.
            key = ast.Subscript(ast.Name("_key_", ast.Load()), self.visit(target.slice), ast.Load())
            guard = "_inplace_item_"
        statement = ast.Expr(_guard_call(guard, node, owner, key, symbol, value))
        copy_locations(statement, node)
        return statement

    def visit_Call(self, node: ast.Call) -> _Visited:  # noqa: N802 (ast's naming)
        """`f(...)` as `_call_result_(f(...))`: what a call returns is checked before the code
        can use it (no array of objects, however made; see `Guards.result`)."""
        if any(_spells_object_dtype(argument) for argument in _dtype_arguments(node)):
            self.error(node, OBJECT_ARRAYS)
        call = super().visit_Call(node)
        assert isinstance(call, ast.Call)  # RestrictedPython keeps a call a call (`_apply_`)
        return _guard_call("_call_result_", call, call)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> _Visited:  # noqa: N802 (ast's naming)
        # RestrictedPython has no rule for `x: int = 0` and refuses it; its parts are guarded as
        # anywhere else.
        return self.node_contents_visit(node)

    def visit_Import(self, node: ast.Import) -> _Visited:  # noqa: N802 (ast's naming)
        for alias in node.names:
            self._check_import(node, alias.name)
            top = alias.name.partition(".")[0]
            if alias.asname is None and top != alias.name and top not in self._allowed_imports:
                self.error(
                    node,
                    f"`import {alias.name}` also binds `{top}`, which this exercise does not let "
                    f"you import; write `import {alias.name} as ...`",
                )
        return super().visit_Import(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> _Visited:  # noqa: N802 (ast's naming)
        if node.level or node.module is None:
            self.error(node, "relative imports are not allowed: a submission is a single file")
        else:
            self._check_import(node, node.module)
            for alias in node.names:
                dotted = f"{node.module}.{alias.name}"
                if alias.name in self._forbidden:
                    self.error(node, forbidden_message(dotted))
                elif is_private(alias.name):  # a module is never the submission's own
                    self.error(node, private_refusal(dotted))
        return super().visit_ImportFrom(node)

    def _check_attribute(self, node: ast.Attribute, *, storing: bool) -> None:
        if self._classes:
            node.attr = _mangled(node.attr, self._classes[-1])
        problem = attribute_problem(node.attr, storing=storing)
        if problem is not None:
            self.error(node, problem)
        elif is_private(node.attr) and node.attr not in self._private_names:
            # Read, never defined here: only a library's (`torch.sys._getframe`) can it be.
            self.error(node, private_refusal(node.attr))
        elif node.attr in self._forbidden:
            self.error(node, forbidden_message(_shorten(ast.unparse(node))))

    def _check_import(self, node: ast.stmt, module: str) -> None:
        if module not in self._allowed_imports:
            self.error(node, import_refusal(module, self._allowed_imports))


def _guard_call(guard: str, located_like: ast.expr | ast.stmt, *args: ast.expr) -> ast.Call:
    call = ast.Call(ast.Name(guard, ast.Load()), list(args), [])
    copy_locations(call, located_like)
    return call


# Calls whose first argument is a dtype: `x.astype(object)`, `x.view("O")`, `np.dtype(object)`.
_DTYPE_FIRST = frozenset({"astype", "view", "dtype"})


def _dtype_arguments(call: ast.Call) -> list[ast.expr]:
    """The arguments of `call` that stand for a dtype, as far as the source shows: `dtype=...`
    anywhere, and the first argument of the calls that take a dtype first."""
    found = [keyword.value for keyword in call.keywords if keyword.arg == "dtype"]
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
    if name in _DTYPE_FIRST and call.args:
        found.append(call.args[0])
    return found


def _spells_object_dtype(node: ast.expr) -> bool:
    """`object`, `np.object_`, or a string numpy reads as an object dtype ("O", "object")."""
    if isinstance(node, ast.Name):
        return node.id == "object"
    if isinstance(node, ast.Attribute):
        return node.attr == "object_"
    text = node.value if isinstance(node, ast.Constant) else None
    return isinstance(text, str) and names_object_dtype(text)


class _PrivateNames(ast.NodeVisitor):
    """The private names a source defines: functions and classes, attributes and class
    attributes it assigns, and strings that spell one (`setattr(self, "_h", ...)`,
    `register_buffer("_mask", ...)`). Attributes as Python stores them (mangled)."""

    def __init__(self) -> None:
        self._classes: list[str] = []
        self.found: set[str] = set()

    @classmethod
    def of(cls, tree: ast.AST) -> frozenset[str]:
        visitor = cls()
        visitor.visit(tree)
        return frozenset(name for name in visitor.found if is_private(name))

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.found.add(node.name)
        self._classes.append(node.name)
        self.generic_visit(node)
        self._classes.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.found.add(node.name)
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if not isinstance(node.ctx, ast.Load):
            self.found.add(_mangled(node.attr, self._classes[-1]) if self._classes else node.attr)
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if not isinstance(node.ctx, ast.Load):
            self.found.add(node.id)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and node.value.isidentifier():
            self.found.add(node.value)


def _mangled(attribute: str, class_name: str) -> str:
    """`self.__heads` in class `Net` as Python stores it, `_Net__heads`. Python mangles the
    attribute it compiles natively (a write) but not the string a guard receives (a read):
    mangling both here keeps them the same attribute."""
    if not attribute.startswith("__") or attribute.endswith("__"):
        return attribute
    stripped = class_name.lstrip("_")
    return f"_{stripped}{attribute}" if stripped else attribute


def _shorten(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
