"""The first submission is taught too: the starter as given, a None, a wrong type or a wrong
shape each get one plain finding, said once for the visible tests, on real-style submissions
graded as `autograder grade` grades them (in this process's sandbox)."""

from __future__ import annotations

from functools import cache

import pytest

from grader.catalog import Catalog
from grader.first_submission import STARTER_CODE, is_starter, starter_message
from grader.output_contract import RETURNS_NONE, WRONG_SHAPE, WRONG_TYPE
from grader.report import Finding, Report, ReportStatus
from grader.runner import Grader
from grader.sandbox.inprocess import InProcessSandbox
from grader.settings import GraderSettings
from grader.spec import Visibility

CATALOG = Catalog.from_folder(GraderSettings().exercises_dir)
MODULE = "multi-headed-self-attention"
FUNCTION = "scaled-dot-product-attention"
PLAIN_CODES = {STARTER_CODE, RETURNS_NONE, WRONG_TYPE, WRONG_SHAPE}
ANSWER = (CATALOG.get(MODULE).folder / "solutions" / "neetcode_common_answer.py").read_text()
RETURN = "        return torch.round(concatenated, decimals=4)\n"
FUNCTION_ANSWER = (CATALOG.get(FUNCTION).folder / "solutions" / "notebook_style.py").read_text()


@cache
def grader() -> Grader:
    return Grader(CATALOG, InProcessSandbox(), "first-submission")


def grade(slug: str, source: str) -> Report:
    return grader().grade(slug, source)


def answer_returning(expression: str) -> str:
    """The correct answer, its forward ending in `return <expression>` instead."""
    assert RETURN in ANSWER
    return ANSWER.replace(RETURN, f"        return {expression}\n")


def plain(report: Report) -> list[Finding]:
    return [finding for finding in report.diagnosis if finding.code in PLAIN_CODES]


def visible_names(slug: str) -> list[str]:
    spec = CATALOG.get(slug).spec
    return [test.name for test in spec.tests if test.visibility is Visibility.VISIBLE]


def hidden_shapes(slug: str) -> list[str]:
    """Every hidden test's input shape as a report would write it, "(2, 6, 8)"."""
    spec = CATALOG.get(slug).spec
    return [
        "(" + ", ".join(str(size) for size in tensor.shape) + ")"
        for test in spec.tests
        if test.visibility is Visibility.HIDDEN
        for tensor in test.inputs
        if hasattr(tensor, "shape")
    ]


def the_one_finding(report: Report, shown_by: int | None = None) -> Finding:
    """The report's single plain finding: said once, listed first, for every visible test (or
    the first `shown_by` of them)."""
    found = plain(report)
    assert len(found) == 1, report.diagnosis
    assert report.diagnosis[0] == found[0]
    assert found[0].tests == visible_names(report.exercise)[:shown_by]
    return found[0]


@pytest.mark.parametrize("slug", [MODULE, FUNCTION])
def test_the_starter_as_given_is_told_what_to_fill_in(slug: str) -> None:
    report = grade(slug, CATALOG.get(slug).starter)
    finding = the_one_finding(report)
    assert (finding.code, finding.concepts) == (STARTER_CODE, ["output-contract"])
    if slug == MODULE:  # its forward returns None: the starter says it, not a second finding
        assert "`MultiHeadedSelfAttention.__init__` and `MultiHeadedSelfAttention.forward`" in (
            finding.message
        )
        assert "`pass`" in finding.message
    else:
        assert "`scaled_dot_product`" in finding.message
        assert "`raise NotImplementedError`" in finding.message
        # Each row stays short: an exception with no message gets no dangling colon.
        rows = {test.message for test in report.tests if test.visibility is Visibility.VISIBLE}
        assert rows == {"raised NotImplementedError at line 11"}


def test_a_starter_whose_comments_and_spacing_alone_changed_is_still_the_starter() -> None:
    starter = CATALOG.get(MODULE).starter
    edited = starter.replace("# Return answer to 4 decimal places", "# TODO: my answer here!")
    edited = edited.replace("    pass\n", "    pass  # later\n\n").replace(" = ", "=")
    assert edited != starter
    assert [finding.code for finding in plain(grade(MODULE, edited))] == [STARTER_CODE]


