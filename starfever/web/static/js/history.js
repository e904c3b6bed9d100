// History (game recall): the player's rounds, newest first, paged; selecting one replays it.
import { formatWhen, t } from "./i18n.js";

const $ = (sel) => document.querySelector(sel);

export function historyViews({ api, money, errorText }) {
  const state = { historyBefore: null };
  function featureLabel(feature) {
    if (feature === "star_wild") return t("featureStarWild");
    if (feature === "hold_and_cash") return t("featureHoldAndCash");
    return "";
  }

  async function openHistory() {
    $("#history-list").innerHTML = "";
    state.historyBefore = null;
    $("#dlg-history").showModal();
    await loadHistory();
  }

  async function loadHistory() {
    const list = $("#history-list");
    try {
      const page = await api.rounds(20, state.historyBefore);
      if (!page.rounds.length && !list.children.length) {
        list.innerHTML = `<li class="empty">${t("historyEmpty")}</li>`;
      }
      for (const r of page.rounds) {
        const li = document.createElement("li");
        const feature = featureLabel(r.feature);
        li.innerHTML = `<button type="button" data-round="${r.id}" class="${r.total_win > 0 ? "won" : ""}">
          <span class="h-id">#${r.id}</span>
          <span class="h-when">${formatWhen(r.created_at)}</span>
          <span class="h-bet">${t("bet")} ${money(r.total_bet)}</span>
          <span class="h-win">${t("win")} ${money(r.total_win)}</span>
          ${feature ? `<span class="h-feature ${r.feature}">${feature}</span>` : ""}
          ${r.payment === "unpaid" ? `<span class="h-unpaid">${t("winUnpaid")}</span>` : ""}
          ${r.free_round ? `<span class="h-free" data-testid="history-free">${t("freeHistory")}</span>` : ""}</button>`;
        if (r.details_url) {  // the round's signed details page (server-rendered, no log-in)
          const link = document.createElement("a");
          link.className = "h-details";
          link.href = r.details_url;
          link.target = "_blank";
          link.rel = "noopener";
          link.textContent = t("roundDetails");
          li.appendChild(link);
        }
        list.appendChild(li);
      }
      state.historyBefore = page.next_before;
      $("#history-more").hidden = !page.next_before;
    } catch (error) {
      list.innerHTML = `<li class="empty error">${errorText(error)}</li>`;
    }
  }

  return { openHistory, loadHistory };
}
