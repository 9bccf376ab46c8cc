"""`autograder serve` as a person meets it: a port in use is one line and exit 2, and once the
service answers, one plain line says where to open it, whatever the log format."""

from __future__ import annotations

import json
import os
import socket
import subprocess
from pathlib import Path

import httpx
import pytest
from test_server import AUTOGRADER, free_port, server

pytestmark = pytest.mark.slow


def test_a_port_in_use_is_one_line_naming_it_and_exit_2(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [AUTOGRADER, "serve", "--port", str(port)],
            env={**os.environ, "AUTOGRADER_DATA_DIR": str(tmp_path), "AUTOGRADER_SECRET": "x"},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [
        f"autograder: 127.0.0.1:{port} is in use by another process: stop it, or choose another "
        "port (`autograder serve --port 8001`, or AUTOGRADER_PORT=8001)"
    ]
    assert result.stdout == ""
    assert not (tmp_path / "autograder.db").exists()  # refused before anything started


@pytest.mark.parametrize("log_format", ["text", "json"])
def test_the_service_says_where_to_open_it_in_one_plain_line(
    tmp_path: Path, log_format: str
) -> None:
    port = free_port()
    with server(tmp_path, port, AUTOGRADER_LOG_FORMAT=log_format) as (_, client):
        assert client.get("/exercises").status_code == 200
    lines = next(tmp_path.glob("serve-*.log")).read_text().splitlines()
    opening = f"open http://127.0.0.1:{port}/exercises"
    assert lines.count(opening) == 1
    records = [line for line in lines if line != opening]
    assert records
    if log_format == "json":
        assert all(json.loads(line)["message"] for line in records)
    else:
        assert all(not line.startswith("{") for line in records)
        assert any(" WARNING app.serve: running OPEN" in line for line in records)


def test_port_0_opens_where_the_system_put_it(tmp_path: Path) -> None:
    with subprocess.Popen(
        [AUTOGRADER, "serve", "--port", "0"],
        env={**os.environ, "AUTOGRADER_DATA_DIR": str(tmp_path), "AUTOGRADER_SECRET": "x"},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as process:
        try:
            assert process.stdout is not None
            url = process.stdout.readline().removeprefix("open ").strip()
            assert url.startswith("http://127.0.0.1:") and url.endswith("/exercises"), url
            assert httpx.get(url, timeout=30).status_code == 200
        finally:
            process.terminate()
