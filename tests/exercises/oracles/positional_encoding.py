"""positional-encoding's reference against the paper's formula written feature by feature, in
float64: feature j of position pos is sin (j even) or cos (j odd) of
pos / 10000^((j - j % 2) / d_model)."""

from __future__ import annotations

import math

import numpy as np

from grader.contract import Arg
from grader.spec import TestCaseSpec
from oracles import Arrays, Oracle, Parameters


def _oracle_positional_encoding(
    test: TestCaseSpec, calls: tuple[tuple[Arg, ...], ...], parameters: Parameters
) -> Arrays:
    ((*arguments,),) = calls
    if test.entry == "sinusoidal_positions":
        seq_len, d_model = arguments
        assert isinstance(seq_len, int) and isinstance(d_model, int)
        return (_table(seq_len, d_model).astype(np.float32),)
    (ids,) = arguments
    assert isinstance(ids, np.ndarray)
    weight = parameters["token_embedding.weight"].astype(np.float64)
    d_model = weight.shape[1]
    embedded = weight[ids] * math.sqrt(d_model)  # (B, T, d)
    return ((embedded + _table(ids.shape[-1], d_model)).astype(np.float32),)


def _table(seq_len: int, d_model: int) -> np.ndarray:
    feature = np.arange(d_model)
    wavelength_exponent = (feature - feature % 2) / d_model  # 2i / d for features 2i and 2i + 1
    angles = np.arange(seq_len)[:, None] / 10000.0 ** wavelength_exponent[None, :]  # (T, d)
    return np.where(feature % 2 == 0, np.sin(angles), np.cos(angles))


ORACLES: dict[str, Oracle] = {"positional-encoding": _oracle_positional_encoding}
