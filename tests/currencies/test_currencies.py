"""Currencies as data (ADR 0076): the shipped files, the loader's refusals, the pairing with a
model (the same exact figures class by class, or refused)."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from starfever.currencies import (
    DEFAULT_CURRENCY,
    UnknownCurrency,
    check_currency_model,
    currency_codes,
    currency_from_dict,
    load_currency,
    market_currency,
    parse_currencies,
)
from starfever.engine.model import load_model
from starfever.engine.symbols import BET_CLASSES


def test_shipped_currencies_are_eur_and_gbp_with_the_model_classes() -> None:
    assert currency_codes() == ["EUR", "GBP"]
    assert DEFAULT_CURRENCY == "EUR"
    for code in currency_codes():
        found = load_currency(code)
        assert found.code == code and found.exponent == 2 and found.share_base == 100
        assert found.line_bets == BET_CLASSES
        assert found.pool_seed == 100_000 and found.contribution_rate == Fraction(1, 100)
        check_currency_model(found, load_model("default"))


def test_served_list_is_parsed_in_order_and_refused_when_unknown_or_twice() -> None:
    assert parse_currencies("gbp, EUR") == ("GBP", "EUR")
    with pytest.raises(UnknownCurrency, match="unknown currency 'USD'; currencies: EUR, GBP"):
        parse_currencies("EUR,USD")
    with pytest.raises(UnknownCurrency, match="named twice"):
        parse_currencies("EUR,EUR")
    with pytest.raises(UnknownCurrency, match="separated by commas"):
        parse_currencies("EUR,")


@pytest.mark.parametrize(("change", "message"), [
    ({"line_bets": [1, 7]}, "line_bets must be"),
    ({"line_bets": [2, 1]}, "line_bets must be"),
    ({"share_base": 1000}, "share_base must be 100"),
    ({"code": "eur"}, "three capital letters"),
    ({"exponent": True}, "exponent must be"),
    ({"pool": {"seed": -1, "contribution_rate": "1/100"}}, "pool.seed"),
    ({"pool": {"seed": 1, "contribution_rate": 0.01}}, "contribution_rate"),
    ({"symbol": "€"}, "fields must be"),
])
def test_a_bad_file_is_refused_in_one_line(change: dict[str, object], message: str) -> None:
    data = json.loads(json.dumps({"code": "EUR", "description": "", "exponent": 2,
                                  "line_bets": [1, 2], "share_base": 100,
                                  "pool": {"seed": 100000, "contribution_rate": "1/100"}}))
    data.update(change)
    with pytest.raises(UnknownCurrency, match=message):
        currency_from_dict(data, "X.json")


def test_a_pool_other_than_the_models_is_refused_and_the_de_model_narrows_the_ladder() -> None:
    data = {"code": "EUR", "description": "", "exponent": 2, "line_bets": list(BET_CLASSES),
            "share_base": 100, "pool": {"seed": 5, "contribution_rate": "1/100"}}
    with pytest.raises(UnknownCurrency, match="differs from the model's"):
        check_currency_model(currency_from_dict(data, "X.json"), load_model("default"))
    de = load_model("de")  # no progressive: the pool's figures do not apply
    check_currency_model(currency_from_dict(data, "X.json"), de)
    assert load_currency("GBP").ladder(de) == de.line_bets


def test_market_currency_reads_the_profile_field() -> None:
    assert market_currency("at") is None
    assert market_currency("no-such-market") is None


@pytest.mark.skipif("uk" not in __import__("starfever.markets").markets.market_names(),
                    reason="no market profile names a currency yet")
def test_a_market_with_a_currency_defaults_to_it_and_is_refused_without_it() -> None:
    from starfever.server.settings import SettingsError, settings_from_env

    currency = market_currency("uk")
    assert currency is not None
    assert settings_from_env({"STARFEVER_MARKET": "uk"}).served_currencies == (currency,)
    with pytest.raises(SettingsError, match="which this server does not serve"):
        settings_from_env({"STARFEVER_MARKET": "uk", "STARFEVER_CURRENCIES": "EUR"})


def test_settings_serve_eur_by_default_and_the_list_given() -> None:
    from starfever.server.settings import SettingsError, settings_from_env

    assert settings_from_env({}).served_currencies == ("EUR",)
    assert settings_from_env({"STARFEVER_CURRENCIES": "GBP,EUR"}).served_currencies == (
        "GBP", "EUR")
    with pytest.raises(SettingsError, match="STARFEVER_CURRENCIES: unknown currency 'ZZZ'"):
        settings_from_env({"STARFEVER_CURRENCIES": "ZZZ"})


def test_the_round_details_page_writes_a_rounds_amounts_in_its_currency() -> None:
    from starfever.server.api.round_details_page import money

    assert money(123456, "en", "GBP") == "£1,234.56"
    assert money(123456, "de", "GBP") == "1.234,56 £"
    assert money(-5, "en") == "-€0.05"


def test_a_rounds_currency_is_hashed_unless_eur_so_a_eur_round_hashes_as_before() -> None:
    from dataclasses import fields, replace
    from datetime import UTC, datetime

    from starfever.server.books import RoundRow
    from starfever.server.services.chain import IDENTIFIED, round_hash

    values = {f.name: 0 for f in fields(RoundRow)}
    values.update(idempotency_key="k", request_hash="h", model_name="default",
                  model_version="3.0", feature=None, draws="[]", events="[]", test=False,
                  created_at=datetime(2026, 12, 4, tzinfo=UTC), prev_hash="0" * 64, hash="",
                  hash_scheme=IDENTIFIED, build_sha256=None, model_sha256=None, session_id=None,
                  grant_id=None, paid_win=None)
    key = b"k" * 32
    eur = RoundRow(**{**values, "currency": "EUR"})
    gbp = replace(eur, currency="GBP")
    legacy = {k: v for k, v in values.items() if k != "currency"}
    assert round_hash(eur, key) == round_hash(RoundRow(**legacy), key)  # the default is EUR
    assert round_hash(gbp, key) != round_hash(eur, key)
    assert round_hash(gbp, key) != round_hash(replace(eur, currency="USD"), key)


def test_a_rounds_market_is_hashed_when_recorded_so_an_older_round_hashes_as_before() -> None:
    """ADR 0078: a round without a market (stored before migration 0028) hashes as it did; a
    recorded one is chained, as an object, never to be read as a currency code."""
    from dataclasses import fields, replace
    from datetime import UTC, datetime

    from starfever.server.books import RoundRow
    from starfever.server.services.chain import IDENTIFIED, round_hash

    values = {f.name: 0 for f in fields(RoundRow)}
    values.update(idempotency_key="k", request_hash="h", model_name="default",
                  model_version="3.0", feature=None, draws="[]", events="[]", test=False,
                  created_at=datetime(2026, 12, 5, tzinfo=UTC), prev_hash="0" * 64, hash="",
                  hash_scheme=IDENTIFIED, build_sha256=None, model_sha256=None, session_id=None,
                  grant_id=None, paid_win=None, currency="EUR", market=None)
    key = b"k" * 32
    before = RoundRow(**{k: v for k, v in values.items() if k != "market"})
    unrecorded = RoundRow(**values)
    assert round_hash(unrecorded, key) == round_hash(before, key)
    at = replace(unrecorded, market="at")
    assert len({round_hash(r, key) for r in (unrecorded, at, replace(at, market="uk"))}) == 3
    # a EUR round of a market named like a currency is not a GBP round without one
    assert round_hash(replace(at, market="GBP"), key) != round_hash(
        replace(unrecorded, currency="GBP"), key)
