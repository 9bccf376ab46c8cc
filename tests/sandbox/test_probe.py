"""The layer probe: the same layers whether a command forks itself to probe or a threaded
process asks a fresh interpreter, and neither imports torch or numpy."""

from __future__ import annotations

import json
import subprocess
import sys

from grader.sandbox.launch import UID_BASE
from grader.sandbox.probe import probe
from grader.sandbox.scratch import ScratchRoot

# `host_layers` forks the process that calls it, which must be single-threaded: not pytest's.
HOST_LAYERS = """
import json, sys
from grader.sandbox.probe import host_layers
layers = [vars(layer) for layer in host_layers()]
print(json.dumps({"layers": layers, "heavy": sorted({"torch", "numpy"} & set(sys.modules))}))
"""


def test_both_ways_of_probing_find_the_same_layers_without_torch() -> None:
    done = subprocess.run(
        [sys.executable, "-c", HOST_LAYERS], capture_output=True, text=True, check=True
    )
    probed_here = json.loads(done.stdout)
    assert probed_here["heavy"] == []
    names = [layer["name"] for layer in probed_here["layers"]]
    assert names[0] == "process" and names[-2:] == ["channel", "supervision"]
    root = ScratchRoot()  # as the fresh-interpreter sandbox probes: in its scratch root
    try:
        from_fresh = [
            {"name": layer.name, "active": layer.active} for layer in probe(UID_BASE, root.path)
        ]
    finally:
        root.close()
    assert from_fresh == [
        {"name": layer["name"], "active": layer["active"]} for layer in probed_here["layers"][1:-2]
    ]
