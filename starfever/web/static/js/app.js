// Star Fever in the browser: wiring of the views to the game server. The server decides every
// outcome; the page asks, then shows.
import { Api, ApiError, newKey } from "./api.js";
import { currencyCode, formatCents, parseAmount, parseEuros, setCurrency } from "./money.js";
import { formatWhen, has, initialLanguage, lang, setLanguage, setMarketWording, t } from "./i18n.js";
import { installSprite, setSymbolNames } from "./symbols.js";
import { ReelView, setReelLabels } from "./reels.js";
import { HoldBoard } from "./holdcash.js";
import { RoundPlayer } from "./player.js";
import { renderPaytable, renderRules } from "./pages.js";
import { buildTimeline, finalGrid } from "./timeline.js";
import { Sound } from "./sound.js";
import { Celebration } from "./celebrate.js";
import { allowedBetCount, anticipates, bigWinTier, celebrated } from "./market.js";
import { exitUrl, launchFromUrl, operatorMode } from "./launch.js";
import { protectionViews } from "./protection.js";
import { historyViews } from "./history.js";
import { PENDING_KEY, SCENE_KEY, recallViews } from "./recall.js";
import { errorText } from "./errors.js";
import { SPIN_KEY, sendSpin, spinInDoubt, spinInDoubtAfter } from "./spinrequest.js";
import { countWin, setWin, winFormat } from "./winmeter.js";
import { BalanceBook, watchCredit } from "./balance.js";
import { TabChannel } from "./tabs.js";
import { SessionClock } from "./sessionclock.js";
import { betPicker } from "./betpicker.js";
import { demoFromUrl, installDemo, noteMaintenance, offerDemo, sessionEndText } from "./demo.js";
import { hasPool, installPanicButton, presentPrizes, prizeLabel } from "./market_de.js";
import { FreeRounds } from "./freerounds.js";  // free rounds (issue 36): freerounds.js

const $ = (sel) => document.querySelector(sel);
const RESEND_MS = 4000;
const BET_KEY = "sf.betIndex";
const POOL_POLL_MS = 5000;
// the wallet is read every few seconds while the page is visible (a deposit shows at once),
// never while it is hidden, and at once when it comes back
const WALLET_POLL_MS = 5000;
const START_GRID = [
  ["SEVEN", "BELL", "CHERRY"], ["DIAMOND", "SEVEN", "LEMON"], ["BAR", "COIN", "SEVEN"],
  ["MELON", "WILD", "GOLD"], ["CHERRY", "JACKPOT", "BELL"],
];

const api = new Api();
installDemo(api, { t });  // demo play (ADR 0066): a demo token plays on /demo, DEMO on screen
const freeRounds = new FreeRounds(api, (grant) => spin(grant));  // a grant's button plays one
const sound = new Sound();
const state = {
  game: null, balance: null, betIndex: 0, busy: false, recall: false, pool: null, excluded: false,
  skipAsked: false,
  lastRound: null, netResult: null, lastSpinAt: 0, stakeCap: null,
};
/** How many bet classes this player may pick: the market's cap and the player's (ADR 0077). */
const betCount = () => allowedBetCount(state.game, state.stakeCap);
// What tests and the screenshot script read (and, against a test-mode server only, the draws
// they force, or a scene to hold the picture at); nothing in here lets the page decide an outcome.
const hooks = { log: [], ready: false, rounds: 0, nextTestDraws: null, state, holdAt: null, held: false,
  sound, announced: [] };

/** Stop after the scene ``hooks.holdAt`` ({kind, index?}) names, until ``hooks.release()``. */
function holdAfter(scene) {
  const at = state.game?.test_mode ? hooks.holdAt : null;
  if (!at || at.kind !== scene.kind || (at.index && at.index !== scene.index)) return null;
  hooks.holdAt = null;
  hooks.held = true;
  return new Promise((resolve) => {
    hooks.release = () => { hooks.held = false; resolve(); };
  });
}
window.starfever = hooks;

const money = (cents) => formatCents(cents, lang());
const market = () => state.game?.market || {};
winFormat(money);

const tabs = new TabChannel({
  heard: (message) => { if (book.heard(message) && !state.busy) showBalance(book.cents); },
  active: () => !$("#game").hidden,
});
let reels;
let board;
let player;

