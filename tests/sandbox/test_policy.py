"""The sandbox's first layer on its own: what the static policy admits and refuses, the builtins
and the import guard it hands out, and the capture that print() writes to."""

from __future__ import annotations

import builtins
import textwrap
from typing import NoReturn

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grader.contract import Policy, Violation
from grader.sandbox.policy import (
    DEFINABLE_DUNDERS,
    SUBMISSION_MODULE,
    StdoutCapture,
    SubmissionRejected,
    compile_submission,
    restricted_globals,
)

POLICY = Policy(
    allowed_imports=("torch", "torch.nn", "torch.nn.functional", "math", "typing"),
    forbidden=(
        "torch.nn.MultiheadAttention",
        "torch.nn.functional.scaled_dot_product_attention",
    ),
)


def rejection(source: str, policy: Policy = POLICY) -> tuple[Violation, ...]:
    with pytest.raises(SubmissionRejected) as rejected:
        compile_submission(textwrap.dedent(source), policy)
    return rejected.value.violations


def only_violation(source: str, policy: Policy = POLICY) -> Violation:
    violations = rejection(source, policy)
    assert len(violations) == 1, violations
    return violations[0]


ORDINARY_CODE = {
    "super().__init__()": """
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.linear = nn.Linear(2, 2)
        """,
    "explicit base __init__": """
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                nn.Module.__init__(self)
        """,
    "nested classes": """
        class Outer:
            class Inner:
                def __init__(self, size: int) -> None:
                    self.size = size
            def make(self):
                return self.Inner(3)
        """,
    "annotations": """
        import torch
        from typing import Optional
        scale: float = 0.5
        class Net:
            size: int
            def __init__(self) -> None:
                self.size: int = 3
            def forward(self, x: torch.Tensor, mask: Optional[torch.Tensor] = None) -> torch.Tensor:
                return x
        """,
    "f-strings": """
        value = 3.14159
        text = f"{value:.2f} {value!r:>10} {'nested'}"
        """,
    "comprehensions": """
        squares = [i * i for i in range(4) if i % 2]
        table = {i: i * i for i in range(4)}
        unique = {i % 2 for i in range(4)}
        total = sum(i for i in range(4))
        pairs = [(i, j) for i, j in zip(range(2), range(2))]
        """,
    "matmul and augmented assignment": """
        import torch
        a = torch.ones(2, 2)
        b = a @ a
        b @= a
        n = 0
        n += 1
        items = [1, 2]
        items[0] += 1
        b[:, 0] *= 2
        class Counter:
            def __init__(self):
                self.count = 0
                self.count += 1
        """,
    "print": """
        print("hello", 1, sep=", ", end="!\\n", flush=True)
        def report(x):
            print(x)
        """,
    "tuple unpacking": """
        a, (b, c) = 1, (2, 3)
        first, *rest = [1, 2, 3]
        for index, (key, value) in enumerate({1: 2}.items()):
            pass
        """,
    "lambdas": """
        double = lambda x: x * 2
        ordered = sorted([3, 1, 2], key=lambda x: -x)
        """,
    "with torch.no_grad()": """
        import torch
        with torch.no_grad():
            y = torch.zeros(2) + 1
        """,
    "try/except/finally": """
        try:
            x = 1 / 0
        except ZeroDivisionError as error:
            x = 0
        except (ValueError, TypeError):
            raise
        else:
            pass
        finally:
            y = 2
        """,
    "a notebook's main guard": """
        if __name__ == "__main__":
            print("demo")
        """,
    "decorators, properties, loops, asserts": """
        class Shape:
            def __init__(self):
                self.sides = []
            @property
            def count(self):
                return len(self.sides)
            @staticmethod
            def unit():
                return 1
        i = 0
        while True:
            i += 1
            if i > 3:
                break
        assert i == 4, "counted"
        del i
        """,
    "a container module of one's own": """
        import torch.nn as nn
        class Heads(nn.Module):
            def __init__(self, heads):
                super().__init__()
                self.heads = nn.ModuleList(heads)
            def __len__(self):
                return len(self.heads)
            def __getitem__(self, index):
                return self.heads[index]
            def __iter__(self):
                return iter(self.heads)
            def __repr__(self):
                return f"Heads({len(self)})"
        """,
    "a __future__ import": """
        from __future__ import annotations, division
        import torch
        def identity(x: torch.Tensor) -> torch.Tensor:
            return x
        """,
    "`_` as a throwaway name": """
        for _ in range(2):
            pass
        """,
}


