"""Re-ingesting a known file updates its source in place.

``ledger ingest notes.md`` a second time used to add a second source with a copy of every
chunk, so every recall returned each passage twice. Now a source remembers the resolved
path it was read from (migration ``m008_source_paths``) and a new ingest of that path
reconciles the chunk lists:

* a chunk whose text is still in the file stays, with its id, hits, readers and
  reviews (its position and the neighbour context it is indexed with are refreshed);
* a chunk whose text is gone (changed or removed) is retired: ``deleted_at`` = now, so
  it leaves recall and search but ``asof:`` before now still finds it;
* a passage that is new (or changed) becomes a new chunk.

Texts are matched exactly (after the chunker's own normalisation), as a multiset: two
identical passages keep two chunks. ``ingest --as-new`` keeps the old behaviour.

Like a first ingest (``store/sources.py``), a re-ingest commits in batches so it never
holds the write lock for long (issue 21: a 24,000-chunk re-ingest in one transaction
kept concurrent writers waiting for seconds). New chunks are written hidden
(``deleted_at = PENDING``) and kept chunks whose neighbours changed are re-indexed, a
batch of about ``BATCH_MS`` at a time; then one short transaction makes the switch: the
new chunks appear, the replaced ones are retired and kept chunks take their new
positions, so readers see the old version or the new one, never a mix of texts. (A
kept chunk's neighbour context, a low-weight search signal, is refreshed during the
batches.) The ``ingests`` row names the process; a failed re-ingest deletes its hidden
chunks at once, a killed one on the next writable open, and the old version stays.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections import defaultdict
from typing import Sequence

from ..errors import StoreUnavailable, UnknownSource
from ..ids import new_id
from . import ops, sources, textindex
from .connection import atomic


def conn_of(store):
    """The SQLite connection of a :class:`~ledger.store.store.Store` (kept private to
    the store package)."""
    conn = getattr(store, "_conn", None)
    return conn if conn is not None else store.conn


def find_by_path(store, path: str) -> dict | None:
    """The newest live source read from ``path`` (resolved absolute path), or None:
    ``{"id", "filename", "cluster_id", "trust"}``."""
    r = conn_of(store).execute(
        "SELECT id, filename, cluster_id, trust FROM sources WHERE path = ? AND dropped_at IS NULL AND complete = 1 "
        "ORDER BY ingested_at DESC, rowid DESC LIMIT 1", (path,)).fetchone()
    return dict(zip(("id", "filename", "cluster_id", "trust"), tuple(r))) if r else None


def set_path(store, source_id: str, path: str | None) -> None:
    """Record the file a freshly inserted source was read from."""
    conn_of(store).execute("UPDATE sources SET path = ? WHERE id = ?", (path, source_id))


def resync(store, source_id: str, filename: str, chunks: Sequence[str], *, agent: str, nbytes: int,
           trust: float | None, now: int, neighbours: int = 2) -> dict:
    """Reconcile the live chunks of ``source_id`` with ``chunks`` (the file's new
    passages, in order): in batches with one short switch at the end, or in the
    caller's transaction when one is open; see the module docstring.

    ``store`` is the :class:`~ledger.store.store.Store` (its connection and indexing);
    ``trust`` 0-1 replaces the source's trust when given; ``now`` is epoch ms.
    Returns ``{"sourceId", "kept", "added", "retired", "chunks"}`` (counts; ``chunks``
    is the number of live chunks afterwards).
    """
    conn = conn_of(store)
    if not conn.in_transaction:
        return _resync_batched(store, source_id, filename, chunks, agent=agent, nbytes=nbytes, trust=trust, now=now,
                               neighbours=neighbours)
    with atomic(conn):
        src = conn.execute("SELECT cluster_id FROM sources WHERE id = ?", (source_id,)).fetchone()
        cluster = src[0]
        old = conn.execute(
            "SELECT seq, id, text FROM memories WHERE source_id = ? AND kind = 'chunk' AND deleted_at IS NULL "
            "ORDER BY coalesce(chunk_index, 0), seq", (source_id,)).fetchall()
        pool: dict[str, list[tuple[int, str]]] = defaultdict(list)
        for seq, mid, text in old:
            pool[text].append((seq, mid))
        n = len(chunks)
        kept = added = 0
        placed: list[tuple[int, str]] = []  # (seq, id) in the new order
        store.touch_agent(agent, now)
        for i, text in enumerate(chunks):
            ctx = " ".join(list(chunks[max(0, i - neighbours):i]) + list(chunks[i + 1:i + 1 + neighbours])) if neighbours else ""
            prov = f"chunk {i + 1} of {n} · {filename}"
            if pool.get(text):
                seq, mid = pool[text].pop(0)
                conn.execute("UPDATE memories SET chunk_index = ?, provenance = ? WHERE seq = ?", (i + 1, prov, seq))
                # The neighbours may have changed: index it again with its new context.
                textindex.unindex(conn, seq)
                textindex.index(conn, seq, text, ctx)
                kept += 1
            else:
                mid = new_id("c", now)
                cur = conn.execute(
                    """INSERT INTO memories (id, text, kind, origin, cluster_id, writer, source_id, chunk_index, provenance,
                                             created_at, last_read_at, reviewed_at, machine)
                       VALUES (?, ?, 'chunk', 'doc', ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                    (mid, text, cluster, agent, source_id, i + 1, prov, now, now, now, ops.MACHINE))
                seq = cur.lastrowid
                conn.execute("INSERT OR IGNORE INTO memory_readers (memory_id, agent_id) VALUES (?, ?)", (mid, agent))
                ops.count_new_memory(conn, mid)
                store._index(seq, text, ctx)
                added += 1
            placed.append((seq, mid))
        retired = [mid for rest in pool.values() for _, mid in rest]
        for mid in retired:
            # Soft delete, as for any dropped memory: FTS rows stay for asof:, open
            # conflicts close and unjudged candidates are settled.
            store.soft_delete(mid, f"re-ingest of {filename}: passage changed or removed", agent, now)
        sets, args = ["bytes = ?", "updated_at = ?", "filename = ?"], [nbytes, now, filename]
        if trust is not None:
            sets.append("trust = ?")
            args.append(trust)
        conn.execute(f"UPDATE sources SET {', '.join(sets)} WHERE id = ?", (*args, source_id))
        store.log(now, agent, "sources.reingest", None,
                  f"{filename} · {kept} kept, {added} added, {len(retired)} retired")
    return {"sourceId": source_id, "kept": kept, "added": added, "retired": len(retired), "chunks": len(placed)}


