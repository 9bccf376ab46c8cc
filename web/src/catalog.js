// The list of exercises: where a student link without an exercise lands, and `/` leads. Importing
// api.js keeps the link's token for every exercise page; this script says who is signed in and
// where the student stands on each exercise (one request for them all).
import * as api from "./api.js";
import { h } from "./dom.js";
import { points } from "./report.js";
import { needsSignIn, showHowToGetIn, showStudent } from "./signin.js";
import { load, STUDENT_ID_KEY } from "./storage.js";

const data = JSON.parse(document.getElementById("catalog-data").textContent);

// Said in words (the badge's colour only repeats them).
function describe(standing) {
  if (standing.status === "passed") return "Passed";
  if (standing.status === "not_tried") return "Not tried";
  if (standing.best_score === null) return "In progress";
  return `In progress · best ${points(standing.best_score, standing.max_score)}`;
}

function showProgress(standings) {
  const byExercise = new Map(standings.map((standing) => [standing.exercise, standing]));
  for (const item of document.querySelectorAll(".catalog li[data-exercise]")) {
    const standing = byExercise.get(item.dataset.exercise) || { status: "not_tried" };
    const badge = item.querySelector(".progress");
    badge.dataset.status = standing.status;
    badge.replaceChildren(h("span", { class: "visually-hidden" }, "Your status: "), describe(standing));
    badge.hidden = false;
  }
}

// Without a link, the page's student is this browser's id; a browser without one tried nothing.
async function loadProgress() {
  const browserStudent = load(STUDENT_ID_KEY);
  if (!api.signedIn && !api.student && !browserStudent) return [];
  return api.progress(browserStudent);
}

async function start() {
  if (api.student) showStudent(document.getElementById("who"));
  else if (needsSignIn(data)) {
    showHowToGetIn(document.getElementById("sign-in"));
    return;
  }
  try {
    showProgress(await loadProgress());
  } catch {
    // Without the standings the list still leads to every exercise.
  }
}

start().finally(() => {
  document.body.dataset.ready = "true";
});