@pytest.mark.parametrize("source", ORDINARY_CODE.values(), ids=ORDINARY_CODE.keys())
def test_ordinary_module_code_compiles(source: str) -> None:
    compile_submission(textwrap.dedent(source), POLICY)


ESCAPE_ATTRIBUTES = [
    "__class__",
    "__subclasses__",
    "__globals__",
    "__builtins__",
    "__code__",
    "__dict__",
    "__mro__",
    "__bases__",
    "__getattribute__",
    "__reduce__",
    "__reduce_ex__",
    "__closure__",
    "__traceback__",
    "__import__",
]


@pytest.mark.parametrize("name", ESCAPE_ATTRIBUTES)
def test_double_underscore_attributes_are_refused_with_their_line(name: str) -> None:
    violation = only_violation(f"x = ()\ny = x.{name}\n")
    assert violation.line == 2
    assert f"`{name}` is not allowed" in violation.message
    assert "Python's internals" in violation.message


FRAME_ATTRIBUTES = ["f_back", "f_globals", "f_locals", "f_code", "tb_frame", "gi_frame", "gi_code"]
FRAME_ATTRIBUTES += ["cr_frame", "ag_frame"]


@pytest.mark.parametrize("name", FRAME_ATTRIBUTES)
def test_frame_and_traceback_attributes_are_refused(name: str) -> None:
    violation = only_violation(f"def gen():\n    yield 1\nx = gen().{name}\n")
    assert violation.line == 3
    assert "frames, tracebacks and code objects" in violation.message


@given(st.from_regex(r"__[A-Za-z0-9_]{1,12}__", fullmatch=True))
def test_no_double_underscore_attribute_but_init_is_readable(name: str) -> None:
    source = f"x = ()\ny = x.{name}\n"
    if name == "__init__":
        compile_submission(source, POLICY)
    else:
        assert only_violation(source).line == 2


@given(st.from_regex(r"_[A-Za-z0-9]([A-Za-z0-9_]{0,10}[A-Za-z0-9])?", fullmatch=True))
def test_private_names_are_left_to_the_runtime_guards(name: str) -> None:
    # Whose `_name` it is depends on the object, which only the runtime sees.
    compile_submission(
        f"{name} = 1\nclass A:\n    def {name}(self):\n        self.{name} = 2\n", POLICY
    )


def test_init_may_be_read_but_not_replaced() -> None:
    violation = only_violation("class A:\n    pass\nA.__init__ = print\n")
    assert "`__init__` is not allowed" in violation.message


@pytest.mark.parametrize(
    "source",
    ["__import__('os')", "b = __builtins__", "x = __loader__", "__name__ = 'main'"],
)
def test_double_underscore_names_are_refused(source: str) -> None:
    assert "double-underscore names" in only_violation(source).message


def test_module_metadata_may_be_bound() -> None:
    compile_submission('__all__ = ["Net"]\n__version__ = "1.0"\n', POLICY)


def test_a_private_attribute_in_a_class_is_mangled_for_reads_and_writes_alike() -> None:
    source = "class Net:\n    def f(self):\n        self.__h = self.__h\n"
    code = compile_submission(source, POLICY).code
    (method,) = (const for const in code.co_consts[0].co_consts if hasattr(const, "co_names"))
    assert "_Net__h" in method.co_consts  # the name the guards receive
    assert "_Net__h" in method.co_names  # the name Python stores


LYING_DUNDERS = [
    "__eq__",
    "__ne__",
    "__hash__",
    "__bool__",
    "__torch_function__",
    "__del__",
    "__getattr__",
    "__getattribute__",
    "__setattr__",
    "__class_getitem__",
    "__init_subclass__",
    "__instancecheck__",
]


@pytest.mark.parametrize("name", LYING_DUNDERS)
def test_special_methods_that_could_lie_cannot_be_defined(name: str) -> None:
    violation = only_violation(f"class Liar:\n    def {name}(self, *args):\n        return True\n")
    assert violation.line == 2
    assert f"defining `{name}` is not allowed" in violation.message


