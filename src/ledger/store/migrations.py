"""Append-only, named schema migrations, applied on every open (style lesson 3).

Each migration runs in one transaction together with its row in ``_migrations``. Never
edit, rename or reorder a migration that has shipped: add a new one.

One list serves both engines. Migrations are written in the shared dialect (the
PostgreSQL connection translates types and keys, see :mod:`.pg`); the few steps that
only one engine has (SQLite's FTS5 virtual tables, PostgreSQL's tsvector tables) are
chosen with :func:`.connection.is_postgres`.
"""

from __future__ import annotations

import time

from ..errors import NewerStore, StoreUnavailable
from ._sqlite import sqlite3
from .connection import atomic, is_postgres

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover - keeps typing off the hook path
    from typing import Callable

    Migration = Callable[[sqlite3.Connection], None]
else:
    Migration = object
MIGRATIONS: list[tuple[str, Migration]] = []


def migration(fn: Migration) -> Migration:
    MIGRATIONS.append((fn.__name__, fn))
    return fn


@migration
def m001_initial(conn: sqlite3.Connection) -> None:
    """The seed's v2 schema (docs/originals.md §1.2) with our additions: an integer ``seq`` key
    shared with the FTS tables, a denormalised ``reader_count`` (so strength can be
    computed inside SQLite for exact ranking), file keys and topics for watcher claims,
    resolution bookkeeping, and a trigram index for fuzzy matching."""
    _run_script(
        conn,
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE clusters (
            id TEXT PRIMARY KEY, label TEXT NOT NULL, color TEXT NOT NULL, created_at INTEGER NOT NULL);
        CREATE TABLE agents (
            id TEXT PRIMARY KEY, label TEXT NOT NULL, role TEXT NOT NULL DEFAULT '', color TEXT NOT NULL,
            endpoint TEXT NOT NULL DEFAULT '', read_scope TEXT NOT NULL DEFAULT 'all clusters',
            write_scope TEXT NOT NULL DEFAULT 'all clusters',
            first_seen INTEGER NOT NULL, last_seen INTEGER NOT NULL);
        CREATE TABLE sources (
            id TEXT PRIMARY KEY, filename TEXT NOT NULL, ext TEXT NOT NULL DEFAULT '',
            cluster_id TEXT NOT NULL REFERENCES clusters(id), ingested_by TEXT NOT NULL,
            bytes INTEGER NOT NULL DEFAULT 0, trust REAL NOT NULL DEFAULT 0.75,
            ingested_at INTEGER NOT NULL, dropped_at INTEGER);
        CREATE TABLE memories (
            seq INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            text TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('claim', 'chunk')),
            origin TEXT NOT NULL CHECK (origin IN ('chat', 'doc')),
            cluster_id TEXT NOT NULL REFERENCES clusters(id),
            writer TEXT NOT NULL,
            source_id TEXT REFERENCES sources(id),
            chunk_index INTEGER,
            provenance TEXT NOT NULL DEFAULT '',
            topic TEXT,
            created_at INTEGER NOT NULL,
            last_read_at INTEGER NOT NULL,
            hits INTEGER NOT NULL DEFAULT 0,
            source_count INTEGER NOT NULL DEFAULT 1,
            reader_count INTEGER NOT NULL DEFAULT 1,
            pinned INTEGER NOT NULL DEFAULT 0,
            archived INTEGER NOT NULL DEFAULT 0,
            reviewed_at INTEGER,
            deleted_at INTEGER);
        CREATE TABLE memory_readers (
            memory_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            agent_id TEXT NOT NULL,
            PRIMARY KEY (memory_id, agent_id)) WITHOUT ROWID;
        CREATE TABLE memory_files (
            memory_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            path TEXT NOT NULL, size INTEGER, mtime_ms INTEGER, sha256 TEXT,
            PRIMARY KEY (memory_id, path)) WITHOUT ROWID;
        CREATE TABLE links (
            a TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            b TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            PRIMARY KEY (a, b)) WITHOUT ROWID;
        CREATE TABLE conflicts (
            id TEXT PRIMARY KEY, kind TEXT NOT NULL, cluster_id TEXT NOT NULL,
            a TEXT NOT NULL REFERENCES memories(id), b TEXT NOT NULL REFERENCES memories(id),
            detector REAL NOT NULL, note TEXT NOT NULL DEFAULT '',
            status TEXT NOT NULL CHECK (status IN ('open', 'resolved', 'dismissed')),
            created_at INTEGER NOT NULL, resolved_at INTEGER, resolution TEXT, resolved_by TEXT);
        CREATE TABLE conflict_candidates (
            id TEXT PRIMARY KEY,
            a TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            b TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            score REAL NOT NULL, signals TEXT NOT NULL DEFAULT '',
            created_at INTEGER NOT NULL, judged_at INTEGER, verdict TEXT, judged_by TEXT,
            UNIQUE (a, b));
        CREATE TABLE events (
            id INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, agent TEXT NOT NULL,
            op TEXT NOT NULL, memory_id TEXT, detail TEXT NOT NULL DEFAULT '', ms REAL);

        CREATE INDEX memories_live ON memories (deleted_at, kind, cluster_id);
        CREATE INDEX memories_created ON memories (created_at);
        CREATE INDEX memories_pending ON memories (reviewed_at) WHERE kind = 'claim';
        CREATE INDEX memories_source ON memories (source_id);
        CREATE INDEX memory_readers_agent ON memory_readers (agent_id);
        CREATE INDEX memory_files_path ON memory_files (path);
        CREATE INDEX links_b ON links (b);
        CREATE INDEX conflicts_status ON conflicts (status);
        CREATE INDEX conflicts_a ON conflicts (a);
        CREATE INDEX conflicts_b ON conflicts (b);
        CREATE INDEX candidates_pending ON conflict_candidates (judged_at, score);
        CREATE INDEX candidates_b ON conflict_candidates (b);
        CREATE INDEX events_at ON events (at DESC);
        CREATE INDEX events_op_at ON events (op, at)
        """
    )
    if is_postgres(conn):
        from . import textindex_pg

        textindex_pg.ensure_trgm(conn)
        for stmt in textindex_pg.SCHEMA_M001:
            conn.run(stmt)
        return
    _run_script(
        conn,
        """
        -- Word index: BM25 over the text, plus a second column of neighbour context
        -- (a chunk's neighbours in its source) weighted 0.3 at query time. Rows are
        -- kept when a memory is dropped so asof: text search still reaches it.
        CREATE VIRTUAL TABLE memories_fts USING fts5 (text, context, tokenize = 'porter unicode61');
        -- Trigram index over the normalised text (lowercased, whitespace collapsed,
        -- one space of padding each side) for fuzzy containment: detail=none keeps it
        -- small since we only ever look up single trigrams.
        CREATE VIRTUAL TABLE memories_tri USING fts5 (norm, tokenize = 'trigram case_sensitive 1', detail = none);
        CREATE VIRTUAL TABLE memories_tri_vocab USING fts5vocab (memories_tri, row);
        """
    )


def _run_script(conn: sqlite3.Connection, script: str) -> None:
    """Run ``;``-separated DDL statement by statement. (``executescript`` would COMMIT the
    surrounding transaction first, breaking the one-transaction-per-migration rule.)"""
    for stmt in script.split(";"):
        if stmt.strip():
            conn.execute(stmt)


def migrate(conn: sqlite3.Connection, *, defer_above: int | None = None) -> list[str]:
    """Apply every migration not yet recorded; return the names applied.

    ``defer_above`` (a number of memories): when migrations are pending and the store
    holds more memories than that, raise :class:`~ledger.errors.StoreUnavailable` with
    reason ``migrating`` instead, writing nothing. A hook passes it: some migrations
    rewrite index rows (``m021_versions_apart``: about 7 s of CPU at 100k memories), a
    hook has a 2 s budget and is killed by its harness at 10 s, and a killed migration
    rolls back, so every later hook would start it again; the hook hands the store to a
    detached process instead (docs/watcher.md "Migrations"). A new store (no memories)
    is always migrated at once.

    Raises :class:`~ledger.errors.NewerStore` (before writing anything) when the store records a
    migration this version does not know: a newer ledger wrote it, and using it would
    fail later naming columns this version has never heard of."""
    check_not_newer(conn)
    tables = table_names(conn)
    if "_migrations" not in tables:
        with atomic(conn):  # two processes may create a new store at once (PostgreSQL: no IF NOT EXISTS race)
            conn.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)")
    done = {r[0] for r in conn.execute("SELECT name FROM _migrations")}
    pending = [name for name, _ in MIGRATIONS if name not in done]
    if pending and defer_above is not None and "memories" in tables:
        held = conn.execute("SELECT count(*) FROM (SELECT 1 FROM memories LIMIT ?) AS m", (defer_above + 1,)).fetchone()[0]
        if held > defer_above:
            raise StoreUnavailable(
                f"The store needs {len(pending)} schema change(s) ({', '.join(pending[:3])}{', …' if len(pending) > 3 else ''}) "
                f"and holds more than {defer_above:,} memories: they are applied by a process of their own, not here.",
                reason="migrating")
    applied = []
    for name, fn in MIGRATIONS:
        if name in done:
            continue
        with atomic(conn):
            # Re-check inside the write lock: another process may have just migrated.
            if conn.execute("SELECT 1 FROM _migrations WHERE name = ?", (name,)).fetchone():
                continue
            fn(conn)
            conn.execute("INSERT INTO _migrations (name, applied_at) VALUES (?, ?)", (name, int(time.time() * 1000)))
        applied.append(name)
    return applied


def check_not_newer(conn: sqlite3.Connection) -> None:
    """Refuse a store written by a newer ledger (see :func:`migrate`). Read-only opens
    call this too. Cheap: one read of a table with one row per migration."""
    if "_migrations" not in table_names(conn):
        return
    known = {name for name, _ in MIGRATIONS}
    unknown = sorted(r[0] for r in conn.execute("SELECT name FROM _migrations") if r[0] not in known)
    if unknown:
        shown = ", ".join(unknown[:3]) + (", …" if len(unknown) > 3 else "")
        raise NewerStore(
            f"This store was written by a newer ledger (it has schema change{'s' if len(unknown) > 1 else ''} {shown} "
            "that this version does not know). Upgrade ledger (pip install -U ledger-memory), or use another store; "
            "nothing was changed."
        )


def require_store(conn, path: object) -> None:
    """For a store opened with ``readonly=True`` (nothing is created or migrated): refuse
    it, closing ``conn``, when it is no ledger store at all (an empty file, or another
    program's tables) or lacks migrations this version needs (:func:`require_current`).
    Without this the first read failed on a missing table. Raises
    :class:`StoreUnavailable` (reason ``bad-path`` or ``read-only``)."""
    try:
        tables = table_names(conn)
    except BaseException:
        conn.close()
        raise
    if "_migrations" not in tables:
        conn.close()
        other = sorted(t for t in tables if not t.startswith("sqlite_"))
        what = (f"another program's tables ({', '.join(other[:5])}{', …' if len(other) > 5 else ''})" if other
                else "no tables yet")
        raise StoreUnavailable(f"{path} is not a ledger store ({what}), and a read-only open creates nothing. "
                               "Open a store ledger wrote, or open this path for writing to make it one.",
                               reason="bad-path", path=str(path))
    require_current(conn, path, "opened read-only")


def require_current(conn, path: object, why: str) -> None:
    """For a store opened read-only because it cannot be written (``why``): refuse it,
    closing ``conn``, when it was written by a newer ledger (:func:`check_not_newer`) or
    lacks migrations this version needs (they cannot be applied without writing; its
    tables would not have the columns this version reads). Raises
    :class:`StoreUnavailable` (reason ``read-only``) saying how to get it upgraded."""
    try:
        check_not_newer(conn)
        done = {r[0] for r in conn.execute("SELECT name FROM _migrations")} if "_migrations" in table_names(conn) else set()
    except BaseException:
        conn.close()
        raise
    pending = [name for name, _ in MIGRATIONS if name not in done]
    if pending:
        conn.close()
        raise StoreUnavailable(
            f"The store {path} is read-only ({why}) and this version of ledger must upgrade it first "
            f"({len(pending)} schema change{'s' if len(pending) > 1 else ''}, e.g. {pending[0]}), which needs writing. "
            "Open it once with write access (make the file and its folder writable for this user), or read it "
            "with the ledger version that wrote it.", reason="read-only", path=str(path))


def table_names(conn) -> set[str]:
    """The store's tables (SQLite: the file's; PostgreSQL: the schema's)."""
    if is_postgres(conn):
        from .pg import table_names as pg_tables

        return pg_tables(conn)
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


@migration
def m002_watcher(conn: sqlite3.Connection) -> None:
    """The watcher's state, persisted so it survives hook processes: sessions with their
    step counter and distillation lease, observations (one per tool call) and the files
    they touched, per-session per-file escalation counters, injections, LLM calls with
    token use, and session checkpoints."""
    _run_script(
        conn,
        """
        CREATE TABLE watch_sessions (
            key TEXT PRIMARY KEY,              -- '<harness>:<session id>'
            harness TEXT NOT NULL, session_id TEXT NOT NULL, project TEXT NOT NULL, cwd TEXT NOT NULL,
            agent TEXT NOT NULL, transcript_path TEXT,
            started_at INTEGER NOT NULL, last_seen INTEGER NOT NULL,
            steps INTEGER NOT NULL DEFAULT 0, distilled_step INTEGER NOT NULL DEFAULT 0,
            lease_until INTEGER NOT NULL DEFAULT 0, lease_owner TEXT);
        CREATE TABLE observations (
            id INTEGER PRIMARY KEY, session TEXT NOT NULL REFERENCES watch_sessions(key),
            step INTEGER NOT NULL, at INTEGER NOT NULL, tool TEXT NOT NULL, input TEXT NOT NULL,
            output TEXT NOT NULL DEFAULT '', ok INTEGER, duration_ms REAL, tool_use_id TEXT);
        CREATE INDEX observations_session_step ON observations (session, step);
        CREATE TABLE observation_files (
            observation_id INTEGER NOT NULL REFERENCES observations(id), path TEXT NOT NULL,
            PRIMARY KEY (observation_id, path)) WITHOUT ROWID;
        CREATE INDEX observation_files_path ON observation_files (path);
        CREATE TABLE watch_escalation (
            session TEXT NOT NULL, path TEXT NOT NULL,
            injections INTEGER NOT NULL DEFAULT 0, first_step INTEGER,
            facts_seen INTEGER NOT NULL DEFAULT 0,   -- highest memory seq keyed to the path when counted
            PRIMARY KEY (session, path)) WITHOUT ROWID;
        CREATE TABLE injections (
            id INTEGER PRIMARY KEY, session TEXT NOT NULL, step INTEGER NOT NULL, at INTEGER NOT NULL,
            level TEXT NOT NULL, memory_ids TEXT NOT NULL, paths TEXT NOT NULL, chars INTEGER NOT NULL);
        CREATE INDEX injections_session ON injections (session);
        CREATE TABLE llm_calls (
            id INTEGER PRIMARY KEY, at INTEGER NOT NULL, session TEXT, backend TEXT NOT NULL, model TEXT,
            prompt_tokens INTEGER NOT NULL DEFAULT 0, completion_tokens INTEGER NOT NULL DEFAULT 0,
            ms REAL, ok INTEGER NOT NULL, error TEXT);
        CREATE INDEX llm_calls_at ON llm_calls (at);
        CREATE TABLE checkpoints (
            id INTEGER PRIMARY KEY, session TEXT, project TEXT NOT NULL, at INTEGER NOT NULL,
            event TEXT NOT NULL, branch TEXT, content TEXT NOT NULL);
        CREATE INDEX checkpoints_project_at ON checkpoints (project, at)
        """,
    )


@migration
def m003_count_indexes(conn: sqlite3.Connection) -> None:
    """Covering indexes for the counts every ``remember`` returns (measured at 100k
    claims with 14.6k pending candidates: pending-candidate count 145 -> 19 ms, pending
    claims 42 -> 10 ms): the live test on both sides of a candidate is answered from
    ``(id, deleted_at)`` without reading the memory row, the pending candidates from
    ``(judged_at, a, b)``, and pending claims from ``(reviewed_at, deleted_at)``."""
    _run_script(
        conn,
        """
        CREATE INDEX memories_id_live ON memories (id, deleted_at);
        CREATE INDEX candidates_pending_pair ON conflict_candidates (judged_at, a, b);
        CREATE INDEX memories_pending_live ON memories (reviewed_at, deleted_at) WHERE kind = 'claim'
        """,
    )


@migration
def m004_settle_candidates_of_dropped_memories(conn: sqlite3.Connection) -> None:
    """Dropping a memory now settles its unjudged candidates (verdict ``retired``), so the
    pending count is an index count. Settle those left by earlier versions."""
    conn.execute(
        """UPDATE conflict_candidates SET judged_at = ?, verdict = 'retired'
           WHERE judged_at IS NULL AND EXISTS (
             SELECT 1 FROM memories m WHERE m.id IN (conflict_candidates.a, conflict_candidates.b) AND m.deleted_at IS NOT NULL)""",
        (int(time.time() * 1000),),
    )


@migration
def m005_watcher_step_counting_and_tool_use_ids(conn: sqlite3.Connection) -> None:
    """Issue 12: escalation counts a file once per step (``last_step``: parallel tool calls
    of one step are one showing), and one observation per harness ``tool_use_id`` within
    a session (a call delivered twice is stored once). Earlier duplicates are folded into
    their first copy before the unique index is built."""
    conn.execute("ALTER TABLE watch_escalation ADD COLUMN last_step INTEGER")
    dupes = """SELECT id FROM observations o WHERE tool_use_id IS NOT NULL AND EXISTS (
                 SELECT 1 FROM observations p WHERE p.session = o.session AND p.tool_use_id = o.tool_use_id AND p.id < o.id)"""
    conn.execute(f"DELETE FROM observation_files WHERE observation_id IN ({dupes})")
    conn.execute(f"DELETE FROM observations WHERE id IN ({dupes})")
    conn.execute(
        "CREATE UNIQUE INDEX observations_tool_use ON observations (session, tool_use_id) WHERE tool_use_id IS NOT NULL"
    )


@migration
def m006_session_record(conn: sqlite3.Connection) -> None:
    """The session record (``store/session_record.py``): the user's prompts, named JSON
    values (latest plan, todo list, last failing and passing command) and edited files,
    per session key, so the Session State block and checkpoints can be built from what
    the hooks saw."""
    _run_script(
        conn,
        """
        CREATE TABLE session_prompts (
            id INTEGER PRIMARY KEY, session TEXT NOT NULL, at INTEGER NOT NULL, text TEXT NOT NULL);
        CREATE INDEX session_prompts_session ON session_prompts (session, id);
        CREATE TABLE session_values (
            session TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL, at INTEGER NOT NULL,
            PRIMARY KEY (session, name)) WITHOUT ROWID;
        CREATE TABLE session_files (
            session TEXT NOT NULL, path TEXT NOT NULL, first_at INTEGER NOT NULL, last_at INTEGER NOT NULL,
            edits INTEGER NOT NULL DEFAULT 1,
            PRIMARY KEY (session, path))
        """,
    )


@migration
def m007_terms(conn: sqlite3.Connection) -> None:
    """Terms as people type them, and fuzzy matching at the term level (docs/search.md):

    * ``memories_side``: compounds (``c++``, ``node.js``, ``--force``) as single tokens
      and CJK bigrams, filled for every memory that has any;
    * ``vocab`` + ``vocab_tri``: the alphabetic words of every memory and a trigram index
      over them (replacing the trigram index over every memory, ``memories_tri``);
    * rows of the word index whose text changes under NFKC (fullwidth letters) are
      indexed again with the folded text."""
    from .. import terms as T
    from . import textindex

    if is_postgres(conn):
        from . import textindex_pg

        for stmt in textindex_pg.SCHEMA_M007:
            conn.run(stmt)
        return  # m001 on PostgreSQL never had the trigram index this replaces, nor folded text to redo
    _run_script(
        conn,
        """
        CREATE VIRTUAL TABLE memories_side USING fts5 (terms, tokenize = 'porter unicode61');
        CREATE TABLE vocab (id INTEGER PRIMARY KEY, term TEXT NOT NULL UNIQUE);
        CREATE VIRTUAL TABLE vocab_tri USING fts5 (padded, tokenize = 'trigram', detail = none);
        CREATE VIRTUAL TABLE vocab_tri_v USING fts5vocab (vocab_tri, row);
        DROP TABLE IF EXISTS memories_tri_vocab;
        DROP TABLE IF EXISTS memories_tri
        """,
    )
    words: set[str] = set()
    side = []
    refold = []
    for seq, text in conn.execute("SELECT seq, text FROM memories"):
        words |= T.vocabulary_words(text)
        s = T.side_text(text)
        if s:
            side.append((seq, s))
        if not text.isascii() and T.nfkc(text) != text:
            refold.append((seq, text))
    conn.executemany("INSERT INTO memories_side (rowid, terms) VALUES (?, ?)", side)
    textindex.add_words(conn, sorted(words), stems=False)  # m020 fills vocab_fts afterwards
    for seq, text in refold:
        ctx = textindex.unindex(conn, seq)
        textindex.index(conn, seq, text, ctx, stems=False)  # m020 fills vocab_fts afterwards


@migration
def m008_source_paths(conn: sqlite3.Connection) -> None:
    """Sources remember the resolved path they were read from (NULL for stdin and
    ``--text``) and when a re-ingest last updated them, so ingesting the same file again
    updates that source instead of adding a second copy (docs in ``store/source_sync.py``)."""
    conn.execute("ALTER TABLE sources ADD COLUMN path TEXT")
    conn.execute("ALTER TABLE sources ADD COLUMN updated_at INTEGER")
    conn.execute("CREATE INDEX sources_path ON sources (path) WHERE path IS NOT NULL")


@migration
def m009_text_history(conn: sqlite3.Connection) -> None:
    """Text history for ``asof:`` (issue 21): every text a memory had before an edit, a
    review edit or a merge that took the other side's text, with the instant it was
    replaced (epoch ms). ``asof:T`` shows the earliest row replaced after T, else the
    current text, so it answers what the store said at T."""
    _run_script(
        conn,
        """
        CREATE TABLE memory_text_history (
            memory_id TEXT NOT NULL, text TEXT NOT NULL, replaced_at INTEGER NOT NULL, replaced_by TEXT NOT NULL DEFAULT '');
        CREATE INDEX memory_text_history_at ON memory_text_history (memory_id, replaced_at)
        """,
    )


@migration
def m011_symbols(conn: sqlite3.Connection) -> None:
    """Emoji and other non-ASCII symbols (``🔥``, ``✅``, ``→``, ``€``) are searchable
    (docs/search.md "Terms"): the side index of every memory holding one is written
    again with its symbols (:func:`ledger.terms.side_text`). Only rows with non-ASCII
    text are read in Python."""
    from .. import terms as T

    redo = []
    for seq, text in conn.execute("SELECT seq, text FROM memories"):
        if not text.isascii() and T.symbol_runs(text):
            redo.append((seq, T.side_text(text)))
    if is_postgres(conn):  # a PostgreSQL store is new: its side index holds symbols from the start
        return
    for seq, side in redo:
        conn.execute("DELETE FROM memories_side WHERE rowid = ?", (seq,))
        conn.execute("INSERT INTO memories_side (rowid, terms) VALUES (?, ?)", (seq, side))


@migration
def m012_text_history_index(conn: sqlite3.Connection) -> None:
    """``asof:`` matches the text a memory had then, not only its current text
    (docs/search.md "asof"): a full-text index over ``memory_text_history`` (word index
    and side terms as two columns, rowid for rowid), filled from the rows already there."""
    from . import textindex

    if is_postgres(conn):
        from . import textindex_pg

        for stmt in textindex_pg.SCHEMA_M012:
            conn.run(stmt)
    else:
        conn.execute("CREATE VIRTUAL TABLE memory_text_fts USING fts5 (text, side, tokenize = 'porter unicode61')")
    for hid, text in conn.execute("SELECT rowid, text FROM memory_text_history").fetchall():
        textindex.index_old_text(conn, hid, text)


@migration
def m013_ingest_batches(conn: sqlite3.Connection) -> None:
    """Large ingests commit in batches (issue 21: one long transaction locked every
    other writer out). ``sources.complete`` is 0 while batches are still arriving (the
    source and its chunks are hidden from every reader until the last batch flips it),
    and ``ingests`` names the process doing each unfinished ingest (host, pid, last
    batch at, epoch ms), so a killed ingest is recognised and cleaned up on the next
    open (``store/sources.py``). Existing sources are complete."""
    _run_script(
        conn,
        """
        ALTER TABLE sources ADD COLUMN complete INTEGER NOT NULL DEFAULT 1;
        CREATE TABLE ingests (
            source_id TEXT PRIMARY KEY, host TEXT NOT NULL, pid INTEGER NOT NULL,
            started_at INTEGER NOT NULL, beat_at INTEGER NOT NULL)
        """,
    )


@migration
def m014_source_counts_index(conn: sqlite3.Connection) -> None:
    """Listing sources counts each one's live chunks and claims and sums their hits: a
    covering index answers that without reading memory rows (the web Sources page and
    every source's detail took 0.3-0.4 s at 100k memories, bench/web.py)."""
    conn.execute("CREATE INDEX memories_source_live ON memories (source_id, deleted_at, kind, hits)")


@migration
def m015_facet_indexes(conn: sqlite3.Connection) -> None:
    """Covering indexes for the web's Browse facets and Agents page (bench/web.py: 1 s
    and 3 s at 100k memories): live memories by cluster, kind, origin, writer and flags,
    and a memory's cluster by its id (the join from its readers)."""
    _run_script(
        conn,
        """
        CREATE INDEX memories_facets ON memories (deleted_at, writer, cluster_id, kind, origin, pinned, archived);
        CREATE INDEX memories_id_cluster ON memories (id, deleted_at, cluster_id)
        """,
    )


@migration
def m010_machines(conn: sqlite3.Connection) -> None:
    """Row-level attribution for shared stores (issue 20): the machine that wrote each
    memory and each logged operation (``$LEDGER_MACHINE`` or the host name), and the
    machine an agent was last seen on. Rows written before have NULL (unknown)."""
    _run_script(
        conn,
        """
        ALTER TABLE memories ADD COLUMN machine TEXT;
        ALTER TABLE events ADD COLUMN machine TEXT;
        ALTER TABLE agents ADD COLUMN machine TEXT;
        CREATE INDEX events_machine ON events (machine, agent, at)
        """,
    )


@migration
def m016_hidden_index(conn: sqlite3.Connection) -> None:
    """The memories a search without filters hides (dropped, pending or archived), as a
    partial index: a search counts its matches and subtracts the hidden ones among them,
    instead of reading a memory row per match (``SearchMixin._count_visible``; at 100k
    memories a common word matches tens of thousands). Usually empty or small."""
    conn.execute("CREATE INDEX memories_hidden ON memories (seq) WHERE deleted_at IS NOT NULL OR archived <> 0")


#: What m017's triggers keep: per agent and cluster, the live memories the agent wrote
#: and the live memories it reads; per pair of agents (a < b, bytewise), the live
#: memories both read. Read by ``StatsMixin.agents_activity`` and ``Store.clusters``.
_SUMMARY_TABLES = """
    CREATE TABLE agent_summary (
        agent_id TEXT NOT NULL, cluster_id TEXT NOT NULL,
        wrote INTEGER NOT NULL DEFAULT 0, reads INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (agent_id, cluster_id)) WITHOUT ROWID;
    CREATE TABLE agent_overlap (
        a TEXT NOT NULL, b TEXT NOT NULL, shared INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (a, b)) WITHOUT ROWID
"""

# What inserts add (a new live memory, a new reader of a live memory) is counted by the
# code that inserts (``ops.count_new_memory``, ``ops.add_reader``): on SQLite any INSERT
# trigger on memories or memory_readers, even one that never fires, made every insert of
# an ingest about 1.7x as costly. What updates and deletes take away or move is kept by
# triggers, whatever code runs them (those statements are few and carry no trigger cost
# otherwise: UPDATE OF triggers are compiled only into statements that set their columns).
# "Live" is deleted_at IS NULL (a chunk of an unfinished ingest has deleted_at = 0 and
# counts when its ingest's switch sets it to NULL). A memory's readers are deleted only
# with the memory (ON DELETE CASCADE, which runs after the memory row is gone: the reader
# trigger then finds no live memory), so the memory's BEFORE DELETE trigger takes its
# share out first.
# What a live memory leaving the summary takes out: its write, its readers' reads, and the
# pairs of its readers (dropped or deleted alike).
_SQLITE_TAKE_OUT_OLD = """         UPDATE agent_summary SET wrote = wrote - 1 WHERE agent_id = OLD.writer AND cluster_id = OLD.cluster_id;
         UPDATE agent_summary SET reads = reads - 1
           WHERE cluster_id = OLD.cluster_id AND agent_id IN (SELECT agent_id FROM memory_readers WHERE memory_id = OLD.id);
         UPDATE agent_overlap SET shared = shared - 1
           WHERE (a, b) IN (SELECT r1.agent_id, r2.agent_id FROM memory_readers r1
                            JOIN memory_readers r2 ON r2.memory_id = r1.memory_id AND r2.agent_id > r1.agent_id
                            WHERE r1.memory_id = OLD.id);
"""
_SQLITE_TRIGGERS = (
    """CREATE TRIGGER summary_reader_removed AFTER DELETE ON memory_readers
       WHEN EXISTS (SELECT 1 FROM memories WHERE id = OLD.memory_id AND deleted_at IS NULL)
       BEGIN
         UPDATE agent_summary SET reads = reads - 1
           WHERE agent_id = OLD.agent_id AND cluster_id = (SELECT cluster_id FROM memories WHERE id = OLD.memory_id);
         UPDATE agent_overlap SET shared = shared - 1
           WHERE (a, b) IN (SELECT min(agent_id, OLD.agent_id), max(agent_id, OLD.agent_id) FROM memory_readers
                            WHERE memory_id = OLD.memory_id AND agent_id <> OLD.agent_id);
       END""",
    """CREATE TRIGGER summary_memory_live AFTER UPDATE OF deleted_at ON memories
       WHEN OLD.deleted_at IS NOT NULL AND NEW.deleted_at IS NULL
       BEGIN
         INSERT INTO agent_summary (agent_id, cluster_id, wrote) VALUES (NEW.writer, NEW.cluster_id, 1)
           ON CONFLICT (agent_id, cluster_id) DO UPDATE SET wrote = wrote + 1;
         INSERT INTO agent_summary (agent_id, cluster_id, reads)
           SELECT agent_id, NEW.cluster_id, 1 FROM memory_readers WHERE memory_id = NEW.id
           ON CONFLICT (agent_id, cluster_id) DO UPDATE SET reads = reads + 1;
         INSERT INTO agent_overlap (a, b, shared)
           SELECT r1.agent_id, r2.agent_id, 1 FROM memory_readers r1
           JOIN memory_readers r2 ON r2.memory_id = r1.memory_id AND r2.agent_id > r1.agent_id
           WHERE r1.memory_id = NEW.id
           ON CONFLICT (a, b) DO UPDATE SET shared = shared + 1;
       END""",
    """CREATE TRIGGER summary_memory_dropped AFTER UPDATE OF deleted_at ON memories
       WHEN OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL
       BEGIN
""" + _SQLITE_TAKE_OUT_OLD + """       END""",
    """CREATE TRIGGER summary_memory_moved AFTER UPDATE OF cluster_id, writer ON memories
       WHEN OLD.deleted_at IS NULL AND NEW.deleted_at IS NULL
            AND (OLD.cluster_id <> NEW.cluster_id OR OLD.writer <> NEW.writer)
       BEGIN
         UPDATE agent_summary SET wrote = wrote - 1 WHERE agent_id = OLD.writer AND cluster_id = OLD.cluster_id;
         INSERT INTO agent_summary (agent_id, cluster_id, wrote) VALUES (NEW.writer, NEW.cluster_id, 1)
           ON CONFLICT (agent_id, cluster_id) DO UPDATE SET wrote = wrote + 1;
         UPDATE agent_summary SET reads = reads - 1
           WHERE cluster_id = OLD.cluster_id AND agent_id IN (SELECT agent_id FROM memory_readers WHERE memory_id = OLD.id);
         INSERT INTO agent_summary (agent_id, cluster_id, reads)
           SELECT agent_id, NEW.cluster_id, 1 FROM memory_readers WHERE memory_id = NEW.id
           ON CONFLICT (agent_id, cluster_id) DO UPDATE SET reads = reads + 1;
       END""",
    """CREATE TRIGGER summary_memory_deleted BEFORE DELETE ON memories WHEN OLD.deleted_at IS NULL
       BEGIN
""" + _SQLITE_TAKE_OUT_OLD + """       END""",
)

# PostgreSQL: the same rules in PL/pgSQL. Agent ids compare bytewise (COLLATE "C"), as
# in SQLite. Each statement of a trigger function reads the rows committed when it
# starts (READ COMMITTED), and an UPDATE of a memory holds its row lock, which
# ops.add_reader also takes (it updates reader_count) before counting a reader: a
# reader added while another transaction drops the memory is counted by exactly one of
# the two, even outside the store's advisory lock. The reader trigger (deletes only)
# locks the memory row for the same reason.
_PG_FUNCTIONS = (
    """CREATE FUNCTION ledger_summary_add(m_id TEXT, m_writer TEXT, m_cluster TEXT, sign INTEGER) RETURNS void
       LANGUAGE plpgsql AS $$
       BEGIN
         INSERT INTO agent_summary AS t (agent_id, cluster_id, wrote) VALUES (m_writer, m_cluster, sign)
           ON CONFLICT (agent_id, cluster_id) DO UPDATE SET wrote = t.wrote + sign;
         INSERT INTO agent_summary AS t (agent_id, cluster_id, reads)
           SELECT agent_id, m_cluster, sign FROM memory_readers WHERE memory_id = m_id
           ON CONFLICT (agent_id, cluster_id) DO UPDATE SET reads = t.reads + sign;
         INSERT INTO agent_overlap AS t (a, b, shared)
           SELECT r1.agent_id, r2.agent_id, sign FROM memory_readers r1
           JOIN memory_readers r2 ON r2.memory_id = r1.memory_id AND r2.agent_id COLLATE "C" > r1.agent_id COLLATE "C"
           WHERE r1.memory_id = m_id
           ON CONFLICT (a, b) DO UPDATE SET shared = t.shared + sign;
       END $$""",
    """CREATE FUNCTION ledger_summary_memory() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF TG_OP = 'DELETE' THEN
           IF OLD.deleted_at IS NULL THEN
             PERFORM ledger_summary_add(OLD.id, OLD.writer, OLD.cluster_id, -1);
           END IF;
           RETURN OLD;
         END IF;
         IF OLD.deleted_at IS NULL AND (NEW.deleted_at IS NOT NULL OR OLD.cluster_id <> NEW.cluster_id
                                         OR OLD.writer <> NEW.writer) THEN
           IF NEW.deleted_at IS NULL THEN  -- moved: pairs stay, counts move
             UPDATE agent_summary SET wrote = wrote - 1 WHERE agent_id = OLD.writer AND cluster_id = OLD.cluster_id;
             INSERT INTO agent_summary AS t (agent_id, cluster_id, wrote) VALUES (NEW.writer, NEW.cluster_id, 1)
               ON CONFLICT (agent_id, cluster_id) DO UPDATE SET wrote = t.wrote + 1;
             UPDATE agent_summary SET reads = reads - 1
               WHERE cluster_id = OLD.cluster_id AND agent_id IN (SELECT agent_id FROM memory_readers WHERE memory_id = OLD.id);
             INSERT INTO agent_summary AS t (agent_id, cluster_id, reads)
               SELECT agent_id, NEW.cluster_id, 1 FROM memory_readers WHERE memory_id = NEW.id
               ON CONFLICT (agent_id, cluster_id) DO UPDATE SET reads = t.reads + 1;
           ELSE
             PERFORM ledger_summary_add(OLD.id, OLD.writer, OLD.cluster_id, -1);
           END IF;
         ELSIF OLD.deleted_at IS NOT NULL AND NEW.deleted_at IS NULL THEN
           PERFORM ledger_summary_add(NEW.id, NEW.writer, NEW.cluster_id, 1);
         END IF;
         RETURN NULL;
       END $$""",
    """CREATE FUNCTION ledger_summary_reader_removed() RETURNS trigger LANGUAGE plpgsql AS $$
       DECLARE
         cl TEXT;
       BEGIN
         SELECT cluster_id INTO cl FROM memories WHERE id = OLD.memory_id AND deleted_at IS NULL FOR UPDATE;
         IF NOT FOUND THEN RETURN NULL; END IF;  -- not live, or gone (ON DELETE CASCADE)
         UPDATE agent_summary SET reads = reads - 1 WHERE agent_id = OLD.agent_id AND cluster_id = cl;
         UPDATE agent_overlap SET shared = shared - 1
           WHERE (a, b) IN (SELECT CASE WHEN agent_id COLLATE "C" < OLD.agent_id COLLATE "C" THEN agent_id ELSE OLD.agent_id END,
                                   CASE WHEN agent_id COLLATE "C" < OLD.agent_id COLLATE "C" THEN OLD.agent_id ELSE agent_id END
                            FROM memory_readers WHERE memory_id = OLD.memory_id AND agent_id <> OLD.agent_id);
         RETURN NULL;
       END $$""",
    """CREATE TRIGGER summary_memory AFTER UPDATE OF deleted_at, cluster_id, writer ON memories
       FOR EACH ROW EXECUTE FUNCTION ledger_summary_memory()""",
    """CREATE TRIGGER summary_memory_deleted BEFORE DELETE ON memories
       FOR EACH ROW EXECUTE FUNCTION ledger_summary_memory()""",
    """CREATE TRIGGER summary_reader_removed AFTER DELETE ON memory_readers
       FOR EACH ROW EXECUTE FUNCTION ledger_summary_reader_removed()""",
)


def fill_agent_summary(conn) -> None:
    """Recompute ``agent_summary`` and ``agent_overlap`` from the memories and their
    readers (m017's backfill; tests compare the maintained tables with it)."""
    gt = 'r2.agent_id COLLATE "C" > r1.agent_id COLLATE "C"' if is_postgres(conn) else "r2.agent_id > r1.agent_id"
    conn.execute("DELETE FROM agent_summary")
    conn.execute("DELETE FROM agent_overlap")
    conn.execute(
        """INSERT INTO agent_summary (agent_id, cluster_id, wrote, reads)
           SELECT agent_id, cluster_id, sum(w), sum(r) FROM (
             SELECT writer AS agent_id, cluster_id, 1 AS w, 0 AS r FROM memories WHERE deleted_at IS NULL
             UNION ALL
             SELECT r.agent_id, m.cluster_id, 0, 1 FROM memory_readers r JOIN memories m ON m.id = r.memory_id
             WHERE m.deleted_at IS NULL) x
           GROUP BY agent_id, cluster_id""")
    conn.execute(
        f"""INSERT INTO agent_overlap (a, b, shared)
            SELECT r1.agent_id, r2.agent_id, count(*) FROM memory_readers r1
            JOIN memory_readers r2 ON r2.memory_id = r1.memory_id AND {gt}
            JOIN memories m ON m.id = r1.memory_id
            WHERE m.deleted_at IS NULL GROUP BY r1.agent_id, r2.agent_id""")


@migration
def m017_agent_summary(conn: sqlite3.Connection) -> None:
    """A per-agent summary kept on write (bench/web.py: the Agents page read all 106k
    reads twice per request at 100k memories, 0.2 s of CPU): per agent and cluster the
    live memories written and read, per pair of agents the live memories both read.
    New memories and readers are counted by the code that inserts them
    (``ops.count_new_memory``, ``ops.add_reader``); triggers take out and move what
    updates and deletes change (soft deletes and re-ingest switches, cluster moves,
    hard deletes of unfinished ingests), on both engines. Filled here from the rows
    already stored. Also indexes for the
    timeline's histogram of live memories by creation time and for a source's first
    chunks in order (the Sources page's previews sorted every chunk of each source)."""
    _run_script(conn, _SUMMARY_TABLES)
    fill_agent_summary(conn)
    if is_postgres(conn):
        for stmt in _PG_FUNCTIONS:
            conn.run(stmt)
    else:
        for stmt in _SQLITE_TRIGGERS:
            conn.execute(stmt)
    conn.execute("CREATE INDEX memories_live_created ON memories (deleted_at, created_at)")
    conn.execute("CREATE INDEX memories_source_order ON memories (source_id, deleted_at, kind, coalesce(chunk_index, 0), seq)")


@migration
def m018_events_by_memory(conn: sqlite3.Connection) -> None:
    """A memory's history (``ledger show``, ``Store.memory_events``) reads the operation
    log's rows about it by id; without an index that read scanned every event (one per
    search and hook step). Partial: most events name no memory."""
    conn.execute("CREATE INDEX events_memory ON events (memory_id, id) WHERE memory_id IS NOT NULL")


@migration
def m019_cjk_apart(conn: sqlite3.Connection) -> None:
    """Latin words, numbers and compounds written against Chinese, Japanese or Korean
    text are found (docs/search.md "Terms", issue 14): the word index is fed each CJK
    run set apart by spaces (:func:`ledger.terms.word_text`), compounds are taken from
    that text, and the ideographic marks ``々 〆 〇 〻`` and Hangul jamo count as CJK.
    Rows of ``memories_fts``/``memories_side`` and of ``memory_text_fts`` (texts kept for
    ``asof:``) whose indexed form is not the one this version writes are indexed again;
    that is exactly the rows whose text (or, for a chunk, neighbour context) has such a
    boundary or such a character. Only rows holding non-ASCII characters are read into
    Python (ASCII text indexes as before); the rest is a scan in SQL."""
    from .. import terms as T
    from . import textindex

    if is_postgres(conn):
        from . import textindex_pg

        words_of, side_of, key = textindex_pg.words_of, textindex_pg.side_text, "seq"
        wide = "octet_length({0}) <> char_length({0})"
    else:
        words_of, side_of, key = T.word_text, T.side_text, "rowid"
        wide = "length(CAST({0} AS BLOB)) <> length({0})"
    redo = []
    rows = conn.execute(
        f"""SELECT m.seq, m.text, f.text, f.context, coalesce(s.terms, '') FROM memories_fts f
            JOIN memories m ON m.seq = f.{key} LEFT JOIN memories_side s ON s.{key} = f.{key}
            WHERE {wide.format('f.text')} OR {wide.format('f.context')}""").fetchall()
    for seq, text, words, context, side in rows:
        # The stored context is already in the index's form; its new form is that form's.
        if words_of(text) != words or words_of(context) != context or side_of(text) != side:
            redo.append((seq, text))
    for seq, text in redo:
        ctx = textindex.unindex(conn, seq)
        textindex.index(conn, seq, text, ctx, stems=False)  # m020 fills vocab_fts afterwards
    old = conn.execute(
        f"""SELECT h.rowid, h.text, t.text, t.side FROM memory_text_history h JOIN memory_text_fts t
            ON t.{'hid' if key == 'seq' else 'rowid'} = h.rowid WHERE {wide.format('h.text')}""").fetchall()
    for hid, text, words, side in old:
        if words_of(text) != words or side_of(text) != side:
            conn.execute(f"DELETE FROM memory_text_fts WHERE {'hid' if key == 'seq' else 'rowid'} = ?", (hid,))
            textindex.index_old_text(conn, hid, text)


@migration
def m020_vocab_stems(conn: sqlite3.Connection) -> None:
    """Prefixes as people type them (docs/search.md "Prefixes"): ``vocab_fts`` holds every
    vocabulary word under the word index's own tokenizer (porter), rowid = ``vocab.id``,
    so the store can tell which words starting with a query word its FTS5 prefix phrase
    misses (``deploy*`` is ``deploi*`` after stemming and missed ``deployment``). Only
    rowids are needed: contentless, no positions. PostgreSQL's prefix search stems with
    its own dictionary and has no such table."""
    if is_postgres(conn):
        return
    conn.execute("CREATE VIRTUAL TABLE vocab_fts USING fts5 (term, content = '', tokenize = 'porter unicode61', detail = none)")
    conn.execute("INSERT INTO vocab_fts (rowid, term) SELECT id, term FROM vocab")


@migration
def m021_versions_apart(conn: sqlite3.Connection) -> None:
    """A version's number is found by itself (docs/search.md "Terms", issue 14): ``3.11``
    finds ``python3.11``, ``18`` finds ``node18``, ``2.4.1`` finds ``v2.4.1``. The word
    index is fed each word that is letters then digits with a space between the two
    (:func:`ledger.terms.split_versions`, part of :func:`ledger.terms.word_text`), and the
    vocabulary gets the letters as a word. Rows of ``memories_fts`` and of
    ``memory_text_fts`` (texts kept for ``asof:``) whose stored form is not the one this
    version writes are written again: only rows whose stored word text (or, for a chunk,
    neighbour context) has a letter directly before a digit are read into Python (a scan
    in SQL finds them), and of those only the ones whose form changes are written. The
    side index (compounds, CJK, symbols) does not change: only the word rows are."""
    from .. import terms as T
    from . import textindex

    pg = is_postgres(conn)
    if pg:
        from . import textindex_pg

        words_of, key, hkey = textindex_pg.words_of, "seq", "hid"
        glued = "{0} ~ '[[:alpha:]][0-9]'"
    else:
        words_of, key, hkey = T.word_text, "rowid", "rowid"
        # An ASCII letter, or any character outside printable ASCII (a letter of another
        # script; also a control character: read, compared, left alone), before a digit.
        glued = "({0} GLOB '*[A-Za-z][0-9]*' OR {0} GLOB '*[^ -~][0-9]*')"
    rows = conn.execute(
        f"""SELECT m.seq, m.text, f.text, f.context FROM memories_fts f JOIN memories m ON m.seq = f.{key}
            WHERE {glued.format('f.text')} OR {glued.format('f.context')}""").fetchall()
    vocab: set[str] = set()
    for seq, text, words, context in rows:
        # The stored context is already in the index's form; its new form is that form's.
        new, ctx = words_of(text), words_of(context)
        if new == words and ctx == context:
            continue
        if pg:
            conn.execute("UPDATE memories_fts SET text = ?, context = ? WHERE seq = ?", (new, ctx, seq))
        else:
            conn.execute("DELETE FROM memories_fts WHERE rowid = ?", (seq,))
            conn.execute("INSERT INTO memories_fts (rowid, text, context) VALUES (?, ?, ?)", (seq, new, ctx))
        vocab |= T.vocabulary_words(text)
    textindex.add_words(conn, sorted(vocab))  # known words cost a probe; the new ones are the letters split off
    old = conn.execute(
        f"""SELECT h.rowid, h.text, t.text FROM memory_text_history h JOIN memory_text_fts t ON t.{hkey} = h.rowid
            WHERE {glued.format('t.text')}""").fetchall()
    for hid, text, words in old:
        if words_of(text) != words:
            conn.execute(f"DELETE FROM memory_text_fts WHERE {hkey} = ?", (hid,))
            textindex.index_old_text(conn, hid, text)


@migration
def m022_injection_counted(conn: sqlite3.Connection) -> None:
    """Which facts an injection showed settled (docs/watcher.md "Settled and unsettled
    facts"): ``injections.counted_ids``, a JSON list. A session uses a fact once, the
    first time it is shown the fact settled; a fact first shown "may be stale" or
    "disputed" and settled by a later showing in the same session got no use at all,
    since "shown before" was read from ``memory_ids`` (every fact shown). NULL for rows
    written before: every fact they showed is taken as counted (no use is counted twice).
    Applied again after being rolled back or forgotten (tests/test_hook_migrations.py), it
    adds the column only when it is missing."""
    if is_postgres(conn):
        have = conn.execute(
            "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() "
            "AND table_name = 'injections' AND column_name = 'counted_ids'").fetchone()
    else:
        have = any(r[1] == "counted_ids" for r in conn.execute("PRAGMA table_info(injections)"))
    if not have:
        conn.execute("ALTER TABLE injections ADD COLUMN counted_ids TEXT")


@migration
def m023_injection_facts(conn: sqlite3.Connection) -> None:
    """Which facts each session was shown, one row per (session, fact), ``counted`` 1
    when one of its showings counted as a use (shown settled: ``injections.counted_ids``,
    or every fact shown for a row older than that column). An injection counts a fact
    as used only when its session has not had it counted before (``store/watch.py``
    ``record_injection``), and deciding that read and parsed every earlier injection of
    the session (their JSON lists) on each hook call, so a long session paid for its
    length at every injection. Now it is a primary-key lookup per fact. Filled from the
    injections already stored; running it again changes nothing."""
    conn.execute(
        """CREATE TABLE IF NOT EXISTS injection_facts (
               session TEXT NOT NULL, memory_id TEXT NOT NULL, counted INTEGER NOT NULL,
               PRIMARY KEY (session, memory_id)) WITHOUT ROWID""")
    # Only string ids of lists are read, as the Python reading did (none other is
    # written, but a hand-edited store could hold one; SQLite's json_each would fail
    # the whole migration on a malformed list). The counted rows go first: a fact
    # already there is not written again, so one counted once stays counted.
    for column, counted in (("COALESCE(i.counted_ids, i.memory_ids)", 1), ("i.memory_ids", 0)):
        if is_postgres(conn):
            pairs = f"""SELECT DISTINCT i.session, e.v #>> '{{}}', {counted} FROM injections i,
                          json_array_elements(({column})::json) AS e(v) WHERE json_typeof(e.v) = 'string'"""
        else:
            pairs = f"""SELECT DISTINCT i.session, e.value, {counted} FROM injections i, json_each({column}) AS e
                        WHERE json_valid({column}) AND {column} LIKE '[%' AND e.type = 'text'"""
        conn.execute(f"INSERT OR IGNORE INTO injection_facts (session, memory_id, counted) {pairs}")
