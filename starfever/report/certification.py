"""The parts of the PAR sheet a test lab asks for (GLI-11 style): identity, strips with stop
numbers, integer combination counts, RTP per bet class, confidence intervals, the Star Wild and
Hold & Cash splits, and the simulation's sizing. Figures from ``starfever.math.figures``
(``starfever rtp``) and from counting every base stop combination."""

from __future__ import annotations

import math
from fractions import Fraction
from statistics import NormalDist

from starfever.engine.model import MAX_WIN_ROUND, PRIZES_MULTIPLIER, UPGRADE_LINE_BET, MathModel
from starfever.engine.symbols import MAJOR_PAYS, MEGA_PAYS, MINOR_PAYS, MWILD
from starfever.math import exact
from starfever.math.figures_format import Figures
from starfever.math.stats import Z99
from starfever.report.document import Document
from starfever.sim.result import SimulationResult

Z = {"90 %": NormalDist().inv_cdf(0.95), "95 %": NormalDist().inv_cdf(0.975), "99 %": Z99}
"""Two-sided normal quantiles of the confidence-interval table (99 %: the project's one Z99)."""
def prize_labels(model: MathModel) -> tuple[str, str, str]:
    """The sheet's names of the MINOR, MAJOR and Mega prizes: the conditions' Minor, Major and
    Mega, or, for a model whose prizes are named by what they pay (``prize_names``
    multiplier, ADR 0072), names that call nothing a jackpot."""
    if model.hold_and_cash.prize_names == PRIZES_MULTIPLIER:
        return (f"x{MINOR_PAYS} prize", f"x{MAJOR_PAYS} prize", f"full-screen x{MEGA_PAYS} prize")
    return ("Minor", "Major", "Mega")


def upgrade_reading(model: MathModel) -> str:
    """What one UPGRADE adds under ``model``, and why (RULES.md)."""
    if model.hold_and_cash.upgrade_unit == UPGRADE_LINE_BET:
        return ("UPGRADE (RULES.md, 2026-12-03): an Upgrade Booster raises every held CASH value "
                "by 1 x line bet, the conditions' 'um die Einsatzhöhe' with 'Einsatz' defined as "
                "the line bet class (upgrade_unit line_bet).")
    return ("UPGRADE: this model adds 1 x total bet to every held CASH value (upgrade_unit "
            "total_bet), for conditions that say '1 x Gesamteinsatz'. The conditions supplied "
            "with the game say 'um die Einsatzhöhe', the line bet (RULES.md): this model does "
            "not follow them.")


def identity(doc: Document, model: MathModel, figs: Figures) -> None:
    """Model name, version, hash, rules that the figures depend on."""
    doc.heading("Model identity")
    doc.table(["Item", "Value"], [
        ["Name / version", f"{model.name} / {model.version}"],
        ["SHA-256 of the model's canonical JSON", model.sha256],
        ["EUR rule", model.jackpot_rule] if model.has_progressive else
        ["Progressive", "none: no pool, no contribution, no pool symbol on any strip"],
        ["Max win cap", "none" if model.max_win_x is None else
         f"{model.max_win_x:,} x total bet, "
         + ("the round's whole win, the EUR share included (the part of a share the cap cuts "
            "stays in the pool)" if model.max_win_scope == MAX_WIN_ROUND else
            "the game win only, the EUR share on top")],
        ["UPGRADE adds", "1 x line bet" if model.hold_and_cash.upgrade_unit == UPGRADE_LINE_BET
         else "1 x total bet"],
        ["Figures computed by", f"starfever rtp (format {figs.format})"],
    ])
    doc.paragraph(upgrade_reading(model))


def by_bet_class(doc: Document, figs: Figures) -> None:
    """RTP of each class, and the operator's refills per mix."""
    doc.heading("RTP per bet class")
    if not figs.has_progressive:
        doc.table(["Line bet", "Total RTP", "Std dev"],
                  [[f"EUR {b / 100:.2f}", f"{row.total * 100:.5f} %", f"{row.std_dev:.3f}"]
                   for b, row in figs.by_line_bet.items()])
        doc.paragraph("The model has no progressive: every class returns the game's RTP (the "
                      "game pays in multiples of the line bet), and the operator adds nothing.")
        return
    rows = [[f"EUR {b / 100:.2f}", f"{row.total * 100:.5f} %",
             f"{row.progressive * 100:.4f} %", f"{row.std_dev:.3f}"]
            for b, row in figs.by_line_bet.items()]
    doc.table(["Line bet", "Total RTP (players' money)", "of which EUR", "Std dev"], rows)
    runs = figs.jackpot_long_run
    doc.paragraph("One EUR share per spin, proportional to the line bet: every class gets the same "
                  "return per euro from the shared pool. The operator's refills to the seed come "
                  "on top, by mix of classes (shares of the spins):")
    doc.table(["Mix", "Refills per euro staked", "EUR return per class incl. refills",
               "Mean pool at a win", "Std dev, EUR share at this pool law"],
              [[name, f"{run.refills * 100:.4f} %",
                f"{run.progressive_per_class * 100:.4f} %",
                f"EUR {run.mean_pool_at_win_cents / 100:,.2f}",
                f"{run.std_dev:.3f} ({run.method})"]
               for name, run in runs.items()])
    doc.paragraph("The std dev per class above counts the EUR share at the seed pool; a round's "
                  "share is the pool's long-run law of the mix (the one its RTP counts), whose "
                  "std dev per round, the same at every class, is the last column: in closed "
                  "form where every spin is at EUR 1.00 (each win empties the pool), else from "
                  "the pool's law on a grid of 1/200 of its mean growth between wins, an "
                  "approximation (at all EUR 1.00 the grid gave 10.37763 for the default 2.0 "
                  "against the closed form's 10.37690).")


