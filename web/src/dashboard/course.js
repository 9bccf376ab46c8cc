// The course at a glance (GET .../exercises): one row per exercise of the catalog, each opening
// that exercise's figures.
import { h } from "../dom.js";
import { count, percent } from "./format.js";
import { scrollBox } from "./scroll_box.js";

// A draft (not proven at its version) is the staff's alone: said, with why and what publishes it.
function draftTag(reason) {
  return reason ? h("span", { class: "draft" }, `Draft, students do not see it: ${reason}`) : null;
}

export async function renderCourse(container, api, onOpen) {
  const { exercises } = await api.exercises();
  const rows = exercises.map((one) => {
    const open = h("a", { href: `?${new URLSearchParams({ view: "exercises", exercise: one.exercise })}` }, one.title);
    open.addEventListener("click", (event) => {
      event.preventDefault();
      onOpen(one.exercise);
    });
    const passed = one.students ? one.passed_students / one.students : null;
    return h(
      "tr",
      { "data-exercise": one.exercise },
      h("th", { scope: "row" }, open, h("span", { class: "tag" }, one.exercise), draftTag(one.draft)),
      h("td", { class: "num", "data-label": "Submissions" }, count(one.submissions)),
      h("td", { class: "num", "data-label": "Students" }, count(one.students)),
      h("td", { class: "num", "data-label": "Passed" }, `${count(one.passed_students)} (${percent(passed)})`),
      h("td", { class: "num", "data-label": "Mean score" }, percent(one.mean_score)),
      h("td", { class: "num", "data-label": "Outdated" }, count(one.outdated_submissions)),
    );
  });
  const columns = ["Exercise", "Submissions", "Students", "Passed", "Mean score", "Outdated"];
  container.replaceChildren(
    h("h2", {}, "Exercises"),
    scrollBox(
      h(
        "table",
        { class: "data overview", id: "exercises" },
        h("caption", {}, "Every exercise of the course: open one for its figures"),
        h("thead", {}, h("tr", {}, columns.map((name, i) => h("th", { scope: "col", class: i ? "num" : "" }, name)))),
        h("tbody", {}, rows),
      ),
    ),
  );
  return exercises;
}
