"""Player protection: deposit limits, reality check, self-exclusion."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, date, datetime, timedelta

import pytest
from sqlalchemy import text

from starfever.server.settings import Settings
from tests.harness import Server, unique_name

INTERVAL_S = Settings().reality_check_seconds
"""The reality check's interval of the module's server (the default: an hour)."""


def _limits(server: Server, token: str) -> dict[str, object]:
    response = server.call("GET", "/limits", token)
    assert response.status_code == 200
    return dict(response.json())


def test_default_weekly_deposit_limit_is_400_eur(server: Server) -> None:
    name, token = server.player()
    assert _limits(server, token)["weekly_deposit_limit"] == 40_000
    server.deposit(name, 30_000)
    server.deposit(name, 10_000)
    refused = server.call("POST", f"/players/{name}/deposits", server.operator_token,
                          json={"amount": 1},
                          headers={"Idempotency-Key": uuid.uuid4().hex})
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "deposit_limit_exceeded"
    assert server.balance(token) == 40_000
    assert _limits(server, token)["remaining"] == 0


def test_players_under_26_get_200_eur(server: Server) -> None:
    today = date.today()
    young = today.replace(year=today.year - 20).isoformat()
    name, token = server.player(birth_date=young)
    assert _limits(server, token)["weekly_deposit_limit"] == 20_000
    refused = server.call("POST", f"/players/{name}/deposits", server.operator_token,
                          json={"amount": 20_001},
                          headers={"Idempotency-Key": uuid.uuid4().hex})
    assert refused.json()["error"]["code"] == "deposit_limit_exceeded"
    old = today.replace(year=today.year - 40).isoformat()
    _, older = server.player(birth_date=old)
    assert _limits(server, older)["weekly_deposit_limit"] == 40_000


def test_limit_decrease_is_immediate_and_increase_waits_72_hours(server: Server) -> None:
    name, token = server.player()
    lowered = server.call("PUT", "/limits", token, json={"weekly_deposit_limit": 5_000}).json()
    assert lowered["weekly_deposit_limit"] == 5_000 and lowered["pending_limit"] is None
    refused = server.call("POST", f"/players/{name}/deposits", server.operator_token,
                          json={"amount": 5_001},
                          headers={"Idempotency-Key": uuid.uuid4().hex})
    assert refused.json()["error"]["code"] == "deposit_limit_exceeded"
    raised = server.call("PUT", "/limits", token, json={"weekly_deposit_limit": 30_000}).json()
    assert raised["weekly_deposit_limit"] == 5_000 and raised["pending_limit"] == 30_000
    effective = datetime.fromisoformat(raised["pending_effective_at"].replace("Z", "+00:00"))
    assert abs((effective - server.now()) - timedelta(hours=72)) < timedelta(minutes=1)
    still = server.call("POST", f"/players/{name}/deposits", server.operator_token,
                        json={"amount": 5_001},
                        headers={"Idempotency-Key": uuid.uuid4().hex})
    assert still.status_code == 403
    # 72 hours later (moved in the database) the increase applies
    with server.engine().begin() as conn:
        conn.execute(text("UPDATE deposit_limits SET pending_effective_at = :t WHERE "
                          "account_id = (SELECT id FROM accounts WHERE username = :u)"),
                     {"t": datetime.now(UTC).replace(tzinfo=None) - timedelta(seconds=1),
                      "u": name})
    assert _limits(server, token)["weekly_deposit_limit"] == 30_000
    server.deposit(name, 25_000)


def test_self_exclusion_blocks_bets_and_deposits(server: Server) -> None:
    name, token = server.player(deposit=1_000)
    response = server.call("POST", "/self-exclusion", token, json={"days": 30})
    assert response.status_code == 201 and response.json()["excluded"] is True
    spin = server.spin(token)
    assert spin.status_code == 403 and spin.json()["error"]["code"] == "self_excluded"
    deposit = server.call("POST", f"/players/{name}/deposits", server.operator_token,
                          json={"amount": 100},
                          headers={"Idempotency-Key": uuid.uuid4().hex})
    assert deposit.status_code == 403 and deposit.json()["error"]["code"] == "self_excluded"
    assert server.balance(token) == 1_000
    # cannot be shortened
    until = response.json()["excluded_until"]
    shorter = server.call("POST", "/self-exclusion", token, json={"days": 1}).json()
    assert shorter["excluded_until"] == until
    assert server.call("GET", "/self-exclusion", token).json()["excluded"] is True


def test_a_due_reality_check_pauses_play_until_acknowledged(server: Server) -> None:
    """The module's server, its interval the default hour: the test moves its clock."""
    _, token = server.player(deposit=1_000)
    first = server.spin(token, key="before-the-check")
    spin = first.json()
    check = spin["reality_check"]
    assert check["due"] is False
    assert check["net_result"] == spin["round"]["total_win"] - spin["round"]["total_bet"]
    server.move_clock(INTERVAL_S + 1)
    wallet = server.call("GET", "/wallet", token).json()
    assert wallet["reality_check"]["due"] is True
    assert wallet["reality_check"]["elapsed_seconds"] >= INTERVAL_S
    refused = server.spin(token)
    assert refused.status_code == 409, refused.text
    assert refused.json()["error"]["code"] == "reality_check_due"
    assert server.balance(token) == spin["balance"]  # nothing moved
    retry = server.spin(token, key="before-the-check")  # a settled spin is still answered
    assert retry.status_code == 200 and retry.json()["round"] == spin["round"]
    acknowledged = server.call("POST", "/reality-check/acknowledge", token).json()
    assert acknowledged["due"] is False
    assert server.call("GET", "/reality-check", token).json()["due"] is False
    assert server.spin(token).status_code == 201  # play goes on
    rounds = server.call("GET", "/rounds", token).json()["rounds"]
    assert len(rounds) == 2


