"""A training step as a course writes it: torch.optim's optimizers (or one's own subclass of
`torch.optim.Optimizer`), where the exercise lists torch.optim, and gradient clipping from
`torch.nn.utils`, under the policy's guards and once in the real sandbox's confined child, which
can import nothing once it runs (an optimizer's `step` imports torch._dynamo on first use)."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
import torch
from guest_support import run, violation_of

from grader.contract import Call, CallOutcome, Job, Policy
from grader.limits import SandboxLimits
from grader.sandbox.process import WarmProcessSandbox

WITH_OPTIMIZERS = Policy(("torch", "torch.optim"))
X = np.array([[1.0, -2.0, 0.5], [3.0, 0.0, -1.5]], dtype=np.float32)

# Two steps of a Linear(3, 1) on sum(output): AdamW with clipping, then SGD through a
# hand-written subclass of Optimizer; returns the last clipped norm and the weights after both.
TRAINING_STEP = """
    import torch
    import torch.nn as nn
    from torch.nn.utils import clip_grad_norm_
    from torch.optim import AdamW

    class PlainSGD(torch.optim.Optimizer):
        def __init__(self, params, lr):
            super().__init__(params, dict(lr=lr))

        @torch.no_grad()
        def step(self):
            for group in self.param_groups:
                for p in group["params"]:
                    self.state[p]["steps"] = self.state[p].get("steps", 0) + 1
                    p.add_(p.grad, alpha=-group["lr"])

    def f(x):
        layer = nn.Linear(3, 1)
        with torch.no_grad():
            layer.weight.fill_(0.5)
            layer.bias.fill_(0.0)
        adamw = AdamW(layer.parameters(), lr=0.1, weight_decay=0.1)
        sgd = PlainSGD(layer.parameters(), lr=0.1)
        with torch.enable_grad():
            for optimizer in (adamw, sgd):
                optimizer.zero_grad()
                layer(x).sum().backward()
                norm = torch.nn.utils.clip_grad_norm_(layer.parameters(), max_norm=1.0)
                optimizer.step()
        return torch.cat([norm.reshape(1), layer.weight.detach().flatten(), layer.bias.detach()])
    """


def expected_output() -> np.ndarray:
    layer = torch.nn.Linear(3, 1)
    with torch.no_grad():
        layer.weight.fill_(0.5)
        layer.bias.fill_(0.0)
    adamw = torch.optim.AdamW(layer.parameters(), lr=0.1, weight_decay=0.1)
    sgd = torch.optim.SGD(layer.parameters(), lr=0.1)
    for optimizer in (adamw, sgd):
        optimizer.zero_grad()
        layer(torch.from_numpy(X)).sum().backward()
        norm = torch.nn.utils.clip_grad_norm_(layer.parameters(), max_norm=1.0)
        optimizer.step()
    weights = (norm.reshape(1), layer.weight.detach().flatten(), layer.bias.detach())
    return torch.cat(weights).numpy()


def assert_trained(outcome: CallOutcome) -> None:
    assert outcome.error is None, outcome.error
    assert outcome.outputs is not None
    (output,) = outcome.outputs
    assert output.array is not None
    np.testing.assert_allclose(output.array, expected_output(), rtol=1e-6)


def test_optimizers_and_clipping_run_under_the_guards() -> None:
    calls = (Call("only", (X,)),)
    assert_trained(run(TRAINING_STEP, policy=WITH_OPTIMIZERS, calls=calls).outcomes[0])


@pytest.mark.slow
def test_optimizers_and_clipping_run_in_the_confined_child() -> None:
    sandbox = WarmProcessSandbox(slots=1, preload=WITH_OPTIMIZERS.allowed_imports)
    try:
        job = Job(
            textwrap.dedent(TRAINING_STEP),
            "f",
            "function",
            "torch",
            WITH_OPTIMIZERS,
            (Call("only", (X,)),),
            SandboxLimits(),
        )
        assert_trained(sandbox.run(job).outcomes["only"])
    finally:
        sandbox.close()


@pytest.mark.parametrize(
    ("source", "refused"),
    [
        ("torch.optim.lr_scheduler", "lr_scheduler"),
        ("torch.optim.swap_in_optimizer_params_and_state", "swap_in_optimizer_params_and_state"),
        ("torch.nn.utils.parametrize", "parametrize"),
        ("torch.nn.utils.stateless", "stateless"),
    ],
)
def test_what_a_training_step_does_not_need_stays_refused(source: str, refused: str) -> None:
    violation = violation_of(f"import torch\ndef f():\n    return {source}\n", WITH_OPTIMIZERS)
    assert refused in violation.message


def test_optimizers_come_only_where_the_exercise_lists_them() -> None:
    source = "import torch\ndef f():\n    return torch.optim.SGD\n"
    violation = violation_of(source, Policy(("torch",)))
    assert "`torch.optim`" in violation.message


def test_clipping_comes_with_torch() -> None:
    source = """
        import torch
        from torch.nn.utils import clip_grad_norm_

        def f(x):
            layer = torch.nn.Linear(3, 1)
            with torch.enable_grad():
                layer(x).sum().backward()
            return clip_grad_norm_(layer.parameters(), 0.5)
        """
    outcome = run(source, policy=Policy(("torch",)), calls=(Call("only", (X,)),)).outcomes[0]
    assert outcome.error is None, outcome.error