// ---------------------------------------------------------------- small views

const banner = {
  el: null,
  show(title, text, kind = "") {
    this.el.className = `banner ${kind}`;
    this.el.innerHTML = `<strong>${title}</strong>${text ? `<span>${text}</span>` : ""}`;
    this.el.hidden = false;
  },
  hide() { this.el.hidden = true; },
};

function status(text, kind = "error") {
  const el = $("#status");
  el.textContent = text || "";
  el.className = `status ${text ? kind : ""}`;
}

/** Say ``text`` once to assistive technology (the one live region of a round's result: the
 * meters that count up are not live, so nothing is read out frame by frame). */
function announce(text) {
  const el = $("#announcer");
  el.textContent = text;
  hooks.announced.push(text);
}

function toast(text) {
  const el = $("#toast");
  el.textContent = text;
  el.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { el.hidden = true; }, 3500);
}

export { errorText };  // where the back office and older callers import it from

// The balance: every answer is offered to the book, which keeps the newest (balance.js); the
// meter shows the book's, except during this tab's own round (its balance before minus the bet).
const book = new BalanceBook();
const clock = new SessionClock(document.querySelector("#session-clock"));
function showBalance(cents) {
  state.balance = cents;
  $("#balance").textContent = cents === null ? "–" : money(cents);
  $("#balance").dataset.cents = cents === null ? "" : String(cents);
}
function offered(accepted) {
  if (accepted) tabs.tell({ type: "balance", ...book.message() });
  if (!state.busy) showBalance(book.cents);
}
const roundBalance = (cents, roundId, at) => offered(book.offerRound(cents, roundId, at));
const walletBalance = (cents, at) => offered(book.offerWallet(cents, at));


function lineBet() { return state.game.bet_classes[state.betIndex]; }
function totalBet() { return lineBet() * state.game.line_count; }

function showBet() {
  if (!state.game) return;
  $("#total-bet").textContent = money(totalBet());
  $("#total-bet").dataset.cents = String(totalBet());
  $("#line-bet").textContent = t("lineBetOf", { n: state.game.line_count, bet: money(lineBet()) });
  $("#bet-down").disabled = state.busy || state.betIndex === 0;
  $("#bet-up").disabled = state.busy || state.betIndex >= betCount() - 1;
  $("#bet-pick").disabled = state.busy;
  showPrizes(totalBet());
  $("#bet-down").setAttribute("aria-label", `${t("bet")} −`);
  $("#bet-up").setAttribute("aria-label", `${t("bet")} +`);
}

/** What the Hold & Cash jackpots pay at ``total`` (the live bet, or a recalled round's). */
function showPrizes(total) {
  const hc = state.game.hold_and_cash;
  for (const [id, x] of [["#pays-minor", hc.minor], ["#pays-major", hc.major], ["#pays-mega", hc.mega]]) {
    $(id).textContent = money(x * total);
    $(id).dataset.cents = String(x * total);
  }
}

const bets = betPicker({ money, current: () => state.betIndex, pick: (i) => changeBet(i - state.betIndex),
  bets: () => state.game.bet_classes.slice(0, betCount()).map((b) => b * state.game.line_count) });

function setBusy(busy) {
  state.busy = busy;
  document.body.classList.toggle("busy", busy);
  // during a round Spin is the stop button where the market allows slam stop, else disabled
  const stop = busy && Boolean(market().slam_stop) && state.recall !== "playing";
  $("#spin").disabled = (busy && !stop) || state.excluded;
  $("#spin").setAttribute("aria-busy", String(busy));
  $("#spin").classList.toggle("stop", stop);
  $("#spin-label").textContent = t(stop ? "stopReels" : "spin");
  freeRounds.setBusy(busy);
  $("#skip").hidden = !busy || !market().slam_stop;  // a market without slam stop: no Skip
  showBet();
  // a disabled Spin loses the keyboard focus to the page: give it back when play can go on
  if (!busy && (document.activeElement === document.body || !document.activeElement)
      && !$("#game").hidden && !document.querySelector("dialog[open]")) {
    $("#spin").focus();
  }
}

