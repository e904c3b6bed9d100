"""Alembic environment: runs on the connection handed in by ``starfever.server.db.migrate``,
or on ``sqlalchemy.url`` when Alembic is driven from its own command line."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

from starfever.server.models import Base

config = context.config
target_metadata = Base.metadata


def run_migrations_online() -> None:
    """Migrate on the given connection (or one opened from the URL)."""
    connection = config.attributes.get("connection")
    if connection is not None:
        context.configure(connection=connection, target_metadata=target_metadata,
                          render_as_batch=connection.dialect.name == "sqlite")
        with context.begin_transaction():
            context.run_migrations()
        return
    engine = create_engine(config.get_main_option("sqlalchemy.url") or "")
    with engine.connect() as own:
        context.configure(connection=own, target_metadata=target_metadata,
                          render_as_batch=own.dialect.name == "sqlite")
        with context.begin_transaction():
            context.run_migrations()


if context.is_offline_mode():
    context.configure(url=config.get_main_option("sqlalchemy.url"),
                      target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()
else:
    run_migrations_online()
