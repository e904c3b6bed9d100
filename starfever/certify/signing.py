"""Ed25519 keys and detached signatures of manifests (the ``cryptography`` package).

Keys are PEM files: the private key PKCS#8 (encrypted when ``$STARFEVER_SIGNING_PASSPHRASE``
is set), the public key SubjectPublicKeyInfo, so OpenSSL and other tools read them too. A
signature is a small JSON file beside what it signs (``FILE.sig``): the algorithm, the SHA-256
of the signed bytes, the fingerprint of the public key (SHA-256 of its 32 raw bytes) and the
64-byte signature in base64. What is signed is the exact bytes of the file (ADR 0021).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from starfever.engine.errors import InputError

SIGNATURE_FORMAT = "starfever-signature-v1"
PASSPHRASE_ENV = "STARFEVER_SIGNING_PASSPHRASE"


class SigningError(InputError):
    """A key or signature file that cannot be used."""


def fingerprint(public: Ed25519PublicKey) -> str:
    """SHA-256 (hex) of the public key's 32 raw bytes."""
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()


def _passphrase(*, new_key: bool = False) -> bytes | None:
    value = os.environ.get(PASSPHRASE_ENV)
    if new_key and value == "":  # a key meant to be encrypted would silently not be
        raise SigningError(f"{PASSPHRASE_ENV} is set but empty: give a passphrase, or unset it "
                           "for a key without one")
    return value.encode("utf-8") if value else None


def generate(prefix: str | Path) -> tuple[Path, Path, str]:
    """Write ``PREFIX.key`` (private, mode 0600) and ``PREFIX.pub``; refuses to overwrite.
    Returns both paths and the public key's fingerprint. A prefix that names a folder (one
    that exists, or written with a trailing ``/``) is refused: ``Path`` would drop the slash
    and write ``sub.key`` beside the folder instead of in it."""
    text = str(prefix)
    prefix = Path(prefix)
    if not text or prefix.name in ("", ".", ".."):
        raise SigningError(f"--out {text!r} names no file: give a prefix such as lab "
                           "(for lab.key and lab.pub)")
    if text.endswith(("/", os.sep)) or prefix.is_dir():
        raise SigningError(f"--out {text!r} names a folder, not a file: give a prefix such "
                           f"as {str(prefix / 'lab')!r} (for lab.key and lab.pub in it)")
    private_path, public_path = Path(f"{prefix}.key"), Path(f"{prefix}.pub")
    for path in (private_path, public_path):
        if path.exists():
            raise SigningError(f"{path} exists; a key is never overwritten")
    key = Ed25519PrivateKey.generate()
    phrase = _passphrase(new_key=True)
    encryption: serialization.KeySerializationEncryption = (
        serialization.BestAvailableEncryption(phrase) if phrase else
        serialization.NoEncryption())
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            encryption)
    fd = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(pem)
    public_path.write_bytes(key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    return private_path, public_path, fingerprint(key.public_key())


def load_private(path: Path) -> Ed25519PrivateKey:
    """An Ed25519 private key from a PEM file (passphrase from the environment if needed)."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise SigningError(f"cannot read the signing key {path}: {error.strerror}") from None
    try:
        key = serialization.load_pem_private_key(data, password=_passphrase())
    except TypeError:
        raise SigningError(f"the signing key {path} is encrypted: set ${PASSPHRASE_ENV}"
                           ) from None
    except (ValueError, UnsupportedAlgorithm):
        raise SigningError(f"{path} is not a readable PEM private key (or the passphrase in "
                           f"${PASSPHRASE_ENV} is wrong)") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise SigningError(f"{path} is not an Ed25519 key")
    return key


def load_public(path: Path) -> Ed25519PublicKey:
    """An Ed25519 public key from a PEM file."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise SigningError(f"cannot read the public key {path}: {error.strerror}") from None
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, UnsupportedAlgorithm):
        raise SigningError(f"{path} is not a PEM public key") from None
    if not isinstance(key, Ed25519PublicKey):
        raise SigningError(f"{path} is not an Ed25519 public key")
    return key


def sign_file(key: Ed25519PrivateKey, path: Path, out: Path | None = None) -> Path:
    """Sign the bytes of ``path``; write the signature to ``out`` (default ``PATH.sig``)."""
    data = path.read_bytes()
    target = out or Path(f"{path}.sig")
    body = {"format": SIGNATURE_FORMAT, "algorithm": "Ed25519", "file": path.name,
            "sha256": hashlib.sha256(data).hexdigest(),
            "public_key_sha256": fingerprint(key.public_key()),
            "signature": base64.b64encode(key.sign(data)).decode("ascii")}
    target.write_text(json.dumps(body, indent=1, sort_keys=True) + "\n", encoding="ascii")
    return target


@dataclass(frozen=True)
class Verified:
    """A signature that holds."""

    sha256: str
    """Of the signed bytes."""
    public_key_sha256: str


def verify_file(public: Ed25519PublicKey, path: Path, signature: Path | None = None) -> Verified:
    """Check the signature (default ``PATH.sig``) of ``path``'s bytes under ``public``;
    :class:`SigningError` with one line if it does not hold."""
    sig_path = signature or Path(f"{path}.sig")
    try:
        body = json.loads(sig_path.read_text(encoding="ascii"))
        raw = base64.b64decode(body["signature"], validate=True)
    except OSError as error:
        raise SigningError(f"cannot read the signature {sig_path}: {error.strerror}") from None
    except (ValueError, KeyError, TypeError, binascii.Error, UnicodeDecodeError):
        raise SigningError(f"{sig_path} is not a Star Fever signature file") from None
    if not isinstance(body, dict) or body.get("format") != SIGNATURE_FORMAT:
        raise SigningError(f"{sig_path} is not a {SIGNATURE_FORMAT} signature")
    data = path.read_bytes()
    try:
        public.verify(raw, data)
    except InvalidSignature:
        raise SigningError(f"the signature {sig_path} does not hold for {path} under the key "
                           f"{fingerprint(public)[:16]}...") from None
    return Verified(sha256=hashlib.sha256(data).hexdigest(),
                    public_key_sha256=fingerprint(public))
