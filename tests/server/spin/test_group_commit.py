"""The one group-commit engine (ADR 0038, ``spin.group_commit``) on its own, with a ``write``
that records its batches: what a batch takes, and how a failed batch is retried. The settler
and the call book, its two users, are tested through a real database beside this
(``test_settler.py``, ``test_call_book.py``)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import Future

import pytest
from sqlalchemy.exc import DBAPIError, IntegrityError

from starfever.server.spin.group_commit import GroupCommit

TIMEOUT_S = 10


class Recorder:
    """A ``write`` that answers each item with its double once ``gate`` is open; while
    ``failures`` holds errors, each call raises the first of them instead."""

    def __init__(self) -> None:
        self.batches: list[list[int]] = []
        self.failures: list[BaseException] = []
        self.gate = threading.Event()
        self.gate.set()

    def __call__(self, batch: list[int]) -> Sequence[int | BaseException]:
        self.gate.wait(TIMEOUT_S)
        self.batches.append(list(batch))
        if self.failures:
            raise self.failures.pop(0)
        return [item * 2 for item in batch]


def _results(futures: list[Future[int]]) -> list[int | BaseException]:
    found: list[int | BaseException] = []
    for done in futures:
        error = done.exception(timeout=TIMEOUT_S)
        found.append(error if error is not None else done.result())
    return found


def _dead() -> DBAPIError:
    return DBAPIError("SELECT 1", {}, Exception("server closed the connection"),
                      connection_invalidated=True)


def test_what_queues_while_a_batch_is_written_is_the_next_batch_in_order() -> None:
    write = Recorder()
    commits: GroupCommit[int, int] = GroupCommit(write, name="t", max_batch=3)
    write.gate.clear()
    first = commits.submit(1)  # its batch waits at the gate; the rest queue behind it
    rest = [commits.submit(n) for n in range(2, 7)]
    write.gate.set()
    assert _results([first, *rest]) == [2, 4, 6, 8, 10, 12]
    assert [n for batch in write.batches for n in batch] == [1, 2, 3, 4, 5, 6]
    assert all(len(batch) <= 3 for batch in write.batches)
    commits.close()


def test_items_that_do_not_fit_the_first_wait_for_a_batch_of_their_own() -> None:
    write = Recorder()
    commits: GroupCommit[int, int] = GroupCommit(
        write, name="t", fits=lambda first, item: first % 2 == item % 2,
        linger=lambda batch: 0.2 if len(batch) < 4 else 0.0)
    futures = [commits.submit(n) for n in (1, 2, 3, 4)]
    assert _results(futures) == [2, 4, 6, 8]
    assert write.batches[0] == [1, 3]  # the odd ones together, the even ones after, in order
    assert [n for batch in write.batches for n in batch] == [1, 3, 2, 4]
    commits.close()


def test_a_failed_batch_is_written_again_item_by_item_so_an_error_reaches_only_its_cause(
        ) -> None:
    write = Recorder()
    write.failures.append(RuntimeError("the batch failed"))
    commits: GroupCommit[int, int] = GroupCommit(write, name="t",
                                                 linger=lambda batch: 0.2 * (len(batch) < 3))
    futures = [commits.submit(n) for n in (1, 2, 3)]
    assert _results(futures) == [2, 4, 6]
    assert write.batches == [[1, 2, 3], [1], [2], [3]]
    commits.close()


def test_a_dead_connection_costs_the_batch_one_more_try_and_no_more() -> None:
    write = Recorder()
    write.failures += [_dead()]
    commits: GroupCommit[int, int] = GroupCommit(write, name="t")
    assert commits.submit(5).result(timeout=TIMEOUT_S) == 10
    assert write.batches == [[5], [5]]
    write.batches.clear()
    write.failures += [_dead(), _dead()]
    error = commits.submit(6).exception(timeout=TIMEOUT_S)
    assert isinstance(error, DBAPIError) and error.connection_invalidated
    assert write.batches == [[6], [6]]
    commits.close()


def test_a_database_out_of_reach_answers_the_whole_batch_without_splitting_it() -> None:
    import psycopg

    from tests.harness import free_port

    try:  # the driver's own error for a primary that is gone: a port nobody listens on
        psycopg.connect(f"host=127.0.0.1 port={free_port()} connect_timeout=2").close()
    except psycopg.OperationalError as refused:
        gone = DBAPIError("connect", {}, refused)
    write = Recorder()
    write.failures += [_dead(), gone]  # a dead connection, then no new one (a failover)
    commits: GroupCommit[int, int] = GroupCommit(write, name="t",
                                                 linger=lambda batch: 0.2 * (len(batch) < 3))
    results = _results([commits.submit(n) for n in (1, 2, 3)])
    assert all(result is gone for result in results)
    assert write.batches == [[1, 2, 3], [1, 2, 3]]  # one more try on a new connection, no split
    assert [commits.submit(4).result(timeout=TIMEOUT_S)] == [8]  # and on with the database back
    commits.close()


@pytest.mark.parametrize("again_on", [None, IntegrityError])
def test_one_item_that_hit_again_on_is_written_once_more(
        again_on: type[BaseException] | None) -> None:
    write = Recorder()
    write.failures.append(IntegrityError("INSERT", {}, Exception("duplicate key")))
    commits: GroupCommit[int, int] = GroupCommit(write, name="t", again_on=again_on)
    done = commits.submit(7)
    if again_on is None:
        assert isinstance(done.exception(timeout=TIMEOUT_S), IntegrityError)
        assert write.batches == [[7]]
    else:
        assert done.result(timeout=TIMEOUT_S) == 14
        assert write.batches == [[7], [7]]
    commits.close()


def test_a_cancelled_request_is_still_written_and_close_writes_what_is_queued() -> None:
    write = Recorder()
    write.gate.clear()
    commits: GroupCommit[int, int] = GroupCommit(write, name="t")
    first = commits.submit(1)
    gave_up = commits.submit(2)
    gave_up.cancel()
    closing = threading.Thread(target=commits.close)
    closing.start()
    write.gate.set()
    closing.join(TIMEOUT_S)
    assert first.result(timeout=TIMEOUT_S) == 2 and gave_up.cancelled()
    assert [n for batch in write.batches for n in batch] == [1, 2]
    assert commits._thread is None


def test_the_thread_ends_when_idle_and_the_next_item_starts_another() -> None:
    write = Recorder()
    commits: GroupCommit[int, int] = GroupCommit(write, name="t", idle_exit_s=0.05)
    assert commits.submit(1).result(timeout=TIMEOUT_S) == 2
    first = commits._thread
    assert first is not None
    first.join(TIMEOUT_S)
    assert not first.is_alive() and commits._thread is None
    assert commits.submit(2).result(timeout=TIMEOUT_S) == 4
