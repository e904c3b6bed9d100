"""Shared helpers: run the real ``starfever`` command line in a subprocess."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from types import ModuleType

import pytest


def run_cli(args: Sequence[str], stdin: str = "",
            timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run ``python -m starfever.cli ARGS`` and capture its output."""
    return subprocess.run([sys.executable, "-m", "starfever.cli", *args], input=stdin,
                          capture_output=True, text=True, timeout=timeout, check=False)


def run_cli_here(args: Sequence[str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    """:func:`run_cli` in this process (``tests.harness.run_cli_in_process``): for a command's
    answers and refusals, where a process of its own proves nothing more."""
    from tests.harness import run_cli_in_process

    return run_cli_in_process(*args, stdin=stdin)


_RUN_TEMP: str | None = None


def pytest_configure(config: pytest.Config) -> None:
    """Give the run a temporary folder of its own, removed at its end: what the code under
    test keeps in the temporary folder for a server's lifetime (the settlers' turn files of
    every test database, ADR 0028) would otherwise stay in ``/tmp`` after the run. Servers
    started by the tests inherit it through ``TMPDIR``."""
    global _RUN_TEMP
    _RUN_TEMP = tempfile.mkdtemp(prefix="starfever-tests-")
    os.environ["TMPDIR"] = _RUN_TEMP
    tempfile.tempdir = None  # gettempdir() reads TMPDIR again
    os.environ.setdefault("STARFEVER_TEST_FORKS", "1")  # test-mode servers forked (ADR 0084)


def pytest_unconfigure(config: pytest.Config) -> None:
    from tests import forkserver

    forkserver.close()  # (its metrics folder lies in the run's temporary folder)
    if _RUN_TEMP is not None:
        shutil.rmtree(_RUN_TEMP, ignore_errors=True)


@pytest.fixture
def cli() -> object:
    return run_cli


@pytest.fixture
def clock() -> Iterator[ModuleType]:
    """The server's clock (``starfever.server.clock``) for a test that moves it in process;
    the system clock again afterwards."""
    from starfever.server import clock as server_clock

    server_clock.reset()
    yield server_clock
    server_clock.reset()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Apply the ``postgres`` and ``browser`` markers from what a test uses, so a new test is
    marked without anyone remembering to: ``postgres`` where a parameter selects the PostgreSQL
    database kind, ``browser`` where the headless Chromium fixture is used. ``slow`` is set by
    hand on the tests that take seconds (``./scripts/test --quick`` leaves all three out)."""
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and "postgresql" in callspec.params.values():
            item.add_marker(pytest.mark.postgres)
        if "browser" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.browser)
    _longest_modules_first(items)


LONGEST_MODULES = (
    "tests/assurance/test_failover_drill.py", "tests/math/test_figures.py",
    "tests/test_quick_start.py", "tests/certify/test_software.py",
    "tests/assurance/test_fuzz.py", "tests/web/test_client.py", "tests/assurance/test_crash.py",
    "tests/seamless/test_operator_mode_debit_crashes.py",
    "tests/server/test_insiders.py", "tests/server/test_login_throttle.py",
    "tests/math/test_tune.py", "tests/assurance/test_cashier_kills.py",
)
"""The modules that take longest (the failover drill alone takes about four minutes; measured in
the full run of the evening of 2026-12-04, ADR 0045), started first.
pytest-xdist hands a worker one module at a time in this order (``--dist loadfile
--no-loadscope-reorder``, ADR 0045); its own order, most tests first, left these few-test
modules to the end, where one of them alone kept the run going."""


def _longest_modules_first(items: list[pytest.Item]) -> None:
    """Order the modules: :data:`LONGEST_MODULES` first, then the others by their number of
    tests, most first (the order xdist would choose), each module's tests kept in order."""
    counts: dict[str, int] = {}
    for item in items:
        counts[item.nodeid.split("::")[0]] = counts.get(item.nodeid.split("::")[0], 0) + 1

    def rank(item: pytest.Item) -> tuple[int, int]:
        module = item.nodeid.split("::")[0]
        if module in LONGEST_MODULES:
            return 0, LONGEST_MODULES.index(module)
        return 1, -counts[module]

    items.sort(key=rank)  # stable: a module's tests stay together and in order
