// The full-screen celebration: big-win tiers (by multiple of the total bet), a big €€€ share,
// and the Mega jackpot (1000 x the total bet), with the amount counting up. It closes by itself,
// on Collect, or when the round is skipped. Its amount counts without a live region: the page
// announces the final value once (app.js, #announcer).
import { setMarkup } from "./markup.js";

const $ = (sel) => document.querySelector(sel);

export class Celebration {
  constructor({ money, speed }) {
    this.money = money;
    this.speed = speed;  // () => the player's pace factor
    this.resolve = null;
    this.timer = 0;
    this.frame = 0;
    this.last = null;  // what was shown last (the browser tests read it)
  }

  get open() { return !$("#celebrate").hidden; }

  /** Show ``kind`` ("bigwin", "jackpot", "mega") of ``tier`` 1-3 for about ``ms`` (scaled by the
   * pace); resolves when it closes. ``skipping``: show the final picture and resolve at once. */
  show({ kind, tier = 1, title, kicker = "", amount, sub = "", ms = 4000, countUp = true },
       skipping = false) {
    const el = $("#celebrate");
    el.dataset.kind = kind;
    el.dataset.tier = String(tier);
    $("#cel-title").textContent = title;
    $("#cel-kicker").textContent = kicker;
    $("#cel-sub").textContent = sub;
    const pieces = kind === "mega" ? 140 : 30 + 30 * tier;
    setMarkup($("#confetti"), Array.from({ length: pieces }, (_, i) =>
      `<i data-vars="--x:${(i * 37) % 100};--d:${(i * 13) % 20 / 10};--h:${(i * 47) % 360}"></i>`).join(""));
    this.last = { kind, tier, amount, title };
    el.hidden = false;
    $("#cel-close").focus();
    const total = ms * this.speed();
    this.#count(amount, skipping || !countUp ? 0 : total * 0.6);
    if (skipping) return Promise.resolve();
    return new Promise((resolve) => {
      this.resolve = resolve;
      this.timer = setTimeout(() => this.done(true), total);  // it ends by itself
    });
  }

  #count(to, ms) {
    cancelAnimationFrame(this.frame);
    const out = $("#cel-amount");
    out.dataset.cents = String(to);
    if (ms <= 0) { out.textContent = this.money(to); return; }
    const start = performance.now();
    const step = (now) => {
      const p = Math.min(1, (now - start) / ms);
      out.textContent = this.money(Math.round(to * (1 - (1 - p) ** 3)));
      if (p < 1) this.frame = requestAnimationFrame(step);
    };
    this.frame = requestAnimationFrame(step);
  }

  /** Hurried (Spin, Skip or Space during the show): the amount jumps to its end and the show
   * closes a moment later; it is never left out. */
  hurry() {
    if (!this.resolve) return;
    clearTimeout(this.timer);
    this.#count(Number($("#cel-amount").dataset.cents || 0), 0);
    this.timer = setTimeout(() => this.done(true), 900 * this.speed());
  }

  /** End the show (``hide``: also take the overlay away; else it stays until the next round). */
  done(hide = true) {
    clearTimeout(this.timer);
    if (this.resolve) {
      cancelAnimationFrame(this.frame);
      $("#cel-amount").textContent = this.money(Number($("#cel-amount").dataset.cents || 0));
    }
    if (hide) $("#celebrate").hidden = true;
    if (this.resolve) { this.resolve(); this.resolve = null; }
  }

  hide() { this.done(true); }
}
