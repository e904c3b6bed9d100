"""Every figure ``starfever rtp`` states, with the method beside each, cached per model hash.

Computing them from nothing takes seconds (every base stop combination, every respin stop
combination of every Star Wild layout, the Hold & Cash payout DP and its rational moments;
ADR 0023 says how); the result depends on nothing but the model's content and this code, so it
is stored as JSON under the model's SHA-256 (:data:`FORMAT` names the code's version of the
figures) in :func:`cache_dir`, and a model seen before answers from there. The shipped models'
figures ship with them (``starfever/models/figures``, written by ``starfever rtp --no-cache
--write-shipped``; a test recomputes them and compares), so even a fresh install answers at
once. A cache miss (a new model, a new format, a deleted or unreadable file) recomputes.
Readers get a frozen :class:`~starfever.math.figures_format.Figures`, never the JSON (ADR 0047).
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from fractions import Fraction
from importlib import resources
from pathlib import Path
from typing import Literal

from starfever.engine import money
from starfever.engine.model import MathModel, ModelError
from starfever.engine.symbols import CELLS, HOLD_AND_CASH_COINS, Cents
from starfever.math.figures_format import (
    ClassFigures,
    Components,
    ExactFigures,
    Figures,
    HoldAndCashSplit,
    HoldAndCashTail,
    LargestWinChances,
    LargestWins,
    PoolLongRun,
    WinBand,
)
from starfever.user_cache import user_cache_dir

FORMAT = 5
"""Bumped whenever the figures or their computation change: old cache files are then ignored."""

METHODS = {
    "total": "exact rational (factorised calculator, starfever.math.exact); with a max-win cap "
             "the exact rational less the cap's cut, which comes from the Hold & Cash payout DP "
             "in floats (relative error ~1e-12): not a pure rational (total_exact_rational)",
    "by_line_bet": "exact: game RTP (the game pays in multiples of the line bet) + the €€€ "
                   "contribution rate; under one share per spin every class gets the same "
                   "return per euro from one pool (starfever.math.jackpot), so the players' money "
                   "returns the contribution rate at every class; refills on top, per mix",
    "hit_frequency": "exact rational: every stop of reels 0-2 by coin layout, and every stop of "
                     "the respin's reels 0-2 for each Star Wild layout",
    "std_dev": "exact second moment (rational): base line win by coin layout over all base stop "
               "combinations, every Star Wild layout x every respin stop combination, Hold & "
               "Cash second moments from the rational DP; the €€€ enters as pool / 2000 total "
               "bets per hit at the seed pool, the same at every class",
    "win_bands": "exact integer counts for lines and Star Wild; Hold & Cash from the payout DP "
                 "in floats (starfever.math.holdcash_law); €€€ shares not included",
    "max_win_x": "exact: largest line win over all base stop combinations; largest paid spin + "
                 "respin over every Star Wild layout; Hold & Cash has no finite maximum unless "
                 "the model sets max_win_x (then the figures with a cap are exact up to the "
                 "Hold & Cash DP's float rounding)",
    "hold_and_cash_tails": "payout DP over whole UPGRADE steps (a line bet for upgrade_unit "
                           "line_bet, a total bet for total_bet) in floats, exact range up "
                           "to its cap",
    "star_wild_round_pays_nothing": "exact rational: P(no line win in the paid spin nor in "
                                    "the respin | Star Wild), a €€€ share aside",
    "star_wild_respin_pays_nothing": "exact rational: P(the respin alone has no line win | "
                                     "Star Wild), over every layout x every respin stop",
    "hold_and_cash_split": "exact rational: per coin count, the feature's expected MINOR and "
                           "MAJOR counts and P(Mega) from the rational DP, times their pays; "
                           "cash (boosters included) is the rest of the feature's mean; before "
                           "any max-win cap",
    "jackpot_long_run": "stationary law of the pool on a grid (starfever.math.jackpot), "
                        "balance-checked",
    "jackpot_long_run.std_dev": "exact game second moment and E[game win x 1{€€€}] with the "
                                "€€€ share's first two moments under the pool's long-run law "
                                "of the mix (grid; E[share] = p E[pool] / 2000 is the €€€ "
                                "return the mix's RTP counts), the same at every class; a mix "
                                "of EUR 1.00 line bets alone (each win empties the pool) in "
                                "closed form (jackpot_long_run.<mix>.method); with a max-win "
                                "cap the part of a share the cap cuts (it stays in the pool) "
                                "is not taken off",
}


def cache_dir() -> Path:
    """``$STARFEVER_CACHE_DIR``, else ``$XDG_CACHE_HOME/starfever``, else
    ``~/.cache/starfever`` (the user's cache folder, which numba's kernels share)."""
    return user_cache_dir()


def cache_path(model: MathModel) -> Path:
    """Where the figures of ``model`` are cached."""
    return cache_dir() / f"rtp-{model.sha256}-f{FORMAT}.json"


def shipped_path(model: MathModel) -> Path:
    """Where the figures of a shipped model ship (whether or not they exist)."""
    return Path(str(resources.files("starfever") / "models" / "figures")) / cache_path(
        model).name


def cached(model: MathModel) -> Figures | None:
    """The cached (or shipped) figures of ``model``, or ``None`` (also for a file of another
    model, another format or another shape)."""
    for path in (cache_path(model), shipped_path(model)):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(data, dict) and data.get("model_sha256") == model.sha256 \
                    and data.get("format") == FORMAT:
                return Figures.from_json(data)
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
    return None


def write_shipped(model: MathModel, figs: Figures) -> Path:
    """Store ``figs`` as the shipped figures of ``model``."""
    path = shipped_path(model)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(figs.to_json(), indent=1) + "\n", encoding="utf-8")
    return path


def _store(model: MathModel, figs: Figures) -> None:
    path = cache_path(model)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent,
                                         delete=False, suffix=".tmp") as out:
            json.dump(figs.to_json(), out)
        os.replace(out.name, path)
    except OSError:
        pass  # a read-only home: figures are recomputed next time


@dataclass(frozen=True)
class Found:
    """The figures of a model and where they came from."""

    figures: Figures
    """Every figure of the model."""
    cache: Literal["hit", "miss", "off"]
    """``hit``: read from the cache or the shipped figures; ``miss``: computed and stored;
    ``off``: computed, the cache neither read nor written."""


def look_up(model: MathModel, *, use_cache: bool = True) -> Found:
    """Every figure of ``model``, from the cache when it is there, and whether it was."""
    if use_cache:
        found = cached(model)
        if found is not None:
            return Found(found, "hit")
    figs = compute_figures(model)
    if use_cache:
        _store(model, figs)
    return Found(figs, "miss" if use_cache else "off")


def figures(model: MathModel, *, use_cache: bool = True) -> Figures:
    """Every figure of ``model``, from the cache when it is there (:func:`look_up`)."""
    return look_up(model, use_cache=use_cache).figures


def compute_figures(model: MathModel) -> Figures:
    """Compute every figure of ``model`` (seconds, ADR 0023)."""
    import numba as nb

    from starfever.math import exact
    from starfever.math.distribution import std_dev_with_jackpot, std_dev_with_pool, win_law
    from starfever.math.holdcash_law import DEFAULT_CAP, payout_laws
    from starfever.math.jackpot import LongRun, Mix, long_run, named_mixes

    # Three strands at once, each deterministic (so the figures do not depend on the timing):
    # the Hold & Cash payout DP and the rational calculator in threads, the base and respin
    # counts here; the compiled parts run without the GIL. The pool's long runs (one per mix)
    # follow the calculator, since they need the €€€ frequency.
    coins = exact.coin_count_distribution(model.base_reels)
    triggers = tuple(n for n in range(HOLD_AND_CASH_COINS, CELLS + 1) if coins.get(n))
    # without a progressive no pool exists, so it has no long run under any mix
    mixes = named_mixes() if model.has_progressive else {}
    with ThreadPoolExecutor(max_workers=3 + len(mixes)) as pool:
        # one thread each for the DP and the counts: the strands keep both cores busy, and
        # more threads among them cost CPU (measured: a third more, and slower; ADR 0023)
        laws = pool.submit(payout_laws, model.hold_and_cash,
                           cap=max(DEFAULT_CAP, model.max_win_x or 0), coins=triggers,
                           threads=1)
        calculated = pool.submit(exact.compute, model)
        features = pool.submit(lambda: calculated.result().hold_and_cash_by_coins)

        def pool_long_run(mix: Mix) -> LongRun:
            return long_run(mix, float(calculated.result().jackpot_frequency),
                            model.contribution_rate, model.seed_cents)

        pending = {name: pool.submit(pool_long_run, mix) for name, mix in mixes.items()}
        threads = nb.get_num_threads()
        nb.set_num_threads(1)  # for this thread's counts only (numba's setting is per thread)
        try:
            law = win_law(model, features, laws=laws)
        finally:
            nb.set_num_threads(threads)
        report = calculated.result()
        long_runs = {name: future.result() for name, future in pending.items()}
    if model.max_win_x is not None and law.max_star_wild > model.max_win_x:
        raise ModelError(f"max_win_x {model.max_win_x:,}: this model's largest Star Wild round "
                         f"pays {float(law.max_star_wild):,g} x total bet, past the cap; the exact "
                         "figures cut only Hold & Cash at the cap (set max_win_x to at least "
                         "that)")
    if abs(law.mean - report.game) > (Fraction(1, 10**12) if model.max_win_x else 0):
        raise ArithmeticError("the win law's mean differs from the factorised calculator's")
    game_sd = math.sqrt(float(law.second_moment - report.game ** 2))
    by_line_bet: dict[Cents, ClassFigures] = {}
    for bet in model.line_bets:
        share = money.progressive_share(model.seed_cents, bet)
        jackpot_x = Fraction(share, money.total_bet(bet))
        by_line_bet[bet] = ClassFigures(
            total=float(report.game + model.contribution_rate),
            progressive=float(model.contribution_rate),
            std_dev=std_dev_with_jackpot(law, report.game, jackpot_x))
    seed_x = Fraction(money.progressive_share(model.seed_cents, Cents(100)), 2000)
    per_x = money.total_bet(Cents(1)) * money.JACKPOT_SHARE_BASE  # pool cents per total bet
    runs = {}
    for name, mix in mixes.items():
        run = long_runs[name]
        runs[name] = PoolLongRun(
            mix={Cents(b): float(w) for b, w in mix.items()},
            progressive_per_class=run.return_per_class,
            players_money=float(model.contribution_rate),
            refills=run.refill_rate,
            total_per_class_with_refills=float(report.game) + run.return_per_class,
            mean_pool_at_win_cents=run.mean_pool_at_win,
            refill_per_win_cents=run.refill_per_win,
            method=run.method,
            balance_error=run.balance_error,
            std_dev=std_dev_with_pool(law, report.game, run.mean_pool_at_win / per_x,
                                      run.mean_square_pool_at_win / per_x ** 2))
    hold_p = report.hold_and_cash_frequency
    split = report.hold_and_cash_split()
    return Figures(
        model=model.name,
        model_version=model.version,
        model_sha256=model.sha256,
        jackpot_rule=model.jackpot_rule,
        upgrade_unit=model.hold_and_cash.upgrade_unit,
        total=float(report.total),
        total_exact_rational=model.max_win_x is None,
        game=float(report.game),
        components=Components(lines=float(report.lines), star_wild=float(report.star_wild),
                              hold_and_cash=float(report.hold_and_cash),
                              progressive=float(report.progressive)),
        hold_and_cash_split=HoldAndCashSplit(
            cash=float(split["cash"]), minor=float(split["minor"]),
            major=float(split["major"]), mega=float(split["mega"])),
        hold_and_cash_split_before_cap=model.max_win_x is not None,
        by_line_bet=by_line_bet,
        hit_frequency=float(report.hit_frequency),
        star_wild_frequency=float(report.star_wild_frequency),
        star_wild_round_pays_nothing=float(law.star_wild_zero / report.star_wild_frequency)
        if report.star_wild_frequency else 0.0,
        star_wild_respin_pays_nothing=float(law.star_wild_respin_zero
                                            / report.star_wild_frequency)
        if report.star_wild_frequency else 0.0,
        hold_and_cash_frequency=float(hold_p),
        jackpot_frequency=float(report.jackpot_frequency),
        mega_frequency=float(report.mega_frequency),
        hold_and_cash_mean=float(report.hold_and_cash_mean) if hold_p else 0.0,
        std_dev=std_dev_with_jackpot(law, report.game, seed_x),
        std_dev_method="exact",
        std_dev_game=game_sd,
        std_dev_note=(f"exact second moment; game win {game_sd:.4f} x total bet, with the "
                      f"EUR share of the seed pool ({float(seed_x):g} x total bet per hit at "
                      "every class) included in std_dev; with the share at the pool's "
                      "long-run law of each mix: jackpot_long_run.<mix>.std_dev"
                      if model.has_progressive else
                      f"exact second moment of the round's win, {game_sd:.4f} x total bet "
                      "(the model has no progressive: the game win is the whole win)"),
        win_bands=tuple(WinBand(from_x=b.from_x, to_x=b.to_x, probability=b.probability)
                        for b in law.bands),
        max_win_x=LargestWins(base=float(law.max_base), star_wild=float(law.max_star_wild),
                              hold_and_cash=model.max_win_x),
        max_win_cap_x=model.max_win_x,
        max_win_probability=LargestWinChances(base=float(law.max_base_probability),
                                              star_wild=float(law.max_star_wild_probability)),
        hold_and_cash_tails=tuple(HoldAndCashTail(k=k, given_trigger=t[0], per_spin=t[1])
                                  for k, t in law.hold_tails.items()),
        hold_and_cash_dp_cap_x=law.hold_cap,
        hold_and_cash_above_cap_per_spin=law.hold_above_cap,
        jackpot_long_run=runs,
        exact=ExactFigures(total=report.total, lines=report.lines, star_wild=report.star_wild,
                           hold_and_cash=report.hold_and_cash, progressive=report.progressive,
                           hit_frequency=report.hit_frequency,
                           second_moment_game=law.second_moment,
                           max_base_probability=law.max_base_probability,
                           max_star_wild_probability=law.max_star_wild_probability),
        methods=METHODS,
        format=FORMAT,
    )
