// Where a followed submission stands, in words for the status line: "Queued: 12th in line, about
// 10 s". The service says the place and an estimate with each answer; between answers (a long
// poll holds each for up to half a minute) the estimate counts down here. The status line is a
// live region, so it is rewritten when the place changes and otherwise at most every
// RECOUNT_MS: a screen reader hears the line move, not a clock ticking.

const RECOUNT_MS = 10000;
const WORDS = { queued: "Queued: waiting for a grader…", running: "Running your code on the tests…" };

export function ordinal(n) {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? "th" : { 1: "st", 2: "nd", 3: "rd" }[n % 10] || "th";
  return `${n}${suffix}`;
}

// Seconds as a person would say them: exact when few, coarser when many.
export function roughly(seconds) {
  if (seconds < 1) return "any moment now";
  if (seconds < 10) return `about ${Math.round(seconds)} s`;
  if (seconds < 60) return `about ${Math.round(seconds / 5) * 5} s`;
  return `about ${Math.round(seconds / 60)} min`;
}

export function placeWords(queue, elapsedS = 0) {
  const place = `Queued: ${ordinal(queue.position)} in line`;
  if (queue.estimate_s === null || queue.estimate_s === undefined) return place;
  return `${place}, ${roughly(Math.max(0, queue.estimate_s - elapsedS))}`;
}

export function statusWords(submission) {
  if (submission.status === "queued" && submission.queue) return placeWords(submission.queue);
  return WORDS[submission.status] || submission.status;
}

// Says a submission's progress in `say`, counting its estimate down until `stop()`.
export function progressTeller(say) {
  let timer = null;
  let shownPosition = null;
  const stop = () => {
    clearInterval(timer);
    timer = null;
    shownPosition = null;
  };
  const tell = (submission) => {
    const queue = submission.status === "queued" ? submission.queue : null;
    if (!queue) {
      stop();
      say(statusWords(submission));
      return;
    }
    if (queue.position === shownPosition && timer !== null) return; // the countdown goes on
    stop();
    shownPosition = queue.position;
    const since = Date.now();
    say(placeWords(queue));
    timer = setInterval(() => say(placeWords(queue, (Date.now() - since) / 1000)), RECOUNT_MS);
  };
  return { tell, stop };
}
