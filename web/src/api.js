// Every call the page makes to the service, in one place, and who the page works as:
// - after an LTI launch, the page was opened as /exercises/<slug>#lti_session=<token>: it works as
//   the launched student through /lti/submissions, so grades flow back to the LMS;
// - with a student link (`autograder students link`), opened as ...#student_token=<token>: it
//   works as that student of that course through /v1, on every exercise page of this service;
// - otherwise as whoever the service lets in without a credential (it runs open on loopback):
//   its staff, or, opened as ...?as_student=<id>, that student (attempt budgets apply, as they
//   do to students; the service refuses it anywhere but an open service).
import { takeFromFragment } from "./fragment.js";
import { refusal } from "./refusal.js";
import { forget, load, save } from "./storage.js";

const LTI_KEY = `autograder:lti-session:${window.location.pathname}`;
const LINK_KEY = "autograder:student-token";

// An LTI session is this tab's, for this page: sessionStorage keeps it across a reload.
function launchToken() {
  const fromLaunch = takeFromFragment("lti_session");
  try {
    if (fromLaunch) window.sessionStorage.setItem(LTI_KEY, fromLaunch);
    return fromLaunch || window.sessionStorage.getItem(LTI_KEY);
  } catch {
    return fromLaunch; // storage refused (a framed page): good until the page is left
  }
}

// A student link is this browser's until signed out: every exercise page uses it.
function linkToken() {
  const fromLink = takeFromFragment("student_token");
  if (fromLink) save(LINK_KEY, fromLink);
  return load(LINK_KEY);
}

// The student a link names, read from the token's claims (the service checks the signature).
function linkedStudent(token) {
  try {
    const payload = token.split(".")[1].replaceAll("-", "+").replaceAll("_", "/");
    const bytes = Uint8Array.from(atob(payload), (char) => char.charCodeAt(0));
    return JSON.parse(new TextDecoder().decode(bytes)).student || null;
  } catch {
    return null;
  }
}

const ltiSession = launchToken();
const studentToken = ltiSession ? null : linkToken();
const actingAs = ltiSession || studentToken ? null : new URLSearchParams(window.location.search).get("as_student");
// The page speaks for one student, whom its token or its address names: no request names another.
const oneStudent = Boolean(studentToken || actingAs);

// True when the page works as a launched LTI student (the identity is the launch's).
export const launched = Boolean(ltiSession);
// True when the page acts as a student on an open service (`?as_student=`).
export const actingAsStudent = Boolean(actingAs);
// The student a link signs in, or the one the page acts as, or null.
export const student = studentToken ? linkedStudent(studentToken) : actingAs || null;
// True when the page has a credential: a launch or a student link.
export const signedIn = launched || Boolean(studentToken);

export function signOut() {
  forget(LINK_KEY);
}

const BASE = launched ? "/lti" : "/v1";

function authHeaders() {
  const token = ltiSession || studentToken;
  if (token) return { Authorization: `Bearer ${token}` };
  return actingAs ? { "X-Act-As-Student": actingAs } : {};
}

async function call(path, options = {}) {
  const response = await fetch(BASE + path, {
    ...options,
    headers: { Accept: "application/json", ...authHeaders(), ...options.headers },
  });
  if (!response.ok) throw await refusal(response);
  return response.json();
}

export function submit(exercise, source, studentId) {
  // A launch's token names the exercise and the student; a link's token (or the header of a page
  // acting as a student) names the student.
  let body = { exercise, source, student_id: studentId || undefined };
  if (launched) body = { source };
  else if (oneStudent) body = { exercise, source };
  return call("/submissions", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
}

// With `waitS`, the service holds the answer until the submission is graded or that many seconds
// have passed (a service that does not know ?wait answers at once).
export function getSubmission(id, waitS = null) {
  const wait = waitS ? `?${new URLSearchParams({ wait: String(waitS) })}` : "";
  return call(`/submissions/${encodeURIComponent(id)}${wait}`);
}

export function history(studentId, exercise) {
  let query = { student_id: studentId, exercise, limit: "20" };
  if (launched) query = { limit: "20" };
  else if (oneStudent) query = { exercise, limit: "20" };
  return call(`/submissions?${new URLSearchParams(query)}`);
}

// `?student_id=...` where a key speaks for the page's student; a link's token (or the acting
// student's header) names them already.
function asStudent(studentId) {
  return studentId && !oneStudent ? `?${new URLSearchParams({ student_id: studentId })}` : "";
}

// Where the student stands in the exercise's attempt budget ({limited: false} without one).
export function attempts(exercise, studentId) {
  if (launched) return call("/attempts");
  return call(`/exercises/${encodeURIComponent(exercise)}/attempts${asStudent(studentId)}`);
}

// The student's due date for the exercise, and its late policy ({due_at: null} without one).
export function due(exercise, studentId) {
  if (launched) return call("/due");
  return call(`/exercises/${encodeURIComponent(exercise)}/due${asStudent(studentId)}`);
}

// Where the student stands on every exercise ({exercise, status, best_score, max_score, ...}).
export function progress(studentId) {
  return call(`/progress${asStudent(studentId)}`);
}
