// Player protection: the weekly deposit limit, the reality check's dialog and facts,
// self-exclusion. The server decides; these views ask and show (app.js wires them).
import { parseEuros } from "./money.js";
import { formatWhen, t } from "./i18n.js";

const $ = (sel) => document.querySelector(sel);

/** A span of time in words: "14 min 33 s", "1 h 02 min". */
export function spanText(seconds) {
  const s = Math.max(0, Math.floor(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h ? t("spanHours", { h, m: String(m).padStart(2, "0") })
    : t("spanMinutes", { m, s: String(s % 60).padStart(2, "0") });
}

/** The views, bound to the page's ``api``, ``money`` format, error text and the callbacks
 * that keep the page's state (``noteRealityCheck``, ``showExclusion``, ``handleError``). */
export function protectionViews({ api, money, errorText, handleError, noteRealityCheck, showExclusion }) {
  function rcFacts(rc) {
    // a span in words ("14 min 33 s", never "14:33", which reads as a time of day); the next
    // check as minutes from now, and while one is due, how long after this one
    const next = new Date(rc.next_due_at).getTime();
    const nextText = rc.due || next <= Date.now()
      ? t("nextCheckAfter", { n: Math.max(1, Math.round(rc.interval_seconds / 60)) })
      : t("nextCheckIn", { n: Math.max(1, Math.round((next - Date.now()) / 60_000)), when: formatWhen(rc.next_due_at) });
    return `<dt>${t("elapsed")}</dt><dd data-testid="rc-elapsed">${spanText(rc.elapsed_seconds)}</dd>
      <dt>${t("netResult")}</dt><dd data-testid="rc-net" class="${rc.net_result < 0 ? "neg" : "pos"}">${money(rc.net_result)}</dd>
      <dt>${t("nextCheck")}</dt><dd data-testid="rc-next">${nextText}</dd>`;
  }

  function openRealityCheck(rc) {
    const dlg = $("#dlg-reality");
    $("#rc-dialog-facts").innerHTML = rcFacts(rc);
    if (!dlg.open) dlg.showModal();
    $("#rc-continue").focus();
  }

  async function acknowledgeReality() {
    try {
      const rc = await api.acknowledge();
      $("#dlg-reality").close();
      noteRealityCheck(rc, { quiet: true });
    } catch (error) {
      $("#dlg-reality").close();
      handleError(error);
    }
  }

  async function openProtection() {
    const dlg = $("#dlg-protection");
    $("#limit-msg").textContent = "";
    $("#exclusion-msg").textContent = "";
    dlg.showModal();
    await refreshProtection();
  }

  async function refreshProtection() {
    try {
      const [limits, exclusion, rc] = await Promise.all([api.limits(), api.exclusion(), api.realityCheck()]);
      let facts = `<dt>${t("limitNow")}</dt><dd data-testid="limit-now">${money(limits.weekly_deposit_limit)}</dd>
        <dt>${t("limitUsed")}</dt><dd>${money(limits.deposited_last_7_days)}</dd>
        <dt>${t("limitLeft")}</dt><dd>${money(limits.remaining)}</dd>`;
      if (limits.pending_limit !== null && limits.pending_limit !== undefined) {
        facts += `<dt>${t("limitPending", { when: formatWhen(limits.pending_effective_at) })}</dt>
          <dd data-testid="limit-pending">${money(limits.pending_limit)}</dd>`;
      }
      $("#limit-facts").innerHTML = facts;
      $("#rc-facts").innerHTML = rcFacts(rc);
      showExclusion(exclusion);
    } catch (error) {
      $("#limit-msg").textContent = errorText(error);
    }
  }

  async function saveLimit(event) {
    event.preventDefault();
    const cents = parseEuros($("#limit-input").value);
    const msg = $("#limit-msg");
    if (cents === null || cents < 1) { msg.textContent = t("limitInvalid"); msg.className = "msg error"; return; }
    msg.textContent = "";
    msg.className = "msg";
    try {
      await api.setLimit(cents);
      $("#limit-input").value = "";
      await refreshProtection();  // "saved" appears with the new limit, not before it
      msg.textContent = t("limitSaved");
      msg.className = "msg ok";
    } catch (error) {
      msg.textContent = errorText(error);
      msg.className = "msg error";
    }
  }

  async function selfExclude(event) {
    event.preventDefault();
    const msg = $("#exclusion-msg");
    if (!$("#exclusion-confirm").checked) {
      msg.textContent = t("exclusionConfirmNeeded");
      msg.className = "msg error";
      return;
    }
    try {
      const exclusion = await api.exclude(Number($("#exclusion-days").value));
      showExclusion(exclusion);
      msg.textContent = "";
      $("#exclusion-confirm").checked = false;
    } catch (error) {
      msg.textContent = errorText(error);
      msg.className = "msg error";
    }
  }

  return { rcFacts, openRealityCheck, acknowledgeReality, openProtection, refreshProtection,
    saveLimit, selfExclude };
}
