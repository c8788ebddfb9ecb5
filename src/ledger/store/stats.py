"""The statistics job of :class:`~ledger.store.Store` (a mixin): counts, facets, the
timeline and agent activity, read-only."""

from __future__ import annotations

import math
import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover - `typing` stays off the CLI start-up path
    from typing import Sequence


class StatsMixin:
    """Statistics for :class:`~ledger.store.Store`; uses its ``_conn`` and ``_path``."""

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
            "sources": q("SELECT count(*) FROM sources WHERE dropped_at IS NULL AND complete = 1"),
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
