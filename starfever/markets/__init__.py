"""Market profiles: what a market's regulator lets the game's presentation do, as data.

A profile is a JSON file in this package (``at.json``, ``de.json``, ``uk.json``,
``strict.json``): whether
Turbo and Skip (a slam stop) are allowed, the minimum duration of a round, whether the net
position and the session clock are always on screen, the largest stake a round may carry,
autoplay (offered in no profile), when a win is celebrated, whether a progressive may run, and
the player protections a market requires (a panic button, one session per player, a monthly
deposit limit, a lower stake cap for young adults: ``young_adult_stake_cap``, ``null`` for
none). One field may be left out of a file: ``currency`` (the market's ISO 4217 currency, EUR
where absent). ``starfever serve --market NAME`` picks one (the default is
:data:`DEFAULT_MARKET`, the Austrian conditions); ``GET /api/v1/game`` and the operator's launch
serve it to the client, and the server itself enforces what a client could skip (the minimum
round duration per player, the stake, at start-up a model the market allows:
:func:`check_model`, and the player protections: ``server.services.market_rules``). A field no
code knows is refused, never ignored. Which fields the server enforces: ADR 0018, 0073, 0075.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Final

from starfever.engine.errors import InputError
from starfever.engine.model import MathModel
from starfever.engine.symbols import BET_CLASSES, LINE_COUNT

DEFAULT_MARKET: Final = "at"
"""The market of the game conditions (Austria)."""

_FIELDS: Final[dict[str, type]] = {
    "name": str, "description": str, "turbo": bool, "slam_stop": bool, "autoplay": bool,
    "min_round_ms": int, "max_stake_cents": int, "show_net_position": bool,
    "show_session_clock": bool, "celebrate_win_equal_to_stake": bool, "big_win_x": list,
    "progressive": bool, "panic_button": bool, "one_session_per_player": bool,
    "monthly_deposit_limit_cents": int,
    "demo": str, "young_adult_stake_cap": dict,
}
_OPTIONAL: Final[dict[str, tuple[type, object]]] = {"currency": (str, "EUR")}
"""Fields a profile file may leave out: their type and the value where absent (``currency``:
every market served EUR before the currencies, ADR 0077; a protection is never optional)."""
_NULLABLE: Final = frozenset({"monthly_deposit_limit_cents", "young_adult_stake_cap"})
"""Fields whose ``null`` means "none" (no limit)."""
_CURRENCY = re.compile(r"[A-Z]{3}")
_AGE_CAP_FIELDS: Final = frozenset({"below_age", "max_stake_cents"})
DEMO_ALLOWED, DEMO_FORBIDDEN, DEMO_VERIFIED_ONLY = "allowed", "forbidden", "verified_only"
DEMO_RULES: Final = (DEMO_ALLOWED, DEMO_FORBIDDEN, DEMO_VERIFIED_ONLY)
"""Whether a market offers demo play (ADR 0066): to anyone, to nobody, or only to a player the
operator verified (its signed demo launch; the public page's "Play for fun" is refused)."""


class UnknownMarket(InputError):
    """A market name no profile file has, or a profile file that is not one."""


class MarketModelMismatch(InputError):
    """A model the market does not allow (:func:`check_model`)."""


@dataclass(frozen=True, slots=True)
class MarketProfile:
    """One market's presentation rules (a profile file, checked)."""

    name: str
    """The profile's name (its file name without ``.json``)."""
    description: str
    """For people: which market, and why these values."""
    turbo: bool
    """Whether the player may speed rounds up (Turbo)."""
    slam_stop: bool
    """Whether the player may cut a round's presentation short (Skip, Space)."""
    autoplay: bool
    """Whether rounds may start by themselves; ``false`` in every shipped profile."""
    min_round_ms: int
    """The least time from the start of one round of a player to the start of the next (0:
    none); the server refuses an earlier spin with ``429 round_too_soon``."""
    max_stake_cents: int
    """The largest total bet of one round, in cents."""
    show_net_position: bool
    """Whether the session's net position (wins - bets) is always on screen."""
    show_session_clock: bool
    """Whether the session's elapsed time is always on screen."""
    celebrate_win_equal_to_stake: bool
    """Whether a win of exactly the stake is celebrated (a smaller one never is)."""
    big_win_x: tuple[int, ...]
    """The big-win tiers: a win of at least this many times the total bet counts up as
    tier 1, 2, 3 (ascending)."""
    progressive: bool
    """Whether a progressive (the €€€ pool) may run; where not, the server refuses at start-up a
    model that has one (:func:`check_model`), and nothing may be presented as a jackpot
    (ADR 0072)."""
    panic_button: bool
    """Whether the player must be offered a panic button (one press, confirmed: a 24-hour
    self-exclusion): ``POST /panic-button`` (``services.market_rules``, ADR 0075)."""
    one_session_per_player: bool
    """Whether a player may have one session at a time: a log-in or launch ends the others
    (``401 session_replaced``; ``services.market_rules``, ADR 0075)."""
    monthly_deposit_limit_cents: int | None
    """The most a player may deposit in a calendar month (UTC) in ledger mode, in cents;
    ``None``: no such limit (``422 monthly_deposit_limit_exceeded``; ADR 0075)."""
    demo: str = DEMO_ALLOWED
    """Demo play (:data:`DEMO_RULES`): ``allowed``, ``forbidden`` or ``verified_only``."""
    currency: str = "EUR"
    """The market's currency (ISO 4217), which an installation serves by default."""
    young_adult_stake_cap: YoungAdultStakeCap | None = None
    """A lower stake cap for players under an age (the UK's GBP 2 for 18-24 year-olds):
    ``None``: none. The server takes the age from the player's birth date (ledger mode) or the
    launch's ``birth_date`` (operator mode, required there: ``422 birth_date_required``) and
    refuses a larger stake with ``422 stake_above_age_limit`` (ADR 0077)."""

    def public(self) -> dict[str, Any]:
        """The profile as the API serves it."""
        return {"name": self.name, "turbo": self.turbo, "slam_stop": self.slam_stop,
                "autoplay": self.autoplay, "min_round_ms": self.min_round_ms,
                "max_stake_cents": self.max_stake_cents,
                "show_net_position": self.show_net_position,
                "show_session_clock": self.show_session_clock,
                "celebrate_win_equal_to_stake": self.celebrate_win_equal_to_stake,
                "big_win_x": list(self.big_win_x), "progressive": self.progressive,
                "panic_button": self.panic_button,
                "one_session_per_player": self.one_session_per_player,
                "monthly_deposit_limit_cents": self.monthly_deposit_limit_cents,
                "demo": self.demo,
                "young_adult_stake_cap": None if self.young_adult_stake_cap is None
                else self.young_adult_stake_cap.public()}

    def line_bets(self) -> tuple[int, ...]:
        """The bet classes (line bets, cents) whose total bet the market's cap allows."""
        return tuple(b for b in BET_CLASSES if b * LINE_COUNT <= self.max_stake_cents)

    def stake_cap_for(self, age: int | None) -> int:
        """The largest total bet of one round for a player of ``age`` whole years (``None``:
        not known, which takes the young adults' cap where the market has one)."""
        young = self.young_adult_stake_cap
        if young is not None and (age is None or age < young.below_age):
            return min(young.max_stake_cents, self.max_stake_cents)
        return self.max_stake_cents


@dataclass(frozen=True, slots=True)
class YoungAdultStakeCap:
    """A market's lower stake cap for young adults (``young_adult_stake_cap``)."""

    below_age: int
    """The cap holds for a player younger than this many whole years."""
    max_stake_cents: int
    """The largest total bet of one round for such a player, in minor units."""

    def public(self) -> dict[str, int]:
        """As the profile file and the API state it."""
        return {"below_age": self.below_age, "max_stake_cents": self.max_stake_cents}


def market_names() -> list[str]:
    """The names of the shipped profiles, sorted."""
    folder = resources.files(__name__)
    return sorted(p.name.removesuffix(".json") for p in folder.iterdir()
                  if p.name.endswith(".json"))


def profile_from_dict(data: Any, source: str) -> MarketProfile:
    """A checked profile from its file's content; :class:`UnknownMarket` says what is wrong."""
    if not isinstance(data, dict):
        raise UnknownMarket(f"market profile {source}: not a JSON object")
    missing = sorted(set(_FIELDS) - set(data))
    extra = sorted(set(data) - set(_FIELDS) - set(_OPTIONAL))
    if missing or extra:
        raise UnknownMarket(f"market profile {source}: missing {missing}, unknown {extra}")
    data = {**{name: default for name, (_, default) in _OPTIONAL.items()}, **data}
    kinds = {**_FIELDS, **{name: kind for name, (kind, _) in _OPTIONAL.items()}}
    for field, kind in kinds.items():
        value = data[field]
        if value is None and field in _NULLABLE:
            continue
        # bool is an int in Python: an int field must not take true/false, nor a bool field 1
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise UnknownMarket(f"market profile {source}: {field} must be a {kind.__name__}, "
                                f"got {value!r}")
    if data["autoplay"]:
        raise UnknownMarket(f"market profile {source}: autoplay is offered in no market")
    if not 0 <= data["min_round_ms"] <= 60_000:
        raise UnknownMarket(f"market profile {source}: min_round_ms must be 0..60000, got "
                            f"{data['min_round_ms']!r}")
    if data["max_stake_cents"] < 20:
        raise UnknownMarket(f"market profile {source}: max_stake_cents must allow the "
                            f"smallest bet (20), got {data['max_stake_cents']!r}")
    limit = data["monthly_deposit_limit_cents"]
    if limit is not None and limit < 1:
        raise UnknownMarket(f"market profile {source}: monthly_deposit_limit_cents must be null "
                            f"(no limit) or positive, got {limit!r}")
    if data["demo"] not in DEMO_RULES:
        raise UnknownMarket(f"market profile {source}: demo must be one of "
                            f"{', '.join(DEMO_RULES)}, got {data['demo']!r}")
    tiers = data["big_win_x"]
    if len(tiers) != 3 or not all(isinstance(x, int) and not isinstance(x, bool) and x > 1
                                  for x in tiers) or sorted(set(tiers)) != tiers:
        raise UnknownMarket(f"market profile {source}: big_win_x must be three ascending "
                            f"multiples above 1, got {tiers!r}")
    if not _CURRENCY.fullmatch(data["currency"]):
        raise UnknownMarket(f"market profile {source}: currency must be an ISO 4217 code "
                            f"(three capital letters), got {data['currency']!r}")
    young = _young_adult_cap(data["young_adult_stake_cap"], data["max_stake_cents"], source)
    return MarketProfile(**{**data, "big_win_x": tuple(tiers), "young_adult_stake_cap": young})


def _young_adult_cap(value: dict[str, Any] | None, cap: int,
                     source: str) -> YoungAdultStakeCap | None:
    """The checked ``young_adult_stake_cap``: an age above the adult age of 18 up to 100 and a
    cap from the smallest bet (20) up to the market's own."""
    if value is None:
        return None
    where = f"market profile {source}: young_adult_stake_cap"
    if set(value) != _AGE_CAP_FIELDS:
        raise UnknownMarket(f"{where} must have exactly below_age and max_stake_cents, got "
                            f"{sorted(value)}")
    age, stake = value["below_age"], value["max_stake_cents"]
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in (age, stake)):
        raise UnknownMarket(f"{where}: below_age and max_stake_cents must be whole numbers")
    if not 18 < age <= 100:
        raise UnknownMarket(f"{where}: below_age must be 19..100, got {age}")
    if not 20 <= stake < cap:
        raise UnknownMarket(f"{where}: max_stake_cents must allow the smallest bet (20) and "
                            f"lie below the market's max_stake_cents ({cap}), got {stake}")
    return YoungAdultStakeCap(below_age=age, max_stake_cents=stake)


