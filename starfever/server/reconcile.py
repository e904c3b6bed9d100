"""``starfever reconcile``: operator mode's wallet calls, per round, with both sides' ids.

Every spin in operator mode leaves a debit in ``wallet_calls`` and then either a credit (its
round was played) or a rollback (it was not). The report lists each of them with Star Fever's
transaction id and the operator's, and every spin still **in doubt**: a call not yet
acknowledged (a pending credit: the round is ``pending_credit``; a pending debit or rollback),
a credit or rollback the operator refused, or an acknowledged debit with neither a credit nor a
rollback. A refused debit moved nothing and is not in doubt. A refused credit leaves the round
``unpaid`` (OPERATOR-WALLET.md rule 5): listed as ``UNPAID`` with its round and amount, and in
the JSON's ``unpaid`` too, until it is paid by a resend or settled manually by two operators
(``settled_manually``, no longer in doubt: ADR 0061).

By default the report is a summary (spins per state) and the spins in doubt; ``--full`` lists
every spin (with the ``brand`` its launch named), ``--json`` writes the same as one JSON
object (each spin with its launch's ``operator_session`` and ``brand``), and ``--player`` (the
operator's player id) and ``--round`` (Star Fever's round id or the ``round_id`` the operator
was sent) narrow it to one player's or one round's spins.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select

from starfever.server.db import Database
from starfever.server.models import Account, SessionToken, WalletCall, WinSettlement
from starfever.server.services.unpaid import APPROVED, SETTLED, UNPAID
from starfever.server.spin.calls import CallKind, CallState


@dataclass
class Spin:
    """One spin's calls (by the ``round_id`` the operator was sent)."""

    round_ref: str
    player_id: str
    debit: WalletCall | None = None
    credit: WalletCall | None = None
    rollback: WalletCall | None = None
    settled: bool = False
    """Its refused credit was settled manually (two operators, ``win_settlements``)."""
    operator_session: str | None = None
    """The ``operator_session`` of the launch whose session made the spin (ADR 0081)."""
    brand: str | None = None
    """The ``brand`` that launch named (``None``: none)."""

    @property
    def doubt(self) -> str | None:
        """Why this spin is in doubt, or ``None``."""
        calls = [c for c in (self.debit, self.credit, self.rollback) if c is not None]
        for call in calls:
            if call.status == CallState.PENDING:
                return f"{call.kind} {call.transaction_id} not acknowledged"
            if call.status == CallState.REFUSED and call.kind != CallKind.DEBIT \
                    and not (call.kind == CallKind.CREDIT and self.settled):
                return f"{call.kind} {call.transaction_id} refused ({call.error})"
        if self.debit is not None and self.debit.status == CallState.ACKNOWLEDGED \
                and self.credit is None and self.rollback is None:
            return f"debit {self.debit.transaction_id} has neither a credit nor a rollback"
        if self.debit is None:
            return "no debit recorded"
        return None

    @property
    def state(self) -> str:
        """``credited``, ``pending_credit``, ``unpaid`` (the operator refused the credit:
        never paid, rule 5), ``settled_manually`` (refused, then settled outside the wallet),
        ``rolled_back``, ``rollback_pending`` or the debit's."""
        if self.credit is not None:
            if self.credit.status == CallState.REFUSED and self.settled:
                return SETTLED
            return {CallState.ACKNOWLEDGED: "credited", CallState.REFUSED: UNPAID}.get(
                CallState(self.credit.status), "pending_credit")
        if self.rollback is not None:
            return ("rolled_back" if self.rollback.status == CallState.ACKNOWLEDGED
                    else "rollback_pending")
        return self.debit.status if self.debit is not None else "unknown"

    @property
    def round_id(self) -> int | None:
        """The stored round (``None``: the spin played none)."""
        for call in (self.credit, self.debit):
            if call is not None and call.round_id is not None:
                return int(call.round_id)
        return None

    def as_dict(self) -> dict[str, Any]:
        """The spin for ``--json``: its state, why it is in doubt, each call with both ids."""
        def call(c: WalletCall | None) -> dict[str, Any] | None:
            if c is None:
                return None
            return {"transaction_id": c.transaction_id,
                    "operator_transaction_id": c.operator_transaction_id, "status": c.status,
                    "error": c.error, "amount": int(c.amount), "attempts": int(c.attempts),
                    "created_at": c.created_at.isoformat(),
                    "updated_at": c.updated_at.isoformat()}

        return {"round_ref": self.round_ref, "round_id": self.round_id,
                "player_id": self.player_id, "operator_session": self.operator_session,
                "brand": self.brand, "state": self.state, "doubt": self.doubt,
                "debit": call(self.debit), "credit": call(self.credit),
                "rollback": call(self.rollback)}


