// The back office: log-in with the second factor, then one page per tab. Every figure shown is
// the server's (integer cents, formatted here only); no page computes money of its own.
import { BackOfficeApi, BoError, esc, newKey } from "./boapi.js";
import * as recall from "./recall.js";
import { showMeters } from "./meters.js";
import { bindUnpaid } from "./unpaid.js";
import { bindControls, loadControls } from "./controls.js";
import { bindFreeRounds, loadFreeRounds } from "./freerounds.js";  // free rounds (issue 36)

const $ = (sel) => document.querySelector(sel);
const api = new BackOfficeApi();
const hooks = { ready: false };
window.__backofficePage = hooks;
// ``code``: the currency of the amount (a round's, a wallet's, the meters'); EUR where none is named
let money = (cents, code = "EUR") => (cents === null || cents === undefined ? "–" : `${code} ${(cents / 100).toFixed(2)}`);
// the player client's parser (loaded in main); until then no amount is accepted
let parseAmount = () => null;
let served = null; // GET /game's currencies ({code, exponent}), loaded with the rounds page
let pendingCashier = null; // {kind, username, amount, key} of a booking whose answer was lost
let roundsBefore = null;
let eventsBefore = null;
let lastSearch = null;
const latest = { players: 0, rounds: 0, events: 0 }; // only the newest answer of each is shown

const when = (iso) => (iso ? iso.replace("T", " ").replace(/\.\d+/, "").replace(/(\+00:00|Z)$/, " UTC") : "–");

function status(text, kind = "error") {
  const el = $("#status");
  el.textContent = text;
  el.className = `bo-status ${kind}`;
}

function failed(error) {
  if (error instanceof BoError && error.status === 401) {
    api.setSession(null, null);
    showLogin("Your session ended: log in again.");
    return;
  }
  status(error instanceof BoError ? `${error.message} (${error.code})` : String(error));
}

function showLogin(message = "") {
  $("#shell").hidden = true;
  $("#login").hidden = false;
  $("#login-error").textContent = message;
  $("#login-user").focus();
}

async function submitLogin(event) {
  event.preventDefault();
  $("#login-error").textContent = "";
  try {
    await api.login($("#login-user").value.trim(), $("#login-password").value, $("#login-otp").value.trim());
  } catch (error) {
    $("#login-error").textContent = error instanceof BoError ? `${error.message} (${error.code})` : String(error);
    return;
  }
  $("#login-password").value = "";
  $("#login-otp").value = "";
  enter();
}

/** Offer only what this server's wallet does: the server says (GET /operator/wallet). */
async function applyWallet() {
  const wallet = await api.get("/operator/wallet");
  $("[data-page=cashier]").hidden = !wallet.keeps_balances;  // the operator keeps the money
  $("#pf-exclude").hidden = !wallet.keeps_balances;          // and the exclusions
  $("#fr-form").hidden = !wallet.keeps_balances;             // and grants and campaigns
  $("#fc-form").hidden = !wallet.keeps_balances;             // (its signed API makes them)
}

async function enter() {
  try {
    await applyWallet();
  } catch (error) {
    failed(error);
    if (error instanceof BoError && error.status === 401) return;
  }
  $("#login").hidden = true;
  $("#shell").hidden = false;
  $("#who").textContent = api.user || "";
  showPage("players");
}

const loaders = {
  players: () => searchPlayers(),
  cashier: () => {},
  rounds: () => searchRounds(),
  meters: () => loadMeters(),
  reports: () => {},
  audit: () => loadAudit(),
  events: () => loadEvents(),
  controls: () => loadControls(),
  freerounds: () => loadFreeRounds(api, (c, code) => money(c, code)),
};

async function showPage(name) {
  for (const page of document.querySelectorAll(".bo-page")) page.hidden = page.id !== `page-${name}`;
  for (const tab of document.querySelectorAll("[data-page]")) {
    tab.setAttribute("aria-current", String(tab.dataset.page === name));
  }
  status("", "");
  document.body.dataset.page = name;
  document.body.dataset.loading = name; // until the page's first answer is shown
  try {
    await loaders[name]();
  } catch (error) {
    failed(error);
  } finally {
    if (document.body.dataset.loading === name) delete document.body.dataset.loading;
  }
}

