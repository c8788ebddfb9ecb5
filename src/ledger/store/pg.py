"""The PostgreSQL dialect of the store (docs/postgres.md): a shared team store at a
``postgresql://`` URL.

The store's SQL is written once, in the subset both engines speak; this module is
what differs. :class:`PgConnection` gives the store the small part of the
``sqlite3.Connection`` interface it uses (``execute`` returning a cursor with
``fetchone``/``fetchall``/``rowcount``/``lastrowid``, rows readable by index and by
name, ``in_transaction``) over one psycopg connection, and rewrites each statement
once (cached) from the shared dialect to PostgreSQL's:

* placeholders: ``?`` and ``:name`` become psycopg's ``%s`` and ``%(name)s``;
* ``INSERT OR IGNORE`` becomes ``ON CONFLICT DO NOTHING``, ``INSERT OR REPLACE`` an
  upsert on the table's key (:data:`UPSERT_KEYS`);
* ``RETURNING`` the integer key of tables that have one, for ``lastrowid``;
* two-argument ``max``/``min`` become ``greatest``/``least``, ``LIKE`` ``ILIKE``
  (SQLite's LIKE ignores ASCII case), ``temp.`` ``pg_temp.``;
* DDL: ``INTEGER`` is ``BIGINT`` (epoch ms do not fit 32 bits), ``REAL`` ``DOUBLE
  PRECISION``, ``INTEGER PRIMARY KEY`` an identity column, and a table with no integer
  key gets an identity ``rowid`` column, so insertion order is there to sort by.

Full text is in :mod:`.textindex_pg` (tsvector + GIN, pg_trgm). Writes are serialised
per store by a transaction-scoped advisory lock (:func:`atomic`), the same one-writer
discipline SQLite's ``BEGIN IMMEDIATE`` gives: read-modify-write code in the store
(counting hits, unioning readers) cannot lose an update, on any number of machines.

psycopg is imported here only, and this module only when the store is PostgreSQL.
"""

from __future__ import annotations

import contextlib
import os
import re

from ..errors import StoreUnavailable, store_unavailable

try:
    import psycopg
    from psycopg import errors as pg_errors
    from psycopg.adapt import Loader
except ImportError:  # pragma: no cover - exercised by tests/test_pg_dialect.py in a venv without it
    psycopg = None

INSTALL_HINT = "pip install 'psycopg[binary]>=3.2' into ledger's environment (from a clone of ledger: pip install '.[postgres]')"
CONNECT_TIMEOUT_S = 10

#: ``INSERT OR REPLACE`` targets: table -> the key its upsert conflicts on.
UPSERT_KEYS = {
    "memory_files": ("memory_id", "path"),
    "session_values": ("session", "name"),
    "watch_escalation": ("session", "path"),
    "meta": ("key",),
}
#: Tables with an integer key: an INSERT returns it (``cursor.lastrowid``).
ROW_KEYS = {
    "memories": "seq", "events": "id", "observations": "id", "injections": "id", "llm_calls": "id",
    "checkpoints": "id", "session_prompts": "id", "vocab": "id",
}


def is_url(target: object) -> bool:
    """Whether ``target`` (a ``--db`` / ``$LEDGER_DB`` value) names a PostgreSQL store."""
    return isinstance(target, str) and target.startswith(("postgresql://", "postgres://"))


def redact(url: str) -> str:
    """``url`` without its password, for messages and logs."""
    from ..paths import shown_location

    return shown_location(url)


# ------------------------------------------------------------------------------ rows
class Row:
    """A result row read by index, slice or column name, like ``sqlite3.Row``;
    ``dict(row)`` gives ``{column: value}``."""

    __slots__ = ("_v", "_names", "_index")

    def __init__(self, values, names, index):
        self._v = values
        self._names = names
        self._index = index

    def __getitem__(self, k):
        if isinstance(k, str):
            return self._v[self._index[k]]
        return self._v[k]

    def __iter__(self):
        return iter(self._v)

    def __len__(self):
        return len(self._v)

    def __eq__(self, other):
        return tuple(self._v) == tuple(other)

    def __hash__(self):
        return hash(tuple(self._v))

    def __repr__(self):
        return f"Row{tuple(self._v)!r}"

    def keys(self):
        return list(self._names)


