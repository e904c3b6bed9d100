// The free-rounds page (issue 36, ADR 0064): every grant and campaign with its state and what it
// cost (paid winnings plus the €€€ contributions the operator funds), cancel, and in ledger mode
// a form to grant a player free rounds and one to make a campaign. Every figure is the server's;
// the server checks every term, and its refusal is told here in a plain sentence.
import { BoError, esc } from "./boapi.js";

const $ = (sel) => document.querySelector(sel);
const when = (iso) => (iso ? iso.replace("T", " ").replace(/\.\d+/, "").replace(/(\+00:00|Z)$/, " UTC") : "–");

function costText(c, money, code) {
  return `${c.rounds_played} rounds: ${money(c.winnings, code)} paid + ${money(c.jackpot_funding, code)} €€€ funding`
    + ` = ${money(c.total, code)}${c.withheld ? ` (${money(c.withheld, code)} withheld above caps)` : ""}`;
}

// Each amount in its own currency (ADR 0078): a free round is played in its session's currency,
// so a grant's or a campaign's figures are per currency its rounds were played in, never summed.
function costsText(costs, money) {
  return costs.length ? costs.map((c) => `${c.currency}: ${costText(c, money, c.currency)}`).join("; ")
    : "0 rounds: nothing paid";
}

/** A line bet class in each currency named, or the class where none is known yet. */
function lineBetText(cents, codes, money) {
  return codes.length ? codes.map((code) => money(cents, code)).join(" / ")
    : `${cents} (minor units of the currency it is played in)`;
}

/** "YYYY-MM-DDTHH:MM[:SS]" of a datetime-local field, read as UTC, in ISO 8601 ("…Z"). */
function utc(local) {
  if (!local) return "";
  return `${local}${local.length === 16 ? ":00" : ""}Z`;
}

/** The datetime-local value of ``date`` in UTC, to the minute. */
function localValue(date) {
  return date.toISOString().slice(0, 16);
}

/** The server's refusal of a campaign as a sentence for the operator. */
export function campaignRefusal(error, campaignId) {
  if (!(error instanceof BoError)) return `The campaign was not made: ${error}.`;
  const detail = error.message ? ` (${error.message})` : "";
  const sentences = {
    invalid_campaign: `The campaign's window, players or validity are not right${detail}.`,
    invalid_grant: `The rounds, the line bet or the cap are not right${detail}.`,
    campaign_id_reused: `The id “${campaignId}” is already another campaign's: choose a new id `
      + "(the same id with the same terms only shows the campaign made before).",
    player_not_found: `A player on the list does not exist${detail}.`,
    validation_error: `A field is missing or not of its kind${detail}.`,
    operator_mode: "In operator mode the operator makes its campaigns through its signed API, not here.",
    network: "The server did not answer; nothing is known to be made: look at the list, then try again.",
  };
  return sentences[error.code] || `The campaign was not made: ${error.message} (${error.code}).`;
}

/** Show the grants and campaigns. */
export async function loadFreeRounds(api, money) {
  const data = await api.get("/operator/free-rounds");
  $("#fr-grants").innerHTML = data.grants.map((g) => {
    const codes = g.currency ? [g.currency] : g.costs.map((c) => c.currency);
    const won = g.currency ? money(g.winnings, g.currency)
      : g.costs.map((c) => money(c.winnings, c.currency)).join(" + ") || "–";
    return `<tr data-grant="${g.id}" data-currency="${esc(codes.join(","))}">
    <td>${g.id}</td><td><code>${esc(g.grant_id)}</code></td><td>${esc(g.campaign_id || "–")}</td>
    <td>${esc(g.player_id)}</td><td class="num">${g.rounds_played} / ${g.rounds}</td>
    <td class="num">${esc(lineBetText(g.line_bet, codes, money))}</td><td class="num">${esc(won)}</td>
    <td>${esc(when(g.expires_at))}</td><td data-state="${esc(g.state)}">${esc(g.state)}</td>
    <td>${g.state === "active" ? `<button type="button" data-cancel-grant="${g.id}">Cancel</button>` : ""}</td></tr>`;
  }).join("") || `<tr><td colspan="10">No grant yet.</td></tr>`;
  $("#fr-campaigns").innerHTML = data.campaigns.map((c) => `<tr data-campaign="${esc(c.campaign_id)}">
    <td><code>${esc(c.campaign_id)}</code></td><td>${c.every_player ? "every player" : "listed players"}</td>
    <td>${esc(when(c.starts_at))} – ${esc(when(c.ends_at))}</td><td class="num">${c.rounds}</td>
    <td class="num">${esc(lineBetText(c.line_bet, c.costs.map((x) => x.currency), money))}</td><td class="num">${c.grants}</td>
    <td data-cost="${c.costs.length === 1 ? c.costs[0].total : ""}">${esc(costsText(c.costs, money))}</td><td>${esc(c.state)}</td>
    <td>${c.state !== "cancelled" ? `<button type="button" data-cancel-campaign="${esc(c.campaign_id)}">Cancel</button>` : ""}</td></tr>`).join("")
    || `<tr><td colspan="9">No campaign yet.</td></tr>`;
  $("#fr-direct").textContent = `Grants made alone: ${costsText(data.direct_costs, money)}.`;
}

