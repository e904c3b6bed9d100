"""``starfever simulate``: Monte Carlo of the full game, compared with the exact figures.

The kernel never sees the exact maths; only after the simulation, and only to say whether each
interval holds the theoretical value, does this command ask ``starfever.math.exact``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Any

from starfever.engine import money
from starfever.engine.model import load_model
from starfever.engine.symbols import check_line_bet
from starfever.sim.result import COMPONENTS, FREQUENCIES, Estimate, SimulationResult
from starfever.sim.runner import simulate

_INTEGER = re.compile(r"\d[\d_]*(e\d{1,2})?", re.IGNORECASE)
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
    p.add_argument("--model", default="default", metavar="NAME|PATH")
    p.add_argument("--line-bet", default="1", metavar="CENTS",
                   help="line bet class in cents, for the amounts shown (default 1)")
    p.add_argument("--json", action="store_true", help="print JSON, no progress bar")
    p.set_defaults(handler=cmd_simulate)


def parse_count(text: str, what: str, *, minimum: int) -> int:
    """A whole number written as ``100000``, ``100_000`` or ``1e5``, at least ``minimum``."""
    raw = text.strip()
    value = -1
    if _INTEGER.fullmatch(raw):
        mantissa, _, exponent = raw.lower().replace("_", "").partition("e")
        value = int(mantissa) * 10 ** int(exponent or 0)
    if value < minimum:
        raise ValueError(f"{what} must be a whole number >= {minimum} (like 1000000 or 1e6), "
                         f"got {text!r}")
    return value


def cmd_simulate(args: argparse.Namespace) -> int:
    spins = parse_count(args.spins, "--spins", minimum=1)
    workers = None if args.workers is None else parse_count(args.workers, "--workers",
                                                            minimum=1)
    if args.seed is None:
        import numpy as np

        seed = int(np.random.SeedSequence().entropy)  # type: ignore[arg-type]
    else:
        seed = parse_count(args.seed, "--seed", minimum=0)
    try:
        bet: object = int(args.line_bet)
    except ValueError:
        bet = args.line_bet  # check_line_bet refuses it, quoting what was typed
    line_bet = check_line_bet(bet)  # type: ignore[arg-type]
    model = load_model(args.model)
    result = simulate(model, spins, seed, workers, progress=not args.json and sys.stderr.isatty())

    # Only now, and only for the comparison: the exact figures of the model.
    from starfever.math.exact import compute

    exact = compute(model, with_std_dev=False)
    data = result_json(result, exact_figures(exact), line_bet)
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        print_table(result, data)
    return 0


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


def _check(estimate: Estimate, exact: float) -> dict[str, Any]:
    return {"rtp": estimate.value, "ci99": list(estimate.ci99), "exact": exact,
            "inside": estimate.contains(exact)}


def _frequency(estimate: Estimate, exact: float) -> dict[str, Any]:
    return {"value": estimate.value, "ci99": list(estimate.ci99), "exact": exact,
            "inside": estimate.contains(exact)}


def result_json(result: SimulationResult, exact: dict[str, float],
                line_bet: int) -> dict[str, Any]:
    """The ``starfever simulate --json`` document."""
    rtp = result.rtp
    components = {name: _check(result.component(name), exact[name]) for name in COMPONENTS}
    rate = result.contribution_rate
    components["progressive"] = {"rtp": rate, "ci99": [rate, rate], "exact": exact["progressive"],
                                 "inside": rate == exact["progressive"],
                                 "note": "contribution rate, not simulated"}
    freq_keys = {"hit": "hit", "star_wild": "star_wild_frequency",
                 "hold_and_cash": "hold_and_cash_frequency", "mega": "mega", "jackpot": "jackpot"}
    frequencies = {name: _frequency(result.frequency(name), exact[freq_keys[name]])
                   for name in FREQUENCIES}
    bet = check_line_bet(line_bet)
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
        lo, hi = row["ci99"]
        print(f"  {label:<32} {_pct(row['rtp'])}   [{_pct(lo)}, {_pct(hi)}] "
              f"{_pct(row['exact'])}  {'yes' if row['inside'] else 'NO'}")
    print(f"  {'event (per paid spin)':<32} {'freq':>9}   {'99 % interval':<21} {'exact':>9}")
    names = {"hit": "hit (win, EUR line or feature)", "star_wild": "Star Wild",
             "hold_and_cash": "Hold & Cash", "mega": "Mega", "jackpot": "EUR jackpot line"}
    for key, label in names.items():
        row = data["frequencies"][key]
        lo, hi = row["ci99"]
        print(f"  {label:<32} {row['value']:9.3e}   [{lo:9.3e}, {hi:9.3e}] {row['exact']:9.3e}"
              f"  {'yes' if row['inside'] else 'NO'}")
    print(f"  average win {data['average_win_cents']:.3f} cents per spin at line bet "
          f"{data['line_bet']} cents; largest round win {result.max_win:,.2f} x total bet")
