# Style: typing Optional/Tuple annotations and einsum with an ellipsis for any leading dimensions.
from typing import Optional, Tuple

import math
import torch


def scaled_dot_product(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: Optional[torch.Tensor] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    scores = torch.einsum("...td,...sd->...ts", q, k) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores + mask
    attention = torch.softmax(scores, dim=-1)
    values = torch.einsum("...ts,...sd->...td", attention, v)
    return values, attention