// ---------------------------------------------------------------- players

function playerStatus(p) {
  return p.excluded_until ? `excluded until ${when(p.excluded_until)}` : "active";
}

async function searchPlayers() {
  const seq = ++latest.players;
  const data = await api.get("/operator/search/players", { q: $("#player-q").value.trim() });
  if (seq !== latest.players) return;
  $("#players-body").innerHTML = data.players.map((p) => `<tr data-player="${esc(p.username)}">
    <td><button type="button" class="bo-link" data-open-player="${esc(p.username)}">${esc(p.username)}</button></td>
    <td class="num">${esc(money(p.balance, p.currency || "EUR"))}</td><td>${esc(playerStatus(p))}</td>
    <td>${esc(when(p.created_at))}</td></tr>`).join("") || `<tr><td colspan="4">No player found.</td></tr>`;
}

const moneyOf = (cents, code) => money(cents, code);

async function openPlayer(username) {
  const [p, rounds] = await Promise.all([
    api.get(`/operator/players/${encodeURIComponent(username)}`),
    api.get("/operator/rounds", { player: username, limit: 20 })]);
  $("#player-file").hidden = false;
  $("#player-file").dataset.player = p.username;
  $("#pf-name").textContent = p.username;
  const limits = p.limits;
  // the wallet's one currency (ADR 0076): every wallet amount below is in it; in operator mode
  // (no wallet here) the currencies of the player's rounds, a launch per currency
  const totals = p.totals || [];
  const cur = p.currency || (totals.length === 1 ? totals[0].currency : "EUR");
  const money = (cents, code = cur) => moneyOf(cents, code);
  // bets and wins per currency (ADR 0078): one pair of lines each, never a sum of two
  const played = totals.length > 1
    ? totals.flatMap((t) => [[`Bets (${t.currency})`, money(t.total_bet, t.currency)],
      [`Wins (${t.currency})`, money(t.total_win, t.currency)]])
    : [["Bets", money(p.total_bet)], ["Wins", money(p.total_win)]];
  const facts = [
    ["Status", playerStatus(p)],
    ["Currency", p.currency || totals.map((t) => t.currency).join(", ") || "–"],
    ["Balance", money(p.balance)],
    ["Born", p.birth_date || "unknown"], ["Registered", when(p.created_at)],
    ["Weekly deposit limit", limits ? money(limits.weekly_deposit_limit) : "the operator's"],
    ["Deposited in 7 days", limits ? money(limits.deposited_last_7_days) : "–"],
    ["Pending limit", limits && limits.pending_limit !== null
      ? `${money(limits.pending_limit)} from ${when(limits.pending_effective_at)}` : "none"],
    ["Play period since", when(p.play_started_at)], ["Net result of the period", money(p.net_result)],
    ["Rounds", String(p.rounds)], ...played,
  ];
  if (p.external_id) facts.push(["Operator's player id", p.external_id]);
  $("#pf-facts").innerHTML = facts.map(([k, v]) => `<dt>${esc(k)}</dt><dd data-fact="${esc(k)}">${esc(v)}</dd>`).join("");
  $("#pf-cashier").innerHTML = p.cashier.map((c) => `<tr><td>${c.id}</td><td>${esc(when(c.created_at))}</td>
    <td>${esc(c.kind)}</td><td class="num">${esc(money(c.amount))}</td><td class="num">${esc(money(c.balance_after))}</td></tr>`).join("")
    || `<tr><td colspan="5">No deposit or withdrawal yet.</td></tr>`;
  $("#pf-rounds").innerHTML = rounds.rounds.map(roundRow).join("") || `<tr><td colspan="6">No round yet.</td></tr>`;
}

function roundRow(r) {
  return `<tr data-round="${r.id}"><td>${r.id}</td><td>${esc(when(r.created_at))}</td>
    <td class="num">${esc(money(r.total_bet, r.currency))}</td><td class="num">${esc(money(r.total_win, r.currency))}</td>
    <td>${esc(r.feature || "–")}${r.test ? " (test)" : ""}</td>
    <td><button type="button" data-recall="${r.id}">Replay</button></td></tr>`;
}

