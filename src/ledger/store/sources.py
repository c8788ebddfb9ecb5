"""The sources job of :class:`~ledger.store.Store` (a mixin): ingesting a document as
a source and its chunks, listing sources, trust, and dropping a source."""

from __future__ import annotations

import os
import time

from ..errors import StoreUnavailable, UnknownSource, missing_id
from ..ids import new_id
from ..models import Source
from ..strength import shown
from ..text import plural
from . import ops
from .connection import SQLITE_BUSY, SQLITE_LOCKED
from .rows import batches

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover - `typing` stays off the CLI start-up path
    import contextlib
    from typing import Sequence

#: ``deleted_at`` of a chunk whose source is still being ingested: before every real
#: instant, so neither live views (``deleted_at IS NULL``) nor ``asof:`` views show it.
PENDING = 0
#: Write-lock hold per ingest batch, ms (one commit on top: the hold stays under ~200 ms).
BATCH_MS = 150
#: Pause between batches, ms: the window in which waiting writers take the lock. SQLite's
#: busy handler retries at most 100 ms apart, so a pause of 100 ms sees every waiting
#: writer try once. A pause alone was not enough (with 25 or 100 ms, a writer with a 1 s
#: wait limit still timed out in most runs of the 24,000-chunk test in
#: tests/test_reliability.py): the ingest must also not barge in after it, see
#: ``_enter_deferring``. The price is ingest speed: 1.4-1.6x one transaction's wall
#: time without other writers (docs/benchmarks.md).
YIELD_MS = 100
#: Pause before retrying while another writer holds the lock between batches, ms
#: (longer than the 100 ms retry of writers that have waited a while).
DEFER_MS = 150
#: Longest an ingest defers to other writers before one batch, ms; then it waits in
#: line like any writer.
MAX_DEFER_MS = 5000
#: An unfinished ingest that committed no batch for this long is abandoned (its
#: process may run on another host, where its pid cannot be checked), ms.
STALE_MS = 10 * 60 * 1000
#: Chunks deleted per transaction when an abandoned ingest is removed.
DISCARD_BATCH = 2000


def _wall_ms() -> int:
    return int(time.time() * 1000)


def _host() -> str:
    uname = getattr(os, "uname", None)
    return uname().nodename if uname else os.environ.get("COMPUTERNAME", "")


