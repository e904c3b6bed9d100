"""The bundle's written statements (ADR 0036): the €€€ progressive document and the
maximum-exposure statement. Every number comes from the model, the engine's constants or the
model's exact figures (:func:`starfever.math.figures.figures`); what the server does is said
as the code does it, naming the code, so a reviewer can check each sentence."""

from __future__ import annotations

import re
from pathlib import Path

from starfever.engine import money, symbols
from starfever.engine.model import MathModel
from starfever.math.figures_format import Figures, WinBand
from starfever.report.document import Document

APP_JS = Path(__file__).resolve().parent.parent / "web" / "static" / "js" / "app.js"


def _eur(cents: float) -> str:
    return f"EUR {cents / 100:,.2f}"


def _poll_seconds(path: Path = APP_JS) -> str:
    """How often the client asks for the pool (``POOL_POLL_MS`` of ``app.js``)."""
    found = re.search(r"POOL_POLL_MS\s*=\s*([\d_]+)", path.read_text(encoding="utf-8"))
    if found is None:
        return "periodically"
    return f"every {int(found.group(1).replace('_', '')) / 1000:g} s"


def progressive_document(model: MathModel, figures: Figures) -> Document:
    """How the €€€ pool of ``model`` is funded, shown, won, refilled and accounted for."""
    doc = Document(title=f"Star Fever €€€ progressive jackpot: model {model.name} "
                         f"{model.version}")
    rate = model.contribution_rate
    doc.paragraph(f"Model SHA-256 {model.sha256}. The €€€ is a progressive pool shared by every "
                  "player of one installation (one database): one row `jackpot_pool` (id "
                  "`main`), locked by every settlement that touches it "
                  "(starfever/server/services/jackpot.py, settlement.py).")
    doc.heading("Seed")
    doc.paragraph(f"The pool is created at the model's seed, {_eur(model.seed_cents)}, the first "
                  "time a server starts on a database without one (`ensure_pool`). The seed is "
                  "the operator's money: it is booked as a ledger movement `seed` from the "
                  "house account to the pool account, and counted in the pool's refill meter.")
    doc.heading("Funding: the contribution")
    doc.paragraph(f"Every bet contributes {float(rate):.4%} of the total bet (the model's "
                  f"`progressive.contribution_rate`, exactly {rate.numerator}/{rate.denominator}"
                  "). A contribution is split into whole cents now and a fraction of a cent "
                  "carried in the pool row (`money.progressive_contribution`), so the pool "
                  "receives exactly the rate of all bets over time although each booking is in "
                  "whole cents. The ledger books the contribution to the pool account and the "
                  "rest of the bet to the house; each round stores its contribution and the pool "
                  "before and after it.")
    doc.heading("Winning")
    shares = ", ".join(f"{_eur(b)} -> {b / money.JACKPOT_SHARE_BASE:.0%}"
                       for b in symbols.BET_CLASSES)
    rule = ("one share per spin, of the pool as it stood before the win, however many lines "
            "show it" if model.jackpot_rule == money.ONE_SHARE_PER_SPIN else
            "each line wins a share of what the earlier lines left (the earlier rule, kept for "
            "the rounds played under it)")
    doc.paragraph(f"3 JACKPOT symbols on reels 1 to {symbols.JACKPOT_REELS} of a line win a "
                  f"share of the pool equal to line bet / {_eur(money.JACKPOT_SHARE_BASE)} "
                  f"({shares}), rounded down to the cent; the rest stays in the pool. Rule: "
                  f"{rule} (`progressive.jackpot_rule` = `{model.jackpot_rule}`). The win is "
                  "paid from the pool account to the player in the round's settlement.")
    if model.max_win_x is not None:
        doc.paragraph(f"This model caps a round's total win at {model.max_win_x:,} x total bet, "
                      "the €€€ share included (RULES.md): the part of a share the cap leaves no "
                      "room for stays in the pool.")
    doc.heading("Refills and who pays them")
    doc.paragraph("After a win leaves the pool below the seed, the settlement refills it to the "
                  "seed of the model the server is running (`money.pool_refill`). The refill is "
                  "the operator's money: booked `refill` from the house to the pool in the same "
                  "transaction as the round, stored on the round (`pool_refill`), recorded as a "
                  "`pool_refill` significant event, added to the pool's refill meter and to the "
                  "metric `starfever_pool_refills_cents`. Refills are not part of the return "
                  "the players' money buys: that is the contribution rate; refills come on top, "
                  "and their long-run size depends on the mix of bet classes played:")
    doc.table(["bet-class mix", "refills (x total bets)", "refill per win", "mean pool at win",
               "€€€ return per class"],
              [[name, f"{run.refills:.6%}", _eur(run.refill_per_win_cents),
                _eur(run.mean_pool_at_win_cents), f"{run.progressive_per_class:.4%}"]
               for name, run in figures.jackpot_long_run.items()])
    doc.paragraph("Computed exactly from the pool's stationary law on a grid "
                  "(starfever.math.jackpot; figures/exact.json `jackpot_long_run`).")
    doc.heading("Display")
    doc.paragraph("`GET /api/v1/jackpot` (public) answers the pool, the seed and the "
                  "contribution rate; the browser client shows the pool in its €€€ meter, asks "
                  f"for it {_poll_seconds()} while idle and shows each settled round's "
                  "`pool_after` at once. The operator's `GET /api/v1/operator/jackpot` adds the "
                  "meters (contributions, wins, refills with the seed, hits, the carried "
                  "fraction); the back office shows the same with the latest refills.")
    doc.heading("Accounting in the reports")
    doc.paragraph("`starfever report daily|monthly` states per period and bet class the bets, "
                  "the wins (€€€ payouts included), the GGR (bets - wins), the contributions, "
                  "the €€€ wins, the refills and the €€€ hits, and the pool at the start and end "
                  "of the period: start + contributions - €€€ wins + refills = end. The "
                  "contributions are part of the bets; the refills are the operator's money on "
                  "top. The metrics `starfever_pool_cents` and `starfever_pool_refills_cents` "
                  "follow the pool live; `starfever audit` replays every round against the pool "
                  "it settled on.")
    doc.heading("When the game is withdrawn")
    doc.paragraph("The software does nothing to the pool when the game is withdrawn: no code "
                  "pays it out, moves it or closes it. Its balance stays in the pool account "
                  "of the database, and the report and the operator's view state it. A server "
                  "started later on the same database continues the same pool (even with another "
                  "model: the row keeps the seed it was created with, refills follow the running "
                  "model's seed). What happens to the balance (paid into a successor game's "
                  "pool, or as the regulator directs) is the operator's decision under its "
                  "licence, made outside the game and booked by the operator.")
    return doc