@given(st.from_regex(r"__[a-z_]{1,16}__", fullmatch=True))
def test_only_the_listed_special_methods_can_be_defined(name: str) -> None:
    source = f"class A:\n    def {name}(self, *args):\n        pass\n"
    if name in DEFINABLE_DUNDERS:
        compile_submission(source, POLICY)
    else:
        assert f"defining `{name}`" in only_violation(source).message


def test_special_methods_cannot_be_assigned_in_a_class_body() -> None:
    violation = only_violation("class Liar:\n    __eq__ = lambda self, other: True\n")
    assert violation.line == 2


@pytest.mark.parametrize(
    ("source", "written"),
    [
        ("import torch.nn as nn\nlayer = nn.MultiheadAttention(4, 2)\n", "nn.MultiheadAttention"),
        (
            "import torch.nn.functional as F\ny = F.scaled_dot_product_attention\n",
            "F.scaled_dot_product_attention",
        ),
        ("import torch.nn as nn\nm = nn\nlayer = m.MultiheadAttention\n", "m.MultiheadAttention"),
        ("from torch.nn import MultiheadAttention as M\n", "torch.nn.MultiheadAttention"),
        ("import torch\nx = torch.nn.MultiheadAttention\n", "torch.nn.MultiheadAttention"),
    ],
)
def test_forbidden_apis_are_refused_by_name(source: str, written: str) -> None:
    violation = only_violation(source)
    assert violation.message == (
        f"`{written}` is not allowed in this exercise: the point is to build it yourself"
    )
    assert violation.line == source.count("\n")


def test_a_class_of_ones_own_may_share_a_forbidden_name() -> None:
    compile_submission("class MultiheadAttention:\n    pass\n", POLICY)


def test_imports_outside_the_allow_list_are_refused() -> None:
    violation = only_violation("import numpy\nimport os\n", Policy(("numpy",)))
    assert violation == Violation(
        "importing `os` is not allowed in this exercise; you may import: "
        "__future__, collections, math, numpy, numpy.linalg, torchtyping, typing",
        2,
    )


def test_allowing_a_library_allows_its_computational_submodules_only() -> None:
    torch_only, numpy_only = Policy(("torch",)), Policy(("numpy",))
    for module in ("torch.nn", "torch.nn.functional", "torch.nn.init", "torch.linalg"):
        compile_submission(f"import {module} as m\n", torch_only)
    compile_submission("from numpy.linalg import norm\n", numpy_only)
    assert (
        "`torch.multiprocessing`"
        in only_violation("import torch.multiprocessing as m", torch_only).message
    )
    assert "`torch`" in only_violation("import torch", numpy_only).message


def test_annotation_and_math_modules_are_importable_in_every_exercise() -> None:
    compile_submission(
        "from __future__ import annotations\nimport math\nfrom typing import List\n"
        "from torchtyping import TensorType\nfrom collections import OrderedDict\n",
        Policy(()),
    )


def test_a_dotted_import_without_alias_needs_its_package_too() -> None:
    violation = only_violation("import torch.nn\n", Policy(("torch.nn",)))
    assert "also binds `torch`" in violation.message
    compile_submission("import torch.nn as nn\n", Policy(("torch.nn",)))


@pytest.mark.parametrize(
    ("source", "fragment"),
    [
        ("from . import helpers\n", "relative imports are not allowed"),
        ("from torch import *\n", '"*" imports are not allowed'),
        ("from torch import _C\n", "`torch._C` is not allowed"),
    ],
)
def test_import_forms_that_escape_the_allow_list_are_refused(source: str, fragment: str) -> None:
    assert fragment in only_violation(source).message


def test_every_problem_is_reported_at_once_in_line_order() -> None:
    source = """\
        import os
        import torch
        x = torch.__dict__
        class Liar:
            def __eq__(self, other):
                return True
        y = eval("1")
        """
    violations = rejection(source)
    assert [violation.line for violation in violations] == [1, 3, 5, 7]


@pytest.mark.parametrize(
    ("source", "fragment", "line"),
    [
        ("x = (\n", "syntax error: '(' was never closed", 1),
        ("def f():\n    pass\nreturn 3\n", "syntax error: 'return' outside function", 3),
        ("x = 1\0\n", "null bytes", None),
        ("x = " + "-" * 100_000 + "1\n", "nested too deeply", None),
    ],
)
def test_unparsable_sources_are_rejected_not_raised(
    source: str, fragment: str, line: int | None
) -> None:
    violation = only_violation(source)
    assert fragment in violation.message
    assert violation.line == line


