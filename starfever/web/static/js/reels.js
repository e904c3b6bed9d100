// The 5 x 3 reels: drawing a grid, spinning, stopping reel by reel, highlighting cells.
import { REEL_SYMBOLS, symbolSvg } from "./symbols.js";

const REELS = 5;
const ROWS = 3;
const FILLER = 5; // blurred symbols that scroll past before a reel lands

const randomSymbol = () => REEL_SYMBOLS[Math.floor(Math.random() * REEL_SYMBOLS.length)];

// what a screen reader hears: the reels as a group of five reels, each of three rows, each
// cell "Row 1: Lemon" (the page's language: setReelLabels); a spinning reel's blur is hidden
let labels = { reels: () => "Reels", reel: (n) => `Reel ${n}`, row: (n, code) => `Row ${n}: ${code}` };
export function setReelLabels(given) { labels = given; }
const clean = (text) => String(text).replace(/[&<>"]/g, "");

function cellHtml(symbol, reel, row) {
  const attrs = reel === undefined ? ' aria-hidden="true"'
    : ` data-reel="${reel}" data-row="${row}" role="img" aria-label="${clean(labels.row(row + 1, symbol))}"`;
  return `<div class="cell"${attrs} data-symbol="${symbol}">${symbolSvg(symbol)}</div>`;
}

export class ReelView {
  constructor(root) {
    this.root = root;
    this.root.innerHTML = Array.from({ length: REELS }, (_, reel) =>
      `<div class="reel" data-reel="${reel}"><div class="strip"></div></div>`).join("");
    this.reels = [...root.querySelectorAll(".reel")];
    this.grid = null;
  }

  /** Show ``grid`` (grid[reel][row]) at rest. */
  render(grid) {
    this.relabel();
    this.grid = grid.map((col) => [...col]);
    this.reels.forEach((reel, r) => this.#settle(reel, r, grid[r]));
  }

  #settle(reel, r, column) {
    const strip = reel.querySelector(".strip");
    reel.classList.remove("spinning", "landing", "anticipating");
    strip.style.transition = "none";
    strip.style.transform = "";
    strip.innerHTML = column.map((s, row) => cellHtml(s, r, row)).join("");
  }

  /** The names of the reels (again after a change of language). */
  relabel() {
    this.root.setAttribute("role", "group");
    this.root.setAttribute("aria-label", labels.reels());
    this.reels.forEach((reel, r) => {
      reel.setAttribute("role", "group");
      reel.setAttribute("aria-label", labels.reel(r + 1));
    });
  }

  cell(reel, row) {
    return this.root.querySelector(`.cell[data-reel="${reel}"][data-row="${row}"]`);
  }

  /** Start every reel spinning (a loop of random symbols) until :meth:`stop` lands it. */
  startSpin() {
    this.reels.forEach((reel) => {
      const strip = reel.querySelector(".strip");
      const loop = Array.from({ length: 8 }, randomSymbol);
      strip.style.transition = "none";
      strip.style.transform = "";
      strip.innerHTML = [...loop, ...loop].map((s) => cellHtml(s)).join("");
      reel.classList.remove("landing");
      reel.classList.add("spinning");
    });
  }

  get spinning() { return this.reels.some((r) => r.classList.contains("spinning")); }

  /** Land the reels on ``grid`` one after another; ``wait(ms)`` paces it (and may be skipped). */
  async stop(grid, wait, { gap = 170, land = 320, instant = () => false, before = null,
    landed = null } = {}) {
    this.grid = grid.map((col) => [...col]);
    for (let r = 0; r < REELS; r++) {
      const reel = this.reels[r];
      if (instant()) { this.#settle(reel, r, grid[r]); continue; }
      if (before) await before(r);  // anticipation: this reel keeps spinning a little longer
      if (instant()) { this.#settle(reel, r, grid[r]); continue; }
      reel.classList.remove("anticipating");
      const strip = reel.querySelector(".strip");
      const filler = Array.from({ length: FILLER }, randomSymbol);
      const cells = [...grid[r].map((s, row) => cellHtml(s, r, row)), ...filler.map((s) => cellHtml(s))];
      reel.classList.remove("spinning");
      reel.classList.add("landing");
      strip.style.transition = "none";
      strip.innerHTML = cells.join("");
      strip.style.transform = `translateY(-${(FILLER / (ROWS + FILLER)) * 100}%)`;
      void strip.offsetHeight; // apply the start position before the transition
      strip.style.transition = `transform ${land}ms cubic-bezier(.2,.9,.3,1.25)`;
      strip.style.transform = "translateY(0)";
      const index = r;
      setTimeout(() => {
        if (this.grid && reel.classList.contains("landing")) this.#settle(reel, index, this.grid[index]);
      }, land + 20);
      if (landed) landed(r);
      await wait(gap);
    }
    await wait(land);
    this.reels.forEach((reel, r) => {
      reel.classList.remove("anticipating");
      if (reel.classList.contains("landing")) this.#settle(reel, r, grid[r]);
    });
  }

  /** The reels from ``from`` on glow while they keep spinning (a feature is one coin away). */
  anticipate(from) {
    this.reels.forEach((reel, r) => reel.classList.toggle("anticipating", r >= from && reel.classList.contains("spinning")));
    this.root.dataset.anticipated = String(Number(this.root.dataset.anticipated || 0) + 1);
  }

  /** Mark winning cells (and dim the rest); ``null`` clears. */
  highlight(cells, kind = "win") {
    this.root.classList.toggle("dim", Boolean(cells && cells.length));
    for (const el of this.root.querySelectorAll(".cell.win, .cell.jp-win")) el.classList.remove("win", "jp-win");
    for (const { reel, row } of cells || []) this.cell(reel, row)?.classList.add(kind);
  }

  /** Start a cell's flip (the coin turning); :meth:`setSymbol` shows its new face. */
  flip(reel, row) {
    const el = this.cell(reel, row);
    if (!el) return;
    el.classList.remove("flip");
    void el.offsetWidth;
    el.classList.add("flip");
  }

  setSymbol(reel, row, symbol) {
    const el = this.cell(reel, row);
    if (el) {
      el.dataset.symbol = symbol;
      el.innerHTML = symbolSvg(symbol);
      el.setAttribute("aria-label", labels.row(row + 1, symbol));
    }
    if (this.grid) this.grid[reel][row] = symbol;
  }
}

export const SIZE = { REELS, ROWS };
