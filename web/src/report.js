// The report, rendered for people: the verdict, the diagnosis in words, a row per test (hidden
// tests as pass/fail only), and for a wrong output the expected and actual values side by side.
// Built with DOM nodes, never innerHTML: messages and printed output are the student's text.
import { h } from "./dom.js";

const VERDICTS = {
  passed: "All tests passed",
  failed: "Some tests failed",
  // The message says when (before or while it ran) and why, each reason with its line.
  rejected: "Your submission was refused",
  error: "The grader failed on this submission (not your fault): please submit again",
};

const TEST_STATUS = {
  passed: "passed",
  failed: "wrong output",
  error: "error",
  timeout: "timed out",
  resource_limit: "over a resource limit",
  rejected: "refused",
};

// Messages quote code between backticks, as markdown does: shown as code, still as text nodes.
function prose(text) {
  return text.split("`").map((part, i) => (i % 2 ? h("code", {}, part) : part));
}

function number(x) {
  return String(Number.parseFloat(x.toPrecision(6)));
}

export function points(score, max) {
  return `${number(score)} / ${number(max)}`;
}

// A graded submission in a few words, as the history and the status line say it; the report
// below says the rest.
const OUTCOMES = { rejected: "refused", error: "grader error" };
export function outcome(result, score, max) {
  return `${OUTCOMES[result] ?? result}, ${points(score, max)}`;
}

// The message already says how many values differ and by how much: the table adds only where.
function mismatch(test) {
  const first = test.first_mismatch;
  if (!first) return null;
  return h(
    "div",
    { class: "mismatch" },
    h(
      "table",
      { class: "compare" },
      h("caption", {}, `First mismatch, at index [${first.index.join(", ")}]`),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Expected"), h("th", { scope: "col" }, "Your output"))),
      h("tbody", {}, h("tr", {}, h("td", {}, number(first.expected)), h("td", {}, number(first.actual)))),
    ),
  );
}

// A visible test's code, to run it at home as the grader does: copied by a button, and shown on
// request where the browser gives the page no clipboard (a page served over plain http).
function reproduce(test) {
  if (!test.reproduce) return null;
  const said = h("span", { class: "copied", role: "status" });
  const code = h("details", { class: "code" }, h("summary", {}, "Show the code"), h("pre", {}, test.reproduce));
  const button = h(
    "button",
    { type: "button", class: "copy", "aria-label": `Copy code to reproduce the test ${test.name}` },
    "Copy code to reproduce",
  );
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(test.reproduce);
      said.textContent = "Copied: save your code as solution.py beside it and run it.";
    } catch {
      code.open = true;
      said.textContent = "This browser gave no clipboard: copy the code below.";
    }
  });
  return h("div", { class: "reproduce" }, button, said, code);
}

function details(test) {
  if (test.visibility === "hidden") {
    return h("td", { "data-label": "Details" }, "hidden test: pass or fail only");
  }
  return h(
    "td",
    { "data-label": "Details" },
    h("p", { class: "message" }, ...prose(test.message)),
    mismatch(test),
    test.stdout
      ? h("details", { class: "stdout" }, h("summary", {}, "Printed output"), h("pre", {}, test.stdout))
      : null,
    reproduce(test),
  );
}

function row(test) {
  const hidden = test.visibility === "hidden";
  const passed = test.status === "passed";
  // A hidden test that failed says no more than that; a refused one is refused, as everywhere.
  const label = hidden && test.status === "failed" ? "failed" : TEST_STATUS[test.status] || test.status;
  return h(
    "tr",
    { class: passed ? "passed" : "failed" },
    h("th", { scope: "row", "data-label": "Test" }, test.name, hidden ? h("span", { class: "tag" }, "hidden") : null),
    h("td", { "data-label": "Result" }, h("span", { class: `badge ${passed ? "ok" : "bad"}` }, label)),
    h("td", { "data-label": "Points", class: "num" }, points(test.score, test.max_score)),
    details(test),
  );
}

function diagnosis(findings) {
  if (!findings.length) return null;
  return h(
    "section",
    { class: "diagnosis", "aria-label": "Diagnosis" },
    h("h3", {}, "What went wrong, most likely"),
    h(
      "ul",
      {},
      ...findings.map((finding) =>
        h(
          "li",
          {},
          h("p", {}, finding.line ? `line ${finding.line}: ` : "", ...prose(finding.message)),
          finding.tests.length ? h("p", { class: "facts" }, `Seen in: ${finding.tests.join("; ")}`) : null,
        ),
      ),
    ),
  );
}

function properties(checks) {
  if (!checks.length) return null;
  return h(
    "section",
    { class: "properties", "aria-label": "Properties" },
    h("h3", {}, "Properties checked"),
    h("ul", {}, ...checks.map((check) => h("li", {}, h("strong", {}, check.name.replaceAll("_", " ")), `: ${check.status}, ${check.message}`))),
  );
}

export function renderReport(container, report) {
  const passed = report.status === "passed";
  container.replaceChildren(
    // Sections a report lacks (no diagnosis, no properties) are left out, not printed "null".
    ...[
      h(
        "div",
        { class: `verdict ${passed ? "ok" : "bad"}` },
        h("p", { class: "headline" }, VERDICTS[report.status] || report.status),
        report.message ? h("p", { class: "message" }, ...prose(report.message)) : null,
      ),
      // A refusal's findings are its message's reasons, kept in the report for the editor's marks.
      diagnosis(report.status === "rejected" ? [] : report.diagnosis),
      report.tests.length
        ? h(
            "table",
            { class: "tests" },
            h("caption", {}, "Tests"),
            h(
              "thead",
              {},
              h("tr", {}, ...["Test", "Result", "Points", "Details"].map((name) => h("th", { scope: "col" }, name))),
            ),
            h("tbody", {}, ...report.tests.map(row)),
          )
        : null,
      properties(report.properties),
    ].filter((node) => node !== null),
  );
}

export function renderMessage(container, text) {
  container.replaceChildren(h("p", { class: "placeholder" }, text));
}

export function renderHistory(list, items, onOpen) {
  if (!items.length) {
    list.replaceChildren(h("li", { class: "placeholder" }, "No submissions yet."));
    return;
  }
  list.replaceChildren(
    ...items.map((item) => {
      const when = new Date(item.created_at).toLocaleString();
      const verdict =
        item.status === "done" ? outcome(item.result, item.score, item.max_score) : item.status;
      const button = h("button", { type: "button", class: "link" }, `${when}: ${verdict}`);
      button.addEventListener("click", () => onOpen(item.id));
      return h("li", { class: item.result === "passed" ? "passed" : "failed" }, button);
    }),
  );
}
