"""Operator views: pool meters, and actual against theoretical RTP per model and bet class.

Actual RTP is over every played round except test rounds (their outcomes were forced), paid
rounds and free rounds (ADR 0064) in rows of their own. The
99 % interval is for the game RTP (wins without €€€ shares), whose theoretical value is exact;
it uses the ratio estimator sum(win) / sum(bet) and its normal approximation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from sqlalchemy import Float, cast, func, select

from starfever.engine.model import load_model_version
from starfever.math.stats import Z99
from starfever.server.db import Database
from starfever.server.models import Round


@dataclass(frozen=True, slots=True)
class Theory:
    """Exact RTPs of a model (fractions of the total bet)."""

    total: Fraction
    game: Fraction


@lru_cache(maxsize=8)
def theoretical(name: str, version: str) -> Theory | None:
    """The model's exact RTP, once per process (``None`` if that version is gone): from the
    figures cached per model hash (``math.figures``; the shipped models' ship with them), else
    computed."""
    from starfever.math.exact import compute
    from starfever.math.figures import cached

    model = load_model_version(name, version)
    if model is None:
        return None
    figures = cached(model)
    if figures is not None:
        return Theory(total=figures.exact.total, game=figures.exact.game)
    report = compute(model)
    return Theory(total=report.total, game=report.game)


@dataclass
class RtpRow:
    """Sums of one group of rounds, and what follows from them."""

    model_name: str
    model_version: str
    line_bet: int | None
    rounds: int = 0
    total_bet: int = 0
    total_win: int = 0
    progressive_win: int = 0
    sum_game_sq: float = 0.0
    """sum(game_win^2)"""
    sum_game_bet: float = 0.0
    """sum(game_win * total_bet)"""
    sum_bet_sq: float = 0.0
    """sum(total_bet^2)"""

    def add(self, other: RtpRow) -> None:
        """Fold another group into this one."""
        self.rounds += other.rounds
        self.total_bet += other.total_bet
        self.total_win += other.total_win
        self.progressive_win += other.progressive_win
        self.sum_game_sq += other.sum_game_sq
        self.sum_game_bet += other.sum_game_bet
        self.sum_bet_sq += other.sum_bet_sq

    @property
    def actual_rtp(self) -> float | None:
        """All wins over all bets."""
        return self.total_win / self.total_bet if self.total_bet else None

    @property
    def actual_game_rtp(self) -> float | None:
        """Wins without €€€ shares over all bets."""
        return (self.total_win - self.progressive_win) / self.total_bet if self.total_bet else None

    @property
    def half_width_99(self) -> float | None:
        """Half the width of the game RTP's 99 % interval (ratio estimator, normal
        approximation); ``None`` before two rounds."""
        ratio = self.actual_game_rtp
        if ratio is None or self.rounds < 2:
            return None
        residual = (self.sum_game_sq - 2 * ratio * self.sum_game_bet
                    + ratio * ratio * self.sum_bet_sq)
        variance = max(residual, 0.0) / (self.rounds - 1)
        mean_bet = self.total_bet / self.rounds
        return Z99 * math.sqrt(variance / self.rounds) / mean_bet

    @property
    def interval_99(self) -> tuple[float, float] | None:
        """99 % interval of the game RTP: the actual game RTP +/- :attr:`half_width_99`, its
        lower end cut at 0: wins are never negative, so neither is an RTP (after few rounds
        with one big win the approximation alone would reach below 0)."""
        ratio, half = self.actual_game_rtp, self.half_width_99
        if ratio is None or half is None:
            return None
        return (max(ratio - half, 0.0), ratio + half)


def rtp(db: Database, *, free: bool = False,
        currency: str | None = None) -> tuple[list[RtpRow], list[RtpRow]]:
    """RTP rows per model (and version) and per model and bet class: of paid rounds, or
    (``free``) of free rounds alone, each at its grant's stake (ADR 0064: the meters keep
    them apart; a free round's win over the stake it did not take is the game's RTP all the
    same, so its own rows show it). Of ``currency``'s rounds: a ratio is the same in any
    currency, but the bet and win sums are minor units of one (ADR 0076); ``None``: every
    round, for an installation that serves one currency."""
    game = Round.total_win - Round.progressive_win
    query = (select(Round.model_name, Round.model_version, Round.line_bet, func.count(),
                    func.sum(Round.total_bet), func.sum(Round.total_win),
                    func.sum(Round.progressive_win),
                    func.sum(cast(game, Float) * cast(game, Float)),
                    func.sum(cast(game, Float) * cast(Round.total_bet, Float)),
                    func.sum(cast(Round.total_bet, Float) * cast(Round.total_bet, Float)))
             .where(Round.test.is_(False),
                    Round.grant_id.is_not(None) if free else Round.grant_id.is_(None),
                    *(() if currency is None else (Round.currency == currency,)))
             .group_by(Round.model_name, Round.model_version, Round.line_bet)
             .order_by(Round.model_name, Round.model_version, Round.line_bet))
    with db.read() as session:
        rows = session.execute(query).all()
    by_class: list[RtpRow] = []
    by_model: dict[tuple[str, str], RtpRow] = {}
    for name, version, line_bet, n, bet, win, prog, gsq, gbet, bsq in rows:
        row = RtpRow(name, version, int(line_bet), int(n), int(bet), int(win), int(prog),
                     float(gsq), float(gbet), float(bsq))
        by_class.append(row)
        by_model.setdefault((name, version), RtpRow(name, version, None)).add(row)
    return list(by_model.values()), by_class
