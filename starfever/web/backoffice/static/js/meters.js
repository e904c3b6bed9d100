// The meters page: RTP per bet class against theory with 99 % intervals, the daily bets, wins and
// GGR, the €€€ pool and its refills, and (operator mode) the pending credits and unpaid wins.
import { esc } from "./boapi.js";
import { showUnpaid } from "./unpaid.js";

const $ = (sel) => document.querySelector(sel);
const pct = (x, digits = 2) => (x === null || x === undefined ? "–" : `${(x * 100).toFixed(digits)} %`);
const when = (iso) => (iso ? iso.replace("T", " ").replace(/\.\d+/, "").replace(/(\+00:00|Z)$/, " UTC") : "–");

export function showMeters(data, money) {
  $("#m-since").value = data.since;
  $("#m-until").value = data.until;
  // the currency picker: the served currencies, the one shown chosen (every amount below is in it)
  const options = (data.currencies || [data.currency]).map((code) =>
    `<option value="${esc(code)}"${code === data.currency ? " selected" : ""}>${esc(code)}</option>`).join("");
  $("#m-currency").innerHTML = options;
  if (!$("#r-currency").options.length) $("#r-currency").innerHTML = options;  // the reports' picker
  $("#rtp-body").innerHTML = data.by_bet_class.map((r) => {
    const ci = r.interval_99;
    const inside = ci && r.theoretical_game_rtp !== null
      ? (ci[0] <= r.theoretical_game_rtp && r.theoretical_game_rtp <= ci[1] ? "yes" : "NO") : "–";
    return `<tr data-line-bet="${r.line_bet}"><td>${esc(r.model_name)} ${esc(r.model_version)}</td>
      <td class="num">${esc(money(r.line_bet))}</td><td class="num">${r.rounds}</td>
      <td class="num">${esc(money(r.total_bet))}</td><td class="num">${esc(money(r.total_win))}</td>
      <td class="num">${pct(r.actual_rtp)}</td><td class="num">${pct(r.actual_game_rtp)}</td>
      <td class="num">${ci ? `${pct(ci[0])} – ${pct(ci[1])}` : "–"}</td>
      <td class="num">${pct(r.theoretical_game_rtp, 3)}</td><td data-inside="${inside}">${inside}</td></tr>`;
  }).join("") || `<tr><td colspan="10">No round yet.</td></tr>`;
  $("#rtp-free-body").innerHTML = (data.free_by_bet_class || []).map((r) => `<tr data-line-bet="${r.line_bet}">
      <td>${esc(r.model_name)} ${esc(r.model_version)}</td><td class="num">${esc(money(r.line_bet))}</td>
      <td class="num">${r.rounds}</td><td class="num">${esc(money(r.total_bet))}</td>
      <td class="num">${esc(money(r.total_win))}</td><td class="num">${pct(r.actual_rtp)}</td></tr>`).join("")
    || `<tr><td colspan="6">No free round yet.</td></tr>`;
  $("#daily-body").innerHTML = data.daily.map((d) => `<tr class="${d.line_bet === null ? "bo-total" : ""}"
      data-day="${esc(d.day)}" data-line-bet="${d.line_bet === null ? "total" : d.line_bet}">
      <td>${esc(d.day)}</td><td>${d.line_bet === null ? "total" : esc(money(d.line_bet))}</td>
      <td class="num">${d.rounds}</td><td class="num" data-cents="${d.bets}">${esc(money(d.bets))}</td>
      <td class="num" data-cents="${d.wins}">${esc(money(d.wins))}</td>
      <td class="num" data-cents="${d.ggr}">${esc(money(d.ggr))}</td></tr>`).join("")
    || `<tr><td colspan="6">No round in these days.</td></tr>`;
  const p = data.pool;
  const facts = [["Pool now", money(p.pool)], ["Seed", money(p.seed)], ["Contributions", money(p.contributions)],
    ["Won", money(p.wins)], ["Refills (seed included)", money(p.refills)], ["Hits", String(p.hits)]];
  $("#pool-facts").innerHTML = facts.map(([k, v]) => `<dt>${esc(k)}</dt><dd data-fact="${esc(k)}">${esc(v)}</dd>`).join("");
  $("#refills-body").innerHTML = p.recent_refills.map((r) => `<tr><td>${r.round_id}</td><td>${esc(when(r.created_at))}</td>
    <td class="num">${esc(money(r.amount))}</td><td class="num">${esc(money(r.pool_after))}</td></tr>`).join("")
    || `<tr><td colspan="4">No refill since the seed.</td></tr>`;
  const pending = data.pending_credits;
  $("#pending").hidden = !pending;
  if (pending) {
    const refused = data.unpaid_wins ? data.unpaid_wins.count : 0;
    $("#pending-facts").textContent = pending.count
      ? `${pending.count} credits (${money(pending.amount)}) not yet acknowledged by the operator's wallet, the oldest from ${when(pending.oldest)}.`
      : refused ? `None pending; but the operator's wallet refused ${refused} credits (unpaid wins, below).`
      : "None: the operator's wallet has acknowledged every credit.";
    $("#pending-body").innerHTML = pending.calls.map((c) => `<tr data-transaction="${esc(c.transaction_id)}"
      data-round="${c.round_id === null ? "" : c.round_id}"><td><code>${esc(c.transaction_id)}</code></td>
      <td>${esc(c.external_id || c.username)}</td><td class="num">${c.round_id === null ? "–" : c.round_id}</td>
      <td class="num">${esc(money(c.amount))}</td><td class="num">${c.attempts}</td>
      <td>${esc(when(c.created_at))}</td></tr>`).join("");
  }
  showUnpaid(data.unpaid_wins, money);
}
