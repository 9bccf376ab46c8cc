"""A forbidden API refused when it runs, however it is reached (`policy.forbidden_calls`).

In-process, through `guest.execute`, with an `on_violation` that raises: the probes are benign
uses of torch's own layers. The real sandbox runs the same routes in tests/security.
"""

from __future__ import annotations

import contextlib
import inspect
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NoReturn

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from guest_support import Ended, printed, run

from grader.contract import Call, Policy, Violation
from grader.sandbox.policy import forbidden_calls
from grader.sandbox.policy.patches import Patches, patched

ROOT = Path(__file__).resolve().parents[2]
MULTI_HEAD = "torch.nn.MultiheadAttention"
SDPA = "torch.nn.functional.scaled_dot_product_attention"
# The built-ins, as three exercises' lists once named them: not the layers that contain one.
BUILT_INS = Policy(
    ("torch", "numpy"),
    (
        MULTI_HEAD,
        "torch.nn.modules.activation.MultiheadAttention",
        SDPA,
        "torch.nn.functional.multi_head_attention_forward",
    ),
)
SDPA_ONLY = Policy(("torch", "numpy"), (SDPA,))

NET = """\
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = {layer}

    def forward(self, x):
        {body}
"""


def refusal_of(layer: str, body: str, policy: Policy = BUILT_INS) -> Violation:
    """The refusal of a module that holds `layer`, called as the grader calls it (eval mode, no
    grad) on a (2, 3, 8) batch."""
    call = Call("forward", (np.ones((2, 3, 8), np.float32),))
    source = NET.format(layer=layer, body=body)
    with pytest.raises(Ended) as ended:
        run(source, policy=policy, kind="module", entry_point="Net", calls=(call,))
    return ended.value.violation


def ran_inside(api: str) -> str:
    return (
        f"`{api}` is not allowed in this exercise: the point is to build it yourself (your code "
        "ran it inside another layer or function)"
    )


ENCODER_LAYER = "nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True)"
ROUTES = {
    "an encoder layer's self_attn": (ENCODER_LAYER, "return self.layer.self_attn(x, x, x)[0]"),
    "its self_attn in training mode (the Python path)": (
        ENCODER_LAYER,
        "self.layer.self_attn.train()\n        return self.layer.self_attn(x, x, x)[0]",
    ),
    "an encoder layer's forward (the fast path)": (ENCODER_LAYER, "return self.layer(x)"),
    "an encoder": (
        f"nn.TransformerEncoder({ENCODER_LAYER}, 2, enable_nested_tensor=False)",
        "return self.layer(x)",
    ),
    "a decoder layer": (
        "nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, batch_first=True)",
        "return self.layer(x, x)",
    ),
    "a whole Transformer": (
        "nn.Transformer(8, 2, 1, 1, dim_feedforward=16, batch_first=True)",
        "return self.layer(x, x)",
    ),
}


@pytest.mark.parametrize("route", ROUTES)
def test_multi_head_attention_is_refused_inside_any_layer(route: str) -> None:
    layer, body = ROUTES[route]
    last_line = 10 + body.count("\n")  # the body starts on line 10 of NET
    assert refusal_of(layer, body) == Violation(ran_inside(MULTI_HEAD), last_line)


@pytest.mark.parametrize(
    "body",
    [
        # nn.MultiheadAttention's Python path runs F.scaled_dot_product_attention without weights
        "self.layer.train()\n        return self.layer(x, x, x, need_weights=False)[0]",
        # its fast path (eval, no grad) computes it in one fused kernel, called from C++
        "return self.layer(x, x, x)[0]",
    ],
)
def test_scaled_dot_product_attention_is_refused_however_reached(body: str) -> None:
    violation = refusal_of("nn.MultiheadAttention(8, 2, batch_first=True)", body, SDPA_ONLY)
    assert violation.message == ran_inside(SDPA)


@contextlib.contextmanager
def _recording(hits: list[str]) -> Iterator[None]:
    """Kernels over every operator of the table that note which one ran (and then refuse)."""
    with patched() as patches:
        for operator in forbidden_calls.OPERATORS:
            patches.kernel(operator, _noting(operator, hits))
        yield


def _noting(operator: str, hits: list[str]) -> Callable[..., NoReturn]:
    def kernel(*args: object, **kwargs: object) -> NoReturn:
        hits.append(operator)
        raise Ended(Violation(operator))

    return kernel


