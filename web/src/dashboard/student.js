// One student (GET .../students/<id>): the best and latest score per exercise and the attempts,
// with a regrade of their submissions of each; then every submission, newest first (filtered by
// exercise); opening one shows its code, read-only and highlighted, with its report beside it
// (GET /v1/submissions/<id>, which shows staff the code), and under them what its hidden tests
// did (GET .../submissions/<id>/hidden-tests, staff only).
import { h } from "../dom.js";
import { createViewer } from "../editor.js";
import { renderMessage, renderReport } from "../report.js";
import { count, score, when } from "./format.js";
import { renderHiddenTests } from "./hidden.js";
import { describeRegrade, followRegrade } from "./regrade.js";
import { scrollBox } from "./scroll_box.js";

function table(id, caption, columns, rows) {
  return h(
    "table",
    { class: "data", id },
    h("caption", {}, caption),
    h("thead", {}, h("tr", {}, columns.map((name) => h("th", { scope: "col" }, name)))),
    h("tbody", {}, rows),
  );
}

// A regrade of this student's submissions of one exercise, followed on `line`; once done, the
// view is drawn again with the new scores.
function regradeButton(api, student, exercise, line, onChanged) {
  const button = h("button", { type: "button", class: "link" }, "Regrade");
  button.addEventListener("click", async () => {
    button.disabled = true;
    const show = (regrade) => {
      line.textContent = `${exercise}: ${describeRegrade(regrade)}`;
    };
    try {
      const regrade = await api.startRegrade(exercise, student.student_id);
      const last = await followRegrade(api, regrade, show, () => line.isConnected);
      if (last.status === "done" && line.isConnected) onChanged(line.textContent);
    } catch (error) {
      line.textContent = `Could not regrade ${exercise}: ${error.message}`;
    }
    button.disabled = false;
  });
  return button;
}

function exercisesTable(api, student, line, onChanged) {
  const rows = student.exercises.map((one) =>
    h(
      "tr",
      { "data-exercise": one.exercise },
      h("th", { scope: "row" }, one.title),
      h("td", { class: "num" }, score(one.best, one.max_score)),
      h("td", { class: "num" }, score(one.latest, one.max_score)),
      h("td", {}, one.gradebook),
      h("td", { class: "num" }, count(one.attempts)),
      h("td", { class: one.passed ? "passed" : "" }, one.passed ? "yes" : "no"),
      h("td", {}, regradeButton(api, student, one.exercise, line, onChanged)),
    ),
  );
  const columns = ["Exercise", "Best", "Latest", "Gradebook takes", "Attempts", "Passed", "Their submissions"];
  return scrollBox(table("student-exercises", "Scores per exercise", columns, rows));
}

function verdict(summary) {
  return summary.status === "done" ? `${summary.result}, ${score(summary.score, summary.max_score)}` : summary.status;
}

export async function renderStudent(container, api, studentId, onChanged) {
  const student = await api.student(studentId);
  const regradeLine = h("p", { id: "student-regrade-status", class: "status", role: "status" });
  const code = h("div", { id: "submission-code", class: "editor viewer" });
  const report = h("div", { id: "submission-report", tabindex: "-1" });
  const heading = h("h3", { id: "submission-heading" }, "Choose a submission above");
  const hidden = h("section", { id: "hidden-tests", "aria-labelledby": "hidden-tests-heading" });
  const section = h("section", { class: "submission", "aria-labelledby": "submission-heading" }, heading, h("div", { class: "code-and-report" }, code, h("div", { class: "report" }, report)), hidden);
  let viewer = null;
  renderMessage(report, "Its report appears here.");

  async function open(summary, row) {
    for (const other of rows) other.removeAttribute("aria-current");
    row.setAttribute("aria-current", "true");
    heading.textContent = `${summary.exercise}, ${when(summary.created_at)}: ${verdict(summary)}`;
    hidden.replaceChildren();
    try {
      const [submission, hiddenTests] = await Promise.all([api.submission(summary.id), api.hiddenTests(summary.id)]);
      viewer?.destroy();
      viewer = createViewer(code, { source: submission.source ?? "", label: `Code of ${summary.exercise}, read-only` });
      if (submission.report) renderReport(report, submission.report);
      else renderMessage(report, `Not graded yet (${submission.status}).`);
      renderHiddenTests(hidden, hiddenTests);
      // The code and report come into view (the editor measures its lines once it is seen).
      section.scrollIntoView({ block: "start" });
    } catch (error) {
      renderMessage(report, `Could not load that submission: ${error.message}`);
    }
  }

  const rows = student.submissions.map((summary) => {
    const button = h("button", { type: "button", class: "link" }, when(summary.created_at));
    const row = h(
      "tr",
      { "data-exercise": summary.exercise, "data-submission": summary.id },
      h("td", {}, button),
      h("td", {}, summary.exercise),
      h("td", { class: summary.result === "passed" ? "passed" : "" }, verdict(summary)),
    );
    button.addEventListener("click", () => open(summary, row));
    return row;
  });

  const exercises = [...new Set(student.submissions.map((summary) => summary.exercise))].sort();
  const filter = h("select", { id: "submission-filter" }, h("option", { value: "" }, "every exercise"), exercises.map((slug) => h("option", { value: slug }, slug)));
  filter.addEventListener("change", () => {
    for (const row of rows) row.hidden = Boolean(filter.value) && row.dataset.exercise !== filter.value;
  });

  container.replaceChildren(
    h("h2", {}, "Student ", h("code", {}, student.student_id)),
    exercisesTable(api, student, regradeLine, onChanged),
    regradeLine,
    h("h3", { id: "submissions-heading" }, `Submissions (${count(student.submissions.length)}), newest first`),
    h("p", { class: "toolbar" }, h("label", { for: "submission-filter" }, "Show"), filter),
    h("div", { class: "submissions-box" }, table("student-submissions", "Open one for its code and report", ["Submitted", "Exercise", "Result"], rows)),
    section,
  );
  return student;
}
