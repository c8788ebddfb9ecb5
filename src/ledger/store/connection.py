"""The one connection policy (style lesson 4): every process — CLI, hooks, web server,
TUI — opens the store through :func:`connect`, and every write goes through
:func:`atomic`, which takes SQLite's write lock up front (``BEGIN IMMEDIATE``) so two
processes never deadlock upgrading a read lock.
"""

from __future__ import annotations

import os
import sys
import time

from ..errors import StoreUnavailable, store_unavailable
from ..paths import IN_MEMORY, names_folder
from ._sqlite import sqlite3

BUSY_TIMEOUT_MS = 10_000

# SQLite primary result codes (https://sqlite.org/rescode.html), read from
# ``exc.sqlite_errorcode & 0xFF`` so extended codes map to their family.
SQLITE_BUSY, SQLITE_LOCKED, SQLITE_READONLY, SQLITE_IOERR, SQLITE_CORRUPT, SQLITE_FULL, SQLITE_CANTOPEN, SQLITE_NOTADB = (
    5, 6, 8, 10, 11, 13, 14, 26)


def is_postgres(conn: object) -> bool:
    """Whether ``conn`` is a PostgreSQL store connection (:mod:`.pg`), not SQLite."""
    return getattr(conn, "is_postgres", False)


def is_url(target: object) -> bool:
    """Whether a store target (``--db``, ``$LEDGER_DB``) is a PostgreSQL URL rather
    than a SQLite file path."""
    return isinstance(target, str) and target.startswith(("postgresql://", "postgres://"))


def connect(path: str | os.PathLike, *, readonly: bool = False, busy_timeout_ms: int | None = None) -> sqlite3.Connection:
    """Open (and for writers create, with its folder) the store at ``path``.

    A ``postgresql://`` URL opens the PostgreSQL dialect instead (:func:`.pg.connect`;
    psycopg is imported only then). What follows is the SQLite policy.

    WAL journal, ``busy_timeout`` of ``busy_timeout_ms`` (default 10 s), foreign keys
    on, ``synchronous=NORMAL`` (safe with WAL: a power cut may lose the last commits,
    never corrupt the file). Autocommit mode (``isolation_level=None``): transactions
    are explicit, see :func:`atomic`.

    The wait limit covers opening too: a store another program holds with an exclusive
    lock costs a hook ``busy_timeout_ms``, not 10 s. Switching a brand-new file to WAL
    does not consult SQLite's busy handler (it fails at once with "database is locked"
    while another process is creating the same store), so that step, like every other
    step of opening, is retried until the same deadline.

    Raises :class:`StoreUnavailable` when the file cannot be opened, is not a SQLite
    database, is locked past the wait limit, or the disk is full, with a message naming
    the path and the real cause; a path ending in a separator (a folder) is refused
    before anything is created (reason ``bad-path``).
    """
    p = os.fspath(path)
    if is_url(p):
        from . import pg

        return pg.connect(p, readonly=readonly, wait_ms=BUSY_TIMEOUT_MS if busy_timeout_ms is None else busy_timeout_ms)
    if names_folder(p):
        # SQLite would create a *file* named like the folder (`--db /tmp/new/` made
        # /tmp/new a database, which then blocked `LEDGER_HOME=/tmp/new`).
        raise StoreUnavailable(f"Cannot open the store at {p}: it ends in {p[-1]}, so it names a folder, not a store "
                               f"file. Give the store file instead, e.g. {os.path.join(p, 'ledger.db')} (created on "
                               f"first use). Nothing was created.", reason="bad-path", path=p)
    special = _special_file(p)
    if special:
        # SQLite cannot keep a store in a FIFO, a device or a socket: opening a FIFO
        # read-only blocked until a writer came (`ledger doctor` hung for good), and the
        # others failed as a "disk I/O error" that named neither the path nor the cause.
        raise StoreUnavailable(f"Cannot open the store at {p}: it is {special}, not a file, so it cannot hold a store. "
                               "Give a store file instead (e.g. ~/.ledger/ledger.db, created on first use). Nothing was "
                               "created.", reason="bad-path", path=p)
    wait_ms = BUSY_TIMEOUT_MS if busy_timeout_ms is None else max(0, int(busy_timeout_ms))
    deadline = time.monotonic() + wait_ms / 1000
    delay = 0.005
    while True:
        try:
            return _connect_once(p, readonly, wait_ms)
        except sqlite3.OperationalError as exc:
            if _code(exc) not in (SQLITE_BUSY, SQLITE_LOCKED) or time.monotonic() + delay > deadline:
                raise store_unavailable(open_error_message(p, exc, wait_ms), reason=_open_reason(exc), detail=str(exc),
                                        path=p) from exc
        except sqlite3.DatabaseError as exc:
            raise store_unavailable(open_error_message(p, exc, wait_ms), reason=_open_reason(exc), detail=str(exc),
                                    path=p) from exc
        except OSError as exc:
            raise store_unavailable(_folder_error_message(p, exc), reason=_os_reason(exc), detail=str(exc),
                                    path=p) from exc
        time.sleep(delay)
        delay = min(delay * 2, 0.1)