def _context(texts: Sequence[str], i: int, neighbours: int) -> str:
    """The neighbour context chunk ``i`` is indexed with (as ``insert_source`` does)."""
    return " ".join(list(texts[max(0, i - neighbours):i]) + list(texts[i + 1:i + 1 + neighbours])) if neighbours else ""


def _resync_batched(store, source_id: str, filename: str, chunks: Sequence[str], *, agent: str, nbytes: int,
                    trust: float | None, now: int, neighbours: int) -> dict:
    """:func:`resync` in batches (see the module docstring). Raises StoreUnavailable
    (reason ``locked``) while another live process re-ingests the same source."""
    conn = conn_of(store)
    with atomic(conn):
        src = conn.execute("SELECT cluster_id FROM sources WHERE id = ?", (source_id,)).fetchone()
        running = conn.execute("SELECT host, pid FROM ingests WHERE source_id = ?", (source_id,)).fetchone()
        if running:
            raise StoreUnavailable(f"{filename} is being ingested by another process (pid {running[1]} on "
                                   f"{running[0] or 'this host'}): try again when it has finished.", reason="locked")
        store.touch_agent(agent, now)
        wall = sources._wall_ms()
        conn.execute("INSERT INTO ingests (source_id, host, pid, started_at, beat_at) VALUES (?, ?, ?, ?, ?)",
                     (source_id, sources._host(), os.getpid(), wall, wall))
    cluster = src[0]
    try:
        # Read after the ingests row is in: no other re-ingest of this source can switch meanwhile.
        old = conn.execute(
            "SELECT seq, id, text, chunk_index, provenance FROM memories WHERE source_id = ? AND kind = 'chunk' "
            "AND deleted_at IS NULL ORDER BY coalesce(chunk_index, 0), seq", (source_id,)).fetchall()
        old_texts = [r[2] for r in old]
        pool: dict[str, list[int]] = defaultdict(list)  # text -> positions in ``old``
        for j, r in enumerate(old):
            pool[r[2]].append(j)
        n = len(chunks)
        work: list[tuple[int, int | None]] = []  # (new position, old position or None for a new chunk)
        moves: list[tuple[int, str, int]] = []  # (chunk_index, provenance, seq) of kept chunks that moved
        kept = 0
        for i, text in enumerate(chunks):
            prov = f"chunk {i + 1} of {n} · {filename}"
            if pool.get(text):
                j = pool[text].pop(0)
                kept += 1
                if (old[j][3], old[j][4]) != (i + 1, prov):
                    moves.append((i + 1, prov, old[j][0]))
                if _context(chunks, i, neighbours) != _context(old_texts, j, neighbours):
                    work.append((i, j))
            else:
                work.append((i, None))
        retired = [old[j][1] for rest in pool.values() for j in rest]
        added = sum(1 for _, j in work if j is None)
        k = 0
        first = True
        while k < len(work):
            with contextlib.ExitStack() as tx:
                store._enter_deferring(tx, first=first)
                first = False
                until = time.monotonic() + sources.BATCH_MS / 1000
                while k < len(work):
                    i, j = work[k]
                    k += 1
                    ctx = _context(chunks, i, neighbours)
                    if j is None:
                        mid = new_id("c", now)
                        cur = conn.execute(
                            """INSERT INTO memories (id, text, kind, origin, cluster_id, writer, source_id, chunk_index,
                                                     provenance, created_at, last_read_at, reviewed_at, deleted_at, machine)
                               VALUES (?, ?, 'chunk', 'doc', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                            (mid, chunks[i], cluster, agent, source_id, i + 1, f"chunk {i + 1} of {n} · {filename}", now, now,
                             now, sources.PENDING, ops.MACHINE))
                        conn.execute("INSERT OR IGNORE INTO memory_readers (memory_id, agent_id) VALUES (?, ?)", (mid, agent))
                        store._index(cur.lastrowid, chunks[i], ctx)
                    else:  # kept, with new neighbours: index it again with its new context
                        textindex.unindex(conn, old[j][0])
                        textindex.index(conn, old[j][0], chunks[i], ctx)
                    if time.monotonic() >= until:
                        break
                conn.execute("UPDATE ingests SET beat_at = ? WHERE source_id = ?", (sources._wall_ms(), source_id))
        with contextlib.ExitStack() as tx:  # the switch: one short transaction
            store._enter_deferring(tx, first=first)
            row = conn.execute("SELECT dropped_at FROM sources WHERE id = ?", (source_id,)).fetchone()
            if row is None or row[0] is not None:
                raise UnknownSource(f"Source {source_id} was dropped during the re-ingest of {filename}.")
            conn.execute("UPDATE memories SET deleted_at = NULL WHERE source_id = ? AND deleted_at = ?",
                         (source_id, sources.PENDING))
            if moves:
                conn.executemany("UPDATE memories SET chunk_index = ?, provenance = ? WHERE seq = ?", moves)
            store.soft_delete_many(retired, f"re-ingest of {filename}: passage changed or removed", agent, now)
            sets, args = ["bytes = ?", "updated_at = ?", "filename = ?"], [nbytes, now, filename]
            if trust is not None:
                sets.append("trust = ?")
                args.append(trust)
            conn.execute(f"UPDATE sources SET {', '.join(sets)} WHERE id = ?", (*args, source_id))
            conn.execute("DELETE FROM ingests WHERE source_id = ?", (source_id,))
            store.log(now, agent, "sources.reingest", None,
                      f"{filename} · {kept} kept, {added} added, {len(retired)} retired")
    except BaseException:
        try:
            store._discard_source(source_id)  # its hidden chunks only: the source is complete
        except Exception:  # noqa: BLE001 - keep the original error; the next open cleans up
            pass
        raise
    return {"sourceId": source_id, "kept": kept, "added": added, "retired": len(retired), "chunks": n}
