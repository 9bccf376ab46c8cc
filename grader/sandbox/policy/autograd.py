"""What a submission may use of `torch.autograd`: a backward pass of its own, written as a custom
`torch.autograd.Function`, and the calls that run one.

Allowed, where the exercise allows torch: subclassing `Function` (static `forward(ctx, ...)` and
`backward(ctx, grad_output)`, or `setup_context`) and calling `Fn.apply(...)`; the context's
public methods (`save_for_backward`, `saved_tensors`, `needs_input_grad`,
`mark_non_differentiable`, `set_materialize_grads`...) and plain attributes of the submission's
own (`ctx.scale = s`); `once_differentiable`; `torch.autograd.grad`, `torch.autograd.backward`
and the grad-mode switches (`torch.enable_grad()` was already allowed, as are `.backward()` and
`Tensor.register_hook`). Why that is safe: a backward pass, a hook or a `Function` runs the
submission's own code, compiled by the same policy and calling the same guards as its forward;
torch only decides when. A refusal inside a backward pass ends the run as anywhere else.

Refused, each with its reason (`refusal`): what is process-wide, reaches the grader's own work
or its frames, or reaches files. The `Function` class's private and C internals (`ctx._...`,
`Fn._backward_cls`, `torch._C`) are refused as every library's private names are (`ownership`).
"""

from __future__ import annotations

from collections.abc import Mapping

import torch
from torch.autograd.function import BackwardCFunction

# What may be read from each module; every other attribute is refused by the allow-list.
_AUTOGRAD = ("Function", "grad", "backward")
_GRAD_MODES = ("no_grad", "enable_grad", "set_grad_enabled", "inference_mode")
ALLOWED_ATTRIBUTES: Mapping[str, frozenset[str]] = {
    "torch.autograd": frozenset(_AUTOGRAD + _GRAD_MODES),
    "torch.autograd.function": frozenset({"Function", "FunctionCtx", "once_differentiable"}),
}

_ANOMALY = (
    "switches anomaly mode on for the whole process: every later operation, the grader's own "
    "included, then records the source lines of the call stack where any code can read them"
)
_SAVED_TENSOR_HOOKS = (
    "installs hooks for the whole process: saved-tensor hooks and graph hooks run your code "
    "inside every backward pass, the grader's own included; hook a tensor of your own with "
    "`tensor.register_hook` instead"
)
_PROFILER = "profiles the whole process and writes traces to files"
_FORWARD_AD = (
    "keeps forward-mode differentiation's state for the whole process; a backward pass needs "
    "only `torch.autograd.Function` and `torch.autograd.grad`"
)
_GRADCHECK = (
    "is a test to run on your own machine: it imports modules (torch.fx, sympy) that the "
    "sandbox does not load, and none can be loaded once your code runs; the grader checks your "
    "gradients itself"
)

# Refused names of `torch.autograd`, with the reason a student reads.
_REASONS: Mapping[str, str] = {
    "torch.autograd.set_detect_anomaly": _ANOMALY,
    "torch.autograd.detect_anomaly": _ANOMALY,
    "torch.autograd.anomaly_mode": _ANOMALY,
    "torch.autograd.graph": _SAVED_TENSOR_HOOKS,
    "torch.autograd.profiler": _PROFILER,
    "torch.autograd.profiler_legacy": _PROFILER,
    "torch.autograd.profiler_util": _PROFILER,
    "torch.autograd.forward_ad": _FORWARD_AD,
    "torch.autograd.gradcheck": _GRADCHECK,
    "torch.autograd.gradgradcheck": _GRADCHECK,
}


def refusal(dotted: str) -> str | None:
    """Why the module or attribute `dotted` is refused, in words for a student; None where the
    allow-list's own message says enough. (It quotes only the names listed here.)"""
    reason = _REASONS.get(dotted)
    return (
        None if reason is None else f"`{dotted}` is not allowed in the grading sandbox: it {reason}"
    )


def context_class(cls: type) -> type | None:
    """The class of the `ctx` that torch hands to `cls`'s `forward` and `backward`, `cls` being
    a `torch.autograd.Function` subclass that a class statement just made: torch's metaclass
    makes one per subclass (`<Name>Backward`), whose instances are that Function's own
    contexts, for its code to store plain attributes on (`ctx.scale = s`)."""
    if not issubclass(cls, torch.autograd.Function):
        return None
    made = vars(cls).get("_backward_cls")
    if (
        isinstance(made, type)
        and issubclass(made, BackwardCFunction)
        and vars(made).get("_forward_cls") is cls
    ):
        return made
    return None


def is_function_context(obj: object) -> bool:
    """Whether `obj` is the `ctx` of a custom Function. torch keeps a context's own state in C
    slots (`to_save`, `needs_input_grad`...), never in its instance dict: what is there, the
    Function's code wrote."""
    return isinstance(obj, BackwardCFunction)
