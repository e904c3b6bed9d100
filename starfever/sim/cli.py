"""``starfever simulate``: Monte Carlo of the full game, compared with the exact figures.

The kernel never sees the exact maths; only to say whether each interval holds the theoretical
value does this command ask for the exact figures: those ``starfever rtp`` cached or shipped for
the model when there are any, else ``starfever.math.exact`` computes them while the workers play.
"""

from __future__ import annotations

import argparse
import json
import sys
from fractions import Fraction
from typing import Any

from starfever.commands import MAX_SEED, parse_count, parse_line_bet
from starfever.engine import money
from starfever.engine.errors import InputError
from starfever.engine.model import MathModel, load_model
from starfever.engine.symbols import BET_CLASSES, check_line_bet
from starfever.math.figures_format import Figures
from starfever.sim.pool import (
    PoolReport,
    SharedPoolReport,
    jackpot_cap_x,
    replay_pool,
    replay_shared_pool,
)
from starfever.sim.result import COMPONENTS, FREQUENCIES, Estimate, SimulationResult

_LABELS = {"lines": "line wins", "star_wild": "Star Wild respin",
           "hold_and_cash": "Hold & Cash", "progressive": "EUR progressive (contribution)"}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``simulate``."""
    p = sub.add_parser("simulate", help="Monte Carlo of the full game with 99 %% intervals")
    p.add_argument("--spins", required=True, metavar="N",
                   help="paid spins to play, e.g. 10000000, 10_000_000 or 1e7")
    p.add_argument("--seed", metavar="S",
                   help="non-negative integer seed (default: fresh entropy, printed)")
    p.add_argument("--workers", metavar="K", help="processes (default: all cores)")
    p.add_argument("--cluster", metavar="ADDRESS",
                   help="run on a Dask scheduler (e.g. tcp://10.0.0.5:8786) instead of local "
                        "processes; same seed and spins -> identical result")
    p.add_argument("--model", default="default", metavar="NAME|PATH")
    p.add_argument("--line-bet", default="1", metavar="CENTS|all",
                   help="line bet class in cents, for the amounts and the EUR pool shown "
                        "(default 1); 'all' plays every bet class, class i from seed + i")
    p.add_argument("--mix", metavar="NAME|FILE",
                   help="with --line-bet all: play the classes in these shares of the spins "
                        "(--spins in all; a mix file or all_1_cent, all_eur_1, uniform, "
                        "realistic) and replay them against ONE shared EUR pool")
    p.add_argument("--variance-reduction", action="store_true",
                   help="also print the variance-reduced estimate (exact Hold & Cash means and "
                        "the exact line RTP as control variate; not an independent check)")
    p.add_argument("--json", action="store_true", help="print JSON, no progress bar")
    p.set_defaults(handler=cmd_simulate)


def cmd_simulate(args: argparse.Namespace) -> int:
    from starfever.sim.runner import simulate  # numba: not on every command's start-up path

    spins = parse_count(args.spins, "--spins", minimum=1)
    workers = None if args.workers is None else parse_count(args.workers, "--workers",
                                                            minimum=1)
    if args.seed is None:
        import numpy as np

        seed = int(np.random.SeedSequence().entropy)  # type: ignore[arg-type]
    else:
        seed = parse_count(args.seed, "--seed", minimum=0, maximum=MAX_SEED)
    if args.cluster is not None:
        check_cluster_address(args.cluster)
    model = load_model(args.model)
    # "all": every class the model is offered at (its line_bets; the ten for a model that
    # names none), as its figures state them (ADR 0072)
    bets = list(model.line_bets) if args.line_bet.strip().lower() == "all" else [
        parse_line_bet(args.line_bet)]
    per_class: dict[int, int] = {int(bet): spins for bet in bets}
    if args.mix is not None:
        if len(bets) == 1:
            raise InputError("--mix needs --line-bet all")
        mix = _mix(args.mix)
        per_class = {bet: max(1, round(spins * share)) for bet, share in mix.items()}
        bets = [check_line_bet(bet) for bet in per_class]
    exact = _Exact(model, variance_reduction=args.variance_reduction)  # while the workers play
    progress = not args.json and sys.stderr.isatty()
    docs = []
    results = []
    for bet in bets:
        result = simulate(model, per_class[bet], seed + BET_CLASSES.index(bet), workers,
                          progress=progress,
                          cluster=args.cluster, meanwhile=exact.prepare)
        results.append(result)
        docs.append(result_json(result, exact.figures(), bet, model,
                                variance_reduction=args.variance_reduction,
                                report=exact.report() if args.variance_reduction else None))
    if len(bets) == 1:
        data = docs[0]
    else:
        data = {"model": model.name, "spins": spins, "seed": seed, "line_bet": "all",
                "note": "bet class i plays from seed + i; the game pays in multiples of the "
                        "line bet, so only the EUR pool depends on the class",
                "exact": docs[0]["exact"], "bet_classes": docs}
        if args.mix is not None:
            data["shared_pool"] = shared_pool_json(replay_shared_pool(
                [(bet, r.spins, r.jackpot_rounds_at) for bet, r in zip(bets, results,
                                                                        strict=True)],
                Fraction(model.contribution_rate), model.seed_cents, model.jackpot_rule,
                jackpot_cap_x(model)),
                args.mix, results, exact.figures())
    if args.json:
        print(json.dumps(data, indent=2))
    elif len(bets) == 1:
        print_table(results[0], data)
    else:
        print_bet_classes(results, docs)
        if "shared_pool" in data:
            print_shared_pool(data["shared_pool"])
    return 0


def _mix(text: str) -> dict[int, Fraction]:
    from starfever.math.jackpot import load_mix, named_mixes

    named = named_mixes()
    return named[text] if text in named else load_mix(text)


def shared_pool_json(pool: SharedPoolReport, mix: str, results: list[SimulationResult],
                     exact: dict[str, float]) -> dict[str, Any]:
    """The ``shared_pool`` block: every class of a mix on one EUR pool."""
    rate = results[0].contribution_rate
    players = pool.contributions / pool.staked
    rows = []
    for share, result in zip(pool.classes, results, strict=True):
        game = result.game.value
        rows.append({
            "line_bet": share.line_bet, "spins": share.spins, "hits": share.hits,
            "paid_cents": share.paid, "progressive_rtp": share.progressive_rtp,
            "game_rtp": game, "game_ci99": list(result.game.ci99),
            "total_players_money": game + rate,
            "total_with_refills": game + share.progressive_rtp,
        })
    return {
        "mix": mix, "seed_cents": pool.seed, "contributions_cents": pool.contributions,
        "refills_cents": pool.refills, "final_pool_cents": pool.final_pool,
        "withheld_cents": pool.withheld,
        "staked_cents": pool.staked, "refill_rate": pool.refill_rate,
        "contribution_rate_realised": players, "balanced": pool.balanced,
        "exact_game": exact["game"], "classes": rows,
        "note": "one pool fed by every class; the players' money returns the game RTP plus the "
                "contribution rate at every class, the operator's refills come on top",
    }


def print_shared_pool(pool: dict[str, Any]) -> None:
    """The shared pool block for people."""
    print(f"  one shared EUR pool, mix {pool['mix']}: refills {_eur(pool['refills_cents'])} = "
          f"{pool['refill_rate']:.4%} of the stake (operator), contributions "
          f"{pool['contribution_rate_realised']:.4%}; balanced: {pool['balanced']}")
    print(f"  {'bet':>4} {'spins':>12} {'hits':>6} {'EUR RTP':>8} {'game RTP':>9} "
          f"{'players':>9} {'with refills':>12}")
    for row in pool["classes"]:
        print(f"  {row['line_bet']:>4} {row['spins']:>12,} {row['hits']:>6,} "
              f"{row['progressive_rtp']:8.4%} {_pct(row['game_rtp'])} "
              f"{_pct(row['total_players_money'])} {_pct(row['total_with_refills']):>12}")


def check_cluster_address(address: str) -> None:
    """Refuse a ``--cluster`` that names no scheduler (``tcp://host:8786``) before any work."""
    from distributed.comm.addressing import get_address_host_port

    try:
        _host, port = get_address_host_port(address)
    except ValueError as error:
        raise InputError(f"--cluster {address[:80]!r} is not a Dask scheduler's address like "
                         f"tcp://host:8786 ({error})") from None
    if not 0 < port < 65536:
        raise InputError(f"--cluster {address[:80]!r}: port {port} is not from 1 to 65535")


class _Exact:
    """The exact figures, found once, in this process while the simulation's workers play
    (no thread: a thread would make the workers spawn instead of fork): those ``starfever rtp``
    cached or shipped for this model when there are any (``math.figures.cached``: no
    computation), else computed. The full report (per-coin Hold & Cash means) only for the
    variance-reduced estimator. Computed, Hold & Cash is in floats (``rational_hold=False``,
    relative error ~1e-13): enough for a comparison, 10x faster (about 1.2 CPU-s)."""

    def __init__(self, model: MathModel, *, variance_reduction: bool = False) -> None:
        self._model = model
        self._variance_reduction = variance_reduction
        self._report: Any = None
        self._figures: dict[str, float] | None = None

    def prepare(self) -> None:
        """Find everything the run will ask for (``simulate``'s ``meanwhile``)."""
        self.figures()
        if self._variance_reduction:
            self.report()

    def report(self) -> Any:
        if self._report is None:
            from starfever.math.exact import compute

            self._report = compute(self._model, rational_hold=False)
        return self._report

    def figures(self) -> dict[str, float]:
        if self._figures is None:
            from starfever.math.figures import cached

            found = cached(self._model) if self._report is None else None
            self._figures = (exact_figures(self.report()) if found is None
                             else cached_exact_figures(found))
        return self._figures


def exact_figures(report: Any) -> dict[str, float]:
    """The exact values the simulation is compared with, by the keys :func:`result_json` uses."""
    return {
        "rtp": float(report.total), "game": float(report.game),
        "lines": float(report.lines), "star_wild": float(report.star_wild),
        "hold_and_cash": float(report.hold_and_cash), "progressive": float(report.progressive),
        "hit": float(report.hit_frequency), "star_wild_frequency":
        float(report.star_wild_frequency), "hold_and_cash_frequency":
        float(report.hold_and_cash_frequency), "mega": float(report.mega_frequency),
        "jackpot": float(report.jackpot_frequency),
    }


def cached_exact_figures(figs: Figures) -> dict[str, float]:
    """:func:`exact_figures` from the figures ``starfever rtp`` stores (``math.figures``)."""
    parts = figs.components
    return {
        "rtp": float(figs.total), "game": float(figs.game),
        "lines": float(parts.lines), "star_wild": float(parts.star_wild),
        "hold_and_cash": float(parts.hold_and_cash),
        "progressive": float(parts.progressive), "hit": float(figs.hit_frequency),
        "star_wild_frequency": float(figs.star_wild_frequency),
        "hold_and_cash_frequency": float(figs.hold_and_cash_frequency),
        "mega": float(figs.mega_frequency), "jackpot": float(figs.jackpot_frequency),
    }


def _check(estimate: Estimate, exact: float) -> dict[str, Any]:
    return {"rtp": estimate.value, "ci99": list(estimate.ci99), "exact": exact,
            "inside": estimate.contains(exact)}


def _frequency(estimate: Estimate, exact: float) -> dict[str, Any]:
    return {"value": estimate.value, "ci99": list(estimate.ci99), "exact": exact,
            "inside": estimate.contains(exact)}


def pool_json(pool: PoolReport) -> dict[str, Any]:
    """The EUR pool block: one installation's pool replayed at one bet class."""
    return {
        "line_bet": pool.line_bet, "seed_cents": pool.seed, "mean_pool_cents": pool.mean_pool,
        "final_pool_cents": pool.final_pool, "contributions_cents": pool.contributions,
        "hits": pool.hits, "paid_cents": pool.paid, "refills_cents": pool.refills,
        "refill_count": pool.refill_count, "staked_cents": pool.staked,
        "withheld_cents": pool.withheld,
        "progressive_rtp": pool.progressive_rtp, "balanced": pool.balanced,
        "note": "the kernel's EUR lines replayed in play order against one pool: contributions "
                "rate x total bet with exact carry, shares floor(pool x line bet / 100), refill "
                "to the seed after a hit; withheld: what a max-win cap that holds the whole "
                "round left in the pool",
    }


def variance_reduced_json(result: SimulationResult, report: Any,
                          exact_rtp: float) -> dict[str, Any]:
    """The ``variance_reduced`` block, labelled as what it is."""
    vr = result.variance_reduced(float(report.lines), {
        n: float(m.mean) for n, m in report.hold_and_cash_by_coins.items()})
    return {
        "label": "variance-reduced estimator (NOT independent of the exact maths): each Hold & "
                 "Cash replaced by its exact mean given the coin count, base line RTP as "
                 "control variate",
        "rtp": vr.rtp.value, "ci99": list(vr.rtp.ci99), "std_error": vr.rtp.std_error,
        "exact": exact_rtp, "inside": vr.rtp.contains(exact_rtp),
        "game": vr.game.value, "beta": vr.beta,
        "plain_std_error": result.game.std_error,
        "variance_ratio": vr.variance_ratio, "effective_spins": vr.effective_spins,
    }


def result_json(result: SimulationResult, exact: dict[str, float], line_bet: int,
                model: MathModel | None = None, *, variance_reduction: bool = False,
                report: Any = None) -> dict[str, Any]:
    """The ``starfever simulate --json`` document (``model``: add the EUR pool block;
    ``variance_reduction`` with the exact ``report``: add the variance-reduced block)."""
    rtp = result.rtp
    components = {name: _check(result.component(name), exact[name]) for name in COMPONENTS}
    rate = result.contribution_rate
    # The €€€'s long-run return is its contribution rate by the rules, not something a sample
    # estimates: no interval and no verdict that could not fail. What the sample does test is
    # the €€€ line frequency (below) and, with a model, the pool replayed in play order.
    components["progressive"] = {"rtp": rate, "exact": exact["progressive"], "simulated": False,
                                 "note": "the contribution rate (the rules' long-run return of "
                                         "the pool), not an estimate; the EUR line frequency is "
                                         "simulated and checked"}
    freq_keys = {"hit": "hit", "star_wild": "star_wild_frequency",
                 "hold_and_cash": "hold_and_cash_frequency", "mega": "mega", "jackpot": "jackpot"}
    frequencies = {name: _frequency(result.frequency(name), exact[freq_keys[name]])
                   for name in FREQUENCIES}
    bet = check_line_bet(line_bet)
    extra: dict[str, Any] = {}
    if model is not None:
        extra["progressive_pool"] = pool_json(replay_pool(
            result.spins, result.jackpot_rounds_at, bet, Fraction(model.contribution_rate),
            model.seed_cents, model.jackpot_rule, jackpot_cap_x(model)))
    if variance_reduction:
        extra["variance_reduced"] = variance_reduced_json(result, report, exact["rtp"])
    return {
        "model": result.model,
        "spins": result.spins,
        "seed": result.seed,
        "workers": result.workers,
        "chunk_spins": result.chunk_spins,
        "rtp": rtp.value,
        "ci99": list(rtp.ci99),
        "exact": exact["rtp"],
        "inside": rtp.contains(exact["rtp"]),
        "components": components,
        "hit_frequency": frequencies["hit"]["value"],
        "star_wild_frequency": frequencies["star_wild"]["value"],
        "hold_and_cash_frequency": frequencies["hold_and_cash"]["value"],
        "mega_frequency": frequencies["mega"]["value"],
        "jackpot_frequency": frequencies["jackpot"]["value"],
        "frequencies": frequencies,
        "jackpot_lines": result.counts["jackpot_lines"] + result.counts["respin_jackpot_lines"],
        "max_win": result.max_win,
        "line_bet": int(bet),
        "average_win_cents": rtp.value * money.total_bet(bet),
        "spins_per_second": result.spins_per_second,
        "seconds": result.elapsed_seconds,
        "cluster": result.cluster,
        **extra,
    }


def _pct(x: float) -> str:
    return f"{x:8.4%}"


def print_table(result: SimulationResult, data: dict[str, Any]) -> None:
    """The human report: one row per component, then frequencies."""
    print(f"Star Fever simulation: model {result.model!r}, {result.spins:,} spins, seed "
          f"{result.seed}, {result.workers} worker(s), {result.elapsed_seconds:.1f} s "
          f"({result.spins_per_second / 1e6:.2f} M spins/s)")
    print(f"  {'component':<32} {'RTP':>9}   {'99 % interval':<21} {'exact':>9}  inside")
    rows = [*((_LABELS[k], data["components"][k]) for k in (*COMPONENTS, "progressive")),
            ("total", data)]
    for label, row in rows:
        if "ci99" not in row:  # the €€€: its contribution rate, not estimated
            print(f"  {label:<32} {_pct(row['rtp'])}   {'(the rate itself)':<21} "
                  f"{_pct(row['exact'])}  not simulated")
            continue
        lo, hi = row["ci99"]
        print(f"  {label:<32} {_pct(row['rtp'])}   [{_pct(lo)}, {_pct(hi)}] "
              f"{_pct(row['exact'])}  {'yes' if row['inside'] else 'NO'}")
    print(f"  {'event (per paid spin)':<32} {'freq':>9}   {'99 % interval':<21} {'exact':>9}")
    names = {"hit": "hit (total win above 0)", "star_wild": "Star Wild",
             "hold_and_cash": "Hold & Cash", "mega": "Mega", "jackpot": "EUR jackpot line"}
    for key, label in names.items():
        row = data["frequencies"][key]
        lo, hi = row["ci99"]
        print(f"  {label:<32} {row['value']:9.3e}   [{lo:9.3e}, {hi:9.3e}] {row['exact']:9.3e}"
              f"  {'yes' if row['inside'] else 'NO'}")
    print(f"  average win {data['average_win_cents']:.3f} cents per spin at line bet "
          f"{data['line_bet']} cents; largest round win {result.max_win:,.2f} x total bet")
    if "progressive_pool" in data:
        pool = data["progressive_pool"]
        print(f"  EUR pool at line bet {pool['line_bet']} cents: mean "
              f"{_eur(pool['mean_pool_cents'])}, {pool['hits']:,} hits paid "
              f"{_eur(pool['paid_cents'])}, refills {_eur(pool['refills_cents'])} "
              f"({pool['refill_count']:,}x); realised progressive RTP "
              f"{pool['progressive_rtp']:.4%} (contribution rate "
              f"{result.contribution_rate:.2%})")
    if "variance_reduced" in data:
        vr = data["variance_reduced"]
        lo, hi = vr["ci99"]
        print(f"  variance-reduced (uses exact H&C means and line RTP; not independent): "
              f"{_pct(vr['rtp'])} [{_pct(lo)}, {_pct(hi)}] "
              f"{'yes' if vr['inside'] else 'NO'}; variance ratio {vr['variance_ratio']:.2f} "
              f"= {vr['effective_spins']:,.0f} plain spins")


def _eur(cents: float) -> str:
    return f"EUR {cents / 100:,.2f}"


def print_bet_classes(results: list[SimulationResult], docs: list[dict[str, Any]]) -> None:
    """``--line-bet all``: one row per bet class."""
    first = results[0]
    counts = {r.spins for r in results}
    spins = (f"{first.spins:,} spins per class" if len(counts) == 1 else
             f"{sum(r.spins for r in results):,} spins, each class its share of the mix")
    print(f"Star Fever simulation per bet class: model {first.model!r}, {spins}, class i from "
          f"seed {first.seed} + i, {sum(r.elapsed_seconds for r in results):.1f} s")
    print(f"  {'bet':>4} {'spins':>13} {'game RTP':>9}  {'99 % interval':<21} in  {'EUR RTP':>8} "
          f"{'mean pool':>14} {'hits':>6} {'paid':>16} {'refills':>14}")
    for doc in docs:
        game = doc["components"]
        total = sum(game[k]["rtp"] for k in COMPONENTS)
        lo, hi = doc["ci99"]
        rate = doc["components"]["progressive"]["rtp"]
        pool = doc["progressive_pool"]
        print(f"  {doc['line_bet']:>4} {doc['spins']:>13,} {_pct(total)}  "
              f"[{_pct(lo - rate)}, {_pct(hi - rate)}] "
              f"{'y' if doc['inside'] else 'N':<3} {pool['progressive_rtp']:8.4%} "
              f"{_eur(pool['mean_pool_cents']):>14} {pool['hits']:>6,} "
              f"{_eur(pool['paid_cents']):>16} {_eur(pool['refills_cents']):>14}")
    exact = docs[0]["exact"] - docs[0]["components"]["progressive"]["exact"]
    print(f"  exact game RTP {_pct(exact)} for every class (the game pays in multiples of the "
          "line bet); the EUR RTP is the pool's realised return, contribution rate "
          f"{first.contribution_rate:.2%} plus refills")