/** Bind the page's form and buttons; ``done`` reloads it, ``failed`` shows an error. */
export function bindFreeRounds(api, money, parse, done, failed) {
  $("#fr-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const player = $("#fr-player").value.trim();
    try {
      // the amounts are in the player's wallet's one currency (ledger mode), minor units by its
      // exponent (``parse(text, code)``); an unknown player is refused by the grant itself
      let code = "EUR";
      try {
        code = (await api.get(`/operator/players/${encodeURIComponent(player)}`)).currency || code;
      } catch (error) {
        if (!(error instanceof BoError) || error.status !== 404) throw error;
      }
      const lineBet = await parse($("#fr-bet").value, code);
      const cap = $("#fr-cap").value.trim() ? await parse($("#fr-cap").value, code) : null;
      const body = { grant_id: $("#fr-id").value.trim(), player_id: player,
        rounds: Number($("#fr-rounds").value), line_bet: lineBet };
      if (cap !== null) body.max_win = cap;
      await api.request("POST", "/operator/free-rounds/grants", { body });
      $("#fr-result").textContent = `Granted ${body.rounds} free rounds to ${body.player_id}.`;
      await done();
    } catch (error) { failed(error); }
  });
  if (!$("#fc-start").value) {  // a week from now, until the operator says otherwise
    const now = new Date();
    $("#fc-start").value = localValue(now);
    $("#fc-end").value = localValue(new Date(now.getTime() + 7 * 86400e3));
  }
  $("#fc-for").addEventListener("change", () => {
    $("#fc-players").disabled = $("#fc-for").value === "every";
  });
  $("#fc-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const campaignId = $("#fc-id").value.trim();
    // a campaign's amounts are minor units of each player's own currency (every served one
    // has the same exponent today): read by the installation's first currency (``null``)
    const lineBet = await parse($("#fc-bet").value, null);
    const capText = $("#fc-cap").value.trim();
    const cap = capText ? await parse(capText, null) : null;
    const out = $("#fc-result");
    if (lineBet === null || (capText && cap === null)) {
      out.textContent = `The ${lineBet === null ? "line bet" : "cap"} must be an amount such as 0,10.`;
      out.dataset.refused = "amount";
      return;
    }
    const players = $("#fc-for").value === "every" ? null
      : $("#fc-players").value.split(/[\s,;]+/).filter(Boolean);
    const body = { campaign_id: campaignId, players, rounds: Number($("#fc-rounds").value),
      line_bet: lineBet, starts_at: utc($("#fc-start").value), ends_at: utc($("#fc-end").value),
      valid_days: Number($("#fc-days").value) };
    if (cap !== null) body.max_win = cap;
    try {
      const made = await api.request("POST", "/operator/free-rounds/campaigns", { body });
      out.textContent = `Campaign ${made.campaign_id}: ${made.rounds} free rounds at ${money(made.line_bet)} for `
        + `${made.every_player ? "every player who opens the game in its window" : `the ${players.length} player(s) listed`}.`;
      delete out.dataset.refused;
      await done();
    } catch (error) {
      if (error instanceof BoError && error.status === 401) { failed(error); return; }
      out.textContent = campaignRefusal(error, campaignId);
      out.dataset.refused = error instanceof BoError ? error.code : "error";
    }
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
