"""Running it: /livez and /readyz, /metrics (scraped from a real server with several workers,
and every metric of the shipped alert rules found in a real scrape), JSON logs with request
ids and without secrets, the drain on SIGTERM, and which forwarded headers are believed."""

from __future__ import annotations

import fcntl
import json
import re
import signal
import threading
import time
import uuid
from pathlib import Path

import httpx
import pyotp
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import text

from starfever.engine.model import load_model
from tests.harness import (
    OPERATOR_PASSWORD,
    OPERATOR_USERNAME,
    PLAYER_PASSWORD,
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

DEFAULT_VERSION = load_model("default").version
"""The running default model's version, as the metrics label its rounds."""
ALERTS = Path(__file__).resolve().parents[2] / "deploy" / "prometheus" / "alerts.yml"
DASHBOARD = Path(__file__).resolve().parents[2] / "deploy" / "grafana" / "starfever.json"


def samples(server: Server, headers: dict[str, str] | None = None) -> dict[str, float]:
    """A real scrape of /metrics: sample name with its labels -> value."""
    response = expect(server.http.get(f"{server.url}/metrics", headers=headers or {}), 200)
    assert response.headers["content-type"].startswith("text/plain")
    found: dict[str, float] = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            labels = ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items()))
            found[f"{sample.name}{{{labels}}}"] = sample.value
    return found


def total(found: dict[str, float], name: str) -> float:
    return sum(v for k, v in found.items() if k.startswith(name + "{"))


def test_livez_readyz_and_request_ids(server: Server) -> None:
    live = expect(server.http.get(f"{server.url}/livez"), 200)
    assert live.json() == {"status": "alive"} and len(live.headers["x-request-id"]) == 32
    ready = expect(server.http.get(f"{server.url}/readyz",
                                   headers={"X-Request-ID": "lb-probe-7"}), 200)
    assert ready.json() == {"status": "ready", "database": "writable", "wallet": "none"}
    assert ready.headers["x-request-id"] == "lb-probe-7"
    forged = server.http.get(f"{server.url}/livez",
                             headers={"X-Request-ID": 'a b"<x>' + "y" * 70})
    assert re.fullmatch(r"[0-9a-f]{32}", forged.headers["x-request-id"])
    refused = server.call("GET", "/wallet")  # an error answer carries its id too
    assert refused.status_code == 401 and refused.headers["x-request-id"]


@pytest.mark.slow
def test_metrics_sum_every_worker_and_match_the_database(
        db_kind: DatabaseKind, databases: Databases, tmp_path: Path) -> None:
    server = start_server(databases, db_kind, tmp_path, workers=2, start_timeout=90.0)
    try:
        name, token = server.player(deposit=30_000)
        for bet in (1, 1, 5, 5, 5, 10):
            with httpx.Client(timeout=30) as fresh:  # new connections land on either worker
                expect(fresh.post(f"{server.base}/spins", json={"line_bet": bet}, headers={
                    "Authorization": f"Bearer {token}", "Idempotency-Key": uuid.uuid4().hex}),
                    201)
        wrong = server.call("POST", "/sessions", json={"username": name, "password": "nope-nope"})
        assert wrong.status_code == 401
        found = samples(server)
        with server.engine().connect() as conn:
            rows = conn.execute(text("SELECT line_bet, COUNT(*), SUM(total_bet), "
                                     "SUM(total_win) FROM rounds WHERE NOT test "
                                     "GROUP BY line_bet")).all()
            pool = conn.execute(text("SELECT amount FROM jackpot_pool")).scalar_one()
        for line_bet, n, bets, wins in rows:
            key = f"currency=EUR,line_bet={line_bet}"
            assert found[f"starfever_rounds_total{{{key}}}"] == n
            assert found[f"starfever_bets_cents_total{{{key}}}"] == bets
            assert found[f"starfever_wins_cents_total{{{key}}}"] == wins
            stored = f"{key},model=default,version={DEFAULT_VERSION}"
            assert found[f"starfever_rounds_stored{{{stored}}}"] == n
            assert f"starfever_rtp_realised_minus_theoretical{{{stored}}}" in found
        assert total(found, "starfever_settle_batch_size_count") >= 6
        assert total(found, "starfever_settle_seconds_count") >= 6
        assert found["starfever_pool_cents{currency=EUR}"] == pool
        assert found["starfever_login_failures_total{role=player}"] == 1
        assert total(found, "starfever_http_responses_total") > 0
        # process figures of each live process of the server, labelled pid: the supervisor
        # (``starfever serve``) and its two workers
        pids = {k for k in found if k.startswith("process_resident_memory_bytes{pid=")}
        assert server.process is not None
        assert len(pids) == 3 and all(found[k] > 0 for k in pids), pids
        assert f"process_resident_memory_bytes{{pid={server.process.pid}}}" in pids
        # a second scrape reads only what is new, and agrees
        expect(server.spin(token, line_bet=1), 201)
        again = samples(server)
        one = (f"starfever_rounds_stored{{currency=EUR,line_bet=1,model=default,"
               f"version={DEFAULT_VERSION}}}")
        assert again[one] == found[one] + 1
    finally:
        server.stop()
        databases.drop(server.database_url)


