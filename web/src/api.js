// Every call the page makes to the service, in one place. After an LTI launch the page was
// opened as /exercises/<slug>#lti_session=<token>: the page then works as the launched student,
// through /lti/submissions with that token (authHeaders), so grades flow back to the LMS.

const LTI_KEY = `autograder:lti-session:${window.location.pathname}`;

// The token leaves the address bar at once (bookmarks, history, shared links), and stays in this
// tab's sessionStorage so a reload keeps working. It came in the fragment: never sent to a server.
function launchToken() {
  const fragment = new URLSearchParams(window.location.hash.slice(1));
  const fromLaunch = fragment.get("lti_session");
  if (fromLaunch) {
    fragment.delete("lti_session");
    const rest = fragment.toString();
    const { pathname, search } = window.location;
    window.history.replaceState(window.history.state, "", pathname + search + (rest ? `#${rest}` : ""));
  }
  try {
    if (fromLaunch) window.sessionStorage.setItem(LTI_KEY, fromLaunch);
    return fromLaunch || window.sessionStorage.getItem(LTI_KEY);
  } catch {
    return fromLaunch; // storage refused (a framed page): good until the page is left
  }
}

const ltiSession = launchToken();

// True when the page works as a launched LTI student (the identity is the launch's).
export const launched = Boolean(ltiSession);

const BASE = launched ? "/lti" : "/v1";

function authHeaders() {
  return launched ? { Authorization: `Bearer ${ltiSession}` } : {};
}

async function call(path, options = {}) {
  const response = await fetch(BASE + path, {
    ...options,
    headers: { Accept: "application/json", ...authHeaders(), ...options.headers },
  });
  const body = await response.json().catch(() => null);
  if (!response.ok) {
    // The service answers errors as RFC 9457 problem documents.
    const detail = body?.detail || body?.title || response.statusText;
    throw new Error(`${detail} (HTTP ${response.status})`);
  }
  return body;
}

export function submit(exercise, source, studentId) {
  // A launch's token names the exercise and the student itself.
  const body = launched ? { source } : { exercise, source, student_id: studentId || undefined };
  return call("/submissions", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
}

export function getSubmission(id) {
  return call(`/submissions/${encodeURIComponent(id)}`);
}

export function history(studentId, exercise) {
  const query = launched
    ? new URLSearchParams({ limit: "20" })
    : new URLSearchParams({ student_id: studentId, exercise, limit: "20" });
  return call(`/submissions?${query}`);
}
