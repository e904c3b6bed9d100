// Unpaid wins on the Meters page (operator mode, ADR 0061): the wins the operator's wallet
// refused to credit, with both sides' ids, and what an operator does about one: resend its
// credit (after the operator fixed its side), or settle it manually with a reason, proposed by
// one operator account and approved by another. The server decides every step (it refuses a
// proposer's own approval and a second approval); this page only asks and shows the answer.
import { BoError, esc } from "./boapi.js";

const $ = (sel) => document.querySelector(sel);
const when = (iso) => (iso ? iso.replace("T", " ").replace(/\.\d+/, "").replace(/(\+00:00|Z)$/, " UTC") : "–");
let page = null; // {api, status, failed, reload}: bound once by bindUnpaid

const RESENT = {
  paid: (id) => `Round ${id}: the operator's wallet acknowledged the credit; the win is paid.`,
  unpaid: (id, e) => `Round ${id}: the operator's wallet refused the credit again (${e}); the win stays unpaid.`,
  pending: (id) => `Round ${id}: no answer yet; the credit is sent again until the operator's wallet answers.`,
};

function actions(w, me) {
  const id = w.round_id;
  const resend = `<button type="button" data-resend="${id}">Resend credit</button>`;
  const s = w.settlement;
  if (!s) {
    return `${resend}<form class="bo-row" data-propose="${id}">
      <input name="reason" required minlength="10" maxlength="500" aria-label="Reason of the manual settlement"
        placeholder="How it was settled (at least 10 characters)">
      <button type="submit">Propose manual settlement</button></form>`;
  }
  const proposed = `<p data-proposal="${id}">Manual settlement proposed by ${esc(s.proposed_by)} at
    ${esc(when(s.proposed_at))}: “${esc(s.reason)}”</p>`;
  const approve = s.proposed_by === me
    ? `<span class="bo-muted">Awaiting another operator's approval.</span>`
    : `<button type="button" class="bo-primary" data-approve="${id}">Approve settlement</button>`;
  return `${resend}${proposed}${approve} <button type="button" data-withdraw="${id}">Withdraw</button>`;
}

/** Show the unpaid wins (``MetersPublic.unpaid_wins``; null in ledger mode). */
export function showUnpaid(unpaid, money) {
  $("#unpaid").hidden = !unpaid;
  if (!unpaid) return;
  const settled = unpaid.settled_count
    ? ` ${unpaid.settled_count} refused wins (${money(unpaid.settled_amount)}) were settled manually.` : "";
  $("#unpaid-facts").textContent = (unpaid.count
    ? `${unpaid.count} wins (${money(unpaid.amount)}) refused by the operator's wallet and NOT paid, the oldest since ${when(unpaid.oldest)}.`
    : "None: the operator's wallet has refused no credit.") + settled;
  const me = page ? page.api.user : null;
  $("#unpaid-body").innerHTML = unpaid.wins.map((w) => `<tr data-transaction="${esc(w.transaction_id)}"
    data-round="${w.round_id === null ? "" : w.round_id}"><td class="num">${w.round_id === null ? "–" : w.round_id}</td>
    <td><code>${esc(w.round_ref)}</code></td><td>${esc(w.external_id || w.username)}</td>
    <td><code>${esc(w.transaction_id)}</code></td><td><code>${esc(w.operator_debit_transaction_id || "–")}</code></td>
    <td class="num">${esc(money(w.amount))}</td><td>${esc(w.error || "–")}</td><td>${esc(when(w.since))}</td>
    <td class="bo-actions">${w.round_id === null ? "" : actions(w, me)}</td></tr>`).join("");
}

async function act(job, done) {
  try {
    const answer = await job();
    page.status(done(answer), "ok");
  } catch (error) {
    page.failed(error);
    return;
  }
  await page.reload();
}

function onClick(event) {
  const button = event.target.closest("[data-resend], [data-approve], [data-withdraw]");
  if (!button) return;
  const base = `/operator/unpaid-wins/${encodeURIComponent(button.closest("tr").dataset.round)}`;
  button.disabled = true;  // one click, one request: the server refuses a second one anyway
  if (button.dataset.resend) {
    act(() => page.api.request("POST", `${base}/resend`),
      (r) => RESENT[r.payment](r.round_id, r.error));
  } else if (button.dataset.approve) {
    act(() => page.api.request("POST", `${base}/settlement/approve`),
      (s) => `Round ${s.round_id} is settled manually (proposed by ${s.proposed_by}, approved by ${s.approved_by}).`);
  } else {
    act(() => page.api.request("DELETE", `${base}/settlement`),
      (s) => `Round ${s.round_id}: the proposed settlement is withdrawn; the win stays unpaid.`);
  }
}

function onSubmit(event) {
  const form = event.target.closest("[data-propose]");
  if (!form) return;
  event.preventDefault();
  const reason = form.elements.reason.value.trim();
  if (reason.length < 10) {
    page.failed(new BoError(0, "reason_too_short", "Give the reason in at least 10 characters"));
    return;
  }
  act(() => page.api.request("POST", `/operator/unpaid-wins/${encodeURIComponent(form.dataset.propose)}/settlement`,
    { body: { reason } }),
  (s) => `Round ${s.round_id}: manual settlement proposed; another operator must approve it.`);
}

/** Wire the list's buttons once: ``api`` (BackOfficeApi), ``status`` and ``failed`` (the
 * page's messages), ``reload`` (shows the Meters page again). */
export function bindUnpaid(bound) {
  page = bound;
  $("#unpaid-body").addEventListener("click", onClick);
  $("#unpaid-body").addEventListener("submit", onSubmit);
}
