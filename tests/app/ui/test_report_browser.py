"""The report on the exercise page, each fact said once: reports the grader judged from runs made
up here (a refused submission, wrong values, a time-out: the last cannot be made on demand on a
busy machine) are served in place of the service's answers to the page's submission. Each kind of
report passes axe-core's WCAG 2.2 A/AA rules and fits a phone's screen. The screenshots of
docs/web.md land in docs/images."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from app_support import ROOT, SEED
from browser_support import (
    SHOTS,
    assert_fits,
    assert_no_axe_violations,
    open_page,
    skip_without_a_browser,
    submit,
    type_solution,
)
from playwright.sync_api import Browser, Locator, Page, Route, ViewportSize, expect

from grader.catalog import Catalog
from grader.contract import (
    CallOutcome,
    Execution,
    Gradients,
    RaisedError,
    Termination,
    Violation,
)
from grader.hidden_verdicts import HiddenRun
from grader.judge import internal_error, judge
from grader.plan import ExercisePlan, TestPlan
from grader.plan_building import build_plan
from grader.report import Report

pytestmark = pytest.mark.slow
skip_without_a_browser()

IMAGES = ROOT / "docs" / "images"
SIZES = {
    "desktop": ViewportSize(width=1280, height=900),
    "phone": ViewportSize(width=390, height=844),
}
CPU_USED_UP = "used up its 10 s of CPU"  # the sandbox's detail of a CPU time-out


@pytest.fixture(scope="module")
def plan(catalog: Catalog) -> ExercisePlan:
    return build_plan(catalog.get(SEED), secret="report-browser")


def visible(plan: ExercisePlan) -> list[TestPlan]:
    return [test for test in plan.tests if test.visible]


SYNTAX_ERROR = Violation("syntax error: expected ':'", line=14)
FORBIDDEN = (
    Violation("importing `os` is not allowed in this exercise", line=1),
    Violation("importing `subprocess` is not allowed in this exercise", line=2),
)


def refused(plan: ExercisePlan, violations: tuple[Violation, ...] = (SYNTAX_ERROR,)) -> Report:
    return judge(plan, Execution(Termination.REJECTED, {}, violations=violations))


def missing_scaling(plan: ExercisePlan) -> Report:
    """What the known mistake returns on every visible call, its probes' included: wrong values,
    diagnosed, with properties that hold."""
    mistake = next(known for known in plan.mistakes if known.code == "missing-scaling")
    outcomes = {}
    for test in visible(plan):
        for call in (test.call, *(probe.call for probe in test.probes)):
            outcomes[call.id] = CallOutcome(call.id, outputs=mistake.outputs[test.spec.name])
    return judge(plan, Execution(Termination.COMPLETED, outcomes))


def timed_out(plan: ExercisePlan) -> Report:
    first, second = visible(plan)[:2]
    execution = Execution(
        Termination.TIMEOUT,
        {first.call.id: CallOutcome(first.call.id, outputs=first.expected)},
        interrupted_call=second.call.id,
        detail=CPU_USED_UP,
    )
    return judge(plan, execution)


def raising(plan: ExercisePlan) -> Report:
    """Every visible call raised in the student's code: errors, the student's to fix."""
    error = RaisedError("RuntimeError", "mat1 and mat2 shapes cannot be multiplied", line=21)
    outcomes = {
        call.id: CallOutcome(call.id, outputs=None, error=error)
        for test in visible(plan)
        for call in (test.call, *(probe.call for probe in test.probes))
    }
    return judge(plan, Execution(Termination.COMPLETED, outcomes))


def grader_fault(plan: ExercisePlan) -> Report:
    return internal_error(plan, "the sandbox could not start")


def untrainable(plan: ExercisePlan) -> Report:
    """Every output right (the seed exercise reports trainability, for no points), and a
    gradient pass that finds no autograd graph: a forward under torch.no_grad()."""
    outcomes = {}
    for test in visible(plan):
        for call in (test.call, *(probe.call for probe in test.probes)):
            outcomes[call.id] = CallOutcome(call.id, outputs=test.expected)
        for scaled in test.scaled:
            outcomes[scaled.case.call.id] = CallOutcome(scaled.case.call.id, scaled.case.expected)
        gradients = test.cases[0].gradients
        if gradients is not None:
            none = Gradients(graph=False, inputs=(None,), parameters=gradients.expected.parameters)
            outcomes[gradients.call.id] = CallOutcome(
                gradients.call.id, test.expected, gradients=none
            )
    hidden = {test.spec.name: test.cases[0] for test in plan.tests if not test.visible}
    hidden_outcomes = {name: CallOutcome(name, case.expected) for name, case in hidden.items()}
    return judge(
        plan,
        Execution(Termination.COMPLETED, outcomes),
        HiddenRun(hidden, Execution(Termination.COMPLETED, hidden_outcomes)),
    )


def graded(page: Page, base_url: str, report: Report) -> Locator:
    """Submit on the page, the service's answers replaced by a submission graded as `report`."""
    done = {
        "id": "graded",
        "exercise": SEED,
        "status": "done",
        "report": report.model_dump(mode="json"),
    }

    def answer(route: Route) -> None:
        accepted = {"id": "graded", "status": "queued"}
        body = accepted if route.request.method == "POST" else done
        route.fulfill(status=200, content_type="application/json", body=json.dumps(body))

    page.route(f"{base_url}/v1/submissions", answer)
    page.route(f"{base_url}/v1/submissions/graded", answer)
    open_page(page, f"{base_url}/exercises/{SEED}")
    code = page.get_by_role("tab", name="Code")
    if code.is_visible():  # a narrow screen shows one pane at a time, the statement first
        code.click()
    type_solution(page, "# graded elsewhere\n")
    submit(page)
    return page.locator("#report")