def _row_factory(cur):
    desc = cur.description
    if desc is None:
        return tuple
    names = tuple(d.name for d in desc)
    index: dict[str, int] = {}
    for i, n in enumerate(names):
        index.setdefault(n, i)
    return lambda values: Row(values, names, index)


if psycopg is not None:
    class _NumericLoader(Loader):
        """``numeric`` (what ``sum`` of integers gives) as ``int`` when it has no
        fraction, else ``float``: the values SQLite gives for the same expression."""

        def load(self, data):
            s = bytes(data).decode()
            return float(s) if ("." in s or "e" in s or "N" in s) else int(s)


# ------------------------------------------------------------------------------ SQL rewriting
_TOKENS = re.compile(r"""('(?:[^']|'')*')|("(?:[^"]|"")*")|(--[^\n]*)|(\?)|(?<![:\w]):([A-Za-z_]\w*)|(%)""")
_INSERT = re.compile(r"^\s*INSERT\s+OR\s+(IGNORE|REPLACE)\s+INTO\s+([\w.]+)\s*(\(([^)]*)\))?", re.I | re.S)
_PLAIN_INSERT = re.compile(r"^\s*INSERT\s+INTO\s+([\w.]+)", re.I)
_MINMAX = re.compile(r"\b(max|min)\s*\(", re.I)
_CREATE_TABLE = re.compile(r"^\s*CREATE\s+TABLE\s+(IF\s+NOT\s+EXISTS\s+)?([\w.]+)\s*\(", re.I)


def _placeholders(sql: str) -> str:
    def sub(m):
        if m.group(4):
            return "%s"
        if m.group(5):
            return f"%({m.group(5)})s"
        if m.group(6):
            return "%%"
        return m.group(0).replace("%", "%%")  # psycopg reads % inside literals too
    return _TOKENS.sub(sub, sql)


def _strings_masked(sql: str) -> str:
    """``sql`` with string literals blanked (same length), for scanning structure."""
    return re.sub(r"'(?:[^']|'')*'", lambda m: "'" + " " * (len(m.group(0)) - 2) + "'", sql)


def _minmax(sql: str) -> str:
    """Scalar ``max(a, b)`` / ``min(a, b)`` (SQLite) -> ``greatest`` / ``least``;
    one-argument calls are aggregates and stay."""
    out = sql
    pos = 0
    while True:
        masked = _strings_masked(out)
        m = _MINMAX.search(masked, pos)
        if not m:
            return out
        depth, commas, i = 0, 0, m.end() - 1
        while i < len(masked):
            ch = masked[i]
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
                if depth == 0:
                    break
            elif ch == "," and depth == 1:
                commas += 1
            i += 1
        if commas:
            name = "greatest" if m.group(1).lower() == "max" else "least"
            out = out[: m.start()] + name + out[m.start() + len(m.group(1)):]
        pos = m.start() + 1


def _ddl(sql: str) -> str:
    s = re.sub(r"\bINTEGER\s+PRIMARY\s+KEY(\s+AUTOINCREMENT)?", "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY", sql, flags=re.I)
    s = re.sub(r"\bINTEGER\b", "BIGINT", s, flags=re.I)
    s = re.sub(r"\bREAL\b", "DOUBLE PRECISION", s, flags=re.I)
    s = re.sub(r"\)\s*WITHOUT\s+ROWID\s*$", ")", s.rstrip(), flags=re.I)
    m = _CREATE_TABLE.match(s)
    if m and "IDENTITY PRIMARY KEY" not in s and not re.match(r"^\s*CREATE\s+TEMP", sql, re.I) and \
            not re.search(r"WITHOUT\s+ROWID", sql, re.I):
        # SQLite's implicit rowid: insertion order, which some queries sort by.
        s = s[: m.end()] + "rowid BIGINT GENERATED ALWAYS AS IDENTITY, " + s[m.end():]
    return s


