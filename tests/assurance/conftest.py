"""The assurance tests reuse the server tests' fixtures: real ``starfever serve`` processes on
fresh SQLite and PostgreSQL databases."""

from tests.server.conftest import databases, server

__all__ = ["databases", "server"]