@pytest.mark.parametrize(
    ("source", "fragment"),
    [
        ("printed = 1\n", "`printed` is a reserved name"),
        ("x = printed\n", "`printed` is a reserved name"),
        ("def print(x):\n    pass\n", "`print` is a reserved name"),
        ("_getattr_ = 1\n", "`_getattr_` is reserved for the grading sandbox"),
        ("def f(_write_):\n    pass\n", "`_write_` is reserved for the grading sandbox"),
        ("_print = 1\n", "`_print` is reserved for the grading sandbox"),
        ("async def f():\n    pass\n", "AsyncFunctionDef statements are not allowed"),
        ("class A(metaclass=type):\n    pass\n", '"metaclass" is not allowed'),
        ('exec("x = 1")\n', "Exec calls are not allowed"),
    ],
)
def test_names_and_statements_the_sandbox_reserves_are_refused(source: str, fragment: str) -> None:
    assert fragment in only_violation(source).message


# --- restricted_globals, without exec ------------------------------------------------------------


class Refused(BaseException):
    def __init__(self, violation: Violation) -> None:
        super().__init__(violation.message)
        self.violation = violation


def refuse(violation: Violation) -> NoReturn:
    raise Refused(violation)


def test_builtins_leave_out_what_reaches_past_the_guards() -> None:
    safe = restricted_globals(POLICY, StdoutCapture(100), refuse)["__builtins__"]
    for needed in ("super", "isinstance", "range", "len", "zip", "sorted", "sum", "Exception"):
        assert needed in safe
    for dangerous in (
        "open", "eval", "exec", "compile", "globals", "locals", "vars", "dir", "type",
        "breakpoint", "input", "memoryview", "help", "exit", "SystemExit",
    ):  # fmt: skip
        assert dangerous not in safe
    for guarded in ("getattr", "hasattr", "setattr", "delattr"):
        assert safe[guarded] is not getattr(builtins, guarded)


def test_classes_of_the_submission_get_a_module_name() -> None:
    namespace = restricted_globals(POLICY, StdoutCapture(100), refuse)
    exec(compile_submission("class A:\n    pass\n", POLICY).code, namespace)
    assert namespace["A"].__module__ == SUBMISSION_MODULE


@pytest.mark.parametrize(
    ("name", "fromlist", "fragment"),
    [
        ("os", None, "importing `os` is not allowed"),
        ("torch", ("load",), "`torch.load` is not available"),
        ("torch", ("multiprocessing",), "`torch.multiprocessing` is a module"),
        ("torch.nn", ("MultiheadAttention",), "`torch.nn.MultiheadAttention` is not allowed"),
    ],
)
def test_the_import_guard_checks_names_and_what_is_taken_from_them(
    name: str, fromlist: tuple[str, ...] | None, fragment: str
) -> None:
    guarded_import = restricted_globals(POLICY, StdoutCapture(100), refuse)["__builtins__"][
        "__import__"
    ]
    with pytest.raises(Refused) as refused:
        guarded_import(name, {}, {}, fromlist, 0)
    assert fragment in refused.value.violation.message


# --- StdoutCapture ------------------------------------------------------------------------------


def test_take_returns_what_was_printed_and_forgets_it() -> None:
    capture = StdoutCapture(limit_chars=100)
    capture.write("hello ")
    capture.write("world\n")
    assert capture.take() == "hello world\n"
    assert capture.take() == ""


def test_output_past_the_limit_is_cut_with_a_note() -> None:
    capture = StdoutCapture(limit_chars=5)
    capture.write("abc")
    capture.write("defgh")
    capture.write("ijk")
    assert capture.take() == "abcde… (output cut at 5 characters)"
    capture.write("xy")
    assert capture.take() == "xy"


@given(st.lists(st.text()), st.integers(min_value=0, max_value=64))
def test_any_printed_text_is_kept_up_to_the_limit(chunks: list[str], limit: int) -> None:
    capture = StdoutCapture(limit)
    for chunk in chunks:
        capture.write(chunk)
    printed = "".join(chunks)
    note = f"… (output cut at {limit} characters)" if len(printed) > limit else ""
    assert capture.take() == printed[:limit] + note
