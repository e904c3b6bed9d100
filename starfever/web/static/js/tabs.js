// Several tabs of one player: each tells the others the balance it learned from the server
// (the newest by round id and time, balance.js), and that it is open, so no tab shows a stale
// balance and each says that another one plays.
import { newKey } from "./api.js";
import { t } from "./i18n.js";

const GONE_MS = 90_000;  // a tab not heard from for this long is taken as closed

export class TabChannel {
  /** ``heard(message)``: a balance message from another tab of this player; ``active()``: the
   * game is on screen (a tab on the log-in screen neither counts nor answers). */
  constructor({ heard, active }) {
    this.heard = heard;
    this.active = active;
    this.id = newKey();
    this.others = new Map();  // tab id -> last heard (ms)
    this.channel = "BroadcastChannel" in window ? new BroadcastChannel("starfever") : null;
    if (!this.channel) return;
    this.channel.onmessage = (event) => this.#receive(event.data || {});
    window.addEventListener("pagehide", () => this.tell({ type: "bye" }));
  }

  tell(message) {
    const user = localStorage.getItem("sf.user");
    if (this.channel && user) this.channel.postMessage({ ...message, user, tab: this.id });
  }

  #receive(message) {
    if (message.user !== localStorage.getItem("sf.user") || !this.active()) return;
    if (message.type === "bye") this.others.delete(message.tab);
    else this.others.set(message.tab, Date.now());
    if (message.type === "hello") this.tell({ type: "here" });
    if (message.type === "balance") this.heard(message);
    this.show();
  }

  /** The notice that another tab plays. */
  show() {
    for (const [id, at] of this.others) if (Date.now() - at > GONE_MS) this.others.delete(id);
    const el = document.querySelector("#tabs-notice");
    el.hidden = this.others.size === 0;
    el.textContent = this.others.size ? t("otherTab") : "";
  }
}
