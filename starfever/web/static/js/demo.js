// Demo play (ADR 0066) and the operator's controls (ADR 0067) on the page.
// A demo session's token starts with "demo-": while the page holds one, the spin, balance and
// pool go to /api/v1/demo/*, nothing else of the real API is asked, and the DEMO badge is on
// screen at all times. A demo session comes from the stand-alone page's "Play for fun" (where
// the market allows it to anyone) or from the operator's demo launch (/?demo_launch=TOKEN).

const PREFIX = "demo-";

/** Whether the page plays for fun now. */
export function isDemo(api) { return Boolean(api.token && api.token.startsWith(PREFIX)); }

function badge() {
  let el = document.getElementById("demo-badge");
  if (!el) {
    el = document.createElement("div");
    el.id = "demo-badge";
    el.dataset.testid = "demo-badge";
    el.setAttribute("role", "status");
    el.className = "demo-badge";  // a strip above the page (app.css): it covers nothing
    document.body.prepend(el);
  }
  return el;
}

/** Show or hide the DEMO badge (with the play-money line in the page's language). */
export function showDemoBadge(on, t) {
  const el = badge();
  el.hidden = !on;
  // spans the language switch renames (setLanguage updates every [data-i18n])
  el.innerHTML = on ? `<span data-i18n="demoBadge">${t("demoBadge")}</span> · ` +
    `<span data-i18n="demoHint">${t("demoHint")}</span>` : "";
  document.body.classList.toggle("demo-mode", on);
}

/** Route the game's calls to demo play while the token is a demo token; keep the badge in
 * step with the token. Installed once, on the page's one Api. */
export function installDemo(api, { t }) {
  const real = {};
  for (const name of ["spin", "wallet", "jackpot", "rounds", "round", "exclusion", "limits",
    "realityCheck", "logout", "setToken"]) real[name] = api[name].bind(api);
  const demo = (name, play) => (...args) => (isDemo(api) ? play(...args) : real[name](...args));
  api.spin = demo("spin", (lineBet, key, draws) => {
    const body = { line_bet: lineBet };
    if (draws) body.test_draws = draws;
    return api.request("POST", "/demo/spins", { body, headers: { "Idempotency-Key": key } });
  });
  api.wallet = demo("wallet", () => api.request("GET", "/demo/wallet"));
  api.jackpot = demo("jackpot", () => api.request("GET", "/demo/jackpot"));
  api.rounds = demo("rounds", async () => ({ rounds: [], next_before: null }));
  api.round = demo("round", async () => { throw new Error("demo rounds are not kept"); });
  api.exclusion = demo("exclusion", async () => ({ excluded: false, excluded_until: null }));
  api.limits = demo("limits", async () => null);
  api.realityCheck = demo("realityCheck", async () => null);
  api.logout = demo("logout", async () => { real.setToken(null); showDemoBadge(false, t); });
  api.setToken = (token) => {
    real.setToken(token);
    showDemoBadge(isDemo(api), t);
  };
  showDemoBadge(isDemo(api), t);
}

/** Start demo play with ``body`` ({} or {launch_token}); the scope of its saved spin. */
async function start(api, body) {
  api.setToken(null);
  const data = await api.request("POST", "/demo/sessions", { body });
  api.setToken(data.token);
  localStorage.setItem("sf.user", `demo:${data.token.slice(0, 16)}`);
  return data;
}

/** The operator's demo launch (/?demo_launch=TOKEN&lang=..&return_url=..): exchange it, take it
 * out of the address, and keep the operator's way back. True when one happened. */
export async function demoFromUrl(api, { setLanguage }) {
  const params = new URLSearchParams(location.search);
  const token = params.get("demo_launch");
  if (!token) return false;
  const returnUrl = params.get("return_url") || "";
  const language = params.get("lang");
  for (const name of ["demo_launch", "return_url", "lang"]) params.delete(name);
  const rest = params.toString();
  history.replaceState(null, "", location.pathname + (rest ? `?${rest}` : "") + location.hash);
  localStorage.setItem("sf.operator", JSON.stringify({ returnUrl, player: "" }));
  if (language === "de" || language === "en") setLanguage(language);
  await start(api, { launch_token: token });
  return true;
}

/** "Play for fun" on the log-in card, where the market allows demo play to anyone. */
export function offerDemo(api, market, { t, enter, fail }) {
  const card = document.querySelector("#auth .auth-card");
  if (!card || !market || market.demo !== "allowed" || document.getElementById("play-demo")) return;
  const button = document.createElement("button");
  button.type = "button";
  button.id = "play-demo";
  button.className = "btn";
  button.dataset.testid = "play-demo";
  button.dataset.i18n = "playForFun";
  button.textContent = t("playForFun");
  button.style.cssText = "margin-top:10px;width:100%";
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      localStorage.removeItem("sf.operator");
      await start(api, {});
      await enter();
    } catch (error) {
      fail(error);
    } finally {
      button.disabled = false;
    }
  });
  card.querySelector("form")?.after(button);
}

/** Tell the player when the game is closed for maintenance (asked once at the start). */
export async function noteMaintenance(api, { t, say }) {
  try {
    const state = await api.request("GET", "/maintenance");
    if (state.maintenance) say(t("err_maintenance"));
  } catch { /* the spin answers it all the same */ }
}

/** The sentence for a session that ended: the operator's termination says so. */
export function sessionEndText(error, { t, errorText }) {
  return error && error.code === "session_terminated" ? errorText(error) : t("sessionEnded");
}
