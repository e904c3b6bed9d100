"""Operator mode: a background probe of the operator's wallet (ADR 0057).

Readiness is about *this* node (its database takes a write, it is not draining): a wallet
outage is every node's at once, and pulling them all out of the load balancer turns it into a
full outage (players could not even see their history). So the wallet's health is its own
metric, ``starfever_wallet_up``, and alert, from this probe: every ``probe`` seconds each worker
sends one signed ``balance`` call (``readiness.wallet_answers``, the endpoint's timeout) on a
daemon thread. A hanging wallet costs the probe's thread, never a request. Real calls' outcomes
stay in ``starfever_wallet_call_errors`` and ``starfever_wallet_call_seconds``; the probe is
what says "down" at night with no traffic, and "the secret is wrong" before a player's spin."""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING

from starfever.server import metrics
from starfever.server.services.errors import Unavailable

if TYPE_CHECKING:
    from starfever.server.spin.wallets import WalletPort

log = logging.getLogger("starfever.server")

UNKNOWN, ANSWERS, DOWN, NONE = "unknown", "answers", "down", "none"
"""What ``/readyz`` says of the wallet: not probed yet, answered, did not, no operator."""


class WalletProbe:
    """Probes ``wallet`` (``WalletPort.ready``) every ``interval`` seconds on a thread."""

    def __init__(self, wallet: WalletPort, interval: float) -> None:
        self.wallet = wallet
        self.interval = interval
        self.state = UNKNOWN if wallet.calls_operator else NONE
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def probe(self) -> str:
        """One probe: the state, also set in the metrics (and logged when it changes)."""
        started = time.perf_counter()
        try:
            self.wallet.ready()
            state, why = ANSWERS, ""
        except Unavailable as error:
            state, why = DOWN, error.message
        except Exception as error:  # a probe never dies of a surprise: it says down
            state, why = DOWN, f"{type(error).__name__}: {error}"
        metrics.observe_wallet_probe(state == ANSWERS, time.perf_counter() - started)
        if state != self.state:
            if state == DOWN:
                log.error("the operator's wallet is down: %s", why)
            elif self.state == DOWN:
                log.warning("the operator's wallet answers again")
        self.state = state
        return state

    def start(self) -> WalletProbe:
        """Probe now and every ``interval`` seconds (operator mode only)."""
        if self.wallet.calls_operator and self._thread is None:
            self._thread = threading.Thread(target=self._run, daemon=True,
                                            name="starfever-wallet-probe")
            self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            self.probe()
            self._stop.wait(self.interval)

    def stop(self) -> None:
        """Stop probing (a probe in flight ends with its call's timeout; not awaited)."""
        self._stop.set()
        self._thread = None


__all__ = ["ANSWERS", "DOWN", "NONE", "UNKNOWN", "WalletProbe"]
