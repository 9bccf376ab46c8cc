// One exercise's figures, from one call (GET .../exercises/<slug>/stats): who tried and passed,
// the scores, each test's pass rate, the misconceptions among failing students (and the wrong
// answers no known mistake explains), the properties, attempts until the first pass, and all
// of it day by day. Then what staff do about it: export, regrade, policy.
import { h } from "../dom.js";
import { barChart, dataTable, drawCharts, lineChart } from "./charts.js";
import { clustersSection } from "./clusters.js";
import { download } from "./download.js";
import { count, percent, shareOf } from "./format.js";
import { policyForm } from "./policy.js";
import { regradePanel } from "./regrade.js";

function keyFigures(stats) {
  const median = stats.attempts_to_pass.median;
  const passedShare = stats.students ? stats.passed_students / stats.students : null;
  const figures = [
    ["Submissions", count(stats.submissions)],
    ["Students", count(stats.students)],
    ["Passed", [count(stats.passed_students), h("small", {}, ` (${percent(passedShare)})`)]],
    ["Median attempts to pass", median === null ? "–" : String(median)],
    ["Outdated submissions", count(stats.outdated_submissions)],
  ];
  return h("dl", { class: "key-figures" }, figures.map(([term, value]) => h("div", {}, h("dt", {}, term), h("dd", {}, value))));
}

function histogram(stats) {
  const bins = stats.score_histogram;
  const labels = bins.map((bin) => `${Math.round(bin.low * 100)}–${Math.round(bin.high * 100)}%`);
  return barChart({
    id: "score-histogram",
    title: "Score distribution",
    summary: `Each student's ${stats.gradebook} score, as a share of the maximum: how many students in each tenth.`,
    labels,
    values: bins.map((bin) => bin.students),
    format: (value) => count(value),
    axis: "students",
  });
}

function testPassRates(stats) {
  return barChart({
    id: "test-pass-rates",
    title: "Pass rate of each test",
    summary: "The share of submissions that passed each test; hidden tests are marked.",
    labels: stats.tests.map((test) => (test.visibility === "hidden" ? `${test.name} (hidden)` : test.name)),
    values: stats.tests.map((test) => test.pass_rate ?? 0),
    format: (_value, i) => `${percent(stats.tests[i].pass_rate)} of ${count(stats.tests[i].submissions)}`,
    axis: "share of submissions passed",
    horizontal: true,
    max: 1,
  });
}

function misconceptions(stats) {
  const m = stats.misconceptions;
  const section = h("section", { class: "figure", id: "misconceptions" }, h("h3", {}, "Misconceptions of failing students"));
  if (!m.failing_students) {
    section.append(h("p", { class: "placeholder" }, "No student has a failing submission."));
    return section;
  }
  const known = [...m.known].sort((a, b) => b.students - a.students);
  section.append(
    h("p", { class: "facts" }, `${count(m.failing_students)} students have a submission that ran and gave a wrong answer (${count(m.failing_submissions)} submissions). A student may show several mistakes.`),
    h(
      "ul",
      { class: "sentences" },
      known.map((one) => h("li", {}, h("strong", {}, shareOf(one.students, m.failing_students, "failing students")), ": ", one.message, " ", h("code", {}, one.code))),
      h("li", { class: "unrecognised" }, h("strong", {}, shareOf(m.unrecognised.students, m.failing_students, "failing students")), `: a wrong answer that matched no known mistake (${count(m.unrecognised.submissions)} submissions): the mistakes to add next.`),
    ),
    barChart({
      id: "misconception-shares",
      title: "Share of failing students per mistake",
      summary: "The same shares as the sentences above; the last bar is the wrong answers no known mistake explains.",
      labels: [...known.map((one) => one.code), "matched no known mistake"],
      values: [...known.map((one) => one.share), m.unrecognised.share],
      format: (value) => percent(value),
      axis: "share of failing students",
      horizontal: true,
      max: 1,
    }),
  );
  return section;
}

function properties(stats) {
  const section = h("section", { class: "figure", id: "properties" }, h("h3", {}, "Property failures"));
  if (!stats.properties.length) {
    section.append(h("p", { class: "placeholder" }, "This exercise checks no property."));
    return section;
  }
  const rows = stats.properties.map((p) => [p.name.replaceAll("_", " "), count(p.checked), count(p.failed), percent(p.checked ? p.failed / p.checked : null), count(p.failed_students)]);
  section.append(dataTable("Properties checked on submissions", ["Property", "Checked", "Failed", "Failed share", "Students failing"], rows));
  return section;
}

function attemptsToPass(stats) {
  const a = stats.attempts_to_pass;
  return barChart({
    id: "attempts-to-pass",
    title: "Attempts until the first pass",
    summary: `How many submissions each student needed to pass (median ${a.median ?? "–"}); ${count(a.never_passed)} students have not passed yet.`,
    labels: a.histogram.map((bin) => String(bin.attempts)),
    values: a.histogram.map((bin) => bin.students),
    format: (value) => count(value),
    axis: "students",
  });
}

function timeline(stats) {
  const days = stats.timeline;
  return lineChart({
    id: "timeline",
    title: "Over time",
    summary: "Per day: submissions and students who submitted (left axis), and the mean score of the day's submissions (right axis).",
    labels: days.map((day) => day.day),
    series: [
      { label: "submissions", axis: "count", values: days.map((d) => d.submissions), format: count },
      { label: "students", axis: "count", values: days.map((d) => d.students), format: count },
      { label: "mean score", axis: "share", values: days.map((d) => d.mean_score), format: percent },
    ],
  });
}

function exportButton(api, slug) {
  const button = h("button", { type: "button", id: "export" }, "Download every submission (zip)");
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      await download(await api.exportZip(slug), `${slug}.zip`);
    } finally {
      button.disabled = false;
    }
  });
  return button;
}

export async function renderExercise(container, api, slug, onChanged) {
  const stats = await api.stats(slug);
  container.replaceChildren(
    h("h2", {}, stats.title, " ", h("code", { class: "slug" }, stats.exercise)),
    h("p", { class: "facts" }, `Version ${stats.version} · the gradebook takes each student's ${stats.gradebook} score`),
    keyFigures(stats),
    h(
      "div",
      { class: "staff-actions" },
      regradePanel(api, stats, onChanged),
      h("section", { class: "panel" }, h("h3", {}, "Export"), h("p", { class: "facts" }, "Every submission's code and report, for your own review."), exportButton(api, slug)),
      policyForm(api, slug, onChanged),
    ),
    h("div", { class: "figures" }, histogram(stats), attemptsToPass(stats), testPassRates(stats), misconceptions(stats), clustersSection(api, slug, onChanged), properties(stats), timeline(stats)),
  );
  drawCharts();
  return stats;
}
