"""The audit's checks against insiders (issue 13, ADR 0011), beside the replay of
:mod:`starfever.server.audit`:

- the keyed boundary's MAC, and every round on the right side of it (no keyed round passed
  off as an old unkeyed one);
- the cashier chain: every deposit and withdrawal from the boundary on is chained under the
  key, and the chain ends at its head;
- every player's balance continuity: each wallet entry's ``balance_after`` is the one before
  plus its amount, from zero, and each round's ``balance_before`` is the balance its bet
  was taken from;
- deposit limits: no rolling 7 days of a player's deposits above the highest limit the player
  can have had (the defaults, the limit on record, a pending increase);
- signed statements of the chain heads (``starfever chain-statement``): the signature holds
  and the chains still contain the heads they name.
"""

from __future__ import annotations

import hmac
from collections import defaultdict
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from starfever.server.models import WALLET, ChainHead, DepositLimit, LedgerEntry, Round
from starfever.server.services import ledger
from starfever.server.services.chain import (
    CASHIER_CHAIN_ID,
    GENESIS_HASH,
    IDENTIFIED,
    KEYED,
    STATEMENT_VERSION,
    UNKEYED,
    boundary_mac,
    cashier_hash,
    sign_statement,
)
from starfever.server.settings import Settings
from starfever.server.spin.sql import CHAIN_ID

WEEK = timedelta(days=7)
CASHIER_KINDS = (ledger.DEPOSIT, ledger.WITHDRAWAL)


def keyed_from(session: Session, key: bytes, problems: list[str]) -> tuple[int, int]:
    """The boundary (first keyed round id, first chained ledger entry id), its MAC checked;
    with no valid boundary every round must be keyed and every cashier entry chained."""
    head = session.get(ChainHead, CHAIN_ID)
    if head is None:
        return 1, 1
    if head.keyed_from is None or head.ledger_keyed_from is None or head.keyed_mac is None:
        if head.last_round_id:
            problems.append("the chain's keyed boundary is missing (every round and cashier "
                            "entry is then checked as keyed)")
        return 1, 1
    expected = boundary_mac(key, head.keyed_from, head.ledger_keyed_from)
    if not hmac.compare_digest(expected, head.keyed_mac):
        problems.append("the chain's keyed boundary does not match its MAC (moved without "
                        "the key?)")
        return 1, 1
    return head.keyed_from, head.ledger_keyed_from


def check_scheme(r: Round, rounds_from: int, problems: list[str]) -> None:
    """A round before the boundary is unkeyed (scheme 1), from it on keyed (scheme 2, or 3
    with the build and model hashes, migration 0012)."""
    want = (UNKEYED,) if r.id < rounds_from else (KEYED, IDENTIFIED)
    if r.hash_scheme not in want:
        problems.append(f"round {r.id}: hash scheme {r.hash_scheme}, expected "
                        f"{' or '.join(map(str, want))} (keyed from round {rounds_from})")
    if r.hash_scheme == IDENTIFIED and not (r.build_sha256 and r.model_sha256):
        problems.append(f"round {r.id}: scheme 3 without its build or model hash")


