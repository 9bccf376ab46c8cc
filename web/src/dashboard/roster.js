// The course's LMS roster, atop the students view: whence it was read and when, a button that
// reads it again (POST .../roster/sync), and the sync followed (GET .../roster every POLL_MS)
// until it is read or fails, its error said in words.
import { h } from "../dom.js";
import { count, when } from "./format.js";

const POLL_MS = 1000;
const pending = (roster) => roster.sources.some((source) => source.latest?.status === "pending");

export function describeRoster(roster) {
  const offering = roster.sources.filter((source) => source.offers_roster);
  if (!offering.length) return "No LMS roster yet: the list has the students who submitted. The roster comes with a launch from the course in the LMS.";
  return offering.map(describeSource).join(" ");
}

function describeSource(source) {
  const name = source.label || source.title || source.context_id;
  const latest = source.latest;
  if (latest?.status === "pending") {
    const retry = latest.error ? ` The last try failed (${latest.error}); trying again.` : "";
    return `${name}: reading the roster from the LMS…${retry}`;
  }
  const read = source.synced_at ? `roster read ${when(source.synced_at)}` : "roster not read yet";
  if (latest?.status === "failed") return `${name}: the roster could not be read: ${latest.error}. ${read}.`;
  const members = typeof latest?.members === "number" ? `, ${count(latest.members)} members` : "";
  return `${name}: ${read}${members}.`;
}

export function rosterPanel(api, onSynced) {
  const button = h("button", { type: "button", id: "roster-sync" }, "Read the roster from the LMS again");
  const line = h("p", { id: "roster-status", class: "status", role: "status" });
  const panel = h("section", { class: "panel", id: "roster-panel", "aria-labelledby": "roster-heading" }, h("h3", { id: "roster-heading" }, "Roster"), line, button);

  // A sync followed to its end, asked here or by a launch, redraws the list it changed.
  async function follow(roster) {
    let current = roster;
    let waited = false;
    button.disabled = true;
    for (;;) {
      // A course no LMS launch named a roster for has nothing to read again.
      button.hidden = !current.sources.some((source) => source.offers_roster);
      line.textContent = describeRoster(current);
      line.classList.toggle("error", current.sources.some((source) => source.latest?.status === "failed"));
      if (!pending(current) || !panel.isConnected) break;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      current = await api.roster();
      waited = true;
    }
    button.disabled = false;
    if (waited && panel.isConnected) onSynced(describeRoster(current));
  }

  const failed = (error) => {
    button.disabled = false;
    line.classList.add("error");
    line.textContent = `Could not read the roster: ${error.message}`;
  };
  button.addEventListener("click", () => {
    api.syncRoster().then(follow).catch(failed);
  });
  api.roster().then(follow).catch(failed);
  return panel;
}
