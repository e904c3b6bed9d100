"""The settlement rule: spins settled as data in, data out (ADR 0012): one pure function, no
database, no thread, no clock (``now`` is an argument). It imports the engine and pure rules
only (``books``, ``principal``, ``protection_rules``, ``chain``, ``calls``); a test pins that.

:func:`settle` takes the books as they stand when a batch's rows are locked (:class:`Books`:
the players' balances and protection state, their sessions, the rounds already stored under
the batch's idempotency keys, the €€€ pool with its carry, the chain head) and the waiting
spins (:class:`Job`, each drawn before it was queued), and returns a :class:`Settlement`: the
round rows and ledger entries to insert, the balances, pool and chain head to write, and one
answer per spin (its outcome, or the refusal it gets). The caller (``settler.settle_batch``)
only reads the books and writes the settlement in one transaction; the rule itself is here,
testable without a database.

Spins are settled in arrival order against the running state: a retry of a key settled earlier
(in the database or in this batch) gets that round again, a key reused for another request,
short funds, self-exclusion or a due reality check refuse that spin alone, and every settled
round takes the next id, the previous hash, the pool its predecessor left plus its own
contribution, and the balance its predecessor left.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from starfever.engine import money
from starfever.engine.model import MathModel
from starfever.engine.round import RoundResult, at_pool
from starfever.engine.symbols import Cents
from starfever.server.books import (
    BET,
    CONTRIBUTION,
    FREE_ROUND_FUNDING,
    FREE_ROUND_JACKPOT_WIN,
    FREE_ROUND_WIN,
    FREE_ROUND_WITHHELD,
    JACKPOT_WIN,
    OPERATOR_BOOK,
    REFILL,
    WALLET,
    WIN,
    RoundRow,
    house_book,
    pool_book,
)
from starfever.server.identity import round_identity
from starfever.server.services.chain import (
    FREE_ROUND,
    IDENTIFIED,
    ROUNDS_CHAIN_ID,
    canonical_json,
    head_mac,
    head_sealed,
    round_hash,
)
from starfever.server.services.control_rules import (
    OPEN,
    Maintenance,
    check_not_terminated,
    check_open,
)
from starfever.server.services.errors import (
    Conflict,
    NotFound,
    ServiceError,
    Unauthorized,
    Unavailable,
)
from starfever.server.services.free_round_rules import (
    GrantState,
    check_playable,
    payout,
    split_paid,
)
from starfever.server.services.principal import Principal, check_session_live
from starfever.server.services.protection_rules import (
    RealityCheck,
    check_adult,
    check_exclusion,
    check_reality_acknowledged,
    reality_check_of,
)
from starfever.server.settings import Settings
from starfever.server.spin.calls import (
    CallKind,
    CallState,
    acknowledgement,
    call_row,
    check_same_request,
)

if TYPE_CHECKING:
    from starfever.server.models import Round


@dataclass(frozen=True, slots=True)
class Debit:
    """Operator mode: the spin's debit, acknowledged by the operator's wallet."""

    transaction_id: str
    """Star Fever's id of the debit (``seamless_wallet.TransactionIds``)."""
    credit_transaction_id: str
    """The id its round's credit will be sent under."""
    round_ref: str
    """The ``round_id`` the operator was sent."""
    balance: int
    """The operator's balance after the debit, as it answered."""
    operator_transaction_id: str | None = None
    """The operator's id in its answer, when that answer is in hand but not yet recorded (the
    debit's row is still ``pending``): the settlement records it with the round, in the same
    transaction. None for a debit recorded ``acknowledged`` before (a retry)."""


@dataclass(frozen=True, slots=True)
class SpinOutcome:
    """A stored round, the wallet after it, and whether this was a retry."""

    round: Round | RoundRow
    balance: int
    replayed: bool
    reality_check: RealityCheck
    credit: dict[str, Any] | None = None
    """Operator mode: the credit (a ``wallet_calls`` row) this round committed as pending."""
    payment: str = "paid"
    """Operator mode: ``pending`` while the credit is unanswered, ``unpaid`` when the
    operator's wallet refused it (``services.unpaid``)."""
    grant: GrantState | None = None
    """A free round: its grant after the round (rounds left, winnings so far)."""