def strips(doc: Document, model: MathModel) -> None:
    """Every strip, stop by stop."""
    doc.heading("Strip listings")
    for label, reels in (("Base game", model.base_reels),
                         ("Star Wild respin", model.star_wild_reels)):
        longest = max(len(s) for s in reels)
        rows = [[stop, *[s[stop] if stop < len(s) else "" for s in reels]]
                for stop in range(longest)]
        doc.paragraph(f"{label}: stop s shows strip[s], strip[s+1], strip[s+2] on rows 1-3.")
        doc.table(["Stop", "Reel 1", "Reel 2", "Reel 3", "Reel 4", "Reel 5"], rows)


def combination_counts(doc: Document, model: MathModel) -> None:
    """Base line wins counted over every stop combination, integers."""
    from starfever.math.cycles import base_joint

    joint = base_joint(model)
    by_win = joint.histogram.sum(axis=0)
    total = joint.combinations
    doc.heading("Combination counts")
    doc.paragraph(f"Every one of the {total:,} base stop combinations, by the paid spin's line "
                  "win (line bets), counted (starfever.math.cycles):")
    rows = [[int(w), f"{int(c):,}", f"{int(c) / total:.6e}"]
            for w, c in enumerate(by_win.tolist()) if c]
    doc.table(["Line win (x line bet)", f"Combinations of {total:,}", "Probability"], rows)
    assert sum(int(c) for c in by_win.tolist()) == total


def confidence(doc: Document, figs: Figures) -> None:
    """What n spins can confirm."""
    sd = figs.std_dev
    doc.heading("Confidence intervals")
    doc.paragraph(f"Half-width of the interval around the RTP after n spins (std dev {sd:.3f} x "
                  "total bet, exact):")
    rows = [[f"10^{k}", *[f"+/- {z * sd / math.sqrt(10 ** k) * 100:.3f} pp" for z in Z.values()]]
            for k in range(3, 9)]
    doc.table(["Spins", *Z], rows)
    need = math.ceil((Z["99 %"] * sd / 0.0002) ** 2)
    doc.paragraph(f"Confirming 95.50 % +/- 0.02 pp at 99 % takes {need:,} spins.")


def splits(doc: Document, model: MathModel, report: exact.ExactReport,
           figs: Figures) -> None:
    """Star Wild (Multiplier Wild stacks, rounds that pay 0) and Hold & Cash (cash, Minor,
    Major, Mega)."""
    doc.heading("Star Wild split")
    cases = exact.star_wild_cases(model)
    stacked = [c for c in cases if MWILD in c.wilds.values()]
    p_all = sum((c.probability for c in cases), Fraction(0))
    p_mw = sum((c.probability for c in stacked), Fraction(0))
    rtp_mw = sum((c.probability * c.expected_pay for c in stacked), Fraction(0)) / 20
    doc.table(["Figure", "Value"], [
        ["Star Wild frequency", f"1 in {1 / float(p_all):,.1f}" if p_all else "never"],
        ["with a Multiplier Wild stack (3 coins on one reel)",
         f"1 in {1 / float(p_mw):,.1f} ({float(p_mw / p_all) * 100:.2f} % of Star Wilds)"
         if p_mw else "never"],
        ["RTP of the respin, from MWILD-stack rounds",
         f"{float(rtp_mw) * 100:.4f} % of {float(report.star_wild) * 100:.4f} %"],
        ["Star Wild rounds whose respin alone pays nothing",
         f"{figs.star_wild_respin_pays_nothing * 100:.2f} %"],
        ["Star Wild rounds that pay nothing (paid spin and respin)",
         f"{figs.star_wild_round_pays_nothing * 100:.2f} %"],
        ["Coin layouts with 4 coins", f"{len(cases)} ({len(stacked)} with a stack)"],
    ])
    doc.heading("Hold & Cash split")
    split = report.hold_and_cash_split()
    whole = sum(split.values(), Fraction(0))
    note = "" if model.max_win_x is None else " (before the max-win cap)"
    minor, major, mega = prize_labels(model)
    doc.table(["Part", "RTP" + note, "Share of Hold & Cash"],
              [[label, f"{float(split[key]) * 100:.4f} %",
                f"{float(split[key] / whole) * 100:.2f} %" if whole else "—"]
               for key, label in (("cash", "cash (incl. boosters)"), ("minor", minor),
                                  ("major", major), ("mega", mega))])


def sized_simulation(doc: Document, sim: SimulationResult, figs: Figures) -> None:
    """Exact against simulated, saying what the simulation's size can confirm."""
    doc.heading("Exact and simulated, side by side")
    half = Z["99 %"] * figs.std_dev_game / math.sqrt(sim.spins) * 100
    rtp = sim.rtp
    rows = [["Total RTP", f"{figs.total * 100:.4f} %", f"{rtp.value * 100:.4f} %",
             f"[{rtp.ci99[0] * 100:.4f}, {rtp.ci99[1] * 100:.4f}] %",
             "yes" if rtp.contains(figs.total) else "NO"]]
    hit = sim.frequency("hit")
    low, high = hit.ci99
    rows.append(["Hit frequency", f"{figs.hit_frequency * 100:.4f} %",
                 f"{hit.value * 100:.4f} %", f"[{low * 100:.4f}, {high * 100:.4f}] %",
                 "yes" if hit.contains(figs.hit_frequency) else "NO"])
    doc.table(["Figure", "Exact", "Simulated", "99 % interval", "Inside"], rows)
    doc.paragraph(f"The simulation ({sim.spins:,} spins, seed {sim.seed}) confirms the RTP to "
                  f"+/- {half:.3f} pp at 99 %, no finer; the exact figures do not rest on it.")
