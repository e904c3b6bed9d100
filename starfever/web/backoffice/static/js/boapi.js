// The back office's calls of the game server's API (/api/v1). The operator's token lives in
// sessionStorage: it is gone when the browser (tab) closes, and no player page can read it
// under another key. Every refusal is an Error with the server's {"error": {"code", "message"}}.

const TOKEN_KEY = "sf.operatorToken";
const USER_KEY = "sf.operatorName";

export class BoError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export class BackOfficeApi {
  constructor(base = "/api/v1") {
    this.base = base;
    this.token = sessionStorage.getItem(TOKEN_KEY);
    this.user = sessionStorage.getItem(USER_KEY);
  }

  setSession(token, user) {
    this.token = token;
    this.user = user;
    if (token) {
      sessionStorage.setItem(TOKEN_KEY, token);
      sessionStorage.setItem(USER_KEY, user);
    } else {
      sessionStorage.removeItem(TOKEN_KEY);
      sessionStorage.removeItem(USER_KEY);
    }
  }

  async fetch(method, path, { body, headers = {} } = {}) {
    const h = { ...headers };
    if (body !== undefined) h["Content-Type"] = "application/json";
    if (this.token) h.Authorization = `Bearer ${this.token}`;
    let response;
    try {
      response = await fetch(this.base + path, {
        method, headers: h, body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      throw new BoError(0, "network", String(err));
    }
    if (!response.ok) {
      let data = null;
      try { data = await response.json(); } catch { data = null; }
      const e = data && data.error ? data.error : {};
      throw new BoError(response.status, e.code || `http_${response.status}`,
        e.message || response.statusText);
    }
    return response;
  }

  async request(method, path, options = {}) {
    const response = await this.fetch(method, path, options);
    return response.status === 204 ? null : response.json();
  }

  async login(username, password, otp) {
    const data = await this.request("POST", "/operator/sessions", { body: { username, password, otp } });
    this.setSession(data.token, username);
    return data;
  }

  async logout() {
    try { await this.request("DELETE", "/sessions/current"); } finally { this.setSession(null, null); }
  }

  get(path, query = {}) {
    const q = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) {
      if (Array.isArray(value)) value.forEach((v) => q.append(key, v));
      else if (value !== null && value !== undefined && value !== "") q.set(key, String(value));
    }
    const suffix = q.toString() ? `?${q}` : "";
    return this.request("GET", path + suffix);
  }

  /** A deposit or withdrawal ("deposits" | "withdrawals") under the given Idempotency-Key. */
  cashier(kind, username, amount, key) {
    return this.request("POST", `/players/${encodeURIComponent(username)}/${kind}`,
      { body: { amount }, headers: { "Idempotency-Key": key } });
  }
}

/** A fresh idempotency key (one per booking; reused only when sending that booking again). */
export function newKey() {
  return crypto.randomUUID ? crypto.randomUUID() : `${Date.now()}-${Math.random().toString(16).slice(2)}`;
}

/** Text safe to put into markup. */
export function esc(value) {
  return String(value ?? "").replace(/[&<>"']/g, (c) => ({
    "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
}