def translate(sql: str) -> tuple[str, str | None]:
    """``(postgres_sql, returned_key)`` for a statement of the shared dialect; the
    second item names the column appended as ``RETURNING`` (for ``lastrowid``)."""
    s = sql.strip().rstrip(";")
    head = s[:40].upper()
    if head.startswith(("CREATE TABLE", "ALTER TABLE", "CREATE TEMP TABLE")):
        s = _ddl(s)
    returning = None
    m = _INSERT.match(s)
    if m:
        action, table, cols = m.group(1).upper(), m.group(2), m.group(4)
        s = "INSERT INTO " + s[m.start(2):]
        if action == "IGNORE":
            s += " ON CONFLICT DO NOTHING"
        else:
            key = UPSERT_KEYS[table]
            others = [c.strip() for c in (cols or "").split(",") if c.strip() and c.strip() not in key]
            sets = ", ".join(f"{c} = EXCLUDED.{c}" for c in others)
            s += f" ON CONFLICT ({', '.join(key)}) DO " + (f"UPDATE SET {sets}" if sets else "NOTHING")
    pm = _PLAIN_INSERT.match(s)
    if pm and pm.group(1) in ROW_KEYS and "RETURNING" not in s.upper():
        returning = ROW_KEYS[pm.group(1)]
        s += f" RETURNING {returning}"
    s = _minmax(s)
    # SQLite's null-safe equality with a parameter (``col IS ?``); PostgreSQL takes
    # ``IS`` only before NULL/TRUE/FALSE, and spells it ``IS NOT DISTINCT FROM``.
    s = re.sub(r"\bIS\s+NOT\s+(?=[?:][A-Za-z_]?)(?!::)", "IS DISTINCT FROM ", s, flags=re.I)
    s = re.sub(r"\bIS\s+(?=[?:][A-Za-z_]?)(?!::)", "IS NOT DISTINCT FROM ", s, flags=re.I)
    s = re.sub(r"\bLIKE\b", "ILIKE", s)
    s = re.sub(r"\btemp\.", "pg_temp.", s)
    s = re.sub(r"\bCROSS JOIN\b", "JOIN", s)  # SQLite's join-order hint; PostgreSQL plans by itself
    s = re.sub(r"\s+INDEXED BY \w+", "", s)  # SQLite's index hint, likewise
    return _placeholders(s), returning


_CACHE: dict[str, tuple[str, str | None]] = {}


def _translated(sql: str) -> tuple[str, str | None]:
    hit = _CACHE.get(sql)
    if hit is None:
        hit = _CACHE[sql] = translate(sql)
    return hit


def _param(v):
    return int(v) if isinstance(v, bool) else v


def _params(params):
    if params is None:
        return ()
    if isinstance(params, dict):
        return {k: _param(v) for k, v in params.items()}
    return tuple(_param(v) for v in params)


# ------------------------------------------------------------------------------ connection
class PgCursor:
    """What ``PgConnection.execute`` returns: the sqlite3 cursor's reading surface."""

    __slots__ = ("_cur", "lastrowid", "_first")

    def __init__(self, cur, returning: str | None):
        self._cur = cur
        self.lastrowid = None
        self._first = None
        if returning is not None:
            self._first = cur.fetchone()
            self.lastrowid = self._first[0] if self._first is not None else None

    @property
    def rowcount(self) -> int:
        return self._cur.rowcount

    @property
    def description(self):
        return self._cur.description

    def fetchone(self):
        if self._first is not None:
            r, self._first = self._first, None
            return r
        return self._cur.fetchone() if self._cur.description is not None else None

    def fetchall(self):
        rows = [self._first] if self._first is not None else []
        self._first = None
        if self._cur.description is not None:
            rows += self._cur.fetchall()
        return rows

    def __iter__(self):
        if self._first is not None:
            yield self._first
            self._first = None
        if self._cur.description is not None:
            yield from self._cur