async function excludePlayer(event) {
  event.preventDefault();
  const username = $("#player-file").dataset.player;
  const days = Number($("#pf-days").value);
  try {
    const done = await api.request("POST", `/operator/players/${encodeURIComponent(username)}/exclusion`, { body: { days } });
    status(`${username} is excluded until ${when(done.excluded_until)}.`, "ok");
    await openPlayer(username);
  } catch (error) {
    failed(error);
  }
}

// ---------------------------------------------------------------- cashier

async function book(event) {
  event.preventDefault();
  const kind = event.submitter?.value || "deposits";
  const username = $("#cash-user").value.trim();
  const out = $("#cash-result");
  // the amount is in the player's wallet currency (ADR 0076), read by its exponent
  let code;
  try {
    code = (await api.get(`/operator/players/${encodeURIComponent(username)}`)).currency || "EUR";
  } catch (error) {
    out.textContent = `Refused: ${error.message} (${error.code})`;
    return;
  }
  const amount = await parseIn($("#cash-amount").value, code);
  if (!Number.isInteger(amount) || amount <= 0) {
    out.textContent = `Enter an amount in ${code}, e.g. 50 or 12.50.`;
    return;
  }
  const same = pendingCashier && pendingCashier.kind === kind && pendingCashier.username === username
    && pendingCashier.amount === amount;
  const booking = same ? pendingCashier : { kind, username, amount, key: newKey() };
  pendingCashier = booking;
  out.dataset.key = booking.key;
  try {
    const done = await api.cashier(kind, username, amount, booking.key);
    pendingCashier = null;
    out.textContent = `${kind === "deposits" ? "Deposited" : "Paid out"} ${money(done.amount, code)} `
      + `${kind === "deposits" ? "to" : "from"} ${done.username}: balance ${money(done.balance, code)}.`;
  } catch (error) {
    if (error instanceof BoError && error.code === "network") {
      out.textContent = "No answer: press the same button again to send this booking again (it is booked at most once).";
      return;
    }
    pendingCashier = null;
    out.textContent = `Refused: ${error.message} (${error.code})`;
  }
}

/** GET /game's currencies ({code, exponent}), read once. */
async function servedCurrencies() {
  if (served === null) served = (await api.get("/game")).currencies || [{ code: "EUR", exponent: 2 }];
  return served;
}

// ---------------------------------------------------------------- rounds

function isoFrom(local) { return local ? `${local}:00` : null; }

/** The round search's currency picker: every served currency (once), and the win filter's
 * label naming the currency its amount is in (ADR 0078). */
async function loadSearchCurrencies() {
  await servedCurrencies();
  if (!$("#rs-currency option[data-served]")) {  // (checked after the await: filled once)
    $("#rs-currency").insertAdjacentHTML("beforeend", served.map((c) =>
      `<option value="${esc(c.code)}" data-served>${esc(c.code)}</option>`).join(""));
  }
  const code = searchCurrency();
  $("#rs-min-label").textContent = code ? `Win at least (${code.code})` : "Win at least (choose a currency)";
}

/** Minor units of ``code`` from what was typed (its exponent from GET /game); null if unreadable. */
async function parseIn(text, code) {
  await servedCurrencies();
  const found = served.find((c) => c.code === code) || served[0];
  return parseAmount(text, found ? found.exponent : 2);
}

/** The currency of the search's amounts: the one picked, or the only one served. */
function searchCurrency() {
  const picked = $("#rs-currency").value;
  if (picked) return served.find((c) => c.code === picked) || null;
  return served.length === 1 ? served[0] : null;
}

