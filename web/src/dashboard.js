// The course dashboard: who the page works as (an LMS launch as staff, a key, or the open
// service), which view the address names (?view=exercises&exercise=…, ?view=students&student=…
// or ?view=concepts), and each view drawn by its module from one call to the staff API.
import { h } from "./dom.js";
import * as staff from "./dashboard/api.js";
import { destroyCharts } from "./dashboard/charts.js";
import { renderConcepts } from "./dashboard/concepts.js";
import { renderCourse } from "./dashboard/course.js";
import { download } from "./dashboard/download.js";
import { renderExercise } from "./dashboard/exercise.js";
import { renderStudent } from "./dashboard/student.js";
import { renderStudents } from "./dashboard/students.js";
import "./dashboard.css";

const data = JSON.parse(document.getElementById("dashboard-data").textContent);
const api = staff.courseApi(data.course);
const view = document.getElementById("view");
const signInForm = document.getElementById("sign-in");
const who = document.getElementById("who");

function place() {
  const query = new URLSearchParams(window.location.search);
  return { view: query.get("view") || "exercises", exercise: query.get("exercise"), student: query.get("student") };
}

function go(next) {
  const query = new URLSearchParams(Object.entries(next).filter(([, value]) => value));
  window.history.pushState(null, "", `?${query}`);
  show();
}

function say(text) {
  document.getElementById("dash-status")?.replaceChildren(text);
}

async function showExercises(where) {
  const course = h("div", { id: "course" });
  const detail = h("div", { id: "exercise", class: "exercise-detail" });
  view.replaceChildren(course, detail);
  const listed = renderCourse(course, api, (slug) => go({ view: "exercises", exercise: slug }));
  // The exercise the address names is fetched alongside the list; else the first one tried.
  const chosen = where.exercise || (await listed).find((one) => one.submissions)?.exercise;
  if (!chosen) return;
  const redraw = (message) => {
    destroyCharts();
    renderExercise(detail, api, chosen, redraw).then(() => say(message), failed);
  };
  await Promise.all([listed, renderExercise(detail, api, chosen, redraw)]);
  course.querySelector(`tr[data-exercise="${CSS.escape(chosen)}"]`)?.setAttribute("aria-current", "true");
}

const VIEWS = {
  exercises: showExercises,
  students: (where) =>
    where.student
      ? renderStudent(view, api, where.student, (message) => show().then(() => say(message)))
      : renderStudents(
          view,
          api,
          (student) => go({ view: "students", student }),
          (message) => show().then(() => say(message)),
        ),
  concepts: () => renderConcepts(view, api),
};

function markNavigation(current) {
  for (const link of document.querySelectorAll(".dash-nav a")) {
    if (link.dataset.view === current) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
}

function askToSignIn(reason) {
  signInForm.hidden = false;
  document.getElementById("sign-in-error").textContent = reason || "";
  view.replaceChildren();
  view.setAttribute("aria-busy", "false");
  document.body.dataset.ready = "true";
}

function failed(error) {
  if (staff.needsSignIn(error)) {
    staff.signOut();
    askToSignIn(`Not signed in as staff of ${data.course}: ${error.message}`);
    return;
  }
  view.replaceChildren(h("p", { class: "notice", role: "alert" }, `Could not load the figures: ${error.message}`));
}

async function show() {
  if (data.keysRequired && !staff.hasCredential()) {
    askToSignIn();
    return;
  }
  signInForm.hidden = true;
  say("");
  const where = place();
  markNavigation(where.view);
  destroyCharts();
  view.setAttribute("aria-busy", "true");
  document.body.dataset.ready = "false";
  try {
    await (VIEWS[where.view] || VIEWS.exercises)(where);
  } catch (error) {
    failed(error);
  }
  view.setAttribute("aria-busy", "false");
  document.body.dataset.ready = "true";
}

signInForm.addEventListener("submit", (event) => {
  event.preventDefault();
  staff.signIn(document.getElementById("api-key").value);
  show();
});

for (const link of document.querySelectorAll(".dash-nav a")) {
  link.addEventListener("click", (event) => {
    event.preventDefault();
    go({ view: link.dataset.view });
  });
}

document.getElementById("gradebook").addEventListener("click", () => {
  api.gradebook().then((response) => download(response, `${data.course}-gradebook.csv`), failed);
});

if (staff.launchedAsStaff()) {
  who.textContent = "Signed in from your course's learning platform.";
  who.hidden = false;
}
window.addEventListener("popstate", show);
show();
