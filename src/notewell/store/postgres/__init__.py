"""The PostgreSQL store: psycopg 3 with a connection pool, pg_trgm GIN index. For teams and several servers."""

from notewell.store.postgres.store import PostgresStore

__all__ = ["PostgresStore"]