async function searchRounds(more = false) {
  if (!more) {
    await loadSearchCurrencies();
    const minWin = $("#rs-min").value.trim();
    const cur = searchCurrency();
    if (minWin && !cur) {
      throw new BoError(0, "currency_needed", "choose the currency the win is in: a number of minor units means nothing across currencies");
    }
    const minUnits = minWin ? parseAmount(minWin, cur.exponent) : null;
    if (minWin && minUnits === null) {
      throw new BoError(0, "bad_amount", `"${minWin}" is not an amount in ${cur.code} (e.g. 5 or 12.50)`);
    }
    lastSearch = {
      player: $("#rs-player").value.trim() || null, round_id: $("#rs-id").value || null,
      player_id: $("#rs-player-id").value.trim() || null,
      transaction_id: $("#rs-call").value.trim() || null,
      operator_transaction_id: $("#rs-op-txn").value.trim() || null,
      since: isoFrom($("#rs-since").value), until: isoFrom($("#rs-until").value),
      feature: $("#rs-feature").value || null,
      currency: $("#rs-currency").value || (minWin ? cur.code : null),
      min_win: minUnits,
    };
    roundsBefore = null;
  }
  const seq = ++latest.rounds;
  const body = $("#rounds-body");
  body.dataset.loading = "true"; // until the newest search's answer is shown (or refused)
  let data;
  try {
    data = await api.get("/operator/rounds", { ...lastSearch, before: roundsBefore, limit: 50 });
  } finally {
    if (seq === latest.rounds) delete body.dataset.loading;
  }
  if (seq !== latest.rounds) return;
  const rows = data.rounds.map((r) => `<tr data-round="${r.id}"><td>${r.id}</td><td>${esc(r.username)}</td>
    <td>${esc(when(r.created_at))}</td><td class="num">${esc(money(r.total_bet, r.currency))}</td>
    <td class="num">${esc(money(r.total_win, r.currency))}</td><td>${esc(r.feature || "–")}${r.test ? " (test)" : ""}</td>
    <td>${esc(r.model_name)} ${esc(r.model_version)} · ${esc(r.market || "market not recorded")}</td>
    <td><button type="button" data-recall="${r.id}">Replay</button></td></tr>`).join("");
  if (more) body.insertAdjacentHTML("beforeend", rows);
  else body.innerHTML = rows || `<tr><td colspan="8">No round matches.</td></tr>`;
  roundsBefore = data.next_before;
  $("#rs-more").hidden = !roundsBefore;
}

async function openRecall(id) {
  if (document.body.dataset.page !== "rounds") await showPage("rounds");
  const data = await api.get(`/operator/rounds/${encodeURIComponent(id)}`);
  const r = data.round;
  await recall.prepare(api);
  $("#recall").hidden = false;
  $("#recall").dataset.round = String(r.id);
  $("#recall-title").textContent = `Round ${r.id} of ${data.username}`;
  const m = (cents) => money(cents, r.currency);  // the round's own currency
  $("#recall-facts").textContent = `${when(r.created_at)} · market ${r.market || "not recorded"} · ${r.currency} · `
    + `model ${r.model_name} ${r.model_version} · `
    + `line bet ${m(r.line_bet)}, total bet ${m(r.total_bet)}, win ${m(r.total_win)} · `
    + `balance ${m(r.balance_before)} → ${m(r.balance_after)} · €€€ pool ${m(r.pool_before)} → ${m(r.pool_after)} · `
    + (r.build_sha256 ? `build ${r.build_sha256} · model sha256 ${r.model_sha256}` : "build and model hash not recorded (a round from before migration 0012)");
  $("#recall-raw").textContent = JSON.stringify({ draws: r.draws, prev_hash: r.prev_hash, hash: r.hash,
    build_sha256: r.build_sha256, model_sha256: r.model_sha256, events: r.events }, null, 1);
  $("#recall-details").hidden = !r.details_url;
  if (r.details_url) $("#recall-details").href = r.details_url;
  showPayment(r.payment);
  showCalls(data.wallet_calls || [], r.currency);
  $("#recall").scrollIntoView({ block: "nearest" });
  await recall.replay(r);
}

const PAYMENTS = {
  pending: "Credit pending: sent again until the operator's wallet answers.",
  unpaid: "UNPAID: the operator's wallet refused the credit (Meters: resend or settle it).",
  settled_manually: "Settled manually: approved by two operators; never paid by the operator's wallet.",
};

