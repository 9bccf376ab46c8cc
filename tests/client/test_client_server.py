"""The client against the real service (`autograder serve`, the real sandbox): a class object,
a file, a string, a wrong solution's diagnosis, escaping of what a submission prints, errors,
`autograder submit`'s exit codes, and a notebook whose imports live in an earlier cell."""

from __future__ import annotations

import json
import math
import os
import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import torch
from autograder_client import SubmissionError, configure, submit
from client_support import (
    AUTOGRADER,
    CORRECT,
    MISSING_SCALING,
    SEED,
    free_port,
    serve,
    student_link,
    unconfigured,
)
from notebook_support import run_notebook
from torch import nn

from grader.render import render_text
from grader.report import Report

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _unconfigured(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    unconfigured(monkeypatch, tmp_path / "config")


@pytest.fixture(scope="module")
def service_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("service")


@pytest.fixture(scope="module")
def service_url(service_dir: Path) -> Iterator[str]:
    """One service for the module: starting it warms the sandbox pool."""
    with serve(service_dir) as url:
        yield url


class MultiHeadedSelfAttention(nn.Module):
    """A correct solution, written in this test module as a student writes it in a notebook."""

    def __init__(self, embedding_dim: int, attention_dim: int, num_heads: int):
        super().__init__()
        torch.manual_seed(0)
        self.att_heads = nn.ModuleList(
            self.SingleHeadAttention(embedding_dim, attention_dim // num_heads)
            for _ in range(num_heads)
        )

    def forward(self, embedded: torch.Tensor) -> torch.Tensor:
        concatenated = torch.cat([head(embedded) for head in self.att_heads], dim=2)
        return torch.round(concatenated, decimals=4)

    class SingleHeadAttention(nn.Module):
        def __init__(self, embedding_dim: int, attention_dim: int):
            super().__init__()
            torch.manual_seed(0)
            self.key_gen = nn.Linear(embedding_dim, attention_dim, bias=False)
            self.query_gen = nn.Linear(embedding_dim, attention_dim, bias=False)
            self.value_gen = nn.Linear(embedding_dim, attention_dim, bias=False)

        def forward(self, embedded: torch.Tensor) -> torch.Tensor:
            k: torch.Tensor = self.key_gen(embedded)
            q: torch.Tensor = self.query_gen(embedded)
            v: torch.Tensor = self.value_gen(embedded)
            scores = q @ torch.transpose(k, 1, 2) / math.sqrt(k.shape[2])
            context_length = k.shape[1]
            mask = torch.tril(torch.ones(context_length, context_length)) == 0
            scores = nn.functional.softmax(scores.masked_fill(mask, float("-inf")), dim=2)
            return scores @ v


def test_a_class_object_a_file_and_a_string_each_pass(service_url: str) -> None:
    for submission in (MultiHeadedSelfAttention, CORRECT, CORRECT.read_text(encoding="utf-8")):
        result = submit(SEED, submission, url=service_url)
        assert result.passed, result
        assert result.score == result.max_score
        assert str(result).startswith(f"{SEED}: PASSED.")


def test_a_wrong_solution_shows_its_diagnosis_as_text_and_html(service_url: str) -> None:
    result = submit(SEED, str(MISSING_SCALING), url=service_url)
    assert not result.passed and result.status == "failed"
    text = str(result)
    assert text == repr(result) == render_text(Report.model_validate(result.report))
    assert "Diagnosis:" in text and "1/sqrt(d)" in text
    html = result._repr_html_()
    assert "<strong>Diagnosis</strong>" in html and "1/sqrt(d)" in html
    assert ">hidden</td>" in html and ">failed</span>" in html  # its status, said once
    assert html.index("Diagnosis") < html.index("<table")  # the why leads, as on the page
    assert ">expected</th>" in html  # a visible test's first mismatch, side by side


def test_what_a_submission_prints_is_escaped_in_html(service_url: str) -> None:
    source = CORRECT.read_text(encoding="utf-8").replace(
        "        head_outputs = []\n",
        "        head_outputs = []\n        print('<script>alert(1)</script>')\n",
    )
    assert source != CORRECT.read_text(encoding="utf-8")
    result = submit(SEED, source, url=service_url)
    assert result.passed, result
    assert "<script>alert(1)</script>" in str(result)  # text is shown as printed
    html = result._repr_html_()
    assert "<script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def history(service_url: str, student: str) -> list[str]:
    """The ids in a student's history, as the exercise page asks for it."""
    answer = httpx.get(f"{service_url}/v1/submissions", params={"student_id": student})
    return [item["id"] for item in answer.raise_for_status().json()["items"]]


def test_a_configured_student_id_puts_the_submission_in_that_student_s_history(
    service_url: str,
) -> None:
    configure(student_id="ada")
    result = submit(SEED, CORRECT, url=service_url)
    assert result.submission["student_id"] == "ada"
    assert history(service_url, "ada") == [result.id]


def test_a_configured_student_link_submits_as_its_student(
    service_url: str, service_dir: Path
) -> None:
    configure(link=student_link(service_dir, service_url, "grace"))
    result = submit(SEED, CORRECT)  # the link says where the autograder is, and who submits
    assert result.submission["student_id"] == "grace"
    assert history(service_url, "grace") == [result.id]
    with pytest.raises(SubmissionError, match="you are signed in as 'grace'") as caught:
        submit(SEED, CORRECT, student_id="ada")
    assert caught.value.status == 403


def test_refusals_are_submission_errors_with_the_problem_s_detail(service_url: str) -> None:
    with pytest.raises(SubmissionError, match="no-such-exercise") as caught:
        submit("no-such-exercise", CORRECT, url=service_url)
    assert caught.value.status == 404
    with pytest.raises(SubmissionError, match="the limit is") as caught:
        submit(SEED, "#" * 300_000, url=service_url)
    assert caught.value.status == 413
    with pytest.raises(SubmissionError, match=r"body\.exercise") as caught:
        submit("Not A Slug", CORRECT, url=service_url)
    assert caught.value.status == 422


def test_autograder_submit_exit_codes(service_url: str, tmp_path: Path) -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [AUTOGRADER, "submit", *args],
            env={**os.environ, "AUTOGRADER_DATA_DIR": str(tmp_path), "AUTOGRADER_URL": service_url},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    passed = run(SEED, str(CORRECT), "--json")
    assert passed.returncode == 0, passed.stderr
    assert json.loads(passed.stdout)["report"]["status"] == "passed"
    failed = run(SEED, str(MISSING_SCALING))
    assert failed.returncode == 1
    assert "Diagnosis:" in failed.stdout
    unknown = run("no-such-exercise", str(CORRECT))
    assert unknown.returncode == 2 and "no-such-exercise" in unknown.stderr
    down = run(SEED, str(CORRECT), "--url", f"http://127.0.0.1:{free_port()}")
    assert down.returncode == 2 and "cannot reach the autograder" in down.stderr


def test_a_notebook_class_with_imports_in_an_earlier_cell_grades(service_url: str) -> None:
    student = CORRECT.read_text(encoding="utf-8")
    imports, definition = student.split("\n\n\n", 1)
    assert imports == "import torch\nimport torch.nn as nn"
    cells = [
        imports,
        definition,
        textwrap.dedent(
            f"""\
            from autograder_client import submit
            result = submit({SEED!r}, MultiHeadedSelfAttention)
            print(result.status, result.score, result.max_score)
            print("<table " in result._repr_html_())
            """
        ),
    ]
    printed = run_notebook(cells, env={"AUTOGRADER_URL": service_url})
    status, score, max_score, has_table = printed.split()
    assert (status, score, has_table) == ("passed", max_score, "True")