def _special_file(p: str) -> str | None:
    """What ``p`` is when it exists and is neither a regular file nor a folder (a named
    pipe, a device, a socket), else None: one ``stat()``. ``:memory:`` is no path."""
    import stat

    if p == IN_MEMORY:
        return None
    try:
        mode = os.stat(p).st_mode
    except (OSError, ValueError):
        return None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def unwritable(path: str | os.PathLike) -> str | None:
    """Why this process cannot write the existing SQLite store at ``path`` (a read-only
    file system, a read-only file, a folder where the journal files cannot be made), or
    None when it can, when the file does not exist yet, or for a PostgreSQL URL. Asks
    the system (``access(2)``, ``statvfs``), so root, who may write a 0444 file, gets None."""
    p = os.fspath(path)
    if is_url(p) or p == IN_MEMORY or not os.path.isfile(p):
        return None
    folder = os.path.dirname(os.path.abspath(p))
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return f"{folder} is on a read-only file system"
    except (OSError, AttributeError):  # no statvfs (Windows): the access checks below decide
        pass
    if not os.access(p, os.W_OK):
        return f"{p} is read-only for this user"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"its folder {folder} is not writable by this user (SQLite keeps its journal files there)"
    for side in (p + "-shm", p + "-wal"):
        # Left behind by a process that opened the store while it was read-only (SQLite
        # gives them the store file's mode) or by another user: the store file itself
        # may be writable again, yet every write fails until this file is too.
        if os.path.exists(side) and not os.access(side, os.W_OK):
            return f"its {side[-4:]} file {side} is read-only for this user ({_owner_mode(side)})"
    return None


def _owner_mode(path: str) -> str:
    """``mode 0444, owner alice`` for a message (the owner's uid where it has no name)."""
    try:
        st = os.stat(path)
    except OSError:
        return "cannot stat it"
    owner = str(st.st_uid)
    try:
        import pwd

        owner = pwd.getpwuid(st.st_uid).pw_name
    except (ImportError, KeyError):
        pass
    return f"mode {st.st_mode & 0o777:04o}, owner {owner}"


def connect_read_only(path: str | os.PathLike, why: str, *, busy_timeout_ms: int | None = None) -> sqlite3.Connection:
    """Open the SQLite store at ``path``, which this process cannot write (``why``, from
    :func:`unwritable`), for reading only, so reads go on (search, recall, show, stats,
    export, the web UI) and every write fails as read-only.

    A WAL store needs its ``-shm`` file to be read: where SQLite cannot make it (a
    read-only folder or mount, and no writer left one behind) and no ``-wal`` file holds
    commits, the store is opened as immutable (read straight from the file, no locks),
    which is exact then: the whole store is in the file and this process cannot change
    it. Raises :class:`StoreUnavailable` (reason ``read-only``) when neither works."""
    p = os.fspath(path)
    wait_ms = BUSY_TIMEOUT_MS if busy_timeout_ms is None else max(0, int(busy_timeout_ms))
    try:
        return _connect_once(p, True, wait_ms)
    except sqlite3.DatabaseError as exc:
        first = exc
    wal = p + "-wal"
    if not (os.path.exists(wal) and os.path.getsize(wal) > 0):
        try:
            return _connect_once(p, True, wait_ms, immutable=True)
        except sqlite3.DatabaseError as exc:
            first = exc
    raise store_unavailable(f"Cannot read the store at {p}: {why}, and SQLite could not open it read-only ({first}).",
                            reason="read-only", detail=str(first), path=p) from first