/** Whether the round's win reached the player (``paid`` needs no line). */
function showPayment(payment) {
  const el = $("#recall-payment");
  el.hidden = !PAYMENTS[payment];
  el.textContent = PAYMENTS[payment] || "";
  el.dataset.payment = payment || "paid";
}

/** Operator mode: the round's debit and credit with both sides' ids. */
function showCalls(calls, code) {
  $("#recall-calls").hidden = calls.length === 0;
  $("#recall-calls-body").innerHTML = calls.map((c) => `<tr data-transaction="${esc(c.transaction_id)}">
    <td>${esc(c.kind)}</td><td><code>${esc(c.transaction_id)}</code></td>
    <td><code>${esc(c.operator_transaction_id || "–")}</code></td>
    <td class="num">${esc(money(c.amount, code))}</td><td>${esc(c.status)}${c.error ? ` (${esc(c.error)})` : ""}</td>
    <td class="num">${esc(String(c.attempts))}</td><td>${esc(when(c.created_at))}</td>
    <td>${esc(when(c.updated_at))}</td></tr>`).join("");
}

// ---------------------------------------------------------------- meters, audit, events

async function loadMeters() {
  // one currency at a time (ADR 0078): no figure on the page adds two currencies' minor units
  const data = await api.get("/operator/meters", { since: $("#m-since").value, until: $("#m-until").value,
    currency: $("#m-currency").value || undefined });
  showMeters(data, (cents) => money(cents, data.currency));
}

async function loadAudit() {
  const data = await api.get("/operator/audit");
  const last = data.last;
  $("#audit-last").textContent = last
    ? `${last.kind === "audit_passed" ? "PASSED" : "FAILED"} at ${when(last.created_at)}: `
      + `${last.detail.checked.rounds} rounds, ${last.detail.checked.wallets} wallets, `
      + `${last.detail.checked.entries} entries checked; ${last.detail.problems} problems`
      + (last.detail.first_problems.length ? ` (${last.detail.first_problems.join("; ")})` : "")
    : "No audit has been logged yet.";
  $("#audit-last").dataset.kind = last ? last.kind : "none";
  $("#audit-statement").textContent = JSON.stringify(data.statement, null, 2);
  await loadSoftware();
}

async function loadSoftware() {
  const data = await api.get("/operator/software");
  const sw = data.software;
  const rt = data.runtime;
  const ok = sw.ok && rt.ok;
  $("#software-check").textContent = ok
    ? `VERIFIED: all ${sw.files_checked} files of version ${sw.version} as the manifest lists them, the environment as sealed (${data.environment})`
    : `NOT VERIFIED: ${sw.differences.length} files differ from the manifest, ${rt.differences.length} differences in the environment (${data.environment})`;
  $("#software-check").dataset.ok = String(ok);
  $("#sw-manifest").textContent = sw.manifest_sha256 || "no manifest";
  $("#sw-build").textContent = sw.build_sha256;
  $("#sw-environment").textContent = rt.environment_sha256;
  $("#sw-running").textContent = data.running_sha256;
  $("#sw-model").textContent = `${data.model.name} ${data.model.version}, SHA-256 ${data.model.sha256}, `
    + (data.model.approved ? "approved" : "not on the approved list");
  $("#sw-differences").replaceChildren(...sw.differences.concat(rt.differences).map((d) => {
    const li = document.createElement("li");
    li.textContent = d;
    return li;
  }));
}

async function loadEvents(more = false) {
  const kind = $("#ev-kind").value;
  if (!more) eventsBefore = null;
  const seq = ++latest.events;
  const data = await api.get("/operator/events", { kind: kind ? [kind] : [], before: eventsBefore, limit: 100 });
  if (seq !== latest.events) return;
  const select = $("#ev-kind");
  if (select.options.length === 1) {
    select.insertAdjacentHTML("beforeend", data.kinds.map((k) => `<option value="${esc(k)}">${esc(k)}</option>`).join(""));
    select.value = kind;
  }
  const rows = data.events.map((e) => `<tr data-kind="${esc(e.kind)}"><td>${e.id}</td><td>${esc(when(e.created_at))}</td>
    <td>${esc(e.kind)}</td><td>${esc(e.actor || "server")}</td><td>${esc(e.client || "")}</td>
    <td><code>${esc(JSON.stringify(e.detail))}</code></td></tr>`).join("");
  if (more) $("#events-body").insertAdjacentHTML("beforeend", rows);
  else $("#events-body").innerHTML = rows || `<tr><td colspan="6">No event.</td></tr>`;
  eventsBefore = data.next_before;
  $("#ev-more").hidden = !eventsBefore;
}