def check_model(market: MarketProfile, model: MathModel) -> None:
    """:class:`MarketModelMismatch` (one line) unless ``model`` may be offered in ``market``: a
    market without a progressive takes only a model without one (ADR 0072), and every bet
    class the market's stake cap lets through must be one the model is offered at (its figures,
    conditions and PAR sheet state only those; the spin route refuses a stake above the cap,
    so the model's other classes are never played)."""
    where = f"market {market.name!r} cannot serve model {model.name} {model.version}"
    if model.has_progressive and not market.progressive:
        raise MarketModelMismatch(f"{where}: the market allows no progressive and the model has "
                                  "the €€€ pool (serve a model without one, e.g. --model de)")
    missing = [b for b in market.line_bets() if b not in model.line_bets]
    if missing:
        raise MarketModelMismatch(f"{where}: the market's stake cap of {market.max_stake_cents} "
                                  f"cents lets line bets {', '.join(map(str, missing))} cents "
                                  "through, which the model is not offered at (its line_bets)")


@lru_cache(maxsize=8)
def load_market(name: str) -> MarketProfile:
    """The shipped profile ``name``; :class:`UnknownMarket` (one line) for any other name."""
    names = market_names()
    if name not in names:
        raise UnknownMarket(f"unknown market {name!r}; markets: {', '.join(names)}")
    text = (resources.files(__name__) / f"{name}.json").read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise UnknownMarket(f"market profile {name}.json: not JSON ({error.msg})") from None
    profile = profile_from_dict(data, f"{name}.json")
    if profile.name != name:
        raise UnknownMarket(f"market profile {name}.json names itself {profile.name!r}")
    return profile


__all__ = ["DEFAULT_MARKET", "DEMO_ALLOWED", "DEMO_FORBIDDEN", "DEMO_RULES", "DEMO_VERIFIED_ONLY",
           "MarketModelMismatch", "MarketProfile", "UnknownMarket", "YoungAdultStakeCap",
           "check_model", "load_market", "market_names", "profile_from_dict"]