@dataclass(slots=True)
class Job:
    """One spin waiting to be settled; its round was drawn before it was queued."""

    settings: Settings
    model: MathModel
    principal: Principal
    bet: int
    key: str
    fingerprint: str
    """The request's hash: a retry under the same key must send the same request."""
    drawn: RoundResult | None
    """The round as drawn against the model's seed pool (re-based at settlement); None only
    for an operator-mode spin until its debit is acknowledged (``draw.draw_live``)."""
    test: bool
    debit: Debit | None = None
    """Operator mode: the acknowledged debit; the balance and the player's limits are the
    operator's, so the round is booked against it instead of a wallet row."""
    grant_id: int | None = None
    """A free round: the grant the player chose to play it on (``free_round_grants.id``)."""
    free_round: str | None = None
    """Operator mode: a free round's ``free_round`` block for its debit (JSON), from the grant
    as checked before the debit; its credit's block is the settlement's, exact."""

    @property
    def currency(self) -> str:
        """The round's currency: its session's (ADR 0076); a batch settles one currency."""
        return self.principal.currency

    @property
    def stake(self) -> int:
        """What the player stakes: the total bet, nothing for a free round."""
        return 0 if self.grant_id is not None else money.total_bet(Cents(self.bet))


@dataclass(slots=True)
class Player:
    """A player's books as locked for the batch, and the player's protection state."""

    balance: int | None
    """The embedded wallet's balance; None where the operator holds it (operator mode)."""
    excluded_until: datetime | None
    birth_date: date | None
    play_started_at: datetime | None
    """The player's reality-check clock, across all of the player's sessions."""
    reality_check_at: datetime | None
    net_result: int
    vouched: bool = False
    """Operator mode: the operator vouches for age and identity and keeps the limits and
    exclusions (its wallet refuses a debit with ``player_blocked``)."""
    reality_check_seconds: int | None = None
    """The reality-check interval the player's launch set (``None``: the server's)."""

    def copy(self) -> Player:
        """A copy to change (``dataclasses.replace`` cost a batch more than its players)."""
        return Player(self.balance, self.excluded_until, self.birth_date, self.play_started_at,
                      self.reality_check_at, self.net_result, self.vouched,
                      self.reality_check_seconds)


@dataclass(slots=True)
class Login:
    """A log-in session's lifetime."""

    revoked_at: datetime | None
    expires_at: datetime
    terminated_at: datetime | None = None
    """When the operator ended the session (ADR 0067): no new round from then."""
    ended_because: str | None = None
    """Why it ended early (``sessions.ended_because``): the refusal names it."""


@dataclass(slots=True)
class Books:
    """Everything a batch is settled against."""

    players: dict[int, Player]
    """By account id: the batch's players (with their wallets in ledger mode)."""
    logins: dict[int, Login]
    """By session id: the batch's sessions."""
    settled: dict[tuple[int, str], RoundRow]
    """Rounds already stored under (account id, idempotency key) of the batch's spins."""
    pool: int
    """The €€€ pool in cents."""
    carry: Fraction
    """The part of a cent of contributions not yet in the pool."""
    last_id: int
    """The chain head: the last round's id and hash."""
    last_hash: str
    debits: dict[str, str] = field(default_factory=dict)
    """Operator mode: the state of the batch's debits by transaction id (locked); only an
    ``acknowledged`` debit is played, or a ``pending`` one whose answer the job carries
    (:attr:`Debit.operator_transaction_id`): a rolled-back one never."""
    head_mac: str | None = None
    """The chain head's MAC (``chain.head_mac``; ``None`` only at genesis): a head that does
    not match it was moved outside the server, and is never extended (ADR 0048)."""
    grants: dict[int, GrantState] = field(default_factory=dict)
    """The free-round grants the batch's free rounds name, locked (ADR 0064)."""
    maintenance: Maintenance = OPEN
    """The game's maintenance switch as the batch read it (ADR 0067): no new ledger round
    while it is closed; a round on an operator debit recorded before still settles."""