def exposure_document(model: MathModel, figures: Figures,
                      seen: list[tuple[str, int, float]]) -> Document:
    """The maximum-exposure statement of ``model``: its largest wins, the exact tails of the
    Hold & Cash, and the largest win each simulation of the bundle saw (``seen``: what, spins,
    largest round win in total bets)."""
    doc = Document(title=f"Star Fever maximum exposure: model {model.name} {model.version}")
    top_bet = max(symbols.BET_CLASSES) * symbols.LINE_COUNT
    largest, chance = figures.max_win_x, figures.max_win_probability
    doc.paragraph(f"Model SHA-256 {model.sha256}. Amounts at the largest total bet, "
                  f"{_eur(top_bet)}. Every probability is per paid spin (round) unless said.")
    doc.heading("Maximum win")
    if model.max_win_x is None:
        doc.paragraph("The model sets no cap (the conditions set none): the Hold & Cash feature "
                      "has no finite maximum win (boosters raise and double held values without "
                      "bound, each step less likely). The exposure is therefore stated as tail "
                      "probabilities below.")
    else:
        doc.paragraph(f"A round's total win, the €€€ share included, stops at "
                      f"{model.max_win_x:,} x total bet ({_eur(model.max_win_x * top_bet)} at "
                      f"{_eur(top_bet)}).")
    doc.table(["part", "largest win (x total bet)", f"at {_eur(top_bet)}",
               "probability per round"],
              [["paid spin (lines)", f"{largest.base:g}", _eur(largest.base * top_bet),
                f"{chance.base:.6g}"],
               ["Star Wild round (spin + respin)", f"{largest.star_wild:g}",
                _eur(largest.star_wild * top_bet), f"{chance.star_wild:.6g}"],
               ["Hold & Cash", "no maximum" if largest.hold_and_cash is None
                else f"{largest.hold_and_cash:,}", "–" if largest.hold_and_cash is
                None else _eur(largest.hold_and_cash * top_bet), "see the tails"]])
    doc.heading("Hold & Cash tails")
    doc.paragraph("P(the feature pays at least k x total bet), from the feature's payout law "
                  "(figures/exact.json `hold_and_cash_tails`; method: "
                  f"{figures.methods.get('hold_and_cash_tails', 'payout DP')}), with "
                  "the mean number of rounds between such wins:")
    doc.table(["k (x total bet)", f"at {_eur(top_bet)}", "given a trigger", "per round",
               "1 in rounds"],
              [[f"{t.k:,}", _eur(t.k * top_bet), f"{t.given_trigger:.6g}",
                f"{t.per_spin:.6g}", f"{1 / t.per_spin:,.0f}" if t.per_spin else "never"]
               for t in figures.hold_and_cash_tails])
    doc.paragraph(f"The payout law is kept exactly up to "
                  f"{figures.hold_and_cash_dp_cap_x:,} x total bet; the probability mass "
                  f"beyond it is {figures.hold_and_cash_above_cap_per_spin:.6g} per round "
                  "(counted in every tail above).")
    doc.heading("Win bands")
    doc.table(["round win (x total bet)", "probability per round"],
              [[_band(b), f"{b.probability:.6g}"] for b in figures.win_bands])
    if model.has_progressive:  # a model without the pool names none (ADR 0077)
        doc.paragraph("€€€ shares are not in these bands; a share is at most the pool (100 % "
                      f"at {_eur(money.JACKPOT_SHARE_BASE)} line bets), whose size the "
                      "progressive document states.")
    doc.heading("The largest wins the simulations saw")
    rows = []
    for label, spins, x in seen:
        band = next((b for b in figures.win_bands if _in_band(b, x)), None)
        tail = [t for t in figures.hold_and_cash_tails if t.k <= x]
        rows.append([label, f"{spins:,}", f"{x:,.2f}", _eur(x * top_bet),
                     _band(band) if band else "–",
                     f"{band.probability:.6g}" if band else "–",
                     f"P(H&C >= {tail[-1].k:,}) = {tail[-1].per_spin:.6g}"
                     if tail else "–"])
    doc.table(["simulation", "spins", "largest round win (x total bet)", f"at {_eur(top_bet)}",
               "its band", "band's probability per round", "Hold & Cash tail at or below it"],
              rows)
    return doc


def _in_band(band: WinBand, x: float) -> bool:
    low, high = band.from_x, band.to_x
    if high is not None and low == high:
        return x == low
    return x > low and (high is None or x <= high)


def _band(band: WinBand) -> str:
    low, high = band.from_x, band.to_x
    if high is not None and low == high:
        return f"= {low:,}"
    return f"> {low:,}" if high is None else f"> {low:,} to {high:,}"
