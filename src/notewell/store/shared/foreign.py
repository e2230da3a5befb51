"""A --db that already holds another program's tables is not made into a store.

Opening a store applies its migrations, which create Notewell's tables beside whatever is there (and SQLite's
file is switched to WAL): a `--db` mistyped to name an application's database was quietly turned into a store,
by `doctor` and `token list` as much as by `index`. A store is recognised by its bookkeeping table
(``schema_migrations``, store/shared/migrations.py); a database with tables and without it is refused before
anything is written. Each backend lists its tables (its own catalog, extensions' tables left out).
"""

from __future__ import annotations

from collections.abc import Sequence

from notewell.errors import ConfigError

SHOWN = 5  # the tables a refusal names


def refuse_foreign(tables: Sequence[str], where: str) -> None:
    """ConfigError when ``tables`` (the database's own) are not a Notewell store's: there are some, and no
    ``schema_migrations`` among them. ``where``: the database as shown (no password)."""
    if not tables or "schema_migrations" in tables:
        return
    names = sorted(tables)
    shown = ", ".join(names[:SHOWN]) + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")
    raise ConfigError(f"--db: {where} holds tables that are not a Notewell store's ({shown}); nothing was changed: "
                      "name a new file or an empty database for a new store, or an existing Notewell store")
