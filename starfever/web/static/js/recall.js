// Rounds shown again: game recall (a stored round played back, never celebrated, no money
// moves) and a round a reload cut off: a feature goes on from the scene it was at (the round
// is settled: the rest of its event log is played with the feature's staging), any other
// round shows its result at once. app.js wires them.
import { formatWhen } from "./i18n.js";
import { resumeFrom } from "./player.js";
import { celebrated } from "./market.js";

const $ = (sel) => document.querySelector(sel);
export const PENDING_KEY = "sf.pendingRound";  // the live round under way (its id)
export const SCENE_KEY = "sf.pendingScene";  // the scene it is at

/** ``deps``: the page's state and views (see app.js); ``player()`` the RoundPlayer;
 * ``settled(round)`` offers a resumed round's balance and answers the balance to show. */
export function recallViews(deps) {
  const { api, state, money, t, market, handleError, setBusy, resetStage, setWin, showBalance,
    showBet, showPrizes, announce, speedFactor, player, settled } = deps;

  function ribbonSays(text, round, interrupted = false) {
    const ribbon = $("#recall-ribbon");
    ribbon.textContent = text;
    ribbon.classList.toggle("interrupted", interrupted);
    ribbon.hidden = false;
    ribbon.dataset.round = String(round.id);
    return ribbon;
  }

  /** Play the rest of a live round a reload cut off, from scene ``from``, as it would have played. */
  async function resumeRound(round, from) {
    setBusy(true);
    resetStage();
    state.recall = false;
    setWin(0);
    showBalance(round.balance_before - round.total_bet);
    ribbonSays(t("interruptedResumed", { id: round.id }), round, true);
    player().speed = speedFactor();
    try {
      await player().play(round, { from });
    } finally {
      state.lastRound = round;
      state.busy = false;
      showBalance(settled(round));
      setWin(round.total_win, { glow: celebrated(round.total_win, round.total_bet, market()) });
      setBusy(false);
      announce(round.total_win
        ? t("announceWin", { win: money(round.total_win), balance: money(state.balance) })
        : t("announceNoWin", { balance: money(state.balance) }));
    }
  }

  /** Game recall: play a stored round again (no money moves). */
  async function replay(id, { instant = false, note = null, interrupted = false } = {}) {
    if (state.busy) return;
    let round;
    try {
      round = await api.round(id);
    } catch (error) {
      handleError(error);
      return;
    }
    setBusy(true);
    resetStage();
    state.recall = "playing";
    document.body.classList.add("recalling");
    setWin(0);
    const facts = t("recallFacts", { bet: money(round.total_bet), before: money(round.balance_before),
      after: money(round.balance_after) });
    const unpaid = round.payment === "unpaid" ? ` · ${t("winUnpaid")}` : "";
    const ribbon = ribbonSays(`${note || t("recall", { id: round.id, when: formatWhen(round.created_at) })} · ${facts}${unpaid}`,
      round, interrupted);
    player().speed = speedFactor();
    try {
      showRecalledBet(round);
      await player().play(round, { instant, quiet: true });
    } finally {
      state.recall = true;
      setBusy(false);
      showRecalledBet(round);  // setBusy showed the live bet again
      ribbon.hidden = false;
      announce(ribbon.textContent);
    }
  }

  /** The bet meter (and the jackpots beside the €€€ meter) show the recalled round's own bet
   * until play goes on. */
  function showRecalledBet(round) {
    $("#total-bet").textContent = money(round.total_bet);
    $("#total-bet").dataset.cents = String(round.total_bet);
    $("#line-bet").textContent = t("lineBetOf", { n: state.game.line_count, bet: money(round.line_bet) });
    showPrizes(round.total_bet);
  }

  function endRecall() {
    if (!document.body.classList.contains("recalling")) return;
    document.body.classList.remove("recalling");
    state.recall = false;
    showBet();
  }

  /** A round whose animation a reload cut off: its feature goes on, or its outcome is shown. */
  async function recoverInterrupted() {
    const id = localStorage.getItem(PENDING_KEY);
    const at = Number(localStorage.getItem(SCENE_KEY) ?? -1);
    if (!id) return;
    localStorage.removeItem(PENDING_KEY);
    localStorage.removeItem(SCENE_KEY);
    let round = null;
    try { round = await api.round(id); } catch { /* replay below says why */ }
    const from = round ? resumeFrom(round.events, at) : null;
    if (round && from !== null) { await resumeRound(round, from); return; }
    await replay(id, { instant: true, note: t("interrupted", { id }), interrupted: true });
    if (state.lastRound === null) setWin((await api.round(id).catch(() => ({ total_win: 0 }))).total_win);
  }

  return { replay, endRecall, recoverInterrupted };
}
