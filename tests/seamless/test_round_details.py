"""Round details (OPERATOR-WALLET.md, "Round details"; ADR 0060): a real ``starfever serve
--wallet operator`` against the reference wallet as a real process, on SQLite and on
PostgreSQL. Every credit the wallet recorded carries its round's ``round_details_url``; that
address opens, without a log-in, a page of that one round whose figures are the recall API's,
in German or English; an altered round id or signature is one and the same 404."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from html import escape
from typing import Any

import httpx
import pytest

from starfever.server.api.round_details_page import REPLAY_FIELDS, money, render
from starfever.server.api.security import CONTENT_SECURITY_POLICY
from starfever.server.models import Round
from starfever.server.services import round_details
from starfever.server.services.round_details import RoundDetails
from tests.harness import (
    DATABASE_KINDS,
    SECRET,
    DatabaseKind,
    Databases,
    OperatorWallet,
    Server,
    expect,
    launched_player,
    operator_mode_args,
    operator_mode_env,
    start_server,
)
from tests.server.helpers import feature_draws, jackpot_draws

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", params=DATABASE_KINDS)
def server(request: pytest.FixtureRequest, databases: Databases, wallet: OperatorWallet,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    kind: DatabaseKind = request.param
    if kind == "postgresql" and not databases.postgres_available:
        pytest.skip(f"no PostgreSQL answers at {databases.shown_admin_url}")
    started = start_server(databases, kind, tmp_path_factory.mktemp(f"details-{kind}"),
                           operator_mode_env(wallet), args=operator_mode_args(wallet))
    with started:
        yield started
    databases.drop(started.database_url)


@pytest.fixture(scope="module")
def played(server: Server, wallet: OperatorWallet) -> dict[str, Any]:
    """A player's four rounds (a plain spin, a Star Wild, a Hold & Cash, a €€€ win) with the
    recall API's view of each and the calls the wallet recorded."""
    player_id = f"details-{uuid.uuid4().hex[:10]}"
    wallet.player(player_id, 100_000)
    token = launched_player(server, wallet.secret, player_id)
    rounds = {}
    for name, draws in (("plain", None), ("star_wild", feature_draws("star_wild")),
                        ("hold_and_cash", feature_draws("hold_and_cash")),
                        ("jackpot", jackpot_draws())):
        spun = expect(server.spin(token, draws=None if draws is None else list(draws)), 201)
        round_id = spun.json()["round"]["id"]
        rounds[name] = expect(server.call("GET", f"/rounds/{round_id}", token), 200).json()
        assert spun.json()["round"]["details_url"] == rounds[name]["details_url"]
    return {"player_id": player_id, "token": token, "rounds": rounds,
            "calls": wallet.transactions(player_id)}


def _credit_of(played: dict[str, Any], url: str) -> dict[str, Any]:
    found = [c for c in played["calls"] if c["method"] == "credit"
             and c["round_details_url"] == url]
    assert len(found) == 1, f"{len(found)} credits carry {url}"
    return found[0]


def _page(url: str, **kwargs: Any) -> httpx.Response:
    return httpx.get(url, timeout=30, **kwargs)  # no Authorization: no log-in


def test_every_credit_carries_its_rounds_signed_details_url(server: Server,
                                                            played: dict[str, Any]) -> None:
    credits = [c for c in played["calls"] if c["method"] == "credit"]
    assert len(credits) == len(played["rounds"])
    for r in played["rounds"].values():
        url = r["details_url"]
        # on the configured public origin (serve filled in its own address: development)
        assert re.fullmatch(re.escape(server.url) + rf"/round-details/{r['id']}/[0-9a-f]{{32}}",
                            url), url
        credit = _credit_of(played, url)
        assert (credit["amount"], credit["jackpot_amount"]) == (r["total_win"],
                                                                r["progressive_win"])
    assert len({c["round_details_url"] for c in credits}) == len(credits)


