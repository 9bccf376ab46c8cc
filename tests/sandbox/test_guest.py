"""Submissions compiled and run by `guest.execute` under the policy's runtime guards.

In-process, with an `on_violation` that raises: every source here is a benign probe of a guard.
The one test that needs the real "never returns" runs its probe in a child interpreter.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import Any

import numpy as np
import pytest
import torch
from guest_support import NUMPY_POLICY, TORCH_POLICY, Ended, printed, run, violation_of

from grader.contract import Call, OutputValue, Policy, Violation
from grader.limits import SandboxLimits

# /work/shared/seeds/000: the notebook's starter, verbatim (torchtyping and all).
SEED_STARTER = """\
import torch
import torch.nn as nn
from torchtyping import TensorType

class MultiHeadedSelfAttention(nn.Module):

    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()
        torch.manual_seed(0)
        # Hint: nn.ModuleList() will be useful. It works the same as a Python list
        # but is useful here since instance variables of any subclass of nn.Module
        # must also be subclasses of nn.Module

        # Use self.SingleHeadAttention(embedding_dim, head_size) to instantiate. You have to calculate head_size.
        pass

    def forward(self, embedded: TensorType[float]) -> TensorType[float]:
        # Return answer to 4 decimal places
        pass

    class SingleHeadAttention(nn.Module):
        def __init__(self, embedding_dim: int, attention_dim: int):
            super().__init__()
            torch.manual_seed(0)
            self.key_gen = nn.Linear(embedding_dim, attention_dim, bias=False)
            self.query_gen = nn.Linear(embedding_dim, attention_dim, bias=False)
            self.value_gen = nn.Linear(embedding_dim, attention_dim, bias=False)

        def forward(self, embedded: TensorType[float]) -> TensorType[float]:
            k = self.key_gen(embedded)
            q = self.query_gen(embedded)
            v = self.value_gen(embedded)

            scores = q @ torch.transpose(k, 1, 2) # @ is the same as torch.matmul()
            context_length, attention_dim = k.shape[1], k.shape[2]
            scores = scores / (attention_dim ** 0.5)

            lower_triangular = torch.tril(torch.ones(context_length, context_length))
            mask = lower_triangular == 0
            scores = scores.masked_fill(mask, float('-inf'))
            scores = nn.functional.softmax(scores, dim = 2)

            return scores @ v
"""  # noqa: E501 (a line of the seed, kept verbatim)


SOLUTION = """\
import torch
import torch.nn as nn
from torchtyping import TensorType


class MultiHeadedSelfAttention(nn.Module):

    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()
        torch.manual_seed(0)
        head_size = attention_dim // num_heads
        self.heads = nn.ModuleList(
            [self.SingleHeadAttention(embedding_dim, head_size) for _ in range(num_heads)]
        )

    def forward(self, embedded: TensorType[float]) -> TensorType[float]:
        outputs = [head(embedded) for head in self.heads]
        return torch.round(torch.cat(outputs, dim=2), decimals=4)

    class SingleHeadAttention(nn.Module):
        def __init__(self, embedding_dim: int, attention_dim: int):
            super().__init__()
            torch.manual_seed(0)
            self.key_gen = nn.Linear(embedding_dim, attention_dim, bias=False)
            self.query_gen = nn.Linear(embedding_dim, attention_dim, bias=False)
            self.value_gen = nn.Linear(embedding_dim, attention_dim, bias=False)

        def forward(self, embedded: TensorType[float]) -> TensorType[float]:
            k = self.key_gen(embedded)
            q = self.query_gen(embedded)
            v = self.value_gen(embedded)
            scores = q @ torch.transpose(k, 1, 2)
            context_length, attention_dim = k.shape[1], k.shape[2]
            scores = scores / (attention_dim ** 0.5)
            lower_triangular = torch.tril(torch.ones(context_length, context_length))
            scores = scores.masked_fill(lower_triangular == 0, float('-inf'))
            scores = nn.functional.softmax(scores, dim=2)
            return scores @ v