def checked(report: Locator, kind: str, size: str, shots: Path = IMAGES) -> None:
    """The page showing a report of this `kind` passes the accessibility checks; then the report
    alone is shot into `shots`: a report taller than a phone's screen is shot scrolled, where the
    narrow screen's sticky tab bar would be drawn over its top."""
    what = f"the exercise page with a {kind} report ({size})"
    assert_no_axe_violations(report.page, what)
    if size == "phone":
        assert_fits(report.page, what)
    path = shots / f"report-{kind}-{size}.png"
    report.screenshot(path=path, style=".pane-tabs { visibility: hidden; }")


@pytest.mark.parametrize("size", SIZES)
def test_a_refusal_says_its_reason_once_with_its_line(
    browser: Browser, base_url: str, plan: ExercisePlan, size: str
) -> None:
    page = browser.new_page(viewport=SIZES[size], device_scale_factor=2 if size == "phone" else 1)
    report = graded(page, base_url, refused(plan))
    verdict = report.locator(".verdict")
    expect(verdict.locator(".headline")).to_have_text("Your submission was refused")
    expect(verdict.locator(".message")).to_have_text(
        "Nothing ran: line 14: syntax error: expected ':'"
    )
    assert verdict.inner_text().lower().count("refused") == 1  # headline and message apart
    assert report.inner_text().count(SYNTAX_ERROR.message) == 1
    expect(report.locator(".diagnosis")).to_have_count(0)
    hidden = report.locator("tbody tr", has=page.locator(".tag", has_text="hidden"))
    expect(hidden).to_have_count(len(plan.tests) - len(visible(plan)))
    expect(hidden.locator(".badge")).to_have_text(["refused"] * hidden.count())
    checked(report, "refused", size)
    page.close()


def test_every_reason_of_a_refusal_is_said_once_on_a_line_of_its_own(
    browser: Browser, base_url: str, plan: ExercisePlan
) -> None:
    page = browser.new_page(viewport=SIZES["desktop"])
    report = graded(page, base_url, refused(plan, FORBIDDEN))
    said = report.locator(".verdict .message").inner_text().splitlines()
    assert said == [
        "Nothing ran:",
        *(f"- line {v.line}: {v.message.replace('`', '')}" for v in FORBIDDEN),
    ]
    text = report.inner_text()
    assert [text.count(v.message.replace("`", "")) for v in FORBIDDEN] == [1, 1]
    page.close()


