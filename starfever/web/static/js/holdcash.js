// The Hold & Cash board: 15 cells holding cash values (EUR), MINOR/MAJOR badges, boosters, and
// the respin counter. It only shows what the timeline says.
import { cellKey } from "./timeline.js";
import { symbolSvg } from "./symbols.js";

export class HoldBoard {
  constructor(root, { format, prizeLabel = (kind) => kind }) {
    this.root = root;
    this.prizeLabel = prizeLabel;  // MINOR / MAJOR, or what the model calls them ("×20")
    this.grid = root.querySelector("#hc-grid");
    this.counter = root.querySelector("#hc-respins");
    this.counterN = root.querySelector("#hc-respins-n");
    this.dots = [...root.querySelectorAll("#hc-dots i")];
    this.format = format;
    this.grid.innerHTML = Array.from({ length: 15 }, (_, i) => {
      const reel = Math.floor(i / 3);
      const row = i % 3;
      return `<div class="hc-cell" data-reel="${reel}" data-row="${row}" data-kind="EMPTY"></div>`;
    }).join("");
    // reading order on screen is row by row; CSS grid places cells by reel/row
    for (const el of this.grid.children) {
      el.style.gridColumn = String(Number(el.dataset.reel) + 1);
      el.style.gridRow = String(Number(el.dataset.row) + 1);
    }
  }

  cell(reel, row) {
    return this.grid.querySelector(`.hc-cell[data-reel="${reel}"][data-row="${row}"]`);
  }

  /** Draw ``board`` (Map "reel,row" -> {kind, value}); ``fresh`` keys pop in. */
  render(board, { fresh = new Set(), flash = false, totalBet = 0, pays = {} } = {}) {
    for (const el of this.grid.children) {
      const key = cellKey(el.dataset.reel, el.dataset.row);
      const item = board.get(key);
      this.#paint(el, item, { totalBet, pays });
      el.classList.toggle("pop", fresh.has(key));
      el.classList.toggle("flash", Boolean(flash && item && item.kind === "CASH"));
    }
  }

  #paint(el, item, { totalBet, pays }) {
    if (!item) {
      if (el.dataset.kind !== "EMPTY") {
        el.dataset.kind = "EMPTY";
        delete el.dataset.value;
        el.innerHTML = "";
        el.removeAttribute("aria-label");
      }
      return;
    }
    const { kind, value } = item;
    let label = "";
    let sub = "";
    if (kind === "CASH") label = this.format(value);
    else if (kind === "MINOR" || kind === "MAJOR") {
      label = this.prizeLabel(kind);
      if (totalBet && pays[kind]) sub = this.format(pays[kind] * totalBet);
    } else if (kind === "UPGRADE") label = "+1×";
    else if (kind === "MULTIPLIER") label = "×2";
    const same = el.dataset.kind === kind && el.dataset.value === String(value ?? "")
      && el.querySelector(".hc-label")?.textContent === label;
    if (same) return;
    el.dataset.kind = kind;
    el.dataset.value = String(value ?? "");
    el.setAttribute("aria-label", sub ? `${label} ${sub}` : label);
    el.innerHTML = `${symbolSvg(kind, "hc-sym")}<span class="hc-label">${label}</span>${
      sub ? `<span class="hc-sub">${sub}</span>` : ""}`;
  }

  /** Show a booster on its cell (before it acts). */
  showBooster(reel, row, kind) {
    const el = this.cell(reel, row);
    this.#paint(el, { kind, value: undefined }, {});
    el.classList.add("pop", "booster-act");
  }

  clearBooster(reel, row) {
    const el = this.cell(reel, row);
    el.classList.remove("booster-act");
    this.#paint(el, null, {});
  }

  /** The feature's intro: the board comes in (``on``), or the intro is over. */
  intro(on) {
    this.root.classList.toggle("intro", on);
  }

  /** The cells of ``keys`` ("reel,row") pop in one after another, ``ms`` apart. */
  stagger(keys, ms) {
    [...keys].sort().forEach((key, i) => {
      const [reel, row] = key.split(",");
      const el = this.cell(reel, row);
      if (el) el.style.animationDelay = `${Math.round(i * ms)}ms`;
    });
  }

  /** The collect: this cell's value goes to the win meter. */
  collect(reel, row) {
    const el = this.cell(reel, row);
    if (!el) return;
    el.style.animationDelay = "";
    el.classList.remove("collected");
    void el.offsetWidth;
    el.classList.add("collected");
  }

  /** Empty cells shimmer while a respin runs. */
  spinning(on) {
    this.root.classList.toggle("respinning", on);
  }

  setCounter(n, { reset = false } = {}) {
    this.counterN.textContent = String(n);
    this.root.dataset.respinsLeft = String(n);
    this.dots.forEach((d, i) => d.classList.toggle("on", i < n));
    this.counter.classList.remove("reset");
    if (reset) {
      void this.counter.offsetWidth;
      this.counter.classList.add("reset");
    }
  }

  show(on) {
    this.root.hidden = !on;
    this.root.classList.toggle("ended", false);
    for (const el of this.grid.children) {
      el.classList.remove("collected");
      el.style.animationDelay = "";
    }
  }

  /** A text picture of the board (for the step log tests read): "reel,row:KIND:value". */
  snapshot() {
    return [...this.grid.children]
      .filter((el) => el.dataset.kind !== "EMPTY")
      .map((el) => `${el.dataset.reel},${el.dataset.row}:${el.dataset.kind}:${
        el.querySelector(".hc-label")?.textContent ?? ""}`);
  }
}
