"""Currencies as data (ADR 0076): an installation serves one or more ISO 4217 currencies, each
a JSON file in this package (``EUR.json``, ``GBP.json``): its minor-unit exponent, its ladder of
line bets in minor units, the line bet that wins 100 % of its €€€ pool (``share_base``) and that
pool's seed and contribution rate.

The maths are per line-bet class: a class is a multiple of the line bet in any currency, every
win is a whole multiple of the line bet, and a €€€ share is ``line bet / share_base`` of the
pool. A ladder whose classes are the model's classes with the same ``share_base`` therefore has,
class by class, the model's exact figures in that currency, and its pool's share table is the
conditions' table (1 minor unit -> 1 %, ..., 100 -> 100 %). :func:`check_currency_model` refuses
any other pairing at start-up, so no round is ever played at figures nobody computed.

``starfever serve --currency EUR,GBP`` (``STARFEVER_CURRENCIES``) names the served currencies;
the first is the one a new ledger wallet gets. Nothing here touches a database or a clock.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from importlib import resources
from typing import Any, Final

from starfever.engine import money
from starfever.engine.errors import InputError
from starfever.engine.model import MathModel
from starfever.engine.symbols import BET_CLASSES

DEFAULT_CURRENCY: Final = "EUR"
"""The currency of the game conditions, served when nothing else is named."""
_FIELDS: Final = frozenset({"code", "description", "exponent", "line_bets", "share_base",
                            "pool"})
_POOL_FIELDS: Final = frozenset({"seed", "contribution_rate"})
_CODE = re.compile(r"[A-Z]{3}")


class UnknownCurrency(InputError):
    """A currency code no file has, a file that is not a currency, or a currency that cannot
    be served with the model."""


@dataclass(frozen=True, slots=True)
class Currency:
    """One served currency (a file of this package, checked)."""

    code: str
    """ISO 4217 code (``"EUR"``), the file's name without ``.json``."""
    description: str
    """For people: which currency, and why this ladder."""
    exponent: int
    """Minor units per major unit as a power of ten (2: cents, pence)."""
    line_bets: tuple[int, ...]
    """The ladder: the line bets offered, in minor units, ascending; each one of the model's
    line-bet classes (``BET_CLASSES``)."""
    share_base: int
    """The line bet (minor units) that wins 100 % of the pool: "1.00 of the currency"."""
    pool_seed: int
    """The €€€ pool of this currency starts at, and is refilled to at least, this (minor
    units)."""
    contribution_rate: Fraction
    """Share of every total bet in this currency that flows into its pool."""

    def public(self) -> dict[str, Any]:
        """What ``GET /api/v1/game`` and the session's answers say of it."""
        return {"code": self.code, "exponent": self.exponent,
                "line_bets": list(self.line_bets), "share_base": self.share_base}

    def ladder(self, model: MathModel) -> tuple[int, ...]:
        """The line bets of this currency the model is offered at (the market's cap may
        narrow it further)."""
        return tuple(b for b in self.line_bets if b in model.line_bets)


def currency_codes() -> list[str]:
    """The codes of the shipped currencies, sorted."""
    folder = resources.files(__name__)
    return sorted(p.name.removesuffix(".json") for p in folder.iterdir()
                  if p.name.endswith(".json"))