def test_metrics_need_the_token_when_one_is_set(databases: Databases, tmp_path: Path) -> None:
    server = start_server(databases, "sqlite", tmp_path,
                          {"STARFEVER_METRICS_TOKEN": "scrape-token-0123456789"})
    try:
        refused = server.http.get(f"{server.url}/metrics")
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "forbidden"
        wrong = server.http.get(f"{server.url}/metrics",
                                headers={"Authorization": "Bearer not-it"})
        assert wrong.status_code == 403
        assert "starfever_pool_cents{currency=EUR}" in samples(
            server, {"Authorization": "Bearer scrape-token-0123456789"})
    finally:
        server.stop()
        databases.drop(server.database_url)


@pytest.mark.slow
def test_every_alert_and_dashboard_query_names_metrics_of_a_real_scrape(
        databases: Databases, tmp_path: Path) -> None:
    """Operator mode (so that the wallet's metrics exist) with one failing wallet call; the
    process figures of the worker are there, labelled with its pid."""
    rules = yaml.safe_load(ALERTS.read_text())
    alerts = [rule for group in rules["groups"] for rule in group["rules"]]
    assert {a["alert"] for a in alerts} >= {"StarFeverRtpDrift", "StarFeverWalletErrors",
                                            "StarFeverSettleLatency"}
    for alert in alerts:
        assert alert["labels"]["severity"] in ("warning", "critical")
        assert alert["annotations"]["summary"]
    wallet = OperatorWallet(tmp_path)
    server = start_server(databases, "sqlite", tmp_path, {
        **operator_mode_env(wallet), "STARFEVER_WALLET_PROBE_SECONDS": "0.2"},
        args=operator_mode_args(wallet))
    try:
        wallet.player("alice", 10_000)
        token = launched_player(server, wallet.secret, "alice")
        for _ in range(2):  # two rounds: the RTP's interval needs them
            expect(server.spin(token, line_bet=1), 201)
        ready = expect(server.http.get(f"{server.url}/readyz"), 200).json()
        assert ready["wallet"] == "answers"
        wallet.fault("debit", "error")
        failed = server.spin(token, line_bet=1)
        assert failed.status_code in (502, 503), failed.text
        expect(server.call("POST", "/operator/sessions", json={
            "username": OPERATOR_USERNAME, "password": "wrong-password-1", "otp": "000000"}),
            401)
        wallet.fault("credit", "error", times=10_000)  # a played round's credit stays pending
        expect(server.spin(token, line_bet=1), 201)
        meters = expect(server.call("GET", "/operator/meters", server.operator_token), 200)
        pending = meters.json()["pending_credits"]
        assert pending["count"] == 1 and pending["calls"][0]["username"]
        found = samples(server)
        assert found["starfever_pending_credits{}"] == 1
        names = {key.split("{")[0] for key in found}
        queries = [alert["expr"] for alert in alerts] + [
            target["expr"] for panel in json.loads(DASHBOARD.read_text())["panels"]
            for target in panel["targets"]]
        for query in queries:
            for metric in set(re.findall(r"\b(?:starfever|process)_[a-z0-9_]+", query)):
                assert metric in names, f"{query}: {metric} is not in a real scrape"
        assert total(found, "starfever_wallet_call_errors_total") >= 1
        assert found["starfever_login_failures_total{role=operator}"] == 1
        assert found["starfever_wallet_up{}"] == 1
        workers = [k for k in found if k.startswith("process_open_fds{pid=")]
        assert len(workers) == 1 and found[workers[0]] > 0
        assert found[workers[0].replace("open_fds", "max_fds")] >= found[workers[0]]
        assert total(found, "starfever_gc_pause_seconds_count") >= 1  # the start's gc.collect
        assert any(k.startswith("python_info{") for k in found)
    finally:
        server.stop()
        wallet.stop()
        databases.drop(server.database_url)


