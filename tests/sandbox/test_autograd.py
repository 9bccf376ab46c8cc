"""Backward passes of the submission's own: custom `torch.autograd.Function`s, hooks and
`torch.autograd.grad`, run by `guest.execute` in this process under the policy's guards, and
once in the real sandbox's confined child.

A backward pass runs when the autograd engine calls it, after the code that built the graph has
returned: these tests check that what it computes is right, and that what it may not do is
refused there as anywhere else.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
import torch
from guest_support import TORCH_POLICY, Ended, run, violation_of

from grader.contract import Call, CallOutcome, Job
from grader.limits import SandboxLimits
from grader.sandbox.process import WarmProcessSandbox

X = np.array([[1.0, -2.0, 0.5], [3.0, 0.0, -1.5]], dtype=np.float32)

# The same function in the styles a course teaches, each `f(x)` returning its output and its
# gradient with respect to `x`, taken inside the call (the grader's call runs without grad):
# y = 3 x^2, so dy/dx = 6 x.
STYLES = {
    "save_for_backward, ctx attributes, needs_input_grad, autograd.grad": """
        import torch
        from torch.autograd import Function

        class ScaledSquare(Function):
            @staticmethod
            def forward(ctx, x, scale):
                ctx.save_for_backward(x)
                ctx.scale = scale
                return scale * x * x

            @staticmethod
            def backward(ctx, grad_output):
                (x,) = ctx.saved_tensors
                grad_x = None
                if ctx.needs_input_grad[0]:
                    grad_x = grad_output * 2 * ctx.scale * x
                return grad_x, None

        def f(x):
            with torch.enable_grad():
                x = x.detach().requires_grad_(True)
                y = ScaledSquare.apply(x, 3.0)
                (grad,) = torch.autograd.grad(y.sum(), x)
            return torch.stack([y.detach(), grad])
        """,
    "setup_context, mark_non_differentiable, set_materialize_grads, .backward()": """
        import torch
        import torch.autograd as autograd

        class ScaledSquare(autograd.Function):
            @staticmethod
            def forward(x):
                return 3 * x * x, x > 0

            @staticmethod
            def setup_context(ctx, inputs, output):
                (x,) = inputs
                _, positive = output
                ctx.mark_non_differentiable(positive)
                ctx.set_materialize_grads(False)
                ctx.save_for_backward(x)

            @staticmethod
            def backward(ctx, grad_output, grad_positive):
                if grad_output is None:  # not materialised: no gradient reached y
                    return None
                (x,) = ctx.saved_tensors
                return grad_output * 6 * x

        def f(x):
            with torch.enable_grad():
                leaf = x.detach().requires_grad_(True)
                y, positive = ScaledSquare.apply(leaf)
                y.sum().backward()
            assert not positive.requires_grad
            return torch.stack([y.detach(), leaf.grad])
        """,
    "once_differentiable, private names, torch.autograd.backward, a hook": """
        import torch
        from torch.autograd.function import once_differentiable

        class ScaledSquare(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx._scale = 3.0
                ctx.save_for_backward(x)
                return ctx._scale * x * x

            @staticmethod
            @once_differentiable
            def backward(ctx, grad_output):
                (x,) = ctx.saved_tensors
                return grad_output * ScaledSquare._twice(ctx._scale * x)

            @staticmethod
            def _twice(x):
                return 2 * x

        SEEN = []

        def f(x):
            with torch.enable_grad():
                leaf = x.detach().requires_grad_(True)
                leaf.register_hook(lambda grad: SEEN.append(grad.shape))
                y = ScaledSquare.apply(leaf)
                torch.autograd.backward(y.sum())
            assert SEEN == [leaf.shape]
            return torch.stack([y.detach(), leaf.grad])
        """,
}


def assert_output_and_gradient(outcome: CallOutcome) -> None:
    assert outcome.error is None, outcome.error
    assert outcome.outputs is not None
    (output,) = outcome.outputs
    assert output.array is not None
    np.testing.assert_allclose(output.array, np.stack([3 * X * X, 6 * X]), rtol=1e-6)


@pytest.mark.parametrize("source", STYLES.values(), ids=STYLES.keys())
def test_a_custom_backward_runs_under_the_guards_and_gives_its_gradient(source: str) -> None:
    (outcome,) = run(source, calls=(Call("only", (X,)),)).outcomes
    assert_output_and_gradient(outcome)


@pytest.mark.slow
def test_a_custom_backward_runs_in_the_confined_child_too() -> None:
    # seccomp there refuses new threads, Landlock any file a lazy import would read: the
    # autograd engine on the CPU needs neither (a given cotangent would: docs/sandbox.md).
    sandbox = WarmProcessSandbox(slots=1)
    try:
        for source in STYLES.values():
            job = Job(
                textwrap.dedent(source),
                "f",
                "function",
                "torch",
                TORCH_POLICY,
                (Call("only", (X,)),),
                SandboxLimits(),
            )
            assert_output_and_gradient(sandbox.run(job).outcomes["only"])
    finally:
        sandbox.close()


MODULE = """
    import torch
    import torch.nn as nn

    class Gate(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, weight):
            ctx.save_for_backward(x, weight)
            ctx.mark_non_differentiable(weight.sign())
            return torch.sigmoid(x @ weight)

        @staticmethod
        def backward(ctx, grad_output):
            x, weight = ctx.saved_tensors
            s = torch.sigmoid(x @ weight)
            grad = grad_output * s * (1 - s)
            return grad @ weight.T, x.transpose(-2, -1) @ grad

    class Net(nn.Module):
        def __init__(self, size: int):
            super().__init__()
            torch.manual_seed(0)
            self.weight = nn.Parameter(torch.randn(size, size))

        def forward(self, x):
            return Gate.apply(x, self.weight)
    """


def test_a_custom_function_inside_a_module_gives_the_forward_of_its_plain_twin() -> None:
    call = Call("forward", (X,), init_kwargs={"size": 3})
    (outcome,) = run(MODULE, kind="module", entry_point="Net", calls=(call,)).outcomes
    assert outcome.error is None, outcome.error
    assert outcome.outputs is not None and outcome.outputs[0].array is not None
    torch.manual_seed(0)
    weight = torch.randn(3, 3)
    expected = torch.sigmoid(torch.from_numpy(X) @ weight).numpy()
    np.testing.assert_allclose(outcome.outputs[0].array, expected, rtol=1e-6)


def in_backward(line: str) -> str:
    """A submission whose custom backward runs `line` while `f` differentiates through it."""
    return f"""
        import torch

        class Probe(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * 2

            @staticmethod
            def backward(ctx, grad_output):
                {line}
                return grad_output * 2

        def f():
            x = torch.ones(3, requires_grad=True)
            with torch.enable_grad():
                Probe.apply(x).sum().backward()
            return x.grad
        """


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ("torch.os.system('true')", "`torch.os` is not available"),
        ("getattr(ctx, '_raw_saved_tensors')", "`_raw_saved_tensors` is not allowed"),
        ("getattr(ctx, '_get_compiled_autograd_symints')()", "`_get_compiled_autograd_symints`"),
        ("getattr(ctx, '_forward_cls')", "`_forward_cls` is not allowed"),
        ("setattr(ctx, '_forward_cls', Probe)", "`_forward_cls` is not allowed"),
        ("torch.autograd.set_detect_anomaly(True)", "records the source lines of the call stack"),
        ("getattr(ctx.next_functions[0][0], '_raw_saved_self')", "`_raw_saved_self`"),
    ],
)
def test_a_refusal_inside_a_backward_pass_ends_the_run_at_its_line(
    line: str, fragment: str
) -> None:
    violation = violation_of(in_backward(line))
    assert fragment in violation.message
    assert violation.line == 12  # the line of `line`, run by the autograd engine


def test_a_hook_that_runs_forbidden_code_is_refused_inside_the_backward_pass() -> None:
    violation = violation_of(
        """
        import torch

        def f():
            x = torch.ones(3, requires_grad=True)
            with torch.enable_grad():
                y = x * 2
                y.register_hook(lambda grad: torch.sys)
                y.sum().backward()
            return x.grad
        """
    )
    assert "`torch.sys` is not available" in violation.message
    assert violation.line == 8


@pytest.mark.parametrize(
    ("expression", "fragment"),
    [
        ("torch.autograd.set_detect_anomaly(True)", "switches anomaly mode on"),
        ("torch.autograd.detect_anomaly()", "switches anomaly mode on"),
        ("torch.autograd.graph.saved_tensors_hooks(f, f)", "saved-tensor hooks"),
        ("getattr(torch.autograd, 'gr' + 'aph').save_on_cpu()", "saved-tensor hooks"),
        ("torch.autograd.profiler.profile()", "writes traces to files"),
        ("torch.autograd.forward_ad.dual_level()", "forward-mode differentiation"),
        ("torch.autograd.gradcheck(f, ())", "a test to run on your own machine"),
        ("torch.autograd.functional.jacobian(f, ())", "`torch.autograd.functional` is a module"),
        ("torch.autograd.Variable(torch.ones(1))", "`torch.autograd.Variable` is not available"),
        ("torch.autograd.function.BackwardCFunction", "is not available in the grading sandbox"),
    ],
)
def test_what_a_backward_pass_does_not_need_is_refused_with_its_reason(
    expression: str, fragment: str
) -> None:
    violation = violation_of(f"import torch\ndef f():\n    pass\ny = {expression}\n")
    assert fragment in violation.message
    assert violation.line == 4


@pytest.mark.parametrize(
    ("source", "fragment"),
    [
        ("from torch.autograd.graph import saved_tensors_hooks", "saved-tensor hooks"),
        ("import torch.autograd.profiler as profiler", "writes traces to files"),
        ("from torch.autograd import _functions", "`torch.autograd._functions` is not allowed"),
        ("import torch\ncls = torch.autograd.Function._backward_cls", "`_backward_cls` is not"),
        ("import torch\nclass F(torch.autograd.Function):\n    pass\nF.__call__", "`__call__`"),
    ],
)
def test_imports_and_names_of_autograd_internals_are_refused_before_anything_runs(
    source: str, fragment: str
) -> None:
    recorder = run(source + "\ndef f():\n    pass\n")
    ((violation,),) = recorder.rejections
    assert fragment in violation.message


def test_a_class_of_ones_own_may_not_replace_the_ctx_class_torch_made_for_it() -> None:
    violation = violation_of(
        "import torch\nclass F(torch.autograd.Function):\n    _backward_cls = None\n"
        "def f():\n    pass\n"
    )
    assert "`_backward_cls` is not allowed" in violation.message


def test_the_ctx_of_a_library_operation_is_not_the_submissions_to_change() -> None:
    violation = violation_of(
        """
        import torch

        def f():
            x = torch.ones(2, requires_grad=True)
            with torch.enable_grad():
                node = (x * 2).grad_fn
            node.note = 1
        """
    )
    assert "a submission may change only its own objects" in violation.message


def test_saved_tensors_kept_for_a_later_call_are_gone_and_the_call_fails_alone() -> None:
    source = """
        import torch

        KEPT = []

        class Keep(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                KEPT.append(ctx)
                return x * x

            @staticmethod
            def backward(ctx, grad_output):
                (x,) = ctx.saved_tensors
                return grad_output * 2 * x

        def f(x):
            if KEPT:
                return KEPT[0].saved_tensors[0]
            with torch.enable_grad():
                leaf = x.detach().requires_grad_(True)
                Keep.apply(leaf).sum().backward()
            return leaf.grad
        """
    first, later = run(source, calls=(Call("first", (X,)), Call("later", (X,)))).outcomes
    assert first.error is None and first.outputs is not None
    assert later.error is not None and "already been freed" in later.error.message


def test_a_violation_in_backward_is_not_turned_into_an_ordinary_error() -> None:
    # The autograd engine rethrows what a backward raised: the guard's own ending, unwrapped,
    # so that no `except RuntimeError` around `.backward()` can catch it.
    source = in_backward("torch.os").replace(
        "Probe.apply(x).sum().backward()",
        "try:\n                    Probe.apply(x).sum().backward()\n"
        "                except Exception:\n                    pass",
    )
    with pytest.raises(Ended):
        run(source)
