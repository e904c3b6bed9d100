// Free rounds (issue 36, ADR 0064): the player's grants, each with its rounds left and its
// winnings so far, and a button to play one. A free round is only ever played on that button:
// the Spin button keeps playing paid rounds at the chosen bet (a grant never replaces a paid
// bet silently). app.js calls refresh() on entering the game, played() after a free round's
// answer, setBusy() with its own busy state and relabel() on a change of language; the button
// calls back onPlay(grant), which sends the spin naming the grant at the grant's bet.

import { formatCents } from "./money.js";
import { lang, t } from "./i18n.js";
import { isDemo } from "./demo.js";

const money = (cents) => formatCents(cents, lang());

export class FreeRounds {
  /** ``api``: the page's Api; ``onPlay(grant)``: play one round of ``grant``. */
  constructor(api, onPlay) {
    this.api = api;
    this.onPlay = onPlay;
    this.grants = [];
    this.busy = false;
    this.note = [];  // [key, vars] of what the panel tells, written anew in each language
    this.panel = document.createElement("section");
    this.panel.id = "freerounds";
    this.panel.className = "freerounds";
    this.panel.dataset.testid = "freerounds";
    this.panel.hidden = true;
    this.panel.innerHTML = '<h2 class="freerounds-title"></h2><ul class="freerounds-list"></ul>'
      + '<p class="freerounds-note" role="status" data-testid="free-note"></p>';
    const status = document.querySelector("#status");
    status.parentNode.insertBefore(this.panel, status);
  }

  /** Ask the server which grants the player may play now (a campaign open to every player
   * is granted on this call); a failure leaves the panel as it was. Demo play has none. */
  async refresh() {
    if (isDemo(this.api)) { this.grants = []; this.note = []; this.render(); return; }
    try {
      const answer = await this.api.request("GET", "/free-rounds");
      this.grants = answer.grants;
    } catch {
      return;
    }
    this.render();
  }

  /** A free round's answer (its ``free_round``): the grant's rounds left and winnings, what
   * this round paid and what the cap withheld, told to the player. */
  played(freeRound) {
    const grant = this.grants.find((g) => g.id === freeRound.grant_id);
    if (grant) {
      grant.rounds_left = freeRound.rounds_left;
      grant.winnings = freeRound.winnings;
    }
    const parts = [["freePlayed", { paid: freeRound.paid_win, left: freeRound.rounds_left }]];
    if (freeRound.withheld > 0) parts.push(["freeWithheld", { withheld: freeRound.withheld }]);
    if (freeRound.rounds_left === 0) {
      parts.push(["freeFinished", { total: freeRound.winnings }]);
      this.grants = this.grants.filter((g) => g.id !== freeRound.grant_id);
    }
    this.note = parts;
    this.render();
  }

  /** A free spin refused (the grant expired, was cancelled or is used up): ask again. */
  async refused() {
    this.note = [["freeGone", {}]];
    await this.refresh();
  }

  setBusy(busy) {
    this.busy = busy;
    for (const b of this.panel.querySelectorAll("button")) b.disabled = busy;
  }

  relabel() { this.render(); }

  render() {
    this.panel.querySelector(".freerounds-title").textContent = t("freeRounds");
    const cents = new Set(["paid", "withheld", "total"]);
    this.panel.querySelector(".freerounds-note").textContent = this.note.map(([key, vars]) =>
      t(key, Object.fromEntries(Object.entries(vars).map(([name, value]) =>
        [name, cents.has(name) ? money(value) : value])))).join(" ");
    const list = this.panel.querySelector(".freerounds-list");
    list.replaceChildren(...this.grants.map((grant) => this.line(grant)));
    this.panel.hidden = this.grants.length === 0 && !this.note.length;
  }

  line(grant) {
    const item = document.createElement("li");
    item.dataset.grant = String(grant.id);
    item.dataset.testid = "free-grant";
    const text = document.createElement("span");
    text.textContent = t("freeGrant", { left: grant.rounds_left, bet: money(grant.line_bet * 20),
      win: money(grant.winnings), until: new Date(grant.expires_at).toLocaleDateString(
        lang() === "de" ? "de-AT" : "en-GB") });
    const play = document.createElement("button");
    play.type = "button";
    play.className = "btn";
    play.dataset.testid = "play-free";
    play.textContent = t("freePlay");
    play.disabled = this.busy;
    play.addEventListener("click", () => { if (!this.busy) this.onPlay(grant); });
    item.append(text, " ", play);
    return item;
  }
}
