// The regrade of an exercise: how many submissions were graded with another version, a button
// that regrades them all (POST .../regrades), and a progress bar that follows the regrade
// until it is done, also one started before the page was opened.
import { h } from "../dom.js";
import { count } from "./format.js";

const POLL_MS = 1000;
const RUNNING = new Set(["queued", "running"]);

function describe(regrade) {
  const changed = `${count(regrade.changed)} scores changed`;
  if (regrade.status === "done") return `Regraded ${count(regrade.graded)} of ${count(regrade.total)} submissions; ${changed}.`;
  if (regrade.status === "cancelled") return `Cancelled after ${count(regrade.graded)} of ${count(regrade.total)}; ${changed}.`;
  return `Regrading: ${count(regrade.graded)} of ${count(regrade.total)} submissions (${changed} so far)…`;
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
    let current = regrade;
    for (;;) {
      bar.max = Math.max(current.total, 1);
      bar.value = current.graded;
      line.textContent = describe(current);
      if (!RUNNING.has(current.status) || !panel.isConnected) break;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      current = await api.regrade(current.id);
    }
    button.disabled = false;
    if (current.status === "done" && panel.isConnected) onFinished(describe(current));
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
      const running = regrades.find((one) => RUNNING.has(one.status));
      if (running) follow(running).catch(failed);
    })
    .catch(() => {}); // the list is a convenience: the button works without it
  return panel;
}
