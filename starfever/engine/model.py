"""Math models: every tunable number of the game (reel strips, weights, progressive settings)
lives in a model file, ``starfever/models/<name>.json``; this module reads and checks them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from importlib import resources
from pathlib import Path
from typing import Any

from starfever.engine.errors import InputError
from starfever.engine.money import EACH_LINE_FROM_THE_REST, JACKPOT_RULES, ONE_SHARE_PER_SPIN
from starfever.engine.symbols import (
    BET_CLASSES,
    CASH_VALUES,
    CELL_KINDS,
    COIN,
    JACKPOT,
    JACKPOT_REELS,
    LINE_COUNT,
    MWILD,
    REELS,
    ROWS,
    SYMBOLS,
    Cents,
    Symbol,
)

ReelStrip = tuple[Symbol, ...]
"""A reel strip, read cyclically: stop ``s`` shows ``strip[s], strip[s+1], strip[s+2]``."""
Stop = int
"""A reel stop: the index on the strip that shows on row 0."""


MIN_CAP_X = 1800
"""The smallest max-win cap a model may set, in total bets: no paid spin (at most 20 lines x 600
= 600 x) can reach it. A Star Wild round can in theory (its respin alone up to 20 lines x 600 x 3
= 1,800 x, plus the paid spin); the engine and the simulator stop it at the cap like any round,
and the exact figures, which cut only Hold & Cash at the cap, refuse a model whose largest Star
Wild round passes its cap (the shipped models' largest is 256 x)."""


UPGRADE_LINE_BET = "line_bet"
"""The UPGRADE booster adds 1 x line bet to every held CASH value (RULES.md, from 2026-12-03:
the conditions' "um die Einsatzhöhe", with "Einsatz" defined as the line bet class)."""
UPGRADE_TOTAL_BET = "total_bet"
"""The UPGRADE booster adds 1 x total bet (the reading of every model made before 2026-12-03,
kept for an operator whose conditions say "1 x Gesamteinsatz")."""
UPGRADE_UNITS: tuple[str, ...] = (UPGRADE_LINE_BET, UPGRADE_TOTAL_BET)
"""The values of ``hold_and_cash.upgrade_unit`` in a model file."""


def upgrade_line_bets(unit: str) -> int:
    """What one UPGRADE of ``unit`` adds to a held CASH value, in line bets."""
    if unit == UPGRADE_LINE_BET:
        return 1
    if unit == UPGRADE_TOTAL_BET:
        return LINE_COUNT
    raise ModelError(f"hold_and_cash.upgrade_unit must be one of {', '.join(UPGRADE_UNITS)}, "
                     f"got {unit!r}")


MAX_WIN_ROUND = "round"
"""The max-win cap holds the round's whole win, the €€€ share included (RULES.md, from
2026-12-03): the game win stops at the cap, and the part of a €€€ share the cap leaves no room
for stays in the pool."""
MAX_WIN_GAME = "game"
"""The max-win cap holds the game win only (lines, Star Wild, Hold & Cash) and a €€€ share is
paid on top: the reading of every capped model made before 2026-12-03, kept so that their rounds
replay."""
MAX_WIN_SCOPES: tuple[str, ...] = (MAX_WIN_ROUND, MAX_WIN_GAME)
"""The values of ``max_win_scope`` in a model file: without the key, a current file reads as
``round`` (the rule now), an archived one as ``game`` (the rule of every capped model made
before the key existed)."""


PRIZES_JACKPOT = "jackpot"
"""Hold & Cash's fixed prizes carry the conditions' names: „Minor“, „Major“ and Mega Jackpot."""
PRIZES_MULTIPLIER = "multiplier"
"""Hold & Cash's fixed prizes are named by what they pay, e.g. "x20 prize", and nothing is
presented as a jackpot: for markets that allow none (Germany, ADR 0072)."""
PRIZE_NAMES: tuple[str, ...] = (PRIZES_JACKPOT, PRIZES_MULTIPLIER)
"""The values of ``hold_and_cash.prize_names`` in a model file (without the key: ``jackpot``)."""


MAX_WEIGHT_SUM = 2**32
"""The largest sum of one group of weights (a weighted pick draws below it): the simulator's
draw serves ``1 <= n <= 2**32``, and a model is refused where it is read, not by whichever
path (the server, the maths, the simulator) meets it first."""


class ModelError(InputError):
    """A model file that cannot be read or breaks a rule."""


@dataclass(frozen=True, slots=True)
class HoldAndCashModel:
    """The weights that drive Hold & Cash (integers; probabilities are weight / sum)."""

    cell_weights: tuple[int, ...]
    """Weight of each of ``CELL_KINDS`` (BLANK, CASH, MINOR, MAJOR, UPGRADE, MULTIPLIER)
    for every empty cell in every respin."""
    coin_values: tuple[int, ...]
    """Weights of the values 1..5 x total bet given to the triggering coins."""
    cash_values: tuple[int, ...]
    """Weights of the values 1..5 x total bet of CASH landing in respins."""
    upgrade_unit: str = UPGRADE_TOTAL_BET
    """What one UPGRADE adds to every held CASH value: ``UPGRADE_LINE_BET`` (1 x line bet) or
    ``UPGRADE_TOTAL_BET`` (1 x total bet); one of ``UPGRADE_UNITS``."""
    prize_names: str = PRIZES_JACKPOT
    """How the texts name the fixed prizes MINOR, MAJOR and Mega (their codes stay):
    ``PRIZES_JACKPOT`` (the conditions' Minor/Major/Mega Jackpot) or ``PRIZES_MULTIPLIER``
    (by their multiple of the total bet, nothing called a jackpot); one of ``PRIZE_NAMES``."""

    @property
    def upgrade_line_bets(self) -> int:
        """What one UPGRADE adds to every held CASH value, in line bets (the unit the engine
        and the simulator keep Hold & Cash values in): 1, or 20 for ``total_bet``."""
        return upgrade_line_bets(self.upgrade_unit)


@dataclass(frozen=True, slots=True)
class MathModel:
    """One complete, checked math model."""

    name: str
    """Short name, e.g. ``"default"``."""
    version: str
    """Version of the model; a round records name and version."""
    base_reels: tuple[ReelStrip, ...]
    """The 5 reel strips of a paid spin."""
    star_wild_reels: tuple[ReelStrip, ...]
    """The 5 reel strips of the Star Wild respin (no COIN)."""
    hold_and_cash: HoldAndCashModel
    """Hold & Cash weights."""
    contribution_rate: Fraction
    """Share of every total bet that flows into the €€€ pool."""
    seed_cents: Cents
    """The €€€ pool starts at, and is refilled to at least, this amount."""
    description: str = ""
    """Free text for people."""
    max_win_x: int | None = None
    """Optional cap on a round's win, as a multiple of the total bet: the game win (lines,
    Star Wild, Hold & Cash) stops there and Hold & Cash ends; what the cap holds besides is
    ``max_win_scope``. ``None`` (the conditions set none): no cap."""
    max_win_scope: str = MAX_WIN_GAME
    """With a cap, whether it holds the whole round, the €€€ share included (``MAX_WIN_ROUND``,
    RULES.md), or the game win only with the share on top (``MAX_WIN_GAME``, capped models
    made before that rule). Meaningless without a cap."""
    jackpot_rule: str = EACH_LINE_FROM_THE_REST
    """How several €€€ lines of one spin are paid (``money.JACKPOT_RULES``). A property of the
    model version, so that a stored round replays under the rule it was played by; a file
    without the key predates the current rule and is read as the earlier one."""

    has_progressive: bool = True
    """Whether the model has the €€€ progressive. Without it (``"progressive": null`` in the
    file) no strip holds a JACKPOT, the contribution rate and the seed are 0 and nothing flows
    into or out of a pool: for markets that allow no jackpot (Germany, ADR 0072)."""
    line_bets: tuple[Cents, ...] = BET_CLASSES
    """The line bet classes (cents) the model is offered at, ascending, a subset of
    ``BET_CLASSES`` (every class unless the file's ``line_bets`` names fewer); its figures,
    game conditions and PAR sheet state these."""

    def to_dict(self) -> dict[str, Any]:
        """The model in its file format (what ``starfever model --json`` prints)."""
        hc = self.hold_and_cash
        out: dict[str, Any] = {
            "name": self.name,
            "version": self.version,
            "description": self.description,
            "reels": {
                "base": [list(strip) for strip in self.base_reels],
                "star_wild": [list(strip) for strip in self.star_wild_reels],
            },
            "hold_and_cash": {
                "cell_weights": dict(zip(CELL_KINDS, hc.cell_weights, strict=True)),
                "coin_values": _by_value(hc.coin_values),
                "cash_values": _by_value(hc.cash_values),
                "upgrade_unit": hc.upgrade_unit,
            },
            "progressive": {
                "contribution_rate": float(self.contribution_rate),
                "seed_cents": int(self.seed_cents),
                "jackpot_rule": self.jackpot_rule,
            } if self.has_progressive else None,
        }
        # the keys below are written only where they differ from what a file without them
        # means, so every model made before them keeps its file and its hash
        if hc.prize_names != PRIZES_JACKPOT:
            out["hold_and_cash"]["prize_names"] = hc.prize_names
        if self.line_bets != BET_CLASSES:
            out["line_bets"] = [int(b) for b in self.line_bets]
        if self.max_win_x is not None:
            out["max_win_x"] = self.max_win_x
            out["max_win_scope"] = self.max_win_scope
        return out

    @property
    def sha256(self) -> str:
        """Content hash: SHA-256 of the model's canonical JSON (sorted keys, no spaces).

        Any change to a strip, a weight, a rate, the rule, the name or the version changes it;
        the layout of the file does not. ``upgrade_unit`` is left out of the hashed form when
        it is ``total_bet``, the unit of every model made before the key existed, and
        ``max_win_scope`` when it is ``game``, so that the hash each stored round records for
        such a model stays what it was."""
        data = self.to_dict()
        if data["hold_and_cash"]["upgrade_unit"] == UPGRADE_TOTAL_BET:
            del data["hold_and_cash"]["upgrade_unit"]
        if data.get("max_win_scope") == MAX_WIN_GAME:  # likewise for the capped models
            del data["max_win_scope"]
        canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
        return hashlib.sha256(canonical.encode("ascii")).hexdigest()


def _by_value(weights: tuple[int, ...]) -> dict[str, int]:
    return {str(v): w for v, w in zip(CASH_VALUES, weights, strict=True)}


def _strips(raw: object, where: str, *, coins: bool) -> tuple[ReelStrip, ...]:
    if not isinstance(raw, list) or len(raw) != REELS:
        raise ModelError(f"{where} must be a list of {REELS} reel strips")
    strips: list[ReelStrip] = []
    for reel, strip in enumerate(raw):
        if not isinstance(strip, list) or len(strip) < ROWS:
            raise ModelError(f"{where} reel {reel} must be a list of at least {ROWS} symbols")
        for symbol in strip:
            if not isinstance(symbol, str) or symbol not in SYMBOLS:
                raise ModelError(f"{where} reel {reel}: unknown symbol code {symbol!r}")
            if symbol == MWILD:
                raise ModelError(
                    f"{where} reel {reel}: MWILD appears only in the Star Wild feature")
            if symbol == COIN and not coins:
                raise ModelError(f"{where} reel {reel}: COIN is not allowed on these strips")
            if symbol == JACKPOT and reel >= JACKPOT_REELS:
                raise ModelError(f"{where} reel {reel}: JACKPOT is only placed on reels 0-2")
        strips.append(tuple(strip))
    return tuple(strips)


def _weights(raw: object, keys: tuple[str, ...], where: str) -> tuple[int, ...]:
    if not isinstance(raw, Mapping) or set(raw) != set(keys):
        raise ModelError(f"{where} must have exactly the keys {', '.join(keys)}")
    weights = []
    for key in keys:
        value = raw[key]
        if type(value) is not int or value < 0:
            raise ModelError(f"{where}[{key!r}] must be a non-negative integer, got {value!r}")
        weights.append(value)
    if sum(weights) == 0:
        raise ModelError(f"{where} weights must not all be zero")
    if sum(weights) > MAX_WEIGHT_SUM:
        raise ModelError(f"{where} weights sum to more than 2**32 ({MAX_WEIGHT_SUM:,}), the "
                         "range the draws serve")
    return tuple(weights)


def _rate(raw: object) -> Fraction:
    # a JSON number only: the string "0.01" would read as the same rate, and the model would
    # then share the hash of a file that differs from it
    number = isinstance(raw, int | float) and not isinstance(raw, bool)
    try:
        rate = Fraction(Decimal(str(raw))) if number else None
    except (InvalidOperation, ValueError, OverflowError):  # NaN, Infinity
        rate = None
    if rate is None or not 0 <= rate < 1:
        raise ModelError(f"progressive.contribution_rate must be a JSON number in [0, 1), "
                         f"got {raw!r}")
    return rate


def _line_bets(raw: object) -> tuple[Cents, ...]:
    if not isinstance(raw, list) or not raw or any(
            type(b) is not int or b not in BET_CLASSES for b in raw) or raw != sorted(set(raw)):
        raise ModelError(f"line_bets must be bet classes ({', '.join(map(str, BET_CLASSES))} "
                         f"cents), ascending, each once, at least one; got {raw!r}")
    return tuple(Cents(b) for b in raw)


def check_offered(model: MathModel) -> None:
    """:class:`ModelError` unless ``model`` keeps the conditions' rules that bind a game offered
    to players beyond what any model file must satisfy: Star Coins can appear on every reel
    ("Star Coins sind Symbole, die auf allen Walzen erscheinen können"), so every base reel
    holds a COIN. The server refuses to start with such a model; the maths and the simulator
    still read it (a hand-made model may isolate one mechanism, an archived version replays
    the rounds played under it)."""
    for reel, strip in enumerate(model.base_reels):
        if COIN not in strip:
            raise ModelError(f"model {model.name} {model.version} cannot be offered: base reel "
                             f"{reel} holds no COIN, and the conditions let Star Coins appear on "
                             "every reel")


def model_from_dict(data: object, *, archived: bool = False) -> MathModel:
    """Check a parsed model file and build the model; :class:`ModelError` names any problem.

    ``archived``: the file is an earlier version kept to replay its rounds; one made before
    ``hold_and_cash.upgrade_unit`` existed is read as ``total_bet``, and one made before
    ``max_win_scope`` existed as ``game``, the rules it was played by. Any other model file
    must name its unit; its cap, if any, holds the whole round unless it says ``game``."""
    if not isinstance(data, Mapping):
        raise ModelError("a model file must hold a JSON object")
    try:
        reels, hc, prog = data["reels"], data["hold_and_cash"], data["progressive"]
        name = data["name"]
    except KeyError as missing:
        raise ModelError(f"model is missing the key {missing}") from None
    if not isinstance(name, str) or not name:
        raise ModelError(f"model name must be a non-empty string, got {name!r}")
    if not all(isinstance(part, Mapping) for part in (reels, hc)) or not (
            prog is None or isinstance(prog, Mapping)):
        raise ModelError("reels and hold_and_cash must be JSON objects, progressive a JSON "
                         "object or null (no progressive)")
    value_keys = tuple(str(v) for v in CASH_VALUES)
    cell_weights = _weights(hc.get("cell_weights"), CELL_KINDS, "hold_and_cash.cell_weights")
    if cell_weights[0] == 0:
        raise ModelError("hold_and_cash.cell_weights['BLANK'] must be positive, "
                         "or the feature could never end")
    unit = hc.get("upgrade_unit", UPGRADE_TOTAL_BET if archived else None)
    if unit not in UPGRADE_UNITS:
        raise ModelError(f"hold_and_cash.upgrade_unit must be one of {', '.join(UPGRADE_UNITS)}"
                         f", got {unit!r}" if "upgrade_unit" in hc else
                         "hold_and_cash.upgrade_unit is missing: say what one UPGRADE adds, "
                         f"{' or '.join(UPGRADE_UNITS)}")
    prizes = hc.get("prize_names", PRIZES_JACKPOT)
    if prizes not in PRIZE_NAMES:
        raise ModelError(f"hold_and_cash.prize_names must be one of {', '.join(PRIZE_NAMES)}, "
                         f"got {prizes!r}")
    seed: Any = 0
    rule: Any = ONE_SHARE_PER_SPIN
    rate = Fraction(0)
    if prog is not None:  # without one, nothing flows into a pool and no strip shows €€€
        seed = prog.get("seed_cents")
        if type(seed) is not int or seed < 0:
            raise ModelError(f"progressive.seed_cents must be a non-negative integer, got "
                             f"{seed!r}")
        rule = prog.get("jackpot_rule", EACH_LINE_FROM_THE_REST)
        if rule not in JACKPOT_RULES:
            raise ModelError(f"progressive.jackpot_rule must be one of "
                             f"{', '.join(JACKPOT_RULES)}, got {rule!r}")
        rate = _rate(prog.get("contribution_rate"))
    line_bets = _line_bets(data.get("line_bets", list(BET_CLASSES)))
    cap = data.get("max_win_x")
    if cap is not None and (type(cap) is not int or cap < MIN_CAP_X):
        raise ModelError(f"max_win_x must be null or a whole number >= {MIN_CAP_X} (total bets),"
                         f" got {cap!r}")
    scope = data.get("max_win_scope", MAX_WIN_GAME if archived else MAX_WIN_ROUND)
    if scope not in MAX_WIN_SCOPES:
        raise ModelError(f"max_win_scope must be one of {', '.join(MAX_WIN_SCOPES)} (what the "
                         f"max-win cap holds), got {scope!r}")
    base = _strips(reels.get("base"), "reels.base", coins=True)
    star_wild = _strips(reels.get("star_wild"), "reels.star_wild", coins=False)
    if prog is None and any(JACKPOT in strip for strip in (*base, *star_wild)):
        raise ModelError("a model without progressive (progressive: null) must not place "
                         "JACKPOT on any strip")
    return MathModel(
        has_progressive=prog is not None,
        line_bets=line_bets,
        max_win_x=cap,
        max_win_scope=str(scope),
        jackpot_rule=rule,
        name=name,
        version=str(data.get("version", "1")),
        description=str(data.get("description", "")),
        base_reels=base,
        star_wild_reels=star_wild,
        hold_and_cash=HoldAndCashModel(
            cell_weights=cell_weights,
            coin_values=_weights(hc.get("coin_values"), value_keys, "hold_and_cash.coin_values"),
            cash_values=_weights(hc.get("cash_values"), value_keys, "hold_and_cash.cash_values"),
            upgrade_unit=str(unit),
            prize_names=str(prizes),
        ),
        contribution_rate=rate,
        seed_cents=Cents(seed),
    )


ARCHIVE = "archive"
"""Folder of ``starfever/models`` holding earlier versions, ``<name>-<version>.json``: a stored
round names its model and version, and must replay under exactly that model."""


def shipped_models() -> list[str]:
    """Names of the models shipped in the package."""
    folder = resources.files("starfever") / "models"
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".json"))