@pytest.mark.parametrize("size", SIZES)
def test_a_failing_test_says_its_mismatch_once(
    browser: Browser, base_url: str, plan: ExercisePlan, size: str
) -> None:
    page = browser.new_page(viewport=SIZES[size], device_scale_factor=2 if size == "phone" else 1)
    made = missing_scaling(plan)
    report = graded(page, base_url, made)
    first = made.tests[0]
    details = report.locator("tbody tr", has_text=first.name).locator("td[data-label=Details]")
    expect(details.locator("p.message")).to_have_text(first.message.replace("`", ""))
    expected = details.locator("table.compare td").first.inner_text()
    text = details.inner_text()
    assert text.count(expected) == 1 and text.count("differ") == 1, text
    assert text.count("max abs error") == 1, text
    names = "; ".join(test.name for test in made.tests if test.visibility.value == "visible")
    expect(report.locator(".diagnosis")).to_contain_text(f"Seen in: {names}")
    expect(report.locator(".properties li")).to_have_text(
        [
            "causal: passed, holds on the 2 visible tests it was checked on",
            "batch independent: passed, holds on the 2 visible tests it was checked on",
        ]
    )
    checked(report, "failing", size)
    page.close()


def test_full_marks_that_cannot_train_say_why_first(
    browser: Browser, base_url: str, plan: ExercisePlan
) -> None:
    page = browser.new_page(viewport=SIZES["desktop"])
    made = untrainable(plan)
    assert made.score == made.max_score
    report = graded(page, base_url, made)
    expect(report.locator(".verdict .message")).to_contain_text(
        "but it does not train as the reference does (no-autograd-graph)"
    )
    expect(report.locator(".diagnosis")).to_contain_text("your output carries no autograd graph")
    expect(report.locator(".properties li", has_text="gradients")).to_contain_text("failed")
    checked(report, "untrainable", "desktop")
    page.close()


@pytest.mark.parametrize("size", SIZES)
def test_a_time_out_is_said_once_and_the_tests_it_stopped_say_only_that(
    browser: Browser, base_url: str, plan: ExercisePlan, size: str
) -> None:
    page = browser.new_page(viewport=SIZES[size], device_scale_factor=2 if size == "phone" else 1)
    report = graded(page, base_url, timed_out(plan))
    stopped = visible(plan)[1].spec.name
    row = report.locator("tbody tr", has_text=stopped).first
    expect(row.locator(".badge")).to_have_text("timed out")
    expect(row.locator("p.message")).to_have_text(f"{CPU_USED_UP}; look for a loop that never ends")
    assert report.inner_text().count("CPU") == 1
    expect(report.locator(".properties")).to_contain_text("skipped, no visible test produced")
    expect(report.locator(".properties")).not_to_contain_text("not checked")
    after = report.locator("tbody tr", has_text="16 heads").first.locator("p.message")
    expect(after).to_have_text(f"not run: the run stopped at test '{stopped}'")
    checked(report, "timeout", size)
    page.close()


def test_each_visible_test_copies_its_code_from_a_labelled_button_the_keyboard_reaches(
    browser: Browser, base_url: str, plan: ExercisePlan
) -> None:
    page = browser.new_page(
        viewport=SIZES["desktop"], permissions=["clipboard-read", "clipboard-write"]
    )
    made = missing_scaling(plan)
    report = graded(page, base_url, made)
    copy = report.get_by_role("button", name="Copy code to reproduce")
    expect(copy).to_have_count(len(visible(plan)))  # none for a hidden test
    second = made.tests[1]
    button = report.get_by_role(
        "button", name=f"Copy code to reproduce the test {second.name}", exact=True
    )
    box = button.bounding_box()
    assert box is not None and box["width"] >= 24 and box["height"] >= 24
    copy.first.focus()
    page.keyboard.press("Tab")  # the first test's "Show the code"
    page.keyboard.press("Tab")
    expect(button).to_be_focused()
    page.keyboard.press("Enter")
    expect(report.locator(".copied").nth(1)).to_contain_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == second.reproduce
    page.close()


# An error in the student's code fails its tests; a fault of the grader is said to be not theirs.
ERRORS: dict[str, tuple[Callable[[ExercisePlan], Report], str]] = {
    "error": (raising, "Some tests failed"),
    "grader-error": (grader_fault, "The grader failed on this submission (not your fault)"),
}


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("kind", ERRORS)
def test_an_error_says_whose_it_is(
    browser: Browser, base_url: str, plan: ExercisePlan, size: str, kind: str
) -> None:
    made, headline = ERRORS[kind]
    page = browser.new_page(viewport=SIZES[size], device_scale_factor=2 if size == "phone" else 1)
    report = graded(page, base_url, made(plan))
    expect(report.locator(".verdict .headline")).to_contain_text(headline)
    expect(report.locator("tbody tr .badge").first).to_have_text("error")
    checked(report, kind, size, SHOTS)
    page.close()
