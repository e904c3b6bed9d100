"""Operator mode in the browser (issue 14 point 3): the operator's launch URL opens the game with
no register or log-in screen, the balance shown is the operator wallet's after every round, and
the exit leads to the launch's return_url. A real ``starfever serve --wallet operator`` against
the reference operator wallet (``starfever operator-wallet-demo``), both real processes."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from starfever.markets import load_market
from tests.harness import (
    Databases,
    OperatorWallet,
    Server,
    expect,
    operator_mode_args,
    operator_mode_env,
    signed_launch,
    start_server,
)
from tests.web.browser import ConsoleWatch
from tests.web.conftest import FAST, Game

pytestmark = pytest.mark.browser

RETURN_URL = "https://operator.example/lobby"


@pytest.fixture(scope="module")
def wallet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OperatorWallet]:
    started = OperatorWallet(tmp_path_factory.mktemp("operator-wallet-web"))
    yield started
    started.stop()


@pytest.fixture(scope="module")
def operator_server(wallet: OperatorWallet,
                    tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp("operator-web")
    with Databases(directory / "db") as databases, start_server(
            databases, "sqlite", directory, operator_mode_env(wallet),
            args=operator_mode_args(wallet)) as started:
        yield started


def _launch(server: Server, wallet: OperatorWallet, player_id: str, **fields: Any) -> str:
    answer = expect(signed_launch(server, wallet.secret, player_id, language="en",
                                  return_url=RETURN_URL, **fields), 200).json()
    assert answer["market"] == load_market("at").public()  # the profile the game plays
    return f"{answer['url']}&speed={FAST}"


def test_a_launched_player_plays_with_the_operators_balance(
        browser: Any, operator_server: Server, wallet: OperatorWallet) -> None:
    player_id = f"web-op-{uuid.uuid4().hex[:8]}"
    wallet.player(player_id, 5_000)
    context = browser.new_context(viewport={"width": 1366, "height": 768}, locale="en-GB")
    page = context.new_page()
    watch = ConsoleWatch(page)
    game = Game(page, operator_server, watch)
    page.goto(_launch(operator_server, wallet, player_id))
    page.wait_for_function("window.starfever && window.starfever.ready")
    page.wait_for_selector("#game:not([hidden])")
    assert not page.is_visible("#auth") and not page.is_visible("#auth-form")
    assert "launch=" not in page.url  # the single-use token is out of the address
    assert not page.is_visible("#logout") and not page.is_visible("#open-protection")
    assert page.get_attribute("#exit", "href") == RETURN_URL and page.is_visible("#exit")
    assert game.cents("#balance") == wallet.balance(player_id) == 5_000
    for _ in range(6):
        played = game.spin()
        assert game.cents("#balance") == wallet.balance(player_id) == played["balance_after"]
    page.reload()  # the session stays; the balance is still the operator's
    page.wait_for_function("window.starfever.ready")
    page.wait_for_selector("#game:not([hidden])")
    assert game.cents("#balance") == wallet.balance(player_id)
    assert not page.is_visible("#auth")
    context.close()
    assert watch.errors == [], watch.errors


def test_a_used_launch_shows_no_log_in_screen_and_another_market_is_refused(
        browser: Any, operator_server: Server, wallet: OperatorWallet) -> None:
    player_id = f"web-op-{uuid.uuid4().hex[:8]}"
    wallet.player(player_id, 1_000)
    url = _launch(operator_server, wallet, player_id)
    token = url.split("launch=")[1].split("&")[0]
    expect(operator_server.call("POST", "/sessions", json={"launch_token": token}), 201)
    context = browser.new_context(viewport={"width": 1366, "height": 768}, locale="en-GB")
    page = context.new_page()
    watch = ConsoleWatch(page)
    page.goto(url)
    page.wait_for_function("window.starfever && window.starfever.ready")
    assert not page.is_visible("#auth")
    assert "expired or was used" in page.inner_text("#status")
    assert page.get_attribute("#exit", "href") == RETURN_URL
    context.close()
    assert watch.errors == [], watch.errors
    refused = signed_launch(operator_server, wallet.secret, player_id, market="strict")
    assert refused.status_code == 422
    assert refused.json()["error"]["code"] == "market_not_served"