def test_a_starter_with_any_code_changed_is_no_longer_the_starter() -> None:
    starter = CATALOG.get(MODULE).starter
    assert not is_starter(starter.replace("torch.manual_seed(0)", "torch.manual_seed(1)"), starter)
    assert not is_starter(starter + "\nx = 1\n", starter)
    assert not is_starter("def broken(:\n", starter)


def test_a_starter_names_each_function_left_to_write() -> None:
    starter = "class A:\n    def f(self):\n        pass\n\n    def g(self):\n        return 1\n"
    starter += "\n\ndef h():\n    raise NotImplementedError('write me')\n"
    assert starter_message(starter) == (
        "This is the starter as it was given: fill in `A.f` and `h`, where it still has `pass` "
        "or `raise NotImplementedError`."
    )


def test_a_forward_without_a_return_is_told_once_that_it_returns_none() -> None:
    no_return = ANSWER.replace(RETURN, RETURN.replace("return", "concatenated ="))
    report = grade(MODULE, no_return)
    finding = the_one_finding(report)
    assert finding.code == RETURNS_NONE
    assert finding.message.startswith("`MultiHeadedSelfAttention.forward` returns None")
    assert "`pass`" in finding.message and "`return`" in finding.message
    # Each row keeps its own short message; the advice is the finding's alone.
    assert all("`return`" not in test.message for test in report.tests)


def test_a_list_of_heads_names_the_list_and_the_tensor_expected() -> None:
    finding = the_one_finding(grade(MODULE, answer_returning("head_outputs")))
    assert finding.code == WRONG_TYPE
    # Two heads on one test, eight on another: the kind of value, not one test's count.
    assert finding.message.startswith(
        "`MultiHeadedSelfAttention.forward` returns a list where a torch.Tensor is expected"
    )
    assert "join them into one tensor (`torch.cat` or `torch.stack`)" in finding.message


def test_a_numpy_array_is_named_as_such() -> None:
    finding = the_one_finding(grade(MODULE, answer_returning("concatenated.detach().numpy()")))
    assert finding.code == WRONG_TYPE
    assert "returns a numpy.ndarray where a torch.Tensor is expected" in finding.message


def test_a_tuple_of_the_wrong_length_names_the_outputs_expected() -> None:
    source = FUNCTION_ANSWER.replace("return values, attention", "return values, attention, q")
    finding = the_one_finding(grade(FUNCTION, source))
    assert finding.code == WRONG_TYPE
    assert finding.message.startswith(
        "`scaled_dot_product` returns a tuple of 3 Tensor where a tuple (values, attention) is "
        "expected"
    )
    assert "`return values, attention`" in finding.message


def test_a_transposed_output_is_named_a_swap_of_the_last_two_axes() -> None:
    """Said though the last visible test's output is square (64 tokens, attention 64): its
    shape is right, and swapping its last two axes keeps it so."""
    report = grade(MODULE, answer_returning("concatenated.transpose(1, 2)"))
    finding = the_one_finding(report, shown_by=4)
    assert finding.code == WRONG_SHAPE
    assert "the last two axes are swapped" in finding.message
    assert "(1, 8, 4) where (1, 4, 8) is expected" in finding.message
    assert not any(shape in finding.message for shape in hidden_shapes(MODULE))


def test_one_heads_output_is_named_in_the_constructors_terms() -> None:
    finding = the_one_finding(grade(MODULE, answer_returning("head_outputs[0]")))
    assert finding.code == WRONG_SHAPE
    assert "the last axis is `attention_dim // num_heads` where `attention_dim` is expected" in (
        finding.message
    )


def test_a_correct_solution_gets_no_plain_finding() -> None:
    report = grade(MODULE, ANSWER)
    assert report.status is ReportStatus.PASSED
    assert plain(report) == []


def test_a_wrong_shape_a_known_mistake_explains_is_left_to_its_diagnosis() -> None:
    """Heads concatenated along the sequence: a wrong shape on every test, and a known mistake
    that names it; one finding, the known mistake's."""
    source = ANSWER.replace("torch.cat(head_outputs, dim=2)", "torch.cat(head_outputs, dim=1)")
    report = grade(MODULE, source)
    assert [finding.code for finding in report.diagnosis] == ["concat-along-sequence"]
