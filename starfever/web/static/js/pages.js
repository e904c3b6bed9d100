// Paytable and rules, generated from GET /api/v1/game (the engine's own data).
import { symbolSvg } from "./symbols.js";
import { hasPool, prizesByMultiplier } from "./market_de.js";

function miniLine(rows, n) {
  const cells = [];
  for (let row = 0; row < 3; row++) {
    for (let reel = 0; reel < 5; reel++) {
      cells.push(`<rect x="${reel * 12 + 1}" y="${row * 12 + 1}" width="10" height="10" rx="2" class="${rows[reel] === row ? "on" : ""}"/>`);
    }
  }
  const pts = rows.map((row, reel) => `${reel * 12 + 6},${row * 12 + 6}`).join(" ");
  return `<figure class="mini-line"><svg viewBox="0 0 60 36" aria-hidden="true">${cells.join("")}<polyline points="${pts}"/></svg><figcaption>${n}</figcaption></figure>`;
}

/** The paytable: every symbol with its 3/4/5 wins in multiples and in the session's currency at
 * ``lineBet``. */
export function renderPaytable(el, game, { t, lang, money, lineBet }) {
  const name = (s) => s.name[lang] || s.name.en;
  // The Multiplier Wild pays as WILD (x3 on the line win): it gets its note below, not a row.
  const rows = game.symbols.filter((s) => s.pays && s.code !== "MWILD").slice().reverse().map((s) => {
    const cells = s.pays.map((f) => `<td><b>${f}×</b><small>${money(f * lineBet)}</small></td>`).join("");
    return `<tr data-symbol="${s.code}"><th scope="row"><span class="pt-name">${symbolSvg(s.code, "pt-sym")}<span>${name(s)}</span></span></th>${cells}</tr>`;
  }).join("");
  const coin = game.symbols.find((s) => s.code === "COIN");
  const jackpot = game.symbols.find((s) => s.code === "JACKPOT");
  const hc = game.hold_and_cash;
  el.innerHTML = `
    <p>${t("ptIntro", { bet: money(lineBet) })}</p>
    <table class="paytable">
      <thead><tr><th scope="col">${t("ptSymbol")}</th>${[3, 4, 5].map((n) => `<th scope="col">${t("ptOf", { n })}</th>`).join("")}</tr></thead>
      <tbody>${rows}</tbody>
    </table>
    <div class="pt-specials">
      <div class="special">${symbolSvg("WILD", "pt-sym")}${symbolSvg("MWILD", "pt-sym")}<p>${t(hasPool(game) ? "wildRule" : "wildRuleNoPool")}</p></div>
      <div class="special">${symbolSvg("COIN", "pt-sym")}<p><b>${name(coin)}</b> – ${t("coinRule", { sw: game.star_wild_coins, hc: game.hold_and_cash_coins })}</p></div>
      ${hasPool(game) ? `<div class="special">${symbolSvg("JACKPOT", "pt-sym")}<p><b>${name(jackpot)}</b> – ${t("jackpotRule")}</p></div>` : ""}
      <div class="special hc-pays">
        ${symbolSvg("MINOR", "pt-sym")}<p>${prizesByMultiplier(game)
          ? `<b>×${hc.minor}</b> · <b>×${hc.major}</b> · <b>${t("prizeFullScreen")}</b> ${hc.mega}×`
          : `<b>MINOR</b> ${hc.minor}× · <b>MAJOR</b> ${hc.major}× · <b>MEGA</b> ${hc.mega}×`} · CASH ${hc.cash_values.join("/")}× ${t("totalBetWord")} (${money(lineBet * game.line_count)})</p></div>
    </div>
    <h3>${t("linesTitle")}</h3>
    <div class="lines-grid">${game.lines.map((rows, i) => miniLine(rows, i + 1)).join("")}</div>`;
}

/** A fraction (0.955) as a percentage with two decimals in the page's language ("95,50"). */
export function percent(fraction, lang) {
  const text = (fraction * 100).toFixed(2);
  return lang === "de" ? text.replace(".", ",") : text;
}

function number(x, lang) {
  const text = String(x);
  return lang === "de" ? text.replace(".", ",") : text;
}

