// The student's due date beside the Submit button: the date in the student's own time zone (the
// service sends UTC), the time left, and once it has passed, whether submissions are still taken
// (marked late, or with a penalty) or refused. It counts down by the service's clock.
import * as api from "./api.js";

const MINUTE_MS = 60_000;
const UNITS = [
  ["day", 86_400_000],
  ["hour", 3_600_000],
  ["minute", MINUTE_MS],
];

// "2 days 3 hours", "5 minutes", "less than a minute": a span in its two largest units.
export function span(ms) {
  const parts = [];
  let rest = Math.abs(ms);
  for (const [unit, size] of UNITS) {
    const count = Math.floor(rest / size);
    rest -= count * size;
    if (count > 0 && parts.length < 2) parts.push(count === 1 ? `1 ${unit}` : `${count} ${unit}s`);
    else if (parts.length > 0) break;
  }
  return parts.length > 0 ? parts.join(" ") : "less than a minute";
}

// The moment as the student reads it: in their time zone, which the text names.
export function moment(iso, timeZone) {
  return new Intl.DateTimeFormat(undefined, {
    weekday: "short",
    day: "numeric",
    month: "short",
    hour: "2-digit",
    minute: "2-digit",
    timeZoneName: "short",
    timeZone,
  }).format(new Date(iso));
}

function afterwards(due) {
  if (due.late_policy === "close") return "no submission is taken after it";
  if (due.late_policy === "penalty") return `${due.penalty_per_day}% off per day late`;
  return "later submissions are marked late";
}

// The line's state ("open", "late", "closed") and words at `nowMs`, or null without a due date.
export function describe(due, nowMs, timeZone) {
  if (due.due_at === null) return null;
  const left = Date.parse(due.due_at) - nowMs;
  const at = moment(due.due_at, timeZone);
  if (left >= 0) {
    return ["open", `Due ${at}: ${span(left)} left (${afterwards(due)}).`];
  }
  if (due.late_policy === "close") {
    return ["closed", `Closed: this was due ${at}, and takes no more submissions. Ask your instructor if you need more time.`];
  }
  const penalty = due.late_policy === "penalty" ? `, with ${due.penalty_per_day}% off per day late` : "";
  return ["late", `Late: this was due ${at}, ${span(left)} ago. Submissions are still taken, marked late${penalty}.`];
}

let ticking = null;

// Shows the student's due date in `line`, kept current every minute; hidden without one.
export async function showDue(line, exercise, studentId) {
  clearInterval(ticking);
  let due;
  try {
    due = await api.due(exercise, studentId);
  } catch {
    line.hidden = true; // a courtesy: the service decides lateness when it receives a submission
    return;
  }
  const skew = Date.parse(due.now) - Date.now(); // the service's clock decides, not the browser's
  const render = () => {
    const shown = describe(due, Date.now() + skew);
    line.hidden = shown === null;
    if (shown === null) return;
    line.dataset.state = shown[0];
    line.textContent = shown[1];
  };
  render();
  if (due.due_at !== null) ticking = setInterval(render, MINUTE_MS);
}
