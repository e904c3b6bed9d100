"""The settlers' turn on a host (ADR 0028, ``spin.turn.SettleTurn``): one process at a time,
taken in turn, and only in a folder no one else can enter."""

from __future__ import annotations

import logging
import multiprocessing
import os
import tempfile
import threading
import time
from pathlib import Path

import pytest

from starfever.server.spin import turn as settle_turn
from starfever.server.spin.turn import SettleTurn


def _take_turns(key: str, name: str, log: str, turns: int, start: threading.Barrier) -> None:
    turn = SettleTurn(key)
    start.wait()
    for _ in range(turns):
        with turn.held():
            with open(log, "a", encoding="ascii") as out:
                out.write(f"{name}<\n")
            time.sleep(0.002)  # a batch's work
            with open(log, "a", encoding="ascii") as out:
                out.write(f"{name}>\n")
    turn.close()


@pytest.fixture
def own_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The turn's files under this test's folder (the children inherit it: fork)."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def test_two_processes_hold_the_turn_one_at_a_time(own_tmp: Path) -> None:
    """Each process asks again the moment it is done, as a busy settler does: the turns
    never overlap, and both get theirs."""
    log = str(own_tmp / "turns.log")
    context = multiprocessing.get_context("fork")
    start = context.Barrier(2)
    children = [context.Process(target=_take_turns, args=("db-key", name, log, 100, start))
                for name in "ab"]
    for child in children:
        child.start()
    for child in children:
        child.join(timeout=60)
        assert child.exitcode == 0
    lines = Path(log).read_text(encoding="ascii").split()
    assert len(lines) == 400
    assert [f"{held[0]}>" for held in lines[0::2]] == lines[1::2]  # each ends before the next


def _who_comes_next() -> list[str]:
    """One holder keeps the turn while another asks for it, then asks again at once."""
    first, second = SettleTurn("db-key"), SettleTurn("db-key")
    took: list[str] = []
    holding = threading.Event()

    def busy() -> None:
        with first.held():
            holding.set()
            time.sleep(0.2)  # long enough for the other to be waiting
        with first.held():
            took.append("first again")

    def waiting() -> None:
        holding.wait()
        with second.held():
            took.append("second")

    threads = [threading.Thread(target=busy), threading.Thread(target=waiting)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    first.close()
    second.close()
    return took


def test_a_holder_that_asks_again_at_once_comes_after_the_one_waiting(own_tmp: Path) -> None:
    """The turn is handed to the holder already waiting: a plain lock let the process that
    had just released it take it again before the waiting one woke (its spins then waited
    several turns)."""
    for _ in range(5):
        assert _who_comes_next() == ["second", "first again"]


def test_the_turn_reaches_another_process_only_through_a_private_folder(
        own_tmp: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Two holders of one key exclude each other (here two in one process: each has its own
    open file); where the folder of the turn's files is open to others, a turn is this
    holder's alone, and the log says so."""
    def second_waits(first: SettleTurn, second: SettleTurn) -> float:
        took: list[float] = []
        with first.held():
            def take() -> None:
                with second.held():
                    took.append(time.monotonic())

            thread = threading.Thread(target=take)
            thread.start()
            time.sleep(0.3)
            released = time.monotonic()
        thread.join(timeout=10)
        return took[0] - released

    assert second_waits(SettleTurn("k"), SettleTurn("k")) >= 0  # it waited for the release
    folder = own_tmp / f"starfever-{os.getuid()}"
    assert folder.stat().st_mode & 0o777 == 0o700
    assert second_waits(SettleTurn("k"), SettleTurn("other-key")) < 0  # another database's
    folder.chmod(0o755)
    with caplog.at_level(logging.WARNING, logger="starfever.db"):
        assert second_waits(SettleTurn("k"), SettleTurn("k")) < 0
    assert "not a private directory" in caplog.text


def test_a_batch_that_holds_the_turn_too_long_loses_it(
        own_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A process stuck in its batch (a connection stalled in the network) holds up the other
    processes' settling for :data:`HOLD_LIMIT_S` at most; when it ends its batch it does not
    take the turn from the one that has it now."""
    monkeypatch.setattr(settle_turn, "HOLD_LIMIT_S", 0.2)
    stuck, other, third = SettleTurn("db-key"), SettleTurn("db-key"), SettleTurn("db-key")
    got_it = threading.Event()
    release = threading.Event()

    def wait_then_hold() -> None:
        with other.held():
            got_it.set()
            release.wait(10)

    waiter = threading.Thread(target=wait_then_hold)
    with stuck.held():
        waiter.start()
        assert got_it.wait(5)  # the watchdog let the stuck one's turn go
    third_took: list[float] = []

    def third_asks() -> None:
        with third.held():
            third_took.append(time.monotonic())

    asking = threading.Thread(target=third_asks)
    asking.start()
    time.sleep(0.1)
    assert not third_took  # the turn is still the waiter's, not free
    released = time.monotonic()
    release.set()
    waiter.join(10)
    asking.join(10)
    assert third_took and third_took[0] >= released
    for turn in (stuck, other, third):
        turn.close()


def test_without_a_usable_temporary_folder_a_turn_is_this_processs_alone(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """No temporary folder at all (a read-only file system): the settler still settles."""
    def no_folder() -> str:
        raise FileNotFoundError("No usable temporary directory found")

    monkeypatch.setattr(tempfile, "gettempdir", no_folder)
    turn = SettleTurn("db-key")
    with caplog.at_level(logging.WARNING, logger="starfever.db"):
        with turn.held():
            pass
        with turn.held():
            pass
    assert caplog.text.count("No usable temporary directory") == 1  # said once
    turn.close()


def test_closing_does_not_wait_for_a_settler_waiting_for_the_turn(own_tmp: Path) -> None:
    """Shutting down a process whose settler waits for another process's turn (a stuck one)
    does not hang on it."""
    holder, waiting = SettleTurn("db-key"), SettleTurn("db-key")

    def wait_for_turn() -> None:
        with waiting.held():
            pass

    with holder.held():
        settler = threading.Thread(target=wait_for_turn, daemon=True)
        settler.start()
        time.sleep(0.1)
        closing = threading.Thread(target=waiting.close, daemon=True)
        closing.start()
        closing.join(5)
        assert not closing.is_alive()
    settler.join(10)
    holder.close()
