"""Operator accounts (issue 13): a strong password, a second factor (TOTP), their own log-in
with its own throttle; the public log-in does not take operators."""

from __future__ import annotations

import pyotp
import pytest

from starfever.server.services.operator_accounts import WeakPassword, check_operator_password
from tests.harness import (
    Server,
    create_operator,
    run_cli_in_process,
    totp_secret_of,
    unique_name,
)

pytestmark = pytest.mark.slow  # not in ./scripts/test --quick: CI and the full run have it

STRONG = "tangerine-Orbit-4417"


@pytest.mark.parametrize("password", [
    "password", "12345678", " " * 8, " " * 20, "password1234", "Password123!", "P@ssw0rd2026!",
    "qwertzuiop12", "1234567890123", "abcdefghijklm", "aaaaaaaaaaaaaaa", "ababababababab",
    "operator2026!!", "letmein-letmein", "a" * 129, "boss-is-the-best-1"])
def test_operator_passwords_must_be_strong(password: str) -> None:
    with pytest.raises(WeakPassword) as refused:
        check_operator_password("boss", password)
    assert "\n" not in str(refused.value)
    check_operator_password("boss", STRONG)
    check_operator_password("boss", "correct horse battery staple")


def test_operator_create_refuses_weak_passwords_in_one_line(server: Server) -> None:
    for weak in ("password", "12345678", " " * 8):
        name = unique_name("op")
        done = run_cli_in_process("operator", "create", name, "--database-url",
                                  server.database_url, stdin=weak + "\n")
        assert done.returncode == 2, done.stdout
        assert done.stderr.startswith("starfever operator: error: an operator password")
        assert len(done.stderr.strip().splitlines()) == 1
        taken = server.call("POST", "/players", json={
            "username": name, "password": "password-1", "birth_date": "1990-01-01"})
        assert taken.status_code == 201  # the name was never created


def test_operators_log_in_with_a_second_factor_on_their_own_endpoint(server: Server) -> None:
    name = unique_name("op")
    secret = create_operator(server.database_url, name, STRONG)
    public = server.call("POST", "/sessions", json={"username": name, "password": STRONG})
    assert public.status_code == 401 and public.json()["error"]["code"] == "invalid_credentials"
    no_code = server.call("POST", "/operator/sessions", json={"username": name,
                                                              "password": STRONG})
    assert no_code.status_code == 422
    code = pyotp.TOTP(secret).now()
    wrong = f"{(int(code) + 1) % 10**6:06d}"
    bad = server.call("POST", "/operator/sessions", json={"username": name, "password": STRONG,
                                                          "otp": wrong})
    assert bad.status_code == 401 and bad.json()["error"]["code"] == "invalid_credentials"
    used = pyotp.TOTP(secret).now()
    good = server.call("POST", "/operator/sessions", json={
        "username": name, "password": STRONG, "otp": used})
    assert good.status_code == 201, good.text
    token = good.json()["token"]
    assert server.call("GET", "/operator/players", token).status_code == 200
    replay = server.call("POST", "/operator/sessions", json={
        "username": name, "password": STRONG, "otp": used})
    assert replay.status_code == 401  # the very code once more (past its step: still refused)
    assert replay.json()["error"]["code"] in ("otp_reused", "invalid_credentials")
    player, _ = server.player()
    as_operator = server.call("POST", "/operator/sessions", json={
        "username": player, "password": "password-1", "otp": code})
    assert as_operator.status_code == 401
    # a new secret: the old one stops working
    reset = run_cli_in_process("operator", "totp", name, "--database-url", server.database_url)
    assert reset.returncode == 0, reset.stderr
    assert totp_secret_of(reset.stdout) != secret


def test_operator_log_ins_have_their_own_throttle(server: Server) -> None:
    name = unique_name("op")
    secret = create_operator(server.database_url, name, STRONG)
    code = pyotp.TOTP(secret).now()
    wrong = f"{(int(code) + 1) % 10**6:06d}"
    codes = [server.call("POST", "/operator/sessions", json={
        "username": name, "password": STRONG, "otp": wrong}).status_code for _ in range(3)]
    assert codes == [401, 401, 401]
    locked = server.call("POST", "/operator/sessions", json={
        "username": name, "password": STRONG, "otp": code})
    assert locked.status_code == 429 and locked.json()["error"]["code"] == "too_many_attempts"
    _, token = server.player()  # players log in as before
    assert server.call("GET", "/wallet", token).status_code == 200
