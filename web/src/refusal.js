// What the service refused, read from its answer: the service answers errors as RFC 9457
// problem documents, whose `type` names the kind and `detail` says it in words.
export class CallRefused extends Error {
  constructor(message, status, type) {
    super(message);
    this.status = status;
    this.type = type;
    // No credential, or one that is no longer good: signing in (again) is the way out.
    this.needsSignIn = status === 401;
  }
}

export async function refusal(response) {
  const body = await response.json().catch(() => null);
  const detail = body?.detail || body?.title || response.statusText;
  return new CallRefused(`${detail} (HTTP ${response.status})`, response.status, body?.type);
}
