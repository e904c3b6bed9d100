// The session clock in the footer (the strict market requires it on screen): the time played
// since the server's session began. It never runs backwards: each server figure is dated by
// when its answer arrived (a spin's answer is read only after the round has played, up to half
// a minute later), the earliest start wins, and the clock never shows less than it has shown.
import { formatDuration } from "./money.js";
import { t } from "./i18n.js";

export class SessionClock {
  constructor(el) {
    this.el = el;
    this.reset();
  }

  /** A new session (log-in, another player): forget the last one. */
  reset() {
    this.start = null;
    this.shown = 0;
  }

  /** The server's ``elapsed`` seconds, true at ``at`` (ms since the epoch: the answer's arrival). */
  note(elapsed, at = Date.now()) {
    const start = at - elapsed * 1000;
    this.start = this.start === null ? start : Math.min(this.start, start);
    this.tick();
  }

  tick() {
    if (this.start === null) return;
    this.shown = Math.max(this.shown, Math.floor((Date.now() - this.start) / 1000));
    this.el.textContent = `${t("session")} ${formatDuration(this.shown)}`;
    this.el.dataset.seconds = String(this.shown);
  }
}