class PgConnection:
    """One psycopg connection in autocommit mode, spoken to like the store's sqlite3
    connections (transactions are explicit: :func:`atomic`, ``read_snapshot``)."""

    is_postgres = True

    def __init__(self, raw, url: str, lock_key: int, readonly: bool = False):
        self._raw = raw
        self.url = url
        self.lock_key = lock_key
        #: Opened read-only: every transaction is read-only, and search's scratch table
        #: was created at connect (PostgreSQL refuses any CREATE once read-only).
        self.readonly = readonly

    @property
    def in_transaction(self) -> bool:
        return self._raw.info.transaction_status != psycopg.pq.TransactionStatus.IDLE

    def execute(self, sql: str, params=()) -> PgCursor:
        if sql.strip().upper() == "BEGIN":
            # A read snapshot (rows.read_snapshot): several statements see one state.
            sql = "BEGIN ISOLATION LEVEL REPEATABLE READ"
        q, returning = _translated(sql)
        cur = self._raw.cursor()
        cur.execute(q, _params(params))
        return PgCursor(cur, returning)

    def run(self, sql: str, params=()) -> PgCursor:
        """A statement already in PostgreSQL's dialect (psycopg placeholders), untranslated."""
        cur = self._raw.cursor()
        cur.execute(sql, _params(params) if params else None)
        return PgCursor(cur, None)

    def executemany(self, sql: str, seq) -> PgCursor:
        q, _ = _translated(sql)
        q = re.sub(r" RETURNING \w+$", "", q)
        cur = self._raw.cursor()
        rows = [_params(p) for p in seq]
        if rows:
            cur.executemany(q, rows)
        return PgCursor(cur, None)

    def close(self) -> None:
        self._raw.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def connect(url: str, *, readonly: bool = False, wait_ms: int = 10_000) -> PgConnection:
    """Open the PostgreSQL store at ``url`` (autocommit; transactions explicit).

    ``wait_ms`` bounds the connection attempt and each wait for the write lock (the
    store's busy timeout, :data:`.connection.BUSY_TIMEOUT_MS` by default). Raises :class:`StoreUnavailable`:
    ``missing-driver`` when psycopg is not installed (the message says what to
    install), ``unreachable`` when the server cannot be reached or refuses the login."""
    if psycopg is None:
        raise StoreUnavailable(
            f"The store {redact(url)} is a PostgreSQL database, and this ledger cannot speak to PostgreSQL: "
            f"the psycopg package is missing. Install it: {INSTALL_HINT}.", reason="missing-driver", path=redact(url))
    wait_ms = max(0, int(wait_ms))
    timeout = max(1, min(CONNECT_TIMEOUT_S, int(wait_ms / 1000 + 0.999)))
    try:
        raw = psycopg.connect(url, autocommit=True, connect_timeout=timeout, row_factory=_row_factory,
                              application_name="ledger")
    except psycopg.Error as exc:
        raise StoreUnavailable(
            f"Cannot reach the PostgreSQL store {redact(url)}: {_said(exc)} Check the URL, that the "
            "server is running and that this machine may connect.", reason="unreachable",
            detail=str(exc), path=redact(url)) from exc
    try:
        raw.adapters.register_loader("numeric", _NumericLoader)
        raw.execute(f"SET lock_timeout = {max(1, wait_ms)}")  # 0 would mean: wait forever
        if readonly:
            from .textindex_pg import REL_TABLE  # search's scratch table: CREATE is refused once read-only
            raw.execute(REL_TABLE)
            raw.execute("SET default_transaction_read_only = on")
        schema, key, path = raw.execute(
            "SELECT current_schema(), hashtext('ledger:' || coalesce(current_schema(), '')), "
            "current_setting('search_path')").fetchone()
        if schema is None:
            raise StoreUnavailable(f"The PostgreSQL store {redact(url)} has no schema to write in (check search_path).",
                                   reason="bad-path", path=redact(url))
        named = first_schema(path)
        if named is not None and named != schema:
            # PostgreSQL skips a schema of the search path that does not exist and uses
            # the next one (often public): a mistyped or dropped schema would silently
            # put the store somewhere else.
            raise StoreUnavailable(
                f"The schema {named!r} named first in the search path of {redact(url)} does not exist (PostgreSQL "
                f"would use {schema!r} instead). Create it (CREATE SCHEMA {named}) or fix the URL's search_path.",
                reason="bad-path", path=redact(url))
    except BaseException:
        raw.close()
        raise
    conn = PgConnection(raw, url, int(key), readonly)
    if not readonly:
        _refuse_foreign(conn)
    return conn


def first_schema(search_path: str) -> str | None:
    """The schema named first in a ``search_path`` setting (``'t_1, public'`` ->
    ``'t_1'``; a quoted name keeps its case, an unquoted one is folded to lower case as
    PostgreSQL folds identifiers), or None when it is ``"$user"`` (the default: a schema
    named after the login, which need not exist) or the path is empty."""
    head = search_path.split(",")[0].strip()
    if not head or head == '"$user"' or head == "$user":
        return None
    if len(head) >= 2 and head[0] == head[-1] == '"':
        return head[1:-1].replace('""', '"')
    return head.lower()


def _said(exc: BaseException) -> str:
    """What the driver said, on one line, ending with one full stop."""
    text = " ".join(str(exc).split()).rstrip(".")
    return text + "."


