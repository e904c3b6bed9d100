"""Hostile input, generated: schemathesis derives requests from the server's own OpenAPI schema
(valid ones and deliberately invalid ones) and sends them to the ASGI app on a real SQLite
database. Every response must be a non-5xx, with a documented status, content type, headers
and a body that matches the documented schema (errors included); invalid requests must be
refused. Authenticated operations get a live token (the operator's for operator paths) so the
fuzzing reaches past the authentication; bad tokens are covered in test_hostile.py.

More examples: ``STARFEVER_FUZZ_EXAMPLES=500 pytest tests/assurance/test_fuzz.py``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import pytest
import schemathesis
from fastapi import FastAPI
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.schemas import APIOperation
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from starfever.engine.model import load_model
from starfever.server.app import create_app
from starfever.server.db import Database, migrate
from starfever.server.models import OPERATOR
from starfever.server.services import auth, cashier
from starfever.server.services.jackpot import ensure_pool
from starfever.server.settings import Settings
from starfever.server.spin.wallets import LedgerWallet

EXAMPLES = int(os.environ.get("STARFEVER_FUZZ_EXAMPLES", "30"))
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_headers_conformance, response_schema_conformance, negative_data_rejection]


CLOSING = {"DELETE /api/v1/sessions/current", "POST /api/v1/self-exclusion"}
SENT: dict[str, int] = {}
STATUSES: dict[int, int] = {}


@pytest.fixture(scope="module", autouse=True)
def fuzz_tally() -> Iterator[None]:
    """Print how many generated requests were sent, per operation and per status."""
    yield
    total = sum(SENT.values())
    print(f"\n[fuzz] {total} requests over {len(SENT)} operations; statuses "
          f"{dict(sorted(STATUSES.items()))}")


@dataclass(frozen=True)
class FuzzTarget:
    """The app under test and live tokens of a player and the operator."""

    app: FastAPI
    player_token: str
    operator_token: str


@pytest.fixture(scope="module")
def fuzz_target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FuzzTarget]:
    path: Path = tmp_path_factory.mktemp("fuzz") / "fuzz.db"
    config = Settings(database_url=f"sqlite:///{path}", secret_key="fuzz-secret-0123456789",
                      login_max_failures=1_000_000)
    db = Database(config.database_url)
    migrate(db)
    ensure_pool(db, load_model(config.model))
    wallet = LedgerWallet()
    boss = auth.register(db, wallet, "fuzzboss", "operator-password", role=OPERATOR)
    auth.register(db, wallet, "fuzzplayer", "player-password", birth_date=date(1990, 1, 1))
    cashier.deposit(db, config, wallet, "fuzzplayer", 40_000)
    player, _ = auth.login(db, config, "fuzzplayer", "player-password")
    operator, _ = auth.open_session(db, config, boss.id)  # its log-in needs a TOTP code
    db.dispose()
    yield FuzzTarget(create_app(config), player, operator)


@pytest.fixture(scope="module")
def api_schema(fuzz_target: FuzzTarget) -> schemathesis.BaseSchema:
    api = schemathesis.openapi.from_asgi("/openapi.json", fuzz_target.app)
    # an invalid request may be refused with any documented 4xx: 413 for an oversized body
    # (e.g. thousands of test_draws) is a refusal too
    api.config.checks.negative_data_rejection.expected_statuses = [
        str(status) for status in (400, 401, 403, 404, 405, 406, 409, 413, 415, 422, 428, 429)]
    return api


def fuzz_operation(operation: APIOperation, mode: GenerationMode, target: FuzzTarget) -> None:
    """Send ``EXAMPLES`` generated requests of one mode to one operation and validate each."""
    operator_path = operation.path.startswith(("/api/v1/operator", "/api/v1/players/{"))
    token = target.operator_token if operator_path else target.player_token
    needs_token = any(p.name.lower() == "authorization" for p in operation.headers or [])

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    def send(case: schemathesis.Case) -> None:
        headers = {k: v for k, v in (case.headers or {}).items()
                   if k.lower() != "authorization"}
        if needs_token:
            headers["Authorization"] = f"Bearer {token}"
        case.headers = headers
        response = case.call_and_validate(checks=CHECKS)
        SENT[operation.label] = SENT.get(operation.label, 0) + 1
        STATUSES[response.status_code] = STATUSES.get(response.status_code, 0) + 1

    send()


@pytest.mark.slow
def test_api_answers_every_generated_request_as_documented(
        api_schema: schemathesis.BaseSchema, fuzz_target: FuzzTarget,
        subtests: pytest.Subtests) -> None:
    # The operations are walked here rather than by schemathesis's pytest plugin, which reaches
    # into pytest internals that pytest 9.2 removed (``Function._nodeid``).
    operations = [result.ok() for result in api_schema.get_all_operations()]
    # Operations that end the player's session or play go last, so the rest run logged in.
    operations.sort(key=lambda op: op.label in CLOSING)
    assert len(operations) >= 20, [op.label for op in operations]
    for operation in operations:
        # Only a body, query or path parameter can be made invalid: the one header, the token,
        # is replaced by a live one (bad tokens are test_hostile.py's).
        invalidable = any(len(part) for part in (operation.body, operation.query,
                                                 operation.path_parameters))
        modes = [GenerationMode.POSITIVE] + [GenerationMode.NEGATIVE] * invalidable
        for mode in modes:
            with subtests.test(operation=operation.label, mode=mode.value):
                fuzz_operation(operation, mode, fuzz_target)
