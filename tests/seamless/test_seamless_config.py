"""``--wallet operator``: its configuration, refused as one line when incomplete."""

from __future__ import annotations

from pathlib import Path

import pytest

from starfever.server.seamless_config import OperatorConfig, operator_config_from_env
from starfever.server.settings import SettingsError
from tests.harness import run_cli

GOOD = {"STARFEVER_WALLET": "operator", "STARFEVER_WALLET_URL": "http://127.0.0.1:9000",
        "STARFEVER_OPERATOR_SECRET": "s" * 32}


def test_ledger_is_the_default_and_operator_mode_reads_its_settings() -> None:
    assert operator_config_from_env({}) is None
    assert operator_config_from_env({"STARFEVER_WALLET": "ledger"}) is None
    assert operator_config_from_env(GOOD) == OperatorConfig("http://127.0.0.1:9000", "s" * 32)
    assert operator_config_from_env({**GOOD, "STARFEVER_WALLET_TIMEOUT": "0.5"}).timeout == 0.5


@pytest.mark.parametrize("change", [
    {"STARFEVER_WALLET": "bank"}, {"STARFEVER_WALLET_URL": ""},
    {"STARFEVER_OPERATOR_SECRET": "s" * 31}, {"STARFEVER_OPERATOR_SECRET": ""},
    {"STARFEVER_WALLET_TIMEOUT": "soon"}, {"STARFEVER_WALLET_TIMEOUT": "0"}])
def test_an_incomplete_operator_configuration_is_refused(change: dict[str, str]) -> None:
    with pytest.raises(SettingsError):
        operator_config_from_env({**GOOD, **change})


def test_serve_refuses_a_missing_or_short_secret_in_one_line() -> None:
    for secret in ("", "short"):
        done = run_cli("serve", "--wallet", "operator", "--wallet-url", "http://127.0.0.1:9",
                       env={"STARFEVER_OPERATOR_SECRET": secret}, timeout=60)
        assert done.returncode == 2
        assert done.stderr.count("\n") == 1 and "STARFEVER_OPERATOR_SECRET" in done.stderr


def test_production_refuses_operator_mode_without_a_public_url() -> None:
    """Launch addresses are built on ``--public-url``, never on a request's ``Host`` header:
    production refuses to start without one; a URL that is not an origin is refused."""
    with pytest.raises(SettingsError, match="STARFEVER_PUBLIC_URL"):
        operator_config_from_env({**GOOD, "STARFEVER_ENV": "production"})
    made = operator_config_from_env({**GOOD, "STARFEVER_ENV": "production",
                                     "STARFEVER_PUBLIC_URL": "https://game.example/"})
    assert made is not None and made.public_url == "https://game.example"
    assert operator_config_from_env(GOOD).public_url is None  # development: serve's address
    for bad in ("game.example", "ftp://game.example", "https://game.example/?a=1",
                "https://user:pw@game.example", "https://game.example/\"><script>"):
        with pytest.raises(SettingsError, match="PUBLIC_URL"):
            operator_config_from_env({**GOOD, "STARFEVER_PUBLIC_URL": bad})


def test_the_wallets_tls_files_are_checked_at_start(tmp_path: Path) -> None:
    https = {**GOOD, "STARFEVER_WALLET_URL": "https://wallet.example"}
    not_pem = tmp_path / "not.pem"
    not_pem.write_text("not a certificate\n")
    for change, says in (({"STARFEVER_WALLET_CA_FILE": "/no/such/file"}, "no readable file"),
                         ({"STARFEVER_WALLET_CA_FILE": str(not_pem)}, "cannot be loaded"),
                         ({"STARFEVER_WALLET_CLIENT_CERT": str(not_pem)}, "cannot be loaded"),
                         ({"STARFEVER_WALLET_CLIENT_KEY": str(not_pem)}, "needs")):
        with pytest.raises(SettingsError, match=says):
            operator_config_from_env({**https, **change})
    with pytest.raises(SettingsError, match="https://"):  # TLS files on a plain http URL
        operator_config_from_env({**GOOD, "STARFEVER_WALLET_CA_FILE": str(not_pem)})


def test_serve_in_production_refuses_operator_mode_without_a_public_url_in_one_line() -> None:
    done = run_cli("serve", "--wallet", "operator", "--wallet-url", "http://127.0.0.1:9",
                   env={"STARFEVER_OPERATOR_SECRET": "s" * 32, "STARFEVER_ENV": "production"},
                   timeout=60)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "STARFEVER_PUBLIC_URL" in done.stderr, done.stderr