def _refuse_foreign(conn: PgConnection) -> None:
    """As for SQLite: a schema holding tables but no ledger migration history belongs
    to another program, and ledger will not write into it."""
    tables = table_names(conn)
    if tables and "_migrations" not in tables:
        conn.close()
        shown = ", ".join(sorted(tables)[:5]) + (", …" if len(tables) > 5 else "")
        raise StoreUnavailable(
            f"This PostgreSQL schema already holds another program's tables ({shown}); ledger will not write into it. "
            "Give an empty database as the store instead, or set a schema with ?options=-csearch_path%3Dledger.",
            reason="bad-path", path=redact(conn.url))


def table_names(conn: PgConnection) -> set[str]:
    """The tables of the store's schema (the first of the search path)."""
    return {r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")}


@contextlib.contextmanager
def atomic(conn: PgConnection, *, wait_ms: int | None = None):
    """A write transaction holding the store's advisory write lock; nested use is a
    savepoint. ``wait_ms`` bounds the wait for the lock (``lock_timeout``). A lock
    not had in time, or a lost connection, raises :class:`StoreUnavailable`."""
    if conn.in_transaction:
        name = f"sp_{os.urandom(4).hex()}"
        conn.execute(f"SAVEPOINT {name}")
        try:
            yield conn
        except BaseException:
            with contextlib.suppress(psycopg.Error):
                conn.execute(f"ROLLBACK TO SAVEPOINT {name}")
                conn.execute(f"RELEASE SAVEPOINT {name}")
            raise
        else:
            conn.execute(f"RELEASE SAVEPOINT {name}")
        return
    try:
        conn.execute("BEGIN ISOLATION LEVEL READ COMMITTED")
        if wait_ms is not None:
            conn.execute(f"SET LOCAL lock_timeout = {max(1, int(wait_ms))}")
        conn.execute(f"SELECT pg_advisory_xact_lock({conn.lock_key})")
    except psycopg.Error as exc:
        _rollback(conn)
        raise store_error(exc, conn) from exc
    try:
        yield conn
    except psycopg.Error as exc:
        _rollback(conn)
        raise store_error(exc, conn) from exc
    except BaseException:
        _rollback(conn)
        raise
    else:
        try:
            conn.execute("COMMIT")
        except psycopg.Error as exc:
            _rollback(conn)
            raise store_error(exc, conn) from exc


def _rollback(conn: PgConnection) -> None:
    if conn.in_transaction:
        with contextlib.suppress(psycopg.Error):
            conn.execute("ROLLBACK")


def store_error(exc: BaseException, where: object = None) -> StoreUnavailable:
    """The ledger error for a psycopg error (see :func:`.connection.store_error`)."""
    url = getattr(where, "url", where)
    shown = f" ({redact(url)})" if isinstance(url, str) else ""
    detail = " ".join(str(exc).split())
    if isinstance(exc, (pg_errors.LockNotAvailable, pg_errors.QueryCanceled)):
        return StoreUnavailable(f"The store{shown} is busy: another writer held the write lock past the wait limit "
                                f"({detail}). Try again.", reason="locked", detail=detail, path=url)
    if isinstance(exc, pg_errors.DiskFull):
        return store_unavailable(f"The disk of the PostgreSQL server{shown} is full ({detail}); the change was not saved.",
                                 reason="disk-full", detail=detail, path=url)
    if isinstance(exc, pg_errors.ReadOnlySqlTransaction):
        return StoreUnavailable(f"The store{shown} is read-only for this connection (it was opened read-only: {detail}); "
                                "nothing was saved. Reading still works.", reason="read-only", detail=detail, path=url)
    if isinstance(exc, pg_errors.InsufficientPrivilege):
        return StoreUnavailable(f"The store{shown} is read-only for this database role ({detail}); nothing was saved. "
                                "Reading still works. To save changes, connect as a role that may write the store's "
                                "tables, or have its owner GRANT INSERT, UPDATE, DELETE on them to this role.",
                                reason="read-only", detail=detail, path=url)
    if isinstance(exc, psycopg.OperationalError):
        return StoreUnavailable(f"Lost the connection to the PostgreSQL store{shown}: {detail}. Nothing was saved.",
                                reason="unreachable", detail=detail, path=url)
    return StoreUnavailable(f"The store{shown} refused the operation: {detail}. Nothing was saved.",
                            reason="error", detail=detail, path=url)

