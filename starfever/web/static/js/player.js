// Plays a round's scenes on the page at a pleasant pace. "hurry" (Spin or Skip during a round,
// where the market allows slam stop) lands the reels at once and plays every other scene at a
// fifth of its time: a feature's intro, its respins and its result, and every big-win show are
// still seen. "skip" (a round recovered after a reload) jumps to the result. A final line win's
// cycling through its lines runs after the round (``present``), and the next Spin cuts it.
// Every symbol, value and amount shown comes from the server's event log (see timeline.js).
import { setMarkup } from "./markup.js";
import { buildTimeline, linePoints, winCells } from "./timeline.js";
import { symbolSvg } from "./symbols.js";
import { anticipates, bigWinTier, celebrated } from "./market.js";
import { megaKey } from "./market_de.js";

/** The scene a feature's round can be resumed from after a reload (``from``), or null where
 * there is nothing to resume: no feature, or its result already shown. */
export function resumeFrom(events, at) {
  const scenes = buildTimeline(events);
  const kinds = scenes.map((s) => s.kind);
  const start = kinds.findIndex((k) => k === "feature" || k === "star_wild" || k === "hc_start");
  const end = kinds.lastIndexOf("end");
  if (start < 0 || !(at >= 0) || at >= end) return null;
  return at;
}

/** The pace of a hurried round (a fraction of each pause). */
export const HURRY = 0.2;

const LINE_COLORS = ["#ffd23f", "#ff4f9a", "#4fe3ff", "#7dff6a", "#ff8c2e", "#b58cff", "#ff5e5e",
  "#3ef0c0", "#f7f06a", "#ff9ad5", "#6aa8ff", "#c6ff4f", "#ffb36a", "#d08cff", "#5effa0",
  "#ffe08a", "#8af0ff", "#ff7aa8", "#a0ff8a", "#ffc84f"];

export class RoundPlayer {
  constructor(ui) {
    this.ui = ui; // {reels, board, sticky, paylines, banner, winLine, setWin, celebrate, t, money, game, log, sound}
    this.speed = 1;
    this.skipping = false;
    this.hurried = false;
    this.pending = new Set();
    this.presenting = 0;  // the presentation running after the round (its token)
    this.afterglow = null;  // the final line wins, presented after the round
  }

  /** The pause factor now: the pace, and a fifth of it when hurried. */
  get pace() { return this.speed * (this.hurried ? HURRY : 1); }

