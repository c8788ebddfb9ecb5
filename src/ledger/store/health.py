"""Read-only questions ``ledger doctor`` asks a store file: which migrations it lacks,
and whether this process can take its write lock. Kept here because only ``store/``
speaks SQL."""

from __future__ import annotations

import os
import time

from ..errors import StoreUnavailable
from ._sqlite import sqlite3
from .connection import atomic, connect, is_postgres, is_url
from .migrations import MIGRATIONS


def migration_status(path: str | os.PathLike) -> dict:
    """``{"exists", "applied", "pending"}`` for the store at ``path`` without changing
    it: the names of migrations recorded in it and of those this version would still
    apply on open (every one for a file that does not exist yet). Raises
    :class:`StoreUnavailable` for a file SQLite cannot read."""
    p = os.fspath(path)
    names = [name for name, _ in MIGRATIONS]
    if is_url(p):
        return _pg_migration_status(p, names)
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
        if is_postgres(conn):
            return _pg_write_probe(conn)
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("ROLLBACK")
    except sqlite3.DatabaseError as exc:
        raise StoreUnavailable(f"Cannot write to {os.fspath(path)}: {exc}.") from exc
    finally:
        conn.close()


class _Undo(Exception):
    """Raised inside the probe's transaction so that it is rolled back."""


def _pg_migration_status(url: str, names: list[str]) -> dict:
    from . import pg

    conn = connect(url, readonly=True)
    try:
        exists = "_migrations" in pg.table_names(conn)
        done = {r[0] for r in conn.execute("SELECT name FROM _migrations")} if exists else set()
    finally:
        conn.close()
    return {"exists": exists, "applied": [n for n in names if n in done], "pending": [n for n in names if n not in done]}


def _pg_write_probe(conn) -> None:
    """PostgreSQL: take the store's advisory write lock in a transaction that is rolled
    back, and check this login may write (insert into the store's tables, or create
    them in an empty schema)."""
    from .pg import redact, table_names

    try:
        with atomic(conn):
            if "_migrations" in table_names(conn):
                ok = conn.execute("SELECT has_table_privilege('_migrations', 'INSERT')").fetchone()[0]
                what = "insert into its tables"
            else:
                ok = conn.execute("SELECT has_schema_privilege(current_schema(), 'CREATE')").fetchone()[0]
                what = "create tables in its schema"
            if not ok:
                raise StoreUnavailable(f"Cannot write to {redact(conn.url)}: this login may not {what}. "
                                       "Grant it (GRANT ... TO the user in the URL) or use another login.",
                                       reason="read-only", path=redact(conn.url))
            raise _Undo
    except _Undo:
        pass


#: What to do about a damaged store, for every message that reports one.
DAMAGE_FIX = ("Restore a backup (a copy, or `ledger import backup.jsonl` into a new store), or salvage what is left: "
              "sqlite3 ledger.db .recover | sqlite3 recovered.db, then point --db at recovered.db")


def quick_check(path: str | os.PathLike, *, budget_ms: int = 60_000, limit: int = 5) -> dict:
    """Run SQLite's ``PRAGMA quick_check`` on the store at ``path`` (read-only): every
    page and index entry is read, without the slower index-to-table cross-check of
    ``integrity_check``. Returns ``{"ok": bool, "problems": [str, ...] (at most
    ``limit``), "ms": float (wall time), "finished": bool}``; past ``budget_ms`` the
    check is interrupted (``finished`` False, ``ok`` True when nothing was found so far).
    A file SQLite cannot read at all counts as damaged, not as an exception."""
    p = os.fspath(path)
    t0 = time.monotonic()
    deadline = t0 + budget_ms / 1000
    problems: list[str] = []
    finished = True
    try:
        conn = connect(p, readonly=True)
    except StoreUnavailable as exc:
        return {"ok": False, "problems": [exc.detail or exc.message], "ms": (time.monotonic() - t0) * 1000, "finished": True}
    try:
        conn.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, 10_000)
        try:
            for (row,) in conn.execute(f"PRAGMA quick_check({int(limit)})"):
                if row != "ok":
                    problems.append(row)
        except sqlite3.OperationalError as exc:
            if "interrupt" not in str(exc).lower():
                problems.append(str(exc))
            else:
                finished = False
        except sqlite3.DatabaseError as exc:  # malformed beyond what quick_check reports row by row
            problems.append(str(exc))
    finally:
        conn.close()
    return {"ok": not problems, "problems": problems[:limit], "ms": (time.monotonic() - t0) * 1000, "finished": finished}
