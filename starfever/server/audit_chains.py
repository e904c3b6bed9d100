"""The audit's checks against insiders (issue 13, ADR 0011), beside the replay of
:mod:`starfever.server.audit`:

- the keyed boundary's MAC, over the ledger entries stored before it too, and every round on
  the right side of it (no keyed round passed off as an old unkeyed one);
- the chain heads' MACs: neither chain's end can be cut off without the key (ADR 0048);
- every ledger entry, of every book and whatever its id (0 and below, gaps, rows inserted
  out of order: the walk starts at the lowest id there is), is explained: a round's entries
  are exactly those the round books (``rule.book_round``, compared per round), a deposit's or
  withdrawal's wallet entry is in the cashier chain (an id of 0 or below is never an old,
  unchained one) and has its cashier entry, a pool seed is the pool's; nothing else may be;
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

import hashlib
import hmac
from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from starfever.server.books import house_book, pool_book
from starfever.server.models import (
    CASHIER,
    HOUSE,
    POOL,
    WALLET,
    ChainHead,
    DepositLimit,
    LedgerEntry,
    Round,
)
from starfever.server.services import ledger
from starfever.server.services.anchor import legacy_entries
from starfever.server.services.chain import (
    CASHIER_CHAIN_ID,
    FREE_ROUND,
    GENESIS_HASH,
    IDENTIFIED,
    KEYED,
    STATEMENT_VERSION,
    UNKEYED,
    boundary_mac,
    canonical_json,
    cashier_hash,
    head_sealed,
    legacy_digest,
    sealed_boundary_mac,
    sign_statement,
)
from starfever.server.settings import Settings
from starfever.server.spin.sql import CHAIN_ID

WEEK = timedelta(days=7)
CASHIER_KINDS = (ledger.DEPOSIT, ledger.WITHDRAWAL)
PAGE = 5000
_MOD = 1 << 128


def print_key(key: bytes) -> bytes:
    """The key of :func:`entry_print`, derived from the audit key."""
    return hashlib.sha256(b"starfever-entry-print\n" + key).digest()


def entry_print(key: bytes, book: str, kind: str, account_id: int | None, amount: int,
                balance_after: int | None) -> int:
    """One ledger entry as a number, for a round's entries compared as a multiset: the sum
    (mod 2**128) of their prints is the same whatever their order or ids. Keyed BLAKE2b
    (``key`` from :func:`print_key`): without the key nobody can search for a set of made-up
    entries whose prints add up to what a round's should (a generalised birthday search
    would make that cheap on an unkeyed sum)."""
    text = canonical_json([book, kind, account_id, amount, balance_after])
    return int.from_bytes(hashlib.blake2b(text.encode("ascii"), digest_size=16,
                                          key=key).digest(), "big")


def round_print(key: bytes, entries: Sequence[Mapping[str, Any]]) -> int:
    """The print of a round's entries as ``rule.book_round`` makes them."""
    return sum(entry_print(key, e["book"], e["kind"], e["account_id"], e["amount"],
                           e["balance_after"]) for e in entries) % _MOD


def check_head_mac(session: Session, key: bytes, chain_id: int, problems: list[str]) -> None:
    """A chain head's MAC (ADR 0048): a head moved outside the server, its chain's end cut
    off with it, does not match."""
    head = session.get(ChainHead, chain_id)
    if head is None:
        return
    if not head_sealed(key, chain_id, head.last_round_id, head.last_hash, head.head_mac):
        what = "has no MAC" if head.head_mac is None else "does not match its MAC"
        problems.append(f"chain head {chain_id} (entry {head.last_round_id}) {what}: moved "
                        "outside the server (the chain's end cut off?)")


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
    legacy = legacy_digest(legacy_entries(session, head.ledger_keyed_from))
    expected = sealed_boundary_mac(key, head.keyed_from, head.ledger_keyed_from, legacy)
    if hmac.compare_digest(expected, head.keyed_mac):
        return head.keyed_from, head.ledger_keyed_from
    if hmac.compare_digest(boundary_mac(key, head.keyed_from, head.ledger_keyed_from),
                           head.keyed_mac):
        problems.append("the ledger before the keyed boundary is not sealed yet (a database "
                        "from before migration 0016: start a server once with this version)")
        return head.keyed_from, head.ledger_keyed_from
    problems.append("the chain's keyed boundary does not match its MAC (moved, or a ledger "
                    "entry before it added, changed or removed, without the key?)")
    return 1, 1


def check_scheme(r: Round, rounds_from: int, problems: list[str]) -> None:
    """A round before the boundary is unkeyed (scheme 1), from it on keyed (scheme 2, or 3
    with the build and model hashes, migration 0012)."""
    want = (UNKEYED,) if r.id < rounds_from else (KEYED, IDENTIFIED, FREE_ROUND)
    if r.hash_scheme not in want:
        problems.append(f"round {r.id}: hash scheme {r.hash_scheme}, expected "
                        f"{' or '.join(map(str, want))} (keyed from round {rounds_from})")
    if r.hash_scheme in (IDENTIFIED, FREE_ROUND) and not (r.build_sha256 and r.model_sha256):
        problems.append(f"round {r.id}: scheme {r.hash_scheme} without its build or model hash")
    if (r.hash_scheme == FREE_ROUND) != (r.grant_id is not None and r.paid_win is not None):
        problems.append(f"round {r.id}: a free round's grant and paid win are chained under "
                        f"scheme 4 only, and scheme 4 only with them (scheme {r.hash_scheme})")


