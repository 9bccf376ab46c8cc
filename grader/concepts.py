"""Knowledge components: the concepts a diagnosis is about, shared across exercises.

A finding carries one or more of these tags (`grader.report.Finding.concepts`), so staff can see
how many students still hold a mistake about, say, masking, whichever exercise shows it.
"""

from __future__ import annotations

# Tag → what a student who gets it wrong has not yet understood, in the staff's words.
CONCEPTS: dict[str, str] = {
    "output-contract": "what the entry point returns: a value, its type and its shape",
    "allowed-apis": "what the exercise lets you import and call, so that you build the rest",
    "scaling": "scaling the attention scores by 1/sqrt(d_k)",
    "masking": "masks: which positions may attend, and how a mask is applied",
    "softmax-axis": "the axis a softmax normalises over",
    "head-split-merge": "splitting into heads and merging them back",
    "projections": "the linear layers around attention: which, in what order, with what bias",
    "parameter-registration": "registering weights so that they are found, saved and trained",
    "weight-initialisation": "seeded initialisation: which weights a layer draws, in what order",
    "gradient-flow": "keeping the autograd graph from the inputs and weights to the output",
    "numerical-stability": "computing without overflow or loss of precision at scale",
    "normalisation": "layer normalisation: its axis, statistics, epsilon and affine weights",
    "residual-connections": "residual connections and where the normalisation sits around them",
    "activations": "the non-linearity: GELU, its approximation, ReLU",
    "dropout": "dropout: where it applies, and only in training",
    "positions": "positional information: the encoding and the positions it is read at",
    "loss": "the loss: its reduction, its targets and the ignored ones",
    "optimisation": "the optimizer's update: moments, bias correction, weight decay, clipping",
    "caching": "a key/value cache across decoding steps",
    "rounding": "the precision the output is asked for",
    "tensors": "tensor shapes, axes and dtypes: products, broadcasting, joins, indexing, views",
    "layer-sizes": "the sizes each layer is made with, as the statement lays them out",
}
