"""The books as data: the ledger's books and kinds of entry, and a round's record as a plain
value. No database here (``models`` maps them to tables), so the pure settlement rule
(``spin.rule``) can build rounds and entries without importing SQLAlchemy.

Every movement of money is a set of entries on the books that sums to zero: ``wallet`` (a
player's balance), ``pool`` (the €€€ pool), ``house`` (the operator's game book: bet income,
wins paid, pool funding), ``cashier`` (money entering or leaving the system) and, in operator
mode, ``operator`` (the player's side of a round: the operator's wallet, whose money Star
Fever never holds).

A currency other than EUR has its own ``pool`` and ``house`` books (``pool:GBP``,
``house:GBP``: :func:`pool_book`, :func:`house_book`), so that each sums in one currency; EUR
keeps the books' old names (ADR 0076). A wallet holds one currency, an operator-mode round is
in its session's; the cashier book sums to zero across currencies as each booking does.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

# Ledger books
WALLET = "wallet"
POOL = "pool"
HOUSE = "house"
CASHIER = "cashier"
OPERATOR_BOOK = "operator"

EUR = "EUR"
"""The currency every row named before there were others (the books' old names are its)."""


def pool_book(currency: str) -> str:
    """The ``pool`` book of ``currency``'s €€€ pool."""
    return POOL if currency == EUR else f"{POOL}:{currency}"


def house_book(currency: str) -> str:
    """The ``house`` book of ``currency``."""
    return HOUSE if currency == EUR else f"{HOUSE}:{currency}"


# Entry kinds
DEPOSIT = "deposit"
WITHDRAWAL = "withdrawal"
BET = "bet"
WIN = "win"
JACKPOT_WIN = "jackpot_win"
CONTRIBUTION = "contribution"
REFILL = "refill"
SEED = "seed"
FREE_ROUND_WIN = "free_round_win"
"""A free round's game win paid to the player (from the house)."""
FREE_ROUND_JACKPOT_WIN = "free_round_jackpot_win"
"""A free round's €€€ win paid to the player (from the pool)."""
FREE_ROUND_FUNDING = "free_round_funding"
"""The house's payment of a free round's €€€ contribution: the operator funds it (ADR 0064)."""
FREE_ROUND_WITHHELD = "free_round_withheld"
"""The part of a free round's €€€ win above its grant's cap: the pool pays it to the house,
not to the player (a game win above the cap is simply not paid by the house)."""
FREE_ROUND_KINDS = (FREE_ROUND_WIN, FREE_ROUND_JACKPOT_WIN, FREE_ROUND_FUNDING,
                    FREE_ROUND_WITHHELD)

WALLET_KINDS = (DEPOSIT, BET, WIN, JACKPOT_WIN, WITHDRAWAL, FREE_ROUND_WIN,
                FREE_ROUND_JACKPOT_WIN)


@dataclass(frozen=True, slots=True)
class RoundRow:
    """A round's values (``models.Round``) as a plain record, field for column: what the
    settler builds, stores and answers, and reads back for a retry. Building the ORM object
    instead cost the settlement about 40 % of its CPU (SQLAlchemy's instrumentation of every
    attribute); ``tests/server/spin/test_rule.py`` pins the fields to the table's columns."""

    id: int
    account_id: int
    session_id: int | None
    idempotency_key: str
    request_hash: str
    model_name: str
    model_version: str
    line_bet: int
    total_bet: int
    contribution: int
    base_win: int
    star_wild_win: int
    hold_and_cash_win: int
    progressive_win: int
    total_win: int
    feature: str | None
    pool_before: int
    pool_after: int
    pool_refill: int
    balance_before: int
    balance_after: int
    draws: str
    events: str
    test: bool
    created_at: datetime
    prev_hash: str
    hash: str
    hash_scheme: int
    build_sha256: str | None
    model_sha256: str | None
    grant_id: int | None = None
    """A free round's grant (``None``: a paid round)."""
    paid_win: int | None = None
    """A free round's win as paid (its grant's cap may cut ``total_win``)."""
    currency: str = EUR
    """The round's currency (migration 0027)."""
    market: str | None = None
    """The market profile it was played in (migration 0028; ``None``: not recorded)."""

    @property
    def paid(self) -> int:
        """What the round paid the player: ``total_win``, or a free round's ``paid_win``."""
        return self.total_win if self.paid_win is None else self.paid_win

    @property
    def staked(self) -> int:
        """What the player staked: ``total_bet``, or nothing for a free round."""
        return self.total_bet if self.grant_id is None else 0
