"""Pieces every part of :class:`~ledger.store.Store` shares: the columns a memory is
hydrated from, batching of ``IN (...)`` lists, and a read snapshot."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover - `typing` stays off the CLI start-up path
    import sqlite3
    from typing import Iterable

MEMORY_COLS = """m.seq, m.id, m.text, m.kind, m.origin, m.cluster_id, m.writer, m.source_id, m.chunk_index,
    m.provenance, m.topic, m.created_at, m.last_read_at, m.hits, m.source_count, m.reader_count, m.pinned,
    m.archived, m.reviewed_at, m.deleted_at, m.machine, s.trust AS trust, cl.label AS cluster_label, cl.color AS cluster_color"""
MEMORY_FROM = "memories m LEFT JOIN sources s ON s.id = m.source_id LEFT JOIN clusters cl ON cl.id = m.cluster_id"


def read_snapshot(conn: "sqlite3.Connection") -> "_ReadSnapshot":
    """A deferred read transaction, so several statements see one snapshot (WAL:
    writers are never blocked by it). Inside a caller's transaction, nothing to do."""
    return _ReadSnapshot(conn)


class _ReadSnapshot:
    # A class, not a contextlib generator: contextlib is not imported on the agent
    # verbs' path (about 0.5 ms of each start-up; tests/test_startup.py).
    __slots__ = ("conn", "began")

    def __init__(self, conn: "sqlite3.Connection"):
        self.conn, self.began = conn, False

    def __enter__(self) -> None:
        if not self.conn.in_transaction:
            self.conn.execute("BEGIN")
            self.began = True

    def __exit__(self, typ, exc, tb) -> bool:
        if self.began and self.conn.in_transaction:
            self.conn.execute("COMMIT" if typ is None else "ROLLBACK")
        return False


def batches(items: list, size: int) -> "Iterable[list]":
    """``items`` in consecutive lists of at most ``size`` (SQLite caps bound parameters)."""
    for i in range(0, len(items), size):
        yield items[i : i + size]
