"""Examples of the answers of an exercise's groups of unexplained wrong answers and of naming one
(app.staff.cluster_schemas), for their OpenAPI documentation: as the demo course answers."""

from __future__ import annotations

from typing import Any

_KEY = "3f9a1c0d5e7b2a64"

NAMED_MISTAKE: dict[str, Any] = {
    "code": "output-halved",
    "message": "Your output is half the reference's.",
    "fix": "Drop the extra factor of 0.5 after the heads.",
    "concepts": ["scaling"],
    "behaviour_key": _KEY,
    "student_message": "Your output is half the reference's. Fix: Drop the extra factor of 0.5 "
    "after the heads.",
    "created_at": "2026-11-28T16:00:00Z",
}

EXERCISE_CLUSTERS: dict[str, Any] = {
    "course": "ml-101",
    "exercise": "multi-headed-self-attention",
    "unexplained_students": 92,
    "clusters": [
        {
            "key": _KEY,
            "facts": ["output: is the reference's scaled by 0.5"],
            "failing_tests": ["batch 1, 2 heads", "8 heads"],
            "broken_properties": [],
            "students": 6,
            "submissions": 27,
            "examples": [
                {
                    "submission_id": "01M7SCW7TJC3A21MT017DAEYXJ",
                    "student_id": "student-0297",
                    "source": "import torch\n...",
                    "excerpts": [
                        {
                            "test": "batch 1, 2 heads",
                            "output": "output",
                            "index": [0, 0],
                            "expected": [-0.1616, -1.4393, -1.4648],
                            "actual": [-0.0808, -0.7197, -0.7324],
                        }
                    ],
                }
            ],
        }
    ],
    "named": [],
    "concepts": {"scaling": "scaling the attention scores by 1/sqrt(d_k)"},
}

NAMED: dict[str, Any] = {"mistake": NAMED_MISTAKE, "rediagnosed": 27}
