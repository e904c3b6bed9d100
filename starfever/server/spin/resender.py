"""The installation's one resender of operator-mode wallet calls (ADR 0062, ADR 0080): it
sends the pending credits and rollbacks again until the operator's wallet answers them, and
rolls back stale debits.

A thread of every server process runs an event loop of its own; every ``config.retry``
seconds (a *tick*) the process that holds the installation's lease (:data:`RESENDER_LEASE`)
works, the others only try to take it (a read). The holder renews it before each call it
starts once a third of its time to live has passed, and a call lasts at most the wallet's
timeout, so every call ends inside the lease: no two processes send at once.

A tick sends one call, the oldest due (a *probe*). While the wallet is *down* (the last probe
got no answer) the tick does not wait for the probes under way: a probe held by a hanging
wallet does not hold up the next tick's, so the first probe sent after the wallet's recovery
is answered at once, not the one under way when it recovered, which ends only at its
timeout. At most :data:`PROBES` are under way at once; while the wallet answers, a pass under
way holds the next tick back. A probe answered (acknowledged or refused: the wallet is back)
starts the *drain*: every due call, :data:`RESEND_CONCURRENCY` at a time, in batches of
:data:`RETRY_BATCH`, until one gets no answer or none is due. After a recovery (the probe
answered was sent at *t*, the wallet down before it) the drain also takes the calls that
failed before *t* whatever their backoff, those recorded before *t* and never resent (their
requests' own sends may be held until their timeout), and the probes under way sent before
*t*: the operator answers a repeated ``transaction_id`` with its first answer (ADR 0080).
Acknowledgements are recorded in the group commit of the wallet's call book (``call_book``),
with the spins'; one lost leaves its call pending, sent again and answered with the first
answer. A call that fails alone (the wallet's fault with that one call) is skipped by its
backoff at the next ticks, so it does not hold the others up.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from starfever.seamless.client import AsyncWalletClient, WalletReply
from starfever.server.db import database_unavailable
from starfever.server.models import WalletCall
from starfever.server.services.errors import utcnow
from starfever.server.services.lease import Lease
from starfever.server.spin.seamless_wallet import STALE_BATCH, SeamlessWallet

log = logging.getLogger("starfever.server")

RESENDER_LEASE = "wallet-resender"
"""The lease (``services.lease``) of the installation's one resender."""
RETRY_BATCH = 200
"""Due calls read at once by the drain (a full batch answered: the next one at once)."""
RESEND_CONCURRENCY = 16
"""Calls the drain has under way at once (ADR 0080: with 8 threads and a transaction per
acknowledgement, 2,824 calls took 10 s; one at a time, 516 took 39 s)."""
PROBES = 6
"""Probes under way at once at most: a hanging wallet holds each for the timeout, and at the
defaults (timeout 5 s, retry 1 s) a tick starts one every second."""

Request = tuple[WalletCall, dict[str, Any]]


async def send_batch(wallet: SeamlessWallet, client: AsyncWalletClient,
                     batch: list[Request], keep_going: Callable[[], bool]) -> tuple[int, bool]:
    """Send ``batch``, :data:`RESEND_CONCURRENCY` calls at a time, none once one got no
    answer or ``keep_going`` said no: (how many were acknowledged and recorded, whether it
    stopped so)."""
    failed = asyncio.Event()
    slots = asyncio.Semaphore(RESEND_CONCURRENCY)

    async def one(request: Request) -> bool:
        try:
            async with slots:
                if failed.is_set() or not keep_going():
                    failed.set()
                    return False
                answer = await wallet.send_recorded(client, request)
            if answer is None:
                failed.set()
            if not isinstance(answer, WalletReply):
                return answer is True
            await asyncio.wrap_future(wallet.books.acknowledge(request[0].transaction_id,
                                                               answer))
            return True
        except Exception as error:  # the books' database: the call stays pending, sent again
            failed.set()
            log.warning("the resender could not record %s %s: %s", request[0].kind,
                        request[0].transaction_id, str(getattr(error, "orig", error))[:200])
            return False

    acknowledged = sum(await asyncio.gather(*(one(request) for request in batch)))
    return acknowledged, failed.is_set()


