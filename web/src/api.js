// Every call the page makes to the service, in one place. When the service requires API keys,
// a launched student's session token is added here (authHeaders) and nowhere else.

const BASE = "/v1";

function authHeaders() {
  return {};
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
  return call("/submissions", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ exercise, source, student_id: studentId || undefined }),
  });
}

export function getSubmission(id) {
  return call(`/submissions/${encodeURIComponent(id)}`);
}

export function history(studentId, exercise) {
  const query = new URLSearchParams({ student_id: studentId, exercise, limit: "20" });
  return call(`/submissions?${query}`);
}
