"""One round of Star Fever: the paid spin, then the Star Wild respin or Hold & Cash, then the
€€€ lines, with an ordered event log a client can replay and an auditor can re-derive.

:func:`play_round` is a pure function of (model, line bet, pool, random draws): no clock, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from starfever.engine import money
from starfever.engine.holdcash import Cell, HoldAndCashOutcome, play_hold_and_cash
from starfever.engine.lines import GridEvaluation, evaluate_grid
from starfever.engine.model import MAX_WIN_ROUND, MathModel, ReelStrip, Stop
from starfever.engine.rng import RandomSource, RecordingSource, ReplaySource
from starfever.engine.symbols import (
    COIN,
    MWILD,
    REELS,
    ROWS,
    WILD,
    Cents,
    Symbol,
    Window,
    check_line_bet,
)

Event = dict[str, Any]


@dataclass(frozen=True, slots=True)
class JackpotHit:
    """What the €€€ lines of one spin of the round won (``money.jackpot_award``)."""

    phase: str
    """``"base"`` or ``"star_wild"``: the spin that showed the lines."""
    lines: tuple[int, ...]
    """The €€€ lines of that spin."""
    win: Cents
    """Cents won: one share under the current rule, a share per line under the earlier one."""
    pool_before: Cents
    """The pool the spin won from."""
    pool_left: Cents
    """The pool after the win, before any refill."""
    refill: Cents
    """Operator funding that brought the pool back up to its seed after this spin's win."""
    withheld: Cents = money.NO_CENTS
    """The part of the share that the max-win cap left no room for (it stayed in the pool)."""


@dataclass(frozen=True, slots=True)
class RoundResult:
    """Everything one round decided, in cents."""

    line_bet: Cents
    """The line bet class played."""
    total_bet: Cents
    """Line bet x 20."""
    base_win: Cents
    """Line wins of the paid spin."""
    star_wild_win: Cents
    """Line wins of the Star Wild respin."""
    hold_and_cash_win: Cents
    """Hold & Cash payout (cash, Minor, Major, Mega)."""
    progressive_win: Cents
    """€€€ shares won from the pool."""
    feature: str | None
    """``"star_wild"``, ``"hold_and_cash"`` or ``None``."""
    pool_before: Cents
    """The €€€ pool the round played against (after this bet's contribution)."""
    pool_after: Cents
    """The pool after €€€ wins and any refill."""
    pool_refill: Cents
    """Operator funding that brought the pool back up to its seed after a win."""
    events: tuple[Event, ...]
    """The ordered event log (JSON-ready)."""
    draws: tuple[int, ...]
    """Every random draw, in order: replaying them gives this round again."""
    hold_and_cash: HoldAndCashOutcome | None = None
    """Details of the Hold & Cash feature, when played."""
    jackpot_hits: tuple[JackpotHit, ...] = ()
    """The €€€ wins of the round, one per spin that showed €€€ lines, in play order."""

    @property
    def total_win(self) -> Cents:
        """Everything the round pays."""
        return Cents(self.base_win + self.star_wild_win + self.hold_and_cash_win
                     + self.progressive_win)


def window(strips: Sequence[ReelStrip], stops: Sequence[Stop]) -> Window:
    """The 5 x 3 window that ``stops`` show on ``strips`` (strips are read cyclically)."""
    return tuple(tuple(strip[(stop + row) % len(strip)] for row in range(ROWS))
                 for strip, stop in zip(strips, stops, strict=True))


def with_wilds(respin: Sequence[Sequence[Symbol]], wilds: Mapping[Cell, Symbol]) -> Window:
    """The Star Wild respin's window with the coins' wilds held where the coins were."""
    return tuple(tuple(wilds.get((reel, row), symbol) for row, symbol in enumerate(column))
                 for reel, column in enumerate(respin))


def _spin(strips: Sequence[ReelStrip], source: RandomSource) -> tuple[list[Stop], Window]:
    stops = [source.randbelow(len(strip)) for strip in strips]
    return stops, window(strips, stops)


def _shown(grid: Window) -> list[list[Symbol]]:
    """A window as the event log shows it (JSON arrays)."""
    return [list(column) for column in grid]


