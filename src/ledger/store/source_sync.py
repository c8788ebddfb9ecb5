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
"""

from __future__ import annotations

from collections import defaultdict
from typing import Sequence

from ..ids import new_id
from . import ops, textindex
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
    passages, in order) in one transaction; see the module docstring.

    ``store`` is the :class:`~ledger.store.store.Store` (its connection and indexing);
    ``trust`` 0-1 replaces the source's trust when given; ``now`` is epoch ms.
    Returns ``{"sourceId", "kept", "added", "retired", "chunks"}`` (counts; ``chunks``
    is the number of live chunks afterwards).
    """
    conn = conn_of(store)
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
