"""A promise names one number of a test and a condition on it; a test exercises the promise
when its number meets the condition."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from grader.promises import Promise


@pytest.mark.parametrize(
    ("fields", "value", "holds"),
    [
        ({"equals": 1}, 1, True),
        ({"equals": 1}, 2, False),
        ({"at_least": 2}, 2, True),
        ({"at_least": 2}, 1, False),
        ({"power_of_two": False}, 6, True),
        ({"power_of_two": False}, 8, False),
        ({"power_of_two": True}, 1, True),
        ({"at_least": 4, "power_of_two": False}, 3, False),
        ({"at_least": 4, "power_of_two": False}, 12, True),
    ],
)
def test_a_condition_holds_of_a_value(fields: dict[str, Any], value: int, holds: bool) -> None:
    promise = Promise(case="a case", init="num_heads", **fields)
    assert promise.holds(value) is holds


@pytest.mark.parametrize(
    ("fields", "complaint"),
    [
        ({"equals": 1}, "either `init` or `input`"),
        ({"init": "num_heads", "input": 0, "axis": 0, "equals": 1}, "either `init` or `input`"),
        ({"input": 0, "equals": 1}, "`input` and `axis` go together"),
        ({"init": "num_heads"}, "give `equals`, `at_least` or `power_of_two`"),
        ({"init": "num_heads", "equals": 1, "bigger": 2}, "Extra inputs are not permitted"),
    ],
)
def test_a_promise_names_one_number_and_a_condition(fields: dict[str, Any], complaint: str) -> None:
    with pytest.raises(ValidationError, match=complaint):
        Promise(case="a case", **fields)


def test_a_promise_describes_its_number_and_condition() -> None:
    promise = Promise(case="context length 1", input=0, axis=-2, equals=1)
    assert promise.describe() == "input 0, axis -2 = 1"
    several = Promise(case="odd sizes", init="embedding_dim", at_least=3, power_of_two=False)
    assert several.describe() == "embedding_dim >= 3 and not a power of two"
