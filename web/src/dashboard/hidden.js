// What each hidden test of a submission did (GET .../submissions/<id>/hidden-tests), under its
// report: the input set and the inputs' shapes, the first mismatch, the error, where the run
// stopped, its prints. Staff only: the student's report says passed or failed, nothing more.
import { h } from "../dom.js";

const OUTCOMES = {
  passed: "passed",
  wrong_output: "wrong output",
  does_not_train: "does not train",
  raised: "raised an error",
  stopped: "run stopped",
  refused: "refused",
  not_run: "not run",
};

function argument(one) {
  const where = one.step > 1 || one.method !== "forward" ? `step ${one.step} (${one.method}) ` : "";
  if (one.shape) return `${where}#${one.position}: ${one.dtype} [${one.shape.join(", ")}]`;
  return `${where}#${one.position}: ${one.value === null ? "None" : String(one.value)}`;
}

function inputs(test) {
  if (!test.inputs.length) return "–";
  return h("ul", { class: "plain" }, test.inputs.map((one) => h("li", {}, h("code", {}, argument(one)))));
}

function whatItDid(test) {
  const first = test.outputs.find((check) => !check.passed)?.first_mismatch;
  return [
    h("p", {}, test.summary),
    first
      ? h("p", { class: "facts" }, `At index [${first.index.join(", ")}]: expected ${first.expected}, got ${first.actual}`)
      : null,
    test.stdout ? h("details", { class: "data-details" }, h("summary", {}, "What it printed"), h("pre", {}, test.stdout)) : null,
  ];
}

function row(test) {
  return h(
    "tr",
    { "data-test": test.name },
    h("th", { scope: "row" }, test.name),
    h("td", { class: test.passed ? "passed" : "" }, OUTCOMES[test.outcome] ?? test.outcome),
    h("td", { class: "num" }, test.input_set === null ? "–" : String(test.input_set)),
    h("td", {}, inputs(test)),
    h("td", {}, whatItDid(test)),
  );
}

export function renderHiddenTests(container, answer) {
  const heading = h("h4", { id: "hidden-tests-heading" }, "What the hidden tests did (staff only)");
  const why = h(
    "p",
    { class: "facts" },
    "The student's report says passed or failed for each hidden test, never more: what a submission is told, it could send out.",
  );
  if (!answer.hidden) {
    container.replaceChildren(
      heading,
      why,
      h("p", { class: "placeholder" }, "Nothing kept for this submission: it was graded before this was recorded, or the grader failed. A regrade records it."),
    );
    return;
  }
  const columns = ["Test", "Result", "Input set", "Inputs", "What it did"];
  container.replaceChildren(
    heading,
    why,
    h(
      "div",
      { class: "table-scroll" },
      h(
        "table",
        { class: "data", id: "hidden-tests-table" },
        h("caption", {}, "Each hidden test, on the input set drawn for this submission"),
        h("thead", {}, h("tr", {}, columns.map((name) => h("th", { scope: "col" }, name)))),
        h("tbody", {}, answer.hidden.tests.map(row)),
      ),
    ),
  );
}