@dataclass(frozen=True, slots=True)
class PoolChange:
    """The pool row after the batch and what its meters gained."""

    amount: int
    carry: Fraction
    contributions: int
    wins: int
    refills: int
    hits: int


@dataclass(frozen=True, slots=True)
class Settlement:
    """What a batch writes and answers."""

    results: list[SpinOutcome | ServiceError]
    """One per job, in order: its outcome or its refusal."""
    rounds: list[dict[str, Any]]
    """Round rows to insert (column -> value)."""
    entries: list[dict[str, Any]]
    """Ledger entries to insert; each round's sum to zero across the books."""
    balances: dict[int, int]
    """The final balance of every wallet the batch changed."""
    nets: dict[int, int]
    """Per player: what the reality-check net result changes by."""
    pool: PoolChange
    head: tuple[int, str]
    """The chain head after the batch: last id and hash."""
    head_mac: str | None = None
    """... and its MAC (``chain.head_mac``)."""
    calls: list[dict[str, Any]] = field(default_factory=list)
    """Operator mode: the credits to record as pending (``wallet_calls`` rows), one per round
    played on an operator debit; sent after the commit."""
    debits: list[dict[str, Any]] = field(default_factory=list)
    """Operator mode: per round played on an operator debit, that debit's row update (column
    -> value, by ``transaction_id``): now ``acknowledged`` with the operator's answer
    (``balance``, ``operator_transaction_id``: None keeps what was recorded before) and the
    round's id (``round_id``), so no search for debits without a round looks at it again."""
    grants: list[dict[str, Any]] = field(default_factory=list)
    """The free-round grants the batch played on: their new ``rounds_played``, ``winnings``
    and ``withheld`` (by ``id``)."""

    @property
    def writes(self) -> bool:
        """Whether anything was settled (a batch of refusals and retries writes nothing)."""
        return bool(self.rounds)


def _entry(entries: list[dict[str, Any]], book: str, kind: str, amount: int, round_id: int,
           at: datetime, *, account_id: int | None = None,
           balance_after: int | None = None) -> None:
    entries.append({"book": book, "account_id": account_id, "kind": kind, "amount": amount,
                    "balance_after": balance_after, "round_id": round_id, "created_at": at})


def book_round(entries: list[dict[str, Any]], r: Round | RoundRow,
               player_book: str = WALLET) -> None:
    """A settled round's ledger entries, in their order: the bet leaves the wallet, its
    contribution goes to the pool and the rest to the house; the game win comes from the
    house, the €€€ win from the pool, a refill from the house into the pool. In operator mode
    the player's side is the ``operator`` book (the operator's wallet), not ``wallet``. The pool
    and house books are the round's currency's (``books.pool_book``)."""
    if r.grant_id is not None:
        _book_free_round(entries, r, player_book)
        return
    at, aid, rid = r.created_at, r.account_id, r.id
    pool, house = pool_book(r.currency), house_book(r.currency)
    game_win = r.total_win - r.progressive_win
    running = r.balance_before - r.total_bet
    _entry(entries, player_book, BET, -r.total_bet, rid, at, account_id=aid,
           balance_after=running)
    _entry(entries, pool, CONTRIBUTION, r.contribution, rid, at,
           balance_after=r.pool_before)
    _entry(entries, house, BET, r.total_bet - r.contribution, rid, at)
    if game_win:
        running += game_win
        _entry(entries, player_book, WIN, game_win, rid, at, account_id=aid,
               balance_after=running)
        _entry(entries, house, WIN, -game_win, rid, at)
    if r.progressive_win:
        running += r.progressive_win
        _entry(entries, player_book, JACKPOT_WIN, r.progressive_win, rid, at,
               account_id=aid, balance_after=running)
        _entry(entries, pool, JACKPOT_WIN, -r.progressive_win, rid, at,
               balance_after=r.pool_before - r.progressive_win)
    if r.pool_refill:
        _entry(entries, pool, REFILL, r.pool_refill, rid, at, balance_after=r.pool_after)
        _entry(entries, house, REFILL, -r.pool_refill, rid, at)


