"""A notebook without Jupyter: cells run one by one in IPython's InteractiveShell, in a fresh
interpreter (the shell installs itself process-wide), printing what the last cell prints."""

from __future__ import annotations

import json
import os
import subprocess
import sys

_RUNNER = """
import json, sys
from IPython.core.interactiveshell import InteractiveShell

shell = InteractiveShell.instance()
for cell in json.loads(sys.stdin.read()):
    shell.run_cell(cell, store_history=True).raise_error()
"""


def run_notebook(cells: list[str], env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [sys.executable, "-c", _RUNNER],
        input=json.dumps(cells),
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout
