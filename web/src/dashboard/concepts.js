// The course's concepts (GET .../concepts): per knowledge component (scaling, masking, ...), the
// students who still hold a mistake about it across exercises, week by week and now, and where
// (which exercises) they hold it. Then the same figures to download, as CSV and JSON.
import { h } from "../dom.js";
import { SERIES_COUNT, barChart, drawCharts, lineChart } from "./charts.js";
import { download } from "./download.js";
import { count, shareOf } from "./format.js";
import { scrollBox } from "./scroll_box.js";

// The tag as a reader says it: "head-split-merge" → "head split merge".
const spoken = (concept) => concept.replaceAll("-", " ");

function held(figures) {
  return figures.concepts.filter((one) => one.weekly.some((students) => students > 0));
}

function curves(figures, concepts) {
  // The concepts held by most students at their worst week: a chart reads up to a few lines.
  const shown = [...concepts].sort((a, b) => Math.max(...b.weekly) - Math.max(...a.weekly)).slice(0, SERIES_COUNT);
  return lineChart({
    id: "concept-curves",
    title: "Students who still hold a mistake, week by week",
    summary: `Per concept (the ${shown.length} most held), the students whose latest submission to some exercise, as of each week's end, shows a mistake about it; the last week is counted as of now.`,
    labels: figures.weeks.map((week) => `week of ${week.start}`),
    series: shown.map((one) => ({ label: spoken(one.concept), axis: "count", values: one.weekly, format: count })),
  });
}

function now(figures, concepts) {
  const current = concepts.filter((one) => one.students > 0);
  return barChart({
    id: "concepts-now",
    title: "Now",
    summary: `Per concept, the students who hold a mistake about it now, of the ${count(figures.students)} students with a graded answer.`,
    labels: current.map((one) => spoken(one.concept)),
    values: current.map((one) => one.students),
    format: (value) => count(value),
    axis: "students",
    horizontal: true,
  });
}

function whereHeld(figures, concepts) {
  const byExercise = (one) =>
    Object.entries(one.exercises)
      .map(([slug, students]) => `${slug}: ${count(students)}`)
      .join(", ") || "–";
  const rows = concepts.map((one) =>
    h(
      "tr",
      { "data-concept": one.concept },
      h("th", { scope: "row" }, spoken(one.concept)),
      h("td", {}, one.description),
      h("td", { class: "num" }, shareOf(one.students, figures.students, "students")),
      h("td", {}, byExercise(one)),
    ),
  );
  const columns = ["Concept", "What it is", "Students now", "By exercise"];
  return h(
    "section",
    { class: "figure wide", id: "concept-exercises" },
    h("h3", {}, "Where they hold it"),
    scrollBox(
      h(
        "table",
        { class: "data" },
        h("caption", {}, "Per concept, the students who hold it now, and in which exercises"),
        h("thead", {}, h("tr", {}, columns.map((name, i) => h("th", { scope: "col", class: i === 2 ? "num" : "" }, name)))),
        h("tbody", {}, rows),
      ),
    ),
  );
}

function downloads(api, course) {
  const buttons = ["csv", "json"].map((format) => {
    const button = h("button", { type: "button", id: `concepts-${format}` }, `Download (${format.toUpperCase()})`);
    button.addEventListener("click", async () => {
      button.disabled = true;
      try {
        await download(await api.conceptsFile(format), `${course}-concepts.${format}`);
      } finally {
        button.disabled = false;
      }
    });
    return button;
  });
  return h("p", { class: "downloads" }, buttons);
}

export async function renderConcepts(container, api) {
  const figures = await api.concepts();
  const concepts = held(figures);
  const intro = h("p", { class: "facts" }, "Each diagnosis is about one or more concepts shared across exercises. A student holds a concept's mistake while their latest submission to some exercise shows it; a later fix lets go of it.");
  if (!concepts.length) {
    container.replaceChildren(h("h2", {}, "Concepts"), intro, h("p", { class: "placeholder" }, "No submission has shown a known mistake yet."));
    return figures;
  }
  container.replaceChildren(
    h("h2", {}, "Concepts"),
    intro,
    downloads(api, figures.course),
    h("div", { class: "figures" }, curves(figures, concepts), now(figures, concepts), whereHeld(figures, concepts)),
  );
  drawCharts();
  return figures;
}
