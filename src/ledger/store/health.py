"""Read-only questions ``ledger doctor`` asks a store (a SQLite file or a PostgreSQL
URL): which migrations it lacks, and whether this process can take its write lock.
Kept here because only ``store/`` speaks SQL."""

from __future__ import annotations

import os
import sqlite3

from ..errors import StoreUnavailable
from .connection import atomic, connect, is_url
from .migrations import MIGRATIONS


def migration_status(path: str | os.PathLike) -> dict:
    """``{"exists", "applied", "pending"}`` for the store at ``path`` without changing
    it: the names of migrations recorded in it and of those this version would still
    apply on open (every one for a file that does not exist yet, or a PostgreSQL
    schema holding no ledger tables). Raises :class:`StoreUnavailable` for a file
    SQLite cannot read or a PostgreSQL server that cannot be reached."""
    p = os.fspath(path)
    names = [name for name, _ in MIGRATIONS]
    if is_url(p):
        from .pg import table_names

        conn = connect(p, readonly=True)
        try:
            exists = "_migrations" in table_names(conn)
            done = {r[0] for r in conn.execute("SELECT name FROM _migrations")} if exists else set()
        finally:
            conn.close()
        return {"exists": exists, "applied": [n for n in names if n in done], "pending": [n for n in names if n not in done]}
    if not os.path.exists(p):
        return {"exists": False, "applied": [], "pending": names}
    conn = connect(p, readonly=True)
    try:
        try:
            done = {r[0] for r in conn.execute("SELECT name FROM _migrations")}
        except sqlite3.OperationalError:  # no table yet: a new, empty file
            done = set()
        except sqlite3.DatabaseError as exc:
            raise StoreUnavailable(f"Cannot read {p}: {exc}.") from exc
    finally:
        conn.close()
    return {"exists": True, "applied": [n for n in names if n in done], "pending": [n for n in names if n not in done]}


def write_probe(path: str | os.PathLike) -> None:
    """Take the write lock of the store at ``path`` and let it go (``BEGIN IMMEDIATE``
    then ``ROLLBACK``; on PostgreSQL the store's advisory lock in a transaction rolled
    back): nothing is written. Raises :class:`StoreUnavailable` when the file, its
    folder or its lock cannot be had (read-only file, full disk, a writer holding the
    lock past the busy timeout, a server that cannot be reached)."""

    class _Probe(Exception):
        pass

    conn = connect(path)
    if getattr(conn, "is_postgres", False):
        try:
            with atomic(conn):
                raise _Probe  # roll the empty transaction back
        except _Probe:
            pass
        finally:
            conn.close()
        return
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("ROLLBACK")
    except sqlite3.DatabaseError as exc:
        raise StoreUnavailable(f"Cannot write to {os.fspath(path)}: {exc}.") from exc
    finally:
        conn.close()
