"""``starfever reconcile``: operator mode's wallet calls, per round, with both sides' ids.

Every spin in operator mode leaves a debit in ``wallet_calls`` and then either a credit (its
round was played) or a rollback (it was not). The report lists each of them with Star Fever's
transaction id and the operator's, and every spin still **in doubt**: a call not yet
acknowledged (a pending credit: the round is ``pending_credit``; a pending debit or rollback),
a credit or rollback the operator refused, or an acknowledged debit with neither a credit nor a
rollback. A refused debit moved nothing and is not in doubt.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime

from sqlalchemy import select

from starfever.server.db import Database
from starfever.server.models import Account, WalletCall
from starfever.server.spin.calls import CallKind, CallState


@dataclass
class Spin:
    """One spin's calls (by the ``round_id`` the operator was sent)."""

    round_ref: str
    player_id: str
    debit: WalletCall | None = None
    credit: WalletCall | None = None
    rollback: WalletCall | None = None

    @property
    def doubt(self) -> str | None:
        """Why this spin is in doubt, or ``None``."""
        calls = [c for c in (self.debit, self.credit, self.rollback) if c is not None]
        for call in calls:
            if call.status == CallState.PENDING:
                return f"{call.kind} {call.transaction_id} not acknowledged"
            if call.status == CallState.REFUSED and call.kind != CallKind.DEBIT:
                return f"{call.kind} {call.transaction_id} refused ({call.error})"
        if self.debit is not None and self.debit.status == CallState.ACKNOWLEDGED \
                and self.credit is None and self.rollback is None:
            return f"debit {self.debit.transaction_id} has neither a credit nor a rollback"
        if self.debit is None:
            return "no debit recorded"
        return None

    @property
    def state(self) -> str:
        """``credited``, ``pending_credit``, ``rolled_back``, ``refused`` or the debit's."""
        if self.credit is not None:
            return "credited" if self.credit.status == CallState.ACKNOWLEDGED else "pending_credit"
        if self.rollback is not None:
            return ("rolled_back" if self.rollback.status == CallState.ACKNOWLEDGED
                    else "rollback_pending")
        return self.debit.status if self.debit is not None else "unknown"


@dataclass
class Reconciliation:
    """The spins and which of them are in doubt."""

    spins: list[Spin] = field(default_factory=list)

    @property
    def in_doubt(self) -> list[Spin]:
        return [s for s in self.spins if s.doubt is not None]

    def lines(self) -> list[str]:
        """The report for people, one spin per line, then the ones in doubt."""
        def call(c: WalletCall | None) -> str:
            if c is None:
                return "-"
            return (f"{c.kind} {c.amount} {c.transaction_id} / "
                    f"{c.operator_transaction_id or '-'} {c.status}")

        out = []
        for s in self.spins:
            played = s.credit.round_id if s.credit is not None else None
            out.append(f"{'round ' + str(played) if played else 'no round':>12}  {s.round_ref}  "
                       f"player {s.player_id}  {s.state}  | {call(s.debit)}  | "
                       f"{call(s.credit if s.credit is not None else s.rollback)}")
        doubt = self.in_doubt
        out.append(f"reconcile: {len(self.spins)} spins, {len(doubt)} in doubt")
        out.extend(f"  IN DOUBT {s.round_ref} (player {s.player_id}): {s.doubt}" for s in doubt)
        return out


def reconcile(db: Database, since: datetime | None = None) -> Reconciliation:
    """The spins of the operator's wallet calls (debits from ``since`` on)."""
    query = (select(WalletCall, Account.external_id)
             .join(Account, Account.id == WalletCall.account_id).order_by(WalletCall.id))
    spins: dict[str, Spin] = {}
    by_debit: dict[str, str] = {}
    late: defaultdict[str, list[WalletCall]] = defaultdict(list)
    with db.read() as session:
        for row, player_id in session.execute(query):
            if row.kind == CallKind.DEBIT:
                if since is not None and row.created_at < since:
                    continue
                spin = spins.setdefault(row.round_ref, Spin(row.round_ref, str(player_id)))
                spin.debit = row
                by_debit[row.transaction_id] = row.round_ref
            else:
                late[row.debit_transaction_id or ""].append(row)
    for debit_id, rows in late.items():
        ref = by_debit.get(debit_id)
        if ref is None:
            continue
        for row in rows:
            setattr(spins[ref], row.kind, row)
    return Reconciliation(spins=list(spins.values()))


def parse_since(text: str) -> datetime:
    """``--since`` as an instant: a date (``YYYY-MM-DD``) or an ISO 8601 time, UTC if no zone."""
    from starfever.engine.errors import InputError

    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise InputError(f"--since {text!r} is not a date (YYYY-MM-DD) or ISO 8601 time") \
            from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


__all__ = ["Reconciliation", "Spin", "parse_since", "reconcile"]