function setPool(cents) {
  if (!Number.isInteger(cents)) return;
  const el = $("#pool-amount");
  if (state.pool !== null && cents !== state.pool) {
    el.classList.remove("tick");
    void el.offsetWidth;
    el.classList.add("tick");
  }
  state.pool = cents;
  el.textContent = money(cents);
  el.dataset.cents = String(cents);
}

function symbolName(code) {
  const s = state.game?.symbols.find((x) => x.code === code);
  if (s) return s.name[lang()] || s.name.en;
  return has(`sym_${code}`) ? t(`sym_${code}`) : code;  // the Hold & Cash symbols
}

// ---------------------------------------------------------------- celebration

// a show's sounds: the intro's roll (a big win, which has none, starts on the win cue), and
// the fanfare of its kind at the final sting
const celebration = new Celebration({ money, speed: () => player.speed, hurried: () => player.hurried,
  sting: (act, kind) => sound.play(act === "intro" ? "showIntro" : act === "count" ? "win"
    : kind === "bigwin" ? "bigwin" : "jackpot") });
hooks.celebration = celebration;
function closeCelebration(hide = true) { celebration.done(hide); }

// ---------------------------------------------------------------- rounds

function speedFactor() {
  // ?speed= is a test hook: only a test-mode server's page honours it
  const param = state.game?.test_mode ? Number(new URLSearchParams(location.search).get("speed")) : 0;
  // reduced motion: the same scenes in half the time (nothing left out)
  const calm = window.matchMedia?.("(prefers-reduced-motion: reduce)").matches ? 0.5 : 1;
  if (param > 0) return param * calm;
  return (market().turbo && $("#turbo").checked ? 0.35 : 1) * calm;
}

function resetStage() {
  endRecall();
  banner.hide();
  if (celebration.open) celebration.hide();
  celebration.last = null;  // what this round shows
  celebration.shows = [];
  player.stopPresenting();  // a new Spin cuts the last win's presentation short
  player.clearLines();
  $("#recall-ribbon").hidden = true;
  $("#win-line").innerHTML = "&nbsp;";
  $("#holdboard").dataset.respin = "";
  if (!$("#holdboard").hidden && reels.grid) {
    board.show(false);
    reels.root.hidden = false;
  }
}

let resendTimer = 0;
function resendLater() {
  clearTimeout(resendTimer);
  resendTimer = setTimeout(() => { if (!state.busy) resumeSpin(); }, RESEND_MS);
}

async function spin(grant = null) {
  if (state.busy || !state.game || state.recall === "playing" || state.excluded) return;
  if (!$("#dlg-reality").open && document.querySelector("dialog[open]")) return;
  if (spinInDoubt()) { await resumeSpin(); return; }  // no new bet before the last one's fate
  const request = { user: localStorage.getItem("sf.user"), key: newKey(), lineBet: lineBet(),
    draws: hooks.nextTestDraws };  // one key per click; retries of this click reuse it
  // a free round (freerounds.js): at its grant's bet, on the grant's own button only
  if (grant) Object.assign(request, { lineBet: grant.line_bet, grantId: grant.id });
  hooks.nextTestDraws = null;
  localStorage.setItem(SPIN_KEY, JSON.stringify(request));
  await playSpin(request, { fresh: true });
}

/** Send the spin whose answer never arrived again, and show its round. */
async function resumeSpin() {
  const request = spinInDoubt();
  if (!request || state.busy) return;
  await playSpin(request, { fresh: false });
}

/** Slam stop (Spin, Skip or Space during a round, where the market allows it): the reels land
 * at once and the rest plays at a fifth of its time, every feature and show still seen; from
 * the first moment, also while the answer is awaited. */
function skipRound() {
  if (!state.busy || !market().slam_stop || state.recall === "playing") return;
  state.skipAsked = true;
  player.hurry();
}

/** The Spin button: a new round, or during one the stop button. */
function spinOrStop() {
  if (state.busy) skipRound();
  else spin();
}

/** Resolve once ``performance.now()`` has reached ``moment`` (never a millisecond early: a
 * timer's rounding is waited out). */
async function until(moment) {
  while (performance.now() < moment) {
    await new Promise((r) => setTimeout(r, Math.ceil(moment - performance.now())));
  }
}