def currency_from_dict(data: Any, source: str) -> Currency:
    """A checked currency from its file's content; :class:`UnknownCurrency` says what is
    wrong."""
    if not isinstance(data, dict) or set(data) != _FIELDS:
        found = sorted(data) if isinstance(data, dict) else type(data).__name__
        raise UnknownCurrency(f"currency {source}: fields must be {sorted(_FIELDS)}, "
                              f"got {found}")
    code, exponent, ladder, base, pool = (data[k] for k in ("code", "exponent", "line_bets",
                                                            "share_base", "pool"))
    if not isinstance(code, str) or not _CODE.fullmatch(code):
        raise UnknownCurrency(f"currency {source}: code must be three capital letters, "
                              f"got {code!r}")
    if type(exponent) is not int or not 0 <= exponent <= 4:
        raise UnknownCurrency(f"currency {source}: exponent must be 0..4, got {exponent!r}")
    if (not isinstance(ladder, list) or not ladder or ladder != sorted(set(ladder))
            or any(type(b) is not int or b not in BET_CLASSES for b in ladder)):
        raise UnknownCurrency(f"currency {source}: line_bets must be ascending line-bet "
                              f"classes ({', '.join(map(str, BET_CLASSES))}), got {ladder!r}")
    if type(base) is not int or base != money.JACKPOT_SHARE_BASE:
        raise UnknownCurrency(f"currency {source}: share_base must be "
                              f"{money.JACKPOT_SHARE_BASE} (the classes' share table), "
                              f"got {base!r}")
    if not isinstance(pool, dict) or set(pool) != _POOL_FIELDS:
        raise UnknownCurrency(f"currency {source}: pool must be {{seed, contribution_rate}}, "
                              f"got {pool!r}")
    seed, rate = pool["seed"], pool["contribution_rate"]
    if type(seed) is not int or seed < 0:
        raise UnknownCurrency(f"currency {source}: pool.seed must be a non-negative integer "
                              f"(minor units), got {seed!r}")
    try:
        fraction = Fraction(rate)
    except (TypeError, ValueError):
        fraction = Fraction(-1)
    if not isinstance(rate, str) or not 0 <= fraction < 1:
        raise UnknownCurrency(f"currency {source}: pool.contribution_rate must be a fraction "
                              f"0 <= r < 1 written as text (\"1/100\"), got {rate!r}")
    return Currency(code=code, description=str(data["description"]), exponent=exponent,
                    line_bets=tuple(ladder), share_base=base, pool_seed=seed,
                    contribution_rate=fraction)


@lru_cache(maxsize=16)
def load_currency(code: str) -> Currency:
    """The shipped currency ``code``; :class:`UnknownCurrency` (one line) for any other."""
    codes = currency_codes()
    if code not in codes:
        raise UnknownCurrency(f"unknown currency {code!r}; currencies: {', '.join(codes)}")
    text = (resources.files(__name__) / f"{code}.json").read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise UnknownCurrency(f"currency {code}.json: not JSON ({error.msg})") from None
    found = currency_from_dict(data, f"{code}.json")
    if found.code != code:
        raise UnknownCurrency(f"currency {code}.json names itself {found.code!r}")
    return found


def parse_currencies(text: str) -> tuple[str, ...]:
    """``"EUR,GBP"`` -> ``("EUR", "GBP")``: each code shipped, each once, in the order given
    (the first is a new ledger wallet's); :class:`UnknownCurrency` otherwise."""
    codes = [part.strip().upper() for part in text.split(",")]
    if not all(codes):
        raise UnknownCurrency(f"currencies must be codes separated by commas, got {text!r}")
    for code in codes:
        load_currency(code)
    if len(set(codes)) != len(codes):
        raise UnknownCurrency(f"a currency is named twice in {text!r}")
    return tuple(codes)


def check_currency_model(currency: Currency, model: MathModel) -> None:
    """:class:`UnknownCurrency` (one line) unless ``currency`` can be served with ``model``:
    some class of its ladder is one the model is offered at, and with a progressive its pool's
    seed and contribution rate are the model's (the exact €€€ figures were computed with them)."""
    where = f"currency {currency.code} cannot be served with model {model.name} {model.version}"
    if not currency.ladder(model):
        raise UnknownCurrency(f"{where}: none of its line bets is a class the model is offered "
                              "at")
    if model.has_progressive and (currency.pool_seed != model.seed_cents
                                  or currency.contribution_rate != model.contribution_rate):
        raise UnknownCurrency(f"{where}: its pool (seed {currency.pool_seed}, contribution "
                              f"{currency.contribution_rate}) differs from the model's (seed "
                              f"{model.seed_cents}, contribution {model.contribution_rate})")


def market_currency(market: str) -> str | None:
    """The ``"currency"`` a shipped market profile names (``None``: it names none), read from
    its file so that this works whether or not the profile loader knows the field."""
    path = resources.files("starfever.markets") / f"{market}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    found = data.get("currency") if isinstance(data, dict) else None
    return found if isinstance(found, str) else None


__all__ = ["DEFAULT_CURRENCY", "Currency", "UnknownCurrency", "check_currency_model",
           "currency_codes", "currency_from_dict", "load_currency", "market_currency",
           "parse_currencies"]
