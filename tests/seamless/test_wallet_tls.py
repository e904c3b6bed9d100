"""``https://`` wallet URLs (OPERATOR-WALLET.md "Transport", ADR 0054): the reference wallet
serves TLS with a certificate of a CA made here (``cryptography``); Star Fever's two clients
(the blocking one of the retrier and the event loop's) verify it against the configured CA
file, refuse a certificate they cannot verify, and present a client certificate where the
wallet demands one (mutual TLS). A real server plays against the https wallet too."""

from __future__ import annotations

import ssl
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from ipaddress import IPv4Address
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from starfever.seamless import protocol as p
from starfever.seamless.client import (
    AsyncWalletClient,
    WalletClient,
    WalletEndpoint,
    WalletReply,
    WalletUnavailable,
)
from tests.harness import (
    Databases,
    OperatorWallet,
    expect,
    launched_player,
    operator_mode_env,
    run_coroutine,
    start_server,
)
from tests.seamless.conftest import SECRET


@dataclass(frozen=True, slots=True)
class Pki:
    """PEM files: two CAs, the wallet's certificate (by ``ca``), a client's (by ``client_ca``)."""

    ca: Path
    other_ca: Path
    wallet_cert: Path
    wallet_key: Path
    client_ca: Path
    client_cert: Path
    client_key: Path


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _ca(folder: Path, name: str) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.now(UTC)
    cert = (x509.CertificateBuilder().subject_name(_name(name)).issuer_name(_name(name))
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(minutes=5)).not_valid_after(now + timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True,
                                         crl_sign=True, content_commitment=False,
                                         key_encipherment=False, data_encipherment=False,
                                         key_agreement=False, encipher_only=False,
                                         decipher_only=False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()),
                           critical=False)
            .sign(key, hashes.SHA256()))
    path = folder / f"{name}.pem"
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return key, cert, path


def _issue(folder: Path, name: str, ca: tuple[ec.EllipticCurvePrivateKey, x509.Certificate],
           *, client: bool) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.now(UTC)
    builder = (x509.CertificateBuilder().subject_name(_name(name))
               .issuer_name(ca[1].subject).public_key(key.public_key())
               .serial_number(x509.random_serial_number())
               .not_valid_before(now - timedelta(minutes=5))
               .not_valid_after(now + timedelta(days=1))
               .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
               .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                   ca[0].public_key()), critical=False)
               .add_extension(x509.ExtendedKeyUsage(
                   [ExtendedKeyUsageOID.CLIENT_AUTH if client
                    else ExtendedKeyUsageOID.SERVER_AUTH]), critical=False))
    if not client:
        builder = builder.add_extension(x509.SubjectAlternativeName(
            [x509.IPAddress(IPv4Address("127.0.0.1")), x509.DNSName("localhost")]),
            critical=False)
    cert = builder.sign(ca[0], hashes.SHA256())
    cert_path, key_path = folder / f"{name}.pem", folder / f"{name}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    folder = tmp_path_factory.mktemp("pki")
    ca_key, ca_cert, ca = _ca(folder, "wallet-ca")
    _, _, other = _ca(folder, "another-ca")
    client_ca_key, client_ca_cert, client_ca = _ca(folder, "client-ca")
    wallet_cert, wallet_key = _issue(folder, "wallet", (ca_key, ca_cert), client=False)
    client_cert, client_key = _issue(folder, "star-fever", (client_ca_key, client_ca_cert),
                                     client=True)
    return Pki(ca, other, wallet_cert, wallet_key, client_ca, client_cert, client_key)


def _admin_tls(pki: Pki) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(pki.ca))
    context.load_cert_chain(str(pki.client_cert), str(pki.client_key))
    return context


@pytest.fixture(scope="module")
def https_wallet(pki: Pki, tmp_path_factory: pytest.TempPathFactory) -> Iterator[OperatorWallet]:
    started = OperatorWallet(tmp_path_factory.mktemp("https-wallet"), args=(
        "--ssl-certfile", str(pki.wallet_cert), "--ssl-keyfile", str(pki.wallet_key)),
        verify=ssl.create_default_context(cafile=str(pki.ca)))
    yield started
    started.stop()


@pytest.fixture(scope="module")
def mtls_wallet(pki: Pki, tmp_path_factory: pytest.TempPathFactory) -> Iterator[OperatorWallet]:
    started = OperatorWallet(tmp_path_factory.mktemp("mtls-wallet"), args=(
        "--ssl-certfile", str(pki.wallet_cert), "--ssl-keyfile", str(pki.wallet_key),
        "--ssl-client-ca", str(pki.client_ca)), verify=_admin_tls(pki))
    yield started
    started.stop()