def test_the_details_page_opens_without_a_log_in_and_shows_the_rounds_figures(
        played: dict[str, Any]) -> None:
    calls = {c["transaction_id"]: c for c in played["calls"]}
    for name, r in played["rounds"].items():
        page = _page(r["details_url"], params={"lang": "en"})
        assert page.status_code == 200, name
        assert page.headers["content-type"].startswith("text/html")
        text = page.text
        for cents in ("line_bet", "total_bet", "balance_before", "balance_after", "base_win",
                      "star_wild_win", "hold_and_cash_win", "progressive_win", "total_win",
                      "pool_before", "pool_after"):
            assert escape(money(r[cents], "en")) in text, (name, cents)
        for field in ("model_sha256", "build_sha256", "hash"):
            assert r[field] and r[field] in text, (name, field)
        assert f"{r['model_name']} {r['model_version']}" in text
        assert ", ".join(map(str, r["draws"])) in text  # every draw, in order
        credit = _credit_of(played, r["details_url"])
        debit = calls[credit["debit_transaction_id"]]
        for call in (debit, credit):  # both sides' transaction ids
            assert call["transaction_id"] in text and call["operator_transaction_id"] in text
        # every step of the round, in order: one item per event of the recall's log
        kinds = re.findall(r'<li class="step step-([a-z_]+)">', text)
        assert kinds == [e["type"] for e in r["events"]], name
        shown_grids = text.count('<table class="grid">')
        assert shown_grids == sum(1 for e in r["events"] if e["type"] == "reveal")
    kinds_of = {name: {e["type"] for e in r["events"]} for name, r in played["rounds"].items()}
    assert "star_wild" in kinds_of["star_wild"] and "respin" in kinds_of["hold_and_cash"]
    assert "jackpot" in kinds_of["jackpot"]


def test_the_page_speaks_german_or_english(played: dict[str, Any]) -> None:
    r = played["rounds"]["plain"]
    german = _page(r["details_url"], headers={"Accept-Language": "de-AT,de;q=0.9,en;q=0.5"})
    english = _page(r["details_url"], headers={"Accept-Language": "en-GB,en;q=0.8"})
    asked = _page(r["details_url"], params={"lang": "en"}, headers={"Accept-Language": "de"})
    unknown = _page(r["details_url"], headers={"Accept-Language": "fr-FR"})
    assert '<html lang="de">' in german.text and "Gesamteinsatz" in german.text
    assert escape(money(r["total_bet"], "de")) in german.text
    for page in (english, asked):
        assert '<html lang="en">' in page.text and "Total bet" in page.text
        assert "Gesamteinsatz" not in page.text
    assert '<html lang="de">' in unknown.text  # German, the binding language, by default


def test_an_altered_round_id_or_signature_is_the_same_404(server: Server,
                                                         played: dict[str, Any]) -> None:
    first, second = played["rounds"]["plain"], played["rounds"]["star_wild"]
    signature = first["details_url"].rsplit("/", 1)[1]
    flipped = ("0" if signature[0] != "0" else "1") + signature[1:]
    absent = 10**12  # signed with the server's own key: a valid address of no round
    base = f"{server.url}/round-details"
    altered = [f"{base}/{second['id']}/{signature}",      # another round's id, this signature
               f"{base}/{first['id']}/{flipped}",         # one character of it changed
               f"{base}/{first['id']}/{signature.upper()}",
               f"{base}/{first['id']}/{signature[:-1]}",
               f"{base}/{first['id']}/{signature}0",
               f"{base}/0{first['id']}/{signature}",
               f"{base}/{first['id'] + 1}/{signature}",
               f"{base}/x/{signature}",
               f"{base}{round_details.path_of(round_details.details_key(SECRET), absent)}"
               .replace(round_details.PATH, "", 1)]
    bodies = set()
    for url in altered:
        answer = _page(url, params={"lang": "en"})
        assert answer.status_code == 404, url
        assert "Traceback" not in answer.text and first["hash"] not in answer.text
        bodies.add(answer.text)
    assert len(bodies) == 1  # no oracle: every refusal reads the same
    assert _page(first["details_url"]).status_code == 200


def test_the_recall_of_a_round_names_its_details_page_in_the_history(
        server: Server, played: dict[str, Any]) -> None:
    page = expect(server.call("GET", "/rounds", played["token"], params={"limit": 10}), 200)
    listed = {r["id"]: r["details_url"] for r in page.json()["rounds"]}
    assert listed == {r["id"]: r["details_url"] for r in played["rounds"].values()}
    first = played["rounds"]["plain"]
    recalled = expect(server.call("GET", f"/operator/rounds/{first['id']}",
                                  server.operator_token), 200).json()
    assert recalled["round"]["details_url"] == first["details_url"]


def _events_of(url: str) -> str:
    return f"{url}/events.json"


