// The round details page's replay (server page: starfever/server/api/round_details_page.py,
// ADR 0060): the round's stored events, from the page's own signed address (events.json),
// played by the player client's own modules (reels, Hold & Cash board, round player,
// timeline, texts), never a copy. No log-in, nothing but this one round; the page's facts are
// rendered on the server and read the same without this script.
import { ReelView } from "./reels.js";
import { HoldBoard } from "./holdcash.js";
import { RoundPlayer } from "./player.js";
import { prizeLabel } from "./market_de.js";
import { installSprite, setSymbolNames } from "./symbols.js";
import { has, t, useLanguage } from "./i18n.js";
import { formatCents } from "./money.js";
import { countWin, setWin, winFormat } from "./winmeter.js";
import { buildTimeline } from "./timeline.js";

const $ = (sel) => document.querySelector(sel);
const section = $("#replay");
// what the browser tests read: the scenes played (the round player's snapshots), how often
const hooks = { log: [], played: 0, ready: false, failed: null };
window.__replay = hooks;

const banner = {
  el: null,
  show(title, text, kind = "") {
    this.el.className = `banner ${kind}`;
    const strong = document.createElement("strong");
    strong.textContent = title;
    this.el.replaceChildren(strong);
    if (text) {
      const span = document.createElement("span");
      span.textContent = text;
      this.el.append(span);
    }
    this.el.hidden = false;
  },
  hide() { this.el.hidden = true; },
};

async function main() {
  const lang = document.documentElement.lang === "de" ? "de" : "en";
  useLanguage(lang);
  const answer = await fetch(section.dataset.events, { credentials: "omit" });
  if (!answer.ok) throw new Error(`events.json: ${answer.status}`);
  const { round, game, test_mode: testMode } = await answer.json();
  const money = (cents) => formatCents(cents, lang, round.currency || "EUR");  // the round's
  winFormat(money);
  const symbolName = (code) => {
    const s = game.symbols.find((x) => x.code === code);
    if (s) return s.name[lang] || s.name.en;
    return has(`sym_${code}`) ? t(`sym_${code}`) : code;  // the Hold & Cash symbols
  };
  installSprite($("#sprite-host"));
  setSymbolNames(symbolName);
  banner.el = $("#banner");
  const reels = new ReelView($("#reels"));
  const board = new HoldBoard($("#holdboard"), { format: money,
    prizeLabel: (kind) => prizeLabel(game, kind) });
  const player = new RoundPlayer({
    reels, board, banner, sticky: $("#sticky"), paylines: $("#paylines"), winLine: $("#win-line"),
    setWin, countWin, celebrate: () => Promise.resolve(), celebrateDone: () => {},
    t, money, symbolName, winText: () => $("#win").textContent, log: hooks.log, game,
  });
  // ?speed= is a test hook, as on the player's page: only a test-mode server's page honours it
  const speed = testMode ? Number(new URLSearchParams(location.search).get("speed")) : 0;
  if (speed > 0) player.speed = speed;
  // at rest: the round's first reels, and its win as stored
  const first = buildTimeline(round.events).find((s) => s.kind === "reveal");
  if (first) reels.render(first.grid);
  setWin(0);
  const button = $("#replay-play");
  button.addEventListener("click", async () => {
    button.disabled = true;
    banner.hide();
    board.root.classList.remove("ended");
    $("#win-line").textContent = "\u00a0";
    setWin(0);
    // a recalled round: shown, never celebrated, no sound
    await player.play(round, { quiet: true });
    hooks.played += 1;
    button.textContent = section.dataset.again;
    button.disabled = false;
  });
  section.hidden = false;
  button.disabled = false;
  hooks.ready = true;
}

if (section) {
  main().catch((error) => {
    hooks.failed = String(error);  // the page's facts stand on their own: the replay stays hidden
  });
}