"""


def attention_call() -> Call:
    embedded = np.random.default_rng(7).standard_normal((2, 5, 8)).astype(np.float32)
    return Call(
        id="attention",
        args=(embedded,),
        init_kwargs={"embedding_dim": 8, "attention_dim": 4, "num_heads": 2},
    )


def run_attention(source: str) -> OutputValue:
    recorder = run(
        source,
        policy=Policy((*TORCH_POLICY.allowed_imports, "torchtyping"), TORCH_POLICY.forbidden),
        kind="module",
        entry_point="MultiHeadedSelfAttention",
        calls=(attention_call(),),
    )
    assert not recorder.rejections
    (outcome,) = recorder.outcomes
    assert outcome.error is None, outcome.error
    assert outcome.outputs is not None
    return outcome.outputs[0]


def test_the_seed_starter_compiles_and_runs() -> None:
    # Its forward is still `pass`: it runs, and returns nothing yet.
    assert run_attention(SEED_STARTER).type_name == "NoneType"


def test_a_correct_solution_runs_as_plain_python_would() -> None:
    output = run_attention(SOLUTION)
    assert output.type_name == "Tensor"
    assert output.shape == (2, 5, 4)
    assert output.dtype == "torch.float32"

    # The same code without the sandbox (torchtyping's annotation made a plain value).
    plain = SOLUTION.replace("from torchtyping import TensorType", "TensorType = {float: None}")
    namespace: dict[str, Any] = {}
    exec(compile(plain, "<plain>", "exec"), namespace)
    (embedded,) = attention_call().args
    assert embedded is not None
    with torch.no_grad():
        expected = namespace["MultiHeadedSelfAttention"](8, 4, 2)(torch.from_numpy(embedded))
    np.testing.assert_array_equal(output.array, expected.numpy())


@pytest.mark.parametrize(
    ("probe", "fragment"),
    [
        ("import torch\nx = 1\ny = torch.os\n", "`torch.os` is not available"),
        ("import torch\nx = 1\ny = torch.sys\n", "`torch.sys` is not available"),
        ("import torch\nx = 1\ny = torch.ctypes\n", "`torch.ctypes` is not available"),
        ("import torch\nx = 1\ny = torch.load\n", "`torch.load` is not available"),
        ("import torch\nx = 1\ny = torch.save\n", "`torch.save` is not available"),
        ("import torch\nx = 1\ny = torch.from_file\n", "`torch.from_file` is not available"),
        ("import torch\nx = 1\ny = torch.library\n", "`torch.library` is a module"),
        ("import torch\nx = 1\ny = torch.compile\n", "`torch.compile` is not available"),
        ("import torch\nx = 1\nfrom torch import multiprocessing\n", "`torch.multiprocessing`"),
        ("import torch.nn.functional as F\nx = 1\ny = F.torch\n", "`torch.nn.functional.torch`"),
        ("import math\nx = 1\ny = math.sys\n", "`math.sys` is not available"),
        ("import torch\nx = torch.zeros(2)\ny = x.untyped_storage()\n", "raw storage"),
        ("import torch\nx = torch.zeros(2)\ny = x.storage()\n", "raw storage"),
        ("import torch\nx = torch.zeros(2)\nx.share_memory_()\n", "shared memory"),
        ("import torch\nx = torch.zeros(2)\ny = x.data_ptr()\n", "raw memory pointer"),
        ("import torch\nx = torch.zeros(2)\ny = x.type('torch.DoubleTensor')\n", "`.to(dtype)`"),
    ],
)
def test_torch_hands_out_only_its_computational_part(probe: str, fragment: str) -> None:
    violation = violation_of(probe)
    assert fragment in violation.message
    assert violation.line == 3


@pytest.mark.parametrize(
    ("probe", "fragment"),
    [
        ("import numpy as np\nx = 1\ny = np.load\n", "`numpy.load` is not available"),
        ("import numpy as np\nx = 1\ny = np.fromfile\n", "`numpy.fromfile` is not available"),
        ("import numpy as np\nx = 1\ny = np.memmap\n", "`numpy.memmap` is not available"),
        ("import numpy as np\nx = 1\ny = np.ctypeslib\n", "`numpy.ctypeslib` is not available"),
        ("import numpy as np\nx = 1\ny = np.lib\n", "`numpy.lib` is a module"),
        ("import numpy as np\nx = np.zeros(2)\nx.tofile('out')\n", "writes a file"),
        ("import numpy as np\nx = np.zeros(2)\ny = x.dumps()\n", "makes a pickle"),
        ("import numpy as np\nx = np.zeros(2)\ny = x.ctypes\n", "raw memory pointers"),
    ],
)
def test_numpy_hands_out_only_its_computational_part(probe: str, fragment: str) -> None:
    violation = violation_of(probe, NUMPY_POLICY)
    assert fragment in violation.message
    assert violation.line == 3


def test_modules_outside_the_exercise_are_refused_however_reached() -> None:
    torch_only = Policy(("torch",))
    probe = "import torch\nx = torch.distributions\n"
    assert "`torch.distributions` is a module" in violation_of(probe, torch_only).message
    probe = "import torch\nx = torch.zeros(1)\nfrom torch import distributions\n"
    assert violation_of(probe, torch_only).line == 3


def test_what_torch_numpy_and_math_offer_for_the_work_is_there() -> None:
    probe = """\
        import math
        import numpy as np
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float32)
        with torch.no_grad():
            y = F.softmax(x @ x.T / math.sqrt(2), dim=-1).sum(dim=-1)
        print(torch.allclose(y, torch.ones(2)), nn.Linear(2, 2).weight.shape)
        print(np.round(np.exp(np.zeros(2)) * np.pi, 2), x.numpy().dtype, torch.finfo(x.dtype).eps)
        """
    both = Policy((*TORCH_POLICY.allowed_imports, "numpy"))
    assert printed(probe, both) == (
        "True torch.Size([2, 2])\n[3.14 3.14] float32 1.1920928955078125e-07\n"
    )


def test_future_imports_work_whatever_the_exercise_allows() -> None:
    probe = """\
        from __future__ import annotations
        def double(x: Undefined) -> Undefined:
            return 2 * x
        print(double(2))
        """
    assert printed(probe, Policy(())) == "4\n"


def test_forbidden_apis_are_refused_when_reached_by_a_computed_name() -> None:
    probe = "import torch.nn as nn\nm = nn\nx = getattr(m, 'Multihead' + 'Attention')\n"
    violation = violation_of(probe)
    assert violation == Violation(
        "`torch.nn.MultiheadAttention` is not allowed in this exercise: the point is to build "
        "it yourself",
        3,
    )
    probe = "import torch.nn.functional as F\nx = getattr(F, 'scaled_dot_product_' + 'attention')\n"
    assert "scaled_dot_product_attention" in violation_of(probe).message


def test_forbidden_apis_written_out_are_rejected_before_anything_runs() -> None:
    recorder = run("import torch.nn as nn\nprint('loaded')\nm = nn\nlayer = m.MultiheadAttention\n")
    assert recorder.rejections == [
        (
            Violation(
                "`m.MultiheadAttention` is not allowed in this exercise: the point is to build "
                "it yourself",
                4,
            ),
        )
    ]
    assert recorder.outcomes == []


@pytest.mark.parametrize(
    ("probe", "fragment"),
    [
        ("import torch\nx = 1\ntorch.allclose = lambda a, b: True\n", "the module `torch`"),
        ("import torch\nx = 1\ntorch.Tensor.add = torch.sub\n", "the class `Tensor`"),
        ("import torch.nn as nn\nx = 1\nnn.Module.forward = None\n", "the class `Module`"),
        ("import torch\nx = 1\ndel torch.zeros\n", "the module `torch`"),
        ("import torch.nn.functional as F\nx = 1\nF.softmax = F.relu\n", "`torch.nn.functional`"),
        ("class A:\n    pass\nA.shared = 1\n", "the class `A`"),
        ("def g():\n    pass\ng.cache = {}\n", "a function"),
    ],
)
def test_monkeypatching_is_refused(probe: str, fragment: str) -> None:
    violation = violation_of(probe)
    assert fragment in violation.message
    assert "no monkeypatching" in violation.message
    assert violation.line == 3


@pytest.mark.parametrize(
    "probe",
    [
        "import torch\ntorch.Tensor.__eq__ = None\n",
        "import torch.nn as nn\nnn.Module.__call__ = None\n",
    ],
)
def test_monkeypatching_special_methods_is_rejected_statically(probe: str) -> None:
    (violations,) = run(probe).rejections
    assert violations[0].line == 2


def test_a_submission_may_change_its_own_objects_containers_and_tensors() -> None:
    probe = """\
        import torch
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.scale = 2
                self.scale += 1
                self.layer = nn.Linear(2, 2)
                self.layer.bias = None
        net = Net()
        items, table = [1, 2], {"a": 1}
        items[0] += 10
        table["a"] *= 5
        table["b"] = 0
        del items[1]
        x = torch.zeros(2, 3)
        x[:, 1:] += 1
        x[0] = 7
        print(net.scale, net.layer.bias, items, table, x.tolist())
        """
    assert printed(probe) == ("3 None [11] {'a': 5, 'b': 0} [[7.0, 7.0, 7.0], [0.0, 1.0, 1.0]]\n")


@pytest.mark.parametrize(
    ("probe", "fragment"),
    [
        ("x = 1\ny = 2\nz = getattr(x, '__cla' + 'ss__')\n", "`__class__` is not allowed"),
        ("x = 1\ny = 2\nz = hasattr(x, '__globals__')\n", "`__globals__` is not allowed"),
        ("def g():\n    yield 1\nz = getattr(g(), 'gi_' + 'frame')\n", "frames, tracebacks"),
        ("x = 1\ny = 2\nz = '{0.__class__}'.format(x)\n", "`__class__` is not allowed"),
        ("x = 1\ny = 2\nz = '{x.__class__}'.format_map({'x': x})\n", "`__class__` is not allowed"),
        ("x = 1\ny = 2\nz = str.format('{0.__class__}', x)\n", "call it on a string"),
    ],
)
def test_escape_hatches_behind_computed_names_are_refused_at_runtime(
    probe: str, fragment: str
) -> None:
    violation = violation_of(probe)
    assert fragment in violation.message
    assert violation.line == 3


def test_safe_getattr_and_format_behave_as_usual() -> None:
    probe = """\
        class Box:
            def __init__(self):
                self.size = 3
        box = Box()
        print(getattr(box, "size"), getattr(box, "missing", "default"), hasattr(box, "weight"))
        print("{0} {name} {1.size} {items[1]}".format(3, box, name="box", items=[4, 5]))
        """
    assert printed(probe) == "3 default False\n3 box 3 5\n"


def test_the_violation_points_at_the_submission_line_inside_a_call() -> None:
    source = """\
        import torch
        import torch.nn as nn
        class Net(nn.Module):
            def forward(self, x):
                y = x + 1
                return torch.os
        """
    call = Call(id="forward", args=(np.zeros(2, dtype=np.float32),))
    with pytest.raises(Ended) as ended:
        run(source, kind="module", entry_point="Net", calls=(call,))
    assert ended.value.violation.line == 6


def test_library_code_imports_for_itself_while_the_submission_runs() -> None:
    # torch.tensor() imports torch.storage from C through the running frame's __import__.
    assert printed("import torch\nprint(torch.tensor([1.5]).tolist())\n") == "[1.5]\n"


def test_prints_are_captured_per_call_and_capped(capsys: pytest.CaptureFixture[str]) -> None:
    source = """\
        print("loading")
        def f():
            print("x" * 500)
            return 1
        """
    calls = (Call(id="first", args=()), Call(id="second", args=()))
    recorder = run(source, calls=calls, limits=SandboxLimits(stdout_chars=100))
    assert recorder.started_calls == ["first", "second"]
    first, second = recorder.outcomes
    assert first.stdout == "loading\n" + "x" * 92 + "… (output cut at 100 characters)"
    assert second.stdout == "x" * 100 + "… (output cut at 100 characters)"
    assert capsys.readouterr() == ("", "")


def test_a_load_error_is_reported_for_every_call_with_its_line() -> None:
    recorder = run("x = 1\ny = [][3]\n", calls=(Call(id="a", args=()), Call(id="b", args=())))
    assert [outcome.error.line for outcome in recorder.outcomes if outcome.error] == [2, 2]


# The real sandbox's on_violation writes the verdict and exits the process: nothing after it runs,
# whatever the submission catches. Only a process of its own shows that, so this probe gets one.
_DRIVER = """
import json, os, sys
from grader.sandbox.guest import execute
from grader.contract import Call, Job, Policy
from grader.limits import SandboxLimits

