"""The cases an exercise's statement promises to handle, and which tests exercise them.

A statement that says "any batch size, context length 1 included, one head or many" makes a
promise the hidden tests must keep: a submission that breaks on one head must lose points. Each
promise names one number of a test (a constructor argument, or one dimension of an input) and a
condition on it; `autograder check-exercise` requires a hidden test where the condition holds
(`grader.proof`).

    [[promises]]
    case = "context length 1"   # as the statement words it
    input = 0                   # the first input's ...
    axis = -2                   # ... second-to-last dimension
    equals = 1

    [[promises]]
    case = "sizes that are not powers of two"
    init = "embedding_dim"      # a constructor argument
    power_of_two = false
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator


class Promise(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    case: str = Field(min_length=1, max_length=80)
    init: str | None = None
    input: int | None = Field(default=None, ge=0)
    axis: int | None = None
    equals: int | None = None
    at_least: int | None = None
    power_of_two: bool | None = None

    @model_validator(mode="after")
    def _check_subject_and_condition(self) -> Promise:
        if (self.init is None) == (self.input is None):
            raise ValueError(f"promise {self.case!r}: name either `init` or `input`")
        if (self.input is None) != (self.axis is None):
            raise ValueError(f"promise {self.case!r}: `input` and `axis` go together")
        if (self.equals, self.at_least, self.power_of_two) == (None, None, None):
            raise ValueError(f"promise {self.case!r}: give `equals`, `at_least` or `power_of_two`")
        return self

    def describe(self) -> str:
        subject = self.init if self.input is None else f"input {self.input}, axis {self.axis}"
        conditions = [
            f"= {self.equals}" if self.equals is not None else "",
            f">= {self.at_least}" if self.at_least is not None else "",
            {None: "", True: "a power of two", False: "not a power of two"}[self.power_of_two],
        ]
        return f"{subject} {' and '.join(c for c in conditions if c)}"

    def holds(self, value: int) -> bool:
        is_power_of_two = value > 0 and value & (value - 1) == 0
        return (
            (self.equals is None or value == self.equals)
            and (self.at_least is None or value >= self.at_least)
            and (self.power_of_two is None or is_power_of_two == self.power_of_two)
        )