Read = Callable[[int], list[Request]]
"""The due calls to send, at most so many (``SeamlessWallet.due`` with its arguments)."""


async def drain(wallet: SeamlessWallet, client: AsyncWalletClient,
                keep_going: Callable[[], bool], read: Read | None = None) -> int:
    """Send every due call (``read``, by default ``wallet.due``) :func:`send_batch` by
    batch, until one gets no answer, ``keep_going`` says no, or a batch is not full; how many
    were acknowledged."""
    acknowledged = 0
    while True:
        batch = await asyncio.to_thread(read or wallet.due, RETRY_BATCH)
        sent, failed = await send_batch(wallet, client, batch, keep_going)
        acknowledged += sent
        if failed or len(batch) < RETRY_BATCH:
            return acknowledged


@dataclass
class Probes:
    """The probes under way in one resender: each call's transaction id and when it was sent
    (``time.monotonic``); and whether the wallet is *down* (the last probe ended without an
    answer: then the next ticks' probes go out while it is still under way)."""

    under_way: dict[str, float] = field(default_factory=dict)
    down: bool = False

    def sent_since(self, moment: float) -> frozenset[str]:
        """The probes under way sent at or after ``moment``: sent to a wallet that answers,
        they are left to their own answers. Those sent before went to a wallet that gave no
        answer and may be held until their timeout: the drain sends them again."""
        return frozenset(tid for tid, sent in self.under_way.items() if sent >= moment)


async def resend_due(wallet: SeamlessWallet, client: AsyncWalletClient,
                     keep_going: Callable[[], bool] = lambda: True,
                     probes: Probes | None = None,
                     then: Callable[[Read], Awaitable[int]] | None = None) -> int:
    """One pass: send the oldest due call but the probes under way (``probes``, to which it
    belongs while it is sent) alone; if the wallet answers it, ``then(read)`` (by default
    :func:`drain`), where ``read`` leaves out the probes sent since this one, and, if the
    wallet was down, takes in the calls recorded before this one was sent (their own sends
    may be held by the wallet until their timeout). How many were acknowledged."""
    probes = Probes() if probes is None else probes
    due = await asyncio.to_thread(wallet.due, 1, frozenset(probes.under_way))
    if not due or not keep_going():
        return 0
    transaction_id = due[0][0].transaction_id
    sent, sent_at = time.monotonic(), utcnow()
    probes.under_way[transaction_id] = sent
    try:
        answer = await wallet.send_recorded(client, due[0])
    finally:
        del probes.under_way[transaction_id]
    was_down, probes.down = probes.down, answer is None
    if answer is None:
        return 0
    if isinstance(answer, WalletReply):
        await asyncio.wrap_future(wallet.books.acknowledge(transaction_id, answer))

    def read(limit: int) -> list[Request]:
        return wallet.due(limit, probes.sent_since(sent), sent_at if was_down else None)

    rest = then(read) if then is not None else drain(wallet, client, keep_going, read)
    return int(answer is not False) + await rest


def resend_now(wallet: SeamlessWallet, keep_going: Callable[[], bool] = lambda: True) -> int:
    """:func:`resend_due` once, on an event loop, a thread and a client of its own (tests,
    tools): a caller's thread may already run a loop (a browser driver's, in a test process),
    on which ``asyncio.run`` is refused."""
    async def once() -> int:
        client = AsyncWalletClient(wallet.config.endpoint)
        try:
            return await resend_due(wallet, client, keep_going)
        finally:
            await client.close()

    with ThreadPoolExecutor(1, thread_name_prefix="starfever-resend-now") as own:
        return own.submit(asyncio.run, once()).result()