async function playSpin(request, { fresh }) {
  state.skipAsked = false;
  setBusy(true);
  status("");
  resetStage();
  state.recall = false;
  setWin(0);
  // the market's least time per round: the next round waits until it has passed (the server
  // refuses an earlier one, round_too_soon)
  const minRound = market().min_round_ms || 0;
  if (minRound) await until(state.lastSpinAt + minRound);
  state.lastSpinAt = performance.now();
  reels.startSpin();
  sound.play("spin");
  const started = performance.now();
  let response = null;
  try {
    response = await sendSpin(api, request);
  } catch (error) {
    reels.render(reels.grid || START_GRID);
    setBusy(false);
    if (spinInDoubtAfter(error)) {
      status(t("spinInDoubt"));  // kept: sent again until the server answers
      resendLater();
      return;
    }
    localStorage.removeItem(SPIN_KEY);  // refused: nothing was played
    handleError(error);
    if (request.grantId && String(error.code).startsWith("grant_")) freeRounds.refused();
    // a refusal may mean the page's balance is old (another tab, a withdrawal): read it again
    readWallet().then(() => {
      if (error.code === "insufficient_funds" && state.balance !== null
          && state.balance < state.game.bet_classes[0] * state.game.line_count) {
        status(t(operatorMode() ? "fundsEmptyOperator" : "fundsEmpty", { balance: money(state.balance) }));
      }
    });
    return;
  }
  clearTimeout(resendTimer);
  const answeredAt = Date.now();
  const round = response.round;
  localStorage.setItem(PENDING_KEY, String(round.id));
  localStorage.removeItem(SPIN_KEY);
  hooks.rounds += 1;
  showBalance(round.balance_before - (round.free_round ? 0 : round.total_bet));  // free: no stake
  const minSpin = 450 * player.speed - (performance.now() - started);
  if (minSpin > 0 && !state.skipAsked) await new Promise((r) => setTimeout(r, minSpin));
  player.speed = speedFactor();
  if (!fresh) {
    const ribbon = $("#recall-ribbon");
    ribbon.textContent = t("resumed", { id: round.id });
    ribbon.hidden = false;
    ribbon.dataset.round = String(round.id);
  }
  try {
    await player.play(round, { spinning: true, hurried: state.skipAsked });
    // a round lasts the market's minimum, also when skipped: Spin comes back only then
    if (minRound) await until(state.lastSpinAt + minRound);
  } finally {
    state.lastRound = round;
    state.busy = false;  // the meter may show the book's balance again
    if (round.payment === "pending") creditPending(round);  // the wallet has not got the win yet
    else roundBalance(response.balance, round.id, answeredAt);
    showBalance(book.cents ?? response.balance);
    setWin(round.total_win, { glow: celebrated(round.total_win, round.total_bet, market()) });
    setPool(round.pool_after);
    localStorage.removeItem(PENDING_KEY);
    localStorage.removeItem(SCENE_KEY);
    if (response.reality_check) noteRealityCheck(response.reality_check, { at: answeredAt });
    setBusy(false);
    announce(round.total_win
      ? t("announceWin", { win: money(round.total_win), balance: money(state.balance) })
      : t("announceNoWin", { balance: money(state.balance) }));
    if (round.payment === "unpaid") status(t("winUnpaid"));  // the operator refused the credit
    player.present();  // the final win's lines, one by one, until the next Spin
    if (response.free_round) freeRounds.played(response.free_round);
  }
}

function handleError(error) {
  if (error instanceof ApiError && error.status === 401) {
    api.setToken(null);
    // the operator ended it, another session replaced it, the panic button: say why
    showAuth(has(`err_${error.code}`) ? errorText(error) : sessionEndText(error, { t, errorText }));
    return;
  }
  if (error instanceof ApiError && error.code === "self_excluded") {
    api.exclusion().then(showExclusion, () => {});
  }
  if (error instanceof ApiError && error.code === "reality_check_due") {
    status(errorText(error));
    api.realityCheck().then(openRealityCheck, handleError);  // play goes on once acknowledged
    return;
  }
  status(errorText(error));
}

// ---------------------------------------------------------------- session

