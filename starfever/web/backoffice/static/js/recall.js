// Round recall in the back office: the player client's own modules (reels, Hold & Cash board,
// round player, timeline, texts) replay a stored round here, imported from the player
// client's versioned address — the very code the player saw the round with, not a copy.

const $ = (sel) => document.querySelector(sel);

let lib = null;
let player = null;
let game = null;
let current = null;

async function load() {
  if (lib) return lib;
  const base = document.documentElement.dataset.playerAssets;
  const [reels, holdcash, roundPlayer, symbols, i18n, money] = await Promise.all([
    import(`${base}/js/reels.js`), import(`${base}/js/holdcash.js`),
    import(`${base}/js/player.js`), import(`${base}/js/symbols.js`),
    import(`${base}/js/i18n.js`), import(`${base}/js/money.js`)]);
  lib = { ...reels, ...holdcash, ...roundPlayer, ...symbols, ...i18n, ...money };
  return lib;
}

function setWin(cents) {
  const el = $("#win");
  el.textContent = lib.formatCents(cents || 0, lib.lang());
  el.dataset.cents = String(cents || 0);
}

const banner = {
  el: null,
  show(title, text, kind = "") {
    this.el.className = `banner ${kind}`;
    this.el.replaceChildren();
    const strong = document.createElement("strong");
    strong.textContent = title;
    this.el.append(strong);
    if (text) {
      const span = document.createElement("span");
      span.textContent = text;
      this.el.append(span);
    }
    this.el.hidden = false;
  },
  hide() { this.el.hidden = true; },
};

/** Make the stage once: the same parts the player's page gives its round player. */
export async function prepare(api) {
  await load();
  if (player) return;
  lib.installSprite($("#sprite-host"));
  game = await api.get("/game");
  banner.el = $("#banner");
  const money = (cents) => lib.formatCents(cents, lib.lang());
  const reels = new lib.ReelView($("#reels"));
  const board = new lib.HoldBoard($("#holdboard"), { format: money });
  const log = [];
  player = new lib.RoundPlayer({
    reels, board, banner, sticky: $("#sticky"), paylines: $("#paylines"), winLine: $("#win-line"),
    setWin, countWin: (_from, to) => setWin(to), celebrate: () => Promise.resolve(),
    celebrateDone: () => {}, t: lib.t, money,
    symbolName: (code) => game.symbols.find((s) => s.code === code)?.name.en || code,
    winText: () => $("#win").textContent, log, game,
  });
  // ?speed= is a test hook, as on the player's page: only a test-mode server's page honours it
  const speed = game.test_mode ? Number(new URLSearchParams(location.search).get("speed")) : 0;
  if (speed > 0) player.speed = speed;
  window.__backoffice = { log, played: 0 };
}

/** Replay ``round`` (a RoundPublic) on the stage. */
export async function replay(round, { instant = false } = {}) {
  current = round;
  $("#holdboard").classList.remove("ended");
  $("#win-line").textContent = "\u00a0";
  setWin(0);
  await player.play(round, { instant });
  window.__backoffice.played += 1;
}

export function again() { if (current) replay(current); }
export function skip() { if (player) player.skip(); }
