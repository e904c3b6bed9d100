"""Names are checked whole, and ids past the 64-bit range are refused cleanly (issue 13)."""

from __future__ import annotations

from pathlib import Path

import pytest

from starfever.server.schemas import MAX_ID, is_idempotency_key, is_username
from tests.harness import ADULT_BIRTH_DATE, Server, run_cli_in_process

pytestmark = pytest.mark.slow  # not in ./scripts/test --quick: CI and the full run have it


def test_names_are_validated_with_a_full_match(server: Server, tmp_path: Path) -> None:
    for bad in ("boss\n", "boss\r\n", "\nboss", "bo\nss"):
        assert not is_username(bad)
        assert not is_idempotency_key("key" + bad)
        made = run_cli_in_process("operator", "create", bad, "--database-url",
                                  f"sqlite:///{tmp_path}/names.db", stdin="password-1\n")
        assert made.returncode == 2, made.stdout
        assert "operator name" in made.stderr and len(made.stderr.strip().splitlines()) == 1
        registered = server.call("POST", "/players", json={
            "username": bad, "password": "password-1", "birth_date": ADULT_BIRTH_DATE})
        assert registered.status_code == 422, registered.text
    assert is_username("boss") and is_idempotency_key("a:b.c-d_e")
    assert not is_idempotency_key("k" * 129)
    deposit = server.call("POST", "/players/boss%0A/deposits", server.operator_token,
                          json={"amount": 100})
    assert deposit.status_code == 422, deposit.text
    dated = server.call("POST", "/players", json={
        "username": "newline-date", "password": "password-1",
        "birth_date": ADULT_BIRTH_DATE + "\n"})
    assert dated.status_code == 422


@pytest.mark.parametrize("path", ["/rounds", "/wallet/entries"])
@pytest.mark.parametrize("before", [str(2**63), str(2**63 - 1), str(MAX_ID + 1), "-1", "0",
                                    "1e3", str(10**30)])
def test_a_before_past_the_64_bit_range_is_a_clean_4xx(server: Server, path: str,
                                                       before: str) -> None:
    _, token = server.player()
    response = server.call("GET", f"{path}?before={before}", token)
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == "validation_error"
    assert server.call("GET", f"{path}?before={MAX_ID}", token).status_code == 200
