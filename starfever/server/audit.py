"""The audit: re-derive every stored round from its draws and check that the books balance.

Checked, in one read transaction:
- the hash chain: ids 1..n without gaps (the walk starts at the lowest id stored), each
  ``prev_hash`` the hash of the round before, each ``hash`` recomputed over the frozen field
  order (``services.chain``);
- every round replayed with ``engine.replay_round`` from its draws at its recorded
  ``pool_before``: wins, feature, pool after, refill and the event log must match;
- the money of each round: balance after = before - bet + win; its ledger entries sum to zero
  and its wallet entries to win - bet; the pool runs continuously from its seed, with each
  contribution re-derived (rate and carried fraction);
- every wallet equals the sum of its ledger entries; the pool equals its entries and meters;
  all entries of all books sum to zero;
- against insiders (:mod:`starfever.server.audit_chains`): hashes keyed under the audit key
  from the boundary on, the boundary's seal over the ledger before it, the heads' MACs, every
  ledger entry (whatever its id) explained by its round, its cashier booking or the pool's
  seed, the cashier chain, every player's balance continuity, the deposit limits, and any
  signed statements of the chain heads given.
- operator mode (no wallet rows: the player's side of a round is the ``operator`` book): each
  such round was played on an acknowledged debit of its total bet, and has exactly one credit
  recorded, of its total win with its €€€ part (``wallet_calls``);
- free rounds (ADR 0064): each on a grant of its player at its bet, paid at most its win;
  each grant's rounds, winnings and withheld winnings its rounds' sums, within its cap;
- each deposit or withdrawal booked under an ``Idempotency-Key`` against the wallet entry it
  names (``services.cashier.audit_problems``).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from starfever.engine import money
from starfever.engine.model import MathModel, load_model_version
from starfever.engine.rng import ReplayError
from starfever.engine.round import replay_round
from starfever.engine.symbols import Cents
from starfever.server import audit_chains
from starfever.server.books import EUR, FREE_ROUND_KINDS, pool_book
from starfever.server.db import Database
from starfever.server.models import (
    OPERATOR_BOOK,
    WALLET,
    ChainHead,
    FreeRoundGrant,
    JackpotPool,
    LedgerEntry,
    Round,
    Wallet,
    WalletCall,
    WinSettlement,
)
from starfever.server.services import cashier, ledger
from starfever.server.services.chain import GENESIS_HASH, canonical_json, round_hash
from starfever.server.services.free_round_rules import split_paid
from starfever.server.settings import Settings
from starfever.server.spin.calls import CallKind, CallState
from starfever.server.spin.rule import book_round
from starfever.server.spin.sql import CHAIN_ID

BATCH = 1000
REPLAYED = ("base_win", "star_wild_win", "hold_and_cash_win", "progressive_win", "total_win",
            "feature", "pool_after", "pool_refill", "total_bet")


@dataclass
class AuditReport:
    """What the audit checked and what did not match."""

    rounds_checked: int = 0
    wallets_checked: int = 0
    entries_checked: int = 0
    entries_explained: int = 0
    """Ledger entries of every book, each checked for its round, cashier booking or seed."""
    statements_checked: int = 0
    operator_rounds_checked: int = 0
    """Operator mode: rounds checked against the operator wallet's calls."""
    grants_checked: int = 0
    """Free-round grants checked against their rounds."""
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No mismatch at all."""
        return not self.problems

    def summary(self) -> str:
        """One line for people."""
        verdict = "OK" if self.ok else "FAILED"
        statements = (f", {self.statements_checked} signed statements"
                      if self.statements_checked else "")
        operator = (f", {self.operator_rounds_checked} operator rounds checked against the "
                    "wallet calls" if self.operator_rounds_checked else "")
        return (f"audit {verdict}: {self.rounds_checked} rounds replayed and chained, "
                f"{self.wallets_checked} wallets checked against the ledger, "
                f"{self.entries_checked} wallet entries checked for continuity, "
                f"{self.entries_explained} ledger entries checked for what explains them"
                f"{operator}{statements}, {len(self.problems)} mismatches")


class _Models:
    def __init__(self, extra: Sequence[MathModel] = ()) -> None:
        # models from files (a tuned model served by path): found by name and version first
        self._cache: dict[tuple[str, str], MathModel | None] = {
            (m.name, m.version): m for m in extra}

    def get(self, name: str, version: str) -> MathModel | None:
        key = (name, version)
        if key not in self._cache:
            # the current file or an archived earlier version: a round replays under the
            # model (and so the €€€ rule) it was played by
            self._cache[key] = load_model_version(name, version)
        return self._cache[key]


def _rounds(session: Session) -> Iterator[Round]:
    """Every stored round in id order, from the lowest id there is (0 and below too)."""
    last: int | None = None
    while True:
        query = select(Round).order_by(Round.id).limit(BATCH)
        if last is not None:
            query = query.where(Round.id > last)
        batch = list(session.scalars(query))
        if not batch:
            return
        yield from batch
        last = batch[-1].id
        session.expunge_all()


def _round_books(session: Session) -> dict[int, dict[str, int]]:
    books: dict[int, dict[str, int]] = defaultdict(dict)
    query = (select(LedgerEntry.round_id, LedgerEntry.book, func.sum(LedgerEntry.amount))
             .where(LedgerEntry.round_id.is_not(None))
             .group_by(LedgerEntry.round_id, LedgerEntry.book))
    for round_id, book, total in session.execute(query):
        books[int(round_id or 0)][book] = int(total)
    return books


def _check_round(r: Round, model: MathModel, report: AuditReport) -> None:
    where = f"round {r.id}"
    try:
        replayed = replay_round(model, r.line_bet, json.loads(r.draws), pool=r.pool_before)
    except (ReplayError, ValueError) as error:
        report.problems.append(f"{where}: does not replay from its draws: {error}")
        return
    for name in REPLAYED:
        stored, derived = getattr(r, name), getattr(replayed, name)
        if stored != derived:
            report.problems.append(f"{where}: {name} is {stored!r}, replay gives {derived!r}")
    if r.events != canonical_json(list(replayed.events)):
        report.problems.append(f"{where}: the event log differs from the replay")
    if r.balance_after != r.balance_before - r.staked + r.paid:
        report.problems.append(f"{where}: balance {r.balance_before} - {r.staked} + "
                               f"{r.paid} != {r.balance_after}")
    if r.paid_win is not None and not 0 <= r.paid_win <= r.total_win:
        report.problems.append(f"{where}: a free round paid {r.paid_win} of a win of "
                               f"{r.total_win}")


def run_audit(db: Database, settings: Settings | None = None,
              statements: Sequence[tuple[str, dict[str, Any]]] = (),
              models_from_files: Sequence[MathModel] = ()) -> AuditReport:
    """Audit the whole database; see the module docstring. ``settings`` give the audit key
    and the default deposit limits; ``statements`` are (name, signed statement) pairs;
    ``models_from_files`` are models not shipped with the package (a tuned model a server
    played from a file), for the rounds played by them."""
    settings = settings or Settings()
    key = settings.chain_key()
    report = AuditReport()
    models = _Models(models_from_files)
    with db.read() as session:
        rounds_from, ledger_from = audit_chains.keyed_from(session, key, report.problems)
        wallet_books = audit_chains.Books(key, ledger_from, report.problems)
        wallet_books.walk(session)
        report.entries_checked = wallet_books.entries
        report.entries_explained = wallet_books.all_entries
        wallet_books.check_head(session)
        wallet_books.check_deposit_limits(session, settings)
        pool_rows = {row.currency: row for row in session.scalars(select(JackpotPool))}
        wallet_books.check_explained({c: row.seed for c, row in pool_rows.items()})
        wallet_currency: dict[int, str] = {
            aid: code for aid, code in session.execute(select(Wallet.account_id,
                                                              Wallet.currency))}
        books = _round_books(session)
        # each currency's pool runs from its seed through its own rounds only (ADR 0076)
        pools = {c: row.seed for c, row in pool_rows.items()}
        carries: dict[str, Fraction] = defaultdict(Fraction)
        prev_id, prev_hash = 0, GENESIS_HASH
        operator_rounds: dict[int, tuple[int, int, int]] = {}
        free_rounds: dict[int, list[Round]] = defaultdict(list)
        unbooked_free: set[int] = set()
        for r in _rounds(session):
            report.rounds_checked += 1
            where = f"round {r.id}"
            if r.id != prev_id + 1:
                report.problems.append(f"{where}: follows round {prev_id} (gap in the chain)")
            if r.prev_hash != prev_hash:
                report.problems.append(f"{where}: prev_hash does not match round {prev_id}")
            audit_chains.check_scheme(r, rounds_from, report.problems)
            if r.hash != round_hash(r, key):
                report.problems.append(f"{where}: stored hash does not match its fields")
            wallet_books.check_round_balance(r)
            model = models.get(r.model_name, r.model_version)
            if model is None:
                report.problems.append(f"{where}: model {r.model_name} {r.model_version} "
                                       "is not available to replay it (a model file not "
                                       "shipped: give it with --model PATH)")
            else:
                if r.model_sha256 is not None and r.model_sha256 != model.sha256:
                    report.problems.append(f"{where}: model_sha256 {r.model_sha256[:16]}... is "
                                           f"not that of {model.name} {model.version}")
                _check_round(r, model, report)
                contribution, carries[r.currency] = money.progressive_contribution(
                    Cents(r.total_bet), model.contribution_rate, carries[r.currency])
                if contribution != r.contribution:
                    report.problems.append(f"{where}: contribution {r.contribution} != "
                                           f"{contribution} re-derived")
            pool = pools.get(r.currency, 0)
            if r.pool_before != pool + r.contribution:
                report.problems.append(f"{where}: pool_before {r.pool_before} != {r.currency} "
                                       f"pool {pool} + contribution {r.contribution}")
            pools[r.currency] = r.pool_after
            round_books = books.pop(r.id, {})
            if sum(round_books.values()) != 0:
                report.problems.append(f"{where}: its ledger entries do not sum to zero")
            side = OPERATOR_BOOK if OPERATOR_BOOK in round_books else WALLET
            if r.grant_id is not None:
                free_rounds[r.grant_id].append(r)
            if r.grant_id is not None and r.paid == 0 and WALLET not in round_books:
                unbooked_free.add(r.id)  # a free round that paid nothing: either mode
            if side == OPERATOR_BOOK:
                operator_rounds[r.id] = r.staked, r.paid, r.progressive_win if \
                    r.paid_win is None else split_paid(r.total_win - r.progressive_win,
                                                       r.paid_win).jackpot
            if WALLET in round_books and wallet_currency.get(r.account_id) != r.currency:
                report.problems.append(f"{where}: a {r.currency} round on a "
                                       f"{wallet_currency.get(r.account_id)} wallet")
            if WALLET in round_books and OPERATOR_BOOK in round_books:
                report.problems.append(f"{where}: booked on both the wallet and the operator")
            if round_books.get(side, 0) != r.paid - r.staked:
                report.problems.append(f"{where}: {side} entries {round_books.get(side, 0)}"
                                       f" != win - bet {r.paid - r.staked}")
            expected: list[dict[str, Any]] = []
            book_round(expected, r, side)
            if not wallet_books.check_round_entries(r, expected):
                report.problems.append(f"{where}: its ledger entries are not the ones it "
                                       "books (an entry added, changed or removed)")
            prev_id, prev_hash = r.id, r.hash
        for orphan in sorted(books):
            report.problems.append(f"ledger entries name round {orphan}, which is not stored")
        audit_chains.check_head_mac(session, key, CHAIN_ID, report.problems)
        head = session.get(ChainHead, CHAIN_ID)
        stored_head = (head.last_round_id, head.last_hash) if head else (0, GENESIS_HASH)
        if stored_head != (prev_id, prev_hash):  # a head deleted is a head at genesis
            report.problems.append(f"chain head names round {stored_head[0]}, the last "
                                   f"stored round is {prev_id}")
        _check_books(session, report, pool_rows, pools, carries)
        _check_operator_calls(session, report, operator_rounds, unbooked_free)
        _check_grants(session, report, free_rounds)
        report.problems.extend(cashier.audit_problems(session))
        for name, statement in statements:
            audit_chains.check_statement(session, key, statement, report.problems, name)
            report.statements_checked += 1
    return report


def _check_operator_calls(session: Session, report: AuditReport,
                          operator_rounds: dict[int, tuple[int, int, int]],
                          unbooked_free: set[int]) -> None:
    """Operator mode: the ``operator`` book of each round against the wallet calls; a round
    whose credit the operator refused is a finding (its win is unpaid, OPERATOR-WALLET.md
    rule 5), so the audit fails until it is paid or settled manually (proposed by one operator,
    approved by another: ADR 0061); a settlement that does not match its refused credit, or
    that settles a credit not refused, is a finding too. A free round that paid nothing books
    nothing on the player's side in either mode; its credit (of 0, on a debit of 0) names it
    as an operator round."""
    debits = {row.transaction_id: row for row in session.scalars(
        select(WalletCall).where(WalletCall.kind == CallKind.DEBIT))}
    credits: dict[int, list[WalletCall]] = defaultdict(list)
    for row in session.scalars(select(WalletCall).where(WalletCall.kind == CallKind.CREDIT)):
        credits[int(row.round_id or 0)].append(row)
    for round_id in unbooked_free & credits.keys():
        operator_rounds.setdefault(round_id, (0, 0, 0))
    settled = {s.round_id: s for s in session.scalars(
        select(WinSettlement).where(WinSettlement.status == "approved"))}
    for round_id, (bet, win, jackpot_win) in sorted(operator_rounds.items()):
        report.operator_rounds_checked += 1
        where = f"round {round_id}"
        found = credits.pop(round_id, [])
        if len(found) != 1:
            report.problems.append(f"{where}: {len(found)} credits recorded, not one")
            continue
        credit = found[0]
        if (credit.amount, credit.jackpot_amount) != (win, jackpot_win):
            report.problems.append(f"{where}: credit of {credit.amount} (€€€ "
                                   f"{credit.jackpot_amount}) != win {win} (€€€ {jackpot_win})")
        debit = debits.get(credit.debit_transaction_id or "")
        if debit is None or debit.status != CallState.ACKNOWLEDGED or debit.amount != bet:
            report.problems.append(f"{where}: not played on an acknowledged debit of {bet}")
        settlement = settled.pop(round_id, None)
        if settlement is not None and (
                credit.status != CallState.REFUSED or settlement.approved_by is None
                or settlement.approved_by == settlement.proposed_by
                or (settlement.transaction_id, settlement.amount)
                != (credit.transaction_id, credit.amount)):
            report.problems.append(f"{where}: its manual settlement does not settle its "
                                   f"refused credit {credit.transaction_id} by two operators")
        elif credit.status == CallState.REFUSED and settlement is None:  # rule 5: never paid
            report.problems.append(f"{where}: UNPAID win of {credit.amount} cents: the "
                                   f"operator's wallet refused credit {credit.transaction_id} "
                                   f"({credit.error})")
    for round_id in sorted(credits):
        report.problems.append(f"credit recorded for round {round_id}, which has no operator "
                               "entries")
    for round_id in sorted(settled):
        report.problems.append(f"a manual settlement names round {round_id}, which has no "
                               "operator entries")


def _check_grants(session: Session, report: AuditReport,
                  played: dict[int, list[Round]]) -> None:
    """Free rounds (ADR 0064): each played on a grant of its player at the grant's bet, no
    grant with more rounds played than it gives, and each grant's counters (rounds played,
    winnings paid, winnings withheld above its cap) are its rounds' sums, within its cap."""
    for grant in session.scalars(select(FreeRoundGrant).order_by(FreeRoundGrant.id)):
        report.grants_checked += 1
        rounds = played.pop(grant.id, [])
        where = f"free-round grant {grant.id}"
        paid = sum(r.paid for r in rounds)
        withheld = sum(r.total_win - r.paid for r in rounds)
        if len(rounds) > grant.rounds:
            report.problems.append(f"{where}: {len(rounds)} rounds played, it gives "
                                   f"{grant.rounds}")
        if (grant.rounds_played, grant.winnings, grant.withheld) != (len(rounds), paid,
                                                                     withheld):
            report.problems.append(
                f"{where}: records {grant.rounds_played} rounds, {grant.winnings} paid, "
                f"{grant.withheld} withheld; its rounds are {len(rounds)}, {paid}, {withheld}")
        if grant.max_win is not None and paid > grant.max_win:
            report.problems.append(f"{where}: paid {paid} over its cap of {grant.max_win}")
        for r in rounds:
            if (r.account_id, r.line_bet) != (grant.account_id, grant.line_bet):
                report.problems.append(f"round {r.id}: a free round of account {r.account_id} "
                                       f"at {r.line_bet} on {where} (account "
                                       f"{grant.account_id} at {grant.line_bet})")
    for grant_id in sorted(played):
        report.problems.append(f"free rounds {[r.id for r in played[grant_id]]} name grant "
                               f"{grant_id}, which is not stored")