@pytest.mark.parametrize(
    ("make", "call", "operator"),
    [
        (
            lambda: torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True),
            lambda layer, x: layer(x),
            "_transformer_encoder_layer_fwd",
        ),
        (
            lambda: torch.nn.MultiheadAttention(8, 2, batch_first=True),
            lambda layer, x: layer(x, x, x),
            "_native_multi_head_attention",
        ),
        (
            lambda: torch.nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, batch_first=True),
            lambda layer, x: layer(x, x),
            "_native_multi_head_attention",
        ),
    ],
)
def test_the_fast_paths_run_an_operator_of_the_table_under_the_graders_conditions(
    make: Callable[[], torch.nn.Module],
    call: Callable[[torch.nn.Module, torch.Tensor], object],
    operator: str,
) -> None:
    # Trusted probes of torch itself: which kernel a layer's forward reaches from C++, where no
    # Python function of its own could be replaced.
    hits: list[str] = []
    layer = make().eval()
    with torch.no_grad(), pytest.raises(Ended), _recording(hits):
        call(layer, torch.ones(2, 3, 8))
    assert hits == [operator]


def test_every_operator_of_the_table_exists_with_a_kernel_to_replace() -> None:
    patches = Patches()
    try:
        for operator in forbidden_calls.OPERATORS:
            patches.kernel(operator, lambda *args: None)
    finally:
        patches.undo()


def test_the_guard_is_per_job_and_leaves_nothing_behind() -> None:
    forward = torch.nn.MultiheadAttention.forward
    refusal_of(ENCODER_LAYER, "return self.layer(x)")
    # The next job forbids nothing: the same layer runs.
    probe = (
        "import torch\nimport torch.nn as nn\n"
        f"print(tuple({ENCODER_LAYER}(torch.ones(1, 2, 8)).shape))\n"
    )
    assert printed(probe, Policy(("torch",))) == "(1, 2, 8)\n"
    # And in this process, torch is as it was.
    assert torch.nn.MultiheadAttention.forward is forward
    q = torch.ones(1, 2, 4)
    assert F.scaled_dot_product_attention(q, q, q).shape == (1, 2, 4)


@pytest.mark.parametrize(
    ("probe", "fragment"),
    [
        ("import torch\nx = torch.backends\n", "`torch.backends` is a module"),
        ("import torch\nx = torch.library\n", "`torch.library` is a module"),
        ("import torch\nx = torch.ops\n", "`torch.ops` is a module"),
        ("import torch.nn.functional as F\nx = F\nx.softmax = None\n", "no monkeypatching"),
        ("import torch.nn as nn\nnn.TransformerEncoderLayer.forward = None\n", "the class"),
    ],
)
def test_a_submission_cannot_turn_the_fast_path_off_or_undo_the_guard(
    probe: str, fragment: str
) -> None:
    try:
        recorder = run(probe + "def f():\n    pass\n", policy=Policy(("torch",)))
    except Ended as ended:
        message = ended.violation.message
    else:
        message = recorder.rejections[0][0].message
    assert fragment in message


def _layers_that_build(layer: type) -> set[str]:
    """The layers of torch.nn whose source makes a `layer`, or one of those layers."""
    sources = {
        name: inspect.getsource(value)
        for name, value in vars(torch.nn).items()
        if isinstance(value, type) and issubclass(value, torch.nn.Module) and value is not layer
    }
    found: set[str] = set()
    built = {layer.__name__}
    while more := {
        name
        for name, source in sources.items()
        if name not in found and any(f"{made}(" in source for made in built)
    }:
        found |= more
        built |= more
    return found


def test_every_exercise_that_forbids_a_layer_forbids_the_layers_that_contain_it() -> None:
    containers = {f"torch.nn.{name}" for name in _layers_that_build(torch.nn.MultiheadAttention)}
    assert "torch.nn.TransformerEncoderLayer" in containers
    for path in sorted(ROOT.glob("exercises/*/exercise.toml")):
        forbidden = set(tomllib.loads(path.read_text()).get("forbidden", ()))
        if MULTI_HEAD in forbidden:
            assert containers <= forbidden, path.parent.name


def test_a_replaced_function_is_still_refused_by_identity_when_read() -> None:
    probe = "import torch.nn.functional as F\nf = getattr(F, 'multi_head_attention_' + 'forward')\n"
    with pytest.raises(Ended) as ended:
        run(probe, policy=BUILT_INS)
    assert ended.value.violation == Violation(
        "`torch.nn.functional.multi_head_attention_forward` is not allowed in this exercise: the "
        "point is to build it yourself",
        2,
    )
