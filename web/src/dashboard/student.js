// One student (GET .../students/<id>): the best and latest score per exercise and the attempts,
// then every submission, newest first; opening one shows its code, read-only and highlighted,
// with its report beside it (GET /v1/submissions/<id>, which shows staff the code).
import { h } from "../dom.js";
import { createViewer } from "../editor.js";
import { renderMessage, renderReport } from "../report.js";
import { count, score, when } from "./format.js";

function exercisesTable(student) {
  const columns = ["Exercise", "Best", "Latest", "Gradebook takes", "Attempts", "Passed"];
  return h(
    "table",
    { class: "data", id: "student-exercises" },
    h("caption", {}, "Scores per exercise"),
    h("thead", {}, h("tr", {}, columns.map((name) => h("th", { scope: "col" }, name)))),
    h(
      "tbody",
      {},
      student.exercises.map((one) =>
        h(
          "tr",
          { "data-exercise": one.exercise },
          h("th", { scope: "row" }, one.title),
          h("td", { class: "num" }, score(one.best, one.max_score)),
          h("td", { class: "num" }, score(one.latest, one.max_score)),
          h("td", {}, one.gradebook),
          h("td", { class: "num" }, count(one.attempts)),
          h("td", {}, one.passed ? "yes" : "no"),
        ),
      ),
    ),
  );
}

export async function renderStudent(container, api, studentId) {
  const student = await api.student(studentId);
  const code = h("div", { id: "submission-code", class: "editor viewer" });
  const report = h("div", { id: "submission-report", tabindex: "-1" });
  const heading = h("h3", { id: "submission-heading" }, "Choose a submission");
  let viewer = null;
  renderMessage(report, "Its report appears here.");

  async function open(summary, button) {
    for (const other of list.querySelectorAll("[aria-current]")) other.removeAttribute("aria-current");
    button.setAttribute("aria-current", "true");
    heading.textContent = `${summary.exercise}, ${when(summary.created_at)}`;
    try {
      const submission = await api.submission(summary.id);
      viewer?.destroy();
      viewer = createViewer(code, { source: submission.source ?? "", label: `Code of ${summary.exercise}, read-only` });
      if (submission.report) renderReport(report, submission.report);
      else renderMessage(report, `Not graded yet (${submission.status}).`);
    } catch (error) {
      renderMessage(report, `Could not load that submission: ${error.message}`);
    }
  }

  const list = h(
    "ol",
    { class: "history-list submissions", id: "student-submissions" },
    student.submissions.map((summary) => {
      const verdict = summary.status === "done" ? `${summary.result}, ${score(summary.score, summary.max_score)}` : summary.status;
      const button = h("button", { type: "button", class: "link" }, `${summary.exercise} · ${when(summary.created_at)}: ${verdict}`);
      button.addEventListener("click", () => open(summary, button));
      return h("li", { class: summary.result === "passed" ? "passed" : "failed" }, button);
    }),
  );

  container.replaceChildren(
    h("h2", {}, "Student ", h("code", {}, student.student_id)),
    exercisesTable(student),
    h(
      "div",
      { class: "student-work" },
      h("section", { class: "submissions-column", "aria-labelledby": "submissions-heading" }, h("h3", { id: "submissions-heading" }, `Submissions (${count(student.submissions.length)}), newest first`), list),
      h("section", { class: "submission", "aria-labelledby": "submission-heading" }, heading, h("div", { class: "code-and-report" }, code, h("div", { class: "report" }, report))),
    ),
  );
  return student;
}
