"""The sources job of :class:`~ledger.store.Store` (a mixin): ingesting a document as
a source and its chunks, listing sources, trust, and dropping a source."""

from __future__ import annotations

from ..errors import UnknownSource
from ..ids import new_id
from ..models import Source
from ..text import plural

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover - `typing` stays off the CLI start-up path
    from typing import Sequence


class SourcesMixin:
    """Sources for :class:`~ledger.store.Store`; uses its ``_conn``, ``atomic``, ``log``,
    ``touch_agent``, ``_index`` and ``soft_delete``."""

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
