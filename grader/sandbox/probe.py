"""Which hardening layers this host allows, without the warm process and without torch.

`hardening.probe_layers` forks a throwaway child, hardens it and reads back its report; it needs
the hardening modules alone. A single-threaded process (`autograder doctor`) calls it itself
(`host_layers`). A process that runs threads (a service's) must not fork, so it asks a fresh
interpreter (`probe`): `python -I -m grader.sandbox.probe --uid-base N --scratch DIR` prints the
report as JSON. Neither starts the warm process or imports torch.
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
    """The layers a `WarmProcessSandbox` with these uids applies on this host, as its `layers()`
    lists them, probed from this process: call it from a single-threaded one (a command's)."""
    root = ScratchRoot()
    try:
        probed = hardening.probe_layers(hardening.slot_uid(uid_base, 0), root.path)
    finally:
        root.close()
    return [FORKED_PROCESS, *probed, *PROCESS_LAYERS]


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