/** "1 in N" of a probability per round, N with ``digits`` decimals ("3.09"; "–" unknown). */
export function oneIn(probability, digits, lang) {
  return probability > 0 ? number((1 / probability).toFixed(digits), lang) : "–";
}

/** The text that says what one UPGRADE adds, by the model's ``upgrade_unit``. */
export const UPGRADE_RULES = { line_bet: "upgradeLineBet", total_bet: "upgradeTotalBet" };

/** The rules text, with the numbers from the engine's data, the running model's exact return
 * and the market profile (GET /api/v1/game). */
export function renderRules(el, game, { t, money, lang, lineBet }) {
  const hc = game.hold_and_cash;
  const m = game.market || {};
  const totalBet = lineBet * game.line_count;
  const cap = game.max_win?.cap_x;
  const largest = game.max_win?.largest_x;
  const pool = hasPool(game);  // without the €€€ pool no text names a pool or a jackpot
  // the cap holds the whole round (RULES.md), or, in a model made before, the game win only
  const maxWin = cap
    ? t(!pool ? "maxWinCapNoPool" : game.max_win?.scope === "game" ? "maxWinCapGame" : "maxWinCap",
      { cap, amount: money(cap * totalBet) })
    : t(pool ? "maxWinNone" : "maxWinNoneNoPool", { base: number(largest?.base ?? "–", lang),
      star: number(largest?.star_wild ?? "–", lang), mega: hc.mega });
  const market = t("marketHtml", {
    name: m.name,
    turbo: t(m.turbo ? "marketTurboYes" : "marketTurboNo"),
    skip: t(m.slam_stop ? "marketSkipYes" : "marketSkipNo"),
    minRound: m.min_round_ms ? t("marketMinRound", { s: number(m.min_round_ms / 1000, lang) }) : "",
    maxStake: money(m.max_stake_cents),
    clock: m.show_net_position ? t("marketClock") : "",
    young: m.young_adult_stake_cap ? t("marketYoungCap", { age: m.young_adult_stake_cap.below_age,
      stake: money(m.young_adult_stake_cap.max_stake_cents) }) : "",
    celebrate: m.celebrate_win_equal_to_stake === false ? t("marketNoCelebration") : "",
  });
  const rtp = game.rtp || {};
  const freq = game.frequencies || {};
  // the respin's €€€ is stated only where its reels can show it (the server says whether)
  const respinRule = t(!pool ? "respinNoPool"
    : game.star_wild_respin_jackpot === false ? "respinNoJackpot" : "respinJackpot");
  // what one UPGRADE adds is the running model's (hold_and_cash.upgrade_unit), never assumed
  const upgradeRule = t(UPGRADE_RULES[hc.upgrade_unit] || "upgradeUnknown");
  el.innerHTML = t(pool ? "rulesHtml" : "rulesHtmlNoPool", {
    lines: game.line_count,
    classes: game.bet_classes.map((c) => money(c)).join(", "),
    // the €€€ share's base, 1.00 of the session's currency (ADR 0076: share_base 100)
    shareBase: money(100),
    shareOne: money(1),
    mult: game.mwild_multiplier,
    sw: game.star_wild_coins,
    hc: game.hold_and_cash_coins,
    cash: hc.cash_values.join(", "),
    respins: hc.respins,
    minor: hc.minor,
    major: hc.major,
    mega: hc.mega,
    model: game.model ? `${game.model.name} ${game.model.version}` : "–",
    rtp: rtp.total === undefined ? "–" : percent(rtp.total, lang),
    rtpGame: rtp.game === undefined ? "–" : percent(rtp.game, lang),
    rtpJackpot: rtp.progressive === undefined ? "–" : percent(rtp.progressive, lang),
    contribution: game.jackpot.contribution_rate === undefined ? "–"
      : number(Math.round(game.jackpot.contribution_rate * 10000) / 100, lang),
    seed: game.jackpot.seed_cents === undefined ? "–" : money(game.jackpot.seed_cents),
    maxWin,
    market,
    respinRule,
    upgradeRule,
    hit: freq.hit === undefined ? "–" : percent(freq.hit, lang),
    hitOneIn: oneIn(freq.hit, 2, lang),
    starWildOneIn: oneIn(freq.star_wild, 1, lang),
    holdOneIn: oneIn(freq.hold_and_cash, 1, lang),
  });
}