  /** Resolve after ``ms`` (scaled by speed), or at once when skipping. */
  wait(ms) {
    if (this.skipping || ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const entry = { resolve, end: performance.now() + ms * this.pace };
      entry.timer = setTimeout(() => { this.pending.delete(entry); resolve(); }, ms * this.pace);
      this.pending.add(entry);
    });
  }

  /** Slam stop: the reels land at once, every later pause is a fifth as long, and a pause
   * under way ends sooner; no scene is left out. */
  hurry() {
    if (this.hurried) return;
    this.hurried = true;
    const now = performance.now();
    for (const entry of this.pending) {
      clearTimeout(entry.timer);
      entry.timer = setTimeout(() => { this.pending.delete(entry); entry.resolve(); },
        Math.max(0, entry.end - now) * HURRY);
    }
    this.ui.celebrateHurry?.();
  }

  skip() {
    this.skipping = true;
    for (const entry of this.pending) { clearTimeout(entry.timer); entry.resolve(); }
    this.pending.clear();
    this.ui.celebrateDone?.();
  }

  /** Play ``round`` (a RoundPublic). ``spinning``: the reels already spin (a live spin);
   * ``quiet``: a recalled round (history): shown, never celebrated, no sound. */
  async play(round, { spinning = false, instant = false, quiet = false, hurried = false,
    from = 0 } = {}) {
    const ui = this.ui;
    this.stopPresenting();
    this.skipping = instant;
    this.hurried = hurried;
    this.afterglow = null;
    this.round = round;
    this.quiet = quiet;
    // a win below the stake (and, where the market says so, one equal to it) is no celebration
    this.worthIt = celebrated(round.total_win, round.total_bet, ui.game.market);
    this.cheer = !quiet && this.worthIt;
    this.shownBig = 0;  // the largest amount a full-screen celebration has shown this round
    this.hcText = null;  // what the Hold & Cash collect banner says this round
    this.boostersSeen = new Set();  // the booster kinds this round has staged in full
    const scenes = buildTimeline(round.events);
    ui.log.length = 0;
    let shownWin = 0;
    for (const [i, scene] of scenes.entries()) {
      // a resumed round (``from``: the scene a reload cut off): what came before at once
      if (from) this.skipping = instant || i < from;
      if (!quiet) ui.progress?.(i);
      switch (scene.kind) {
        case "reveal": await this.#reveal(scene, spinning); spinning = false; break;
        case "lines": await this.#lines(scene, shownWin, scenes[i + 1]?.kind === "end"); break;
        case "feature": await this.#feature(scene); break;
        case "star_wild": await this.#starWild(scene); break;
        case "hc_start": await this.#hcStart(scene, round); break;
        case "hc_respin": await this.#hcRespin(scene, round); break;
        case "mega": await this.#mega(scene); break;
        case "hc_end": await this.#hcEnd(scene, shownWin); break;
        case "max_win": await this.#maxWin(scene, shownWin); break;
        case "jackpot": await this.#jackpot(scene, shownWin); break;
        case "end": await this.#end(scene); break;
        default: break;
      }
      shownWin = scene.winSoFar;
      ui.log.push(this.#snapshot(scene));
      if (ui.holdAfter && !this.skipping) await ui.holdAfter(scene);
    }
    this.skipping = false;
    this.hurried = false;
    return scenes;
  }

  /** After the round: the final line wins, one line after another, until the next round. */
  present() {
    const wins = this.afterglow;
    this.afterglow = null;
    if (!wins || wins.length < 2 || this.quiet) return;
    const token = ++this.presenting;
    const polylines = [...this.ui.paylines.querySelectorAll("polyline")];
    let i = 0;
    const step = () => {
      if (token !== this.presenting) return;
      if (i >= wins.length * 2) { this.#focus(null); return; }  // twice round, then all at once
      this.#focus(wins[i % wins.length].line, polylines);
      i += 1;
      this.presentTimer = setTimeout(step, 900 * this.speed);
    };
    step();
  }

  stopPresenting() {
    this.presenting += 1;
    clearTimeout(this.presentTimer);
    this.#focus(null);
  }

  #focus(line, polylines = []) {
    const svg = this.ui.paylines;
    if (line === null) delete svg.dataset.focus;
    else svg.dataset.focus = String(line);
    for (const p of polylines) p.classList.toggle("focus", Number(p.dataset.line) === line);
  }

  #snapshot(scene) {
    const ui = this.ui;
    const shot = { kind: scene.kind, staged: !this.skipping, win: ui.winText(), winLine: ui.winLine.textContent,
      glow: document.querySelector("#win")?.classList.contains("big") || false,
      banner: ui.banner.el && !ui.banner.el.hidden ? ui.banner.el.textContent : null };
    if (scene.kind.startsWith("hc_") || scene.kind === "mega") {
      shot.board = ui.board.snapshot();
      shot.respinsLeft = ui.board.root.dataset.respinsLeft;
      if (scene.index) shot.index = scene.index;
    } else {
      shot.grid = [...ui.reels.root.querySelectorAll(".cell[data-reel]")]
        .map((el) => `${el.dataset.reel},${el.dataset.row}:${el.dataset.symbol}`);
      shot.lines = [...ui.paylines.querySelectorAll("polyline")].map((p) => Number(p.dataset.line));
      shot.framed = [...ui.reels.root.querySelectorAll(".cell.jp-win")]
        .map((el) => `${el.dataset.reel},${el.dataset.row}:${el.dataset.symbol}`);
    }
    if (scene.kind === "jackpot" || scene.kind === "mega" || scene.kind === "end") {
      shot.celebration = ui.celebrationShown?.() || null;
    }
    return shot;
  }

  sound(name) { if (!this.quiet && !this.skipping) this.ui.sound?.play(name); }

  // ---- scenes ----

  async #reveal(scene, spinning) {
    const ui = this.ui;
    ui.board.show(false);
    ui.reels.root.hidden = false;
    this.clearLines();
    if (scene.phase === "star_wild") {
      this.#sticky(scene.held);
      ui.banner.show("RESPIN", "", "respin");
      await this.wait(500);
      ui.banner.hide();
    }
    if (!spinning && !this.skipping) {
      ui.reels.startSpin();
      await this.wait(scene.phase === "star_wild" ? 650 : 350);
    }
    const game = ui.game;
    const before = async (reel) => {  // a feature one coin away: the next reels spin on longer
      if (this.skipping || this.hurried || this.quiet || !anticipates(scene.grid, reel,
        { starWild: game.star_wild_coins, holdAndCash: game.hold_and_cash_coins })) return;
      ui.reels.anticipate(reel);
      this.sound("anticipate");
      await this.wait(650);
    };
    await ui.reels.stop(scene.grid, (ms) => this.wait(ms), {  // slam stop: land at once
      instant: () => this.skipping || this.hurried, before, landed: () => this.sound("stop") });
    this.#sticky([]);
  }

  clearLines() {
    this.ui.paylines.innerHTML = "";
    this.ui.reels.highlight(null);
  }

  #drawLines(wins) {
    const { game } = this.ui;
    setMarkup(this.ui.paylines, wins.map((w) => {
      const color = LINE_COLORS[(w.line - 1) % LINE_COLORS.length];
      return `<polyline data-line="${w.line}" points="${linePoints(game.lines, w.line)}" data-vars="--c:${color}"/>`;
    }).join(""));
    this.ui.reels.highlight(wins.flatMap((w) => winCells(game.lines, w)));
  }

  lineText(w) {
    const { t, money, symbolName } = this.ui;
    const vars = { line: w.line, count: w.count, symbol: symbolName(w.symbol), mult: w.multiplier,
      win: money(w.win) };
    return t(w.multiplier > 1 ? "lineWinMult" : "lineWin", vars);
  }

  async #lines(scene, shownWin, last) {
    // every line at once, with the summary of all of them; a final win's lines are then
    // shown one by one after the round (present), so Spin comes back at once
    const ui = this.ui;
    this.#drawLines(scene.wins);
    ui.countWin(shownWin, scene.winSoFar, this.skipping || !this.cheer ? 0 : 700 * this.pace,
      { glow: this.cheer, tick: this.cheer ? () => this.sound("tick") : null });
    if (this.cheer) this.sound("win");
    this.#summary(scene.wins);
    await this.wait(scene.wins.length > 1 ? 1100 : 900);
    if (last) this.afterglow = scene.wins;
  }

  /** Every line's text; where they do not fit the two lines of the box, the short form that
   * names every line (never a summary that leaves one out). */
  #summary(wins) {
    const ui = this.ui;
    ui.winLine.textContent = wins.map((w) => this.lineText(w)).join(" · ");
    if (wins.length > 1 && ui.winLine.scrollHeight > ui.winLine.clientHeight + 1) {
      ui.winLine.textContent = ui.t("linesSummary", { n: wins.length,
        lines: wins.map((w) => (w.multiplier > 1 ? `${w.line} ×${w.multiplier}` : w.line)).join(", "),
        win: ui.money(wins.reduce((sum, w) => sum + w.win, 0)) });
    }
  }

  async #feature(scene) {
    const ui = this.ui;
    const star = scene.feature === "star_wild";
    ui.reels.highlight(null);
    ui.paylines.innerHTML = "";
    const coins = [];
    const grid = ui.reels.grid || [];
    grid.forEach((col, reel) => col.forEach((s, row) => { if (s === "COIN") coins.push({ reel, row }); }));
    ui.reels.highlight(coins);
    this.sound("feature");
    ui.banner.show(ui.t(star ? "starWild" : "holdAndCash"),
      ui.t(star ? "starWildText" : "holdAndCashText", { n: scene.coins }), star ? "star" : "hc");
    await this.wait(1500);
    ui.banner.hide();
  }

  #sticky(cells) {
    setMarkup(this.ui.sticky, cells.map((c) =>
      `<div class="cell held" data-vars="--r:${c.reel};--w:${c.row}" data-symbol="${c.symbol}">${symbolSvg(c.symbol)}</div>`).join(""));
  }

  async #starWild(scene) {
    const ui = this.ui;
    ui.reels.highlight(scene.wilds);
    for (const w of scene.wilds) {
      if (!this.skipping) ui.reels.flip(w.reel, w.row);
      await this.wait(200);
      ui.reels.setSymbol(w.reel, w.row, w.symbol);
      await this.wait(160);
    }
    await this.wait(700);
    ui.winLine.textContent = ui.t("starWildText");
  }

  async #hcStart(scene, round) {
    const ui = this.ui;
    ui.reels.highlight(null);
    ui.reels.root.hidden = true;
    ui.paylines.innerHTML = "";
    ui.board.show(true);
    ui.board.setCounter(scene.respinsLeft);
    // the intro: the board comes in, the Star Coins drop one after another, a sting
    ui.board.intro(!this.skipping);
    ui.board.render(scene.board, { fresh: new Set(scene.board.keys()), ...this.#pays(round) });
    ui.board.stagger(scene.board.keys(), 110 * this.pace);
    ui.winLine.textContent = ui.t("holdAndCashText", { n: scene.board.size });
    this.sound("hcIntro");
    this.ui.sound?.bed?.(this.quiet || this.skipping ? null : "feature");
    await this.wait(1200 + 110 * scene.board.size);
    ui.board.intro(false);
  }

  #pays(round) {
    const hc = this.ui.game.hold_and_cash;
    return { totalBet: round.total_bet, pays: { MINOR: hc.minor, MAJOR: hc.major } };
  }

  async #hcRespin(scene, round) {
    const ui = this.ui;
    const board = ui.board;
    board.root.dataset.respin = String(scene.index);
    const prev = Number(board.root.dataset.respinsLeft || "3");
    board.setCounter(Math.max(prev - 1, 0));
    // a booster of a kind this round has already staged in full plays at a known booster's
    // pace (its cell, its banner, its flash all still shown): a capped round's run of
    // MULTIPLIERs moves like an ordinary feature instead of repeating the first one's staging
    const known = scene.boosters.length > 0 && scene.boosters.every((b) => this.boostersSeen.has(b.kind));
    const held = scene.landed.filter((c) => c.kind === "CASH" || c.kind === "MINOR" || c.kind === "MAJOR");
    board.spinning(true);
    await this.wait(known ? 350 : 700);
    board.spinning(false);
    const fresh = new Set(scene.landed.map((c) => `${c.reel},${c.row}`));
    board.render(scene.afterLanding, { fresh, ...this.#pays(round) });
    for (const b of scene.boosters) board.showBooster(b.reel, b.row, b.kind);
    if (scene.landed.length) this.sound("coin");
    if (scene.boosters.length) this.sound("booster");
    if (scene.reset) {
      board.setCounter(scene.respinsLeft, { reset: true });
      ui.winLine.textContent = ui.t("respinReset");
    } else {
      board.setCounter(scene.respinsLeft);
      ui.winLine.textContent = ui.t("respinsLeftText", { n: scene.respinsLeft });
    }
    await this.wait(held.length || (scene.landed.length && !known) ? 800 : known ? 200 : 350);
    for (const b of scene.boosters) {
      const again = this.boostersSeen.has(b.kind);
      this.boostersSeen.add(b.kind);
      // the amount an UPGRADE added comes from the round's events (timeline.js)
      const text = b.kind !== "UPGRADE" ? ui.t("multiplierText")
        : b.added !== null ? ui.t("upgradeText", { amount: ui.money(b.added) }) : ui.t("upgrade");
      ui.winLine.textContent = text;
      ui.banner.show(ui.t(b.kind === "UPGRADE" ? "upgrade" : "multiplier"), text, "booster");
      await this.wait(again ? 300 : 700);
      board.clearBooster(b.reel, b.row);
      board.render(b.board, { flash: true, ...this.#pays(round) });
      await this.wait(again ? 450 : 800);
      ui.banner.hide();
    }
    board.render(scene.board, this.#pays(round));
  }

  async #mega(scene) {
    // 1000 x the total bet: the game's largest single award gets its largest show
    const ui = this.ui;
    const title = ui.t(megaKey(ui.game));  // "full-screen prize" where prizes are named so
    ui.winLine.textContent = `${title}: ${ui.money(scene.win)}`;
    if (this.quiet) return;
    this.shownBig = Math.max(this.shownBig, scene.win);  // its intro and sting: celebrate.js
    await ui.celebrate({ kind: "mega", tier: 3, title, kicker: ui.t("megaText"),
      amount: scene.win, sub: ui.t("megaSub", { x: ui.game.hold_and_cash.mega,
        bet: ui.money(this.round.total_bet) }), ms: 9000 }, this.skipping);
  }

  async #hcEnd(scene, shownWin) {
    const ui = this.ui;
    ui.sound?.bed?.(null);
    ui.board.root.classList.add("ended");
    ui.board.render(scene.board, { ...this.#pays(this.round) });
    // the collect: coin by coin, reel by reel, the meter counting each one in (never past
    // what the round pays: a capped round stops at the cap)
    let sum = 0;
    for (const [key, item] of [...scene.board.entries()].sort()) {
      if (this.skipping) break;
      const [reel, row] = key.split(",").map(Number);
      ui.board.collect(reel, row);
      const worth = item.kind === "CASH" ? item.value
        : (this.#pays(this.round).pays[item.kind] || 0) * this.round.total_bet;
      const before = Math.min(sum, scene.paid);
      sum += worth;
      ui.countWin(shownWin + before, shownWin + Math.min(sum, scene.paid), 0, { glow: this.cheer });
      this.sound("coin");
      await this.wait(240);
    }
    ui.countWin(shownWin, scene.winSoFar, 0, { glow: this.cheer });
    // what is paid; in a capped round also what the held values were worth
    const text = scene.capped
      ? ui.t("hcEndCapped", { win: ui.money(scene.paid), held: ui.money(scene.win) })
      : ui.t("hcEnd", { win: ui.money(scene.paid) });
    this.hcText = text;
    ui.winLine.textContent = text;
    ui.banner.show(ui.t("collect").toUpperCase(), text, "hc");
    await this.wait(scene.capped ? 1400 : 2000);  // capped: the maximum win's scene follows
    if (!this.skipping) ui.banner.hide();
  }

  #maxWinText(scene) {
    const ui = this.ui;
    return ui.t("maxWinReached", { win: ui.money(scene.win),
      x: Math.round(scene.win / this.round.total_bet) })
      + (scene.jackpotFollows ? ` ${ui.t("maxWinPlusJackpot")}` : "");
  }

  async #maxWin(scene, shownWin) {
    // the round's game win reached the model's cap: said in words, with the amount
    const ui = this.ui;
    ui.countWin(shownWin, scene.winSoFar, 0, { glow: this.cheer });
    const text = this.#maxWinText(scene);
    ui.winLine.textContent = text;
    ui.banner.show(ui.t("maxWinTitle"), text, "maxwin");
    await this.wait(1600);  // the win line keeps saying it
    if (!this.skipping) ui.banner.hide();
  }

  async #jackpot(scene, shownWin) {
    // the three €€€ symbols that won are framed, and the text names the pool's share
    const ui = this.ui;
    const { game } = ui;
    setMarkup(ui.paylines, `<polyline class="jp" data-line="${scene.line}" points="${linePoints(game.lines, scene.line)}" data-vars="--c:#ff3355"/>`);
    const rows = game.lines[scene.line - 1];
    ui.reels.highlight(Array.from({ length: game.jackpot.reels }, (_, reel) => ({ reel, row: rows[reel] })), "jp-win");
    ui.countWin(shownWin, scene.winSoFar, 0, { glow: this.cheer });
    const text = ui.t("jackpotWin", { line: scene.line, percent: scene.percent, win: ui.money(scene.win) })
      + (scene.withheld ? ` ${ui.t("jackpotWithheld", { withheld: ui.money(scene.withheld) })}` : "");
    ui.winLine.textContent = text;
    if (this.quiet) return;
    // the show fits the amount: a small share of the pool gets a banner, a big one the stage
    // (its intro and sting: celebrate.js)
    const tier = bigWinTier(scene.win, this.round.total_bet, game.market);
    if (tier === 0) this.sound("jackpot");
    if (tier > 0) {
      this.shownBig = Math.max(this.shownBig, scene.win);
      await ui.celebrate({ kind: "jackpot", tier, title: ui.t("jackpot"), kicker: "€ € €",
        amount: scene.win, sub: ui.t("jackpotText", { line: scene.line, percent: scene.percent }),
        ms: 3000 + 2000 * tier }, this.skipping);
    } else {
      ui.banner.show(ui.t("jackpot"), text, "jp");
      await this.wait(2200);
      ui.banner.hide();
    }
  }

  async #end(scene) {
    const ui = this.ui;
    const round = this.round;
    ui.setWin(scene.totalWin, { glow: this.cheer });
    if (!scene.totalWin) ui.winLine.textContent = ui.t("noWin");
    else if (!this.worthIt) {  // money back, not a win: said plainly, never celebrated
      ui.winLine.textContent = ui.t("winBelowStake", { win: ui.money(scene.totalWin),
        stake: ui.money(round.total_bet) });
    } else if (scene.maxWin && this.skipping) {
      ui.winLine.textContent = this.#maxWinText({ win: scene.maxWin,
        jackpotFollows: scene.totalWin > scene.maxWin });
    } else if (!ui.winLine.textContent.trim() || this.skipping) {
      const wins = (round.events || []).filter((e) => e.type === "line_win");
      const jackpot = (round.events || []).find((e) => e.type === "jackpot");
      ui.winLine.textContent = wins.length === 1 && round.feature === null && !jackpot
        ? this.lineText(wins[0]) : ui.t("winTotal", { win: ui.money(scene.totalWin) });
    }
    if (!ui.board.root.hidden) ui.banner.show(ui.t("collect").toUpperCase(),
      this.hcText ?? ui.t("hcEnd", { win: ui.money(round.hold_and_cash_win) }), "hc");
    const tier = this.cheer ? bigWinTier(scene.totalWin, round.total_bet, ui.game.market) : 0;
    if (tier > 0 && scene.totalWin > this.shownBig && !this.skipping) {  // its sting: celebrate.js
      await ui.celebrate({ kind: "bigwin", tier, title: ui.t(`bigWin${tier}`),
        kicker: ui.t("bigWinKicker", { x: Math.floor(scene.totalWin / round.total_bet) }),
        // after a Hold & Cash collect that counted the win in coin by coin, a shorter show
        amount: scene.totalWin, sub: "", ms: 1500 + (this.hcText === null ? 1500 : 800) * tier,
        countUp: true }, false);
    }
  }
}
