"""The settlement rule without a database: books and spins in, rows, balances and answers out
(ADR 0012). The server tests prove the same rule through the real settler."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections import defaultdict
from dataclasses import fields, replace
from datetime import UTC, date, datetime, timedelta
from fractions import Fraction
from itertools import pairwise

from starfever.engine.model import load_model
from starfever.engine.rng import SeededSource
from starfever.engine.round import play_round, replay_round
from starfever.server.books import OPERATOR_BOOK, WALLET, RoundRow
from starfever.server.models import Round
from starfever.server.services.auth import Principal
from starfever.server.services.chain import GENESIS_HASH, head_mac, round_hash
from starfever.server.services.errors import Conflict, Forbidden, ServiceError, Unauthorized
from starfever.server.settings import Settings
from starfever.server.spin.calls import CallState
from starfever.server.spin.draw import request_hash
from starfever.server.spin.rule import (
    Books,
    Debit,
    Job,
    Login,
    Player,
    SpinOutcome,
    settle,
)
from tests.web.forcing import find_stops

MODEL = load_model("default")
SETTINGS = Settings(secret_key="settlement-test-secret-0123456789")
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def _login() -> Login:
    return Login(revoked_at=None, expires_at=NOW + timedelta(hours=1))


def _player(balance: int | None, *, due: bool = False, excluded_until: datetime | None = None,
            vouched: bool = False) -> Player:
    """An adult player whose reality check is due (or not): one clock across sessions."""
    start = NOW - timedelta(seconds=SETTINGS.reality_check_seconds * (2 if due else 0) + 60)
    return Player(balance=balance, excluded_until=excluded_until, birth_date=date(1980, 5, 17),
                  play_started_at=start, reality_check_at=start, net_result=0, vouched=vouched)


def _books(**players: int) -> Books:
    """Players 1, 2, ... with these balances; session id = account id."""
    ids = range(1, len(players) + 1)
    return Books(players={i: _player(b) for i, b in zip(ids, players.values(), strict=True)},
                 logins={i: _login() for i in ids}, settled={}, pool=MODEL.seed_cents,
                 carry=Fraction(0), last_id=41, last_hash="a" * 64,
                 head_mac=head_mac(SETTINGS.chain_key(), 1, 41, "a" * 64))


def _job(account: int, key: str, bet: int = 5, draws: list[int] | None = None,
         seed: int = 0) -> Job:
    principal = Principal(account_id=account, username=f"p{account}", role="player",
                          session_id=account)
    if draws is None:
        drawn = play_round(MODEL, bet, SeededSource(seed))
    else:
        drawn = replay_round(MODEL, bet, draws)
    return Job(settings=SETTINGS, model=MODEL, principal=principal, bet=bet, key=key,
               fingerprint=request_hash(bet, draws), drawn=drawn, test=draws is not None)


def test_a_batch_chains_its_rounds_and_books_balance_to_zero() -> None:
    books = _books(alice=10_000, bob=3_000)
    before = copy.deepcopy(books)
    jobs = [_job(1 + i % 2, f"k{i}", bet=(1, 5, 10)[i % 3], seed=i) for i in range(30)]
    done = settle(books, jobs, NOW)
    assert books == before  # the rule leaves its input alone
    assert all(isinstance(r, SpinOutcome) and not r.replayed for r in done.results)
    ids = [row["id"] for row in done.rounds]
    assert ids == list(range(42, 72))
    prev = "a" * 64
    for row in done.rounds:
        assert row["prev_hash"] == prev
        stored = Round(**row)
        assert row["hash"] == round_hash(stored, SETTINGS.chain_key())  # keyed (ADR 0013)
        prev = row["hash"]
    assert done.head == (71, prev)
    per_round: dict[int, int] = defaultdict(int)
    for entry in done.entries:
        per_round[entry["round_id"]] += entry["amount"]
    assert set(per_round) == set(ids) and not any(per_round.values())
    for account, start in ((1, 10_000), (2, 3_000)):
        mine = [r for r in done.rounds if r["account_id"] == account]
        assert done.balances[account] == start + sum(r["total_win"] - r["total_bet"]
                                                     for r in mine)
        for a, b in pairwise(mine):
            assert b["balance_before"] == a["balance_after"]
        assert done.nets[account] == done.balances[account] - start
    pool = done.pool
    assert pool.amount == books.pool + pool.contributions - pool.wins + pool.refills
    assert pool.contributions == sum(r["contribution"] for r in done.rounds)
    for a, b in pairwise(done.rounds):
        assert b["pool_before"] == a["pool_after"] + b["contribution"]


def test_the_settlements_round_record_is_the_rounds_table_field_for_column() -> None:
    """``RoundRow`` (the settler's plain record of a round) has exactly the table's columns, in
    order, and a settled round's record holds the row it inserts."""
    assert [f.name for f in fields(RoundRow)] == [c.key for c in Round.__table__.columns]
    done = settle(_books(alice=1_000), [_job(1, "k1", seed=3)], NOW)
    answered = done.results[0]
    assert isinstance(answered, SpinOutcome) and isinstance(answered.round, RoundRow)
    assert {f.name: getattr(answered.round, f.name) for f in fields(RoundRow)} == {
        **{c.key: None for c in Round.__table__.columns}, **done.rounds[0]}


def test_refusals_stand_alone_and_retries_get_their_round() -> None:
    books = _books(rich=10_000, poor=50)
    books.logins[3] = _login()
    books.players[3] = _player(10_000, due=True)
    books.players[4] = _player(10_000, excluded_until=NOW + timedelta(days=30))
    books.logins[4] = _login()
    books.logins[6] = _login()
    books.players[6] = replace(_player(10_000), birth_date=NOW.date().replace(year=2012))
    first = _job(1, "same", seed=1)
    jobs = [first, _job(2, "short", seed=2), _job(1, "same", seed=99),
            _job(1, "same", bet=10, seed=3), _job(3, "due", seed=4), _job(4, "excluded", seed=5),
            _job(5, "nobody", seed=6), _job(1, "next", seed=7), _job(6, "minor", seed=8)]
    done = settle(books, jobs, NOW)
    r = done.results
    assert isinstance(r[0], SpinOutcome) and not r[0].replayed
    assert isinstance(r[1], Conflict) and r[1].code == "insufficient_funds"
    assert isinstance(r[2], SpinOutcome) and r[2].replayed and r[2].round is r[0].round
    assert isinstance(r[3], Conflict) and r[3].code == "idempotency_key_reused"
    assert isinstance(r[4], ServiceError) and r[4].code == "reality_check_due"
    assert isinstance(r[5], Forbidden) and r[5].code == "self_excluded"
    assert isinstance(r[6], Unauthorized)
    assert isinstance(r[7], SpinOutcome) and r[7].round.id == r[0].round.id + 1
    assert isinstance(r[8], Forbidden) and r[8].code == "under_age"
    assert [row["idempotency_key"] for row in done.rounds] == ["same", "next"]
    assert set(done.balances) == {1}


def test_a_stored_round_is_answered_again_and_nothing_is_written() -> None:
    books = _books(alice=10_000)
    done = settle(books, [_job(1, "k", seed=1)], NOW)
    stored = Round(**done.rounds[0])
    books.settled[(1, "k")] = stored
    again = settle(books, [_job(1, "k", seed=2)], NOW)
    assert not again.writes and again.head == (books.last_id, books.last_hash)
    outcome = again.results[0]
    assert isinstance(outcome, SpinOutcome) and outcome.replayed and outcome.round is stored


def test_a_jackpot_is_paid_from_the_pool_as_it_stands_and_refilled() -> None:
    stops = find_stops(MODEL.base_reels, lambda _, ev: bool(ev.jackpot_lines)
                       and ev.star_coins < 4)
    books = _books(alice=100_000, bob=100_000)
    books.pool = 250_000
    done = settle(books, [_job(1, "plain", bet=100, seed=8),
                          _job(2, "hit", bet=100, draws=stops)], NOW)
    plain, hit = done.rounds
    assert hit["pool_before"] == plain["pool_after"] + hit["contribution"]
    assert hit["progressive_win"] == hit["pool_before"]  # EUR 1.00 line bet: the whole pool
    assert hit["pool_refill"] == MODEL.seed_cents and hit["pool_after"] == MODEL.seed_cents
    assert done.pool.wins == hit["progressive_win"] and done.pool.refills == MODEL.seed_cents
    shares = [e for e in json.loads(hit["events"]) if e["type"] == "jackpot"]
    assert done.pool.hits == len(shares) >= 1 and done.pool.amount == MODEL.seed_cents
    assert done.head[1] not in (GENESIS_HASH, books.last_hash)


def _debited(account: int, key: str, balance: int, seed: int) -> Job:
    job = _job(account, key, bet=5, seed=seed)
    job.debit = Debit(transaction_id=f"sfd-{key}", credit_transaction_id=f"sfc-{key}",
                      round_ref=f"sfr-{key}", balance=balance)
    return job


def test_an_operator_debit_books_the_round_on_the_operator_book_and_records_its_credit() -> None:
    books = Books(players={1: _player(None, vouched=True)}, logins={1: _login()}, settled={},
                  pool=MODEL.seed_cents,
                  carry=Fraction(0), last_id=0, last_hash=GENESIS_HASH,
                  debits={"sfd-a": CallState.ACKNOWLEDGED, "sfd-b": CallState.ACKNOWLEDGED,
                          "sfd-c": CallState.ROLLED_BACK})
    jobs = [_debited(1, "a", 900, 1), _debited(1, "b", 800, 2), _debited(1, "c", 700, 3)]
    done = settle(books, jobs, NOW)
    first, second, refused = done.results
    assert isinstance(first, SpinOutcome) and isinstance(second, SpinOutcome)
    assert isinstance(refused, Conflict) and refused.code == "debit_rolled_back"
    assert first.round.balance_before == 1_000 and second.round.balance_before == 900
    assert done.balances == {}  # no wallet row is touched: the money is the operator's
    assert {e["book"] for e in done.entries} & {WALLET, OPERATOR_BOOK} == {OPERATOR_BOOK}
    for outcome in (first, second):
        r = outcome.round
        entries = [e for e in done.entries if e["round_id"] == r.id]
        assert sum(e["amount"] for e in entries) == 0
        assert sum(e["amount"] for e in entries if e["book"] == OPERATOR_BOOK) == \
            r.total_win - r.total_bet
    assert [(c["transaction_id"], c["round_id"], c["amount"], c["jackpot_amount"],
             c["status"]) for c in done.calls] == [
        ("sfc-a", first.round.id, first.round.total_win, first.round.progressive_win,
         "pending"),
        ("sfc-b", second.round.id, second.round.total_win, second.round.progressive_win,
         "pending")]


def test_a_pending_debit_is_played_only_with_the_operators_answer_and_is_recorded_with_it(
        ) -> None:
    """The settler records a debit's acknowledgement in the round's transaction: a pending
    debit whose answer the job carries is played and comes back as acknowledged, naming its
    round; a pending one without an answer (none arrived) and a rolled-back one are not."""
    books = Books(players={1: _player(None, vouched=True)}, logins={1: _login()}, settled={},
                  pool=MODEL.seed_cents, carry=Fraction(0), last_id=7, last_hash=GENESIS_HASH,
                  head_mac=head_mac(SETTINGS.chain_key(), 1, 7, GENESIS_HASH),
                  debits={"sfd-a": CallState.PENDING, "sfd-b": CallState.PENDING,
                          "sfd-c": CallState.ROLLED_BACK, "sfd-d": CallState.ACKNOWLEDGED})
    answered, unanswered, rolled_back, before = (
        _debited(1, "a", 900, 1), _debited(1, "b", 800, 2), _debited(1, "c", 700, 3),
        _debited(1, "d", 600, 4))
    assert answered.debit is not None and rolled_back.debit is not None
    answered.debit = replace(answered.debit, operator_transaction_id="op-1")
    rolled_back.debit = replace(rolled_back.debit, operator_transaction_id="op-3")
    done = settle(books, [answered, unanswered, rolled_back, before], NOW)
    first, refused, refused_too, last = done.results
    assert isinstance(first, SpinOutcome) and isinstance(last, SpinOutcome)
    assert isinstance(refused, Conflict) and refused.code == "debit_rolled_back"
    assert isinstance(refused_too, Conflict) and refused_too.code == "debit_rolled_back"
    assert done.debits == [
        {"transaction_id": "sfd-a", "status": "acknowledged", "error": None, "round_id": 8,
         "balance": 900, "operator_transaction_id": "op-1", "updated_at": NOW},
        {"transaction_id": "sfd-d", "status": "acknowledged", "error": None, "round_id": 9,
         "balance": 600, "operator_transaction_id": None, "updated_at": NOW}]
    assert books.debits["sfd-a"] == "pending"  # the books themselves are not changed


def test_the_rule_imports_no_database_no_futures_and_no_web() -> None:
    """The rule is pure (ADR 0038): importing it loads neither SQLAlchemy nor a driver, the
    password hasher, the web framework, numpy or ``concurrent.futures`` (a job carries no
    Future): a fresh interpreter shows what it pulls in."""
    code = ("import sys, starfever.server.spin.rule; "
            "print(' '.join(sorted({name.split('.')[0] for name in sys.modules})))")
    loaded = set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                check=True).stdout.split())
    assert "starfever" in loaded
    assert not loaded & {"sqlalchemy", "psycopg", "argon2", "fastapi", "starlette", "pydantic",
                         "numpy", "concurrent"}


def test_a_chain_head_moved_outside_the_server_is_never_extended() -> None:
    """A head whose MAC does not match (its chain's end cut off by an insider) settles
    nothing: extending it would seal the cut under a fresh MAC (ADR 0048)."""
    books = replace(_books(a=1_000), last_id=40)  # set back one round, the MAC of 41 kept
    done = settle(books, [_job(1, "k1")], NOW)
    (refused,) = done.results
    assert isinstance(refused, ServiceError) and refused.code == "chain_tampered"
    assert refused.status == 503 and not done.writes
    done = settle(_books(a=1_000), [_job(1, "k1")], NOW)
    assert not isinstance(done.results[0], ServiceError)
    assert done.head_mac == head_mac(SETTINGS.chain_key(), 1, 42, done.head[1])
