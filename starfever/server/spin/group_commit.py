"""Group commit (ADR 0009, ADR 0038): the one engine behind the settler and the wallet-call
book. Requests are queued; one thread per engine takes what is queued at that moment and
writes it in ONE transaction (the caller's ``write``), then answers each request.

What both of its users need, written once:

- the queue and its thread (started by the first request, ended after ``idle_exit_s``
  without work or by :meth:`GroupCommit.close`, which writes what is queued first);
- the batch: what is queued now, up to ``max_batch``, of the items that ``fits`` the first
  (the others stay queued, in their order), waiting up to ``linger(batch)`` seconds for more
  (items that no answer waits for can ride with the next ones instead of a transaction of
  their own), and taken inside ``turn`` (the settlers of a host's processes take turns, ADR
  0028);
- the retries: a connection found dead (the database restarted: the pool was emptied) costs
  the batch one more try on a new one; a database still out of reach then (a failover under
  way, ADR 0070) answers every item with that error; a batch that fails otherwise is written
  again item by item, so an error reaches only its cause; one item that fails with an
  ``again_on`` error (a row another process inserted meanwhile) is written once more, and
  finds that row.

Nothing is answered before the commit. A request whose caller gave up waiting (its future
cancelled) is still written; what was committed stands, and a retry of the request finds it.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, InvalidStateError
from contextlib import AbstractContextManager, nullcontext
from typing import Any, Generic, TypeVar

from sqlalchemy.exc import DBAPIError

from starfever.server.db import database_unavailable

Item = TypeVar("Item")
Result = TypeVar("Result")


def resolve(done: Future[Any], *, result: Any = None,
            error: BaseException | None = None) -> None:
    """Resolve ``done`` unless it is resolved already or was cancelled (its request gave up
    waiting: what was committed stands, and a retry of the request finds it)."""
    if done.done():
        return
    try:
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(result)
    except InvalidStateError:  # cancelled in the meantime
        pass


def resolve_each(futures: Sequence[Future[Any]], results: Sequence[Any]) -> None:
    """Resolve each future of a batch with its result, or its error where the result is an
    exception (:func:`resolve`: one already resolved or cancelled is left as it is)."""
    for done, result in zip(futures, results, strict=True):
        if isinstance(result, BaseException):
            resolve(done, error=result)
        else:
            resolve(done, result=result)


class GroupCommit(Generic[Item, Result]):
    """Queue items; write the queued ones in one transaction each time (module docstring).

    ``write`` takes a batch and returns one result per item, in order: its answer, or the
    exception that item alone is answered with (a refusal). An exception raised by ``write``
    itself fails the batch, which is then retried as above."""

    def __init__(self, write: Callable[[list[Item]], Sequence[Result | BaseException]], *,
                 name: str, max_batch: int | None = None,
                 fits: Callable[[Item, Item], bool] | None = None,
                 linger: Callable[[list[Item]], float] | None = None,
                 turn: Callable[[], AbstractContextManager[Any]] | None = None,
                 idle_exit_s: float | None = None,
                 again_on: type[BaseException] | None = None) -> None:
        self.write = write
        self.name = name
        self.max_batch = max_batch
        self.fits = fits
        self.linger = linger
        self.turn = turn
        self.idle_exit_s = idle_exit_s
        self.again_on = again_on
        self._queue: deque[tuple[Item, Future[Result]]] = deque()
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closing = False

    def submit(self, item: Item) -> Future[Result]:
        """Queue ``item``; the future resolves once its batch is committed (or it was
        refused). For an event loop: ``await asyncio.wrap_future(...)``."""
        done: Future[Result] = Future()
        with self._cond:
            self._queue.append((item, done))
            if self._thread is None:
                self._closing = False
                self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                self._thread.start()
            else:
                self._cond.notify()
        return done

    def close(self, timeout: float = 30) -> None:
        """Write what is queued, then end the thread."""
        with self._cond:
            thread, self._closing = self._thread, True
            self._cond.notify()
        if thread is not None:
            thread.join(timeout=timeout)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue:
                    if self._closing or (not self._cond.wait(self.idle_exit_s) \
                            and not self._queue):
                        self._thread = None
                        return
            with self.turn() if self.turn is not None else nullcontext():
                batch = self._take()
                try:
                    results = self._commit([item for item, _ in batch])
                except BaseException as error:  # never let one batch stop the thread:
                    # every later request of this process would wait for ever
                    results = [error] * len(batch)
            resolve_each([done for _, done in batch], results)

    def _take(self) -> list[tuple[Item, Future[Result]]]:
        """What is queued now (up to ``max_batch``) that fits the first item, in order; then
        more of it as it arrives while ``linger`` says to wait."""
        with self._cond:
            batch: list[tuple[Item, Future[Result]]] = []
            started = time.monotonic()
            while True:
                self._move(batch)
                wait = self.linger([item for item, _ in batch]) if self.linger else 0.0
                left = started + wait - time.monotonic()
                if left <= 0 or self._closing or self._full(batch):
                    return batch
                self._cond.wait(left)

    def _full(self, batch: list[Any]) -> bool:
        return self.max_batch is not None and len(batch) >= self.max_batch

    def _move(self, batch: list[tuple[Item, Future[Result]]]) -> None:
        """Move the queued items that fit into ``batch`` (the caller holds the lock)."""
        rest: deque[tuple[Item, Future[Result]]] = deque()
        while self._queue and not self._full(batch):
            entry = self._queue.popleft()
            if not batch or self.fits is None or self.fits(batch[0][0], entry[0]):
                batch.append(entry)
            else:
                rest.append(entry)
        rest.extend(self._queue)
        self._queue = rest

    def _commit(self, batch: list[Item], *, reconnected: bool = False,
                again: bool = False) -> list[Result | BaseException]:
        try:
            return list(self.write(batch))
        except BaseException as error:
            if isinstance(error, DBAPIError) and error.connection_invalidated \
                    and not reconnected:
                # the connection had died (say, the database restarted) and the pool has been
                # emptied: once more on a new one. Nothing of the batch was stored, or, if the
                # commit itself was cut, the retry finds what it stored by its keys.
                return self._commit(batch, reconnected=True, again=again)
            if database_unavailable(error):
                # no database takes writes (a failover, ADR 0070): no item caused that, and
                # each alone would only wait for a connection again (seconds each, with a
                # dead host in a multi-host URL). Every item is answered with it; what the
                # commit stored, if it was cut, is found by its key when the request is sent
                # again
                return [error] * len(batch)
            if len(batch) > 1:  # each alone: the error reaches only its cause
                return [result for item in batch for result in self._commit([item])]
            if self.again_on is not None and isinstance(error, self.again_on) and not again:
                return self._commit(batch, reconnected=reconnected, again=True)
            return [error]


__all__ = ["GroupCommit", "resolve", "resolve_each"]