function showAuth(message = "") {
  stopPolling();
  if (operatorMode()) {  // the operator's player never logs in here: back to the operator
    $("#game").hidden = false;
    setBusy(false);
    $("#spin").disabled = true;
    status(`${message || t("sessionEnded")} ${t("operatorRelaunch")}`);
    return;
  }
  $("#game").hidden = true;
  $("#auth").hidden = false;
  $("#auth-error").textContent = message;
  status("");  // the last player's message is not the next one's
  $("#toast").hidden = true;
  for (const d of document.querySelectorAll("dialog[open]")) d.close();
  $("#auth-username").focus();
}

let authMode = "login";
function setAuthMode(mode) {
  authMode = mode;
  $("#tab-login").setAttribute("aria-selected", String(mode === "login"));
  $("#tab-signup").setAttribute("aria-selected", String(mode === "signup"));
  for (const el of document.querySelectorAll(".signup-only")) el.hidden = mode !== "signup";
  $("#auth-birth").required = mode === "signup";  // players must be 18: the server needs it
  $("#auth-submit").dataset.i18n = mode;
  $("#auth-submit").textContent = t(mode);
  $("#auth-password").autocomplete = mode === "signup" ? "new-password" : "current-password";
}

async function submitAuth(event) {
  event.preventDefault();
  const username = $("#auth-username").value.trim().toLowerCase();
  const password = $("#auth-password").value;
  $("#auth-error").textContent = "";
  $("#auth-submit").disabled = true;
  try {
    if (authMode === "signup") {
      await api.register(username, password, $("#auth-birth").value);
      toast(t("signupDone"));
    }
    await api.login(username, password);
    localStorage.removeItem("sf.operator");  // a password log-in: not the operator's player
    $("#auth-password").value = "";
    await enterGame(username);
  } catch (error) {
    $("#auth-error").textContent = errorText(error);
  } finally {
    $("#auth-submit").disabled = false;
  }
}

async function enterGame(username = localStorage.getItem("sf.user")) {
  if (username) localStorage.setItem("sf.user", username);
  const sentAt = Date.now();
  const wallet = await api.wallet();
  useCurrency(wallet);
  $("#auth").hidden = true;
  $("#game").hidden = false;
  $("#game").dataset.user = username || "";
  book.forget();
  clock.reset();
  walletBalance(wallet.balance, sentAt);
  // the player's own stake cap (a young adult's in the uk market): the ladder stops there
  state.stakeCap = wallet.max_stake_cents ?? null;
  state.betIndex = Math.min(state.betIndex, betCount() - 1);
  showBet();
  noteRealityCheck(wallet.reality_check, { quiet: true });
  // in operator mode self-exclusion and limits are the operator's: its wallet refuses a bet
  if (!operatorMode()) showExclusion(await api.exclusion());
  tabs.tell({ type: "hello" });
  startPolling();
  pollPool();
  await recoverInterrupted();
  await resumeSpin();
  freeRounds.refresh();  // the grants the player may play now
  $("#spin").focus();
}

/** The session's currency (ADR 0076): every amount is shown in it, and the bet picker offers
 * its ladder of line bets (minor units) as the wallet answer names them. */
function useCurrency(wallet) {
  setCurrency(wallet.currency);
  $("#limit-currency").textContent = currencyCode();  // a wallet's limit is in its currency
  if (Array.isArray(wallet.line_bets) && wallet.line_bets.length) {
    const before = lineBet();
    state.game.bet_classes = wallet.line_bets;
    const kept = wallet.line_bets.indexOf(before);
    state.betIndex = kept >= 0 ? kept : 0;
  }
  showBet();
}

async function logout() {
  try { await api.logout(); } catch { /* the token is dropped either way */ }
  if (operatorMode()) { location.assign(exitUrl()); return; }  // "stop playing": back to the operator
  showAuth();
}

// ---------------------------------------------------------------- polling

let timers = [];
function startPolling() {
  stopPolling();
  timers.push(setInterval(pollPool, POOL_POLL_MS));
  timers.push(setInterval(pollWallet, WALLET_POLL_MS));
  document.addEventListener("visibilitychange", pollWallet);
  timers.push(setInterval(() => clock.tick(), 1000));
  timers.push(setInterval(() => { tabs.tell({ type: "here" }); tabs.show(); }, 30_000));
}
function stopPolling() {
  timers.forEach(clearInterval);
  timers = [];
  document.removeEventListener("visibilitychange", pollWallet);
}

