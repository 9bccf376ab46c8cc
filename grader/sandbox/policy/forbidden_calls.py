"""A forbidden API refused when it runs, whoever calls it.

The guards refuse a forbidden API when the submission reads it (by name, and by identity
however reached). An allowed object can still run one: `nn.TransformerEncoderLayer(...)
.self_attn` is an `nn.MultiheadAttention`, whose forward runs `F.multi_head_attention_forward`,
and whose fast path (like the encoder layer's own) runs fused torch kernels from C++. So, in the
child and for one job, the computation itself refuses to run (`install`):

- torch's operators get a kernel of ours registered over theirs with `torch.library`, on the
  dispatch key a CPU call reaches. It costs nothing to any other operator, and catches callers
  in C++ too (SDPA's math kernel, the fused multi-head attention of the fast paths).
- what is written in Python and has no operator of its own is replaced where it is looked up
  at each call: a forbidden function in its module (`F.multi_head_attention_forward`, whose
  slow path is plain matmul and softmax, which no kernel could tell from a student's), and a
  forbidden layer's `forward` on its class.

Not a TorchFunctionMode: it calls back into Python on every torch function the submission runs
(1,400 for the seed exercise's visible tests), which measured 1.22x the whole job's time
(27.2 ms to 33.2 ms in process), and it never sees calls made from C++. The kernels cost nothing
per call; registering them costs about 0.15 ms in a warm process and 1.3 ms in a freshly forked
child (torch's first registration there copies the dispatcher's shared pages).

The refusal names the forbidden API in the student's terms, never the kernel.
"""

from __future__ import annotations

import functools
import sys
import types
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch

from grader.sandbox.policy.names import forbidden_message
from grader.sandbox.policy.patches import Patches, Refuse

_MULTI_HEAD = (
    "torch.nn.MultiheadAttention",
    "torch.nn.modules.activation.MultiheadAttention",
    "torch.nn.functional.multi_head_attention_forward",
)
_SCALED_DOT_PRODUCT = ("torch.nn.functional.scaled_dot_product_attention",)
_ENCODER_LAYER = (
    "torch.nn.TransformerEncoderLayer",
    "torch.nn.TransformerEncoder",
    "torch.nn.Transformer",
)

# torch's operators (aten), each with the forbidden APIs it computes, in the order a refusal
# prefers to name them: the first that the exercise forbids.
OPERATORS: Mapping[str, tuple[str, ...]] = {
    # F.scaled_dot_product_attention, and the kernels it picks from on a CPU. Its other
    # variants (`_scaled_dot_product_efficient_attention`, `_cudnn_`, `_for_mps`...) have no
    # CPU kernel to run, and their names are private.
    "scaled_dot_product_attention": _SCALED_DOT_PRODUCT,
    "_scaled_dot_product_attention_math": _SCALED_DOT_PRODUCT,
    "_scaled_dot_product_flash_attention_for_cpu": _SCALED_DOT_PRODUCT,
    # The fast paths of nn.MultiheadAttention and of the encoder layer (eval mode, no grad,
    # batch first: the grader's own conditions). Each computes scaled dot-product attention
    # inside, without calling the operators above.
    "_native_multi_head_attention": (*_MULTI_HEAD, *_SCALED_DOT_PRODUCT),
    "_transformer_encoder_layer_fwd": (*_MULTI_HEAD, *_ENCODER_LAYER, *_SCALED_DOT_PRODUCT),
}


def install(forbidden: Sequence[str], patches: Patches, refuse: Refuse) -> None:
    """Make every computation of the `forbidden` APIs refuse to run, for one job."""
    if not forbidden:
        return
    for operator, apis in OPERATORS.items():
        named = next((api for api in apis if api in forbidden), None)
        if named is not None:
            patches.kernel(operator, _refusing(named, refuse))
    replaced: set[tuple[int, str]] = set()  # a layer forbidden under two names is one class
    for api in forbidden:
        target = _python_target(api)
        if target is not None and (id(target[0]), target[1]) not in replaced:
            owner, name, original = target
            replaced.add((id(owner), name))
            patches.replace(owner, name, functools.wraps(original)(_refusing(api, refuse)))


def message(api: str) -> str:
    return f"{forbidden_message(api)} (your code ran it inside another layer or function)"


def _refusing(api: str, refuse: Refuse) -> Callable[..., Any]:
    text = message(api)

    def refused(*args: object, **kwargs: object) -> Any:
        refuse(text)

    return refused


def _python_target(api: str) -> tuple[object, str, Callable[..., Any]] | None:
    """Where the Python code of `api` is looked up at each call: `(owner, name, function)`.

    A layer: its class's `forward`. A function written in Python: its module's attribute (a
    built-in such as F.scaled_dot_product_attention has an operator, above, instead)."""
    module_name, _, name = api.rpartition(".")
    module = sys.modules.get(module_name)
    value = None if module is None else vars(module).get(name)
    if isinstance(value, type) and issubclass(value, torch.nn.Module):
        forward: Callable[..., Any] = value.forward
        return value, "forward", forward
    if isinstance(value, types.FunctionType):
        return module, name, value
    return None
