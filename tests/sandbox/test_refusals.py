"""Every refusal a student can meet, each beside legitimate code that resembles it and must run.

A refusal of correct code fails a student as surely as a wrong verdict: each row shows where the
line falls, with the refused code, the words the student reads, and its look-alike that passes.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

import pytest
from guest_support import TORCH_POLICY, Ended, printed, run

from grader.contract import Policy, Violation


@dataclass(frozen=True)
class Pair:
    refused: str
    message: str  # found in the refusal
    legitimate: str  # resembles `refused`, and runs

    def __str__(self) -> str:
        return self.message


PAIRS = [
    # names
    Pair(
        "__import__('os')",
        "double-underscore names reach into Python's internals",
        "__all__ = ['f']",
    ),
    Pair("_getattr_ = 1", "reserved for the grading sandbox", "_getattr = 1"),
    Pair("printed = 1", "`printed` is a reserved name", "printed_ = 1"),
    Pair("def print(x):\n    pass", "`print` is a reserved name", "def show(x):\n    print(x)"),
    # special methods
    Pair(
        "class A:\n    def __eq__(self, other):\n        return True",
        "defining `__eq__` is not allowed",
        "class A:\n    def __repr__(self):\n        return 'A'",
    ),
    # attributes
    Pair("x = (1).__class__", "`__class__` is not allowed", "class A:\n    pass\nx = A.__init__"),
    Pair(
        "def g():\n    yield 1\nx = g().gi_frame",
        "frames, tracebacks and code objects",
        "def g():\n    yield 1\nx = list(g())",
    ),
    Pair(
        "import torch\nx = torch._C",
        "private to the library that defines them",
        "class Net:\n    def _helper(self):\n        return 1\nx = Net()._helper()",
    ),
    Pair(
        "import torch.nn as nn\nclass Net(nn.Module):\n    pass\nx = getattr(Net(), '_modules')",
        "private to the library that defines them",
        "import torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self._layers = nn.Linear(1, 1)\n"
        "x = getattr(Net(), '_layers')",
    ),
    # imports
    Pair("import os", "importing `os` is not allowed", "import math"),
    Pair("from . import helpers", "relative imports are not allowed", "from math import sqrt"),
    Pair("from torch import *", '"*" imports are not allowed', "from torch import tensor"),
    Pair("from torch import _C", "`torch._C` is not allowed", "from torch import nn"),
    Pair(
        "import torch\nx = torch.distributions",
        "`torch.distributions` is a module",
        "import torch\nx = torch.nn",
    ),
    # a module's attributes, by allow-list
    Pair(
        "import torch\nx = torch.load",
        "`torch.load` is not available",
        "import torch\nx = torch.cat",
    ),
    Pair(
        "import numpy as np\nx = np.save",
        "`numpy.save` is not available",
        "import numpy as np\nx = np.stack",
    ),
    # attributes that reach files, memory or modules
    Pair(
        "import torch\nx = torch.zeros(2).storage()",
        "raw storage",
        "import torch\nx = torch.zeros(2).contiguous()",
    ),
    Pair(
        "import torch\nx = torch.zeros(2).type('torch.DoubleTensor')",
        "use `.to(dtype)` instead",
        "import torch\nx = torch.zeros(2).to(torch.float64)",
    ),
    Pair(
        "x = str.format('{0}', 1)",
        "call it on a string instead",
        "x = '{0}'.format(1)",
    ),
    # the exercise's forbidden APIs
    Pair(
        "import torch.nn as nn\nm = nn.MultiheadAttention(4, 2)",
        "the point is to build it yourself",
        "import torch.nn as nn\nm = nn.Linear(4, 2)",
    ),
    Pair(
        "import torch.nn.functional as F\nf = getattr(F, 'scaled_dot_product_' + 'attention')",
        "the point is to build it yourself",
        "import torch.nn.functional as F\nf = getattr(F, 'soft' + 'max')",
    ),
    Pair(
        "import torch\nimport torch.nn as nn\nx = torch.ones(1, 2, 4)\n"
        "y = nn.TransformerEncoderLayer(4, 2, batch_first=True).self_attn(x, x, x)",
        "(your code ran it inside another layer or function)",
        "import torch\nimport torch.nn as nn\nx = torch.ones(1, 2, 4)\n"
        "y = nn.TransformerEncoderLayer(4, 2, batch_first=True).norm1(x)",
    ),
    # names that containers and registrations turn into attributes
    Pair(
        "import torch.nn as nn\np = nn.ParameterDict({'__array_interface__': 1})",
        "cannot name a key, a buffer, a parameter or a submodule",
        "import torch\nimport torch.nn as nn\np = nn.ParameterDict({'scale': torch.ones(1)})",
    ),
    Pair(
        "import torch.nn as nn\nm = nn.Linear(1, 1)\nm.register_buffer('__mask__', None)",
        "cannot name a key, a buffer, a parameter or a submodule",
        "import torch.nn as nn\nm = nn.Linear(1, 1)\nm.register_buffer('_mask', None)",
    ),
    # raw memory: object pointers, frees under a view, sparse buffers, unchecked lengths
    Pair(
        "import numpy as np\nx = np.zeros(2).astype(object)",
        "numpy arrays of Python objects",
        "import numpy as np\nx = np.zeros(2).astype(np.float32)",
    ),
    Pair(
        "import numpy as np\nx = np.zeros(4)\nx.resize(8, refcheck=False)",
        "`.resize(..., refcheck=False)` is not allowed",
        "import numpy as np\nx = np.resize(np.zeros(4), 8)",
    ),
    Pair(
        "import torch\nx = torch.zeros(3)\ni = x.indices()",
        "`.indices` is not allowed",
        "import torch\nx = torch.zeros(3)\ni = x.topk(2).indices",
    ),
    Pair(
        "import torch\nx = torch.zeros(3).to_sparse()",
        "makes a sparse tensor",
        "import torch\nx = torch.zeros(3).to_dense()",
    ),
    Pair(
        "import torch\nf = torch.segment_reduce",
        "`torch.segment_reduce` is not available",
        "import torch\nf = torch.scatter_reduce",
    ),
    # autograd: a backward pass of one's own, not the process-wide switches and hooks
    Pair(
        "import torch\ntorch.autograd.set_detect_anomaly(True)",
        "switches anomaly mode on for the whole process",
        "import torch\nx = torch.ones(2, requires_grad=True)\n"
        "g = torch.autograd.grad((x * x).sum(), x)",
    ),
    Pair(
        "import torch\nh = torch.autograd.graph.saved_tensors_hooks(abs, abs)",
        "saved-tensor hooks and graph hooks run your code inside every backward pass",
        "import torch\nx = torch.ones(2, requires_grad=True)\nh = x.register_hook(abs)",
    ),
    Pair(
        "import torch\nclass Twice(torch.autograd.Function):\n    @staticmethod\n"
        "    def forward(ctx, x):\n        return getattr(ctx, '_forward_cls')\n"
        "y = Twice.apply(torch.ones(1))",
        "`_forward_cls` is not allowed",
        "import torch\nclass Twice(torch.autograd.Function):\n    @staticmethod\n"
        "    def forward(ctx, x):\n        ctx._factor = 2\n        return x * ctx._factor\n"
        "y = Twice.apply(torch.ones(1))",
    ),
    # writes
    Pair(
        "import torch\ntorch.allclose = None",
        "changing the module `torch` is not allowed",
        "import torch\nx = torch.zeros(2)\nx[0] = 1",
    ),
    Pair(
        "import torch.nn as nn\nsetattr(nn.Linear, 'forward', None)",
        "changing the class `Linear` is not allowed",
        "import torch.nn as nn\nlayer = nn.Linear(1, 1)\nsetattr(layer, 'bias', None)",
    ),
    Pair(
        "def g():\n    pass\ng.cache = {}",
        "changing a function is not allowed",
        "class G:\n    pass\ng = G()\ng.cache = {}",
    ),
    Pair(
        "class Net:\n    pass\nsetattr(Net(), '__class__', int)",
        "double-underscore attributes reach into Python's internals",
        "class Net:\n    pass\nsetattr(Net(), 'name', 'net')",
    ),
    # source that cannot be read
    Pair("x = (", "syntax error", "x = ()"),
    Pair(
        "async def f():\n    pass",
        "AsyncFunctionDef statements are not allowed",
        "def g():\n    pass",
    ),
]

POLICY = Policy((*TORCH_POLICY.allowed_imports, "numpy"), TORCH_POLICY.forbidden)


def refusal(source: str) -> Violation:
    """The refusal of `source`, by the static layer or by a runtime guard."""
    try:
        recorder = run(source, policy=POLICY)
    except Ended as ended:
        return ended.violation
    assert recorder.rejections, f"not refused: {source!r}"
    return recorder.rejections[0][0]


@pytest.mark.parametrize("pair", PAIRS, ids=str)
def test_each_refusal_stands_beside_code_that_passes(pair: Pair) -> None:
    assert pair.message in refusal(pair.refused + "\n").message
    legitimate = pair.legitimate + "\n"
    recorder = run(textwrap.dedent(legitimate) + "\ndef f():\n    pass\n", policy=POLICY)
    assert recorder.rejections == []
    (outcome,) = recorder.outcomes
    assert outcome.error is None, outcome.error


def test_import_of_a_submodule_binds_its_library_where_the_library_is_allowed() -> None:
    assert printed("import torch.nn\nprint(torch.nn.Linear(1, 1).weight.shape)\n", POLICY) == (
        "torch.Size([1, 1])\n"
    )


def test_a_missing_entry_point_is_refused_beside_a_found_one() -> None:
    refused = run("class Attention:\n    pass\n", kind="module", entry_point="Attenton")
    assert "did you mean `Attention`?" in refused.rejections[0][0].message
    found = run("class Attention:\n    pass\n", kind="module", entry_point="Attention")
    assert found.rejections == []
