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
from ..vocab import MAX_AGENT_ID, PALETTE  # MAX_AGENT_ID: also read as ops.MAX_AGENT_ID
from .connection import atomic

#: The machine every write of this process is attributed to (docs/postgres.md).
MACHINE = machine_id()


def check_agent(agent: str) -> None:
    """Raise :class:`InvalidInput` for an agent id over :data:`MAX_AGENT_ID` characters.
    Every agent id reaches the store through :func:`touch_agent` or :func:`log_event`
    (a web edit's ``by`` only through the log), so both check."""
    if len(agent) > MAX_AGENT_ID:
        from ..errors import InvalidInput

        raise InvalidInput(f"The agent id is {len(agent):,} characters long; at most {MAX_AGENT_ID} are allowed "
                           "(an agent's name, such as claude-code). "
                           "Nothing was written.", field="agent")


def touch_agent(conn, agent: str, now: int) -> None:
    """Register ``agent`` on first sight (label = id, next palette colour); after that
    widen its ``first_seen``..``last_seen`` span (epoch ms) to take in ``now``. ``now``
    may be in the past (an import replays rows in file order, not time order), so the
    span only ever grows and ``last_seen >= first_seen`` always holds. Raises
    :class:`InvalidInput` for an id over :data:`MAX_AGENT_ID` characters (the write it
    belongs to is refused whole)."""
    check_agent(agent)
    cur = conn.execute("UPDATE agents SET last_seen = max(last_seen, ?), first_seen = min(first_seen, ?), machine = ? "
                       "WHERE id = ?", (now, now, MACHINE, agent))
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
    # This UPDATE also takes the memory's row lock on PostgreSQL before the summary reads
    # whether the memory is live and who else reads it (see migrations.m017).
    conn.execute(
        "UPDATE memories SET reader_count = (SELECT count(*) FROM memory_readers WHERE memory_id = ?) WHERE id = ?",
        (memory_id, memory_id),
    )
    live = conn.execute(  # one more read of the memory's cluster, if the memory is live (rowcount 1)
        """INSERT INTO agent_summary (agent_id, cluster_id, reads) SELECT ?, cluster_id, 1 FROM memories
           WHERE id = ? AND deleted_at IS NULL
           ON CONFLICT (agent_id, cluster_id) DO UPDATE SET reads = agent_summary.reads + 1""", (agent, memory_id)).rowcount
    if live:
        others = [r[0] for r in conn.execute("SELECT agent_id FROM memory_readers WHERE memory_id = ? AND agent_id <> ?",
                                             (memory_id, agent))]
        _add_pairs(conn, [(min(a, agent), max(a, agent)) for a in others])
    return True


def count_new_memory(conn, memory_id: str) -> None:
    """Add a memory just inserted with its readers to the per-agent summary
    (``agent_summary``, ``agent_overlap``: migration m017, docs/store.md "Summaries
    kept on write") if it is live: its writer wrote one more, each reader reads one
    more, each pair of readers shares one more. Every statement that inserts a live
    memory calls this; one inserted hidden (an ingest's batches) is counted by the
    trigger that runs when its ingest shows it."""
    row = conn.execute("SELECT writer, cluster_id FROM memories WHERE id = ? AND deleted_at IS NULL", (memory_id,)).fetchone()
    if row is None:
        return
    writer, cluster = row[0], row[1]
    conn.execute(
        """INSERT INTO agent_summary (agent_id, cluster_id, wrote) VALUES (?, ?, 1)
           ON CONFLICT (agent_id, cluster_id) DO UPDATE SET wrote = agent_summary.wrote + 1""", (writer, cluster))
    readers = sorted(r[0] for r in conn.execute("SELECT agent_id FROM memory_readers WHERE memory_id = ?", (memory_id,)))
    _add_reads(conn, [(a, cluster) for a in readers])
    _add_pairs(conn, [(a, b) for i, a in enumerate(readers) for b in readers[i + 1:]])


def _add_reads(conn, keys) -> None:
    """One more read for each ``(agent, cluster)``."""
    for agent, cluster in keys:
        conn.execute(
            """INSERT INTO agent_summary (agent_id, cluster_id, reads) VALUES (?, ?, 1)
               ON CONFLICT (agent_id, cluster_id) DO UPDATE SET reads = agent_summary.reads + 1""", (agent, cluster))


def _add_pairs(conn, pairs) -> None:
    """One more shared memory for each ``(a, b)`` with ``a < b``: Python orders str by
    code point, which is the bytewise order of UTF-8 (SQLite's BINARY, PostgreSQL's "C")."""
    for a, b in pairs:
        conn.execute(
            """INSERT INTO agent_overlap (a, b, shared) VALUES (?, ?, 1)
               ON CONFLICT (a, b) DO UPDATE SET shared = agent_overlap.shared + 1""", (a, b))


def log_event(conn, now: int, agent: str, op: str, memory_id: str | None = None, detail: str = "",
              ms: float | None = None) -> None:
    """Append one row to the operation log (``events``); ``ms`` is a duration in ms.
    The row names this process's machine (:data:`MACHINE`). Raises InvalidInput for
    an over-long ``agent`` (:func:`check_agent`)."""
    check_agent(agent)
    conn.execute(
        "INSERT INTO events (at, agent, op, memory_id, detail, ms, machine) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (now, agent, op, memory_id, detail, ms, MACHINE),
    )


def count_read(conn, ids, agent: str, now: int, *, reader: bool = True) -> None:
    """A counted read: each memory gets hits + 1 and last read = ``now``; the agent is
    touched. ``recall`` also makes ``agent`` a reader of each (``reader=True``); a fact
    the watcher hands back unasked (an injection, :func:`ledger.store.watch.record_injection`)
    does not (``reader=False``): being shown a fact is a use of it, not a confirmation.
    Readers feed the corroboration factor, and the agent whose own session the fact was
    distilled from would otherwise corroborate it by being shown it. The only operation
    that moves hits and last read (docs/store.md "Strength")."""
    if not ids:
        return
    with atomic(conn):
        touch_agent(conn, agent, now)
        for mid in ids:
            conn.execute("UPDATE memories SET hits = hits + 1, last_read_at = ? WHERE id = ?", (now, mid))
            if reader:
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
