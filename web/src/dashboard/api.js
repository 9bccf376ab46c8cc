// Every call the dashboard makes to the staff API, one per view, and who it works as:
// - after an LMS launch as Instructor or TA, the page was opened as
//   /courses/<course>/dashboard#staff_session=<token>: it works as the course's staff;
// - with an API key of the course, typed into the sign-in form or handed in the address
//   (/courses/<course>/dashboard#key=<key>);
// - otherwise as whoever the service lets in without a credential (it runs open on loopback).
// Either credential is this tab's (sessionStorage): it never outlives the tab, nor leaks to
// another one.

import { takeFromFragment } from "../fragment.js";
import { refusal } from "../refusal.js";

const KEY = "autograder:staff-credential";

let memory = null; // when the browser refuses storage (a framed page): good until the page is left

function remember(credential) {
  memory = credential;
  try {
    if (credential) window.sessionStorage.setItem(KEY, credential);
    else window.sessionStorage.removeItem(KEY);
  } catch {
    // storage refused: the memory copy serves
  }
}

function credential() {
  try {
    return window.sessionStorage.getItem(KEY) ?? memory;
  } catch {
    return memory;
  }
}

// An LMS launch's staff session, or a key of the course (the URL `autograder demo-course` prints).
const handed = takeFromFragment("staff_session") || takeFromFragment("key");
if (handed) remember(handed);

// True when the tab holds a credential; `launchedAsStaff`: it came from an LMS launch (a staff
// session's token starts so: app.access.staff_sessions).
export const hasCredential = () => Boolean(credential());
export const launchedAsStaff = () => (credential() || "").startsWith("agi_");
export const signIn = (key) => remember(key.trim());
export const signOut = () => remember(null);

// A key of another course, or a student's, is not this course's staff: the API then knows no
// such course, and signing in with another credential is the way out.
export const needsSignIn = (error) => error.needsSignIn || error.type === "urn:autograder:problem:unknown-course";

async function send(path, options = {}) {
  const token = credential();
  const response = await fetch(path, {
    ...options,
    headers: {
      Accept: "application/json",
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
      ...options.headers,
    },
  });
  if (!response.ok) throw await refusal(response);
  return response;
}

const json = async (path, options) => (await send(path, options)).json();

function withBody(method, body) {
  return { method, headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) };
}

// The calls of one course, each path built from encoded parts.
export function courseApi(course) {
  const base = `/v1/courses/${encodeURIComponent(course)}`;
  const exercise = (slug) => `${base}/exercises/${encodeURIComponent(slug)}`;
  return {
    exercises: () => json(`${base}/exercises`),
    stats: (slug) => json(`${exercise(slug)}/stats`),
    students: () => json(`${base}/students`),
    student: (id) => json(`${base}/students/${encodeURIComponent(id)}`),
    submission: (id) => json(`/v1/submissions/${encodeURIComponent(id)}`),
    hiddenTests: (id) => json(`${base}/submissions/${encodeURIComponent(id)}/hidden-tests`),
    policy: (slug) => json(`${exercise(slug)}/policy`),
    savePolicy: (slug, policy) => json(`${exercise(slug)}/policy`, withBody("PUT", policy)),
    startRegrade: (slug, studentId) =>
      json(`${exercise(slug)}/regrades`, withBody("POST", studentId ? { student_id: studentId } : {})),
    regrades: (slug) => json(`${base}/regrades?${new URLSearchParams({ exercise: slug })}`),
    regrade: (id) => json(`${base}/regrades/${encodeURIComponent(id)}`),
    gradebook: () => send(`${base}/gradebook.csv`, { headers: { Accept: "text/csv" } }),
    roster: () => json(`${base}/roster`),
    syncRoster: () => json(`${base}/roster/sync`, { method: "POST" }),
    concepts: () => json(`${base}/concepts`),
    conceptsFile: (format) => send(`${base}/concepts.${format}`, { headers: { Accept: format === "csv" ? "text/csv" : "application/json" } }),
    clusters: (slug) => json(`${exercise(slug)}/clusters`),
    nameMistake: (slug, body) => json(`${exercise(slug)}/mistakes`, withBody("POST", body)),
    exportZip: (slug) => send(`${exercise(slug)}/export.zip`, { headers: { Accept: "application/zip" } }),
  };
}