// ---------------------------------------------------------------- reports

async function download(event) {
  event.preventDefault();
  const format = event.submitter?.value || "csv";
  const period = $("#r-period").value;
  const q = new URLSearchParams({ date: $("#r-date").value.trim(), format });
  if ($("#r-test").checked) q.set("include_test", "true");
  if ($("#r-currency").value) q.set("currency", $("#r-currency").value);  // a report is of one
  try {
    const response = await api.fetch("GET", `/operator/reports/${period}?${q}`);
    const blob = await response.blob();
    const name = (response.headers.get("content-disposition") || "").match(/filename="([^"]+)"/)?.[1]
      || `starfever-report.${format}`;
    const link = document.createElement("a");
    link.href = URL.createObjectURL(blob);
    link.download = name;
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 10000);
    $("#r-result").textContent = `Downloaded ${name}.`;
  } catch (error) {
    $("#r-result").textContent = error instanceof BoError ? `Refused: ${error.message} (${error.code})` : String(error);
  }
}

// ---------------------------------------------------------------- wiring

function bind() {
  $("#login-form").addEventListener("submit", submitLogin);
  $("#logout").addEventListener("click", async () => { try { await api.logout(); } finally { showLogin(); } });
  for (const tab of document.querySelectorAll("[data-page]")) {
    tab.addEventListener("click", () => showPage(tab.dataset.page));
  }
  $("#player-search").addEventListener("submit", (e) => { e.preventDefault(); searchPlayers().catch(failed); });
  $("#pf-exclude").addEventListener("submit", excludePlayer);
  $("#cashier-form").addEventListener("submit", book);
  $("#round-search").addEventListener("submit", (e) => { e.preventDefault(); searchRounds().catch(failed); });
  $("#rs-currency").addEventListener("change", () => loadSearchCurrencies().catch(failed));
  $("#rs-more").addEventListener("click", () => searchRounds(true).catch(failed));
  $("#meters-form").addEventListener("submit", (e) => { e.preventDefault(); loadMeters().catch(failed); });
  $("#events-form").addEventListener("submit", (e) => { e.preventDefault(); loadEvents().catch(failed); });
  $("#ev-more").addEventListener("click", () => loadEvents(true).catch(failed));
  $("#audit-refresh").addEventListener("click", () => loadAudit().catch(failed));
  $("#report-form").addEventListener("submit", download);
  bindUnpaid({ api, status, failed, reload: () => loadMeters().catch(failed) });
  bindControls({ api, status, failed });
  $("#recall-replay").addEventListener("click", () => recall.again());
  $("#recall-skip").addEventListener("click", () => recall.skip());
  bindFreeRounds(api, (c, code) => money(c, code), parseIn,
    () => loadFreeRounds(api, (c, code) => money(c, code)), failed);
  document.addEventListener("click", (event) => {
    const target = event.target.closest("[data-open-player], [data-recall]");
    if (!target) return;
    const job = target.dataset.openPlayer ? openPlayer(target.dataset.openPlayer) : openRecall(target.dataset.recall);
    job.catch(failed);
  });
}

async function main() {
  bind();
  try {
    const base = document.documentElement.dataset.playerAssets;
    const m = await import(`${base}/js/money.js`);
    money = (cents, code = "EUR") => (cents === null || cents === undefined ? "–" : m.formatCents(cents, "en", code));
    parseAmount = m.parseAmount;
  } catch { /* the fallback formatting above */ }
  if (api.token) enter(); else showLogin();
  hooks.ready = true;
}

main();
