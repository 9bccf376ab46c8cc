// The wrong answers no known mistake explains, grouped by what they do (GET .../clusters): most
// students first, each group with what its outputs do, the tests it fails, the properties it
// breaks, and a few students' code beside their output and the reference's. Staff name a group
// once (POST .../mistakes): from then on it is a mistake of the course, for past and future
// submissions alike.
import { h } from "../dom.js";
import { dataTable } from "./charts.js";
import { count } from "./format.js";

const list = (items) => h("ul", {}, items.map((item) => h("li", {}, item)));

function excerpt(one) {
  const at = one.index.length ? `[${one.index.join(", ")}]` : "";
  const rows = one.expected.map((value, i) => [String(i), String(value), String(one.actual[i])]);
  return dataTable(`${one.output}${at} on “${one.test}”, from there on`, ["", "reference", "theirs"], rows);
}

function example(one) {
  return h(
    "div",
    { class: "cluster-example" },
    h("p", { class: "facts" }, one.student_id ?? "no student", " · ", h("code", {}, one.submission_id)),
    h("div", { class: "side-by-side" }, h("pre", { class: "source", tabindex: "0" }, h("code", {}, one.source)), h("div", {}, one.excerpts.map(excerpt))),
  );
}

// The newest student's code in full; the others on request.
function examples(all) {
  const [first, ...more] = all;
  if (!more.length) return first ? example(first) : null;
  return [example(first), h("details", { class: "more-examples" }, h("summary", {}, `${more.length} more students' code`), more.map(example))];
}

function field(label, input) {
  return h("p", {}, h("label", { for: input.id }, label), input);
}

function nameForm(api, slug, group, concepts, onNamed) {
  const id = (name) => `${name}-${group.key}`;
  const code = h("input", { id: id("code"), name: "code", required: "", pattern: "[a-z][a-z0-9]*(-[a-z0-9]+)*", placeholder: "heads-reversed" });
  const message = h("textarea", { id: id("message"), name: "message", required: "", rows: "2", placeholder: "What is wrong, in the student's terms" });
  const fix = h("textarea", { id: id("fix"), name: "fix", required: "", rows: "2", placeholder: "What to change" });
  const tags = Object.entries(concepts).map(([tag, meaning]) => h("label", { class: "concept", title: meaning }, h("input", { type: "checkbox", name: "concepts", value: tag }), ` ${tag}`));
  const line = h("p", { class: "status", role: "status" });
  const form = h(
    "form",
    { class: "name-mistake" },
    h("div", { class: "fields" }, field("Code", code), field("Message", message), field("Fix", fix)),
    h("fieldset", {}, h("legend", {}, "Concepts"), tags),
    h("button", { type: "submit" }, "Name this mistake"),
    line,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const chosen = [...form.querySelectorAll("input[name=concepts]:checked")].map((box) => box.value);
    if (!chosen.length) {
      line.textContent = "Pick at least one concept.";
      return;
    }
    const body = { behaviour_key: group.key, code: code.value, message: message.value, fix: fix.value, concepts: chosen };
    form.querySelector("button").disabled = true;
    try {
      const named = await api.nameMistake(slug, body);
      onNamed(`Named ${named.mistake.code}: ${count(named.rediagnosed)} past submissions now carry it.`);
    } catch (error) {
      line.textContent = `Not named: ${error.message}`;
      form.querySelector("button").disabled = false;
    }
  });
  return h("details", { class: "name-details" }, h("summary", {}, "Name this group"), form);
}

function cluster(api, slug, group, concepts, onNamed) {
  const said = [
    group.failing_tests.length ? `fails ${group.failing_tests.join("; ")}` : "fails no visible test",
    group.broken_properties.length ? `breaks ${group.broken_properties.map((p) => p.replaceAll("_", " ")).join(", ")}` : null,
  ].filter(Boolean);
  return h(
    "article",
    { class: "cluster", "data-key": group.key },
    h("h4", {}, `${count(group.students)} students`, h("small", {}, ` · ${count(group.submissions)} submissions · ${said.join(" · ")}`)),
    list(group.facts),
    examples(group.examples),
    nameForm(api, slug, group, concepts, onNamed),
  );
}

function named(mistakes) {
  if (!mistakes.length) return null;
  return h(
    "div",
    { class: "named" },
    h("h4", {}, "Named by the course"),
    list(mistakes.map((one) => [h("code", {}, one.code), `: ${one.student_message} `, h("span", { class: "tag" }, `(${one.concepts.join(", ")})`)])),
  );
}

export function clustersSection(api, slug, onNamed) {
  const section = h("section", { class: "figure", id: "clusters" }, h("h3", {}, "Wrong answers no known mistake explains, by what they do"));
  const body = h("div", {}, h("p", { class: "placeholder" }, "Reading the groups…"));
  section.append(body);
  api
    .clusters(slug)
    .then((answer) => {
      const groups = answer.clusters.map((group) => cluster(api, slug, group, answer.concepts, onNamed));
      const shown = [
        h("p", { class: "facts" }, `${count(answer.unexplained_students)} failing students have a wrong answer that no known mistake explains. Name a group once: its students, and those who make it later, get your message.`),
        ...(groups.length ? groups : [h("p", { class: "placeholder" }, "No group to name.")]),
        named(answer.named),
      ];
      body.replaceChildren(...shown.filter(Boolean));
    })
    .catch((error) => body.replaceChildren(h("p", { class: "error" }, `Could not read the groups: ${error.message}`)));
  return section;
}
