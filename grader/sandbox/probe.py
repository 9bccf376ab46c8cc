"""Which hardening layers this host allows, asked of a fresh interpreter that imports no torch.

`python -I -m grader.sandbox.probe --uid-base N --scratch DIR` runs `hardening.probe_layers`
(which forks a throwaway child and hardens it) and prints its report as JSON. Its imports are the
hardening modules alone, so `autograder doctor` and the fresh-interpreter sandbox learn the
layers in a few tens of milliseconds, without starting the warm process; and the fork happens in
a single-threaded process of its own, as `probe_layers` requires, whatever threads the caller
runs.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

from grader.sandbox import hardening
from grader.sandbox.interface import Layer
from grader.sandbox.launch import (
    ENVIRONMENT,
    FORKED_PROCESS,
    PROCESS_LAYERS,
    START_TIMEOUT_S,
    UID_BASE,
)
from grader.sandbox.scratch import ScratchRoot


def host_layers(uid_base: int = UID_BASE) -> list[Layer]:
    """The layers a `ForkServerSandbox` with these uids applies on this host, as its `layers()`
    lists them."""
    root = ScratchRoot()
    try:
        return [FORKED_PROCESS, *probe(uid_base, root.path), *PROCESS_LAYERS]
    finally:
        root.close()


def probe(uid_base: int, scratch_root: str) -> list[Layer]:
    """The hardening layers a child gets on this host, probed in a fresh interpreter with the
    sandbox's scrubbed environment."""
    argv = [sys.executable, "-I", "-m", __name__, "--uid-base", str(uid_base)]
    probed = subprocess.run(
        [*argv, "--scratch", scratch_root],
        env=ENVIRONMENT,
        cwd=scratch_root,
        check=True,
        capture_output=True,
        timeout=START_TIMEOUT_S,
    )
    return [Layer(**fields) for fields in json.loads(probed.stdout)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog=f"python -m {__name__}")
    parser.add_argument("--uid-base", type=int, required=True)
    parser.add_argument("--scratch", required=True, help="the parent of the probe's scratch dir")
    args = parser.parse_args(argv)
    layers = hardening.probe_layers(hardening.slot_uid(args.uid_base, 0), args.scratch)
    print(json.dumps([vars(layer) for layer in layers]))


if __name__ == "__main__":
    main(sys.argv[1:])
