"""The books as data: the ledger's books and kinds of entry, and a round's record as a plain
value. No database here (``models`` maps them to tables), so the pure settlement rule
(``spin.rule``) can build rounds and entries without importing SQLAlchemy.

Every movement of money is a set of entries on the books that sums to zero: ``wallet`` (a
player's balance), ``pool`` (the €€€ pool), ``house`` (the operator's game book: bet income,
wins paid, pool funding), ``cashier`` (money entering or leaving the system) and, in operator
mode, ``operator`` (the player's side of a round: the operator's wallet, whose money Star
Fever never holds).
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

# Entry kinds
DEPOSIT = "deposit"
WITHDRAWAL = "withdrawal"
BET = "bet"
WIN = "win"
JACKPOT_WIN = "jackpot_win"
CONTRIBUTION = "contribution"
REFILL = "refill"
SEED = "seed"

WALLET_KINDS = (DEPOSIT, BET, WIN, JACKPOT_WIN, WITHDRAWAL)


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