def _book_free_round(entries: list[dict[str, Any]], r: Round | RoundRow,
                     player_book: str) -> None:
    """A free round's entries (ADR 0064): nobody stakes; the house pays the €€€ contribution
    (the operator funds it) and the game win, the pool the €€€ win, each only up to the grant's
    cap: a €€€ win above it goes from the pool to the house, not to the player."""
    at, aid, rid = r.created_at, r.account_id, r.id
    pool, house = pool_book(r.currency), house_book(r.currency)
    game_win = r.total_win - r.progressive_win
    paid = split_paid(game_win, r.paid_win or 0)
    running = r.balance_before
    _entry(entries, pool, CONTRIBUTION, r.contribution, rid, at, balance_after=r.pool_before)
    _entry(entries, house, FREE_ROUND_FUNDING, -r.contribution, rid, at)
    if paid.game:
        running += paid.game
        _entry(entries, player_book, FREE_ROUND_WIN, paid.game, rid, at, account_id=aid,
               balance_after=running)
        _entry(entries, house, FREE_ROUND_WIN, -paid.game, rid, at)
    if r.progressive_win:
        if paid.jackpot:
            running += paid.jackpot
            _entry(entries, player_book, FREE_ROUND_JACKPOT_WIN, paid.jackpot, rid, at,
                   account_id=aid, balance_after=running)
        _entry(entries, pool, JACKPOT_WIN, -r.progressive_win, rid, at,
               balance_after=r.pool_before - r.progressive_win)
        if r.progressive_win > paid.jackpot:
            _entry(entries, house, FREE_ROUND_WITHHELD, r.progressive_win - paid.jackpot, rid,
                   at)
    if r.pool_refill:
        _entry(entries, pool, REFILL, r.pool_refill, rid, at, balance_after=r.pool_after)
        _entry(entries, house, REFILL, -r.pool_refill, rid, at)


