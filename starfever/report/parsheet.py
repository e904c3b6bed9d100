"""The PAR sheet: exact figures from ``starfever.math``, an independent simulation from
``starfever.sim`` to confirm them, and plots (matplotlib, written as PNG files)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from starfever.engine.model import MathModel
from starfever.engine.symbols import (
    CELL_KINDS,
    HOLD_AND_CASH_COINS,
    LINES,
    MAJOR_PAYS,
    MEGA_PAYS,
    MINOR_PAYS,
    PAYTABLE,
    SYMBOLS,
)
from starfever.math import exact
from starfever.math.figures_format import Figures
from starfever.math.stats import Z99
from starfever.report import certification
from starfever.report.document import Document
from starfever.sim.result import SimulationResult

Z90 = 1.6448536269514722


def pct(x: Fraction | float, digits: int = 4) -> str:
    """A fraction as a percentage."""
    return f"{float(x) * 100:.{digits}f} %"


def one_in(p: Fraction | float) -> str:
    """A probability as '1 in N'."""
    return "never" if not p else f"1 in {1 / float(p):,.1f}"


def spins_to_confirm(std_dev: float, half_width: float = 0.001) -> int:
    """Spins for a 99 % interval of +/- ``half_width`` around the RTP."""
    return math.ceil((Z99 * std_dev / half_width) ** 2)


def build(model: MathModel, report: exact.ExactReport, sim: SimulationResult,
          out: Path, figs: Figures | None = None, *,
          progress: bool = False) -> Document:
    """Write the plots into ``out`` and return the document that shows them (``figs``: the
    figures of ``starfever rtp``, computed or read from the cache when not given;
    ``progress``: a bar over the sheet's sections on stderr)."""
    from tqdm import tqdm

    from starfever.math.figures import figures

    figs = figs if figs is not None else figures(model)
    doc = Document(f"PAR sheet — Star Fever, model '{model.name}' (version {model.version})")
    doc.paragraph(model.description or "")
    sections: list[tuple[str, Callable[[], None]]] = [
        ("identity", lambda: certification.identity(doc, model, figs)),
        ("summary", lambda: _summary(doc, model, report, sim)),
        ("bet classes", lambda: certification.by_bet_class(doc, figs)),
        ("simulation", lambda: certification.sized_simulation(doc, sim, figs)),
        ("paytable", lambda: _paytable(doc, model)),
        ("reels", lambda: _reels(doc, model)),
        ("strips", lambda: certification.strips(doc, model)),
        ("combinations", lambda: certification.combination_counts(doc, model)),
        ("Hold & Cash", lambda: _hold_and_cash(doc, model, report)),
        ("splits", lambda: certification.splits(doc, model, report, figs)),
        ("volatility", lambda: _volatility(doc, model, sim, figs)),
        ("confidence", lambda: certification.confidence(doc, figs)),
        ("plots", lambda: _plots(doc, report, sim, out, figs.std_dev)),
    ]
    with tqdm(total=len(sections), desc="PAR sheet", unit="section", disable=not progress,
              leave=False) as bar:
        for name, write in sections:
            bar.set_postfix_str(name)
            write()
            bar.update()
    doc.heading("How these figures were obtained")
    doc.paragraph(
        "Exact figures come from 'starfever rtp' (rational arithmetic: lines and Star Wild over the"
        " strips' symbol frequencies, Hold & Cash as a dynamic programme; see docs/math.md). The "
        "simulation is an independent path through the rules ('starfever simulate', compiled "
        f"kernel, seed {sim.seed}, {sim.spins:,} paid spins) and never calls the exact calculator.")
    return doc


def _summary(doc: Document, model: MathModel, r: exact.ExactReport,
             sim: SimulationResult) -> None:
    capped = model.max_win_x is not None
    minor, major, mega = certification.prize_labels(model)
    doc.heading("Return to player")
    rows = []
    for name, label in (("lines", "Line wins"), ("star_wild", "Star Wild respin"),
                        ("hold_and_cash", f"Hold & Cash (cash, {minor}, {major}, {mega})")):
        value = getattr(r, name)
        est = sim.component(name)
        rows.append([label, pct(value), pct(est.value), f"[{pct(est.ci99[0])}, {pct(est.ci99[1])}]",
                     "yes" if est.contains(float(value)) else "NO"])
    game = sim.game
    rows.append(["Game (lines + features)", pct(r.game), pct(game.value),
                 f"[{pct(game.ci99[0])}, {pct(game.ci99[1])}]",
                 "yes" if game.contains(float(r.game)) else "NO"])
    if model.has_progressive:
        rows.append(["EUR progressive contribution", pct(r.progressive), "not simulated",
                     "the contribution rate, by the rules", "—"])
    total = sim.rtp
    rows.append(["**Total**", pct(r.total), pct(total.value),
                 f"[{pct(total.ci99[0])}, {pct(total.ci99[1])}]",
                 "yes" if total.contains(float(r.total)) else "NO"])
    doc.table(["Component", "Exact", "Simulated", "99 % interval", "Exact inside"], rows)
    if capped:
        doc.paragraph(f"Total RTP to 12 digits: {float(r.total):.12f}. Not a pure rational: the "
                      "exact rational of the uncapped game less the max-win cap's cut, which "
                      "comes from the Hold & Cash payout DP in floats (relative error ~1e-12).")
    else:
        doc.paragraph(f"Exact total RTP to 12 digits: {float(r.total):.12f} (the exact rational "
                      f"has {len(str(r.total.denominator))}-digit terms; 'starfever rtp --json "
                      "--exact' prints it).")
    doc.heading("Frequencies (per paid spin)")
    freq = []
    for key, label, exact_value in (
            ("hit", "Hit (total win above 0; a respin paying 0 is no hit)", r.hit_frequency),
            ("star_wild", "Star Wild (exactly 4 coins)", r.star_wild_frequency),
            ("hold_and_cash", "Hold & Cash (5 or more coins)", r.hold_and_cash_frequency),
            ("mega", "Mega jackpot" if model.has_progressive or mega == "Mega" else mega,
             r.mega_frequency),
            *([("jackpot", "EUR jackpot line in the base spin", r.jackpot_frequency)]
              if model.has_progressive else [])):
        est = sim.frequency(key)
        freq.append([label, pct(exact_value, 5), one_in(exact_value), pct(est.value, 5),
                     "yes" if est.contains(float(exact_value)) else "NO"])
    doc.table(["Event", "Exact", "Exact, 1 in", "Simulated", "Exact inside 99 % CI"], freq)


def _paytable(doc: Document, model: MathModel) -> None:
    doc.heading("Paytable and line-win frequencies")
    classes = ", ".join(f"EUR {c / 100:.2f}" for c in model.line_bets)
    doc.paragraph("Pays in multiples of the line bet (total bet = 20 x line bet). Line bet classes:"
                  f" {classes}. Frequencies are per line and per paid spin; the RTP share is of "
                  "the total bet.")
    dist = exact.line_pay_distribution([exact.symbol_frequencies(s) for s in model.base_reels])
    share: dict[tuple[str, int], Fraction] = {}
    probs: dict[tuple[str, int], Fraction] = {}
    for pay, p in dist.items():
        key = (pay.symbol, pay.count)
        share[key] = share.get(key, Fraction(0)) + p * pay.factor
        probs[key] = probs.get(key, Fraction(0)) + p
    rows = []
    for symbol, factors in PAYTABLE.items():
        for count, factor in zip((3, 4, 5), factors, strict=True):
            p = probs.get((symbol, count), Fraction(0))
            rows.append([f"{symbol} x{count}", factor, one_in(p),
                         pct(share.get((symbol, count), Fraction(0)), 3)])
    doc.table(["Combination", "Pays", "Per line", "RTP share"], rows)
    if model.has_progressive:
        doc.paragraph("Wilds substitute for every paying symbol (never COIN or JACKPOT) and are "
                      "read as the highest win; 3 JACKPOT on reels 0-2 of a line win the share of "
                      "the EUR pool of the line bet class (EUR 0.01 -> 1 %, ..., EUR 1.00 -> "
                      f"100 %). Hold & Cash: MINOR {MINOR_PAYS}x, MAJOR {MAJOR_PAYS}x, Mega "
                      f"{MEGA_PAYS}x the total bet.")
    else:
        minor, major, mega = certification.prize_labels(model)
        doc.paragraph("Wilds substitute for every paying symbol (never COIN) and are read as the "
                      "highest win. No progressive: no strip holds a pool symbol and nothing of "
                      f"the stake flows into a pool. Hold & Cash fixed prizes: {minor} (cell "
                      f"MINOR) {MINOR_PAYS}x, {major} (cell MAJOR) {MAJOR_PAYS}x, {mega} (every "
                      f"cell held) {MEGA_PAYS}x the total bet.")
    doc.table(["Line", "Rows on reels 1-5"],
              [[n, " ".join(str(r) for r in line)] for n, line in enumerate(LINES, start=1)])


def _reels(doc: Document, model: MathModel) -> None:
    doc.heading("Reel strips")
    for label, strips in (("Base game", model.base_reels),
                          ("Star Wild respin", model.star_wild_reels)):
        counts = [Counter(s) for s in strips]
        present = [s for s in SYMBOLS if any(c[s] for c in counts)]
        rows = [[s, *[c[s] for c in counts]] for s in present]
        rows.append(["length", *[len(s) for s in strips]])
        doc.paragraph(f"{label}: symbol counts per reel.")
        doc.table(["Symbol", "Reel 1", "Reel 2", "Reel 3", "Reel 4", "Reel 5"], rows)
    doc.paragraph("Full strips (stop s shows strip[s], strip[s+1], strip[s+2] on rows 1-3): "
                  "see 'starfever model --json'.")


def _hold_and_cash(doc: Document, model: MathModel, r: exact.ExactReport) -> None:
    doc.heading("Hold & Cash")
    hc = model.hold_and_cash
    total = sum(hc.cell_weights)
    minor, major, mega = certification.prize_labels(model)
    named = {} if mega == "Mega" else {"MINOR": f"MINOR ({minor})", "MAJOR": f"MAJOR ({major})"}
    doc.table(["Cell", "Weight", "Probability per empty cell and respin"],
              [[named.get(k, k), w, pct(Fraction(w, total), 3)]
               for k, w in zip(CELL_KINDS, hc.cell_weights, strict=True)])
    doc.table(["Value (x total bet)", "Coin weight", "Respin CASH weight"],
              [[v, c, w] for v, c, w in zip(range(1, 6), hc.coin_values, hc.cash_values,
                                            strict=True)])
    rows = []
    for n, m in r.hold_and_cash_by_coins.items():
        sd = math.sqrt(float(m.second - m.mean**2))
        rows.append([n, one_in(r.coin_counts[n]), f"{float(m.mean):.3f}", f"{sd:.3f}",
                     pct(m.mega, 3), f"{float(m.minors):.3f}", f"{float(m.majors):.4f}"])
    doc.table(["Coins", "Frequency", "Mean payout (x total bet)", "Std dev", f"P({mega})",
               *(("Minors", "Majors") if mega == "Mega" else (f"{minor}s", f"{major}s"))], rows)
    if not r.hold_and_cash_frequency:  # a hand-made model may leave the feature out
        doc.paragraph(f"This model never triggers the feature: no base stop combination shows "
                      f"{HOLD_AND_CASH_COINS} or more coins.")
        return
    doc.paragraph(f"Given the feature, its mean payout is {float(r.hold_and_cash_mean):.3f} x the "
                  f"total bet; triggers need {HOLD_AND_CASH_COINS} or more coins.")


def _volatility(doc: Document, model: MathModel, sim: SimulationResult,
                figs: Figures) -> None:
    doc.heading("Volatility and max win")
    sd = figs.std_dev
    mw, mp = figs.max_win_x, figs.max_win_probability
    doc.table(["Figure", "Value"], [
        ["Standard deviation per round (x total bet)", f"{sd:.3f}"],
        ["How it was obtained", figs.std_dev_note],
        ["Volatility index (90 %, 1.645 sd)", f"{Z90 * sd:.2f}"],
        ["Spins to confirm RTP to +/-0.1 pp at 99 %", f"{spins_to_confirm(sd):,}"],
        ["Largest base spin (x total bet), exact", f"{mw.base:g} (p {mp.base:.3e})"],
        ["Largest Star Wild round (x total bet), exact",
         f"{mw.star_wild:g} (p {mp.star_wild:.3e})"],
        ["Largest Hold & Cash (x total bet)",
         "no finite maximum" if mw.hold_and_cash is None else f"{mw.hold_and_cash:,} (cap)"],
        ["Largest round win seen in the simulation (x total bet)", f"{sim.max_win:,.1f}"],
    ])
    doc.paragraph(
        "Win bands of a round's game win"
        + (" (EUR share not included)" if model.has_progressive else " (the whole win: no "
           "progressive)")
        + ": exact, and counted in the "
        f"simulation ({sim.spins:,} rounds) with its 99 % interval; 'inside' says whether the "
        "exact probability lies in it.")
    simulated = simulated_bands(sim, [(b.from_x, b.to_x) for b in figs.win_bands])
    rows = []
    for b, seen in zip(figs.win_bands, simulated, strict=True):
        p = b.probability
        q = seen / sim.spins
        half = Z99 * math.sqrt(q * (1 - q) / sim.spins)
        inside = ("yes" if abs(p - q) <= half else "no") if seen else (
            f"not seen ({p * sim.spins:.2g} rounds expected)")
        rows.append(["0" if b.to_x == b.from_x else
                     (f"> {b.from_x}" if b.to_x is None else f"({b.from_x}, {b.to_x}]"),
                     f"{p:.6e}", f"{q:.6e}", f"{seen:,}",
                     f"+/- {half:.2e}" if seen else "—", inside])
    doc.table(["x total bet", "Exact probability", "Simulated", "Rounds", "99 % half-width",
               "Inside"], rows)
    doc.paragraph("Hold & Cash tail, exact (payout DP): P(payout >= k x total bet).")
    doc.table(["k", "Given the feature", "Per paid spin"],
              [[f"{t.k:,}", f"{t.given_trigger:.4e}", f"{t.per_spin:.4e}"]
               for t in figs.hold_and_cash_tails])
    doc.paragraph(
        "Hold & Cash has no finite maximum unless the model sets max_win_x: a chain of boosters "
        "keeps resetting the counter while cells are empty, and each MULTIPLIER doubles the held "
        "values.")


def simulated_bands(sim: SimulationResult, bands: list[tuple[int, int | None]]) -> list[int]:
    """Rounds of the simulation per win band (a, b] (``b`` None: above ``a``; a == b: the
    rounds that won nothing): sums of whole histogram bins, whose edges include every band end
    plus 1/40 (half the smallest win step), so that each bin lies inside one band."""
    edges = sim.histogram_edges
    counts = sim.win_histogram
    lower = [0.0, 0.0, *edges]  # lower end of bin k: [0] won nothing, [1] (0, edges[0])
    out = []
    for a, b in bands:
        if a == b:
            out.append(counts[0])
            continue
        lo = a + 1 / 40 if a else 0.0
        hi = math.inf if b is None else b + 1 / 40
        if (a and not any(math.isclose(e, lo) for e in edges)) or (
                b is not None and not any(math.isclose(e, hi) for e in edges)):
            raise ValueError(f"the simulation's bins do not split at band ({a}, {b}]")
        out.append(sum(c for k, c in enumerate(counts) if k >= 1 and
                       lo - 1e-9 <= lower[k] < hi - 1e-9))
    return out


def _plots(doc: Document, r: exact.ExactReport, sim: SimulationResult, out: Path,
           sd: float) -> None:
    doc.heading("Plots")
    edges = list(sim.histogram_edges)

    _log_histogram(out / "win-distribution.png", edges, sim.win_histogram[1:], sim.spins,
                   color=("#d4a017", "#7a5c00"), xlabel="round win (x total bet)",
                   ylabel="frequency per paid spin",
                   title=f"Win distribution ({sim.spins:,} simulated rounds; no win: "
                         f"{sim.win_histogram[0] / sim.spins:.1%})")
    doc.image("win-distribution.png", "Distribution of round wins (log-log)")

    fig, ax = plt.subplots(figsize=(8, 4.5))
    trace = sim.rtp_trace()
    xs = [n for n, _ in trace]
    ax.plot(xs, [100 * v for _, v in trace], color="#1f5fa8", label="simulated total RTP")
    total = float(r.total)
    ax.axhline(100 * total, color="#c0392b", label=f"exact {100 * total:.3f} %")
    band = [100 * Z99 * sd / math.sqrt(n) for n in xs]
    ax.fill_between(xs, [100 * total - b for b in band], [100 * total + b for b in band],
                    color="#c0392b", alpha=0.12, label="99 % band around exact")
    ax.set_xscale("log")
    ax.set_xlabel("paid spins")
    ax.set_ylabel("RTP (%)")
    ax.set_ylim(100 * total - 3, 100 * total + 3)
    ax.legend()
    ax.set_title("RTP convergence of the simulation")
    fig.tight_layout()
    fig.savefig(out / "rtp-convergence.png", dpi=110)
    plt.close(fig)
    doc.image("rtp-convergence.png", "Simulated RTP converging on the exact value")

    hold = sim.hold_and_cash_histogram
    features = sum(hold)
    _log_histogram(out / "hold-and-cash.png", edges, hold[1:], max(features, 1),
                   color=("#2e8b57", "#1b5436"), xlabel="Hold & Cash payout (x total bet)",
                   ylabel="share of features",
                   title=f"Hold & Cash payout distribution ({features:,} features; exact mean "
                         + (f"{float(r.hold_and_cash_mean):.2f} x)" if r.hold_and_cash_frequency
                            else "none: never triggered)"))
    doc.image("hold-and-cash.png", "Hold & Cash payouts")

    fig, ax = plt.subplots(figsize=(6, 3.5))
    parts = [("lines", float(r.lines)), ("Star Wild", float(r.star_wild)),
             ("Hold & Cash", float(r.hold_and_cash))]
    if r.progressive:
        parts.append(("EUR progressive", float(r.progressive)))
    ax.barh([p for p, _ in parts], [100 * v for _, v in parts], color="#6a4c93")
    for i, (_, v) in enumerate(parts):
        ax.text(100 * v + 0.5, i, f"{100 * v:.2f} %", va="center")
    ax.set_xlabel("RTP (% of total bet)")
    ax.set_title(f"RTP by component (total {100 * float(r.total):.2f} %)")
    ax.set_xlim(0, 100 * max(v for _, v in parts) + 12)
    fig.tight_layout()
    fig.savefig(out / "rtp-split.png", dpi=110)
    plt.close(fig)
    doc.image("rtp-split.png", "RTP by component")


LOG_EDGES = tuple(float(10 ** (k / 5)) for k in range(-5, 26))
"""The plots' bins: 5 per decade (the simulator's edges include these, and the band ends)."""


def _log_histogram(path: Path, edges: list[float], counts: tuple[int, ...], total: int, *,
                   color: tuple[str, str], xlabel: str, ylabel: str, title: str) -> None:
    """A log-log bar chart of counts regrouped into log-spaced bins (5 per decade);
    ``counts[0]`` is the bin below ``edges[0]``."""
    grouped = [0] * (len(LOG_EDGES) + 1)
    for lower, count in zip([0.0, *edges], counts, strict=True):
        grouped[sum(1 for e in LOG_EDGES if e <= lower * (1 + 1e-12))] += count
    step = 10 ** 0.2
    lefts = [LOG_EDGES[0] / step, *LOG_EDGES]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.bar(lefts, [c / total for c in grouped], width=[b * (step - 1) for b in lefts],
           align="edge", color=color[0], edgecolor=color[1])
    ax.set_xscale("log")
    if any(grouped):  # a feature the model never triggers has nothing to scale
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