def test_logs_are_json_with_request_ids_and_never_a_secret(databases: Databases,
                                                           tmp_path: Path) -> None:
    server = start_server(databases, "sqlite", tmp_path, args=("--log-level", "info"))
    try:
        name, token = server.player(deposit=1_000)
        operator = server.operator_token
        round_id = expect(server.spin(token, line_bet=1), 201).json()["round"]["id"]
        expect(server.call("GET", "/wallet", token, headers={"X-Request-ID": "trace-42"}), 200)
        server.http.get(f"{server.url}/?launch=launch-secret-abcdef123456")
        server.call("POST", "/sessions", json={"username": name, "password": "bad-secret-pw"})
        totp = pyotp.TOTP(server.operator_totp).now()
        server.call("POST", "/operator/sessions", json={
            "username": OPERATOR_USERNAME, "password": OPERATOR_PASSWORD, "otp": totp})
        time.sleep(0.3)
    finally:
        server.stop()
    log = server.log_path.read_text()
    databases.drop(server.database_url)
    lines = [line for line in log.splitlines() if line.startswith("{")]
    entries = [json.loads(line) for line in lines]
    assert len(entries) >= 8
    assert all({"time", "level", "logger", "message"} <= set(e) for e in entries)
    access = [e for e in entries if e["logger"] == "starfever.access"]
    assert all(re.fullmatch(r"[0-9a-f]{32}|trace-42", e["request_id"]) for e in access)
    assert any(e["request_id"] == "trace-42" and e["path"] == "/api/v1/wallet" for e in access)
    # the ids a request came to know are fields of its lines, not only words of a message
    spin = [e for e in access if e["path"] == "/api/v1/spins" and e["status"] == 201]
    assert len(spin) == 1 and spin[0]["round_id"] == round_id and spin[0]["role"] == "player"
    wallet = [e for e in access if e["request_id"] == "trace-42"]
    assert wallet[0]["account_id"] == spin[0]["account_id"]
    for secret in (token, operator, PLAYER_PASSWORD, OPERATOR_PASSWORD, "bad-secret-pw",
                   "launch-secret-abcdef123456", totp, server.env["STARFEVER_SECRET_KEY"]):
        assert secret not in log, f"a secret reached the log: {secret[:4]}..."


def _spin_in_thread(server: Server, token: str, answers: list[httpx.Response]) -> threading.Thread:
    def run() -> None:
        with httpx.Client(timeout=60) as own:
            answers.append(own.post(f"{server.base}/spins", json={"line_bet": 1}, headers={
                "Authorization": f"Bearer {token}", "Idempotency-Key": uuid.uuid4().hex}))

    thread = threading.Thread(target=run)
    thread.start()
    return thread


GRACE_S = 2
"""The pre-stop grace of the drain's test (``STARFEVER_DRAIN_GRACE_SECONDS``): short, and
long enough for a readiness probe and a spin sent right after the signal."""


