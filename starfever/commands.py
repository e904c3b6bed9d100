"""Commands of the rules core and the exact math: eval, model, rtp (tune: ``math.tune_cli``)."""

from __future__ import annotations

import argparse
import json
import re
import sys
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from starfever.engine import money
from starfever.engine.errors import InputError
from starfever.engine.lines import check_grid, evaluate_grid
from starfever.engine.model import load_model
from starfever.engine.symbols import BET_CLASSES, LINE_COUNT, Cents, check_line_bet

if TYPE_CHECKING:
    from starfever.engine.model import MathModel
    from starfever.math.exact import ExactReport
    from starfever.math.figures_format import Figures, WinBand


MAX_COUNT = 2**63 - 1
"""The largest count the compiled kernels hold (a signed 64-bit integer)."""
MAX_SEED = 2**128 - 1
"""The largest seed: a fresh one is 128 bits of entropy (printed, so that a run repeats)."""
_COUNT = re.compile(r"\d[\d_]*(e\d{1,2})?", re.IGNORECASE)


def parse_count(text: str, what: str, *, minimum: int, maximum: int = MAX_COUNT) -> int:
    """A whole number written as ``100000``, ``100_000`` or ``1e5``, from ``minimum`` to
    ``maximum``: the one reading of every count, seed and size the commands take."""
    raw = text.strip()
    value = -1
    if len(raw) <= 40 and _COUNT.fullmatch(raw):
        mantissa, _, exponent = raw.lower().replace("_", "").partition("e")
        value = int(mantissa) * 10 ** int(exponent or 0)
    if not minimum <= value <= maximum:
        like = "1000000 or 1e6" if maximum >= 10**6 else "10 or 1e1"
        raise InputError(f"{what} must be a whole number from {minimum:,} to {maximum:,} "
                         f"(like {like}), got {text[:40]!r}")
    return value


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add eval, model, rtp and rng-stream."""
    p = sub.add_parser("eval", help="evaluate the lines of one grid read as JSON on stdin")
    p.add_argument("--line-bet", default="1", metavar="CENTS",
                   help="line bet class in cents (default 1)")
    p.set_defaults(handler=cmd_eval)

    p = sub.add_parser("model", help="print a math model")
    p.add_argument("--model", default="default", metavar="NAME|PATH")
    p.add_argument("--json", action="store_true", help="print JSON (the default)")
    p.set_defaults(handler=cmd_model)

    p = sub.add_parser("rtp", help="exact theoretical return of a model")
    p.add_argument("--model", default="default", metavar="NAME|PATH")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--exact", action="store_true",
                   help="also print every figure as an exact fraction (with --json)")
    p.add_argument("--full-cycle", action="store_true",
                   help="also enumerate every base stop combination and check it agrees with "
                        "the calculator to the last digit")
    p.add_argument("--no-cache", action="store_true",
                   help="recompute every figure (seconds, docs/math.md) instead of reading the "
                        "cache kept per model hash")
    p.add_argument("--write-shipped", action="store_true",
                   help="store the figures beside the shipped models (for maintainers)")
    p.set_defaults(handler=cmd_rtp)

    p = sub.add_parser("rng-stream",
                       help="write the live generator's raw bytes to stdout (for dieharder)")
    p.add_argument("--bytes", default="0", metavar="N",
                   help="how many bytes (default 0: until the reader closes the pipe)")
    p.set_defaults(handler=cmd_rng_stream)


def parse_line_bet(text: str) -> Cents:
    """A line bet class in cents, written as a count (``10``, ``1e1``)."""
    return check_line_bet(parse_count(text, "--line-bet", minimum=1, maximum=max(BET_CLASSES)))


def cmd_eval(args: argparse.Namespace) -> int:
    bet = parse_line_bet(args.line_bet)
    try:
        data = json.loads(sys.stdin.read())
    except json.JSONDecodeError as error:
        raise InputError(f"stdin is not valid JSON: {error}") from None
    if not isinstance(data, dict) or "grid" not in data:
        raise InputError('expected a JSON object {"grid": [[5 reels of 3 symbol codes]]}')
    result = evaluate_grid(check_grid(data["grid"]))
    print(json.dumps({
        "line_wins": [{"line": w.line, "symbol": w.pay.symbol, "count": w.pay.count,
                       "multiplier": w.pay.multiplier,
                       "win": money.line_win(w.pay.factor, bet)} for w in result.line_wins],
        "line_total": money.line_win(result.line_factor, Cents(bet)),
        "jackpot_lines": list(result.jackpot_lines),
        "star_coins": result.star_coins,
        "feature": result.feature,
    }))
    return 0


def cmd_model(args: argparse.Namespace) -> int:
    print(json.dumps(load_model(args.model).to_dict(), indent=2))
    return 0


def full_cycle_check(model: MathModel, report: ExactReport) -> dict[str, Any]:
    """Enumerate the full cycle and compare it with ``report`` to the last digit."""
    from starfever.math.exact import event_probability
    from starfever.math.fullcycle import full_cycle

    cycle = full_cycle(model)
    checks = {
        "lines": cycle.lines_rtp == report.lines,
        "event_frequency": cycle.fraction(cycle.hits) == event_probability(model),
        "jackpot_frequency": cycle.fraction(cycle.jackpots) == report.jackpot_frequency,
        "coin_counts": all(cycle.fraction(cycle.coin_counts[n]) == p
                           for n, p in report.coin_counts.items()),
    }
    n = cycle.combinations
    # the cycle counts line bets; a total bet is LINE_COUNT of them
    mean = Fraction(cycle.line_win_sum, n * LINE_COUNT)
    variance = Fraction(cycle.line_win_squares, n * LINE_COUNT**2) - mean * mean
    return {
        "combinations": n,
        "agrees": all(checks.values()),
        "checks": checks,
        "lines": float(cycle.lines_rtp),
        "event_frequency": float(cycle.fraction(cycle.hits)),
        "line_win_variance": float(variance),
        "line_win_frequency": float(cycle.fraction(int(cycle.line_win_histogram.sum()))),
        "coin_counts": {str(k): float(cycle.fraction(v)) for k, v in enumerate(cycle.coin_counts)
                        if v},
        "distinct_line_wins": int((cycle.line_win_histogram > 0).sum()),
    }


def cmd_rtp(args: argparse.Namespace) -> int:
    import time

    from starfever.math.figures import cache_path, look_up

    started = time.perf_counter()
    if args.exact and not args.json:
        raise InputError("--exact adds the rationals to the JSON: give it with --json")
    model = load_model(args.model)
    found = look_up(model, use_cache=not args.no_cache)
    if args.write_shipped:
        from starfever.math.figures import write_shipped

        print(f"wrote {write_shipped(model, found.figures)}", file=sys.stderr)
    cycle = None
    if args.full_cycle:
        from starfever.math.exact import compute

        cycle = full_cycle_check(model, compute(model))
    seconds = round(time.perf_counter() - started, 3)
    if args.json:
        data = {**found.figures.to_json(), "cache": found.cache}
        if not args.exact:
            del data["exact"]
        if cycle is not None:
            data["full_cycle"] = cycle
        data["seconds"] = seconds
        data["cache_file"] = str(cache_path(model))
        print(json.dumps(data, indent=2))
        return 0 if cycle is None or cycle["agrees"] else 1
    print_rtp(found.figures, cache=found.cache, seconds=seconds)
    if cycle is not None:
        verdict = "agrees to the last digit" if cycle["agrees"] else f"DISAGREES: {cycle['checks']}"
        print(f"  full cycle: {cycle['combinations']:,} base stop combinations, {verdict}; "
              f"line-win variance {cycle['line_win_variance']:.4f} (total bets squared)")
        return 0 if cycle["agrees"] else 1
    return 0


def print_rtp(figs: Figures, *, cache: str, seconds: float) -> None:
    """The human report of ``starfever rtp`` (``cache``: ``hit``, ``miss`` or ``off``)."""
    c = figs.components
    print(f"Star Fever model {figs.model!r} {figs.model_version} "
          f"(sha256 {figs.model_sha256[:12]}...): theoretical RTP {figs.total:.2%} "
          f"({figs.total:.5%} to 5 decimals, "
          + ("computed exactly)" if figs.total_exact_rational else
             "computed exactly but for the max-win cap's cut, a float step good to about "
             "1e-12)"))
    split = figs.hold_and_cash_split
    capped = " (before the max-win cap)" if figs.hold_and_cash_split_before_cap else ""
    pool = figs.has_progressive  # a model without a progressive has no EUR lines to print
    for part, label, of_which in (
            (c.lines, "line wins", False), (c.star_wild, "Star Wild respin", False),
            (c.hold_and_cash, "Hold & Cash (cash, Minor, Major, Mega)" if pool else
             "Hold & Cash (cash and fixed prizes)", True),
            *([(c.progressive, "EUR progressive contribution", False)] if pool else [])):
        print(f"  {label:<40} {part:>9.4%}")
        if of_which:
            print(f"    of which{capped}: cash {split.cash:.4%}, Minor jackpot "
                  f"{split.minor:.4%}, Major jackpot {split.major:.4%}, Mega jackpot "
                  f"{split.mega:.4%}" if pool else
                  f"    of which{capped}: cash {split.cash:.4%}, x20 prizes {split.minor:.4%}, "
                  f"x200 prizes {split.major:.4%}, full screen {split.mega:.4%}")
    totals = {round(v.total, 8) for v in figs.by_line_bet.values()}
    bets = sorted(figs.by_line_bet)
    print(f"  every bet class ({bets[0]}..{bets[-1]} cent line bets): {min(totals):.4%} to "
          f"{max(totals):.4%} from the players' money"
          + (" (one EUR share per spin: the same return per euro)" if pool else
             " (no progressive)"))
    print(f"  hit frequency {figs.hit_frequency:.2%} (1 in {1 / figs.hit_frequency:.2f}; "
          f"total win > 0, exact)")
    print(f"  Star Wild {_one_in(figs.star_wild_frequency, '.1f')} spins "
          f"(the respin alone pays nothing in {figs.star_wild_respin_pays_nothing:.1%} "
          f"of them, the whole round in {figs.star_wild_round_pays_nothing:.1%}), Hold & Cash "
          f"{_one_in(figs.hold_and_cash_frequency, '.1f')}, Mega "
          f"{_one_in(figs.mega_frequency, ',.0f')}"
          + (f", EUR jackpot line {_one_in(figs.jackpot_frequency, ',.0f')}" if pool else ""))
    if pool:
        print(f"  standard deviation {figs.std_dev:.3f} x total bet ({figs.std_dev_method}; "
              f"game alone {figs.std_dev_game:.3f}; EUR share at the seed pool), with the EUR "
              "share at the pool's long-run law, by mix: " + ", ".join(
                  f"{name} {run.std_dev:.3f}"
                  + (" (closed form)" if run.method == "closed form" else " (grid)")
                  for name, run in figs.jackpot_long_run.items()))
    else:
        print(f"  standard deviation {figs.std_dev:.3f} x total bet ({figs.std_dev_method})")
    mw, mp = figs.max_win_x, figs.max_win_probability
    cap = mw.hold_and_cash
    hold = "unbounded" if cap is None else f"capped at {cap:,} x"
    print(f"  max win: base spin {mw.base:g} x (p {mp.base:.3g}), Star Wild round "
          f"{mw.star_wild:g} x (p {mp.star_wild:.3g}), Hold & Cash {hold}; "
          "P(H&C >= k x | triggered): " + ", ".join(
              f"{t.k}: {t.given_trigger:.3g}" for t in figs.hold_and_cash_tails))
    print(f"  win bands (x total bet{', EUR share excluded' if pool else ''}): " + ", ".join(
        f"{_band(b)} {b.probability:.4g}" for b in figs.win_bands))
    if pool:
        print("  operator refills per euro staked, by mix: " + ", ".join(
            f"{name} {run.refills:.4%}" for name, run in figs.jackpot_long_run.items()))
    print(f"  ({cache} cache, {seconds:.2f} s)")


def _one_in(p: float, spec: str) -> str:
    """``1 in N`` for a frequency, ``never`` for 0 (a model without that feature)."""
    return f"1 in {1 / p:{spec}}" if p > 0 else "never"


def _band(band: WinBand) -> str:
    if band.to_x == band.from_x:
        return "0"
    if band.to_x is None:
        return f">{band.from_x}"
    return f"({band.from_x},{band.to_x}]"


def cmd_rng_stream(args: argparse.Namespace) -> int:
    """Stream the live source's byte reader (os.urandom), e.g. ``| dieharder -g 200 -a``."""
    from starfever.engine.rng import SystemRandomSource

    size_asked = parse_count(args.bytes, "--bytes", minimum=0)
    read = SystemRandomSource().reader
    out = sys.stdout.buffer
    left = size_asked or -1
    block = 1 << 16
    # a reader that has what it wanted (dieharder, head) closes the pipe: BrokenPipeError, which
    # the command line turns into a silent exit 141, as a shell reports SIGPIPE
    while left != 0:
        size = block if left < 0 else min(block, left)
        out.write(read(size))
        left = left - size if left > 0 else left
    out.flush()
    return 0
