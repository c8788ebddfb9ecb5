"""The store: every SQL statement of ledger lives in this package.

:class:`Store` wraps one connection. It is split by job: memories (write, read, change),
clusters, agents and the log here (CRUD); search in :mod:`.search`, sources in
:mod:`.sources`, statistics in :mod:`.stats` (mixins of :class:`Store`), the columns and
batching they share in :mod:`.rows`. Methods take ``now`` (epoch ms) explicitly so the
service owns the clock. Reads return frozen dataclasses from :mod:`ledger.models`;
strength is computed at read time (never stored), in SQL for ranking and in Python for
hydration, from the same constants.
"""

from __future__ import annotations

import os

from ._sqlite import sqlite3

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover - `typing` and `pathlib` stay off the CLI start-up path
    from pathlib import Path
    from typing import Iterator, Sequence

    from .watch import Bound

from .. import strength as S
from ..errors import InvalidInput, NotAClaim, StoreUnavailable, UnknownCluster, UnknownMemory, missing_id
from ..ids import new_id
from ..models import Agent, Cluster, Event, FileKey, Memory, MemoryRow
from ..text import slugify
from ..vocab import MAX_CLUSTER_LABEL, PALETTE, SORTS  # noqa: F401 - SORTS re-exported (ledger.store.SORTS)
from . import ops, textindex
from .connection import atomic, connect, connect_read_only, read_only_message, translate_class, unwritable
from .migrations import migrate, require_current, require_store
from .rows import MEMORY_COLS, MEMORY_FROM, batches
from .search import SearchMixin
from .sources import SourcesMixin
from .stats import StatsMixin

# The seed's ten clusters (docs/originals.md §1.3): id, label, colour.
SEED_CLUSTERS = (
    ("prefs", "preferences", "#b7c14a"),
    ("people", "people & orgs", "#4a9fd4"),
    ("code", "codebases", "#cf6fb8"),
    ("travel", "travel & places", "#4fb8a8"),
    ("health", "health", "#6fbf73"),
    ("money", "finances", "#d9a03c"),
    ("home", "home & devices", "#6f86e0"),
    ("reading", "reading & notes", "#9a76dd"),
    ("proc", "procedures", "#e0793f"),
    ("projects", "projects", "#d6606a"),
)

# Re-exported for bench/ scripts that read the search weights from here.
CONTEXT_WEIGHT = textindex.CONTEXT_WEIGHT
FUZZY_WEIGHT = textindex.FUZZY_WEIGHT
#: Characters. A longer ref is not looked up as part of an id (ids are about 16 long).
MAX_ID_REF = 64
# Prefixes of the ids that are not memories (the callers of ledger.ids.new_id), for the
# message of a memory lookup handed one of them.
_OTHER_IDS = {"cf": "a conflict", "cc": "a conflict candidate", "s": "a source"}