def _check_books(session: Session, report: AuditReport, pool_rows: dict[str, JackpotPool],
                 pools: dict[str, int], carries: dict[str, Fraction]) -> None:
    sums: dict[int, int] = {
        int(account_id or 0): int(total or 0) for account_id, total in session.execute(
            select(LedgerEntry.account_id, func.sum(LedgerEntry.amount))
            .where(LedgerEntry.book == WALLET).group_by(LedgerEntry.account_id))}
    for account_id, balance in session.execute(select(Wallet.account_id, Wallet.balance)):
        report.wallets_checked += 1
        entries = sums.pop(account_id, 0)
        if balance != entries:
            report.problems.append(f"wallet of account {account_id}: balance {balance} != "
                                   f"ledger sum {entries}")
    for account_id in sums:
        report.problems.append(f"wallet entries of account {account_id}, which has no wallet")
    for currency in sorted(set(pools) - set(pool_rows)):
        report.problems.append(f"rounds in {currency}, which has no pool row")
    for currency, pool_row in pool_rows.items():
        pool, carry = pools[currency], carries[currency]
        name = "pool" if currency == EUR else f"{currency} pool"
        pool_entries = int(session.scalar(
            select(func.coalesce(func.sum(LedgerEntry.amount), 0))
            .where(LedgerEntry.book == pool_book(currency))) or 0)
        if pool_row.amount != pool:
            report.problems.append(f"{name} is {pool_row.amount}, the rounds leave {pool}")
        if pool_row.amount != pool_entries:
            report.problems.append(f"{name} is {pool_row.amount}, its entries sum to "
                                   f"{pool_entries}")
        if pool_row.amount != pool_row.contributions - pool_row.wins + pool_row.refills:
            report.problems.append(f"{name} meters: contributions - wins + refills != pool")
        if Fraction(pool_row.carry) != carry:
            report.problems.append(f"{name} carry {pool_row.carry} != {carry} re-derived")
    total = int(session.scalar(select(func.coalesce(func.sum(LedgerEntry.amount), 0))) or 0)
    if total != 0:
        report.problems.append(f"all ledger entries sum to {total}, not zero")
    kinds = set(session.scalars(select(LedgerEntry.kind).distinct()))
    known = {*FREE_ROUND_KINDS, ledger.DEPOSIT, ledger.WITHDRAWAL, ledger.BET, ledger.WIN,
             ledger.JACKPOT_WIN,
             ledger.CONTRIBUTION, ledger.REFILL, ledger.SEED}
    for kind in sorted(kinds - known):
        report.problems.append(f"ledger entries of unknown kind {kind!r}")
