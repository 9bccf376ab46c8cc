// The exercise page: typesets the statement's formulas, starts the editor, submits, follows the
// submission while it is queued and running, and shows its report and the student's history.
import katex from "katex";
import * as api from "./api.js";
import { showAttempts } from "./attempts.js";
import { showDue } from "./due.js";
import { createEditor } from "./editor.js";
import { progressTeller, statusWords } from "./line.js";
import { reportedLines, saidLines } from "./marks.js";
import { showPane } from "./panes.js";
import { outcome, renderHistory, renderMessage, renderReport } from "./report.js";
import { needsSignIn, showHowToGetIn, showStudent } from "./signin.js";
import { STUDENT_ID_KEY, load, save } from "./storage.js";
import "./page.css";

// Each request after the first asks the service to hold it until the report is ready (a long
// poll); an older service answers at once, and is then asked again after a pause, as before.
const WAIT_S = 25;
const ANSWERED_AT_ONCE_MS = 1000;
const POLL_MS = [300, 500, 1000, 2000];

const data = JSON.parse(document.getElementById("exercise-data").textContent);
const statusLine = document.getElementById("status");
const reportBox = document.getElementById("report");
const historyList = document.getElementById("history");
const submitButton = document.getElementById("submit");
const studentInput = document.getElementById("student-id");
const signInNotice = document.getElementById("sign-in");
const loadCodeButton = document.getElementById("load-code");
const attemptsLine = document.getElementById("attempts");
const dueLine = document.getElementById("due");

for (const node of document.querySelectorAll(".statement .math")) {
  katex.render(node.textContent, node, {
    displayMode: node.classList.contains("block"),
    throwOnError: false,
  });
}

const editorHost = document.getElementById("editor");
const editor = createEditor(editorHost, {
  slug: data.slug,
  starter: data.starter,
  label: editorHost.dataset.label,
});

// The way back to the list of exercises; a launch from an LMS opens this one exercise only.
document.getElementById("crumbs").hidden = api.launched;

// Who the history belongs to: the launched LTI student, the linked one or the one the page acts
// as (no field to type), or else an id this browser made up once, or the one the student types.
// Where the service needs a credential and the page has none, the page says how to get in instead.
const who = document.getElementById("who");
const locked = needsSignIn(data);
if (api.launched || locked) {
  who.hidden = true;
} else if (api.student) {
  studentInput.value = api.student; // the history's and the budget's student
  showStudent(who);
} else {
  studentInput.value = load(STUDENT_ID_KEY) || `student-${crypto.randomUUID().slice(0, 8)}`;
  save(STUDENT_ID_KEY, studentInput.value);
  studentInput.addEventListener("change", () => {
    save(STUDENT_ID_KEY, studentInput.value.trim());
    refreshHistory();
  });
}

function say(text) {
  statusLine.textContent = text;
}

// A refused credential (a link expired or revoked, a launch's session run out) signs the page out.
function signedOut(error) {
  if (!error.needsSignIn) return false;
  api.signOut();
  submitButton.disabled = true;
  who.hidden = true;
  showHowToGetIn(signInNotice, error.message);
  say("Not graded: sign in again.");
  return true;
}

async function refreshHistory() {
  const studentId = studentInput.value.trim();
  if (locked || (!studentId && !api.signedIn)) return [];
  showAttempts(attemptsLine, data.slug, studentId);
  showDue(dueLine, data.slug, studentId);
  try {
    const page = await api.history(studentId, data.slug);
    renderHistory(historyList, page.items, (id) => reopen(id, { focus: true, lead: "That submission" }));
    return page.items;
  } catch (error) {
    if (!signedOut(error)) renderMessage(historyList, `Could not load your submissions: ${error.message}`);
    return [];
  }
}

// The submission shown is the one asked for last: one still being followed (a restored one,
// another clicked in the history) gives way to it and says nothing more.
let latestAsked = 0;