class _Batch:
    """The running state of one settlement (a private copy of the books)."""

    def __init__(self, books: Books, model: MathModel, settings: Settings,
                 now: datetime) -> None:
        self.model, self.settings, self.now = model, settings, now
        self.players = {aid: p.copy() for aid, p in books.players.items()}
        self.logins = books.logins  # only read
        self.settled = dict(books.settled)
        self.pool, self.carry = books.pool, books.carry
        self.last_id, self.last_hash = books.last_id, books.last_hash
        self.contributions = self.wins = self.refills = self.hits = 0
        self.rounds: list[dict[str, Any]] = []
        self.entries: list[dict[str, Any]] = []
        self.touched: set[int] = set()
        self.nets: dict[int, int] = {}
        self.debits = dict(books.debits)
        self.calls: list[dict[str, Any]] = []
        self.debit_updates: list[dict[str, Any]] = []
        self.grants = {gid: replace(grant) for gid, grant in books.grants.items()}
        self.grants_played: set[int] = set()
        self.chain_key = settings.chain_key()
        self.identity = round_identity(model)
        self.maintenance = books.maintenance

    def check_of(self, account_id: int) -> RealityCheck:
        player = self.players.get(account_id)
        if player is None:
            raise NotFound(f"no player {account_id}", code="player_not_found")
        return reality_check_of(self.settings, player.play_started_at, player.reality_check_at,
                                player.net_result, self.now, player.reality_check_seconds)

    def spin(self, job: Job) -> SpinOutcome:
        """Settle one spin against the running state, or raise its refusal."""
        aid, sid = job.principal.account_id, job.principal.session_id
        login = self.logins.get(sid)
        if login is None:
            raise Unauthorized("the bearer token is not valid", code="invalid_token")
        check_session_live(login.revoked_at, login.expires_at, self.now, login.ended_because)
        player = self.players.get(aid)
        if player is None or (player.balance is None and job.debit is None):
            raise NotFound(f"player {aid} has no wallet", code="wallet_not_found")
        prior = self.settled.get((aid, job.key))
        if prior is not None:
            check_same_request(prior.request_hash, job.fingerprint)
            return SpinOutcome(round=prior, balance=prior.balance_after if player.balance is None
                               else player.balance, replayed=True,
                               reality_check=self.check_of(aid))
        if job.debit is None:  # an operator debit was checked when it was recorded (call_book)
            check_not_terminated(login.terminated_at)
            check_open(self.maintenance)
        total = money.total_bet(Cents(job.bet))
        if not player.vouched:
            check_exclusion(player.excluded_until, self.now, "bets are")
            check_adult(player.birth_date, self.now, "bets are")
        check_reality_acknowledged(self.check_of(aid))
        grant = None if job.grant_id is None else check_playable(
            self.grants.get(job.grant_id), aid, job.bet, self.now)  # under the grant's lock
        if job.debit is None:
            balance = player.balance if player.balance is not None else 0
            if grant is None and balance < total:
                raise Conflict(f"the balance of {balance} cents does not cover the total bet "
                               f"of {total} cents", code="insufficient_funds")
        elif self.debits.get(job.debit.transaction_id) == CallState.ACKNOWLEDGED or (
                self.debits.get(job.debit.transaction_id) == CallState.PENDING
                and job.debit.operator_transaction_id is not None):
            # the operator's balance before the bet (a free round's debit was of 0)
            balance = job.debit.balance + (0 if grant is not None else total)
        else:
            raise Conflict("the debit of this spin was rolled back; send a new Idempotency-Key",
                           code="debit_rolled_back")
        contribution, carry = money.progressive_contribution(
            total, self.model.contribution_rate, self.carry)
        if job.drawn is None:  # a bug, never a player's doing: fail the batch's item loudly
            raise RuntimeError("a spin reached the settler without its round drawn")
        result = at_pool(self.model, job.drawn, self.pool + contribution)
        paid = None
        if grant is not None:
            paid = payout(result.total_win - result.progressive_win, result.progressive_win,
                          grant.max_win, grant.winnings)
            grant.rounds_played += 1
            grant.winnings += paid.total
            grant.withheld += result.total_win - paid.total
            self.grants_played.add(grant.id)
        stored = self._store(job, result, total, contribution, balance,
                             None if paid is None else paid.total)
        self.carry = carry
        self.pool = result.pool_after
        self.contributions += contribution
        self.wins += result.progressive_win
        self.refills += result.pool_refill
        self.hits += len(result.jackpot_hits)
        credit = None
        if job.debit is None:
            player.balance = stored.balance_after
            self.touched.add(aid)
        else:
            credit = self._credit(job, job.debit, stored, grant)
            self.debits[job.debit.transaction_id] = CallState.ACKNOWLEDGED
            self.debit_updates.append({**acknowledgement(
                job.debit.transaction_id, balance=job.debit.balance,
                operator_transaction_id=job.debit.operator_transaction_id, now=self.now),
                "round_id": stored.id})
        delta = stored.paid - stored.staked
        player.net_result += delta
        self.nets[aid] = self.nets.get(aid, 0) + delta
        self.settled[(aid, job.key)] = stored
        return SpinOutcome(round=stored, balance=stored.balance_after, replayed=False,
                           reality_check=self.check_of(aid), credit=credit,
                           grant=None if grant is None else replace(grant))

    def _credit(self, job: Job, debit: Debit, r: RoundRow,
                grant: GrantState | None) -> dict[str, Any]:
        """The round's credit (also of 0: it closes the round), recorded as pending; a free
        round's carries what it paid and its ``free_round`` block."""
        jackpot = r.progressive_win if r.paid_win is None else split_paid(
            r.total_win - r.progressive_win, r.paid_win).jackpot
        row = call_row(CallKind.CREDIT, debit.credit_transaction_id,
                       account_id=r.account_id, session_id=r.session_id,
                       round_ref=debit.round_ref, now=self.now, amount=r.paid,
                       jackpot_amount=jackpot, round_id=r.id, key=job.key,
                       fingerprint=job.fingerprint, debit_id=debit.transaction_id,
                       free_round=None if grant is None else free_round_block(grant),
                       currency=job.currency)
        self.calls.append(row)
        return row

    def _store(self, job: Job, result: RoundResult, total: int, contribution: int,
               balance_before: int, paid_win: int | None) -> RoundRow:
        model = self.model
        values: dict[str, Any] = {
            "id": self.last_id + 1, "account_id": job.principal.account_id,
            "session_id": job.principal.session_id, "idempotency_key": job.key,
            "request_hash": job.fingerprint, "model_name": model.name,
            "model_version": model.version, "line_bet": job.bet, "total_bet": total,
            "contribution": contribution, "base_win": result.base_win,
            "star_wild_win": result.star_wild_win,
            "hold_and_cash_win": result.hold_and_cash_win,
            "progressive_win": result.progressive_win, "total_win": result.total_win,
            "feature": result.feature, "pool_before": result.pool_before,
            "pool_after": result.pool_after, "pool_refill": result.pool_refill,
            "balance_before": balance_before,
            "balance_after": balance_before - total + result.total_win if paid_win is None
            else balance_before + paid_win,
            "draws": json.dumps(list(result.draws), separators=(",", ":")),
            "events": canonical_json(list(result.events)), "test": job.test,
            "created_at": self.now, "prev_hash": self.last_hash, "hash": "",
            "hash_scheme": IDENTIFIED if paid_win is None else FREE_ROUND, **self.identity,
            "grant_id": job.grant_id if paid_win is not None else None,
            "paid_win": paid_win, "currency": job.currency,
            "market": self.settings.market}
        values["hash"] = round_hash(RoundRow(**values), self.chain_key)
        stored = RoundRow(**values)
        self.rounds.append(values)
        book_round(self.entries, stored, WALLET if job.debit is None else OPERATOR_BOOK)
        self.last_id, self.last_hash = stored.id, stored.hash
        return stored