def star_wilds(grid: Sequence[Sequence[Symbol]]) -> dict[Cell, Symbol]:
    """What the 4 coins of a Star Wild trigger become: three on one reel are Multiplier Wilds."""
    coins = [(reel, row) for reel in range(REELS) for row in range(ROWS) if grid[reel][row] == COIN]
    wilds: dict[Cell, Symbol] = {}
    for reel, row in coins:
        stacked = sum(1 for r, _ in coins if r == reel) == ROWS
        wilds[(reel, row)] = MWILD if stacked else WILD
    return wilds


def _line_events(phase: str, evaluation: GridEvaluation, line_bet: Cents) -> list[Event]:
    return [{"type": "line_win", "phase": phase, "line": w.line, "symbol": w.pay.symbol,
             "count": w.pay.count, "multiplier": w.pay.multiplier,
             "win": money.line_win(w.pay.factor, line_bet)} for w in evaluation.line_wins]


def play_round(model: MathModel, line_bet: int, source: RandomSource, *,
               pool: int | None = None) -> RoundResult:
    """Play one whole round at ``line_bet`` cents against a €€€ pool of ``pool`` cents.

    ``pool`` is the pool after this bet's contribution (default: the model's seed).
    """
    bet = check_line_bet(line_bet)
    pool_before = Cents(model.seed_cents if pool is None else pool)
    if pool_before < 0:
        raise ValueError(f"pool must not be negative, got {pool!r}")
    recorder = RecordingSource(source)
    events: list[Event] = []
    cap = None if model.max_win_x is None else money.feature_win(model.max_win_x, bet)
    jackpot_lines: list[tuple[str, int]] = []

    stops, grid = _spin(model.base_reels, recorder)
    base = evaluate_grid(grid)
    events.append({"type": "reveal", "phase": "base", "stops": stops, "grid": _shown(grid)})
    events.extend(_line_events("base", base, bet))
    jackpot_lines += [("base", line) for line in base.jackpot_lines]
    if base.feature is not None:
        events.append({"type": "feature", "feature": base.feature, "star_coins": base.star_coins})

    star_wild_win = 0
    hold: HoldAndCashOutcome | None = None
    if base.feature == "star_wild":
        wilds = star_wilds(grid)
        events.append({"type": "star_wild", "wilds": [
            {"reel": reel, "row": row, "symbol": symbol}
            for (reel, row), symbol in sorted(wilds.items())]})
        respin_stops, drawn = _spin(model.star_wild_reels, recorder)
        respin_grid = with_wilds(drawn, wilds)
        respin = evaluate_grid(respin_grid)
        events.append({"type": "reveal", "phase": "star_wild", "stops": respin_stops,
                       "grid": _shown(respin_grid)})
        events.extend(_line_events("star_wild", respin, bet))
        jackpot_lines += [("star_wild", line) for line in respin.jackpot_lines]
        star_wild_win = money.line_win(respin.line_factor, bet)
    elif base.feature == "hold_and_cash":
        coins = [(reel, row) for reel in range(REELS) for row in range(ROWS)
                 if grid[reel][row] == COIN]
        room = None if cap is None else Cents(cap - money.line_win(base.line_factor, bet))
        hold = play_hold_and_cash(coins, model.hold_and_cash, bet, recorder, events, room=room)

    base_win = money.line_win(base.line_factor, bet)
    hold_win = money.in_line_bets(hold.line_bets, bet) if hold else Cents(0)
    capped = cap is not None and base_win + star_wild_win + hold_win > cap
    if cap is not None and capped:
        # the round's game win stops at the cap; the feature's win is cut (MIN_CAP_X: a paid
        # spin alone never reaches it, a Star Wild respin can in some models)
        if hold is not None:
            hold_win = Cents(cap - base_win)
        else:
            star_wild_win = cap - base_win
    # a cap that holds the whole round leaves the €€€ what the game win did not use
    room = None if cap is None or model.max_win_scope != MAX_WIN_ROUND else Cents(
        cap - base_win - star_wild_win - hold_win)
    hits, refill = _pay_jackpots(model, bet, pool_before, jackpot_lines, events, room)
    progressive = sum(hit.win for hit in hits)
    if capped or any(hit.withheld for hit in hits):
        events.append({"type": "max_win", "win": cap})
    pool_after = Cents(hits[-1].pool_left + hits[-1].refill if hits else pool_before)
    total_win = base_win + star_wild_win + hold_win + progressive
    events.append({"type": "round_end", "total_win": total_win, "pool_after": pool_after})
    return RoundResult(
        line_bet=bet,
        total_bet=money.total_bet(bet),
        base_win=base_win,
        star_wild_win=Cents(star_wild_win),
        hold_and_cash_win=hold_win,
        progressive_win=Cents(progressive),
        feature=base.feature,
        pool_before=pool_before,
        pool_after=pool_after,
        pool_refill=refill,
        events=tuple(events),
        draws=tuple(recorder.draws),
        hold_and_cash=hold,
        jackpot_hits=hits,
    )