class Resender:
    """The resender's thread in one server process (see the module docstring). One that stops
    hands the lease over; one that dies leaves it to expire after
    :attr:`SeamlessWallet.lease_seconds`."""

    def __init__(self, wallet: SeamlessWallet, lease: Lease | None = None) -> None:
        self.wallet = wallet
        self.lease = lease or Lease(wallet.db, RESENDER_LEASE, wallet.lease_seconds)
        self._stop = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None
        self._probes = Probes()
        self._passes: set[asyncio.Task[Any]] = set()
        self._draining = False
        self._thread = threading.Thread(target=self._run, name="starfever-wallet-retrier",
                                        daemon=True)

    def start(self) -> Resender:
        """Start the thread; returns self."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the thread (the calls under way are given up: pending, they are sent again)
        and hand the lease over."""
        self._stop.set()
        loop, wake = self._loop, self._wake
        if loop is not None and wake is not None:
            with contextlib.suppress(RuntimeError):  # (the loop has ended already)
                loop.call_soon_threadsafe(wake.set)
        self._thread.join(timeout=self.wallet.config.timeout + 5)
        if not self._thread.is_alive():  # (one still sending keeps it until it expires)
            try:
                self.lease.release()
            except Exception:  # the database is gone: the lease expires on its own
                log.warning("the resender's lease was not released; it expires in %.0f s",
                            self.lease.ttl)

    def _keep_going(self) -> bool:
        return not self._stop.is_set() and self.lease.hold()

    async def _holds(self) -> bool:
        return self.lease.hold()  # (in the loop's thread, as every use of the lease)

    def _run(self) -> None:
        asyncio.run(self._main())

    async def _main(self) -> None:
        self._loop, self._wake = asyncio.get_running_loop(), asyncio.Event()
        client = AsyncWalletClient(self.wallet.config.endpoint)
        # the search for stale debits runs every third of the staleness, not at every tick:
        # a debit left without its round is rolled back between 1 and 1 1/3 staleness after it
        every = self.wallet.stale.total_seconds() / 3
        searched = float("-inf")
        try:
            while not self._stop.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), self.wallet.config.retry)
                if self._stop.is_set():
                    break
                if self._draining or len(self._passes) >= PROBES \
                        or (self._passes and not self._probes.down):
                    continue  # (a pass under way: the next one only if the wallet is down)
                if not await self._guarded(self._holds()):
                    continue  # another process resends
                if time.monotonic() - searched >= every and await self._guarded(
                        asyncio.to_thread(self.wallet.roll_back_stale_debits)) != STALE_BATCH:
                    searched = time.monotonic()  # (a full search: again at the next tick)
                task = asyncio.create_task(self._guarded(resend_due(
                    self.wallet, client, self._keep_going, self._probes,
                    then=partial(self._drain, client))))
                self._passes.add(task)
                task.add_done_callback(self._passes.discard)
        finally:
            for task in list(self._passes):
                task.cancel()
            await asyncio.gather(*self._passes, return_exceptions=True)
            await client.close()

    async def _drain(self, client: AsyncWalletClient, read: Read) -> int:
        """The drain after an answered probe, unless another probe's is under way."""
        if self._draining:
            return 0
        self._draining = True
        try:
            return await drain(self.wallet, client, self._keep_going, read)
        finally:
            self._draining = False

    async def _guarded(self, work: Awaitable[Any]) -> Any:
        """``work``'s result, or ``None`` after logging its error: the resender goes on (the
        next tick may find the database back: a failover, a new primary reached by a new
        connection)."""
        try:
            return await work
        except asyncio.CancelledError:
            raise
        except Exception as error:
            if database_unavailable(error):
                log.warning("the wallet retrier cannot reach the database; trying again: %s",
                            str(getattr(error, "orig", error)).strip()[:200])
            else:
                log.exception("the wallet retrier failed; trying again")
            return None


__all__ = [
    "PROBES",
    "RESENDER_LEASE",
    "RESEND_CONCURRENCY",
    "RETRY_BATCH",
    "Resender",
    "drain",
    "resend_due",
    "resend_now",
    "send_batch",
]