class Books:
    """Walks every wallet entry once, in id order: cashier chain, continuity, deposits."""

    def __init__(self, key: bytes, ledger_from: int, problems: list[str]) -> None:
        self.key = key
        self.ledger_from = ledger_from
        self.problems = problems
        self.balances: dict[int, int] = defaultdict(int)
        self.deposits: dict[int, list[tuple[datetime, int]]] = defaultdict(list)
        self.bet_balance: dict[int, int] = {}
        """Round id -> the balance its bet entry left (balance_before - total_bet)."""
        self.cashier_prev = GENESIS_HASH
        self.cashier_last = 0
        self.entries = 0

    def walk(self, session: Session) -> None:
        last = 0
        while True:
            batch = list(session.scalars(
                select(LedgerEntry).where(LedgerEntry.book == WALLET, LedgerEntry.id > last)
                .order_by(LedgerEntry.id).limit(5000)))
            if not batch:
                return
            for entry in batch:
                self._entry(entry)
            last = batch[-1].id
            session.expunge_all()

    def _entry(self, e: LedgerEntry) -> None:
        self.entries += 1
        aid = int(e.account_id or 0)
        running = self.balances[aid] + e.amount
        if e.balance_after != running:
            self.problems.append(f"ledger entry {e.id} of account {aid}: balance_after "
                                 f"{e.balance_after} != {self.balances[aid]} + {e.amount}")
        self.balances[aid] = e.balance_after if e.balance_after is not None else running
        if e.kind == ledger.BET and e.round_id is not None:
            self.bet_balance[e.round_id] = int(e.balance_after or 0)
        if e.kind == ledger.DEPOSIT:
            self.deposits[aid].append((e.created_at, e.amount))
        if e.kind in CASHIER_KINDS:
            self._cashier(e)

    def _cashier(self, e: LedgerEntry) -> None:
        if e.id < self.ledger_from:
            return  # stored before the cashier chain began
        if e.chain_hash is None:
            self.problems.append(f"ledger entry {e.id}: a {e.kind} of {e.amount} cents that is "
                                 "not in the cashier chain")
            return
        if e.chain_prev != self.cashier_prev:
            self.problems.append(f"ledger entry {e.id}: the cashier chain's link is broken")
        if not hmac.compare_digest(cashier_hash(e, self.key), e.chain_hash):
            self.problems.append(f"ledger entry {e.id}: its cashier hash does not match its "
                                 "fields")
        self.cashier_prev, self.cashier_last = e.chain_hash, e.id

    def check_head(self, session: Session) -> None:
        head = session.get(ChainHead, CASHIER_CHAIN_ID)
        stored = (head.last_round_id, head.last_hash) if head else (0, GENESIS_HASH)
        if stored != (self.cashier_last, self.cashier_prev):
            self.problems.append(f"cashier chain head names entry {stored[0]}, the chain ends "
                                 f"at entry {self.cashier_last}")

    def check_round_balance(self, r: Round) -> None:
        taken = self.bet_balance.get(r.id)
        if taken is not None and taken != r.balance_before - r.total_bet:
            self.problems.append(f"round {r.id}: balance_before {r.balance_before} is not the "
                                 f"balance its bet was taken from ({taken + r.total_bet})")

    def check_deposit_limits(self, session: Session, settings: Settings) -> int:
        """Rolling 7-day deposit sums against the highest limit each player can have had;
        returns the number of players checked."""
        stored: dict[int, int] = {}
        for row in session.scalars(select(DepositLimit)):
            stored[row.account_id] = max(row.amount, row.pending_amount or 0)
        default = max(settings.weekly_deposit_limit, settings.young_weekly_deposit_limit)
        for aid, deposits in sorted(self.deposits.items()):
            most = max(default, stored.get(aid, 0))
            deposits.sort()
            start, total = 0, 0
            for when, amount in deposits:
                total += amount
                while deposits[start][0] <= when - WEEK:
                    total -= deposits[start][1]
                    start += 1
                if total > most:
                    self.problems.append(f"account {aid}: {total} cents deposited in the 7 "
                                         f"days to {when.isoformat()}, over any limit it had "
                                         f"({most} cents)")
                    break
        return len(self.deposits)


def check_statement(session: Session, key: bytes, statement: dict[str, Any],
                    problems: list[str], name: str) -> None:
    """A signed statement of the chain heads: its signature, and that the chains still hold
    the round and the cashier entry it names, with those hashes."""
    body = {k: v for k, v in statement.items() if k != "signature"}
    signature = statement.get("signature")
    if body.get("version") != STATEMENT_VERSION or not isinstance(signature, str) or \
            not hmac.compare_digest(sign_statement(key, body), signature):
        problems.append(f"statement {name}: the signature does not verify under the key")
        return
    rounds, cashier = body.get("rounds") or {}, body.get("cashier") or {}
    round_id, round_hash = int(rounds.get("last_id", 0)), rounds.get("last_hash")
    if round_id:
        stored = session.get(Round, round_id)
        if stored is None or stored.hash != round_hash:
            problems.append(f"statement {name}: round {round_id} with the published hash is "
                            "no longer in the chain")
    entry_id, entry_hash = int(cashier.get("last_id", 0)), cashier.get("last_hash")
    if entry_id:
        entry = session.get(LedgerEntry, entry_id)
        if entry is None or entry.chain_hash != entry_hash:
            problems.append(f"statement {name}: cashier entry {entry_id} with the published "
                            "hash is no longer in the chain")