def test_the_replays_events_are_the_rounds_own_at_its_signed_address(
        played: dict[str, Any]) -> None:
    for name, r in played["rounds"].items():
        answer = _page(_events_of(r["details_url"]))  # no Authorization: no log-in
        assert answer.status_code == 200, name
        assert answer.headers["content-type"] == "application/json"
        body = answer.json()
        assert set(body) == {"round", "game", "test_mode"}
        # this round's figures, draws and events as the recall API has them; nothing more
        assert set(body["round"]) == {*REPLAY_FIELDS, "draws", "events"}
        assert body["round"] == {k: r[k] for k in body["round"]}, name
        # the game's fixed rules the client's renderer reads, no live figure (no pool)
        game = body["game"]
        assert {"lines", "symbols", "hold_and_cash", "jackpot", "market"} <= set(game)
        assert not {"pool", "model", "rtp"} & set(game) and "balance" not in answer.text
        others = [o for o in played["rounds"].values() if o["id"] != r["id"]]
        assert all(o["hash"] not in answer.text and o["details_url"] not in answer.text
                   for o in others)


def test_the_page_loads_its_replay_as_a_module_of_the_client_under_the_same_policy(
        played: dict[str, Any]) -> None:
    r = played["rounds"]["hold_and_cash"]
    page = _page(r["details_url"], params={"lang": "de"})
    # the CSP is the server's one policy: scripts from this origin only, nothing inline
    assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert re.search(r'<script type="module" src="/static/[^"]+/js/round-replay\.js">'
                     r'</script>', page.text)
    assert "<script>" not in page.text and " style=" not in page.text
    path = r["details_url"].split("//", 1)[1].split("/", 1)[1]
    assert f'data-events="/{path}/events.json"' in page.text
    # hidden until the script shows it: with scripts off no dead button, the facts stand
    assert re.search(r'<section class="replay" id="replay" hidden ', page.text)
    assert 'data-again="Nochmals abspielen"' in page.text and ">Abspielen</button>" in page.text


def test_an_altered_events_address_is_the_404_of_any_unknown_path(
        server: Server, played: dict[str, Any]) -> None:
    first, second = played["rounds"]["plain"], played["rounds"]["star_wild"]
    signature = first["details_url"].rsplit("/", 1)[1]
    flipped = ("0" if signature[0] != "0" else "1") + signature[1:]
    base = f"{server.url}/round-details"
    absent = round_details.path_of(round_details.details_key(SECRET), 10**12)
    altered = [f"{base}/{second['id']}/{signature}",      # another round's id, this signature
               f"{base}/{first['id']}/{flipped}",
               f"{base}/{first['id']}/{signature.upper()}",
               f"{base}/{first['id']}/{signature[:-1]}",
               f"{base}/0{first['id']}/{signature}",
               f"{base}/x/{signature}",
               f"{server.url}{absent}"]                   # signed, but no such round
    unknown = _page(f"{server.url}/no/such/path/events.json")
    assert unknown.status_code == 404
    for url in altered:
        answer = _page(_events_of(url))
        assert answer.status_code == 404, url
        assert answer.content == unknown.content, url  # no oracle: as if nothing were there
        assert first["hash"] not in answer.text
    assert _page(_events_of(first["details_url"])).status_code == 200


def test_the_page_escapes_what_it_shows() -> None:
    hostile = '<script>alert("x")</script>'
    stored = Round(id=7, account_id=1, model_name=hostile, model_version="1<b>", line_bet=1,
                   total_bet=20, contribution=0, base_win=0, star_wild_win=0,
                   hold_and_cash_win=0, progressive_win=0, total_win=0, pool_before=0,
                   pool_after=0, balance_before=100, balance_after=80, draws="[1, 2]",
                   events=json.dumps([{"type": hostile, "symbol": hostile,
                                       "grid": [[hostile]]}]), test=False,
                   created_at=datetime(2026, 12, 4, tzinfo=UTC), hash='"><img src=x>',
                   model_sha256=None, build_sha256=None)
    shown = render(RoundDetails(stored, []), "en", '/x.css"><script>')
    assert "<script>" not in shown and "<img" not in shown and "<b>" not in shown
    assert "&lt;script&gt;" in shown


def test_money_is_written_as_each_language_writes_it() -> None:
    assert money(123456, "de") == "1.234,56 €" and money(123456, "en") == "€1,234.56"
    assert money(5, "de") == "0,05 €" and money(0, "en") == "€0.00"
