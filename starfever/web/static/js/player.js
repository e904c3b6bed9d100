// Plays a round's scenes on the page at a pleasant pace; "skip" jumps to the result. Every
// symbol, value and amount shown comes from the server's event log (see timeline.js).
import { setMarkup } from "./markup.js";
import { buildTimeline, linePoints, winCells } from "./timeline.js";
import { symbolSvg } from "./symbols.js";

const LINE_COLORS = ["#ffd23f", "#ff4f9a", "#4fe3ff", "#7dff6a", "#ff8c2e", "#b58cff", "#ff5e5e",
  "#3ef0c0", "#f7f06a", "#ff9ad5", "#6aa8ff", "#c6ff4f", "#ffb36a", "#d08cff", "#5effa0",
  "#ffe08a", "#8af0ff", "#ff7aa8", "#a0ff8a", "#ffc84f"];

export class RoundPlayer {
  constructor(ui) {
    this.ui = ui; // {reels, board, sticky, paylines, banner, winLine, setWin, celebrate, t, money, game, log}
    this.speed = 1;
    this.skipping = false;
    this.pending = new Set();
  }

  /** Resolve after ``ms`` (scaled by speed), or at once when skipping. */
  wait(ms) {
    if (this.skipping || ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const entry = { resolve };
      entry.timer = setTimeout(() => { this.pending.delete(entry); resolve(); }, ms * this.speed);
      this.pending.add(entry);
    });
  }

  skip() {
    this.skipping = true;
    for (const entry of this.pending) { clearTimeout(entry.timer); entry.resolve(); }
    this.pending.clear();
    this.ui.celebrateDone?.();
  }

  /** Play ``round`` (a RoundPublic). ``spinning``: the reels already spin (a live spin). */
  async play(round, { spinning = false, instant = false } = {}) {
    const ui = this.ui;
    this.skipping = instant;
    this.round = round;
    const scenes = buildTimeline(round.events);
    ui.log.length = 0;
    let shownWin = 0;
    for (const scene of scenes) {
      switch (scene.kind) {
        case "reveal": await this.#reveal(scene, spinning); spinning = false; break;
        case "lines": await this.#lines(scene, shownWin); break;
        case "feature": await this.#feature(scene); break;
        case "star_wild": await this.#starWild(scene); break;
        case "hc_start": await this.#hcStart(scene, round); break;
        case "hc_respin": await this.#hcRespin(scene, round); break;
        case "mega": await this.#mega(scene); break;
        case "hc_end": await this.#hcEnd(scene, shownWin); break;
        case "jackpot": await this.#jackpot(scene, shownWin); break;
        case "end": this.#end(scene); break;
        default: break;
      }
      shownWin = scene.winSoFar;
      ui.log.push(this.#snapshot(scene));
      if (ui.holdAfter && !this.skipping) await ui.holdAfter(scene);
    }
    this.skipping = false;
    return scenes;
  }

  #snapshot(scene) {
    const ui = this.ui;
    const shot = { kind: scene.kind, win: ui.winText(), winLine: ui.winLine.textContent };
    if (scene.kind.startsWith("hc_") || scene.kind === "mega") {
      shot.board = ui.board.snapshot();
      shot.respinsLeft = ui.board.root.dataset.respinsLeft;
      if (scene.index) shot.index = scene.index;
    } else {
      shot.grid = [...ui.reels.root.querySelectorAll(".cell[data-reel]")]
        .map((el) => `${el.dataset.reel},${el.dataset.row}:${el.dataset.symbol}`);
      shot.lines = [...ui.paylines.querySelectorAll("polyline")].map((p) => Number(p.dataset.line));
    }
    return shot;
  }

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
    await ui.reels.stop(scene.grid, (ms) => this.wait(ms), { instant: () => this.skipping });
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

  async #lines(scene, shownWin) {
    const ui = this.ui;
    this.#drawLines(scene.wins);
    ui.countWin(shownWin, scene.winSoFar, this.skipping ? 0 : 700 * this.speed);
    ui.winLine.textContent = scene.wins.length === 1 ? this.lineText(scene.wins[0])
      : ui.t("winTotal", { win: ui.money(scene.winSoFar) });
    await this.wait(900);
    if (scene.wins.length > 1 && !this.skipping) {
      for (const w of scene.wins.slice(0, 8)) {
        if (this.skipping) break;
        this.#drawLines([w]);
        ui.winLine.textContent = this.lineText(w);
        await this.wait(750);
      }
      this.#drawLines(scene.wins);
      ui.winLine.textContent = scene.wins.map((w) => this.lineText(w)).join(" · ");
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
    ui.board.render(scene.board, { fresh: new Set(scene.board.keys()), ...this.#pays(round) });
    ui.winLine.textContent = ui.t("holdAndCashText", { n: scene.board.size });
    await this.wait(1200);
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
    board.spinning(true);
    await this.wait(700);
    board.spinning(false);
    const fresh = new Set(scene.landed.map((c) => `${c.reel},${c.row}`));
    board.render(scene.afterLanding, { fresh, ...this.#pays(round) });
    for (const b of scene.boosters) board.showBooster(b.reel, b.row, b.kind);
    if (scene.reset) {
      board.setCounter(scene.respinsLeft, { reset: true });
      ui.winLine.textContent = ui.t("respinReset");
    } else {
      board.setCounter(scene.respinsLeft);
      ui.winLine.textContent = ui.t("respinsLeftText", { n: scene.respinsLeft });
    }
    await this.wait(scene.landed.length ? 800 : 350);
    for (const b of scene.boosters) {
      const text = b.kind === "UPGRADE"
        ? ui.t("upgradeText", { amount: ui.money(round.total_bet) }) : ui.t("multiplierText");
      ui.winLine.textContent = text;
      ui.banner.show(ui.t(b.kind === "UPGRADE" ? "upgrade" : "multiplier"), text, "booster");
      await this.wait(700);
      board.clearBooster(b.reel, b.row);
      board.render(b.board, { flash: true, ...this.#pays(round) });
      await this.wait(800);
      ui.banner.hide();
    }
    board.render(scene.board, this.#pays(round));
  }

  async #mega(scene) {
    const ui = this.ui;
    ui.banner.show(ui.t("mega"), `${ui.t("megaText")} ${ui.money(scene.win)}`, "mega");
    await this.wait(2200);
    ui.banner.hide();
  }

  async #hcEnd(scene, shownWin) {
    const ui = this.ui;
    ui.board.root.classList.add("ended");
    ui.board.render(scene.board, { ...this.#pays(this.round) });
    ui.countWin(shownWin, scene.winSoFar, this.skipping ? 0 : 1500 * this.speed);
    const text = ui.t("hcEnd", { win: ui.money(scene.win) });
    ui.winLine.textContent = text;
    ui.banner.show(ui.t("collect").toUpperCase(), text, "hc");
    await this.wait(2000);
    if (!this.skipping) ui.banner.hide();
  }

  async #jackpot(scene, shownWin) {
    const ui = this.ui;
    const { game } = ui;
    setMarkup(ui.paylines, `<polyline class="jp" data-line="${scene.line}" points="${linePoints(game.lines, scene.line)}" data-vars="--c:#ff3355"/>`);
    ui.countWin(shownWin, scene.winSoFar, 0);
    await ui.celebrate(scene, this.skipping);
  }

  #end(scene) {
    const ui = this.ui;
    ui.setWin(scene.totalWin);
    if (!scene.totalWin) ui.winLine.textContent = ui.t("noWin");
    else if (!ui.winLine.textContent.trim() || this.skipping) {
      const wins = (this.round.events || []).filter((e) => e.type === "line_win");
      ui.winLine.textContent = scene.totalWin && wins.length === 1 && this.round.feature === null
        ? this.lineText(wins[0]) : ui.t("winTotal", { win: ui.money(scene.totalWin) });
    }
    if (!ui.board.root.hidden) ui.banner.show(ui.t("collect").toUpperCase(),
      ui.t("hcEnd", { win: ui.money(this.round.hold_and_cash_win) }), "hc");
  }
}
