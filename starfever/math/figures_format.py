"""The exact figures of one model as typed, frozen objects, and their JSON (format 5).

:func:`starfever.math.figures.figures` answers a :class:`Figures`; every reader (the game
conditions, the rules page, the RTP meters, the certification bundle, the PAR sheet,
``starfever rtp`` and ``simulate``) reads its attributes, never a key. The JSON of the cache
files, of the shipped figures (``starfever/models/figures``) and of the bundle's
``figures/exact.json`` is written and read here only (:meth:`Figures.to_json`,
:meth:`Figures.from_json`), key for key in the order format 5 has always had, so a file read
and written again is the same bytes (``tests/math/test_figures_format.py``).

Every RTP and win is a fraction of the total bet (``x total bet``), every frequency and
probability per paid spin (round), unless a field says otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from starfever.engine.symbols import Cents


@dataclass(frozen=True)
class Components:
    """The total RTP by what pays it."""

    lines: float
    """Line wins of the paid spin."""
    star_wild: float
    """The Star Wild respin's line wins."""
    hold_and_cash: float
    """Hold & Cash (cash, Minor, Major, Mega), after any max-win cap."""
    progressive: float
    """The €€€ contribution rate (what the players' money returns through the pool)."""


@dataclass(frozen=True)
class HoldAndCashSplit:
    """The Hold & Cash RTP by what pays it (before any max-win cap)."""

    cash: float
    """CASH values, boosters included: the rest of the feature's mean."""
    minor: float
    """MINOR jackpots."""
    major: float
    """MAJOR jackpots."""
    mega: float
    """MEGA jackpots."""


@dataclass(frozen=True)
class ClassFigures:
    """The figures of one bet class (a line bet)."""

    total: float
    """Total RTP from the players' money: the game's plus the contribution rate."""
    progressive: float
    """Of which the €€€ (the contribution rate: the same return per euro at every class)."""
    std_dev: float
    """Standard deviation of a round's win (x total bet), the €€€ share at the seed pool."""


@dataclass(frozen=True)
class WinBand:
    """P(a round's game win lies in a band), €€€ shares not included."""

    from_x: int
    """Lower end (x total bet): above it, or exactly it where ``to_x`` equals it."""
    to_x: int | None
    """Upper end (x total bet), included; ``None`` for the last band (no upper end)."""
    probability: float
    """Probability per round."""


@dataclass(frozen=True)
class LargestWins:
    """The largest win of each part of a round (x total bet)."""

    base: float
    """Largest line win of a paid spin, exact."""
    star_wild: float
    """Largest paid spin + respin of a Star Wild round, exact."""
    hold_and_cash: int | None
    """The model's max-win cap, ``None`` where it sets none (Hold & Cash then has no finite
    maximum)."""


@dataclass(frozen=True)
class LargestWinChances:
    """The probability per round of the largest wins of :class:`LargestWins`."""

    base: float
    """P(the largest line win of a paid spin)."""
    star_wild: float
    """P(the largest Star Wild round)."""


@dataclass(frozen=True)
class HoldAndCashTail:
    """P(the Hold & Cash pays at least ``k`` x total bet), from its payout DP."""

    k: int
    """The threshold (x total bet)."""
    given_trigger: float
    """Given the feature triggers."""
    per_spin: float
    """Per paid spin."""


@dataclass(frozen=True)
class PoolLongRun:
    """The €€€ pool's long run under one mix of bet classes (``starfever.math.jackpot``)."""

    mix: Mapping[Cents, float]
    """Share of the spins per line bet (cents), in the order the mix names them."""
    progressive_per_class: float
    """What the pool returns per unit staked, the same at every class (refills included)."""
    players_money: float
    """Of which the players' money: the contribution rate."""
    refills: float
    """Of which the operator's refills to the seed, per unit staked."""
    total_per_class_with_refills: float
    """The game's RTP plus ``progressive_per_class``."""
    mean_pool_at_win_cents: float
    """E[the pool when a €€€ is won], cents."""
    refill_per_win_cents: float
    """E[the refill after a win], cents."""
    method: str
    """``grid`` (the pool's stationary law on a grid) or ``closed form``."""
    balance_error: float
    """The balance check's relative error (paid per win against contributions + refills)."""
    std_dev: float
    """Standard deviation of a round's win (x total bet), the share at this pool law."""