def free_round_block(grant: GrantState) -> str:
    """The ``free_round`` block of a free round's wallet calls (OPERATOR-WALLET.md v2), as the
    JSON stored with the call: the grant and campaign as the operator knows them, and the
    rounds left after this one."""
    return canonical_json({"grant_id": grant.grant_ref, "campaign_id": grant.campaign_ref,
                           "rounds_left": grant.rounds_left})


def settle(books: Books, jobs: list[Job], now: datetime) -> Settlement:
    """Settle ``jobs`` (one model, one set of settings) in order against ``books``; the books
    themselves are not changed."""
    batch = _Batch(books, jobs[0].model, jobs[0].settings, now)
    results: list[SpinOutcome | ServiceError] = []
    if head_sealed(batch.chain_key, ROUNDS_CHAIN_ID, books.last_id, books.last_hash,
                   books.head_mac):
        for job in jobs:
            try:
                results.append(batch.spin(job))
            except ServiceError as error:
                results.append(error)
    else:
        # the chain's end was moved outside the server (cut off?): extending it would seal
        # the cut under a fresh MAC, so nothing is settled until the audit has looked
        results = [Unavailable(f"chain head {ROUNDS_CHAIN_ID} does not match its MAC: the "
                               "database was changed outside the server; run starfever audit",
                               code="chain_tampered") for _ in jobs]
    pool = PoolChange(amount=batch.pool, carry=batch.carry, contributions=batch.contributions,
                      wins=batch.wins, refills=batch.refills, hits=batch.hits)
    return Settlement(results=results, rounds=batch.rounds, entries=batch.entries,
                      balances={aid: batch.players[aid].balance or 0
                                for aid in sorted(batch.touched)},
                      nets=dict(sorted(batch.nets.items())), pool=pool,
                      head=(batch.last_id, batch.last_hash),
                      head_mac=head_mac(batch.chain_key, ROUNDS_CHAIN_ID, batch.last_id,
                                        batch.last_hash) if batch.rounds else books.head_mac,
                      calls=batch.calls, debits=batch.debit_updates,
                      grants=[{"id": gid, "rounds_played": batch.grants[gid].rounds_played,
                               "winnings": batch.grants[gid].winnings,
                               "withheld": batch.grants[gid].withheld}
                              for gid in sorted(batch.grants_played)])

__all__ = ["Books", "Debit", "Job", "Login", "Player", "PoolChange",
           "Settlement", "SpinOutcome", "book_round", "free_round_block", "settle"]
