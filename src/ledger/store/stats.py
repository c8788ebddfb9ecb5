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
        """Counts over live memories: by origin, kind, cluster, reader agent, and flags.

        One pass over the covering index ``memories_facets`` (migration
        ``m015_facet_indexes``) gives origin, kind, cluster, pinned and archived, so no
        memory row is read (0.1-1 s at 100k memories before, bench/web.py); reader
        counts per agent are the summary kept on write (``agent_summary``, m017: the
        readers of dropped memories were found by walking every reader)."""
        origin: dict[str, int] = {}
        kind: dict[str, int] = {}
        cluster: dict[str, int] = {}
        pinned = archived = 0
        for cl, kd, org, pin, arc, n in self._conn.execute(  # grouped in the index's order: no sort
                """SELECT cluster_id, kind, origin, pinned, archived, count(*) FROM memories WHERE deleted_at IS NULL
                   GROUP BY writer, cluster_id, kind, origin, pinned, archived"""):
            cluster[cl] = cluster.get(cl, 0) + n
            kind[kd] = kind.get(kd, 0) + n
            origin[org] = origin.get(org, 0) + n
            pinned += n if pin else 0
            archived += n if arc else 0
        readers = {a: int(n) for a, n in self._conn.execute("SELECT agent_id, sum(reads) FROM agent_summary GROUP BY agent_id")}
        readers = {a: n for a, n in sorted(readers.items(), key=lambda x: (-x[1], x[0])) if n > 0}
        conflicted = self.scalar(
            """SELECT count(*) FROM (SELECT a AS id FROM conflicts WHERE status = 'open' UNION SELECT b FROM conflicts WHERE status = 'open') x
               JOIN memories m ON m.id = x.id WHERE m.deleted_at IS NULL""")
        return {
            "origin": origin,
            "kind": kind,
            "cluster": cluster,
            "agent": readers,
            "flags": {
                "pinned": pinned,
                "archived": archived,
                "conflicted": conflicted,
                "pending": self.scalar("SELECT count(*) FROM memories WHERE deleted_at IS NULL AND kind = 'claim' AND reviewed_at IS NULL"),
            },
        }

    def timeline(self, buckets: int = 60) -> dict:
        """Histogram of live memories by creation time over the span of all rows:
        ``{start, end, width, counts}`` (epoch ms; ``counts`` has ``buckets`` entries,
        the last one holding everything from its start on).

        Each bucket is a range count over the index ``memories_live_created``
        (deleted_at, created_at; migration ``m017_agent_summary``), all in one
        statement: grouping by the bucket number sorted 100k rows per request."""
        lo, hi = self._conn.execute(  # two subqueries: min and max each read one end of the index
            "SELECT (SELECT min(created_at) FROM memories), (SELECT max(created_at) FROM memories)").fetchone()
        if lo is None:
            return {"start": None, "end": None, "width": 0, "counts": []}
        width = max(1, math.ceil((hi - lo + 1) / buckets))
        cols, params = [], []
        for i in range(buckets):
            if i < buckets - 1:
                cols.append("(SELECT count(*) FROM memories WHERE deleted_at IS NULL AND created_at >= ? AND created_at < ?)")
                params += [lo + i * width, lo + (i + 1) * width]
            else:
                cols.append("(SELECT count(*) FROM memories WHERE deleted_at IS NULL AND created_at >= ?)")
                params.append(lo + i * width)
        counts = [int(n) for n in self._conn.execute("SELECT " + ", ".join(cols), params).fetchone()]
        return {"start": lo, "end": hi, "width": width, "counts": counts}

    def agent_activity(self, agent: str, since_ms: int) -> dict:
        """One agent's :meth:`agents_activity` entry."""
        return self.agents_activity(since_ms)[0].get(agent, {"wrote": 0, "calls": 0, "hitRate": None, "top": []})

    def agents_activity(self, since_ms: int) -> tuple[dict[str, dict], list[dict]]:
        """``({agent: {wrote, calls, hitRate, top}}, overlap)`` for every agent at once:
        live memories written, events since ``since_ms`` (epoch ms), the share of its
        searches since then that found something (0-1, None without searches), its four
        most-read clusters among live memories, and for each pair of agents the live
        memories both read (``[{a, b, shared}]``, most first; ``a < b`` bytewise).

        Written, read and shared counts come from the summary that triggers keep on
        every write (``agent_summary``, ``agent_overlap``: migration
        ``m017_agent_summary``), a few rows per agent: reading every reader of every
        memory took 0.2 s of CPU per request at 100k memories (bench/web.py). Events are
        read through their time index."""
        out: dict[str, dict] = {}

        def entry(a: str) -> dict:
            return out.setdefault(a, {"wrote": 0, "calls": 0, "hitRate": None, "top": []})

        top: dict[str, list[tuple[int, str]]] = {}
        for agent, cl, wrote, reads in self._conn.execute(
                "SELECT agent_id, cluster_id, wrote, reads FROM agent_summary WHERE wrote > 0 OR reads > 0"):
            e = entry(agent)
            e["wrote"] += wrote
            if reads > 0:
                top.setdefault(agent, []).append((-reads, cl))
        for agent, n in self._conn.execute("SELECT agent, count(*) FROM events WHERE at >= ? GROUP BY agent", (since_ms,)):
            entry(agent)["calls"] = n
        found: dict[str, list[int]] = {}
        for agent, detail in self._conn.execute("SELECT agent, detail FROM events WHERE op = 'memory.search' AND at >= ?", (since_ms,)):
            f = found.setdefault(agent, [0, 0])
            f[0] += not detail.startswith("0 ")
            f[1] += 1
        for agent, (hit, n) in found.items():
            entry(agent)["hitRate"] = hit / n
        for agent, counts in top.items():
            entry(agent)["top"] = [{"cluster": c, "count": -n} for n, c in sorted(counts)[:4]]
        rows = self._conn.execute("SELECT a, b, shared FROM agent_overlap WHERE shared > 0").fetchall()
        overlap = [{"a": a, "b": b, "shared": n} for a, b, n in sorted(rows, key=lambda r: (-r[2], r[0], r[1]))]
        return out, overlap

    def agent_overlap(self) -> list[dict]:
        """Pairs of agents with the live memories both read, most first (:meth:`agents_activity`)."""
        return self.agents_activity(0)[1]

    def machines(self) -> list[dict]:
        """The machines that wrote to this store (row-level attribution, from the
        operation log), most recent first: ``[{"machine", "writes", "firstSeen",
        "lastSeen", "agents": [ids]}]``; times are epoch ms. Rows logged before
        attribution existed have no machine and are left out."""
        out: dict[str, dict] = {}
        for m, n, first, last in self._conn.execute(
                "SELECT machine, count(*), min(at), max(at) FROM events WHERE machine IS NOT NULL GROUP BY machine"):
            out[m] = {"machine": m, "writes": n, "firstSeen": first, "lastSeen": last, "agents": []}
        for m, agent in self._conn.execute(
                "SELECT DISTINCT machine, agent FROM events WHERE machine IS NOT NULL ORDER BY machine, agent"):
            out[m]["agents"].append(agent)
        return sorted(out.values(), key=lambda d: (-d["lastSeen"], d["machine"]))

    def disk_bytes(self) -> int:
        """Bytes the store occupies: the SQLite file, or on PostgreSQL the tables of its
        schema with their indexes and TOAST."""
        if getattr(self._conn, "is_postgres", False):
            return self._conn.execute(
                "SELECT coalesce(sum(pg_total_relation_size(format('%I.%I', schemaname, tablename))), 0) "
                "FROM pg_tables WHERE schemaname = current_schema()").fetchone()[0]
        try:
            return os.stat(self._path).st_size
        except OSError:
            return 0
