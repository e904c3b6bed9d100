"""Market profiles: what a market's regulator lets the game's presentation do, as data.

A profile is a JSON file in this package (``at.json``, ``strict.json``): whether Turbo and Skip
(a slam stop) are allowed, the minimum duration of a round, whether the net position and the
session clock are always on screen, the largest stake a round may carry, autoplay (offered in
no profile), when a win is celebrated. ``starfever serve --market NAME`` picks one (the default
is :data:`DEFAULT_MARKET`, the Austrian conditions); ``GET /api/v1/game`` and the operator's
launch serve it to the client, and the server itself enforces what a client could skip (the
minimum round duration per player, the stake). See ADR 0018.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Final

from starfever.engine.errors import InputError

DEFAULT_MARKET: Final = "at"
"""The market of the game conditions (Austria)."""

_FIELDS: Final[dict[str, type]] = {
    "name": str, "description": str, "turbo": bool, "slam_stop": bool, "autoplay": bool,
    "min_round_ms": int, "max_stake_cents": int, "show_net_position": bool,
    "show_session_clock": bool, "celebrate_win_equal_to_stake": bool, "big_win_x": list,
    "demo": str,
}
DEMO_ALLOWED, DEMO_FORBIDDEN, DEMO_VERIFIED_ONLY = "allowed", "forbidden", "verified_only"
DEMO_RULES: Final = (DEMO_ALLOWED, DEMO_FORBIDDEN, DEMO_VERIFIED_ONLY)
"""Whether a market offers demo play (ADR 0066): to anyone, to nobody, or only to a player the
operator verified (its signed demo launch; the public page's "Play for fun" is refused)."""


class UnknownMarket(InputError):
    """A market name no profile file has, or a profile file that is not one."""


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
    demo: str = DEMO_ALLOWED
    """Demo play (:data:`DEMO_RULES`): ``allowed``, ``forbidden`` or ``verified_only``."""

    def public(self) -> dict[str, Any]:
        """The profile as the API serves it."""
        return {"name": self.name, "turbo": self.turbo, "slam_stop": self.slam_stop,
                "autoplay": self.autoplay, "min_round_ms": self.min_round_ms,
                "max_stake_cents": self.max_stake_cents,
                "show_net_position": self.show_net_position,
                "show_session_clock": self.show_session_clock,
                "celebrate_win_equal_to_stake": self.celebrate_win_equal_to_stake,
                "big_win_x": list(self.big_win_x), "demo": self.demo}


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
    extra = sorted(set(data) - set(_FIELDS))
    if missing or extra:
        raise UnknownMarket(f"market profile {source}: missing {missing}, unknown {extra}")
    for field, kind in _FIELDS.items():
        value = data[field]
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
    if data["demo"] not in DEMO_RULES:
        raise UnknownMarket(f"market profile {source}: demo must be one of "
                            f"{', '.join(DEMO_RULES)}, got {data['demo']!r}")
    tiers = data["big_win_x"]
    if len(tiers) != 3 or not all(isinstance(x, int) and not isinstance(x, bool) and x > 1
                                  for x in tiers) or sorted(set(tiers)) != tiers:
        raise UnknownMarket(f"market profile {source}: big_win_x must be three ascending "
                            f"multiples above 1, got {tiers!r}")
    return MarketProfile(**{**data, "big_win_x": tuple(tiers)})


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
           "MarketProfile", "UnknownMarket", "load_market", "market_names",
           "profile_from_dict"]