def _balance(endpoint: WalletEndpoint, player: str) -> tuple[int | str, int | str]:
    """The player's balance by the blocking client and by the event loop's (or why not)."""
    fields = {"player_id": player, "session_id": "s-1", "operator_session": "op-1",
              "currency": "EUR"}

    def blocking() -> int | str:
        client = WalletClient(endpoint)
        try:
            return client.call(p.BALANCE, fields).balance
        except WalletUnavailable as error:
            return str(error)
        finally:
            client.close()

    async def on_the_loop() -> int | str:
        client = AsyncWalletClient(endpoint)
        try:
            reply: WalletReply = await client.call(p.BALANCE, fields)
            return reply.balance
        except WalletUnavailable as error:
            return str(error)
        finally:
            await client.close()

    return blocking(), run_coroutine(on_the_loop())


def test_an_https_wallet_is_verified_against_the_configured_ca_file(
        pki: Pki, https_wallet: OperatorWallet) -> None:
    player = f"tls-{uuid.uuid4().hex[:8]}"
    https_wallet.player(player, 4_321)
    assert https_wallet.url.startswith("https://")
    endpoint = WalletEndpoint(https_wallet.url, SECRET, 5, ca_file=str(pki.ca))
    assert _balance(endpoint, player) == (4_321, 4_321)


@pytest.mark.parametrize("ca_file", ["another CA", "the system's trust store"])
def test_a_wallet_certificate_that_cannot_be_verified_is_refused(
        pki: Pki, https_wallet: OperatorWallet, ca_file: str) -> None:
    """Signed by a CA the client does not trust (another CA file, or the system's store, which
    knows no CA made here): no call goes through, both clients."""
    player = f"tls-{uuid.uuid4().hex[:8]}"
    https_wallet.player(player, 100)
    endpoint = WalletEndpoint(https_wallet.url, SECRET, 5,
                              ca_file=str(pki.other_ca) if ca_file == "another CA" else None)
    for failure in _balance(endpoint, player):
        assert isinstance(failure, str) and "CERTIFICATE_VERIFY_FAILED" in failure, failure
    assert not https_wallet.transactions(player)  # nothing reached its books


def test_mutual_tls_presents_the_configured_client_certificate(
        pki: Pki, mtls_wallet: OperatorWallet) -> None:
    player = f"tls-{uuid.uuid4().hex[:8]}"
    mtls_wallet.player(player, 777)
    without = WalletEndpoint(mtls_wallet.url, SECRET, 5, ca_file=str(pki.ca))
    for failure in _balance(without, player):
        assert isinstance(failure, str), failure  # the wallet refuses the handshake
    with_cert = WalletEndpoint(mtls_wallet.url, SECRET, 5, ca_file=str(pki.ca),
                               client_cert=str(pki.client_cert), client_key=str(pki.client_key))
    assert _balance(with_cert, player) == (777, 777)


@pytest.mark.slow
def test_a_server_plays_against_an_https_wallet_verified_by_its_ca_file(
        pki: Pki, mtls_wallet: OperatorWallet, tmp_path_factory: pytest.TempPathFactory) -> None:
    """``--wallet-url https://...`` with ``STARFEVER_WALLET_CA_FILE`` and the client
    certificate: a launched player's spins are debited and credited over mutual TLS."""
    folder = tmp_path_factory.mktemp("https-server")
    env = {**operator_mode_env(mtls_wallet), "STARFEVER_WALLET_CA_FILE": str(pki.ca),
           "STARFEVER_WALLET_CLIENT_CERT": str(pki.client_cert),
           "STARFEVER_WALLET_CLIENT_KEY": str(pki.client_key)}
    with Databases(folder / "db") as databases, \
            start_server(databases, "sqlite", folder, env,
                         args=("--wallet", "operator", "--wallet-url", mtls_wallet.url)) as server:
        player = f"tls-{uuid.uuid4().hex[:8]}"
        mtls_wallet.player(player, 1_000)
        token = launched_player(server, mtls_wallet.secret, player)
        answer = expect(server.spin(token), 201).json()
        win = int(answer["round"]["total_win"]) - int(answer["round"]["total_bet"])
        assert server.balance(token) == mtls_wallet.balance(player) == 1_000 + win
        assert [t["method"] for t in mtls_wallet.transactions(player)] == ["debit", "credit"]
