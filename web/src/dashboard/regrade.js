// The regrade of an exercise: how many submissions were graded with another version, a button
// that regrades them all (POST .../regrades), and a progress bar that follows the regrade
// until it is done, also one started before the page was opened. One student's regrade is
// followed the same way (student.js).
import { h } from "../dom.js";
import { count } from "./format.js";

const POLL_MS = 1000;
const RUNNING = new Set(["queued", "running"]);

export function describeRegrade(regrade) {
  const changed = `${count(regrade.changed)} scores changed`;
  if (regrade.status === "done") return `Regraded ${count(regrade.graded)} of ${count(regrade.total)} submissions; ${changed}.`;
  if (regrade.status === "cancelled") return `Cancelled after ${count(regrade.graded)} of ${count(regrade.total)}; ${changed}.`;
  return `Regrading: ${count(regrade.graded)} of ${count(regrade.total)} submissions (${changed} so far)…`;
}

// Follows a regrade (GET .../regrades/<id> every POLL_MS) until it ends, or until `watched()`
// says nobody looks any more; `show` gets each state. Resolves to the last one.
export async function followRegrade(api, regrade, show, watched) {
  let current = regrade;
  for (;;) {
    show(current);
    if (!RUNNING.has(current.status) || !watched()) return current;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    current = await api.regrade(current.id);
  }
}

export function regradePanel(api, stats, onFinished) {
  const button = h("button", { type: "button", id: "regrade", class: "primary" }, "Regrade");
  const bar = h("progress", { id: "regrade-progress", max: "1", value: "0", "aria-label": "Regrade progress" });
  bar.hidden = true;
  const line = h("p", { id: "regrade-status", class: "status", role: "status" });
  const outdated = stats.outdated_submissions;
  const panel = h(
    "section",
    { class: "panel", id: "regrade-panel" },
    h("h3", {}, "Regrade"),
    h("p", { class: "facts" }, outdated ? `${count(outdated)} submissions were graded with an older version of the exercise.` : "Every submission was graded with the current version; a regrade grades them all again."),
    button,
    bar,
    line,
  );

  async function follow(regrade) {
    button.disabled = true;
    bar.hidden = false;
    const show = (current) => {
      bar.max = Math.max(current.total, 1);
      bar.value = current.graded;
      line.textContent = describeRegrade(current);
    };
    const last = await followRegrade(api, regrade, show, () => panel.isConnected);
    button.disabled = false;
    if (last.status === "done" && panel.isConnected) onFinished(describeRegrade(last));
  }

  const failed = (error) => {
    button.disabled = false;
    line.textContent = `Could not regrade: ${error.message}`;
  };
  button.addEventListener("click", () => {
    const scope = `all ${count(stats.submissions)} submissions of ${stats.exercise}`;
    if (!window.confirm(`Grade ${scope} again with the current version? Changed scores go to the LMS.`)) return;
    api.startRegrade(stats.exercise).then(follow).catch(failed);
  });
  // A regrade already under way (started elsewhere, or before a reload) is followed too.
  api
    .regrades(stats.exercise)
    .then(({ regrades }) => {
      const running = regrades.find((one) => one.student_id === null && RUNNING.has(one.status));
      if (running) follow(running).catch(failed);
    })
    .catch(() => {}); // the list is a convenience: the button works without it
  return panel;
}