def read_only_message(path: object, why: str) -> str:
    """What a write to a store opened by :func:`connect_read_only` is told: what happened,
    that nothing was saved and reads still work, and what to do. Names no surface."""
    if "-shm file" in why or "-wal file" in why:
        side = str(path) + ("-shm" if "-shm file" in why else "-wal")
        return (f"The store {path} is read-only ({why}); nothing was saved. Reading still works. To save changes, "
                f"make {side} writable for this user too (chmod u+w, or chown it to this user), or use a writable "
                "copy of the store.")
    return (f"The store {path} is read-only ({why}); nothing was saved. Reading still works. To save changes, make "
            "the store file and its folder writable for this user, or use a writable copy of the store.")


def _connect_once(p: str, readonly: bool, wait_ms: int, *, immutable: bool = False) -> sqlite3.Connection:
    if readonly:
        from urllib.parse import quote

        uri = f"file:{quote(p)}?mode=ro" + ("&immutable=1" if immutable else "")  # quoted: '?' or '#' in a path
        conn = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=wait_ms / 1000, check_same_thread=False)
    else:
        if p != IN_MEMORY:
            os.makedirs(os.path.dirname(os.path.abspath(p)), exist_ok=True)
        conn = sqlite3.connect(p, isolation_level=None, timeout=wait_ms / 1000, check_same_thread=False)
    try:
        conn.execute(f"PRAGMA busy_timeout = {wait_ms}")
        if not readonly:
            _refuse_foreign(conn)
            # Ask before setting: an existing WAL store needs no lock for this.
            mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
            if mode.lower() != "wal":
                mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if p != IN_MEMORY and mode.lower() != "wal":
                raise StoreUnavailable(f"Cannot switch {p} to WAL mode (got {mode}). Is it on a network file system?",
                                       reason="bad-path", path=p)
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA temp_store = MEMORY")
        conn.execute("PRAGMA cache_size = -65536")  # 64 MiB page cache: keeps FTS doclists hot
    except BaseException:
        conn.close()
        raise
    conn.row_factory = sqlite3.Row
    return conn


def _open_reason(exc: BaseException) -> str:
    """The :data:`ledger.errors.STORE_REASONS` entry for a failure to open: a user's
    mistake (not a SQLite file, no permission, locked, disk full) is never ``error``,
    which the CLI reports as a ledger bug."""
    code = _code(exc)
    if is_disk_full(exc):
        return "disk-full"
    if code in (SQLITE_BUSY, SQLITE_LOCKED):
        return "locked"
    if code in (SQLITE_NOTADB, SQLITE_CORRUPT):
        return "corrupt"
    return "bad-path"


def _os_reason(exc: OSError) -> str:
    if isinstance(exc, PermissionError):
        return "read-only"
    return "disk-full" if _enospc_hint(exc) else "bad-path"


def _folder_error_message(p: str, exc: OSError) -> str:
    """Why the store's folder cannot be made, naming the file in the way (a
    ``$LEDGER_HOME`` or ``--db`` folder that is a regular file) when there is one."""
    d = os.path.dirname(os.path.abspath(p))
    while d and not os.path.exists(d) and os.path.dirname(d) != d:
        d = os.path.dirname(d)
    if os.path.exists(d) and not os.path.isdir(d):
        return (f"Cannot create the store at {p}: {d} is a file, not a folder. Give a store in a folder that can "
                f"hold it, or move {d} away.")
    return f"Cannot create the store folder for {p}: {exc.strerror or exc}. Check the store's path."


