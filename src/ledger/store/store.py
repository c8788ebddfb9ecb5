"""The store: every SQL statement of ledger lives in this package.

:class:`Store` wraps one connection. Methods take ``now`` (epoch ms) explicitly so the
service owns the clock. Reads return frozen dataclasses from :mod:`ledger.models`;
strength is computed at read time (never stored), in SQL for ranking and in Python for
hydration, from the same constants.
"""

from __future__ import annotations

import contextlib
import math
import os
import sqlite3

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover - `typing` and `pathlib` stay off the CLI start-up path
    from pathlib import Path
    from typing import Iterable, Iterator, Sequence

from .. import strength as S
from ..errors import InvalidInput, NotAClaim, UnknownCluster, UnknownMemory, UnknownSource
from ..ids import new_id
from ..models import Agent, Cluster, Event, FileKey, Memory, MemoryRow, Source
from ..query import Query
from ..text import plural, slugify
from ..vocab import PALETTE, RELEVANCE_WEIGHT, SORTS, STRENGTH_WEIGHT
from . import ops, textindex
from . import watch as _watch
from .connection import atomic, connect, translate_class
from .migrations import check_not_newer, migrate
from .sqlbits import filter_sql, strength_sql

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

CONTEXT_WEIGHT = textindex.CONTEXT_WEIGHT
FUZZY_WEIGHT = textindex.FUZZY_WEIGHT
_MAX_STRENGTH = max(S.MAX_STRENGTH, S.PINNED_STRENGTH, S.CHUNK_MAX)  # for the page bound in search

_MEMORY_COLS = """m.seq, m.id, m.text, m.kind, m.origin, m.cluster_id, m.writer, m.source_id, m.chunk_index,
    m.provenance, m.topic, m.created_at, m.last_read_at, m.hits, m.source_count, m.reader_count, m.pinned,
    m.archived, m.reviewed_at, m.deleted_at, s.trust AS trust, cl.label AS cluster_label, cl.color AS cluster_color"""
_MEMORY_FROM = "memories m LEFT JOIN sources s ON s.id = m.source_id LEFT JOIN clusters cl ON cl.id = m.cluster_id"


