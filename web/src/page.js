// The exercise page: typesets the statement's formulas, starts the editor, submits, follows the
// submission while it is queued and running, and shows its report and the student's history.
import katex from "katex";
import * as api from "./api.js";
import { createEditor } from "./editor.js";
import { renderHistory, renderMessage, renderReport } from "./report.js";
import { load, save } from "./storage.js";
import "./page.css";

const STATUS_WORDS = { queued: "Queued: waiting for a grader…", running: "Running your code on the tests…" };
const POLL_MS = [300, 500, 1000, 2000];

const data = JSON.parse(document.getElementById("exercise-data").textContent);
const statusLine = document.getElementById("status");
const reportBox = document.getElementById("report");
const historyList = document.getElementById("history");
const submitButton = document.getElementById("submit");
const studentInput = document.getElementById("student-id");

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

// Who the history belongs to: the launched LTI student (no field to type), or else an id this
// browser made up once, or the one the student types.
const STUDENT_KEY = "autograder:student-id";
if (api.launched) {
  studentInput.closest("p").hidden = true;
} else {
  studentInput.value = load(STUDENT_KEY) || `student-${crypto.randomUUID().slice(0, 8)}`;
  save(STUDENT_KEY, studentInput.value);
  studentInput.addEventListener("change", () => {
    save(STUDENT_KEY, studentInput.value.trim());
    refreshHistory();
  });
}

function say(text) {
  statusLine.textContent = text;
}

async function refreshHistory() {
  const studentId = studentInput.value.trim();
  if (!studentId && !api.launched) return;
  try {
    const page = await api.history(studentId, data.slug);
    renderHistory(historyList, page.items, openSubmission);
  } catch (error) {
    renderMessage(historyList, `Could not load your submissions: ${error.message}`);
  }
}

async function follow(id) {
  for (let attempt = 0; ; attempt += 1) {
    const submission = await api.getSubmission(id);
    if (submission.status === "done") return submission;
    say(STATUS_WORDS[submission.status] || submission.status);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS[Math.min(attempt, POLL_MS.length - 1)]));
  }
}

function show(submission) {
  renderReport(reportBox, submission.report);
  say(`Graded: ${submission.report.message || submission.report.status}`);
}

async function openSubmission(id) {
  try {
    show(await follow(id));
    reportBox.focus();
  } catch (error) {
    say(`Could not load that submission: ${error.message}`);
  }
}

submitButton.addEventListener("click", async () => {
  submitButton.disabled = true;
  say("Sending…");
  try {
    const accepted = await api.submit(data.slug, editor.source(), studentInput.value.trim());
    say(STATUS_WORDS[accepted.status] || accepted.status);
    show(await follow(accepted.id));
    refreshHistory();
  } catch (error) {
    say(`Not graded: ${error.message}`);
  } finally {
    submitButton.disabled = false;
  }
});

document.getElementById("reset").addEventListener("click", () => {
  if (window.confirm("Replace your code with the starter? Undo (Ctrl+Z) brings it back.")) {
    editor.replace(data.starter);
  }
});

// Ready for input (the browser test waits for this too).
submitButton.disabled = false;
document.body.dataset.ready = "true";
refreshHistory();
