"""The text report, pinned by a golden file: rewrite it with UPDATE_GOLDEN=1 after a deliberate
change of wording, and review the diff as feedback students will read."""

import os
from pathlib import Path

from grader.render import render_text
from grader.report import Report

GOLDEN = Path(__file__).parent / "golden"

REPORT = Report.model_validate(
    {
        "exercise": "multi-headed-self-attention",
        "status": "failed",
        "score": 1.0,
        "max_score": 3.0,
        "message": "1 of 3 tests passed (1/3 points)",
        "tests": [
            {
                "name": "batch 1, 2 heads",
                "visibility": "visible",
                "status": "passed",
                "score": 1.0,
                "max_score": 1.0,
                "message": "all outputs match to 4 decimals",
            },
            {
                "name": "16 heads",
                "visibility": "visible",
                "status": "failed",
                "score": 0.0,
                "max_score": 1.0,
                "message": "`output` differs in 12 of 64 values (max abs error 0.031); first at "
                "index [0, 2, 1]: expected 0.1234, got 0.1534",
                "stdout": "shape torch.Size([3, 7, 64])\n",
            },
            {
                "name": "one head",
                "visibility": "hidden",
                "status": "failed",
                "score": 0.0,
                "max_score": 1.0,
                "message": "hidden test: failed",
            },
        ],
        "diagnosis": [
            {
                "code": "missing-scaling",
                "message": "Your output matches attention without the 1/sqrt(d) scaling.",
                "tests": ["16 heads"],
            }
        ],
        "properties": [
            {"name": "causal", "status": "passed", "message": "holds on 5 visible tests"}
        ],
    }
)


def test_text_report_matches_the_golden_file() -> None:
    golden = GOLDEN / "failed_report.txt"
    text = render_text(REPORT)
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(text, encoding="utf-8")
    assert text == golden.read_text(encoding="utf-8")
