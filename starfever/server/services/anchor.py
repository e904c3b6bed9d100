"""Where the keyed chains begin, the cashier chain itself, and signed statements of the chain
heads (ADR 0011).

- :func:`ensure_boundary` (at every server start): the first start with this version fixes
  the boundary from which rounds and cashier entries are keyed, and stores it with a MAC that
  also seals every ledger entry stored before it; it seals the chain heads too (ADR 0048). A
  database whose boundary has the MAC of before migration 0016 is sealed so at its first
  start with this version.
- :func:`chain_cashier_entry`: a deposit's or withdrawal's wallet entry joins the cashier
  chain, in the cashier's transaction, under the cashier head's row lock, after the head's
  MAC was checked (a head moved outside the server is never extended: ``chain_tampered``).
- :func:`statement`: the heads of both chains, signed with the key: publish or timestamp it
  elsewhere; a later ``starfever audit --statement FILE`` checks the chains still hold it, so
  even an insider with the key cannot rewrite or cut off what was published.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from starfever.server.db import Database
from starfever.server.models import WALLET, ChainHead, LedgerEntry
from starfever.server.services.chain import (
    CASHIER_CHAIN_ID,
    GENESIS_HASH,
    STATEMENT_VERSION,
    boundary_mac,
    cashier_hash,
    head_mac,
    head_sealed,
    instant,
    legacy_digest,
    sealed_boundary_mac,
    sign_statement,
)
from starfever.server.services.errors import Unavailable, utcnow
from starfever.server.spin.sql import CHAIN_ID, lock_chain


def ensure_boundary(db: Database, key: bytes) -> None:
    """Create the chain heads if missing and fix the keyed boundary once (safe to race)."""
    for _ in range(2):  # a concurrent start may create a head first: then look again
        try:
            with db.write() as session:
                head = lock_chain(session)
                session.flush()
                cashier = lock_cashier_head(session)
                session.flush()
                if head.keyed_from is None or head.ledger_keyed_from is None:
                    last_entry = session.scalar(select(func.max(LedgerEntry.id))) or 0
                    _seal(session, key, head, cashier, head.last_round_id + 1,
                          max(last_entry, 0) + 1)
                elif head.keyed_mac == boundary_mac(key, head.keyed_from,
                                                    head.ledger_keyed_from):
                    # the first start after migration 0016
                    _seal(session, key, head, cashier, head.keyed_from, head.ledger_keyed_from)
            return
        except IntegrityError:
            continue


def legacy_entries(session: Session, ledger_keyed_from: int) -> list[LedgerEntry]:
    """The ledger entries stored before the keyed boundary (ids from 1: the databases' ids
    start there, so an id of 0 or below is never an old entry), in id order."""
    return list(session.scalars(select(LedgerEntry).where(
        LedgerEntry.id >= 1, LedgerEntry.id < ledger_keyed_from).order_by(LedgerEntry.id)))


def _seal(session: Session, key: bytes, head: ChainHead, cashier: ChainHead, keyed_from: int,
          ledger_keyed_from: int) -> None:
    """The boundary, its MAC over the entries before it, and each head's MAC where it has
    none (a database from before migration 0016; a fresh one's heads are at genesis)."""
    legacy = legacy_digest(legacy_entries(session, ledger_keyed_from))
    head.keyed_from, head.ledger_keyed_from = keyed_from, ledger_keyed_from
    head.keyed_mac = sealed_boundary_mac(key, keyed_from, ledger_keyed_from, legacy)
    for row in (head, cashier):
        if row.head_mac is None:
            row.head_mac = head_mac(key, row.id, row.last_round_id, row.last_hash)


def check_head(key: bytes, head: ChainHead) -> None:
    """Refuse to extend a chain whose head does not match its MAC (moved outside the
    server): ``503 chain_tampered``, nothing written; the audit says what was changed."""
    if not head_sealed(key, head.id, head.last_round_id, head.last_hash, head.head_mac):
        raise Unavailable(f"chain head {head.id} does not match its MAC: the database was "
                          "changed outside the server; run starfever audit",
                          code="chain_tampered")


def lock_cashier_head(session: Session) -> ChainHead:
    """The cashier chain's head, locked until the transaction ends (created if missing)."""
    head = session.scalar(select(ChainHead).where(ChainHead.id == CASHIER_CHAIN_ID)
                          .with_for_update())
    if head is None:
        head = ChainHead(id=CASHIER_CHAIN_ID, last_round_id=0, last_hash=GENESIS_HASH)
        session.add(head)
    return head


def chain_cashier_entry(session: Session, key: bytes, account_id: int, kind: str) -> None:
    """Chain the wallet entry just booked for a deposit or withdrawal of ``account_id`` (the
    newest of that kind: the caller holds the wallet's lock)."""
    session.flush()
    entry = session.scalar(select(LedgerEntry).where(
        LedgerEntry.book == WALLET, LedgerEntry.account_id == account_id,
        LedgerEntry.kind == kind).order_by(LedgerEntry.id.desc()).limit(1))
    if entry is None:  # a wallet that is not the ledger's keeps no entries here
        return
    head = lock_cashier_head(session)
    check_head(key, head)
    entry.chain_prev = head.last_hash
    entry.chain_hash = cashier_hash(entry, key)
    head.last_round_id, head.last_hash = entry.id, entry.chain_hash
    head.head_mac = head_mac(key, head.id, head.last_round_id, head.last_hash)


def statement(db: Database, key: bytes) -> dict[str, Any]:
    """The signed statement of both chain heads now."""
    with db.read() as session:
        rounds = session.get(ChainHead, CHAIN_ID)
        cashier = session.get(ChainHead, CASHIER_CHAIN_ID)
    body: dict[str, Any] = {
        "version": STATEMENT_VERSION, "issued_at": instant(utcnow()),
        "rounds": {"last_id": rounds.last_round_id if rounds else 0,
                   "last_hash": rounds.last_hash if rounds else GENESIS_HASH,
                   "keyed_from": rounds.keyed_from if rounds else None},
        "cashier": {"last_id": cashier.last_round_id if cashier else 0,
                    "last_hash": cashier.last_hash if cashier else GENESIS_HASH}}
    return {**body, "signature": sign_statement(key, body)}
