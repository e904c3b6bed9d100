"""The €€€ pool in the long run, under a mix of bet classes: what every class gets back, and
what the operator adds.

Why every class gets the same return per euro (RULES.md, one share per spin): a spin at line bet
b cents that shows €€€ wins floor(P x b / 100) of the pool P. Whether a spin shows €€€ does not
depend on the pool or on the class, so the pool a winning spin sees has the same law Y whatever
its class, and a class-b spin returns p x (b / 100) x E[Y] / (20 b) = p E[Y] / 2000 per cent
staked: the same at every class (the rounding down costs at most one cent per win). Over the long
run the pool pays out what flows in: per win, the contributions since the last win plus the
operator's refill, so that common return is the contribution rate plus the refills per cent
staked. The players' money part is the contribution rate at every class; the refills are the
operator's, and depend on the mix (a EUR 1.00 win empties the pool, a 1-cent win takes 1 %).

The law of Y: between wins the pool grows by the mix's mean contribution c per spin for a
geometric number of spins (mean 1/p); after a win at class b it is max(seed, (1 - b/100) Y). The
stationary law is found on a grid (step h = mu / 200, mu = c / p the mean growth between wins;
the growth is geometric in steps of h with mean exactly mu, the scaled pool is split between
its two grid neighbours, which keeps its mean) by iterating the win-to-win map until it moves
less than 1e-12; :func:`long_run` reports the balance check E[paid per win] = mu + E[refill per
win] beside it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from importlib import resources
from pathlib import Path

import numba as nb
import numpy as np
import numpy.typing as npt

from starfever.engine import money
from starfever.engine.errors import InputError
from starfever.engine.symbols import BET_CLASSES, Cents

Mix = dict[int, Fraction]
"""Share of the spins played at each line bet class (cents); the shares sum to 1."""


class MixError(InputError):
    """A bet-class mix that cannot be read."""


def named_mixes() -> dict[str, Mix]:
    """The mixes every report shows: all 1 cent, all EUR 1.00, uniform, and the shipped
    realistic one (``starfever/models/mixes/realistic.json``)."""
    uniform: Mix = {int(b): Fraction(1, len(BET_CLASSES)) for b in BET_CLASSES}
    return {"all_1_cent": {1: Fraction(1)}, "all_eur_1": {100: Fraction(1)},
            "uniform": uniform, "realistic": load_mix("realistic")}


def load_mix(name_or_path: str) -> Mix:
    """A mix file: ``{"description": ..., "spin_shares": {"1": 30, "2": 15, ...}}`` (integer
    or decimal shares of the spins per line bet in cents, normalised)."""
    path = Path(name_or_path)
    try:
        if path.suffix == ".json" or path.exists():
            text = path.read_text(encoding="utf-8")
        else:
            text = (resources.files("starfever") / "models" / "mixes"
                    / f"{name_or_path}.json").read_text(encoding="utf-8")
        data = json.loads(text)
    except (OSError, ValueError) as error:  # a JSON or UTF-8 error is a ValueError
        raise MixError(f"cannot read bet-class mix {name_or_path!r}: {error}") from None
    shares = _spin_shares(data, f"mix {name_or_path!r}")
    bad = [b for b in shares if b not in BET_CLASSES]
    if bad or not shares or any(v < 0 for v in shares.values()) or sum(shares.values()) == 0:
        raise MixError(f"mix {name_or_path!r} must give non-negative shares to line bets among "
                       f"{', '.join(map(str, BET_CLASSES))} cents, not all zero, got "
                       f"{data['spin_shares']!r}")
    total = sum(shares.values())
    return {b: v / total for b, v in sorted(shares.items()) if v}


def _spin_shares(data: object, where: str) -> dict[int, Fraction]:
    """The ``spin_shares`` of a parsed mix file, each key a whole number of cents and each
    share a JSON number; :class:`MixError` names what is not."""
    shape = '{"spin_shares": {"<line bet in cents>": <share>, ...}}'
    if not isinstance(data, Mapping):
        raise MixError(f"{where} must hold a JSON object {shape}, got a JSON "
                       f"{_json_kind(data)}")
    if "spin_shares" not in data:
        raise MixError(f'{where} has no "spin_shares": a mix is {shape}')
    raw = data["spin_shares"]
    if not isinstance(raw, Mapping):
        raise MixError(f'{where}: "spin_shares" must be a JSON object {{"<line bet in cents>": '
                       f"<share>, ...}}, got a JSON {_json_kind(raw)}")
    shares: dict[int, Fraction] = {}
    for key, value in raw.items():
        bet = int(key) if key.isascii() and key.isdigit() else None
        if bet is None or bet in shares:
            raise MixError(f'{where}: "spin_shares" key {key!r} is not a line bet in whole '
                           "cents (or names one twice)")
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(
                value):
            raise MixError(f'{where}: the share of line bet {bet} must be a JSON number, got '
                           f"{value!r}")
        shares[bet] = Fraction(str(value))
    return shares


def _json_kind(value: object) -> str:
    kinds = ((list, "list"), (str, "string"), (bool, "true/false"), (int | float, "number"))
    return next((name for kind, name in kinds if isinstance(value, kind)), "null")


@dataclass(frozen=True)
class LongRun:
    """The pool in the long run under one mix."""

    mix: Mix
    jackpot_probability: float
    """p: P(a spin shows €€€)."""
    mean_pool_at_win: float
    """E[Y], cents."""
    mean_square_pool_at_win: float
    """E[Y^2], cents squared: with E[Y], the €€€ share's part of a round's variance (the pool a
    winning spin sees has the law of the pool any spin sees, since the win does not depend on
    the pool)."""
    refill_per_win: float
    """E[operator refill after a win], cents."""
    contribution_per_spin: float
    """c, cents."""
    stake_per_spin: float
    """Mean total bet, cents."""
    balance_error: float
    """|E[paid per win] - (c / p + E[refill])| / E[paid per win]: the check."""
    method: str = "grid"
    """``grid`` (the stationary law on a grid, module docstring) or ``closed form`` (EUR 1.00
    line bets alone: :func:`_emptied_each_win`)."""

    @property
    def return_per_class(self) -> float:
        """What the pool returns per cent staked, the same at every class: p E[Y] / 2000."""
        return self.jackpot_probability * self.mean_pool_at_win / (
            money.total_bet(Cents(1)) * money.JACKPOT_SHARE_BASE)

    @property
    def refill_rate(self) -> float:
        """Operator refills per cent staked."""
        return self.jackpot_probability * self.refill_per_win / self.stake_per_spin


@nb.njit(cache=True, nogil=True)
def _landings(keep: npt.NDArray[np.float64], seed: float, step: float, n: int
              ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """Where the pool after a win at class b from grid point k lands: ``index[b, k]`` (-1: at
    the seed, the floor; ``n``: beyond the grid) and the share of the mass that goes on to the
    next grid point (the rest stays on ``index``), so the scaled pool keeps its mean. The same
    for every iteration, so worked out once."""
    index = np.empty((keep.shape[0], n), dtype=np.int64)
    share = np.zeros((keep.shape[0], n))
    for b in range(keep.shape[0]):
        for k in range(n):
            after = keep[b] * (seed + k * step)
            if after <= seed:
                index[b, k] = -1
                continue
            pos = (after - seed) / step
            i = int(pos)
            if i + 1 < n:
                index[b, k] = i
                share[b, k] = pos - i
            else:
                index[b, k] = n
    return index, share


@nb.njit(cache=True, nogil=True)
def _iterate(q: npt.NDArray[np.float64], ratio: float, keep: npt.NDArray[np.float64],
             weights: npt.NDArray[np.float64], seed: float, step: float,
             tolerance: float, limit: int) -> tuple[npt.NDArray[np.float64],
                                                     npt.NDArray[np.float64], int]:
    """Iterate the win-to-win map on the grid ``seed + k step``; returns the law of the pool
    after a win (q), of the pool at a win (y), and the iterations used."""
    n = q.shape[0]
    index, share = _landings(keep, seed, step, n)
    q = q.copy()  # the two arrays take turns below: the caller's stays as it was
    y = np.zeros(n)
    nxt = np.zeros(n)
    for it in range(limit):
        acc = 0.0
        q_sum = 0.0
        y_sum = 0.0
        for k in range(n):  # Y = Q + exponential growth
            acc = ratio * acc + (1.0 - ratio) * q[k]
            y[k] = acc
            q_sum += q[k]
            y_sum += acc
        y[n - 1] += q_sum - y_sum  # growth beyond the grid: keep its mass at the end
        nxt[:] = 0.0
        for b in range(weights.shape[0]):
            w = weights[b]
            for k in range(n):
                mass = y[k] * w
                if mass == 0.0:
                    continue
                i = index[b, k]
                if i < 0:
                    nxt[0] += mass
                elif i == n:
                    nxt[n - 1] += mass
                else:
                    nxt[i] += mass * (1.0 - share[b, k])
                    nxt[i + 1] += mass * share[b, k]
        total = nxt.sum()
        moved = 0.0
        for k in range(n):
            nxt[k] /= total
            moved += abs(nxt[k] - q[k])
        q, nxt = nxt, q
        if moved < tolerance:
            return q, y / y.sum(), it + 1
    return q, y / y.sum(), limit


def long_run(mix: Mapping[int, Fraction], jackpot_probability: float, rate: Fraction,
             seed: int) -> LongRun:
    """The stationary pool under ``mix`` (see the module docstring)."""
    classes = sorted(mix)
    shares = np.array([float(mix[b]) for b in classes])
    stake = float(sum(float(mix[b]) * money.total_bet(Cents(b)) for b in classes))
    c = stake * float(rate)
    p = jackpot_probability
    if p <= 0:  # a model without €€€ lines: the pool is never won and returns nothing
        return LongRun(mix=dict(mix), jackpot_probability=0.0, mean_pool_at_win=0.0,
                       mean_square_pool_at_win=0.0, refill_per_win=0.0,
                       contribution_per_spin=c, stake_per_spin=stake, balance_error=0.0)
    mu = c / p
    if classes == [money.JACKPOT_SHARE_BASE]:
        return _emptied_each_win(dict(mix), p, c, stake, seed)
    taken = float(sum(float(mix[b]) * b / money.JACKPOT_SHARE_BASE for b in classes))
    span = seed + mu * (1 / taken + 40 / math.sqrt(2 * taken) + 60)
    step = mu / 200
    n = int((span - seed) / step) + 2
    q = np.zeros(n)
    q[0] = 1.0
    keep = np.array([1 - b / money.JACKPOT_SHARE_BASE for b in classes])
    # growth between wins: geometric in grid steps with mean exactly mu (ratio r: h r/(1-r) = mu)
    q, y, _ = _iterate(q, mu / (mu + step), keep, shares, float(seed), step, 1e-12, 200_000)
    grid = seed + step * np.arange(n)
    mean_y = float((y * grid).sum())
    mean_y2 = float((y * grid * grid).sum())
    refill = 0.0
    paid = 0.0
    for share, b in zip(shares, classes, strict=True):
        f = b / money.JACKPOT_SHARE_BASE
        refill += share * float((y * np.maximum(0.0, seed - (1 - f) * grid)).sum())
        paid += share * f * mean_y
    return LongRun(mix=dict(mix), jackpot_probability=p, mean_pool_at_win=mean_y,
                   mean_square_pool_at_win=mean_y2,
                   refill_per_win=refill, contribution_per_spin=c, stake_per_spin=stake,
                   balance_error=abs(paid - (mu + refill)) / paid)


def _emptied_each_win(mix: Mix, p: float, c: float, stake: float, seed: int) -> LongRun:
    """The pool when every spin is at EUR 1.00 line bets: each win takes the whole pool (its
    share is 100 %), the operator refills it to the seed, so the pool at a win is
    Y = seed + c N, N the spins since the last win (its own included, as the pool a spin plays
    against holds its contribution): geometric on 1, 2, ... with E[N] = 1/p and
    E[N^2] = (2 - p)/p^2. Closed form, no grid: E[Y] = seed + c/p and
    E[Y^2] = E[Y]^2 + c^2 (1 - p)/p^2; the refill per win is the seed."""
    mean = seed + c / p
    square = mean * mean + c * c * (1 - p) / (p * p)
    return LongRun(mix=mix, jackpot_probability=p, mean_pool_at_win=mean,
                   mean_square_pool_at_win=square, refill_per_win=float(seed),
                   contribution_per_spin=c, stake_per_spin=stake, balance_error=0.0,
                   method="closed form")