async function pollPool() {
  if (!hasPool(state.game)) return;  // a model without the €€€: no meter to keep
  try {
    const pool = await api.jackpot(currencyCode());
    if (!state.busy) setPool(pool.pool);
  } catch { /* the meter keeps its last value */ }
}

/** Read the wallet (also during a round: the book keeps it for the round's end). */
async function readWallet() {
  if ($("#game").hidden || !api.token) return;
  const sentAt = Date.now();
  try {
    const wallet = await api.wallet();
    walletBalance(wallet.balance, sentAt);
    noteRealityCheck(wallet.reality_check);
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) handleError(error);
  }
}

function pollWallet() {
  if (!document.hidden && !state.busy) readWallet();
}

/** The round's win is on its way to the operator's wallet (its credit is pending): the page
 * shows the wallet's balance and says so, until the round is paid (or refused: unpaid). */
function creditPending(round) {
  watchCredit(round, { api, notice: $("#credit-notice"), readWallet, visible: () => !$("#game").hidden,
    text: t("creditPending", { win: money(round.total_win) }), refused: () => status(t("winUnpaid")) });
}

/** The session's net position (wins − bets), as the server counts it for the reality check. */
function showNet() {
  const el = $("#net-position");
  el.hidden = !market().show_net_position || state.netResult === null;
  if (state.netResult === null) return;
  el.textContent = `${t("netPosition")} ${money(state.netResult)}`;
  el.dataset.cents = String(state.netResult);
  el.classList.toggle("neg", state.netResult < 0);
}

// ---------------------------------------------------------------- player protection and history

/** A reality check's figures from the server (``at``: when its answer arrived). */
function noteRealityCheck(rc, { quiet = false, at = Date.now() } = {}) {
  if (!rc) return;
  clock.note(rc.elapsed_seconds, at);
  state.netResult = rc.net_result;
  showNet();
  if (rc.due && !quiet && !state.busy) openRealityCheck(rc);
  else if (rc.due && quiet) setTimeout(() => openRealityCheck(rc), 50);
}

function showExclusion(exclusion) {
  const el = $("#exclusion-state");
  el.textContent = exclusion.excluded
    ? t("excludedUntil", { when: formatWhen(exclusion.excluded_until) }) : t("notExcluded");
  el.classList.toggle("excluded", exclusion.excluded);
  document.body.classList.toggle("excluded", exclusion.excluded);
  // the server refuses every bet meanwhile; the page says so and offers no Spin
  state.excluded = exclusion.excluded;
  const notice = $("#exclusion-notice");
  notice.textContent = exclusion.excluded
    ? t("excludedNotice", { when: formatWhen(exclusion.excluded_until) }) : "";
  notice.hidden = !exclusion.excluded;
  setBusy(state.busy);
}

const protection = protectionViews({ api, money, errorText, handleError, noteRealityCheck,
  showExclusion });
const { openRealityCheck, acknowledgeReality, openProtection, saveLimit, selfExclude } = protection;
const { openHistory, loadHistory } = historyViews({ api, money, errorText });
const { replay, endRecall, recoverInterrupted } = recallViews({
  api, state, money, t, market, handleError, setBusy, resetStage, setWin, showBalance, showBet, showPrizes,
  announce, speedFactor, player: () => player, settled: (round) => {
    roundBalance(round.balance_after, round.id, 0);  // a wallet read since is newer
    return book.cents ?? round.balance_after;
  } });

// ---------------------------------------------------------------- pages

function renderPages() {
  if (!state.game) return;
  const opts = { t, lang: lang(), money, lineBet: lineBet() };
  renderPaytable($("#paytable-body"), state.game, opts);
  renderRules($("#rules-body"), state.game, opts);
  // the full game conditions, generated from the running model, in the page's language
  $("#conditions-a").href = `/api/v1/game/conditions/${lang()}`;
}

/** Apply the market profile: what it does not allow is not offered. */
function applyMarket() {
  const m = market();
  document.body.dataset.market = m.name || "";
  setMarketWording(m.name);  // British English in the uk market ("stake", "net position")
  setLanguage(lang());
  $(".turbo").hidden = !m.turbo;
  if (!m.turbo) $("#turbo").checked = false;
  $("#session-clock").hidden = m.show_session_clock === false;
  state.betIndex = Math.min(state.betIndex, betCount() - 1);
  showNet();
  presentPrizes(state.game);  // no €€€ meter without a pool; prizes named by multiplier
  installPanicButton(state.game, { api, showExclusion, handleError });
}

