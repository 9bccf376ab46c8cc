// Every student of the course (GET .../students, one call for all of them: those enrolled in the
// LMS roster who submitted nothing included), in pages of PAGE_SIZE rows filtered and paged in
// the browser: a thousand students never make a thousand requests, nor a thousand rows in the
// page at once. The roster's panel (roster.js) sits above.
import { h } from "../dom.js";
import { count, percent } from "./format.js";
import { rosterPanel } from "./roster.js";
import { scrollBox } from "./scroll_box.js";

const PAGE_SIZE = 25;

// Column headings short enough for a tablet: each slug's initials (multi-headed-self-attention:
// MHSA), numbered where two would be alike, spelled out in the legend and the abbreviation.
function abbreviations(slugs) {
  const seen = new Map();
  return slugs.map((slug) => {
    const initials = slug.split("-").map((word) => word[0].toUpperCase()).join("");
    const n = (seen.get(initials) || 0) + 1;
    seen.set(initials, n);
    return n === 1 ? initials : `${initials}${n}`;
  });
}

function cell(entry) {
  if (!entry || !entry.attempts) return h("td", { class: "num muted" }, "–");
  const share = entry.max_score ? entry.best / entry.max_score : null;
  const text = `${percent(share)}${entry.passed ? " ✓" : ""}`;
  const label = `best ${percent(share)}, latest ${percent(entry.max_score ? entry.latest / entry.max_score : null)}, ${entry.attempts} attempts${entry.passed ? ", passed" : ""}`;
  return h("td", { class: `num ${entry.passed ? "passed" : ""}`, title: label }, h("span", { "aria-hidden": "true" }, text), h("span", { class: "visually-hidden" }, label));
}

function summary(student, slugs) {
  const entries = slugs.map((slug) => student.exercises[slug]).filter(Boolean);
  return {
    passed: entries.filter((entry) => entry.passed).length,
    attempts: entries.reduce((sum, entry) => sum + entry.attempts, 0),
  };
}

export async function renderStudents(container, api, onOpen, onRosterRead) {
  const data = await api.students();
  const slugs = data.exercises;
  const byId = (a, b) => a.student_id.localeCompare(b.student_id);
  const all = data.students.map((student) => ({ ...student, ...summary(student, slugs) })).sort(byId);
  // Orders of the table: who to help first is who passed least, or tried most.
  const ORDERS = {
    id: byId,
    passed: (a, b) => a.passed - b.passed || byId(a, b),
    attempts: (a, b) => b.attempts - a.attempts || byId(a, b),
  };
  let page = 0;
  let shown = all;

  const filter = h("input", { id: "student-filter", type: "search", autocomplete: "off", spellcheck: "false" });
  const body = h("tbody");
  const position = h("p", { id: "students-page", class: "facts", role: "status" });
  const previous = h("button", { type: "button", id: "previous-page" }, "Previous");
  const next = h("button", { type: "button", id: "next-page" }, "Next");

  function row(student) {
    const { passed, attempts } = student;
    const open = h("button", { type: "button", class: "link" }, student.student_id);
    open.addEventListener("click", () => onOpen(student.student_id));
    const name = student.name ? h("span", { class: "student-name" }, ` ${student.name}`) : null;
    const progress = attempts ? `${passed} of ${slugs.length}` : "not submitted";
    return h(
      "tr",
      { "data-student": student.student_id, class: attempts ? "" : "not-submitted" },
      h("th", { scope: "row" }, open, name),
      h("td", { class: "num" }, progress),
      h("td", { class: "num" }, count(attempts)),
      slugs.map((slug) => cell(student.exercises[slug])),
    );
  }

  function draw() {
    const pages = Math.max(1, Math.ceil(shown.length / PAGE_SIZE));
    page = Math.min(page, pages - 1);
    body.replaceChildren(...shown.slice(page * PAGE_SIZE, (page + 1) * PAGE_SIZE).map(row));
    position.textContent = `${count(shown.length)} students · page ${page + 1} of ${pages}`;
    previous.disabled = page === 0;
    next.disabled = page >= pages - 1;
  }

  const order = h(
    "select",
    { id: "student-order" },
    h("option", { value: "id" }, "by id"),
    h("option", { value: "passed" }, "fewest exercises passed first"),
    h("option", { value: "attempts" }, "most attempts first"),
  );
  function refilter() {
    const needle = filter.value.trim().toLowerCase();
    const matches = (student) => `${student.student_id} ${student.name || ""}`.toLowerCase().includes(needle);
    shown = needle ? all.filter(matches) : [...all];
    shown.sort(ORDERS[order.value]);
    page = 0;
    draw();
  }
  filter.addEventListener("input", refilter);
  order.addEventListener("change", refilter);
  previous.addEventListener("click", () => {
    page -= 1;
    draw();
  });
  next.addEventListener("click", () => {
    page += 1;
    draw();
  });

  const short = abbreviations(slugs);
  const heading = (slug, i) => h("abbr", { title: slug }, short[i]);
  const columns = ["Student", "Passed", "Attempts", ...slugs.map(heading)];
  container.replaceChildren(
    h("h2", {}, "Students"),
    rosterPanel(api, onRosterRead),
    h("p", { class: "toolbar" }, h("label", { for: "student-filter" }, "Find a student"), filter, h("label", { for: "student-order" }, "Order"), order),
    h("p", { class: "facts" }, "Per exercise: the best score as a share of the maximum, ✓ once passed; a cell's tooltip has the latest score and the attempts. Students of the LMS roster who submitted nothing say so. Open a student for their code."),
    h("ul", { class: "legend", "aria-label": "Exercises" }, slugs.map((slug, i) => h("li", {}, heading(slug, i), ` ${slug}`))),
    scrollBox(
      h(
        "table",
        { class: "data students", id: "students" },
        h("caption", {}, "Students of the course"),
        h("thead", {}, h("tr", {}, columns.map((name, i) => h("th", { scope: "col", class: i ? "num" : "" }, name)))),
        body,
      ),
    ),
    h("div", { class: "pager" }, previous, position, next),
  );
  draw();
  return data;
}