def _code(exc: BaseException) -> int | None:
    code = getattr(exc, "sqlite_errorcode", None)
    return None if code is None else code & 0xFF


def is_disk_full(exc: BaseException) -> bool:
    """SQLITE_FULL, or an I/O error whose cause is ENOSPC (SQLite reports a WAL or
    shared-memory file that cannot grow as a disk I/O error)."""
    if _code(exc) == SQLITE_FULL or "disk is full" in str(exc):
        return True
    return _code(exc) == SQLITE_IOERR and _enospc_hint(exc)


def _enospc_hint(exc: BaseException) -> bool:
    return "No space left" in str(exc) or "disk is full" in str(exc)


def open_error_message(p: str, exc: BaseException, wait_ms: int) -> str:
    """What went wrong opening the store at ``p``, said plainly: the permissions hint
    only where permissions can be the cause."""
    code = _code(exc)
    if is_disk_full(exc):
        return f"Cannot open the store at {p}: the disk is full ({exc}). Free some space and try again; nothing was written."
    if code in (SQLITE_BUSY, SQLITE_LOCKED):
        return (f"Cannot open the store at {p}: another program held it locked for {wait_ms / 1000:g} s ({exc}). "
                "Close the program holding it (another ledger, or an SQLite browser) and try again.")
    if os.path.isdir(p):  # $LEDGER_DB or store.db naming a folder (--db is refused before)
        return (f"Cannot open the store at {p}: it is a folder, not a store file. Give the store file instead, e.g. "
                f"{os.path.join(p, 'ledger.db')} (created on first use).")
    if code in (SQLITE_NOTADB, SQLITE_CORRUPT):
        return f"Cannot open the store at {p}: it is not a usable SQLite file ({exc}). Give a ledger store or a new file instead."
    return f"Cannot open the store at {p}: {exc}. Check the store's path and its permissions."


def _write_reason(exc: BaseException) -> str:
    """The :data:`ledger.errors.STORE_REASONS` entry for a failed write: a full disk, a
    lock held past the wait or a read-only file are the machine's state, not a ledger
    bug (``error``, which surfaces report as one)."""
    code = _code(exc)
    if is_disk_full(exc):
        return "disk-full"
    if code in (SQLITE_BUSY, SQLITE_LOCKED):
        return "locked"
    if code == SQLITE_READONLY:
        return "read-only"
    if code in (SQLITE_CORRUPT, SQLITE_NOTADB):
        return "corrupt"
    return "error"


def _write_failed(exc: BaseException) -> StoreUnavailable:
    """The error for a write SQLite refused (:func:`atomic`), of the class its reason
    has (a full disk is :class:`~ledger.errors.DiskFull`)."""
    return store_unavailable(write_error_message(exc), reason=_write_reason(exc), detail=str(exc))


def write_error_message(exc: BaseException) -> str:
    """The message for a write that failed inside SQLite (used by :func:`atomic`)."""
    code = _code(exc)
    if is_disk_full(exc):
        return f"The disk holding the store is full ({exc}). Free some space and try again; this change was not saved."
    if code in (SQLITE_BUSY, SQLITE_LOCKED):
        return f"The store is busy ({exc}): another process held the write lock past the wait limit. Try again."
    if code == SQLITE_READONLY:
        return (f"The store is read-only ({exc}); nothing was saved. Make the store file and its folder writable "
                "for this user, or use a writable copy of the store.")
    if code in (SQLITE_CORRUPT, SQLITE_NOTADB):
        return f"The store is damaged ({exc}); this change was not saved."  # each surface says how to check it
    return f"Could not write to the store: {exc}."


def _refuse_foreign(conn: sqlite3.Connection) -> None:
    """Ledger never writes into another program's database (not even its journal mode):
    a file with tables but no ledger migration history is refused."""
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
    if tables and "_migrations" not in tables:
        conn.close()
        shown = ", ".join(sorted(tables)[:5]) + (", …" if len(tables) > 5 else "")
        raise StoreUnavailable(
            f"This SQLite file already holds another program's tables ({shown}); ledger will not write into it. "
            "Give a new file as the store instead.", reason="bad-path"
        )


