// The free-rounds page (issue 36, ADR 0064): every grant and campaign with its state and what it
// cost (paid winnings plus the €€€ contributions the operator funds), cancel, and in ledger mode
// a form to grant a player free rounds. Every figure is the server's.
import { BoError, esc } from "./boapi.js";

const $ = (sel) => document.querySelector(sel);
const when = (iso) => (iso ? iso.replace("T", " ").replace(/\.\d+/, "").replace(/(\+00:00|Z)$/, " UTC") : "–");

function costText(c, money) {
  return `${c.rounds_played} rounds: ${money(c.winnings)} paid + ${money(c.jackpot_funding)} €€€ funding`
    + ` = ${money(c.total)}${c.withheld ? ` (${money(c.withheld)} withheld above caps)` : ""}`;
}

/** Show the grants and campaigns. */
export async function loadFreeRounds(api, money) {
  const data = await api.get("/operator/free-rounds");
  $("#fr-grants").innerHTML = data.grants.map((g) => `<tr data-grant="${g.id}">
    <td>${g.id}</td><td><code>${esc(g.grant_id)}</code></td><td>${esc(g.campaign_id || "–")}</td>
    <td>${esc(g.player_id)}</td><td class="num">${g.rounds_played} / ${g.rounds}</td>
    <td class="num">${esc(money(g.line_bet))}</td><td class="num">${esc(money(g.winnings))}</td>
    <td>${esc(when(g.expires_at))}</td><td data-state="${esc(g.state)}">${esc(g.state)}</td>
    <td>${g.state === "active" ? `<button type="button" data-cancel-grant="${g.id}">Cancel</button>` : ""}</td></tr>`).join("")
    || `<tr><td colspan="10">No grant yet.</td></tr>`;
  $("#fr-campaigns").innerHTML = data.campaigns.map((c) => `<tr data-campaign="${esc(c.campaign_id)}">
    <td><code>${esc(c.campaign_id)}</code></td><td>${c.every_player ? "every player" : "listed players"}</td>
    <td>${esc(when(c.starts_at))} – ${esc(when(c.ends_at))}</td><td class="num">${c.rounds}</td>
    <td class="num">${esc(money(c.line_bet))}</td><td class="num">${c.grants}</td>
    <td data-cost="${c.cost.total}">${esc(costText(c.cost, money))}</td><td>${esc(c.state)}</td>
    <td>${c.state !== "cancelled" ? `<button type="button" data-cancel-campaign="${esc(c.campaign_id)}">Cancel</button>` : ""}</td></tr>`).join("")
    || `<tr><td colspan="9">No campaign yet.</td></tr>`;
  $("#fr-direct").textContent = `Grants made alone: ${costText(data.direct_cost, money)}.`;
}

/** Bind the page's form and buttons; ``done`` reloads it, ``failed`` shows an error. */
export function bindFreeRounds(api, money, parseEuros, done, failed) {
  $("#fr-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const lineBet = parseEuros($("#fr-bet").value);
    const cap = $("#fr-cap").value.trim() ? parseEuros($("#fr-cap").value) : null;
    const body = { grant_id: $("#fr-id").value.trim(), player_id: $("#fr-player").value.trim(),
      rounds: Number($("#fr-rounds").value), line_bet: lineBet };
    if (cap !== null) body.max_win = cap;
    try {
      await api.request("POST", "/operator/free-rounds/grants", { body });
      $("#fr-result").textContent = `Granted ${body.rounds} free rounds to ${body.player_id}.`;
      await done();
    } catch (error) { failed(error); }
  });
  $("#page-freerounds").addEventListener("click", async (event) => {
    const grant = event.target.closest("[data-cancel-grant]");
    const campaign = event.target.closest("[data-cancel-campaign]");
    if (!grant && !campaign) return;
    const path = grant ? `/operator/free-rounds/grants/${grant.dataset.cancelGrant}/cancel`
      : `/operator/free-rounds/campaigns/${encodeURIComponent(campaign.dataset.cancelCampaign)}/cancel`;
    try {
      await api.request("POST", path);
      await done();
    } catch (error) { failed(error instanceof BoError ? error : new Error(String(error))); }
  });
}