def test_adults_only_no_deposit_or_bet_without_a_known_age_of_18(server: Server) -> None:
    minor = (date.today() - timedelta(days=17 * 366)).isoformat()
    name = unique_name("minor")
    refused = server.call("POST", "/players", json={"username": name, "password": "password-1",
                                                    "birth_date": minor})
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "under_age"
    missing = server.call("POST", "/players", json={"username": name, "password": "password-1"})
    assert missing.status_code == 422, missing.text
    with server.engine().connect() as conn:
        assert conn.execute(text("SELECT COUNT(*) FROM accounts WHERE username = :u"),
                            {"u": name}).scalar_one() == 0
    # players stored before the birth date was required: no deposit, no bet
    unknown, token = server.player(deposit=1_000)
    for birth, code in ((None, "age_unknown"), (minor, "under_age")):
        with server.engine().begin() as conn:
            conn.execute(text("UPDATE accounts SET birth_date = :b WHERE username = :u"),
                         {"b": birth, "u": unknown})
        deposit = server.call("POST", f"/players/{unknown}/deposits", server.operator_token,
                              json={"amount": 100},
                              headers={"Idempotency-Key": uuid.uuid4().hex})
        assert deposit.status_code == 403 and deposit.json()["error"]["code"] == code
        spin = server.spin(token)
        assert spin.status_code == 403 and spin.json()["error"]["code"] == code, spin.text
        assert server.balance(token) == 1_000
    assert server.call("GET", "/rounds", token).json()["rounds"] == []


@pytest.mark.slow
def test_a_self_exclusion_is_never_shortened_by_a_concurrent_request(server: Server) -> None:
    players = [server.player() for _ in range(30)]
    asks = [(token, days) for _, token in players for days in (3650, 1, 1, 3650, 1)]

    def exclude(ask: tuple[str, int]) -> tuple[str, str]:
        response = server.call("POST", "/self-exclusion", ask[0], json={"days": ask[1]})
        assert response.status_code == 201, response.text
        return ask[0], str(response.json()["excluded_until"])

    with ThreadPoolExecutor(max_workers=16) as pool:
        answers = list(pool.map(exclude, asks))
    ten_years = datetime.now(UTC) + timedelta(days=3649)
    shortened = 0
    for _, token in players:
        final = server.call("GET", "/self-exclusion", token).json()["excluded_until"]
        answered = max(until for t, until in answers if t == token)
        if _instant(final) < ten_years or _instant(final) < _instant(answered):
            shortened += 1
    assert shortened == 0


def _instant(text_: str) -> datetime:
    return datetime.fromisoformat(text_.replace("Z", "+00:00"))


@pytest.mark.slow
def test_concurrent_first_limit_changes_answer_cleanly(server: Server) -> None:
    players = [server.player() for _ in range(30)]
    asks = [(token, amount) for _, token in players for amount in (5_000, 30_000, 7_000, 100)]

    def put(ask: tuple[str, int]) -> int:
        return server.call("PUT", "/limits", ask[0],
                           json={"weekly_deposit_limit": ask[1]}).status_code

    with ThreadPoolExecutor(max_workers=16) as pool:
        codes = list(pool.map(put, asks))
    assert codes == [200] * len(asks)
    for _, token in players:
        state = _limits(server, token)
        assert state["weekly_deposit_limit"] in (5_000, 7_000, 100)


def test_the_reality_check_clock_is_the_players_across_sessions(server: Server) -> None:
    name, first = server.player(deposit=1_000)
    spin = server.spin(first).json()
    net = spin["round"]["total_win"] - spin["round"]["total_bet"]
    server.move_clock(INTERVAL_S + 1)
    assert server.call("GET", "/reality-check", first).json()["due"] is True
    second = server.login(name, "password-1")  # a fresh log-in does not restart the clock
    check = server.call("GET", "/reality-check", second).json()
    assert check["due"] is True and check["elapsed_seconds"] >= INTERVAL_S
    assert check["net_result"] == net
    refused = server.spin(second)
    assert refused.status_code == 409, refused.text
    assert refused.json()["error"]["code"] == "reality_check_due"
    assert server.call("DELETE", "/sessions/current", second).status_code == 204
    third = server.login(name, "password-1")  # nor does logging out and in again
    assert server.spin(third).json()["error"]["code"] == "reality_check_due"
    assert server.call("POST", "/reality-check/acknowledge", third).json()["due"] is False
    assert server.call("GET", "/reality-check", first).json()["due"] is False  # one clock
    again = server.spin(first)
    assert again.status_code == 201, again.text
    played = again.json()
    assert played["reality_check"]["net_result"] == net + played["round"]["total_win"] \
        - played["round"]["total_bet"]
    assert played["reality_check"]["elapsed_seconds"] >= INTERVAL_S  # the period goes on
