// Several tabs of one player: each tells the others the balance it learned from the server
// (the newest by round id and time, balance.js), and that it is open, so no tab shows a stale
// balance and each says that another one plays. Moved out of app.js as it was (no change).
import { newKey } from "./api.js";
import { t } from "./i18n.js";

const channel = "BroadcastChannel" in window ? new BroadcastChannel("starfever") : null;
const tabId = newKey();
const otherTabs = new Map();  // tab id -> last heard (ms)

/** Tell this player's other tabs ``message`` ({type: "hello" | "here" | "bye" | "balance"}). */
export function tellTabs(message) {
  const user = localStorage.getItem("sf.user");
  if (channel && user) channel.postMessage({ ...message, user, tab: tabId });
}

/** Show whether another tab of this player is open (one heard in the last 90 s). */
export function showOtherTabs() {
  for (const [id, at] of otherTabs) if (Date.now() - at > 90_000) otherTabs.delete(id);
  const el = document.querySelector("#tabs-notice");
  el.hidden = otherTabs.size === 0;
  el.textContent = otherTabs.size ? t("otherTab") : "";
}

/** Listen to the other tabs; ``onBalance(message)`` takes a balance one of them learned. */
export function listenToTabs(onBalance) {
  if (!channel) return;
  channel.onmessage = (event) => heardFromTab(event.data || {}, onBalance);
  window.addEventListener("pagehide", () => tellTabs({ type: "bye" }));
}

function heardFromTab(message, onBalance) {
  if (message.user !== localStorage.getItem("sf.user")
      || document.querySelector("#game").hidden) return;
  if (message.type === "bye") otherTabs.delete(message.tab);
  else otherTabs.set(message.tab, Date.now());
  if (message.type === "hello") tellTabs({ type: "here" });
  if (message.type === "balance") onBalance(message);
  showOtherTabs();
}
