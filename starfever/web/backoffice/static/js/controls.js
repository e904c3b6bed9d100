// The Controls page (ADR 0067): close the game for maintenance or open it again, with the
// reason and the state as the server holds it (in the database: every worker sees it at once),
// end every live session of a player, and the sessions ended so far (whose, when, by whom, why;
// by player, the operator's player id or one launch's operator_session). The server decides and
// records each change as a significant event; this page only asks and shows its answer.
import { esc } from "./boapi.js";

const $ = (sel) => document.querySelector(sel);
const when = (iso) => (iso ? iso.replace("T", " ").replace(/\.\d+/, "").replace(/(\+00:00|Z)$/, " UTC") : "–");
let page = null; // {api, status, failed}: bound once by bindControls

function showState(state) {
  $("#mt-state").textContent = state.maintenance
    ? `CLOSED for maintenance since ${when(state.since)}: “${state.reason || ""}”. New launches, sessions and rounds are refused (503, retry after ${state.retry_after_seconds} s); rounds under way finish.`
    : "Open: players launch and play.";
  $("#mt-state").dataset.maintenance = String(state.maintenance);
  $("#mt-close").hidden = state.maintenance;
  $("#mt-open").hidden = !state.maintenance;
}

/** The sessions the operator ended (GET /operator/terminated-sessions), with the filters. */
async function loadTerminated() {
  const data = await page.api.get("/operator/terminated-sessions", {
    player: $("#ts-player").value.trim(), player_id: $("#ts-player-id").value.trim(),
    operator_session: $("#ts-op-session").value.trim() });
  $("#ts-body").innerHTML = data.sessions.map((s) => `<tr data-session="${s.session_id}">
    <td>${s.session_id}</td><td>${esc(s.username)}</td><td>${esc(s.player_id || "–")}</td>
    <td><code>${esc(s.operator_session || "–")}</code></td><td>${esc(s.brand || "–")}</td>
    <td>${esc(when(s.started_at))}</td><td>${esc(when(s.terminated_at))}</td>
    <td data-by>${esc(s.terminated_by || "not recorded")}</td><td data-reason>${esc(s.reason || "–")}</td></tr>`).join("")
    || `<tr><td colspan="9">No session was ended${$("#ts-player").value.trim() || $("#ts-player-id").value.trim()
      || $("#ts-op-session").value.trim() ? " that matches" : ""}.</td></tr>`;
}

/** Show the maintenance switch (GET /operator/maintenance) and the terminated sessions. */
export async function loadControls() {
  showState(await page.api.get("/operator/maintenance"));
  await loadTerminated();
}

async function switchMaintenance(event) {
  event.preventDefault();
  const on = event.submitter ? event.submitter.value === "close" : $("#mt-open").hidden;
  const reason = $("#mt-reason").value.trim();
  const body = { maintenance: on, reason };
  const retry = $("#mt-retry").value.trim();
  if (on && retry) body.retry_after_seconds = Number(retry);
  try {
    const state = await page.api.request("PUT", "/operator/maintenance", { body });
    showState(state);
    $("#mt-reason").value = "";
    page.status(on ? "The game is closed for maintenance." : "The game is open again.", "ok");
  } catch (error) {
    page.failed(error);
  }
}

async function terminate(event) {
  event.preventDefault();
  const username = $("#tm-user").value.trim();
  const reason = $("#tm-reason").value.trim();
  try {
    const answer = await page.api.request("POST", `/operator/players/${encodeURIComponent(username)}/terminate`,
      { body: { reason } });
    $("#tm-result").textContent = answer.terminated
      ? `${answer.terminated} live session(s) of ${username} ended; a round under way finishes and is paid.`
      : `${username} had no live session; nothing ended.`;
    await loadTerminated();
  } catch (error) {
    $("#tm-result").textContent = "";
    page.failed(error);
  }
}

/** Wire the page's forms once: ``api`` (BackOfficeApi), ``status`` and ``failed``. */
export function bindControls(bound) {
  page = bound;
  $("#mt-form").addEventListener("submit", switchMaintenance);
  $("#tm-form").addEventListener("submit", terminate);
  $("#ts-form").addEventListener("submit", (event) => {
    event.preventDefault();
    loadTerminated().catch(page.failed);
  });
}