const progress = progressTeller(say);
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// The submission once graded, and whether it had to be waited for; or null once another is asked.
async function follow(id, ask) {
  for (let attempt = 0, quick = 0; ; attempt += 1) {
    const asked = Date.now();
    const submission = await api.getSubmission(id, attempt > 0 ? WAIT_S : null);
    if (ask !== latestAsked) return [null, false];
    if (submission.status === "done") {
      progress.stop();
      return [submission, attempt > 0];
    }
    progress.tell(submission);
    if (attempt > 0 && Date.now() - asked < ANSWERED_AT_ONCE_MS) {
      await pause(POLL_MS[Math.min(quick, POLL_MS.length - 1)]);
      quick += 1;
    }
  }
}

// The report, and its lines marked in the editor where the editor holds the code it graded.
let shownReport = null;
function show(submission, lead) {
  const report = submission.report;
  shownReport = report;
  renderReport(reportBox, report);
  const problems = editor.source() === submission.source ? reportedLines(report) : [];
  editor.mark(problems);
  const marked = problems.length ? ` (${saidLines(problems)} marked in the editor)` : "";
  say(`${lead}: ${outcome(report.status, report.score, report.max_score)}${marked}`);
}

// Shows a submission's report once graded, with its code one click away; true once shown. The
// status line leads with `lead` ("Graded" once it had to be waited for). The history is read
// again where it may still say "queued" or "running": once one had to be followed, or always
// (`stale`).
let openedSource = null;
async function display(id, { stale = false, lead = "Graded" } = {}) {
  const ask = ++latestAsked;
  progress.stop(); // a countdown of the one followed before
  const [submission, waited] = await follow(id, ask);
  if (submission === null) return false;
  openedSource = submission.source ?? null;
  show(submission, waited ? "Graded" : lead);
  loadCodeButton.hidden = openedSource === null || openedSource === editor.source();
  if (stale || waited) refreshHistory();
  return true;
}

async function reopen(id, { focus, lead }) {
  try {
    if ((await display(id, { lead })) && focus) reportBox.focus();
  } catch (error) {
    if (!signedOut(error)) say(`Could not load that submission: ${error.message}`);
  }
}

loadCodeButton.addEventListener("click", () => {
  editor.replace(openedSource);
  editor.mark(reportedLines(shownReport));
  loadCodeButton.hidden = true;
  showPane("code");
  editor.view.focus();
  say("That submission's code is in the editor; Undo (Ctrl+Z) brings yours back.");
});

submitButton.addEventListener("click", async () => {
  submitButton.disabled = true;
  loadCodeButton.hidden = true;
  editor.mark([]);
  say("Sending…");
  try {
    const accepted = await api.submit(data.slug, editor.source(), studentInput.value.trim());
    say(statusWords(accepted));
    refreshHistory(); // the new submission in the history at once, "queued"
    // Alone on a narrow screen, the report takes the focus: the status line is out of sight.
    if ((await display(accepted.id, { stale: true })) && showPane("report")) reportBox.focus();
  } catch (error) {
    if (signedOut(error)) return;
    say(`Not graded: ${error.message}`);
    refreshHistory();
  }
  submitButton.disabled = false;
});

document.getElementById("reset").addEventListener("click", () => {
  if (window.confirm("Replace your code with the starter? Undo (Ctrl+Z) brings it back.")) {
    editor.replace(data.starter);
  }
});

// Ready for input (the browser test waits for this too).
if (locked) {
  showHowToGetIn(signInNotice);
  renderMessage(historyList, "Sign in to see your submissions.");
} else {
  submitButton.disabled = false;
  // After a reload, the latest submission's report is back, followed live if still grading.
  refreshHistory().then(([latest]) => latest && latestAsked === 0 && reopen(latest.id, { focus: false, lead: "Your latest submission" }));
}
document.body.dataset.ready = "true";