def load_model(name_or_path: str = "default") -> MathModel:
    """Load a shipped model by name, or a model file by path."""
    path = Path(name_or_path)
    if path.suffix == ".json" or path.exists():
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as error:
            raise ModelError(f"cannot read model file {name_or_path!r}: {error.strerror}") from None
        except UnicodeDecodeError:
            raise ModelError(f"model file {name_or_path!r} is not UTF-8 text") from None
    else:
        if name_or_path not in shipped_models():
            raise ModelError(f"unknown model {name_or_path!r}; shipped models: "
                             f"{', '.join(shipped_models())}, or give a path to a .json file")
        text = (resources.files("starfever") / "models" / f"{name_or_path}.json").read_text(
            encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ModelError(f"model {name_or_path!r} is not valid JSON: {error}") from None
    return model_from_dict(data)


def load_model_version(name: str, version: str) -> MathModel | None:
    """The shipped model ``name`` at ``version``: the current file, or an archived earlier
    version; ``None`` if neither exists."""
    try:
        current = load_model(name) if name in shipped_models() else None
    except ModelError:
        current = None
    if current is not None and current.version == version:
        return current
    folder = resources.files("starfever") / "models" / ARCHIVE
    archived = folder / f"{name}-{version}.json"
    if not archived.is_file():
        return None
    try:
        model = model_from_dict(json.loads(archived.read_text(encoding="utf-8")), archived=True)
    except (json.JSONDecodeError, ModelError):
        return None
    return model if (model.name, model.version) == (name, version) else None
