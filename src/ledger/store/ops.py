"""The store operations both data paths share: the library's :class:`~ledger.store.Store`
and the hook path (:mod:`ledger.store.watch`) call these, so a counted read, a reader,
an agent's first sighting, a log row and a corroboration mean one thing everywhere.

Stdlib only and cheap to import (every ``ledger hook`` process loads it): functions
over an open ``sqlite3`` connection, plain values in and out. Callers own the
transaction (:func:`ledger.store.connection.atomic`); each function is also safe
outside one (single statements, or its own savepoint).
"""

from __future__ import annotations

from ..paths import machine_id
from ..vocab import PALETTE
from .connection import atomic

#: The machine every write of this process is attributed to (docs/postgres.md).
MACHINE = machine_id()


def touch_agent(conn, agent: str, now: int) -> None:
    """Register ``agent`` on first sight (label = id, next palette colour); bump its
    ``last_seen`` (epoch ms) after that."""
    cur = conn.execute("UPDATE agents SET last_seen = ?, machine = ? WHERE id = ?", (now, MACHINE, agent))
    if cur.rowcount == 0:
        n = conn.execute("SELECT count(*) FROM agents").fetchone()[0]
        conn.execute(
            "INSERT OR IGNORE INTO agents (id, label, color, first_seen, last_seen, machine) VALUES (?, ?, ?, ?, ?, ?)",
            (agent, agent, PALETTE[n % len(PALETTE)], now, now, MACHINE),
        )


def add_reader(conn, memory_id: str, agent: str) -> bool:
    """Make ``agent`` a reader of the memory (idempotent). ``reader_count`` is kept equal
    to the number of distinct readers (it feeds strength's corroboration factor).
    Returns whether the agent is a new reader."""
    cur = conn.execute("INSERT OR IGNORE INTO memory_readers (memory_id, agent_id) VALUES (?, ?)", (memory_id, agent))
    if not cur.rowcount:
        return False
    conn.execute(
        "UPDATE memories SET reader_count = (SELECT count(*) FROM memory_readers WHERE memory_id = ?) WHERE id = ?",
        (memory_id, memory_id),
    )
    return True


def log_event(conn, now: int, agent: str, op: str, memory_id: str | None = None, detail: str = "",
              ms: float | None = None) -> None:
    """Append one row to the operation log (``events``); ``ms`` is a duration in ms.
    The row names this process's machine (:data:`MACHINE`)."""
    conn.execute(
        "INSERT INTO events (at, agent, op, memory_id, detail, ms, machine) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (now, agent, op, memory_id, detail, ms, MACHINE),
    )


def count_read(conn, ids, agent: str, now: int) -> None:
    """A counted read (``recall``, a watcher injection): each memory gets hits + 1,
    last read = ``now`` and ``agent`` as a reader; the agent is touched. The only
    operation that moves hits and last read (docs/store.md "Strength")."""
    if not ids:
        return
    with atomic(conn):
        touch_agent(conn, agent, now)
        for mid in ids:
            conn.execute("UPDATE memories SET hits = hits + 1, last_read_at = ? WHERE id = ?", (now, mid))
            add_reader(conn, mid, agent)


def corroborate(conn, memory_id: str, agent: str, now: int, detail: str = "") -> bool:
    """``agent`` states a claim that is already in the store (docs/store.md
    "Corroboration"): the agent becomes one of its readers, once per agent, and the
    event is logged as ``memory.corroborate``. Hits and last read do not move (it is a
    write, not a read). Returns whether the agent was a new reader, i.e. whether the
    claim's corroboration factor can have risen."""
    with atomic(conn):
        touch_agent(conn, agent, now)
        added = add_reader(conn, memory_id, agent)
        log_event(conn, now, agent, "memory.corroborate", memory_id, detail)
    return added
