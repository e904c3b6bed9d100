"""Every archived model version keeps the content hash its stored rounds record, and is read
under the UPGRADE unit it was played by (1 x total bet: every version made before the unit was
a field of the model)."""

from __future__ import annotations

import pytest

from starfever.engine.model import UPGRADE_TOTAL_BET, load_model_version

ARCHIVED = {
    ("default", "1.0"): "5743f5c63c21ceae1016ff02415d8f0e63afe5502b0802caabde40116cb215eb",
    ("default", "2.0"): "4395db1be6fb4ba75f475a020b88524a620f3c576772ae4f16c7cbf74b857967",
    ("rtp94", "1.0"): "53fe092826687a3ed9d9960e02c818fa52f16e9004ec00e00a09b1cb7afb8bb3",
    ("rtp94", "2.0"): "04e6359d4a22d259ffe6115398db965c999a9a57235b7aecb2f438b55a165df8",
    ("rtp96", "1.0"): "38a73f56fa87148906d1d4ae9a7f17220f212f63c9a8c7dd087681f7957df801",
    ("rtp96", "2.0"): "385f90bab921baccdc83b2afae1f8480847bb71e2dd08acd00ae8e1aa723765a",
    ("low-volatility", "1.0+01fa0cc592c6"):
        "cdf9347332469ec28eb130db221e6fc56cdeecd166ab33daaa62d0fa96c80848",
    ("low-volatility", "1.0+2da66a03c3c0"):
        "cfe5c64dbe5fc3fbde63eb3f814e85574950969450294bb81fb58405cd7754bf",
    ("high-volatility", "1.0+8080e273248c"):
        "bcc4566b0374f2a9b734065be4787b0531dfe72fca2bcee8a0950c854323e0b6",
    ("capped", "1.0"): "0e9c8938477f2d8b4a68604ced12dbd68b84af20cbadd3e9240784f5cb5640a9",
}
"""The hashes as the shipped figures and the stored rounds of each version name them."""


@pytest.mark.parametrize(("name", "version"), sorted(ARCHIVED))
def test_archived_version_keeps_its_hash_and_its_upgrade_unit(name: str, version: str) -> None:
    model = load_model_version(name, version)
    assert model is not None, f"{name}-{version}.json is not in the archive"
    assert model.sha256 == ARCHIVED[(name, version)]
    assert model.hold_and_cash.upgrade_unit == UPGRADE_TOTAL_BET
