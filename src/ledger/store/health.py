"""Read-only questions ``ledger doctor`` asks a store file: which migrations it lacks,
and whether this process can take its write lock. Kept here because only ``store/``
speaks SQL."""

from __future__ import annotations

import os
import sqlite3

from ..errors import StoreUnavailable
from .connection import connect
from .migrations import MIGRATIONS


def migration_status(path: str | os.PathLike) -> dict:
    """``{"exists", "applied", "pending"}`` for the store at ``path`` without changing
    it: the names of migrations recorded in it and of those this version would still
    apply on open (every one for a file that does not exist yet). Raises
    :class:`StoreUnavailable` for a file SQLite cannot read."""
    p = os.fspath(path)
    names = [name for name, _ in MIGRATIONS]
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
    then ``ROLLBACK``): nothing is written. Raises :class:`StoreUnavailable` when the
    file, its folder or its lock cannot be had (read-only file, full disk, a writer
    holding the lock past the busy timeout)."""
    conn = connect(path)
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("ROLLBACK")
    except sqlite3.DatabaseError as exc:
        raise StoreUnavailable(f"Cannot write to {os.fspath(path)}: {exc}.") from exc
    finally:
        conn.close()