def set_lock_wait(conn, wait_ms: int) -> None:
    """Bound every later wait of ``conn`` for a lock held by another writer to
    ``wait_ms`` (ms, at least 1): SQLite's ``busy_timeout``, PostgreSQL's
    ``lock_timeout``. A hook that spent part of its budget waiting for the spool gives the
    rest of its work only what is left (docs/watcher.md "Time budget")."""
    ms = max(1, int(wait_ms))
    if is_postgres(conn):
        conn.execute(f"SET lock_timeout = {ms}")
    else:
        conn.execute(f"PRAGMA busy_timeout = {ms}")


def atomic(conn: sqlite3.Connection, *, wait_ms: int | None = None):
    """A write transaction: ``BEGIN IMMEDIATE`` … ``COMMIT``, rolled back on any error.
    Nested use becomes a savepoint, so a helper that writes can be called inside a
    larger transaction. ``wait_ms`` (outermost transaction only) bounds the wait for
    the write lock below the connection's busy timeout, for writes that may be skipped
    (counting a recall) rather than make the caller wait. On PostgreSQL the write lock
    is the store's advisory lock (:func:`.pg.atomic`)."""
    if is_postgres(conn):
        from . import pg

        return pg.atomic(conn, wait_ms=wait_ms)
    return _SqliteAtomic(conn, wait_ms)


class _SqliteAtomic:
    """:func:`atomic` on SQLite. A class rather than a ``contextlib`` generator: the agent
    verbs import nothing else from ``contextlib``, and importing it costs about 0.5 ms
    of each of their start-ups (docs/benchmarks.md "Driver import")."""

    __slots__ = ("conn", "wait_ms", "savepoint")

    def __init__(self, conn: sqlite3.Connection, wait_ms: int | None):
        self.conn, self.wait_ms, self.savepoint = conn, wait_ms, None

    def __enter__(self) -> sqlite3.Connection:
        conn = self.conn
        if conn.in_transaction:  # nested: a savepoint inside the caller's transaction
            self.savepoint = f"sp_{id(conn)}_{os.urandom(3).hex()}"
            conn.execute(f"SAVEPOINT {self.savepoint}")
            return conn
        try:
            if self.wait_ms is None:
                conn.execute("BEGIN IMMEDIATE")
            else:
                before = conn.execute("PRAGMA busy_timeout").fetchone()[0]
                conn.execute(f"PRAGMA busy_timeout = {max(0, int(self.wait_ms))}")
                try:
                    conn.execute("BEGIN IMMEDIATE")
                finally:
                    conn.execute(f"PRAGMA busy_timeout = {int(before)}")
        except sqlite3.OperationalError as exc:
            raise _write_failed(exc) from exc
        return conn

    def __exit__(self, typ, exc, tb) -> bool:
        conn, name = self.conn, self.savepoint
        if name is not None:
            if typ is None:
                conn.execute(f"RELEASE {name}")
            elif conn.in_transaction:  # not after SQLite rolled the whole transaction back itself
                try:
                    conn.execute(f"ROLLBACK TO {name}")
                    conn.execute(f"RELEASE {name}")
                except sqlite3.Error:
                    pass  # keep the original error
            return False
        if typ is None:
            try:
                conn.execute("COMMIT")
            except sqlite3.OperationalError as err:
                _rollback(conn)
                raise _write_failed(err) from err
            return False
        _rollback(conn)
        if isinstance(exc, sqlite3.OperationalError) and (
                is_disk_full(exc) or _code(exc) in (SQLITE_BUSY, SQLITE_LOCKED, SQLITE_READONLY, SQLITE_IOERR)):
            raise _write_failed(exc) from exc
        return False  # the error goes on as it was


def _rollback(conn: sqlite3.Connection) -> None:
    """Roll back if a transaction is still open. SQLite already rolled back by itself
    after some errors (a full disk, an I/O error): a second ROLLBACK would fail with
    "cannot rollback - no transaction is active" and hide the real error."""
    if not conn.in_transaction:
        return
    try:
        conn.execute("ROLLBACK")
    except sqlite3.Error:
        pass  # the original error is the one worth reporting


