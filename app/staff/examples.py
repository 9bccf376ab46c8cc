"""Examples of the staff routes' answers, for their OpenAPI documentation (app.staff.schemas):
figures of a seeded class (`autograder demo-course`), shortened."""

from __future__ import annotations

from typing import Any

_SEED = "multi-headed-self-attention"
_TITLE = "Multi-Headed Self-Attention"

COURSE_EXERCISES: dict[str, Any] = {
    "course": "ml-101",
    "exercises": [
        {
            "exercise": _SEED,
            "title": _TITLE,
            "submissions": 11904,
            "students": 911,
            "passed_students": 842,
            "mean_score": 0.93,
            "outdated_submissions": 0,
            "draft": None,
        }
    ],
}

EXERCISE_STATS: dict[str, Any] = {
    "course": "ml-101",
    "exercise": _SEED,
    "title": _TITLE,
    "version": "ccb3ccfa42d0",
    "gradebook": "best",
    "submissions": 11904,
    "students": 911,
    "passed_students": 842,
    "outdated_submissions": 0,
    "score_histogram": [
        {"low": n / 10, "high": (n + 1) / 10, "students": count}
        for n, count in enumerate([12, 31, 14, 0, 0, 0, 0, 0, 6, 848])
    ],
    "tests": [
        {
            "name": "batch 1, 2 heads",
            "visibility": "visible",
            "submissions": 11702,
            "passed": 8990,
            "pass_rate": 0.768,
        }
    ],
    "misconceptions": {
        "failing_students": 840,
        "failing_submissions": 4587,
        "known": [
            {
                "code": "missing-scaling",
                "message": "Your output matches attention without the 1/sqrt(d) scaling: divide "
                "the scores q @ k^T by the square root of the head size before the softmax.",
                "students": 319,
                "submissions": 1062,
                "share": 0.38,
            }
        ],
        "unrecognised": {"students": 276, "submissions": 1190, "share": 0.329},
    },
    "properties": [{"name": "causal", "checked": 11650, "failed": 1304, "failed_students": 288}],
    "attempts_to_pass": {
        "histogram": [{"attempts": 1, "students": 301}, {"attempts": 2, "students": 97}],
        "median": 3.0,
        "never_passed": 69,
    },
    "timeline": [
        {
            "day": "2026-09-01",
            "submissions": 1322,
            "students": 412,
            "passed_submissions": 655,
            "mean_score": 0.61,
        }
    ],
}

_FIGURES = {"best": 10.0, "latest": 7.0, "max_score": 10.0, "attempts": 6, "passed": True}

COURSE_STUDENTS: dict[str, Any] = {
    "exercises": [_SEED, "scaled-dot-product-attention"],
    "students": [
        {"student_id": "lti:1:8f3a", "name": "Ada Lovelace", "exercises": {}},
        {"student_id": "s1234567", "name": None, "exercises": {_SEED: _FIGURES}},
    ],
}

STUDENT_DETAIL: dict[str, Any] = {
    "student_id": "s1234567",
    "exercises": [{"exercise": _SEED, "title": _TITLE, "gradebook": "best", **_FIGURES}],
    "submissions": [
        {
            "id": "01JD8Z6Q3M9V7N4K2P5R8T1W0X",
            "exercise": _SEED,
            "student_id": "s1234567",
            "status": "done",
            "result": "failed",
            "score": 7.0,
            "max_score": 10.0,
            "created_at": "2026-11-22T17:00:00Z",
            "finished_at": "2026-11-22T17:00:04Z",
        }
    ],
}

GRADEBOOK_CSV = (
    f"student_id,fused-qkv-attention,{_SEED},name,status\r\n"
    "Points Possible,10,10,,\r\n"
    "lti:1:8f3a,,,Ada Lovelace,not submitted\r\n"
    "s1234567,10,7,,submitted\r\n'=not-a-formula,,10,,submitted\r\n"
)

HIDDEN_TESTS: dict[str, Any] = {
    "submission": "01JD8Z6Q3M9V7N4K2P5R8T1W0X",
    "exercise": _SEED,
    "student_id": "s1234567",
    "hidden": {
        "termination": "completed",
        "tests": [
            {
                "name": "context length 2, causal mask",
                "passed": False,
                "outcome": "wrong_output",
                "summary": "`output` differs in 12 of 64 elements (max abs error 0.4102); "
                "first at index [0, 1, 0]: expected 0.2141, got 0.6243",
                "input_set": 3,
                "inputs": [
                    {"step": 1, "method": "forward", "position": 1, "shape": [2, 2, 16]},
                    {"step": 1, "method": "forward", "position": 2, "value": True},
                ],
                "outputs": [
                    {
                        "name": "output",
                        "passed": False,
                        "check": "values",
                        "message": "`output` differs in 12 of 64 elements (max abs error 0.4102)",
                        "max_abs_error": 0.4102,
                        "mismatch_count": 12,
                        "first_mismatch": {
                            "index": [0, 1, 0],
                            "expected": 0.2141,
                            "actual": 0.6243,
                        },
                    }
                ],
                "error": None,
                "stdout": "",
                "duration_ms": 3.1,
            }
        ],
    },
}

EXPORT_ZIP = "a zip of manifest.csv, submissions/<id>.py and submissions/<id>.json"

CONCEPTS_CSV = (
    "concept,description,2026-09-07,2026-09-14,now\r\n"
    'masking,"masks: which positions may attend, and how a mask is applied",96,71,58\r\n'
)