@dataclass
class Reconciliation:
    """The spins and which of them are in doubt."""

    spins: list[Spin] = field(default_factory=list)

    @property
    def in_doubt(self) -> list[Spin]:
        return [s for s in self.spins if s.doubt is not None]

    @property
    def unpaid(self) -> list[Spin]:
        """The spins whose win the operator's wallet refused to credit (rule 5)."""
        return [s for s in self.spins if s.state == UNPAID]

    def states(self) -> dict[str, int]:
        """How many spins are in each :attr:`Spin.state`, by name."""
        return dict(sorted(Counter(s.state for s in self.spins).items()))

    def summary(self) -> list[str]:
        """The report for people, short: the spins per state, then each one in doubt."""
        doubt = self.in_doubt
        states = ", ".join(f"{n} {state}" for state, n in self.states().items()) or "none"
        out = [f"reconcile: {len(self.spins)} spins ({states}), {len(doubt)} in doubt"]
        out.extend(_doubt_line(s) for s in doubt)
        return out

    def as_dict(self, *, full: bool = False) -> dict[str, Any]:
        """The report for ``--json``: the summary, the spins in doubt, and with ``full`` every
        spin."""
        made: dict[str, Any] = {"spins": len(self.spins), "states": self.states(),
                                "in_doubt": [s.as_dict() for s in self.in_doubt],
                                "unpaid": [s.as_dict() for s in self.unpaid]}
        if full:
            made["listing"] = [s.as_dict() for s in self.spins]
        return made

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
            brand = f" brand {s.brand}" if s.brand is not None else ""
            out.append(f"{'round ' + str(played) if played else 'no round':>12}  {s.round_ref}  "
                       f"player {s.player_id}{brand}  {s.state}  | {call(s.debit)}  | "
                       f"{call(s.credit if s.credit is not None else s.rollback)}")
        doubt = self.in_doubt
        out.append(f"reconcile: {len(self.spins)} spins, {len(doubt)} in doubt")
        out.extend(_doubt_line(s) for s in doubt)
        return out


def _doubt_line(s: Spin) -> str:
    """A spin in doubt for people: an unpaid win says so (with its round and amount)."""
    if s.state == UNPAID and s.credit is not None:
        return (f"  UNPAID {s.round_ref} (player {s.player_id}, round {s.round_id}, "
                f"{int(s.credit.amount)} cents): {s.doubt}")
    return f"  IN DOUBT {s.round_ref} (player {s.player_id}, {s.state}): {s.doubt}"


def reconcile(db: Database, since: datetime | None = None, *, player_id: str | None = None,
              round_: str | None = None) -> Reconciliation:
    """The spins of the operator's wallet calls (debits from ``since`` on; of the operator's
    ``player_id`` only; of the round ``round_`` only: Star Fever's round id or the
    ``round_id`` the operator was sent)."""
    query = (select(WalletCall, Account.external_id, SessionToken.operator_session,
                    SessionToken.brand)
             .join(Account, Account.id == WalletCall.account_id)
             .outerjoin(SessionToken, SessionToken.id == WalletCall.session_id)
             .order_by(WalletCall.id))
    if player_id is not None:
        query = query.where(Account.external_id == player_id)
    spins: dict[str, Spin] = {}
    by_debit: dict[str, str] = {}
    late: defaultdict[str, list[WalletCall]] = defaultdict(list)
    with db.read() as session:
        settled = set(session.scalars(select(WinSettlement.transaction_id)
                                      .where(WinSettlement.status == APPROVED)))
        for row, player_id, operator_session, brand in session.execute(query):
            if row.kind == CallKind.DEBIT:
                if since is not None and row.created_at < since:
                    continue
                spin = spins.setdefault(row.round_ref, Spin(
                    row.round_ref, str(player_id), operator_session=operator_session,
                    brand=brand))
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
            if row.kind == CallKind.CREDIT and row.transaction_id in settled:
                spins[ref].settled = True
    found = list(spins.values())
    if round_ is not None:
        found = [s for s in found if s.round_ref == round_ or str(s.round_id) == round_]
    return Reconciliation(spins=found)


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