@translate_class
class Store(SearchMixin, SourcesMixin, StatsMixin):
    """One open store file. Not thread-safe by itself; the web server gives each worker
    thread its own ``Store``. Use as a context manager or call :meth:`close`."""

    def __init__(self, path: str | os.PathLike, *, readonly: bool = False, seed: bool = True, now: int = 0):
        """Open the store at ``path`` (a file, created with its folder if missing, or a
        PostgreSQL URL). A store this process cannot write (a read-only file, folder or
        mount: :func:`.connection.unwritable`) is opened read-only instead of refused:
        reads work, and every write raises :class:`~ledger.errors.StoreUnavailable`
        (reason ``read-only``) saying what to do; :attr:`read_only` says why."""
        self._path = os.fspath(path)
        why = unwritable(self._path)
        #: Why this store cannot be written (None when it can): see :meth:`atomic`.
        self.read_only: str | None = why
        if why is not None:
            self._conn = connect_read_only(self._path, why)
            require_current(self._conn, self._path, why)
            return
        self._conn = connect(self._path, readonly=readonly)
        try:
            if readonly:
                require_store(self._conn, self._path)
            else:
                applied = migrate(self._conn)
                if seed:
                    self._seed_clusters(now)
                self.discard_abandoned_ingests()  # a killed ingest's hidden rows (store/sources.py)
                if applied:
                    self._checkpoint()
        except BaseException:
            self._conn.close()
            raise

    def _checkpoint(self) -> None:
        """Move the WAL into the store file and empty it (``wal_checkpoint(TRUNCATE)``)
        after creating or migrating a store, so the ``.db`` file alone holds the schema
        and the seed rows: the CLI's agent verbs end with ``os._exit`` and never close
        the store (the close would checkpoint), and a new store's migrations leave about
        1 MB in the WAL, so a copy of ``ledger.db`` alone held no memories. Best effort:
        a reader holding an old snapshot makes the checkpoint partial, which is fine
        (SQLite's auto-checkpoint carries on later). No-op on PostgreSQL."""
        if getattr(self._conn, "is_postgres", False):
            return
        try:
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        except sqlite3.OperationalError:
            pass  # busy: another process reads; the data is safe in the WAL meanwhile

    @property
    def path(self) -> "Path":
        """The store file (built on demand: ``pathlib`` is not imported at start-up);
        for a PostgreSQL store, its URL as a string without the password."""
        if getattr(self._conn, "is_postgres", False):
            from .pg import redact

            return redact(self._path)
        from pathlib import Path

        return Path(self._path)

    @property
    def engine(self) -> str:
        """``"sqlite"`` or ``"postgresql"``."""
        return "postgresql" if getattr(self._conn, "is_postgres", False) else "sqlite"

    def write_refusal(self) -> str | None:
        """Why this connection cannot write the store, found without writing, or None
        when it can: :attr:`read_only` (a SQLite file, folder or mount this process
        cannot write); on PostgreSQL a connection opened read-only, or a role lacking
        INSERT, UPDATE or DELETE on the store's tables (one query: the web UI asks before
        anyone clicks, docs/store.md "A store that cannot be written")."""
        if self.read_only is not None:
            return self.read_only
        if not getattr(self._conn, "is_postgres", False):
            return None
        ro, role, may = self._conn.execute(
            "SELECT current_setting('transaction_read_only'), current_user, has_table_privilege('memories', 'INSERT') "
            "AND has_table_privilege('memories', 'UPDATE') AND has_table_privilege('memories', 'DELETE')").fetchone()
        if ro == "on":
            return "the connection was opened read-only"
        if not may:
            return f"the database role {role} may not write the store's tables"
        return None

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def atomic(self, *, wait_ms: int | None = None):
        """A write transaction (``BEGIN IMMEDIATE``), nestable; ``wait_ms`` bounds the
        wait for the write lock (see :func:`.connection.atomic`). Raises
        :class:`~ledger.errors.StoreUnavailable` (reason ``read-only``) at once on a store
        opened read-only because it cannot be written."""
        if self.read_only is not None:
            raise StoreUnavailable(read_only_message(self._path, self.read_only), reason="read-only", path=self._path)
        return atomic(self._conn, wait_ms=wait_ms)

    # ------------------------------------------------------------------ clusters
    def _seed_clusters(self, now: int) -> None:
        if self._conn.execute("SELECT count(*) FROM clusters").fetchone()[0] >= len(SEED_CLUSTERS):
            return
        with self.atomic():
            self._conn.executemany(
                "INSERT OR IGNORE INTO clusters (id, label, color, created_at) VALUES (?, ?, ?, ?)",
                [(i, label, color, now) for i, label, color in SEED_CLUSTERS],
            )

    def clusters(self) -> list[Cluster]:
        """All clusters ordered by label, each with its live-memory count (the sum of
        its writers' counts in ``agent_summary``, kept on write by migration
        ``m017_agent_summary``: counting live memories per cluster read 100k index
        entries per request at 100k memories)."""
        n = dict(self._conn.execute("SELECT cluster_id, sum(wrote) FROM agent_summary GROUP BY cluster_id").fetchall())
        rows = self._conn.execute("SELECT id, label, color, created_at FROM clusters ORDER BY label").fetchall()
        return [Cluster(r["id"], r["label"], r["color"], r["created_at"], int(n.get(r["id"]) or 0)) for r in rows]

    def cluster_ids(self) -> list[str]:
        """Every cluster id, sorted (one index read, no counts)."""
        return [r[0] for r in self._conn.execute("SELECT id FROM clusters ORDER BY id")]

    def first_created_ms(self) -> int | None:
        """When the store's first memory was written (epoch ms UTC; dropped memories
        count, they existed), or None for a store with no memory. One read of the
        ``memories_created`` index."""
        row = self._conn.execute("SELECT min(created_at) FROM memories").fetchone()
        return row[0] if row else None

    def cluster_labels(self) -> dict[str, str]:
        """``{id: label}`` of every cluster, by id (one read, no counts)."""
        return {r[0]: r[1] for r in self._conn.execute("SELECT id, label FROM clusters ORDER BY id")}

    def require_cluster(self, cluster_id: str) -> None:
        """Raise :class:`UnknownCluster` (``field="cluster"``, the known ids as
        ``choices``, the id whose label or slug matches as ``suggestion``) unless
        ``cluster_id`` names a cluster. The message names no surface."""
        if not self._conn.execute("SELECT 1 FROM clusters WHERE id = ?", (cluster_id,)).fetchone():
            known = tuple(r[0] for r in self._conn.execute("SELECT id FROM clusters ORDER BY id"))
            by_label = self._conn.execute(
                "SELECT id FROM clusters WHERE id = ? OR lower(label) = lower(?)", (slugify(cluster_id), cluster_id.strip())
            ).fetchone()
            raise UnknownCluster(f'No cluster "{cluster_id}".', field="cluster", value=cluster_id, choices=known,
                                 suggestion=by_label[0] if by_label else None)

    def add_cluster(self, label: str, now: int, *, cluster_id: str | None = None, color: str | None = None) -> Cluster:
        """Create a cluster (id = slug of the label unless given). An existing id returns
        the existing cluster unchanged, as in the seed."""
        label = (label or "").strip()
        if not label:
            raise InvalidInput("label is required: a cluster needs a name.", field="label")
        if len(label) > MAX_CLUSTER_LABEL or len(cluster_id or "") > MAX_CLUSTER_LABEL:
            long = label if len(label) > MAX_CLUSTER_LABEL else cluster_id
            raise InvalidInput(f"The cluster {'label' if long is label else 'id'} is {len(long):,} characters long; "
                               f"at most {MAX_CLUSTER_LABEL} are allowed (a short topic name). Nothing was created.",
                               field="label")
        cid = slugify(cluster_id or label)
        if not cid:
            raise InvalidInput(f'"{label}" has no letters or digits to make a cluster id from.')
        with self.atomic():
            n = self._conn.execute("SELECT count(*) FROM clusters").fetchone()[0]
            self._conn.execute(
                "INSERT OR IGNORE INTO clusters (id, label, color, created_at) VALUES (?, ?, ?, ?)",
                (cid, label, color or PALETTE[n % len(PALETTE)], now),
            )
        return next(c for c in self.clusters() if c.id == cid)

    # ------------------------------------------------------------------ agents
    def touch_agent(self, agent: str, now: int) -> None:
        """Register an agent on first sight; bump ``last_seen`` after that (:func:`ops.touch_agent`)."""
        ops.touch_agent(self._conn, agent, now)

    def agent_ids(self) -> list[str]:
        """Every agent id the store has seen, the most recently seen first (one read of
        the agents table, no counts)."""
        return [r[0] for r in self._conn.execute("SELECT id FROM agents ORDER BY last_seen DESC, id")]

    def agents(self) -> list[Agent]:
        rows = self._conn.execute("SELECT * FROM agents ORDER BY last_seen DESC").fetchall()
        # max(): rows an older import left with last_seen before first_seen read consistent.
        return [Agent(r["id"], r["label"], r["role"], r["color"], r["first_seen"], max(r["first_seen"], r["last_seen"]),
                      {"endpoint": r["endpoint"], "readScope": r["read_scope"], "writeScope": r["write_scope"]}) for r in rows]

    # ------------------------------------------------------------------ events
    def log(self, now: int, agent: str, op: str, memory_id: str | None = None, detail: str = "", ms: float | None = None) -> None:
        """Append one row to the operation log (:func:`ops.log_event`)."""
        ops.log_event(self._conn, now, agent, op, memory_id, detail, ms)

    def events(self, limit: int = 20, *, op_prefix: str | None = None) -> list[Event]:
        """Newest first."""
        if op_prefix:
            rows = self._conn.execute("SELECT * FROM events WHERE op LIKE ? ORDER BY id DESC LIMIT ?", (op_prefix + "%", limit))
        else:
            rows = self._conn.execute("SELECT * FROM events ORDER BY id DESC LIMIT ?", (limit,))
        return [Event(r["id"], r["at"], r["agent"], r["op"], r["memory_id"], r["detail"], r["ms"]) for r in rows]

    def memory_events(self, memory_id: str, limit: int = 50) -> list[Event]:
        """The operation log's rows about one memory (written, corroborated, edited,
        merged into, judged, resolved, pinned, dropped...), oldest first; at most
        ``limit``, the newest kept. Index ``events_memory`` (m018)."""
        rows = self._conn.execute(
            "SELECT * FROM events WHERE memory_id = ? ORDER BY id DESC LIMIT ?", (memory_id, int(limit))).fetchall()
        return [Event(r["id"], r["at"], r["agent"], r["op"], r["memory_id"], r["detail"], r["ms"]) for r in reversed(rows)]

    def former_texts(self, memory_id: str) -> list[tuple[str, int, str]]:
        """Every text the memory had before an edit or a merge, oldest first:
        ``(text, replaced_at epoch ms, agent who replaced it)`` (``memory_text_history``,
        the rows ``asof:`` answers from)."""
        return [(r[0], r[1], r[2]) for r in self._conn.execute(
            "SELECT text, replaced_at, replaced_by FROM memory_text_history WHERE memory_id = ? ORDER BY replaced_at, rowid",
            (memory_id,))]

    # ------------------------------------------------------------------ writing memories
    def _index(self, seq: int, text: str, context: str = "") -> None:
        textindex.index(self._conn, seq, text, context)

    def _reindex(self, seq: int, text: str) -> None:
        textindex.index(self._conn, seq, text, textindex.unindex(self._conn, seq))

    def add_reader(self, memory_id: str, agent: str) -> bool:
        """Add ``agent`` to the memory's readers (idempotent), keeping reader_count
        (:func:`ops.add_reader`). Returns whether it is a new reader."""
        return ops.add_reader(self._conn, memory_id, agent)

    def corroborate(self, memory_id: str, agent: str, now: int, detail: str = "") -> bool:
        """``agent`` states a claim already stored: it becomes a reader, once
        (:func:`ops.corroborate`, docs/store.md "Corroboration")."""
        return ops.corroborate(self._conn, memory_id, agent, now, detail)

    @property
    def watch(self) -> "Bound":
        """The watcher's operations (sessions, observations, leases, LLM accounting,
        checkpoints) on this store's connection: :class:`ledger.store.watch.Bound`
        (imported here: the agent verbs never use it; docs/benchmarks.md "Start-up")."""
        from .watch import Bound

        return Bound(self._conn)

    def insert_claim(
        self,
        text: str,
        cluster_id: str,
        writer: str,
        now: int,
        *,
        note: str = "",
        source_id: str | None = None,
        topic: str | None = None,
        files: Sequence[FileKey] = (),
    ) -> str:
        """Insert a claim (pending review) with its writer as first reader, index it and
        log ``memory.write``. Runs inside the caller's transaction if there is one."""
        mid = new_id("m", now)
        with self.atomic():
            self.touch_agent(writer, now)
            cur = self._conn.execute(
                """INSERT INTO memories (id, text, kind, origin, cluster_id, writer, source_id, provenance, topic,
                                         created_at, last_read_at, machine)
                   VALUES (?, ?, 'claim', ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                (mid, text, "doc" if source_id else "chat", cluster_id, writer, source_id, note, topic, now, now, ops.MACHINE),
            )
            self._conn.execute("INSERT INTO memory_readers (memory_id, agent_id) VALUES (?, ?)", (mid, writer))
            ops.count_new_memory(self._conn, mid)
            for f in files:
                self._conn.execute(
                    "INSERT OR REPLACE INTO memory_files (memory_id, path, size, mtime_ms, sha256) VALUES (?, ?, ?, ?, ?)",
                    (mid, f.path, f.size, f.mtime_ms, f.sha256),
                )
            self._index(cur.lastrowid, text)
            self.log(now, writer, "memory.write", mid, text)
        return mid

    # ------------------------------------------------------------------ reading memories
    def _hydrate(self, rows: list[sqlite3.Row], now: int, scores: dict[str, float] | None = None,
                 texts: dict[str, str] | None = None) -> list[Memory]:
        if not rows:
            return []
        ids = [r["id"] for r in rows]
        readers: dict[str, list[str]] = {i: [] for i in ids}
        files: dict[str, list[FileKey]] = {}
        conflict_with: dict[str, str] = {}
        for chunk_ids in batches(ids, 500):
            marks = ",".join("?" * len(chunk_ids))
            for r in self._conn.execute(f"SELECT memory_id, agent_id FROM memory_readers WHERE memory_id IN ({marks}) ORDER BY agent_id", chunk_ids):
                readers[r[0]].append(r[1])
            for r in self._conn.execute(f"SELECT * FROM memory_files WHERE memory_id IN ({marks}) ORDER BY path", chunk_ids):
                files.setdefault(r["memory_id"], []).append(FileKey(r["path"], r["size"], r["mtime_ms"], r["sha256"]))
            for r in self._conn.execute(
                f"SELECT a, b FROM conflicts WHERE status = 'open' AND (a IN ({marks}) OR b IN ({marks})) ORDER BY created_at",
                chunk_ids + chunk_ids,
            ):
                conflict_with.setdefault(r[0], r[1])
                conflict_with.setdefault(r[1], r[0])
        out = []
        for r in rows:
            st, f = S.of_row(r, now)
            rid = r["id"]
            out.append(Memory(
                id=rid, text=(texts or {}).get(rid, r["text"]), kind=r["kind"], origin=r["origin"], cluster_id=r["cluster_id"],
                cluster_label=r["cluster_label"] or r["cluster_id"], cluster_color=r["cluster_color"] or "#888888",
                writer=r["writer"], readers=_writer_first(r["writer"], readers.get(rid, ())), source_id=r["source_id"],
                chunk_index=r["chunk_index"], provenance=r["provenance"], created_at=r["created_at"],
                last_read_at=r["last_read_at"], hits=r["hits"], source_count=r["source_count"],
                pinned=bool(r["pinned"]), archived=bool(r["archived"]), reviewed_at=r["reviewed_at"],
                deleted_at=r["deleted_at"], strength=st, factors=f, conflict_with=conflict_with.get(rid),
                topic=r["topic"], files=tuple(files.get(rid, ())), score=(scores or {}).get(rid),
                source_trust=r["trust"] if r["kind"] == "chunk" else None, machine=r["machine"],
            ))
        return out

    def get_many(self, ids: Sequence[str], now: int) -> list[Memory]:
        """Memories by id (dropped ones included), in the order asked; unknown ids are skipped."""
        rows = []
        for chunk_ids in batches(list(ids), 500):
            marks = ",".join("?" * len(chunk_ids))
            rows += self._conn.execute(f"SELECT {MEMORY_COLS} FROM {MEMORY_FROM} WHERE m.id IN ({marks})", chunk_ids).fetchall()
        by_id = {m.id: m for m in self._hydrate(rows, now)}
        return [by_id[i] for i in ids if i in by_id]

    def get(self, memory_id: str, now: int) -> Memory:
        """One memory (dropped or not); raises :class:`UnknownMemory`."""
        found = self.get_many([memory_id], now)
        if not found:
            raise UnknownMemory(f"No memory {memory_id}. It may have been mistyped.", field="memory", value=memory_id)
        return found[0]

    def resolve_id(self, ref: str) -> str:
        """A full memory id from an id, a unique tail of one (the 6-character ids that
        ``search`` and ``review`` print) or a unique head of one (``m_mf3x``). Raises
        UnknownMemory when none match, or when several do (the message lists up to five)."""
        ref = (ref or "").strip()
        if not ref:
            raise missing_id("memory", ref)
        if self.exists(ref):
            return ref
        # Ids are short: a longer ref cannot be a part of one, and SQLite refuses a LIKE
        # pattern over 50,000 bytes ("pattern too complex"), which read as a ledger bug.
        if 4 <= len(ref) <= MAX_ID_REF and ref.replace("_", "").isalnum():
            # Tail first (what search prints), then head; '_' is a LIKE wildcard, so escape it.
            esc = ref.replace("\\", "\\\\").replace("_", "\\_").replace("%", "\\%")
            for pattern in ("%" + esc, esc + "%"):
                rows = self._conn.execute("SELECT id FROM memories WHERE id LIKE ? ESCAPE '\\' ORDER BY id LIMIT 6",
                                          (pattern,)).fetchall()
                if len(rows) == 1:
                    return rows[0][0]
                if len(rows) > 1:
                    shown = ", ".join(r[0] for r in rows[:5]) + (", ..." if len(rows) > 5 else "")
                    raise UnknownMemory(f'"{ref}" matches several memories ({shown}); give more of the id.',
                                        field="memory", value=ref)
        if len(ref) > MAX_ID_REF:  # a pasted text, not an id: say so instead of echoing all of it
            raise UnknownMemory(f"No memory {ref[:24]}… ({len(ref):,} characters): a memory id is about 16 characters "
                                f"long and at most {MAX_ID_REF} are looked up. Give an id as a search prints it.",
                                field="memory", value=ref[:MAX_ID_REF])
        other = _OTHER_IDS.get(ref.split("_", 1)[0]) if "_" in ref else None
        if other:  # a valid id of something else: naming it beats "mistyped"
            raise UnknownMemory(f"{ref} is {other} id, not a memory id: memory ids start with m_ (claims) or c_ (chunks).",
                                field="memory", value=ref)
        if len(ref) < 4 and ref.replace("_", "").isalnum():
            raise UnknownMemory(f'"{ref}" is too short to look up: give at least 4 characters of a memory id '
                                "(its end, as a search prints it, or its start).", field="memory", value=ref)
        raise UnknownMemory(f"No memory {ref}. It may have been mistyped.", field="memory", value=ref)

    def exists(self, memory_id: str) -> bool:
        return self._conn.execute("SELECT 1 FROM memories WHERE id = ?", (memory_id,)).fetchone() is not None

    def count_read(self, ids: Sequence[str], agent: str, now: int) -> None:
        """A counted read (recall, injection): hits+1, last read = now, agent added as
        reader (:func:`ops.count_read`)."""
        ops.count_read(self._conn, ids, agent, now)

    # ------------------------------------------------------------------ changing memories
    def soft_delete(self, memory_id: str, reason: str, agent: str, now: int) -> bool:
        """Stamp ``deleted_at`` (FTS rows stay, for ``asof:``), close every open conflict
        touching the memory, and settle its unjudged candidates (verdict ``retired``):
        nothing is left to judge once a side is gone, and the pending count stays a
        cheap index count. Returns whether it was live before."""
        with self.atomic():
            cur = self._conn.execute("UPDATE memories SET deleted_at = ? WHERE id = ? AND deleted_at IS NULL", (now, memory_id))
            if not cur.rowcount:
                return False
            # One indexed lookup per side. Written as "(a = ? OR b = ?)" SQLite chose the
            # status / judged_at index and scanned every open conflict and pending
            # candidate for each dropped memory: dropping a 3,600-chunk source with
            # 49,000 pending candidates took 49 s and held the write lock throughout.
            self._conn.execute(
                """UPDATE conflicts SET status = 'resolved', resolved_at = ?, resolution = coalesce(resolution, 'retired')
                   WHERE rowid IN (SELECT rowid FROM conflicts WHERE a = ? AND status = 'open'
                                   UNION ALL SELECT rowid FROM conflicts WHERE b = ? AND status = 'open')""",
                (now, memory_id, memory_id),
            )
            self._conn.execute(
                """UPDATE conflict_candidates SET judged_at = ?, verdict = 'retired'
                   WHERE rowid IN (SELECT rowid FROM conflict_candidates WHERE judged_at IS NULL AND a = ?
                                   UNION ALL SELECT rowid FROM conflict_candidates WHERE b = ? AND judged_at IS NULL)""",
                (now, memory_id, memory_id),
            )
            self.log(now, agent, "memory.drop", memory_id, reason)
            return True

    def soft_delete_many(self, memory_ids: Sequence[str], reason: str, agent: str, now: int) -> int:
        """:meth:`soft_delete` for many memories with set-based statements (a few per
        500 ids instead of four per id), so a re-ingest's switch retiring thousands of
        chunks stays a short transaction. One ``memory.drop`` event per memory that was
        live. Returns how many were live."""
        live = 0
        with self.atomic():
            for k in range(0, len(memory_ids), 500):
                part = list(memory_ids[k:k + 500])
                marks = ",".join("?" * len(part))
                ids = [r[0] for r in self._conn.execute(
                    f"SELECT id FROM memories WHERE id IN ({marks}) AND deleted_at IS NULL", part)]
                if not ids:
                    continue
                marks = ",".join("?" * len(ids))
                self._conn.execute(f"UPDATE memories SET deleted_at = ? WHERE id IN ({marks})", (now, *ids))
                self._conn.execute(
                    f"""UPDATE conflicts SET status = 'resolved', resolved_at = ?, resolution = coalesce(resolution, 'retired')
                        WHERE rowid IN (SELECT rowid FROM conflicts WHERE a IN ({marks}) AND status = 'open'
                                        UNION ALL SELECT rowid FROM conflicts WHERE b IN ({marks}) AND status = 'open')""",
                    (now, *ids, *ids))
                self._conn.execute(
                    f"""UPDATE conflict_candidates SET judged_at = ?, verdict = 'retired'
                        WHERE rowid IN (SELECT rowid FROM conflict_candidates WHERE judged_at IS NULL AND a IN ({marks})
                                        UNION ALL SELECT rowid FROM conflict_candidates WHERE b IN ({marks}) AND judged_at IS NULL)""",
                    (now, *ids, *ids))
                for mid in ids:
                    self.log(now, agent, "memory.drop", mid, reason)
                live += len(ids)
        return live

    def update_text(self, memory_id: str, text: str, agent: str, now: int) -> None:
        with self.atomic():
            row = self._conn.execute("SELECT seq FROM memories WHERE id = ?", (memory_id,)).fetchone()
            if row is None:
                raise UnknownMemory(f"No memory {memory_id}.")
            self._keep_old_text(memory_id, agent, now)
            self._conn.execute("UPDATE memories SET text = ? WHERE id = ?", (text, memory_id))
            self._reindex(row[0], text)
            self.log(now, agent, "memory.update", memory_id, text)

    def _keep_old_text(self, memory_id: str, agent: str, now: int) -> None:
        """Record the text about to be replaced (``asof:`` shows it for instants before
        ``now``). Every statement that changes ``memories.text`` calls this first."""
        cur = self._conn.execute(
            "INSERT INTO memory_text_history (memory_id, text, replaced_at, replaced_by) SELECT id, text, ?, ? FROM memories WHERE id = ?",
            (now, agent, memory_id),
        )
        if cur.rowcount:  # indexed too, so asof: matches the old text (textindex.relevance_asof)
            newest = ("(SELECT max(rowid) FROM memory_text_history WHERE memory_id = ?)" if getattr(self._conn, "is_postgres", False)
                      else "last_insert_rowid() AND ? IS NOT NULL")  # PostgreSQL has no last_insert_rowid(); the write lock is held
            hid, text = self._conn.execute(f"SELECT rowid, text FROM memory_text_history WHERE rowid = {newest}", (memory_id,)).fetchone()
            textindex.index_old_text(self._conn, hid, text)

    def texts_asof(self, ids: Sequence[str], asof: int) -> dict[str, str]:
        """The text each memory had at ``asof`` (epoch ms), for those whose text changed
        since; memories absent from the answer had their current text then."""
        out: dict[str, str] = {}
        for part in batches(list(ids), 500):
            marks = ",".join("?" * len(part))
            for mid, text in self._conn.execute(
                f"""SELECT memory_id, text FROM memory_text_history WHERE memory_id IN ({marks}) AND replaced_at > ?
                    ORDER BY replaced_at ASC, rowid ASC""", (*part, asof)):
                out.setdefault(mid, text)
        return out

    def update_cluster(self, memory_id: str, cluster_id: str, agent: str, now: int) -> None:
        self.require_cluster(cluster_id)
        with self.atomic():
            self._conn.execute("UPDATE memories SET cluster_id = ? WHERE id = ?", (cluster_id, memory_id))
            self.log(now, agent, "memory.update", memory_id, f"cluster → {cluster_id}")

    def row(self, memory_id: str) -> MemoryRow:
        """The stored columns of one memory (dropped or not); raises UnknownMemory."""
        r = self._conn.execute(
            """SELECT seq, id, kind, text, cluster_id, source_id, hits, source_count, last_read_at, pinned, archived,
                      reviewed_at, deleted_at FROM memories WHERE id = ?""", (memory_id,)).fetchone()
        if r is None:
            raise UnknownMemory(f"No memory {memory_id}. It may have been mistyped.", field="memory", value=memory_id)
        return MemoryRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], bool(r[9]), bool(r[10]), r[11], r[12])

    def require_claim(self, memory_id: str) -> MemoryRow:
        """:meth:`row` of a claim; a chunk raises NotAClaim naming its source."""
        r = self.row(memory_id)
        if r.kind != "claim":
            raise NotAClaim(f"{memory_id} is a chunk of source {r.source_id}: chunks are reviewed with their document "
                            "(set its trust, or drop it).", field="memory", value=memory_id, source_id=r.source_id)
        return r

    def set_flags(self, memory_id: str, now: int, *, reviewed: bool | None = None, pinned: bool | None = None,
                  archived: bool | None = None) -> None:
        sets, params = [], []
        if reviewed is not None:
            sets.append("reviewed_at = ?")
            params.append(now if reviewed else None)
        if pinned is not None:
            sets.append("pinned = ?")
            params.append(int(pinned))
        if archived is not None:
            sets.append("archived = ?")
            params.append(int(archived))
        if sets:
            self._conn.execute(f"UPDATE memories SET {', '.join(sets)} WHERE id = ?", (*params, memory_id))

    def link(self, a: str, b: str, agent: str, now: int) -> None:
        for mid in (a, b):
            if not self.exists(mid):
                raise UnknownMemory(f"No memory {mid}. It may have been dropped or mistyped.")
        if a == b:
            raise InvalidInput("A memory cannot be linked to itself.")
        lo, hi = sorted((a, b))
        with self.atomic():
            self._conn.execute("INSERT OR IGNORE INTO links (a, b) VALUES (?, ?)", (lo, hi))
            self.log(now, agent, "memory.link", a, f"linked to {b}")

    def links(self, ids: Sequence[str] | None = None) -> list[tuple[str, str]]:
        if ids is None:
            return [tuple(r) for r in self._conn.execute("SELECT a, b FROM links")]
        out = []
        for chunk_ids in batches(list(ids), 400):
            marks = ",".join("?" * len(chunk_ids))
            out += [tuple(r) for r in self._conn.execute(f"SELECT a, b FROM links WHERE a IN ({marks}) OR b IN ({marks})", chunk_ids + chunk_ids)]
        return sorted(set(out))

    def related(self, memory_id: str, now: int, limit: int = 5) -> list[Memory]:
        """Linked live memories; if none, live claims of the same cluster by hits."""
        ids = [r[0] for r in self._conn.execute(
            """SELECT CASE WHEN l.a = :id THEN l.b ELSE l.a END FROM links l
               JOIN memories m ON m.id = (CASE WHEN l.a = :id THEN l.b ELSE l.a END)
               WHERE (l.a = :id OR l.b = :id) AND m.deleted_at IS NULL LIMIT :n""",
            {"id": memory_id, "n": limit},
        )]
        if not ids:
            ids = [r[0] for r in self._conn.execute(
                """SELECT id FROM memories WHERE cluster_id = (SELECT cluster_id FROM memories WHERE id = :id)
                   AND kind = 'claim' AND deleted_at IS NULL AND id != :id ORDER BY hits DESC, seq DESC LIMIT :n""",
                {"id": memory_id, "n": limit},
            )]
        return self.get_many(ids, now)

    def merge_into(self, keep: str, other: str, agent: str, now: int, *, take_text: bool) -> None:
        """Fold ``other`` into ``keep``: hits and source counts summed, readers unioned,
        the later last read kept; ``take_text`` puts ``other``'s text on ``keep``. The
        other memory is soft-deleted with reason ``merged into <keep>``."""
        with self.atomic():
            o = self.row(other)
            k = self.row(keep)
            self._conn.execute(
                "UPDATE memories SET hits = hits + ?, source_count = source_count + ?, last_read_at = max(last_read_at, ?) WHERE id = ?",
                (o.hits, o.source_count, o.last_read_at, keep),
            )
            for (reader,) in self._conn.execute("SELECT agent_id FROM memory_readers WHERE memory_id = ?", (other,)).fetchall():
                self.add_reader(keep, reader)
            if take_text:
                self._keep_old_text(keep, agent, now)
                self._conn.execute("UPDATE memories SET text = ? WHERE id = ?", (o.text, keep))
                self._reindex(k.seq, o.text)
            self.soft_delete(other, f"merged into {keep}", agent, now)

    def iter_ids(self, where: str = "deleted_at IS NULL", params: Sequence = ()) -> Iterator[str]:
        for (mid,) in self._conn.execute(f"SELECT id FROM memories WHERE {where} ORDER BY seq", params):
            yield mid


def _writer_first(writer: str, readers: list[str]) -> tuple[str, ...]:
    return tuple(([writer] if writer in readers else []) + [a for a in readers if a != writer])

