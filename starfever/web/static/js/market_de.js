// What a market like Germany's (GET /api/v1/game: "market" de, a model without the €€€ pool)
// changes on the page: no jackpot meter and no prize presented as a jackpot (the fixed prizes
// are named by what they pay, ADR 0072), and the panic button (one press, confirmed: 24 hours
// without play, ADR 0075). Driven by the data only: a market or model that asks for none of it
// leaves the page as it is. The server enforces each rule; this module shows it.
import { formatWhen, t } from "./i18n.js";

const $ = (sel) => document.querySelector(sel);

/** Whether the running model has the €€€ pool (a server without a model: as before, yes). */
export function hasPool(game) {
  return game?.jackpot?.progressive !== false;
}

/** Whether the Hold & Cash prizes are named by multiplier instead of Minor/Major/Mega. */
export function prizesByMultiplier(game) {
  return game?.hold_and_cash?.prize_names === "multiplier";
}

/** What a fixed prize cell (MINOR, MAJOR) is called on the board: its multiplier ("×20")
 * where the model names prizes so, else its code. */
export function prizeLabel(game, kind) {
  if (!prizesByMultiplier(game)) return kind;
  const x = game.hold_and_cash[kind.toLowerCase()];
  return x === undefined ? kind : `×${x}`;
}

/** The i18n key of the full-screen award's title (the "Mega" of the conditions). */
export function megaKey(game) {
  return prizesByMultiplier(game) ? "megaPrize" : "mega";
}

/** Present the top bar for ``game``: no €€€ meter without a pool, the prizes by multiplier
 * where the model names them so (language-neutral "×20", "×200"; the full screen in words). */
export function presentPrizes(game) {
  const noPool = !hasPool(game);
  const pool = $(".jackpots .pool");
  if (pool) pool.hidden = noPool;
  if (noPool) {
    $("#marquee").dataset.i18n = "marqueeNoPool";
    $("#marquee").textContent = t("marqueeNoPool");
  }
  if (!prizesByMultiplier(game)) return;
  const hc = game.hold_and_cash;
  const labels = [["#pays-minor", `×${hc.minor}`], ["#pays-major", `×${hc.major}`]];
  for (const [id, text] of labels) {
    const dt = $(id)?.previousElementSibling;
    if (dt) dt.textContent = text;
  }
  const mega = $("#pays-mega")?.previousElementSibling;
  if (mega) {
    mega.dataset.i18n = "prizeFullScreen";
    mega.textContent = t("prizeFullScreen");
  }
  $("#hc-pays").dataset.prizes = "multiplier";
}

/** The panic button of a market that requires one: a button in the menu, a dialog that asks
 * once for confirmation, then ``POST /panic-button``; ``showExclusion`` shows the result and
 * ``handleError`` anything refused. */
export function installPanicButton(game, { api, showExclusion, handleError }) {
  if (!game?.market?.panic_button || $("#panic")) return;
  const button = document.createElement("button");
  button.type = "button";
  button.id = "panic";
  button.className = "icon-btn panic";
  button.dataset.testid = "panic";
  button.innerHTML = `<svg viewBox="0 0 24 24" aria-hidden="true"><path d="M12 2a10 10 0 1 0 0 20 10 10 0 0 0 0-20zm-1 5h2v7h-2zm0 9h2v2h-2z"/></svg>
    <span data-i18n="panicButton">${t("panicButton")}</span>`;
  button.dataset.i18nTitle = "panicButton";
  button.title = t("panicButton");
  $("#open-protection").after(button);

  const dialog = document.createElement("dialog");
  dialog.id = "dlg-panic";
  dialog.className = "dlg";
  dialog.dataset.testid = "panic-dialog";
  dialog.setAttribute("aria-labelledby", "panic-title");
  dialog.innerHTML = `<header><h2 id="panic-title" data-i18n="panicTitle">${t("panicTitle")}</h2></header>
    <div class="dlg-body">
      <p data-i18n="panicText">${t("panicText")}</p>
      <p class="msg" id="panic-msg" role="status"></p>
      <div class="dlg-actions">
        <button type="button" class="btn btn-danger" id="panic-confirm" data-i18n="panicConfirm">${t("panicConfirm")}</button>
        <button type="button" class="btn" id="panic-cancel" data-i18n="panicCancel">${t("panicCancel")}</button>
      </div>
    </div>`;
  document.body.append(dialog);

  button.addEventListener("click", () => {
    $("#panic-msg").textContent = "";
    dialog.showModal();
    $("#panic-cancel").focus();  // the safe choice has the focus: Enter alone excludes nobody
  });
  $("#panic-cancel").addEventListener("click", () => dialog.close());
  $("#panic-confirm").addEventListener("click", async () => {
    try {
      const exclusion = await api.request("POST", "/panic-button", { body: { confirmed: true } });
      $("#panic-msg").textContent = t("panicDone", { when: formatWhen(exclusion.excluded_until) });
      showExclusion(exclusion);
      dialog.close();
    } catch (error) {
      dialog.close();
      handleError(error);
    }
  });
}