@dataclass(frozen=True)
class ExactFigures:
    """The exact rationals behind the floats (``starfever rtp --json --exact``)."""

    total: Fraction
    """Total RTP (with a max-win cap: less the cap's cut, see ``total_exact_rational``)."""
    lines: Fraction
    """Line wins' RTP."""
    star_wild: Fraction
    """The Star Wild respin's RTP."""
    hold_and_cash: Fraction
    """Hold & Cash RTP."""
    progressive: Fraction
    """The €€€ contribution rate."""
    hit_frequency: Fraction
    """P(a round's total win > 0)."""
    second_moment_game: Fraction
    """E[game win^2] (total bets squared), the €€€ share left out."""
    max_base_probability: Fraction
    """P(the largest line win of a paid spin)."""
    max_star_wild_probability: Fraction
    """P(the largest Star Wild round)."""

    @property
    def game(self) -> Fraction:
        """The game's RTP: the total less the €€€ contribution."""
        return self.total - self.progressive


@dataclass(frozen=True)
class Figures:
    """Every figure ``starfever rtp`` states of one model, with the method beside each
    (``methods``); the fields in the order of the JSON keys of the same names."""

    model: str
    """The model's name."""
    model_version: str
    """The model's version."""
    model_sha256: str
    """SHA-256 of the model's canonical JSON: the figures are of this content only."""
    jackpot_rule: str
    """The model's €€€ rule (``starfever.engine.money.JACKPOT_RULES``)."""
    upgrade_unit: str
    """What one UPGRADE adds (``line_bet`` or ``total_bet``)."""
    total: float
    """Total RTP: the game's plus the €€€ contribution rate."""
    total_exact_rational: bool
    """Whether ``total`` is a pure rational (no max-win cap; a cap's cut is a float step)."""
    game: float
    """The game's RTP: lines, Star Wild and Hold & Cash."""
    components: Components
    """The total by what pays it."""
    hold_and_cash_split: HoldAndCashSplit
    """Hold & Cash by what pays it."""
    hold_and_cash_split_before_cap: bool
    """Whether the split is before a max-win cap (the model sets one)."""
    by_line_bet: Mapping[Cents, ClassFigures]
    """The figures of each bet class, by line bet (cents), smallest first."""
    hit_frequency: float
    """P(a round's total win > 0)."""
    star_wild_frequency: float
    """P(a paid spin triggers the Star Wild respin)."""
    star_wild_round_pays_nothing: float
    """P(neither the paid spin nor the respin has a line win | Star Wild)."""
    star_wild_respin_pays_nothing: float
    """P(the respin alone has no line win | Star Wild)."""
    hold_and_cash_frequency: float
    """P(a paid spin triggers Hold & Cash)."""
    jackpot_frequency: float
    """P(a paid spin shows a €€€ line)."""
    mega_frequency: float
    """P(a paid spin wins the MEGA)."""
    hold_and_cash_mean: float
    """E[the Hold & Cash payout | it triggers] (0 for a model without the feature)."""
    std_dev: float
    """Standard deviation of a round's win, the €€€ share at the seed pool."""
    std_dev_method: str
    """How ``std_dev`` was obtained (``exact``)."""
    std_dev_game: float
    """Standard deviation of a round's game win, the €€€ share left out."""
    std_dev_note: str
    """``std_dev`` and ``std_dev_game`` in words, for the PAR sheet."""
    win_bands: tuple[WinBand, ...]
    """The law of a round's game win in bands, lowest first."""
    max_win_x: LargestWins
    """The largest win of each part of a round."""
    max_win_cap_x: int | None
    """The model's max-win cap (x total bet), ``None`` where it sets none."""
    max_win_probability: LargestWinChances
    """How likely the largest wins are."""
    hold_and_cash_tails: tuple[HoldAndCashTail, ...]
    """P(Hold & Cash pays at least k x total bet), k ascending."""
    hold_and_cash_dp_cap_x: int
    """Up to where (x total bet) the Hold & Cash payout DP keeps its law exactly."""
    hold_and_cash_above_cap_per_spin: float
    """The payout law's mass beyond ``hold_and_cash_dp_cap_x``, per round."""
    jackpot_long_run: Mapping[str, PoolLongRun]
    """The €€€ pool's long run under each named mix of bet classes; empty for a model without
    a progressive (no pool, ADR 0072)."""
    exact: ExactFigures
    """The exact rationals."""
    methods: Mapping[str, str]
    """How each figure was obtained, by figure name (``starfever.math.figures.METHODS``)."""
    format: int
    """The figures' format (``starfever.math.figures.FORMAT``)."""

    @property
    def has_progressive(self) -> bool:
        """Whether the model has the €€€ pool: only then do its figures state the pool's long
        run (under every named mix)."""
        return bool(self.jackpot_long_run)

    def to_json(self) -> dict[str, Any]:
        """The figures as format 5's JSON object (every key, in its order)."""
        c, s, mw, mp, x = (self.components, self.hold_and_cash_split, self.max_win_x,
                           self.max_win_probability, self.exact)
        return {
            "model": self.model,
            "model_version": self.model_version,
            "model_sha256": self.model_sha256,
            "jackpot_rule": self.jackpot_rule,
            "upgrade_unit": self.upgrade_unit,
            "total": self.total,
            "total_exact_rational": self.total_exact_rational,
            "game": self.game,
            "components": {"lines": c.lines, "star_wild": c.star_wild,
                           "hold_and_cash": c.hold_and_cash, "progressive": c.progressive},
            "hold_and_cash_split": {"cash": s.cash, "minor": s.minor, "major": s.major,
                                    "mega": s.mega},
            "hold_and_cash_split_before_cap": self.hold_and_cash_split_before_cap,
            "by_line_bet": {str(bet): {"total": row.total, "progressive": row.progressive,
                                       "std_dev": row.std_dev}
                            for bet, row in self.by_line_bet.items()},
            "hit_frequency": self.hit_frequency,
            "star_wild_frequency": self.star_wild_frequency,
            "star_wild_round_pays_nothing": self.star_wild_round_pays_nothing,
            "star_wild_respin_pays_nothing": self.star_wild_respin_pays_nothing,
            "hold_and_cash_frequency": self.hold_and_cash_frequency,
            "jackpot_frequency": self.jackpot_frequency,
            "mega_frequency": self.mega_frequency,
            "hold_and_cash_mean": self.hold_and_cash_mean,
            "std_dev": self.std_dev,
            "std_dev_method": self.std_dev_method,
            "std_dev_game": self.std_dev_game,
            "std_dev_note": self.std_dev_note,
            "win_bands": [{"from_x": b.from_x, "to_x": b.to_x, "probability": b.probability}
                          for b in self.win_bands],
            "max_win_x": {"base": mw.base, "star_wild": mw.star_wild,
                          "hold_and_cash": mw.hold_and_cash},
            "max_win_cap_x": self.max_win_cap_x,
            "max_win_probability": {"base": mp.base, "star_wild": mp.star_wild},
            "hold_and_cash_tails": [{"k": t.k, "given_trigger": t.given_trigger,
                                     "per_spin": t.per_spin}
                                    for t in self.hold_and_cash_tails],
            "hold_and_cash_dp_cap_x": self.hold_and_cash_dp_cap_x,
            "hold_and_cash_above_cap_per_spin": self.hold_and_cash_above_cap_per_spin,
            "jackpot_long_run": {name: _run_json(run)
                                 for name, run in self.jackpot_long_run.items()},
            "exact": {"total": str(x.total), "lines": str(x.lines),
                      "star_wild": str(x.star_wild), "hold_and_cash": str(x.hold_and_cash),
                      "progressive": str(x.progressive), "hit_frequency": str(x.hit_frequency),
                      "second_moment_game": str(x.second_moment_game),
                      "max_base_probability": str(x.max_base_probability),
                      "max_star_wild_probability": str(x.max_star_wild_probability)},
            "methods": dict(self.methods),
            "format": self.format,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Figures:
        """The figures of format 5's JSON object; ``KeyError``, ``TypeError`` or
        ``ValueError`` for one that is not (a cache file of another shape is a cache miss).
        Numbers are kept as the file has them, so :meth:`to_json` gives the file back."""
        c, s, mw, mp, x = (data["components"], data["hold_and_cash_split"], data["max_win_x"],
                           data["max_win_probability"], data["exact"])
        return cls(
            model=data["model"], model_version=data["model_version"],
            model_sha256=data["model_sha256"], jackpot_rule=data["jackpot_rule"],
            upgrade_unit=data["upgrade_unit"], total=data["total"],
            total_exact_rational=data["total_exact_rational"], game=data["game"],
            components=Components(lines=c["lines"], star_wild=c["star_wild"],
                                  hold_and_cash=c["hold_and_cash"],
                                  progressive=c["progressive"]),
            hold_and_cash_split=HoldAndCashSplit(cash=s["cash"], minor=s["minor"],
                                                 major=s["major"], mega=s["mega"]),
            hold_and_cash_split_before_cap=data["hold_and_cash_split_before_cap"],
            by_line_bet={Cents(int(bet)): ClassFigures(total=row["total"],
                                                       progressive=row["progressive"],
                                                       std_dev=row["std_dev"])
                         for bet, row in data["by_line_bet"].items()},
            hit_frequency=data["hit_frequency"],
            star_wild_frequency=data["star_wild_frequency"],
            star_wild_round_pays_nothing=data["star_wild_round_pays_nothing"],
            star_wild_respin_pays_nothing=data["star_wild_respin_pays_nothing"],
            hold_and_cash_frequency=data["hold_and_cash_frequency"],
            jackpot_frequency=data["jackpot_frequency"], mega_frequency=data["mega_frequency"],
            hold_and_cash_mean=data["hold_and_cash_mean"], std_dev=data["std_dev"],
            std_dev_method=data["std_dev_method"], std_dev_game=data["std_dev_game"],
            std_dev_note=data["std_dev_note"],
            win_bands=tuple(WinBand(from_x=b["from_x"], to_x=b["to_x"],
                                    probability=b["probability"]) for b in data["win_bands"]),
            max_win_x=LargestWins(base=mw["base"], star_wild=mw["star_wild"],
                                  hold_and_cash=mw["hold_and_cash"]),
            max_win_cap_x=data["max_win_cap_x"],
            max_win_probability=LargestWinChances(base=mp["base"], star_wild=mp["star_wild"]),
            hold_and_cash_tails=tuple(HoldAndCashTail(k=t["k"], given_trigger=t["given_trigger"],
                                                      per_spin=t["per_spin"])
                                      for t in data["hold_and_cash_tails"]),
            hold_and_cash_dp_cap_x=data["hold_and_cash_dp_cap_x"],
            hold_and_cash_above_cap_per_spin=data["hold_and_cash_above_cap_per_spin"],
            jackpot_long_run={name: _run(run) for name, run in data["jackpot_long_run"].items()},
            exact=ExactFigures(**{name: Fraction(x[name]) for name in _EXACT}),
            methods=dict(data["methods"]),
            format=data["format"],
        )


_EXACT = ("total", "lines", "star_wild", "hold_and_cash", "progressive", "hit_frequency",
          "second_moment_game", "max_base_probability", "max_star_wild_probability")
"""The fields of :class:`ExactFigures`, in the order of their JSON keys."""

_RUN_NUMBERS = ("progressive_per_class", "players_money", "refills",
                "total_per_class_with_refills", "mean_pool_at_win_cents",
                "refill_per_win_cents")


def _run_json(run: PoolLongRun) -> dict[str, Any]:
    return {"mix": {str(bet): share for bet, share in run.mix.items()},
            **{name: getattr(run, name) for name in _RUN_NUMBERS},
            "method": run.method, "balance_error": run.balance_error, "std_dev": run.std_dev}


def _run(data: Mapping[str, Any]) -> PoolLongRun:
    return PoolLongRun(mix={Cents(int(bet)): share for bet, share in data["mix"].items()},
                       **{name: data[name] for name in _RUN_NUMBERS},
                       method=data["method"], balance_error=data["balance_error"],
                       std_dev=data["std_dev"])


__all__ = ["ClassFigures", "Components", "ExactFigures", "Figures", "HoldAndCashSplit",
           "HoldAndCashTail", "LargestWinChances", "LargestWins", "PoolLongRun", "WinBand"]