class Reporter:
    def rejected(self, violations):
        print("rejected", flush=True)
    def started(self, call):
        pass
    def finished(self, outcome):
        print("finished", json.dumps(outcome.stdout), flush=True)

def end_run(violation):
    print("violation", json.dumps([violation.message, violation.line]), flush=True)
    os._exit(3)

job = Job(source=sys.stdin.read(), entry_point="f", kind="function", framework="torch",
          policy=Policy(("torch",)), calls=(Call(id="only", args=()),), limits=SandboxLimits())
execute(job, Reporter(), end_run)
"""


def test_a_bare_except_cannot_swallow_a_violation() -> None:
    probe = """\
        import torch
        try:
            torch.os
        except:
            pass
        print("still running")
        def f():
            return 1
        """
    child = subprocess.run(
        [sys.executable, "-c", _DRIVER],
        input=textwrap.dedent(probe),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert child.returncode == 3, child.stderr
    assert child.stdout.splitlines() == [
        "violation "
        + json.dumps(
            [
                "`torch.os` is not available in the grading sandbox: only the computational part "
                "of `torch` is",
                3,
            ]
        )
    ]


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (
            "class MultiHeadSelfAttention:\n    pass\n",
            "your code defines no `MultiHeadedSelfAttention`, the class this exercise grades: "
            "did you mean `MultiHeadSelfAttention`?",
        ),
        (
            "class multiheadedselfattention:\n    pass\n",
            "your code defines no `MultiHeadedSelfAttention`, the class this exercise grades: "
            "did you mean `multiheadedselfattention`?",
        ),
        (
            "import torch\nclass Solution:\n    pass\ndef helper():\n    pass\n",
            "your code defines no `MultiHeadedSelfAttention`, the class this exercise grades; "
            "it defines `Solution`, `helper`",
        ),
        (
            "# TODO\n",
            "your code defines no `MultiHeadedSelfAttention`, the class this exercise grades: "
            "it defines no class or function at all",
        ),
    ],
)
def test_a_submission_without_its_entry_point_is_refused_with_the_closest_name(
    source: str, message: str
) -> None:
    recorder = run(source, kind="module", entry_point="MultiHeadedSelfAttention")
    assert recorder.rejections == [(Violation(message),)]
    assert recorder.outcomes == []


def test_a_misfit_is_reported_as_the_grader_finding_not_as_an_exception() -> None:
    source = "class Net:\n    def __init__(self):\n        pass\n"
    (outcome,) = run(source, kind="module", entry_point="Net", calls=(Call("only", ()),)).outcomes
    assert outcome.error is not None
    assert outcome.error.contract
    assert outcome.error.message == "`Net(...)` made a Net, not an nn.Module"
