// The Controls page (ADR 0067): close the game for maintenance or open it again, with the
// reason and the state as the server holds it (in the database: every worker sees it at once),
// and end every live session of a player. The server decides and records each change as a
// significant event; this page only asks and shows its answer.
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

/** Show the maintenance switch (GET /operator/maintenance). */
export async function loadControls() {
  showState(await page.api.get("/operator/maintenance"));
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
}