def _pay_jackpots(model: MathModel, bet: Cents, pool: Cents,
                  jackpot_lines: list[tuple[str, int]], events: list[Event],
                  room: Cents | None = None) -> tuple[tuple[JackpotHit, ...], Cents]:
    """Pay the round's €€€ lines under the model's rule (``money.jackpot_round``) and log them;
    returns the hits and the refill. The events of the earlier rule (one per line) are kept as
    they were, so rounds played under it replay to the same log; the current rule logs one
    event per spin, with all its lines. ``room``: what the max-win cap leaves for the €€€
    (``None``: no cap on it); an event whose share it cut says what stayed in the pool
    (``withheld``), and only such an event has that key."""
    phases: dict[str, list[int]] = {}
    for phase, line in jackpot_lines:
        phases.setdefault(phase, []).append(line)
    paid = money.jackpot_round(pool, bet, [len(lines) for lines in phases.values()],
                               model.seed_cents, model.jackpot_rule, room)
    percent = bet * 100 // money.JACKPOT_SHARE_BASE
    hits = []
    for (phase, lines), award, before, refill in zip(
            phases.items(), paid.awards, paid.pools_before, paid.refills, strict=True):
        if model.jackpot_rule == money.EACH_LINE_FROM_THE_REST:
            left = before
            for line, share in zip(lines, award.shares, strict=True):
                full = money.progressive_share(left, bet)
                left = Cents(left - share)
                event: Event = {"type": "jackpot", "phase": phase, "line": line,
                                "percent": percent, "win": share, "pool_left": left}
                if full > share:
                    event["withheld"] = full - share
                events.append(event)
        else:
            event = {"type": "jackpot", "phase": phase, "line": lines[0],
                     "lines": list(lines), "percent": percent, "win": award.win,
                     "pool_left": award.pool_left, "refill": refill}
            if award.withheld:
                event["withheld"] = award.withheld
            events.append(event)
        hits.append(JackpotHit(phase, tuple(lines), award.win, before, award.pool_left, refill,
                               award.withheld))
    return tuple(hits), paid.refill


def replay_round(model: MathModel, line_bet: int, draws: Iterable[int], *,
                 pool: int | None = None) -> RoundResult:
    """Play a round again from its recorded draws; every draw must be used exactly once."""
    source = ReplaySource(draws)
    result = play_round(model, line_bet, source, pool=pool)
    source.check_used_up()
    return result


def at_pool(model: MathModel, drawn: RoundResult, pool_before: int) -> RoundResult:
    """The round of these draws played against ``pool_before``: the server draws a round
    before it knows the pool the round will settle against (ADR 0009), then rebases it here.

    Only a round with a €€€ hit depends on the pool (:func:`play_round`: without one, no share
    is paid, nothing is refilled, and the pool appears only in ``pool_before``, ``pool_after``
    and the ``round_end`` event), so only such a round is replayed from its draws; the others
    get the pool written in. ``starfever audit`` replays every stored round."""
    if drawn.pool_before == pool_before:
        return drawn
    end = drawn.events[-1] if drawn.events else {}
    if drawn.jackpot_hits or drawn.pool_refill or drawn.pool_after != drawn.pool_before \
            or end.get("type") != "round_end":
        return replay_round(model, drawn.line_bet, drawn.draws, pool=pool_before)
    pool = Cents(pool_before)
    return replace(drawn, pool_before=pool, pool_after=pool,
                   events=(*drawn.events[:-1], {**end, "pool_after": pool}))