def _busy_code(exc: BaseException | None) -> int | None:
    """The SQLite result code of ``exc`` when it says "locked" or "busy", else None."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code if code is not None and code & 0xFF in (SQLITE_BUSY, SQLITE_LOCKED) else None


def _alive(pid: int) -> bool:
    """Whether a process ``pid`` runs on this host (signal 0 only checks)."""
    if pid == os.getpid() or os.name == "nt":  # Windows' os.kill would end the process: rely on STALE_MS
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: it runs, as another user; anything else: assume it runs
        return True
    return True


class SourcePathTaken(Exception):
    """Raised by :meth:`SourcesMixin.insert_source` with ``unique_path`` when, as its last
    batch was about to show the new source, another process had finished ingesting the
    same file (``source_id``): the new source was removed, and the caller updates that
    one instead (two agents ingesting one runbook at once made two copies of it)."""

    def __init__(self, source_id: str):
        super().__init__(source_id)
        self.source_id = source_id


class SourcesMixin:
    """Sources for :class:`~ledger.store.Store`; uses its ``_conn``, ``atomic``, ``log``,
    ``touch_agent``, ``_index`` and ``soft_delete``."""

    def insert_source(
        self, filename: str, ext: str, cluster_id: str, agent: str, nbytes: int, trust: float,
        chunks: Sequence[str], now: int, *, neighbours: int = 2, path: str | None = None,
        unique_path: bool = False,
    ) -> tuple[str, list[str]]:
        """Insert a source and its chunks, committed in batches. Each chunk is indexed
        with up to ``neighbours`` chunks on each side as low-weight context
        (docs/design.md retrieval notes). ``path`` is the resolved file it was read from
        (None for stdin and ``--text``). Returns ``(source_id, chunk_ids)``.

        Why batches: a 24,000-chunk ingest in one transaction held the write lock for
        seconds, past the 10 s busy timeout of every concurrent ``remember``. Each batch
        holds the lock for about :data:`BATCH_MS`, then the ingest sleeps
        :data:`YIELD_MS` so waiting writers (SQLite's busy handler retries every 100 ms
        at most) get their turn. Readers still see the source whole or not at all: until
        the last batch the source is ``complete = 0`` and its chunks carry
        ``deleted_at = PENDING`` (every live view reads ``deleted_at IS NULL``; ``asof:``
        needs ``deleted_at`` after its instant). The last batch clears both in one
        statement. A failed ingest removes what it wrote; a killed one is removed by
        the next open (:meth:`discard_abandoned_ingests`). Called inside a caller's
        transaction, it writes everything in that transaction instead.

        ``unique_path``: the last batch, in the same write transaction that would show
        the source, first looks for a finished live source read from the same ``path``
        (another process's ingest of the same file that finished meanwhile); if there is
        one, this source is removed and :class:`SourcePathTaken` names that one."""
        sid = new_id("s", now)
        n = len(chunks)
        ids: list[str] = []
        batched = not self._conn.in_transaction
        with self.atomic():
            self.touch_agent(agent, now)
            self._conn.execute(
                "INSERT INTO sources (id, filename, ext, cluster_id, ingested_by, bytes, trust, ingested_at, path, complete) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (sid, filename, ext, cluster_id, agent, nbytes, trust, now, path, 0 if batched else 1),
            )
            if batched:
                wall = _wall_ms()
                self._conn.execute("INSERT INTO ingests (source_id, host, pid, started_at, beat_at) VALUES (?, ?, ?, ?, ?)",
                                   (sid, _host(), os.getpid(), wall, wall))
        if not batched:
            with self.atomic():
                self._insert_chunks(sid, filename, cluster_id, agent, chunks, 0, n, now, neighbours, None, ids)
                self.log(now, agent, "sources.ingest", None, f"{filename} · {plural(n, 'chunk')}")
            return sid, ids
        import contextlib  # here: ingest only; the agent verbs import this module but not contextlib

        try:
            i = 0
            while i < n:
                with contextlib.ExitStack() as tx:
                    self._enter_deferring(tx, first=i == 0)
                    i = self._insert_chunks(sid, filename, cluster_id, agent, chunks, i, n, now, neighbours,
                                            time.monotonic() + BATCH_MS / 1000, ids)
                    self._conn.execute("UPDATE ingests SET beat_at = ? WHERE source_id = ?", (_wall_ms(), sid))
            with contextlib.ExitStack() as tx:
                self._enter_deferring(tx, first=False)
                if unique_path and path:
                    taken = self._conn.execute(
                        "SELECT id FROM sources WHERE path = ? AND id <> ? AND complete = 1 AND dropped_at IS NULL "
                        "ORDER BY ingested_at DESC LIMIT 1", (path, sid)).fetchone()
                    if taken:
                        raise SourcePathTaken(taken[0])
                self._conn.execute("UPDATE memories SET deleted_at = NULL WHERE source_id = ? AND deleted_at = ?", (sid, PENDING))
                self._conn.execute("UPDATE sources SET complete = 1 WHERE id = ?", (sid,))
                self._conn.execute("DELETE FROM ingests WHERE source_id = ?", (sid,))
                self.log(now, agent, "sources.ingest", None, f"{filename} · {plural(n, 'chunk')}")
        except BaseException:
            try:
                self._discard_source(sid)
            except Exception:  # noqa: BLE001 - keep the original error; the next open cleans up
                pass
            raise
        return sid, ids

    def _enter_deferring(self, tx: contextlib.ExitStack, *, first: bool) -> None:
        """Open the next batch's write transaction on ``tx``, letting other writers go
        first. SQLite's locking is not fair: a writer that has waited a while retries
        only every 100 ms, while one that just started retries within milliseconds,
        so an ingest asking for the lock with a busy timeout right after its pause
        would win against the writers it paused for. Instead it pauses
        :data:`YIELD_MS`, then only takes a free lock; while another writer holds it,
        it pauses :data:`DEFER_MS` (longer than their 100 ms retry) and tries again,
        for at most :data:`MAX_DEFER_MS` before it waits like any writer."""
        if first:
            tx.enter_context(self.atomic())
            return
        time.sleep(YIELD_MS / 1000)
        give_up = time.monotonic() + MAX_DEFER_MS / 1000
        while time.monotonic() < give_up:
            try:
                tx.enter_context(self.atomic(wait_ms=0))
                return
            except StoreUnavailable as exc:
                if _busy_code(exc.__cause__) is None and exc.reason != "locked":  # PostgreSQL: a lock_timeout
                    raise
            time.sleep(DEFER_MS / 1000)
        tx.enter_context(self.atomic())

    def _insert_chunks(self, sid: str, filename: str, cluster_id: str, agent: str, chunks: Sequence[str], start: int,
                       n: int, now: int, neighbours: int, until: float | None, ids: list[str]) -> int:
        """Insert chunks from ``start`` until all are in or ``time.monotonic()`` passes
        ``until`` (None: no limit; the chunks are live at once). Returns the next index."""
        hidden = None if until is None else PENDING
        i = start
        while i < n:
            chunk = chunks[i]
            cid = new_id("c", now)
            ids.append(cid)
            cur = self._conn.execute(
                """INSERT INTO memories (id, text, kind, origin, cluster_id, writer, source_id, chunk_index, provenance,
                                         created_at, last_read_at, reviewed_at, deleted_at, machine)
                   VALUES (?, ?, 'chunk', 'doc', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                (cid, chunk, cluster_id, agent, sid, i + 1, f"chunk {i + 1} of {n} · {filename}", now, now, now, hidden,
                 ops.MACHINE),
            )
            self._conn.execute("INSERT INTO memory_readers (memory_id, agent_id) VALUES (?, ?)", (cid, agent))
            if hidden is None:  # hidden chunks are counted when the ingest's switch shows them (a trigger)
                ops.count_new_memory(self._conn, cid)
            ctx = " ".join(chunks[max(0, i - neighbours) : i] + list(chunks[i + 1 : i + 1 + neighbours])) if neighbours else ""
            self._index(cur.lastrowid, chunk, ctx)
            i += 1
            if until is not None and time.monotonic() >= until:
                break
        return i

    def discard_abandoned_ingests(self) -> int:
        """Remove every unfinished ingest (or re-ingest's hidden chunks) whose process is gone: on this host with a
        pid that no longer runs, or silent (no batch committed) for :data:`STALE_MS`.
        Called on every writable open; costs one read of an (almost always empty)
        table. Returns the number of sources removed."""
        rows = self._conn.execute("SELECT source_id, host, pid, beat_at FROM ingests").fetchall()
        gone = 0
        for sid, host, pid, beat in rows:
            if _wall_ms() - beat > STALE_MS or (host == _host() and not _alive(pid)):
                self._discard_source(sid)
                gone += 1
        return gone

    def _discard_source(self, sid: str) -> None:
        """Delete the hidden chunks (``deleted_at = PENDING``, never visible) of an
        unfinished ingest or re-ingest of source ``sid`` outright, then the source
        itself if it is unfinished (a first ingest; a re-ingested source keeps its
        live version), a bounded batch per transaction so the cleanup never holds the
        write lock long either. An ingest that finished meanwhile has no hidden chunks
        left and keeps everything."""
        while True:
            with self.atomic():
                seqs = [r[0] for r in self._conn.execute(
                    "SELECT seq FROM memories WHERE source_id = ? AND deleted_at = ? LIMIT ?", (sid, PENDING, DISCARD_BATCH))]
                if not seqs:
                    self._conn.execute("DELETE FROM sources WHERE id = ? AND complete = 0", (sid,))
                    self._conn.execute("DELETE FROM ingests WHERE source_id = ?", (sid,))
                    return
                marks = ",".join("?" * len(seqs))
                key = "seq" if getattr(self._conn, "is_postgres", False) else "rowid"  # the FTS tables' key
                self._conn.execute(f"DELETE FROM memories_fts WHERE {key} IN ({marks})", seqs)
                self._conn.execute(f"DELETE FROM memories_side WHERE {key} IN ({marks})", seqs)
                self._conn.execute(f"DELETE FROM memories WHERE seq IN ({marks})", seqs)  # readers go by ON DELETE CASCADE

    def sources(self, *, include_dropped: bool = False, source_id: str | None = None) -> list[Source]:
        """Sources newest first with live chunk and claim counts and summed hits; only
        ``source_id`` when given; unfinished ingests (``complete = 0``) never. The
        counts are read from the covering index ``memories_source_live`` (migration
        ``m014_source_counts_index``): no memory row is read, so 140 sources of 100k
        chunks list in milliseconds."""
        where = ["s.complete = 1"] if include_dropped else ["s.complete = 1", "s.dropped_at IS NULL"]
        params: tuple = ()
        if source_id is not None:
            where.append("s.id = ?")
            params = (source_id,)
        rows = self._conn.execute(
            f"""SELECT s.*,
                  (SELECT count(*) FROM memories m WHERE m.source_id = s.id AND m.deleted_at IS NULL AND m.kind = 'chunk') AS chunks,
                  (SELECT count(*) FROM memories m WHERE m.source_id = s.id AND m.deleted_at IS NULL AND m.kind = 'claim') AS claims,
                  (SELECT coalesce(sum(hits), 0) FROM memories m WHERE m.source_id = s.id AND m.deleted_at IS NULL) AS hits
                FROM sources s WHERE {' AND '.join(where)}
                ORDER BY s.ingested_at DESC, s.rowid DESC""",
            params,
        ).fetchall()
        # sources.path is a file's resolved path, or for piped text its identity key
        # (ledger.ingest.text_identity: "name:..." / "sha256:..."), which is never shown.
        return [Source(r["id"], r["filename"], r["ext"], r["cluster_id"], r["ingested_by"], r["bytes"], r["trust"],
                       r["ingested_at"], r["dropped_at"], r["chunks"], r["claims"], r["hits"],
                       r["path"] if r["path"] and r["path"].startswith("/") else None) for r in rows]

    def source(self, source_id: str) -> Source:
        """The source ``source_id`` (complete, dropped or not) with its counts. Raises
        InvalidInput for a blank id (:func:`~ledger.errors.missing_id`), UnknownSource
        for no such source."""
        if not (source_id or "").strip():
            raise missing_id("source", source_id or "")
        for s in self.sources(include_dropped=True, source_id=source_id):
            return s
        raise UnknownSource(f"No source {source_id}.", field="source", value=source_id)

    def source_memory_ids(self, source_id: str, kind: str, limit: int | None = None) -> list[str]:
        """Ids of the source's live memories of ``kind`` in chunk order (at most
        ``limit``), read in order from the index ``memories_source_order`` (m017)."""
        sql = "SELECT id FROM memories WHERE source_id = ? AND kind = ? AND deleted_at IS NULL ORDER BY coalesce(chunk_index, 0), seq"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [r[0] for r in self._conn.execute(sql, (source_id, kind))]

    def source_preview_ids(self, source_ids: Sequence[str], preview: int) -> dict[str, tuple[list[str], list[str]]]:
        """``{source_id: (first chunk ids, claim ids)}`` for many sources: up to
        ``preview`` live chunks each (one indexed read per source, :meth:`source_memory_ids`)
        and every live claim distilled from them (one read for all), in chunk order."""
        out: dict[str, tuple[list[str], list[str]]] = {sid: (self.source_memory_ids(sid, "chunk", preview), []) for sid in source_ids}
        for part in batches(list(source_ids), 500):
            marks = ",".join("?" * len(part))
            for sid, mid in self._conn.execute(
                    f"""SELECT source_id, id FROM memories WHERE source_id IN ({marks}) AND kind = 'claim' AND deleted_at IS NULL
                        ORDER BY source_id, coalesce(chunk_index, 0), seq""", part):
                out[sid][1].append(mid)
        return out

    def set_trust(self, source_id: str, trust: float, agent: str, now: int) -> float:
        """Set a live source's trust; raises UnknownSource for a dropped one."""
        if self.source(source_id).dropped_at is not None:
            raise UnknownSource(f"Source {source_id} was dropped: its chunks are gone, so its trust weighs nothing. "
                                "Ingest the document again to have it back. Nothing was changed.")
        t = min(1.0, max(0.0, float(trust)))
        with self.atomic():
            self._conn.execute("UPDATE sources SET trust = ? WHERE id = ?", (t, source_id))
            self.log(now, agent, "sources.trust", None, f"{source_id} → {shown(t)}")
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