def store_error(exc: BaseException, path: object = None) -> StoreUnavailable:
    """The ledger error for a ``sqlite3`` error: :class:`StoreUnavailable` with a
    ``reason`` (see :data:`ledger.errors.STORE_REASONS`), SQLite's text as ``detail`` and
    the store ``path``. The message names no surface; the CLI and the web phrase hints."""
    detail = str(exc)
    low = detail.lower()
    where = f" ({path})" if path else ""
    if "disk is full" in low or "no space left" in low:
        reason, msg = "disk-full", f"The disk holding the store{where} is full ({detail}); the change was not saved."
    elif "readonly" in low or "read-only" in low:
        reason, msg = "read-only", (f"The store{where} is read-only ({detail}); nothing was saved. Make the store file "
                                    "and its folder writable for this user, or use a writable copy of the store.")
    elif "unable to open" in low or "permission" in low:
        reason, msg = "read-only", f"The store{where} cannot be written: {detail}."
    elif "locked" in low or "busy" in low:
        reason, msg = "locked", f"The store{where} is busy: {detail}. Another ledger process holds the write lock."
    elif "malformed" in low or "not a database" in low or "corrupt" in low:
        # How to check and restore it is each surface's to say (cli/hints.py, mcp, web).
        reason, msg = "corrupt", f"The store{where} is damaged or not a ledger store: {detail}."
    else:
        reason, msg = "error", f"The store{where} refused the operation: {detail}. Nothing was saved."
    return store_unavailable(msg, reason=reason, detail=detail, path=None if path is None else str(path))


def _pg_module():
    """:mod:`.pg` if a PostgreSQL store was opened in this process (never imports it)."""
    pg = sys.modules.get(__package__ + ".pg")
    return pg if pg is not None and getattr(pg, "psycopg", None) is not None else None


def _driver_errors() -> tuple:
    """The driver errors :func:`translating` maps: sqlite3's, and psycopg's once a
    PostgreSQL store is open."""
    pg = _pg_module()
    return (sqlite3.Error,) if pg is None else (sqlite3.Error, pg.psycopg.Error)


def driver_error(exc: BaseException, where: object = None) -> StoreUnavailable:
    """:func:`store_error` for either engine's driver error."""
    pg = _pg_module()
    if pg is not None and isinstance(exc, pg.psycopg.Error):
        return pg.store_error(exc, where)
    return store_error(exc, where)


def translating(fn, path_of=None):
    """``fn`` with driver (``sqlite3``, psycopg) errors raised as :func:`store_error`.
    ``path_of(args)`` names the store file for the message (default: the first
    argument's ``path``)."""

    def call(*args, **kw):
        try:
            return fn(*args, **kw)
        except _driver_errors() as exc:
            where = path_of(args) if path_of else getattr(args[0], "path", None) if args else None
            raise driver_error(exc, where) from exc

    call.__name__ = getattr(fn, "__name__", "call")
    call.__qualname__ = getattr(fn, "__qualname__", call.__name__)
    call.__doc__ = fn.__doc__
    call.__wrapped__ = fn
    return call


def translate_module(namespace: dict, names, path_of=None) -> None:
    """Wrap the functions ``names`` of a module (its ``globals()``) with :func:`translating`,
    so no ``sqlite3`` error leaves ``ledger.store``."""
    for name in names:
        namespace[name] = translating(namespace[name], path_of)


def translate_class(cls):
    """Class decorator: every public method (and ``__init__``) raises :func:`store_error`
    instead of a ``sqlite3`` error, including those the class inherits from its mixins
    (the class's own definition wins over a mixin's of the same name)."""
    seen: set[str] = set()
    for klass in cls.__mro__[:-1]:  # the class and its mixins, not object
        for name, attr in list(vars(klass).items()):
            if name in seen:
                continue
            seen.add(name)
            if callable(attr) and not isinstance(attr, (staticmethod, classmethod, type)) and (
                    not name.startswith("_") or name == "__init__"):
                setattr(cls, name, translating(attr))
    return cls