function showSound() {
  $("#sound-toggle").setAttribute("aria-pressed", String(sound.on));
  $("#sound-toggle").dataset.i18nTitle = sound.on ? "soundOff" : "soundOn";
  $("#sound-toggle").title = t(sound.on ? "soundOff" : "soundOn");
  $("#sound-label").textContent = t(sound.on ? "soundOnLabel" : "soundOffLabel");
  $("#volume").value = String(Math.round(sound.volume * 100));
  $("#volume").setAttribute("aria-label", t("volume"));
  $("#volume").disabled = !sound.on;
}

function showPageTab(which) {
  $("#tab-paytable").setAttribute("aria-selected", String(which === "paytable"));
  $("#tab-rules").setAttribute("aria-selected", String(which === "rules"));
  $("#paytable-body").hidden = which !== "paytable";
  $("#rules-body").hidden = which !== "rules";
  $("#conditions-link").hidden = which !== "rules";
}

function changeLanguage(code) {
  setLanguage(code);
  setAuthMode(authMode);
  if (reels.grid && !state.busy) reels.render(reels.grid);  // symbol names in the new language
  else reels.relabel();
  showSound();
  showNet();
  clock.tick();
  showBet();
  if (state.balance !== null) showBalance(state.balance);
  if (state.pool !== null) setPool(state.pool);
  setWin(Number($("#win").dataset.cents || 0));
  renderPages();
  freeRounds.relabel();
}

// ---------------------------------------------------------------- start

function bind() {
  $("#auth-form").addEventListener("submit", submitAuth);
  $("#tab-login").addEventListener("click", () => setAuthMode("login"));
  $("#tab-signup").addEventListener("click", () => setAuthMode("signup"));
  for (const b of document.querySelectorAll("[data-lang]")) {
    b.addEventListener("click", () => changeLanguage(b.dataset.lang));
  }
  $("#spin").addEventListener("click", spinOrStop);
  $("#skip").addEventListener("click", skipRound);
  $("#bet-down").addEventListener("click", () => changeBet(-1));
  $("#bet-up").addEventListener("click", () => changeBet(1));
  $("#bet-pick").addEventListener("click", () => { if (!state.busy && state.game) bets.open(); });
  $("#turbo").addEventListener("change", () => {
    localStorage.setItem("sf.turbo", $("#turbo").checked ? "1" : "0");
    player.speed = speedFactor();
  });
  $("#logout").addEventListener("click", logout);
  $("#open-paytable").addEventListener("click", () => { renderPages(); showPageTab("paytable"); $("#dlg-paytable").showModal(); });
  $("#tab-paytable").addEventListener("click", () => showPageTab("paytable"));
  $("#tab-rules").addEventListener("click", () => showPageTab("rules"));
  $("#open-history").addEventListener("click", openHistory);
  $("#history-more").addEventListener("click", loadHistory);
  $("#history-list").addEventListener("click", (event) => {
    const button = event.target.closest("button[data-round]");
    if (!button) return;
    $("#dlg-history").close();
    replay(button.dataset.round);
  });
  $("#open-protection").addEventListener("click", openProtection);
  $("#limit-form").addEventListener("submit", saveLimit);
  $("#exclusion-form").addEventListener("submit", selfExclude);
  $("#rc-continue").addEventListener("click", acknowledgeReality);
  $("#rc-history").addEventListener("click", async () => { await acknowledgeReality(); openHistory(); });
  $("#rc-logout").addEventListener("click", async () => { $("#dlg-reality").close(); await logout(); });
  $("#dlg-reality").addEventListener("cancel", (event) => event.preventDefault());
  // Collect speeds a running show up (never cuts it); a show that has ended it takes away
  $("#cel-close").addEventListener("click", () => {
    if (celebration.resolve) celebration.hurry();
    else closeCelebration();
  });
  $("#sound-toggle").addEventListener("click", () => { sound.setOn(!sound.on); showSound(); });
  $("#volume").addEventListener("input", () => { sound.setVolume(Number($("#volume").value) / 100); });
  for (const b of document.querySelectorAll("[data-close]")) {
    b.addEventListener("click", () => b.closest("dialog").close());
  }
  document.addEventListener("keydown", (event) => {
    if (event.code !== "Space" || event.repeat || $("#game").hidden) return;
    const target = event.target;
    if (target.closest("input, select, textarea, button, a, dialog, [contenteditable]")) return;
    event.preventDefault();
    if (!$("#celebrate").hidden) { celebration.hurry(); return; }  // sped up, never left out
    if (state.busy) skipRound();
    else spin();
  });
}