@pytest.mark.slow
def test_sigterm_is_unready_for_its_grace_then_drains_finishing_spins_in_flight(
        databases: Databases, tmp_path: Path) -> None:
    """On SIGTERM, ``/readyz`` answers 503 at once while the server still serves everything
    for ``GRACE_S`` (a spin sent then is played: the load balancer has not yet taken the node
    out); then new spins are refused ``503 draining`` while those taken finish, and only
    then does the process end (issue 35 item 4)."""
    server = start_server(databases, "sqlite", tmp_path,
                          {"STARFEVER_DRAIN_GRACE_SECONDS": str(GRACE_S)})
    try:
        _name, token = server.player(deposit=1_000)
        _other, other = server.player(deposit=1_000)
        database = server.database_url.removeprefix("sqlite:///")
        # hold the server's SQLite write lock (services take it first): its settle waits
        with open(f"{database}-writer.lock", "a+") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            answers: list[httpx.Response] = []
            in_flight = _spin_in_thread(server, token, answers)
            time.sleep(1.0)
            assert not answers  # the spin waits for its batch
            assert server.process is not None
            server.process.send_signal(signal.SIGTERM)
            signalled = time.monotonic()
            while server.http.get(f"{server.url}/readyz").status_code != 503:
                assert time.monotonic() < signalled + GRACE_S / 2, "/readyz still 200"
                time.sleep(0.02)
            assert "grace" in server.http.get(f"{server.url}/readyz").text
            in_grace = _spin_in_thread(server, other, answers)  # still taken
            assert expect(server.call("GET", "/health"), 200)
            time.sleep(max(0.0, signalled + GRACE_S + 0.5 - time.monotonic()))
            new = server.spin(token, line_bet=1)
            assert new.status_code == 503 and new.json()["error"]["code"] == "draining"
            assert new.headers["retry-after"] == "1"
            assert server.http.get(f"{server.url}/readyz").status_code == 503
            assert server.process.poll() is None  # still draining
            fcntl.flock(lock, fcntl.LOCK_UN)
        in_flight.join(30)
        in_grace.join(30)
        assert [a.status_code for a in answers] == [201, 201], answers
        # uvicorn ends a graceful shutdown by re-raising the signal it caught (a SIGTERM
        # death, as a supervisor expects of a stop it asked for)
        assert server.process.wait(timeout=20) in (0, -signal.SIGTERM)
        with server.engine().connect() as conn:
            assert conn.execute(text("SELECT COUNT(*) FROM rounds")).scalar_one() == 2
    finally:
        server.stop()
        databases.drop(server.database_url)
    assert "drained: every spin taken was answered" in server.log_tail()


def _operator_log_in_failed_from(server: Server, forwarded_for: str) -> list[str]:
    """A failed operator log-in with ``X-Forwarded-For``; the clients the server recorded
    for every failed operator log-in so far."""
    server.call("POST", "/operator/sessions", headers={"X-Forwarded-For": forwarded_for},
                json={"username": OPERATOR_USERNAME, "password": "wrong-password-1",
                      "otp": "000000"})
    with server.engine().connect() as conn:
        return list(conn.execute(text(
            "SELECT client FROM significant_events WHERE kind = 'operator_login_failed'"
        )).scalars())


def test_forwarded_for_is_not_believed_by_default(server: Server) -> None:
    """The default settings (the module's server: no proxy configured) record the peer."""
    assert set(_operator_log_in_failed_from(server, "198.51.100.9")) == {"127.0.0.1"}


def test_forwarded_for_is_believed_from_a_configured_proxy(databases: Databases,
                                                           tmp_path: Path) -> None:
    server = start_server(databases, "sqlite", tmp_path,
                          {"STARFEVER_FORWARDED_ALLOW_IPS": "127.0.0.1"})
    try:
        clients = _operator_log_in_failed_from(server, "198.51.100.9")
    finally:
        server.stop()
        databases.drop(server.database_url)
    assert clients == ["198.51.100.9"]
