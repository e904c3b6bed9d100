// The full-screen celebration: big-win tiers (by multiple of the total bet), a big €€€ share,
// and the Mega jackpot (1000 x the total bet), with the amount counting up. It closes by itself,
// or when the round is skipped (a round resumed after a reload). Its amount counts without a
// live region: the page announces the final value once (app.js, #announcer).
//
// Every show is staged in three acts on one clock: the intro (the title comes in, a sting), the
// count-up, and the final sting (the amount lands, a burst). Hurried (Skip, Space, Spin, or its
// own Collect button) the clock runs five times as fast: every act is still seen, none is cut.
import { setMarkup } from "./markup.js";

const $ = (sel) => document.querySelector(sel);

/** What share of a show each act takes: [intro, count-up]; the final sting has the rest. A
 * big win has no intro of its own (the round's last scene leads into it). */
const ACTS = { mega: [0.2, 0.5], jackpot: [0.2, 0.5], bigwin: [0, 0.6] };

/** How much faster a hurried show runs (the round player's HURRY is a fifth of each pause). */
const HURRIED_RATE = 5;

export class Celebration {
  constructor({ money, speed, hurried = () => false, sting = null }) {
    this.money = money;
    this.speed = speed;  // () => the player's pace factor (unhurried)
    this.hurried = hurried;  // () => whether the round is hurried already (then so is the show)
    this.sting = sting;  // (act, kind) => a sound for the intro and the final sting
    this.resolve = null;
    this.frame = 0;
    this.last = null;  // what was shown last (the browser tests read it)
    this.acts = [];  // the acts the last show went through ("intro", "count", "sting")
    this.shows = [];  // this round's shows: {kind, acts} (the browser tests read them)
    this.rate = 1;
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
    this.acts = [];
    this.shows.push({ kind, acts: this.acts });
    this.rate = this.hurried() ? HURRIED_RATE : 1;  // at most five times as fast, never more
    cancelAnimationFrame(this.frame);
    el.hidden = false;
    $("#cel-close").focus();
    $("#cel-amount").dataset.cents = String(amount);
    if (skipping) {
      this.#act("sting", kind, false);
      this.#amount(amount);
      return Promise.resolve();
    }
    const total = Math.max(ms * this.speed(), 1);
    const [intro, count] = (ACTS[kind] || ACTS.bigwin).map((share) => share * total);
    const countMs = countUp ? count : 0;
    // the acts one after another, each for at least one frame (a slow frame never jumps one)
    const acts = [["intro", intro], ["count", countMs], ["sting", total - intro - countMs]]
      .filter(([, length]) => length > 0);
    return new Promise((resolve) => {
      this.resolve = resolve;
      let i = 0;
      let into = 0;  // the time spent in act i (hurried: five times as fast)
      let last = performance.now();
      const step = (now) => {
        into += Math.max(0, now - last) * this.rate;  // a frame's time may precede the start
        last = Math.max(last, now);
        if (into >= acts[i][1] && this.acts.length > i) {
          if (i === acts.length - 1) { this.done(true); return; }  // it ends by itself
          i += 1;
          into = 0;
        }
        const [act, length] = acts[i];
        this.#act(act, kind);
        if (act === "intro") this.#amount(0);
        else if (act === "count") this.#amount(Math.round(amount * (1 - (1 - Math.min(1, into / length)) ** 3)));
        else this.#amount(amount);
        this.frame = requestAnimationFrame(step);
      };
      step(last);
    });
  }

  /** Enter ``act`` (once): the stage's look follows ``data-act``; the first act (the intro,
   * or a big win's count-up) and the final sting have a sound (not while a resumed round is
   * skipped to its end). */
  #act(act, kind, audible = true) {
    if (this.acts.at(-1) === act) return;
    this.acts.push(act);
    $("#celebrate").dataset.act = act;
    if (audible && (act !== "count" || this.acts.length === 1)) this.sting?.(act, kind);
  }

  #amount(cents) {
    $("#cel-amount").textContent = this.money(cents);
  }

  /** Hurried (Spin, Skip, Space or Collect during the show): the rest of it plays five times as
   * fast; no act is left out and the show is never cut short. */
  hurry() {
    if (this.resolve) this.rate = HURRIED_RATE;
  }

  /** End the show (``hide``: also take the overlay away; else it stays until the next round). */
  done(hide = true) {
    cancelAnimationFrame(this.frame);
    if (this.resolve) this.#amount(Number($("#cel-amount").dataset.cents || 0));
    if (hide) {
      $("#celebrate").hidden = true;
      delete $("#celebrate").dataset.act;
    }
    if (this.resolve) { this.resolve(); this.resolve = null; }
  }

  hide() { this.done(true); }
}
