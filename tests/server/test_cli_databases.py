"""Database URLs on the command line: every command that opens an existing database refuses a
URL it cannot use through ``db.open_existing``, and the commands that keep data in one
(``serve``, ``operator create``) through ``db.open_migrated``; each in one line, exit 2, with
nothing created, migrated or changed (a refused file keeps its bytes)."""

from __future__ import annotations

import hashlib
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from starfever.server.db import sqlalchemy_url
from tests.harness import (
    OPERATOR_PASSWORD,
    OPERATOR_USERNAME,
    Databases,
    free_port,
    postgres_admin_url,
    run_cli,
    run_cli_in_process,
    unique_name,
)
from tests.server.conftest import skip_unless_available

# The refusals of a URL run in this process (ADR 0042: the answer is under test, not a start-up;
# a subprocess each cost 20-36 s under load, ADR 0045); serve's and the wallet demo's start-up
# refusals and raw bytes on stdin keep a process of their own.
pytestmark = pytest.mark.slow  # not in ./scripts/test --quick


def _one_line_refusal(done: subprocess.CompletedProcess[str], needle: str) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert needle in done.stderr, done.stderr
    assert "created" not in done.stdout and "serving" not in done.stdout


def _snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` with the SHA-256 of its bytes (folders as such)."""
    return {str(p.relative_to(folder)): (hashlib.sha256(p.read_bytes()).hexdigest()
                                         if p.is_file() else "folder")
            for p in sorted(folder.rglob("*"))}


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[Path]:
    """A work folder with what a careless URL may name: a folder, a file of random bytes, a
    text file, an empty file and an SQLite database of another program."""
    import sqlite3

    work = tmp_path / "work"
    (work / "adir").mkdir(parents=True)
    (work / "junk.db").write_bytes(bytes(range(256)) * 20)
    (work / "text.db").write_text("hello\n")
    (work / "empty.db").write_bytes(b"")
    other = sqlite3.connect(work / "other.db")
    other.execute("CREATE TABLE t (x)")
    other.commit()
    other.close()
    yield work


EXISTING = [  # each command that only uses an existing database, each kind of bad URL
    (["audit"], "nonsense", "is not a URL"),
    (["chain-statement"], "http://x", "unsupported database URL 'http://x'"),
    (["reconcile"], "mysql://a@b/c", "unsupported database URL 'mysql://a@b/c'"),
    (["report", "daily", "--date", "2026-12-01"], "sqlite://", "is an in-memory database"),
    (["operator", "totp", "boss"], "sqlite:///", "is an in-memory database"),
    (["audit"], "sqlite:////nonexistent-folder/x.db", "no such database file"),
    (["report", "monthly", "--date", "2026-12"], "sqlite:///{work}/adir", "is a folder"),
    (["reconcile"], "sqlite:///{work}/junk.db", "is not an SQLite database file"),
    (["chain-statement"], "sqlite:///{work}/text.db", "is not an SQLite database file"),
    (["audit"], "sqlite:///{work}/empty.db", "holds no Star Fever database"),
    (["operator", "totp", "boss"], "sqlite:///{work}/other.db", "holds no Star Fever database"),
]


@pytest.mark.parametrize("command,url,needle", EXISTING)
def test_cli_commands_on_an_existing_database_refuse_a_bad_url_in_one_line(
        folder: Path, command: list[str], url: str, needle: str) -> None:
    before = _snapshot(folder)
    done = run_cli_in_process(*command, "--database-url", url.replace("{work}", str(folder)),
                              cwd=folder)
    _one_line_refusal(done, needle)
    assert _snapshot(folder) == before  # the empty file stays empty, the others as they were


CREATING = [
    ("sqlite://", "is an in-memory database"),
    ("sqlite:///", "is an in-memory database"),
    ("sqlite:///file::memory:?uri=true", "is an in-memory database"),
    ("nonsense", "is not a URL"),
    ("mysql://a@b/c", "unsupported database URL"),
    ("sqlite:////nonexistent-folder/x.db", "no such folder /nonexistent-folder"),
    ("sqlite:///{work}/adir", "is a folder"),
    ("sqlite:///{work}/junk.db", "is not an SQLite database file"),
    ("sqlite:///{work}/text.db", "is not an SQLite database file"),
]


@pytest.mark.parametrize("url,needle", CREATING)
def test_cli_operator_create_refuses_a_bad_url_in_one_line(folder: Path, url: str,
                                                           needle: str) -> None:
    """Before: an in-memory URL said "operator 'boss' created" and stored nothing; the others
    were tracebacks (exit 70)."""
    before = _snapshot(folder)
    done = run_cli_in_process("operator", "create", OPERATOR_USERNAME, "--database-url",
                              url.replace("{work}", str(folder)),
                              stdin=OPERATOR_PASSWORD + "\n", cwd=folder)
    _one_line_refusal(done, needle)
    assert "secret" not in done.stdout
    assert _snapshot(folder) == before


def test_cli_operator_create_refuses_a_password_that_is_not_utf8(tmp_path: Path) -> None:
    """Refused before the database is touched (it was created and migrated, then exit 70)."""
    done = subprocess.run([sys.executable, "-m", "starfever.cli", "operator", "create", "abd",
                           "--database-url", f"sqlite:///{tmp_path}/o.db"],
                          input=b"a-long-operator-password\xff\n", capture_output=True,
                          timeout=120, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr == (b"starfever operator: error: the password on stdin is not UTF-8 "
                           b"text\n")
    assert list(tmp_path.iterdir()) == []


def test_cli_serve_refuses_an_in_memory_database(tmp_path: Path) -> None:
    """It printed "serving on ..." and ended with an 83-line traceback, exit 3."""
    done = run_cli("serve", "--port", str(free_port()), "--database-url", "sqlite://",
                   cwd=tmp_path)
    _one_line_refusal(done, "is an in-memory database")
    assert done.stdout == "" and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("address", ["busy", "999.1.1.1"])
def test_cli_serve_that_cannot_listen_writes_nothing(tmp_path: Path, address: str) -> None:
    """A port in use, or a host that is not this machine's: refused before the database is
    created or migrated (it was made, then uvicorn's log and exit 3)."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        host, port = (("127.0.0.1", taken.getsockname()[1]) if address == "busy"
                      else (address, 0))
        done = run_cli("serve", "--host", host, "--port", str(port), "--database-url",
                       f"sqlite:///{tmp_path}/s.db", cwd=tmp_path)
    _one_line_refusal(done, "Address already in use" if address == "busy"
                      else "--host '999.1.1.1' is no address of this machine")
    assert done.stdout == "" and list(tmp_path.iterdir()) == []


def test_cli_operator_wallet_demo_that_cannot_listen_resets_no_balance(tmp_path: Path) -> None:
    """``--player`` creates or resets a balance: a start that fails must not have done so."""
    from starfever.seamless.reference import WalletStore

    books = tmp_path / "wallet.db"
    store = WalletStore(books)
    store.set_player("bob", 5000, False)
    store.close()
    before = _snapshot(tmp_path)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        done = run_cli("operator-wallet-demo", "--port", str(taken.getsockname()[1]),
                       "--db", str(books), "--player", "bob=100",
                       env={"STARFEVER_OPERATOR_SECRET": "s" * 40}, cwd=tmp_path)
    _one_line_refusal(done, "Address already in use")
    assert _snapshot(tmp_path) == before


def test_cli_audit_refuses_a_statement_that_is_not_text(tmp_path: Path) -> None:
    statement = tmp_path / "statement.json"
    statement.write_bytes(bytes(range(128, 256)) * 8)
    done = run_cli_in_process("audit", "--statement", str(statement), "--database-url",
                              f"sqlite:///{tmp_path}/missing.db", cwd=tmp_path)
    _one_line_refusal(done, "not UTF-8 text")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["statement.json"]


@pytest.mark.postgres
@pytest.mark.parametrize("command", [["audit"], ["operator", "create", OPERATOR_USERNAME]])
@pytest.mark.parametrize("case", ["nothing listening", "no such database", "empty database"])
def test_cli_postgresql_databases_that_cannot_be_used_are_one_line(
        databases: Databases, command: list[str], case: str) -> None:
    skip_unless_available(databases, "postgresql")
    admin = postgres_admin_url()
    if case == "nothing listening":
        url = f"postgresql://postgres@127.0.0.1:{free_port()}/{unique_name('starfever_test_')}"
        needle = "cannot use the database"
    elif case == "no such database":
        url = admin.rsplit("/", 1)[0] + "/" + unique_name("starfever_test_missing_")
        needle = "does not exist"
    else:
        url = databases.new("postgresql")
        needle = ("holds no Star Fever database" if command == ["audit"] else "")
    try:
        done = run_cli_in_process(*command, "--database-url", url,
                                  stdin=OPERATOR_PASSWORD + "\n")
        if case == "empty database" and command != ["audit"]:
            assert done.returncode == 0, done.stderr  # an empty database is migrated: fine
            return
        _one_line_refusal(done, needle)
        if case == "empty database":  # the audit created no table in it
            engine = create_engine(sqlalchemy_url(url))
            try:
                with engine.connect() as connection:
                    assert connection.execute(text(
                        "SELECT count(*) FROM information_schema.tables "
                        "WHERE table_schema = 'public'")).scalar_one() == 0
            finally:
                engine.dispose()
    finally:
        if url in databases.created:
            databases.drop(url)
