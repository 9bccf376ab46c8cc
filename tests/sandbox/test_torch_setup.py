"""torch as the warm process sets it up: seeding touches no source file."""

from __future__ import annotations

import traceback

import pytest
import torch

from grader.sandbox.torch_setup import configure_torch


def test_seeding_formats_no_stack(monkeypatch: pytest.MonkeyPatch) -> None:
    """torch queues a deferred seed, with the formatted stack, for each accelerator backend it
    cannot reach yet: in a child that may read no file, that is hundreds of refused `stat` and
    `open` calls per seed, and students seed once per head. A backend a new torch adds shows up
    here first."""
    configure_torch()
    formatted: list[int] = []
    real = traceback.format_stack

    def counting(*args: object, **kwargs: object) -> list[str]:
        formatted.append(1)
        return real()

    monkeypatch.setattr(traceback, "format_stack", counting)
    torch.manual_seed(0)
    assert formatted == []
