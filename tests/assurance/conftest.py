"""The assurance tests reuse the server tests' fixtures: real ``starfever serve`` processes on
fresh SQLite and PostgreSQL databases."""

from tests.server.conftest import databases, db_kind, server

__all__ = ["databases", "db_kind", "server"]