class Books:
    """Walks every ledger entry once, in id order from the lowest: what explains it, and for
    the wallets the cashier chain, continuity and deposits."""

    def __init__(self, key: bytes, ledger_from: int, problems: list[str]) -> None:
        self.key = key
        self.print_key = print_key(key)
        self.ledger_from = ledger_from
        self.problems = problems
        self.balances: dict[int, int] = defaultdict(int)
        self.deposits: dict[int, list[tuple[datetime, int]]] = defaultdict(list)
        self.bet_balance: dict[int, int] = {}
        """Round id -> the balance its bet entry left (balance_before - total_bet)."""
        self.round_prints: dict[int, int] = defaultdict(int)
        """Round id -> the print of its stored entries (:func:`entry_print`)."""
        self.cashier_pairs: dict[tuple[str, int, datetime], tuple[list[int], list[int]]] = \
            defaultdict(lambda: ([], []))
        """A deposit's or withdrawal's (kind, wallet amount, time) -> the ids of its wallet
        entries and of its cashier entries (one of each a booking)."""
        self.seeds: dict[str, list[int]] = defaultdict(list)
        self.cashier_prev = GENESIS_HASH
        self.cashier_last = 0
        self.entries = 0
        """Wallet entries walked."""
        self.all_entries = 0

    def walk(self, session: Session) -> None:
        """Every entry there is, in id order: the first page has no lower bound, so ids of 0
        and below are read too; each next page starts after the last id read."""
        last: int | None = None
        while True:
            query = select(LedgerEntry).order_by(LedgerEntry.id).limit(PAGE)
            if last is not None:
                query = query.where(LedgerEntry.id > last)
            batch = list(session.scalars(query))
            if not batch:
                return
            for entry in batch:
                self._explain(entry)
                if entry.book == WALLET:
                    self._entry(entry)
            last = batch[-1].id
            session.expunge_all()

    def _explain(self, e: LedgerEntry) -> None:
        """What explains the entry: its round, its cashier booking or the pool's seed."""
        self.all_entries += 1
        if e.round_id is not None:
            self.round_prints[e.round_id] = (self.round_prints[e.round_id] + entry_print(
                self.print_key, e.book, e.kind, e.account_id, e.amount, e.balance_after)) % _MOD
        elif e.kind in CASHIER_KINDS and e.book == WALLET:
            self.cashier_pairs[(e.kind, e.amount, e.created_at)][0].append(e.id)
        elif e.kind in CASHIER_KINDS and e.book == CASHIER and e.account_id is None:
            self.cashier_pairs[(e.kind, -e.amount, e.created_at)][1].append(e.id)
        elif (e.kind == ledger.SEED and e.book.partition(":")[0] in (POOL, HOUSE)
              and e.account_id is None):
            self.seeds[e.book].append(e.amount)
        else:
            self.problems.append(f"ledger entry {e.id}: a {e.book} {e.kind} of {e.amount} "
                                 "cents that no round or cashier booking explains")

    def check_explained(self, seeds: Mapping[str, int]) -> None:
        """After the walk: each deposit's and withdrawal's wallet entry has its cashier entry
        and the other way round, and the seed entries are the pools' seeds (``seeds``: by
        currency, each on its currency's pool and house books)."""
        for (kind, amount, when), (wallet, cashier) in sorted(
                self.cashier_pairs.items(), key=lambda item: min(item[1][0] + item[1][1])):
            if len(wallet) != len(cashier):
                self.problems.append(
                    f"ledger entries {sorted(wallet + cashier)}: {len(wallet)} wallet and "
                    f"{len(cashier)} cashier entries of a {kind} of {abs(amount)} cents at "
                    f"{when.isoformat()}, not one of each a booking")
        want: dict[str, tuple[list[int], int]] = {POOL: ([], 0), HOUSE: ([], 0)}
        for currency, seed in seeds.items():
            want[pool_book(currency)] = [seed] if seed else [], seed
            want[house_book(currency)] = [-seed] if seed else [], seed
        for book in sorted(set(self.seeds) - set(want)):
            want[book] = [], 0
        for book, (amounts, seed) in want.items():
            if sorted(self.seeds.get(book, [])) != amounts:
                self.problems.append(f"{book} seed entries {self.seeds.get(book, [])} are not "
                                     f"the pool's seed of {seed} cents")

    def check_round_entries(self, r: Round, expected: Sequence[Mapping[str, Any]]) -> bool:
        """The round's stored entries are exactly ``expected`` (``rule.book_round``)."""
        return self.round_prints.pop(r.id, 0) == round_print(self.print_key, expected)

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
        if 1 <= e.id < self.ledger_from:
            return  # stored before the cashier chain began (sealed under the boundary)
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
        check_head_mac(session, self.key, CASHIER_CHAIN_ID, self.problems)
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