@translate_class
class Store:
    """One open store file. Not thread-safe by itself; the web server gives each worker
    thread its own ``Store``. Use as a context manager or call :meth:`close`."""

    def __init__(self, path: str | os.PathLike, *, readonly: bool = False, seed: bool = True, now: int = 0):
        self._path = os.fspath(path)
        self._conn = connect(self._path, readonly=readonly)
        try:
            if readonly:
                check_not_newer(self._conn)
            else:
                migrate(self._conn)
                if seed:
                    self._seed_clusters(now)
        except BaseException:
            self._conn.close()
            raise

    @property
    def path(self) -> "Path":
        """The store file (built on demand: ``pathlib`` is not imported at start-up)."""
        from pathlib import Path

        return Path(self._path)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def atomic(self, *, wait_ms: int | None = None):
        """A write transaction (``BEGIN IMMEDIATE``), nestable; ``wait_ms`` bounds the
        wait for the write lock (see :func:`.connection.atomic`)."""
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
        """All clusters ordered by label, each with its live-memory count."""
        rows = self._conn.execute(
            """SELECT c.id, c.label, c.color, c.created_at,
                      (SELECT count(*) FROM memories m WHERE m.cluster_id = c.id AND m.deleted_at IS NULL) AS n
               FROM clusters c ORDER BY c.label"""
        ).fetchall()
        return [Cluster(r["id"], r["label"], r["color"], r["created_at"], r["n"]) for r in rows]

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

    def agents(self) -> list[Agent]:
        rows = self._conn.execute("SELECT * FROM agents ORDER BY last_seen DESC").fetchall()
        return [Agent(r["id"], r["label"], r["role"], r["color"], r["first_seen"], r["last_seen"],
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
    def watch(self) -> "_watch.Bound":
        """The watcher's operations (sessions, observations, leases, LLM accounting,
        checkpoints) on this store's connection: :class:`ledger.store.watch.Bound`."""
        return _watch.Bound(self._conn)

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
                                         created_at, last_read_at)
                   VALUES (?, ?, 'claim', ?, ?, ?, ?, ?, ?, ?, ?)""",
                (mid, text, "doc" if source_id else "chat", cluster_id, writer, source_id, note, topic, now, now),
            )
            self._conn.execute("INSERT INTO memory_readers (memory_id, agent_id) VALUES (?, ?)", (mid, writer))
            for f in files:
                self._conn.execute(
                    "INSERT OR REPLACE INTO memory_files (memory_id, path, size, mtime_ms, sha256) VALUES (?, ?, ?, ?, ?)",
                    (mid, f.path, f.size, f.mtime_ms, f.sha256),
                )
            self._index(cur.lastrowid, text)
            self.log(now, writer, "memory.write", mid, text)
        return mid

    def insert_source(
        self, filename: str, ext: str, cluster_id: str, agent: str, nbytes: int, trust: float,
        chunks: Sequence[str], now: int, *, neighbours: int = 2,
    ) -> tuple[str, list[str]]:
        """Insert a source and its chunks in one transaction. Each chunk is indexed with
        up to ``neighbours`` chunks on each side as low-weight context (docs/design.md
        retrieval notes). Returns ``(source_id, chunk_ids)``."""
        sid = new_id("s", now)
        n = len(chunks)
        ids = []
        with self.atomic():
            self.touch_agent(agent, now)
            self._conn.execute(
                "INSERT INTO sources (id, filename, ext, cluster_id, ingested_by, bytes, trust, ingested_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (sid, filename, ext, cluster_id, agent, nbytes, trust, now),
            )
            for i, chunk in enumerate(chunks):
                cid = new_id("c", now)
                ids.append(cid)
                cur = self._conn.execute(
                    """INSERT INTO memories (id, text, kind, origin, cluster_id, writer, source_id, chunk_index, provenance,
                                             created_at, last_read_at, reviewed_at)
                       VALUES (?, ?, 'chunk', 'doc', ?, ?, ?, ?, ?, ?, ?, ?)""",
                    (cid, chunk, cluster_id, agent, sid, i + 1, f"chunk {i + 1} of {n} · {filename}", now, now, now),
                )
                self._conn.execute("INSERT INTO memory_readers (memory_id, agent_id) VALUES (?, ?)", (cid, agent))
                ctx = " ".join(chunks[max(0, i - neighbours) : i] + list(chunks[i + 1 : i + 1 + neighbours])) if neighbours else ""
                self._index(cur.lastrowid, chunk, ctx)
            self.log(now, agent, "sources.ingest", None, f"{filename} · {plural(n, 'chunk')}")
        return sid, ids

    # ------------------------------------------------------------------ reading memories
    def _hydrate(self, rows: list[sqlite3.Row], now: int, scores: dict[str, float] | None = None,
                 texts: dict[str, str] | None = None) -> list[Memory]:
        if not rows:
            return []
        ids = [r["id"] for r in rows]
        readers: dict[str, list[str]] = {i: [] for i in ids}
        files: dict[str, list[FileKey]] = {}
        conflict_with: dict[str, str] = {}
        for chunk_ids in _batches(ids, 500):
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
                source_trust=r["trust"] if r["kind"] == "chunk" else None,
            ))
        return out

    def get_many(self, ids: Sequence[str], now: int) -> list[Memory]:
        """Memories by id (dropped ones included), in the order asked; unknown ids are skipped."""
        rows = []
        for chunk_ids in _batches(list(ids), 500):
            marks = ",".join("?" * len(chunk_ids))
            rows += self._conn.execute(f"SELECT {_MEMORY_COLS} FROM {_MEMORY_FROM} WHERE m.id IN ({marks})", chunk_ids).fetchall()
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
            raise UnknownMemory("Which memory? Give its id, e.g. ledger show m_abc123 (or the short id `search` prints).")
        if self.exists(ref):
            return ref
        if len(ref) >= 4 and ref.replace("_", "").isalnum():
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
        raise UnknownMemory(f"No memory {ref}. It may have been mistyped.", field="memory", value=ref)

    def exists(self, memory_id: str) -> bool:
        return self._conn.execute("SELECT 1 FROM memories WHERE id = ?", (memory_id,)).fetchone() is not None

    # ------------------------------------------------------------------ search
    def search(
        self,
        q: Query,
        now: int,
        *,
        mode: str = "hybrid",
        limit: int = 50,
        offset: int = 0,
        kind: str = "all",
        sort: str | None = None,
        direction: str = "desc",
        include_archived: bool = False,
        pending_only: bool = False,
        pinned_only: bool = False,
        conflicted_only: bool = False,
    ) -> tuple[list[Memory], int]:
        """Exact ranked search over every match; returns ``(page, total)``.

        Relevance (0–1) is BM25 over the query's terms and, outside ``keyword`` mode,
        their vocabulary neighbours within a few edits (×0.6), plus compounds and CJK
        runs from the side index: ``p/(p+1)``, see :func:`.textindex.fill_relevance`
        and docs/search.md. Score = 0.75·relevance + 0.25·strength (docs/originals.md §1.6), computed
        inside SQLite for every matching row, so the page and ``total`` are exact at any
        store size. With no free text, relevance is 1 and the default sort is strength.
        """
        params: dict = {"now": now}
        where = filter_sql(q, params, kind=kind, include_archived=include_archived, pending_only=pending_only,
                           pinned_only=pinned_only, conflicted_only=conflicted_only)
        st = strength_sql()
        has_text = bool(q.terms)
        sort = sort or ("relevance" if has_text else "strength")
        if sort not in SORTS:
            raise InvalidInput(f'Unknown sort "{sort}". Use one of: {", ".join(SORTS)}.')
        if q.strength is not None:
            params["smin"] = q.strength
            where.append(f"{st} {'<' if q.strength_op == '<' else '>'} :smin")
        order_col = {"relevance": "score", "strength": "st", "hits": "m.hits", "created": "m.created_at", "last": "m.last_read_at"}[sort]
        d = "ASC" if direction == "asc" else "DESC"
        params["limit"], params["offset"] = max(0, int(limit)), max(0, int(offset))
        cond = " AND ".join(where) or "1"
        # One read snapshot for the match set, the count and the page.
        with _read_snapshot(self._conn):
            if has_text:
                if not self._fill_relevance(q.terms, mode):
                    return [], 0
                # The match set drives the join (CROSS JOIN fixes the order): without it
                # the planner walks every live memory by index and probes the matches.
                src = "temp.ledger_rel rel CROSS JOIN memories m ON m.seq = rel.seq LEFT JOIN sources s ON s.id = m.source_id"
                rel = "rel.r"
            else:
                src = "memories m LEFT JOIN sources s ON s.id = m.source_id"
                rel = "1.0"
            # total and page in two light queries: a window count(*) over the full rows
            # made SQLite materialise every match with its text before sorting; here
            # the sort is bounded by LIMIT and only the page is read in full.
            total = self._conn.execute(f"SELECT count(*) FROM {src} WHERE {cond}", params).fetchone()[0]
            if not total:
                return [], 0
            page = None
            if has_text and sort == "relevance" and d == "DESC" and params["limit"]:
                page = self._bounded_page(st, cond, params)
            if page is None:
                page = self._conn.execute(
                    f"""SELECT m.seq, {st} AS st, {_score_sql(rel, st)} AS score
                        FROM {src} WHERE {cond}
                        ORDER BY {order_col} {d}, m.seq {d}
                        LIMIT :limit OFFSET :offset""",
                    params,
                ).fetchall()
            if not page:
                return [], total
            seqs = [r[0] for r in page]
            by_seq = {}
            for part in _batches(seqs, 500):
                marks = ",".join("?" * len(part))
                by_seq.update((r["seq"], r) for r in self._conn.execute(f"SELECT {_MEMORY_COLS} FROM {_MEMORY_FROM} WHERE m.seq IN ({marks})", part))
            rows = [by_seq[s] for s in seqs]
            scores = {by_seq[r[0]]["id"]: r[2] for r in page}
            texts = self.texts_asof([r["id"] for r in rows], q.asof_ms) if q.asof_ms is not None else None
            return self._hydrate(rows, now, scores, texts), total

    def _bounded_page(self, st: str, cond: str, params: dict) -> list | None:
        """The relevance page, joining only the matches that can reach it; None when
        no bound is found (the caller then ranks every match).

        Score = 0.75·r + 0.25·strength with strength ≤ ``_MAX_STRENGTH``. First the
        page is ranked among the few highest-r matches; the score θ of its last row is
        a lower bound on the true last score (more rows can only raise it). A match
        with 0.75·r + 0.25·_MAX_STRENGTH < θ can therefore neither enter nor tie into
        the page, so the exact page is the page ranked among the matches with
        r ≥ (θ − 0.25·_MAX_STRENGTH) / 0.75 (a hair lower, for float rounding). At 1M
        memories that is a few per cent of the matches."""
        c = self._conn
        want = params["limit"] + params["offset"]
        probe = c.execute(
            f"""SELECT m.seq, {st} AS st, {_score_sql("rel.r", st)} AS score
                FROM (SELECT seq, r FROM temp.ledger_rel ORDER BY r DESC LIMIT {int(max(64, 4 * want))}) rel
                CROSS JOIN memories m ON m.seq = rel.seq LEFT JOIN sources s ON s.id = m.source_id
                WHERE {cond}
                ORDER BY score DESC, m.seq DESC
                LIMIT :limit OFFSET :offset""",
            params,
        ).fetchall()
        if len(probe) < params["limit"]:
            return None  # the filters left too few of the best matches to bound anything
        floor = (probe[-1][2] - STRENGTH_WEIGHT * _MAX_STRENGTH) / RELEVANCE_WEIGHT - 1e-9
        return c.execute(
            f"""SELECT m.seq, {st} AS st, {_score_sql("rel.r", st)} AS score
                FROM temp.ledger_rel rel CROSS JOIN memories m ON m.seq = rel.seq LEFT JOIN sources s ON s.id = m.source_id
                WHERE rel.r >= :rel_floor AND {cond}
                ORDER BY score DESC, m.seq DESC
                LIMIT :limit OFFSET :offset""",
            {**params, "rel_floor": floor},
        ).fetchall()

    def _fill_relevance(self, terms: Sequence[str], mode: str) -> bool:
        """Fill ``temp.ledger_rel(seq, r)`` with every match's relevance; False if none
        (:func:`.textindex.fill_relevance`)."""
        return textindex.fill_relevance(self._conn, terms, mode)

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
        self._conn.execute(
            "INSERT INTO memory_text_history (memory_id, text, replaced_at, replaced_by) SELECT id, text, ?, ? FROM memories WHERE id = ?",
            (now, agent, memory_id),
        )

    def texts_asof(self, ids: Sequence[str], asof: int) -> dict[str, str]:
        """The text each memory had at ``asof`` (epoch ms), for those whose text changed
        since; memories absent from the answer had their current text then."""
        out: dict[str, str] = {}
        for part in _batches(list(ids), 500):
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
        for chunk_ids in _batches(list(ids), 400):
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

    # ------------------------------------------------------------------ sources
    def sources(self, *, include_dropped: bool = False) -> list[Source]:
        """Sources newest first with live chunk and claim counts and summed hits."""
        rows = self._conn.execute(
            f"""SELECT s.*,
                  (SELECT count(*) FROM memories m WHERE m.source_id = s.id AND m.kind = 'chunk' AND m.deleted_at IS NULL) AS chunks,
                  (SELECT count(*) FROM memories m WHERE m.source_id = s.id AND m.kind = 'claim' AND m.deleted_at IS NULL) AS claims,
                  (SELECT coalesce(sum(hits), 0) FROM memories m WHERE m.source_id = s.id AND m.deleted_at IS NULL) AS hits
                FROM sources s {'' if include_dropped else 'WHERE s.dropped_at IS NULL'}
                ORDER BY s.ingested_at DESC, s.rowid DESC"""
        ).fetchall()
        return [Source(r["id"], r["filename"], r["ext"], r["cluster_id"], r["ingested_by"], r["bytes"], r["trust"],
                       r["ingested_at"], r["dropped_at"], r["chunks"], r["claims"], r["hits"]) for r in rows]

    def source(self, source_id: str) -> Source:
        for s in self.sources(include_dropped=True):
            if s.id == source_id:
                return s
        raise UnknownSource(f"No source {source_id}.", field="source", value=source_id)

    def source_memory_ids(self, source_id: str, kind: str, limit: int | None = None) -> list[str]:
        sql = "SELECT id FROM memories WHERE source_id = ? AND kind = ? AND deleted_at IS NULL ORDER BY coalesce(chunk_index, 0), seq"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [r[0] for r in self._conn.execute(sql, (source_id, kind))]

    def set_trust(self, source_id: str, trust: float, agent: str, now: int) -> float:
        self.source(source_id)
        t = min(1.0, max(0.0, float(trust)))
        with self.atomic():
            self._conn.execute("UPDATE sources SET trust = ? WHERE id = ?", (t, source_id))
            self.log(now, agent, "sources.trust", None, f"{source_id} → {round(t * 100)}")
        return t

    def drop_source(self, source_id: str, agent: str, now: int) -> tuple[int, int]:
        """Soft-delete the source's live chunks and send its distilled claims back to
        review. Returns ``(chunks dropped, claims flagged)``."""
        src = self.source(source_id)
        if src.dropped_at is not None:
            raise UnknownSource(f"Source {source_id} was already dropped.")
        with self.atomic():
            chunk_ids = self.source_memory_ids(source_id, "chunk")
            for cid in chunk_ids:
                self.soft_delete(cid, f"source {source_id} dropped", agent, now)
            flagged = self._conn.execute(
                "UPDATE memories SET reviewed_at = NULL WHERE source_id = ? AND kind = 'claim' AND deleted_at IS NULL", (source_id,)
            ).rowcount
            self._conn.execute("UPDATE sources SET dropped_at = ? WHERE id = ?", (now, source_id))
            self.log(now, agent, "sources.drop", None, f"{source_id} · {len(chunk_ids)} chunks, {flagged} claims flagged")
        return len(chunk_ids), flagged

    # ------------------------------------------------------------------ stats
    def scalar(self, sql: str, params: Sequence | dict = ()) -> int | float | None:
        return self._conn.execute(sql, params).fetchone()[0]

    def counts(self, since_ms: int) -> dict:
        """Raw counts for ``stats`` (docs/originals.md §1.13)."""
        q = self.scalar
        return {
            "memories": q("SELECT count(*) FROM memories WHERE deleted_at IS NULL"),
            "claims": q("SELECT count(*) FROM memories WHERE deleted_at IS NULL AND kind = 'claim'"),
            "chunks": q("SELECT count(*) FROM memories WHERE deleted_at IS NULL AND kind = 'chunk'"),
            "pending": q("SELECT count(*) FROM memories WHERE deleted_at IS NULL AND kind = 'claim' AND reviewed_at IS NULL"),
            "conflicts": q("SELECT count(*) FROM conflicts WHERE status = 'open'"),
            "candidates": q(
                """SELECT count(*) FROM conflict_candidates cc JOIN memories a ON a.id = cc.a JOIN memories b ON b.id = cc.b
                   WHERE cc.judged_at IS NULL AND a.deleted_at IS NULL AND b.deleted_at IS NULL"""
            ),
            "sources": q("SELECT count(*) FROM sources WHERE dropped_at IS NULL"),
            "agents": q("SELECT count(*) FROM agents"),
            "requestsToday": q("SELECT count(*) FROM events WHERE at >= ?", (since_ms,)),
            "lastWriteAt": q("SELECT max(at) FROM events WHERE op IN ('memory.write', 'sources.ingest')"),
            "searchMs": [r[0] for r in self._conn.execute("SELECT ms FROM events WHERE op = 'memory.search' AND at >= ? AND ms IS NOT NULL", (since_ms,))],
        }

    def facets(self) -> dict:
        """Counts over live memories: by origin, cluster, reader agent, and flags."""
        live = "deleted_at IS NULL"
        return {
            "origin": dict(self._conn.execute(f"SELECT origin, count(*) FROM memories WHERE {live} GROUP BY origin").fetchall()),
            "kind": dict(self._conn.execute(f"SELECT kind, count(*) FROM memories WHERE {live} GROUP BY kind").fetchall()),
            "cluster": dict(self._conn.execute(f"SELECT cluster_id, count(*) FROM memories WHERE {live} GROUP BY cluster_id").fetchall()),
            "agent": dict(self._conn.execute(
                f"SELECT r.agent_id, count(*) FROM memory_readers r JOIN memories m ON m.id = r.memory_id WHERE m.{live} GROUP BY r.agent_id ORDER BY 2 DESC"
            ).fetchall()),
            "flags": {
                "pinned": self.scalar(f"SELECT count(*) FROM memories WHERE {live} AND pinned = 1"),
                "archived": self.scalar(f"SELECT count(*) FROM memories WHERE {live} AND archived = 1"),
                "conflicted": self.scalar(
                    f"SELECT count(*) FROM memories m WHERE m.{live} AND EXISTS (SELECT 1 FROM conflicts c WHERE c.status = 'open' AND (c.a = m.id OR c.b = m.id))"
                ),
                "pending": self.scalar(f"SELECT count(*) FROM memories WHERE {live} AND kind = 'claim' AND reviewed_at IS NULL"),
            },
        }

    def timeline(self, buckets: int = 60) -> dict:
        """Histogram of live memories by creation time over the span of all rows."""
        lo, hi = self._conn.execute("SELECT min(created_at), max(created_at) FROM memories").fetchone()
        if lo is None:
            return {"start": None, "end": None, "width": 0, "counts": []}
        width = max(1, math.ceil((hi - lo + 1) / buckets))
        counts = [0] * buckets
        for b, n in self._conn.execute(
            "SELECT min(?, (created_at - ?) / ?), count(*) FROM memories WHERE deleted_at IS NULL GROUP BY 1", (buckets - 1, lo, width)
        ):
            counts[int(b)] += n
        return {"start": lo, "end": hi, "width": width, "counts": counts}

    def agent_activity(self, agent: str, since_ms: int) -> dict:
        wrote = self.scalar("SELECT count(*) FROM memories WHERE writer = ? AND deleted_at IS NULL", (agent,))
        calls = self.scalar("SELECT count(*) FROM events WHERE agent = ? AND at >= ?", (agent, since_ms))
        searches = self._conn.execute("SELECT detail FROM events WHERE agent = ? AND op = 'memory.search' AND at >= ?", (agent, since_ms)).fetchall()
        hit_rate = (sum(1 for (d,) in searches if not d.startswith("0 ")) / len(searches)) if searches else None
        top = self._conn.execute(
            """SELECT m.cluster_id, count(*) FROM memory_readers r JOIN memories m ON m.id = r.memory_id
               WHERE r.agent_id = ? AND m.deleted_at IS NULL GROUP BY m.cluster_id ORDER BY 2 DESC LIMIT 4""", (agent,)
        ).fetchall()
        return {"wrote": wrote, "calls": calls, "hitRate": hit_rate, "top": [{"cluster": c, "count": n} for c, n in top]}

    def agent_overlap(self) -> list[dict]:
        rows = self._conn.execute(
            """SELECT r1.agent_id, r2.agent_id, count(*) FROM memory_readers r1
               JOIN memory_readers r2 ON r1.memory_id = r2.memory_id AND r1.agent_id < r2.agent_id
               JOIN memories m ON m.id = r1.memory_id WHERE m.deleted_at IS NULL
               GROUP BY 1, 2 ORDER BY 3 DESC"""
        ).fetchall()
        return [{"a": a, "b": b, "shared": n} for a, b, n in rows]

    def disk_bytes(self) -> int:
        try:
            return os.stat(self._path).st_size
        except OSError:
            return 0

    def iter_ids(self, where: str = "deleted_at IS NULL", params: Sequence = ()) -> Iterator[str]:
        for (mid,) in self._conn.execute(f"SELECT id FROM memories WHERE {where} ORDER BY seq", params):
            yield mid


@contextlib.contextmanager
def _read_snapshot(conn: sqlite3.Connection) -> Iterator[None]:
    """A deferred read transaction, so several statements see one snapshot (WAL:
    writers are never blocked by it). Inside a caller's transaction, nothing to do."""
    if conn.in_transaction:
        yield
        return
    conn.execute("BEGIN")
    try:
        yield
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    else:
        if conn.in_transaction:
            conn.execute("COMMIT")


def _score_sql(relevance: str, strength: str) -> str:
    """The search score as SQL, from :data:`ledger.vocab.RELEVANCE_WEIGHT` and
    :data:`ledger.vocab.STRENGTH_WEIGHT`."""
    return f"{RELEVANCE_WEIGHT!r} * {relevance} + {STRENGTH_WEIGHT!r} * {strength}"


def _writer_first(writer: str, readers: list[str]) -> tuple[str, ...]:
    return tuple(([writer] if writer in readers else []) + [a for a in readers if a != writer])


def _batches(items: list, size: int) -> Iterable[list]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
