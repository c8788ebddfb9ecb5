"""The one connection policy (style lesson 4): every process — CLI, hooks, web server,
TUI — opens the store through :func:`connect`, and every write goes through
:func:`atomic`, which takes SQLite's write lock up front (``BEGIN IMMEDIATE``) so two
processes never deadlock upgrading a read lock.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3

from ..errors import StoreUnavailable

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover - keeps typing off the hook path
    from typing import Iterator

BUSY_TIMEOUT_MS = 10_000


def connect(path: str | os.PathLike, *, readonly: bool = False) -> sqlite3.Connection:
    """Open (and for writers create, with its folder) the store at ``path``.

    WAL journal, ``busy_timeout`` of 10 s, foreign keys on, ``synchronous=NORMAL`` (safe
    with WAL: a power cut may lose the last commits, never corrupt the file). Autocommit
    mode (``isolation_level=None``): transactions are explicit, see :func:`atomic`.

    Raises :class:`StoreUnavailable` when the file cannot be opened or is not a SQLite
    database, with a message naming the path.
    """
    p = os.fspath(path)
    try:
        if readonly:
            conn = sqlite3.connect(f"file:{p}?mode=ro", uri=True, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
        else:
            if p != ":memory:":
                os.makedirs(os.path.dirname(os.path.abspath(p)), exist_ok=True)
            conn = sqlite3.connect(p, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if not readonly:
            _refuse_foreign(conn)
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if p != ":memory:" and mode.lower() != "wal":
                raise StoreUnavailable(f"Cannot switch {p} to WAL mode (got {mode}). Is it on a network file system?")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA temp_store = MEMORY")
        conn.execute("PRAGMA cache_size = -65536")  # 64 MiB page cache: keeps FTS doclists hot
    except sqlite3.DatabaseError as exc:
        raise StoreUnavailable(f"Cannot open the store at {p}: {exc}. Check the path (--db, $LEDGER_DB) and its permissions.") from exc
    except OSError as exc:
        raise StoreUnavailable(f"Cannot create the store folder for {p}: {exc.strerror or exc}.") from exc
    conn.row_factory = sqlite3.Row
    return conn


def _refuse_foreign(conn: sqlite3.Connection) -> None:
    """Ledger never writes into another program's database (not even its journal mode):
    a file with tables but no ledger migration history is refused."""
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
    if tables and "_migrations" not in tables:
        conn.close()
        shown = ", ".join(sorted(tables)[:5]) + (", …" if len(tables) > 5 else "")
        raise StoreUnavailable(
            f"This SQLite file already holds another program's tables ({shown}); ledger will not write into it. "
            "Point --db (or $LEDGER_DB) at a new file."
        )


@contextlib.contextmanager
def atomic(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """A write transaction: ``BEGIN IMMEDIATE`` … ``COMMIT``, rolled back on any error.
    Nested use becomes a savepoint, so a helper that writes can be called inside a
    larger transaction."""
    if conn.in_transaction:
        name = f"sp_{id(conn)}_{os.urandom(3).hex()}"
        conn.execute(f"SAVEPOINT {name}")
        try:
            yield conn
        except BaseException:
            conn.execute(f"ROLLBACK TO {name}")
            conn.execute(f"RELEASE {name}")
            raise
        else:
            conn.execute(f"RELEASE {name}")
        return
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        raise StoreUnavailable(f"The store is busy or read-only: {exc}. Another ledger process may hold the write lock; try again.") from exc
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    else:
        try:
            conn.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            conn.execute("ROLLBACK")
            raise StoreUnavailable(f"Could not commit to the store: {exc}.") from exc
