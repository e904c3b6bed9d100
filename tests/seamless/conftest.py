"""The reference operator wallet (tests/harness.py's :class:`OperatorWallet`) for a module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.harness import OPERATOR_SECRET as SECRET
from tests.harness import OperatorWallet

__all__ = ["SECRET", "OperatorWallet"]


@pytest.fixture(scope="module")
def operator_wallet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OperatorWallet]:
    """A reference wallet for the module."""
    wallet = OperatorWallet(tmp_path_factory.mktemp("operator-wallet"))
    yield wallet
    wallet.stop()
