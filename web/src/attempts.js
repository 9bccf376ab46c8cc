// The exercise's attempt budget, as the student reads it beside the Submit button.
import * as api from "./api.js";

const UNITS = [
  ["day", 86400],
  ["hour", 3600],
  ["minute", 60],
  ["second", 1],
];

// "hour", "2 hours", "90 minutes": a window in its largest whole unit, as the service says it.
function period(seconds) {
  const [unit, size] = UNITS.find(([, size]) => seconds % size === 0);
  const count = seconds / size;
  return count === 1 ? unit : `${count} ${unit}s`;
}

function clock(iso) {
  return new Date(iso).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}

function attemptsCount(count) {
  return count === 1 ? "1 attempt" : `${count} attempts`;
}

export function describe(budget) {
  const allowance = `${attemptsCount(budget.attempts)} every ${period(budget.window_s)}`;
  const next = budget.next_at ? ` The next comes back at ${clock(budget.next_at)}.` : "";
  if (budget.remaining === 0) return `No attempts left for now (${allowance}).${next}`;
  return `${attemptsCount(budget.remaining)} left (${allowance}).${next} A pass, or a fault of the grader, does not count.`;
}

// Shows the student's standing in `line`, or hides it when the exercise has no budget.
export async function showAttempts(line, exercise, studentId) {
  try {
    const budget = await api.attempts(exercise, studentId);
    line.hidden = !budget.limited;
    if (budget.limited) line.textContent = describe(budget);
  } catch {
    line.hidden = true; // the budget is a courtesy: the service still enforces it on submit
  }
}
