// The game server's HTTP API (/api/v1). Every refusal becomes an ApiError with the server's
// {"error": {"code", "message"}}; the page turns codes into readable text.

export class ApiError extends Error {
  constructor(status, code, message, { fields = null, retryAfter = null } = {}) {
    super(message);  // the developer's text: for the console, never shown to a player
    this.status = status;
    this.code = code;
    this.fields = fields;  // a validation error's [{field, problem}]
    this.retryAfter = retryAfter;  // seconds, from a 429's or 503's Retry-After
  }
}

const TOKEN_KEY = "sf.token";

export class Api {
  constructor(base = "/api/v1") {
    this.base = base;
    this.token = localStorage.getItem(TOKEN_KEY);
  }

  setToken(token) {
    this.token = token;
    if (token) localStorage.setItem(TOKEN_KEY, token);
    else localStorage.removeItem(TOKEN_KEY);
  }

  async request(method, path, { body, headers = {} } = {}) {
    const h = { Accept: "application/json", ...headers };
    if (body !== undefined) h["Content-Type"] = "application/json";
    if (this.token) h.Authorization = `Bearer ${this.token}`;
    let response;
    try {
      response = await fetch(this.base + path, {
        method, headers: h, body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      throw new ApiError(0, "network", String(err));
    }
    if (response.status === 204) return null;
    let data = null;
    try { data = await response.json(); } catch { data = null; }
    // a success whose body did not arrive whole is an answer lost on the way
    if (response.ok && data === null) throw new ApiError(0, "network", "the answer was cut off");
    if (!response.ok) {
      const e = data && data.error ? data.error : {};
      const wait = Number(response.headers.get("Retry-After"));
      throw new ApiError(response.status, e.code || `http_${response.status}`,
        e.message || response.statusText,
        { fields: e.fields || null, retryAfter: Number.isFinite(wait) && wait > 0 ? wait : null });
    }
    return data;
  }

  register(username, password, birthDate) {
    const body = { username, password, birth_date: birthDate };
    return this.request("POST", "/players", { body });
  }
  async login(username, password) {
    const data = await this.request("POST", "/sessions", { body: { username, password } });
    this.setToken(data.token);
    return data;
  }
  async logout() {
    try { await this.request("DELETE", "/sessions/current"); } finally { this.setToken(null); }
  }
  game() { return this.request("GET", "/game"); }
  wallet() { return this.request("GET", "/wallet"); }
  jackpot(currency) {  // the session's currency's pool (ADR 0076)
    return this.request("GET", currency ? `/jackpot?currency=${encodeURIComponent(currency)}` : "/jackpot");
  }
  spin(lineBet, key, testDraws, grantId = null) {
    const body = { line_bet: lineBet };
    if (testDraws) body.test_draws = testDraws;
    if (grantId) body.grant_id = grantId;  // a free round on this grant (freerounds.js)
    return this.request("POST", "/spins", { body, headers: { "Idempotency-Key": key } });
  }
  rounds(limit = 20, before = null) {
    const q = new URLSearchParams({ limit: String(limit) });
    if (before) q.set("before", String(before));
    return this.request("GET", `/rounds?${q}`);
  }
  round(id) { return this.request("GET", `/rounds/${encodeURIComponent(id)}`); }
  limits() { return this.request("GET", "/limits"); }
  setLimit(cents) { return this.request("PUT", "/limits", { body: { weekly_deposit_limit: cents } }); }
  exclusion() { return this.request("GET", "/self-exclusion"); }
  exclude(days) { return this.request("POST", "/self-exclusion", { body: { days } }); }
  realityCheck() { return this.request("GET", "/reality-check"); }
  acknowledge() { return this.request("POST", "/reality-check/acknowledge"); }
}

/** A fresh idempotency key: one per click, reused only when retrying that same click. */
export function newKey() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