function changeBet(delta) {
  if (state.busy || !state.game) return;
  endRecall();
  const n = betCount();
  state.betIndex = Math.min(n - 1, Math.max(0, state.betIndex + delta));
  localStorage.setItem(BET_KEY, String(state.betIndex));
  showBet();
  renderPages();
}

async function main() {
  installSprite($("#sprite-host"));
  setLanguage(initialLanguage());
  banner.el = $("#banner");
  setSymbolNames(symbolName);
  setReelLabels({ reels: () => t("reelsLabel"), reel: (n) => t("reelN", { n }),
    row: (n, code) => t("rowN", { n, name: symbolName(code) }) });
  reels = new ReelView($("#reels"));
  reels.render(START_GRID);
  board = new HoldBoard($("#holdboard"), { format: money,
    prizeLabel: (kind) => prizeLabel(state.game, kind) });
  player = new RoundPlayer({
    reels, board, banner, sticky: $("#sticky"), paylines: $("#paylines"), winLine: $("#win-line"),
    setWin, countWin, celebrate: (opts, skipping) => celebration.show(opts, skipping),
    celebrateDone: () => closeCelebration(false), celebrationShown: () => celebration.last,
    celebrateHurry: () => celebration.hurry(),
    progress: (i) => { if (!state.recall) localStorage.setItem(SCENE_KEY, String(i)); },
    sound, t, money, symbolName,
    winText: () => $("#win").textContent, log: hooks.log, holdAfter,
    get game() { return state.game; },
  });
  $("#turbo").checked = localStorage.getItem("sf.turbo") === "1";
  player.speed = speedFactor();
  bind();
  setAuthMode("login");
  try {
    state.game = await api.game();
  } catch (error) {
    showAuth(errorText(error));
    hooks.ready = true;
    return;
  }
  player.speed = speedFactor();
  const saved = Number(localStorage.getItem(BET_KEY));
  state.betIndex = Number.isInteger(saved) && saved >= 0 && saved < state.game.bet_classes.length ? saved : 0;
  applyMarket();
  offerDemo(api, state.game.market, { t, enter: () => enterGame(localStorage.getItem("sf.user")),
    fail: (error) => { $("#auth-error").textContent = errorText(error); } });
  noteMaintenance(api, { t, say: (text) => { status(text); $("#auth-error").textContent = text; } });
  player.speed = speedFactor();
  reels.render(reels.grid);  // named in the page's language
  showBet();
  showSound();
  setWin(0);
  try {
    // operator mode: the launch URL's token becomes this page's session, no log-in screen
    if (await launchFromUrl(api, { setLanguage }) || await demoFromUrl(api, { setLanguage })) {
      setAuthMode(authMode);
    }
  } catch (error) {
    applyOperatorMode();
    showAuth(errorText(error));
    hooks.ready = true;
    return;
  }
  applyOperatorMode();
  if (api.token) {
    try {
      await enterGame();
    } catch (error) {
      api.setToken(null);
      showAuth(error instanceof ApiError && error.status === 401 ? t("sessionEnded") : errorText(error));
    }
  } else {
    showAuth();
  }
  hooks.ready = true;
}

/** Operator mode: no log-out, no cashier or limits of ours; the exit leads to the operator. */
function applyOperatorMode() {
  const on = Boolean(operatorMode());
  document.body.classList.toggle("operator-mode", on);
  $("#logout").hidden = on;
  $("#open-protection").hidden = on;
  const exit = $("#exit");
  exit.hidden = !on;
  if (on) exit.href = exitUrl();
}

// Exposed for the browser tests of the pure logic.
hooks.lib = { formatCents, parseEuros, parseAmount, buildTimeline, finalGrid, celebrated, bigWinTier, anticipates };
hooks.speed = () => player.speed;

main();
