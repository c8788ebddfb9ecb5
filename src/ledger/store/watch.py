"""SQL for the watcher's hook path: sessions, observations, fact lookup by file key,
escalation counters, injections, leases and LLM accounting.

Imported by every ``ledger hook`` process, so it imports only the standard library and
the connection/migration modules (no dataclasses, no models): rows come back as tuples
or plain dicts.
"""

from __future__ import annotations

import json

from ..text import plural
from . import ops
from ._sqlite import sqlite3
from .connection import (  # noqa: F401 - set_lock_wait for the engine
    atomic,
    connect,
    connect_read_only,
    read_only_message,
    set_lock_wait,
    translate_module,
    unwritable,
)
from .migrations import migrate, require_current
from .rows import batches

LEASE_MS = 10 * 60 * 1000  # a distillation that has not finished in 10 min is presumed dead


def open_store(path: str, busy_timeout_ms: int | None = None) -> sqlite3.Connection:
    """Connect and migrate (cheap when up to date). Raises StoreUnavailable.

    ``busy_timeout_ms`` replaces the connection's default wait for a lock held by
    another process, from the first read of the file on: the hook passes a short one
    so a store locked by a long writer, or held exclusively by another program, costs
    the agent at most about that long (the hook then fails open).

    A store this process cannot write is opened read-only (:func:`.connection.unwritable`):
    reads work and each write raises StoreUnavailable (reason ``read-only``)."""
    return open_store_why(path, busy_timeout_ms)[0]


def open_store_why(path: str, busy_timeout_ms: int | None = None, *,
                   defer_migrations_above: int | None = None) -> tuple[sqlite3.Connection, str | None]:
    """:func:`open_store`, plus, when the store was opened read-only, what a write to it
    is told (:func:`.connection.read_only_message`: read-only, why, what to do; None
    when it can be written): ``(connection, message)``. The hook reads what it can from
    a read-only store and writes nothing to it (docs/watcher.md, "Read-only store").
    ``defer_migrations_above``: see :func:`.migrations.migrate` (``defer_above``).
    Raises StoreUnavailable."""
    why = unwritable(path)
    if why is not None:
        conn = connect_read_only(path, why, busy_timeout_ms=busy_timeout_ms)
        require_current(conn, path, why)
        return conn, read_only_message(path, why)
    conn = connect(path, busy_timeout_ms=busy_timeout_ms)
    try:
        migrate(conn, defer_above=defer_migrations_above)
    except BaseException:
        conn.close()
        raise
    return conn, None


def touch_session(conn: sqlite3.Connection, key: str, *, harness: str, session_id: str, project: str, cwd: str,
                  agent: str, transcript_path: str | None, now: int) -> dict:
    """Create or refresh a session row; returns it as a dict."""
    with atomic(conn):
        conn.execute(
            """INSERT INTO watch_sessions (key, harness, session_id, project, cwd, agent, transcript_path, started_at, last_seen)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
               ON CONFLICT (key) DO UPDATE SET last_seen = excluded.last_seen, cwd = excluded.cwd,
                 transcript_path = coalesce(excluded.transcript_path, watch_sessions.transcript_path)""",
            (key, harness, session_id, project, cwd, agent, transcript_path, now, now),
        )
    return session(conn, key)


def session(conn: sqlite3.Connection, key: str) -> dict:
    r = conn.execute("SELECT * FROM watch_sessions WHERE key = ?", (key,)).fetchone()
    return dict(r) if r else {}


def add_observation(conn: sqlite3.Connection, key: str, *, tool: str, input: dict, output: str, ok: bool | None,
                    duration_ms: float | None, tool_use_id: str | None, files: list[str], now: int) -> int:
    """Record one tool call as the session's next step; returns the new step number.

    A call whose ``tool_use_id`` is already stored for the session (the harness delivered
    it twice, or a spooled copy is drained after the original arrived) is not stored
    again: its existing step is returned."""
    with atomic(conn):
        if tool_use_id:
            row = conn.execute("SELECT step FROM observations WHERE session = ? AND tool_use_id = ?", (key, tool_use_id)).fetchone()
            if row is not None:
                return row[0]
        conn.execute("UPDATE watch_sessions SET steps = steps + 1, last_seen = ? WHERE key = ?", (now, key))
        step = conn.execute("SELECT steps FROM watch_sessions WHERE key = ?", (key,)).fetchone()[0]
        cur = conn.execute(
            "INSERT INTO observations (session, step, at, tool, input, output, ok, duration_ms, tool_use_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (key, step, now, tool, json.dumps(input, ensure_ascii=False, default=str), output,
             None if ok is None else int(ok), duration_ms, tool_use_id),
        )
        conn.executemany("INSERT OR IGNORE INTO observation_files (observation_id, path) VALUES (?, ?)", [(cur.lastrowid, p) for p in files])
    return step


def observation_of(conn: sqlite3.Connection, key: str, tool_use_id: str) -> tuple[str, int] | None:
    """``(tool, at)`` of session ``key``'s stored observation of tool call
    ``tool_use_id``, or None when there is none."""
    row = conn.execute("SELECT tool, at FROM observations WHERE session = ? AND tool_use_id = ?", (key, tool_use_id)).fetchone()
    return (row[0], row[1]) if row is not None else None


def observations(conn: sqlite3.Connection, key: str, after_step: int = 0, limit: int = 1000) -> list[dict]:
    rows = conn.execute(
        "SELECT * FROM observations WHERE session = ? AND step > ? ORDER BY step LIMIT ?", (key, after_step, limit)
    ).fetchall()
    out = []
    for r in rows:
        d = dict(r)
        d["files"] = [p for (p,) in conn.execute("SELECT path FROM observation_files WHERE observation_id = ?", (r["id"],))]
        out.append(d)
    return out


def files_changed(conn: sqlite3.Connection, key: str) -> list[str]:
    """Files the session's edit tools touched (Edit, Write, MultiEdit, NotebookEdit), in
    first-touched order: facts from observations, not guesses."""
    return [p for (p,) in conn.execute(
        """SELECT f.path FROM observations o JOIN observation_files f ON f.observation_id = o.id
           WHERE o.session = ? AND o.tool IN ('Edit', 'Write', 'MultiEdit', 'NotebookEdit', 'edit', 'write', 'patch')
           GROUP BY f.path ORDER BY min(o.step)""",
        (key,),
    )]


def facts_for_files(conn: sqlite3.Connection, paths: list[str], limit: int = 50) -> list[dict]:
    """Live claims keyed to any of ``paths`` (exact match), pinned ones first, then newest
    first (the ``limit`` kept are those), with the file state recorded when each was
    written. One dict per (memory, path)."""
    if not paths:
        return []
    marks = ",".join("?" * len(paths))
    rows = conn.execute(
        f"""SELECT m.id, m.seq, m.text, m.topic, m.pinned, m.hits, m.last_read_at, m.reader_count, m.source_count,
                   f.path, f.size, f.mtime_ms, f.sha256
            FROM memory_files f JOIN memories m ON m.id = f.memory_id
            WHERE f.path IN ({marks}) AND m.deleted_at IS NULL AND m.archived = 0 AND m.kind = 'claim'
            ORDER BY m.pinned DESC, m.seq DESC LIMIT ?""",
        (*paths, limit),
    ).fetchall()
    return [dict(r) for r in rows]


def escalation_step(conn: sqlite3.Connection, key: str, path: str, facts_seen: int, step: int,
                    counted: bool = True, reshow: bool = False) -> tuple[int, int | None]:
    """Count one more injection opportunity for ``path`` in session ``key``; returns
    ``(injections, first_step)`` after counting. Counters reset when facts newer than
    the last counted ones exist for the path (``facts_seen`` is their highest seq).
    Calls within one ``step`` count once: parallel tool calls of one model step are one
    showing, not several; a repeat within the step returns ``(0, first_step)`` (nothing
    new to show).

    ``counted=False`` is a showing that must not bring escalation nearer: a call that
    acts on the file (an edit) rather than re-investigating it, or one whose facts are
    all unsettled (may be stale, disputed). It returns ``(1, step)`` when these facts
    were never shown in the session (show them gently once), else ``(0, first_step)``
    (nothing to show), and leaves the count where it was (a first showing is stored as
    0 counted injections, so the next counted one is still the gentle first).
    ``reshow`` (with ``counted=False``: the path's facts have all become unsettled)
    also shows them once more when they were last shown settled (counted injections
    above 0), so the agent hears that what it was told may no longer hold; the count
    goes back to 0."""
    row = conn.execute(
        "SELECT injections, first_step, facts_seen, last_step FROM watch_escalation WHERE session = ? AND path = ?", (key, path)
    ).fetchone()
    if row is not None and facts_seen <= row[2] and row[3] == step:
        return 0, row[1] if row[1] is not None else step
    newer = row is None or facts_seen > row[2]
    if not counted:
        if newer or (reshow and row[0] > 0):
            conn.execute(
                "INSERT OR REPLACE INTO watch_escalation (session, path, injections, first_step, facts_seen, last_step) VALUES (?, ?, 0, NULL, ?, ?)",
                (key, path, max(facts_seen, row[2] if row else 0), step),
            )
            return 1, step
        conn.execute("UPDATE watch_escalation SET last_step = ? WHERE session = ? AND path = ?", (step, key, path))
        return 0, row[1] if row[1] is not None else step
    if newer:
        injections, first = 1, step
    else:
        injections, first = row[0] + 1, row[1] if row[1] is not None else step
    conn.execute(
        "INSERT OR REPLACE INTO watch_escalation (session, path, injections, first_step, facts_seen, last_step) VALUES (?, ?, ?, ?, ?, ?)",
        (key, path, injections, first, max(facts_seen, row[2] if row else 0), step),
    )
    return injections, first


def times_shown(conn: sqlite3.Connection, key: str, path: str, since_step: int) -> int:
    """How many injections in session ``key`` showed facts for ``path`` from
    ``since_step`` on: real showings, not the quiet calls :func:`escalation_step` also
    counts (what the escalation message reports)."""
    # ``paths`` is a JSON list; each engine has its own function to unnest one.
    each = ("json_array_elements_text(i.paths::json) AS e(value)" if getattr(conn, "is_postgres", False)
            else "json_each(i.paths) AS e")
    return conn.execute(
        f"""SELECT count(*) FROM injections i WHERE i.session = ? AND i.step >= ?
           AND EXISTS (SELECT 1 FROM {each} WHERE e.value = ?)""",
        (key, since_step, path),
    ).fetchone()[0]


def reset_escalation(conn: sqlite3.Connection, key: str) -> int:
    """New findings in a session: the agent is learning, not stuck. Returns rows reset."""
    return conn.execute("DELETE FROM watch_escalation WHERE session = ?", (key,)).rowcount


def record_injection(conn: sqlite3.Connection, key: str, step: int, level: str, memory_ids: list[str], paths: list[str],
                     chars: int, agent: str, now: int, counted_ids: list[str] | None = None) -> None:
    """Log an injection and count it as a use (:func:`ops.count_read` with
    ``reader=False``: hits and last read, no reader) of each fact in ``counted_ids``
    (default: all shown) that session ``key`` was not shown settled before: a session
    uses a fact once, however often a stuck agent is shown it again (docs/store.md
    "Strength"). The watcher leaves out facts shown marked "may be stale" or "disputed":
    being shown does not make a possibly outdated fact stronger; such a fact settled and
    shown again later in the session is counted then (``injections.counted_ids`` says
    which facts each injection showed settled)."""
    eligible = memory_ids if counted_ids is None else counted_ids
    counted = eligible
    if counted:
        before = counted_in_session(conn, key, counted)
        counted = [i for i in counted if i not in before]
    conn.execute(
        "INSERT INTO injections (session, step, at, level, memory_ids, paths, chars, counted_ids) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (key, step, now, level, json.dumps(memory_ids), json.dumps(paths), chars, json.dumps(list(eligible))),
    )
    note_shown(conn, key, memory_ids, eligible)
    if counted:
        ops.count_read(conn, counted, agent, now, reader=False)
    else:
        ops.touch_agent(conn, agent, now)
    ops.log_event(conn, now, agent, "watcher.inject", memory_ids[0] if memory_ids else None,
                  f"{level} · {plural(len(memory_ids), 'fact')} · {', '.join(paths)[:200]}")


def shown_in_session(conn: sqlite3.Connection, key: str, ids: list[str]) -> set[str]:
    """Those of ``ids`` that an earlier injection showed session ``key`` (table
    ``injection_facts``: one primary-key lookup per id, the cost does not grow with the
    session's length)."""
    return _in_session(conn, key, ids, "")


def counted_in_session(conn: sqlite3.Connection, key: str, ids: list[str]) -> set[str]:
    """Those of ``ids`` that an earlier injection showed session ``key`` settled, so
    counted as a use (for an injection written before ``counted_ids`` existed: every
    fact it showed). One primary-key lookup per id, as :func:`shown_in_session`."""
    return _in_session(conn, key, ids, " AND counted = 1")


def _in_session(conn: sqlite3.Connection, key: str, ids: list[str], where: str) -> set[str]:
    out: set[str] = set()
    for part in batches(list(dict.fromkeys(ids)), 500):  # bounded statements (SQLite's variable limit)
        marks = ",".join("?" * len(part))
        out.update(r[0] for r in conn.execute(
            f"SELECT memory_id FROM injection_facts WHERE session = ? AND memory_id IN ({marks}){where}", (key, *part)))
    return out


def note_shown(conn: sqlite3.Connection, key: str, ids: list[str], counted: list[str] | None = None) -> None:
    """Record that session ``key`` was shown the facts ``ids``, those in ``counted``
    (default: all of them) settled, so counted as a use: what :func:`shown_in_session`
    and :func:`counted_in_session` read. A fact once counted stays counted. Every
    writer of an ``injections`` row calls it: :func:`record_injection` and the import of
    a history line."""
    shown = [i for i in dict.fromkeys(ids) if isinstance(i, str)]
    settled = set(shown if counted is None else (i for i in counted if isinstance(i, str)))
    conn.executemany("UPDATE injection_facts SET counted = 1 WHERE session = ? AND memory_id = ? AND counted = 0",
                     [(key, i) for i in shown if i in settled])
    conn.executemany("INSERT OR IGNORE INTO injection_facts (session, memory_id, counted) VALUES (?, ?, ?)",
                     [(key, i, int(i in settled)) for i in shown])


def try_lease(conn: sqlite3.Connection, key: str, owner: str, now: int, lease_ms: int = LEASE_MS) -> bool:
    """Take the session's distillation lease if free or expired. Atomic across processes."""
    with atomic(conn):
        cur = conn.execute(
            "UPDATE watch_sessions SET lease_until = ?, lease_owner = ? WHERE key = ? AND lease_until < ?",
            (now + lease_ms, owner, key, now),
        )
        return cur.rowcount == 1


def release_lease(conn: sqlite3.Connection, key: str, owner: str, distilled_step: int | None = None) -> None:
    with atomic(conn):
        if distilled_step is not None:
            conn.execute("UPDATE watch_sessions SET distilled_step = max(distilled_step, ?) WHERE key = ? AND lease_owner = ?",
                         (distilled_step, key, owner))
        conn.execute("UPDATE watch_sessions SET lease_until = 0, lease_owner = NULL WHERE key = ? AND lease_owner = ?", (key, owner))


def record_llm_call(conn: sqlite3.Connection, *, session: str | None, backend: str, model: str | None, prompt_tokens: int,
                    completion_tokens: int, ms: float, ok: bool, error: str | None, now: int) -> None:
    with atomic(conn):
        conn.execute(
            "INSERT INTO llm_calls (at, session, backend, model, prompt_tokens, completion_tokens, ms, ok, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (now, session, backend, model, prompt_tokens, completion_tokens, ms, int(ok), error),
        )


def tokens_today(conn: sqlite3.Connection, now: int) -> int:
    """LLM tokens (prompt + completion) spent since local midnight of ``now``."""
    from ..clock import local_midnight_ms

    return tokens_since(conn, local_midnight_ms(now))


def tokens_since(conn: sqlite3.Connection, since_ms: int) -> int:
    return conn.execute("SELECT coalesce(sum(prompt_tokens + completion_tokens), 0) FROM llm_calls WHERE at >= ?", (since_ms,)).fetchone()[0]


def llm_usage(conn: sqlite3.Connection, since_ms: int) -> dict:
    r = conn.execute(
        "SELECT count(*), coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0), coalesce(sum(1 - ok), 0) FROM llm_calls WHERE at >= ?",
        (since_ms,),
    ).fetchone()
    return {"calls": r[0], "promptTokens": r[1], "completionTokens": r[2], "failed": r[3]}


def watcher_counts(conn: sqlite3.Connection) -> dict:
    return {
        "sessions": conn.execute("SELECT count(*) FROM watch_sessions").fetchone()[0],
        "observations": conn.execute("SELECT count(*) FROM observations").fetchone()[0],
        "injections": conn.execute("SELECT count(*) FROM injections").fetchone()[0],
        "checkpoints": conn.execute("SELECT count(*) FROM checkpoints").fetchone()[0],
    }


def add_checkpoint(conn: sqlite3.Connection, *, session: str | None, project: str, event: str, branch: str | None,
                   content: str, now: int) -> int:
    with atomic(conn):
        return conn.execute(
            "INSERT INTO checkpoints (session, project, at, event, branch, content) VALUES (?, ?, ?, ?, ?, ?)",
            (session, project, now, event, branch, content),
        ).lastrowid


def checkpoints(conn: sqlite3.Connection, *, session: str | None = None, project: str | None = None, limit: int = 20) -> list[dict]:
    where, params = [], []
    if session:
        where.append("(session = ? OR session LIKE ?)")
        params += [session, f"%:{session}"]
    if project:
        where.append("project = ?")
        params.append(project)
    sql = "SELECT * FROM checkpoints" + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY at DESC, id DESC LIMIT ?"
    return [dict(r) for r in conn.execute(sql, (*params, limit))]


def checkpoint_count(conn: sqlite3.Connection) -> int:
    """How many checkpoints the store holds (what an empty filtered listing compares to)."""
    return conn.execute("SELECT count(*) FROM checkpoints").fetchone()[0]


def strongest_facts(conn: sqlite3.Connection, project: str, now: int, limit: int = 12) -> list[dict]:
    """Live claims keyed to files under ``project`` or written in one of its sessions'
    provenance, strongest (by hits, pins, recency) first. Plain dicts; no strength math
    here: the caller ranks."""
    rows = conn.execute(
        """SELECT DISTINCT m.id, m.seq, m.text, m.topic, m.pinned, m.hits, m.last_read_at, m.reader_count, m.source_count
           FROM memories m JOIN memory_files f ON f.memory_id = m.id
           WHERE m.deleted_at IS NULL AND m.archived = 0 AND m.kind = 'claim' AND (f.path = ? OR f.path LIKE ? ESCAPE '\\')
           ORDER BY m.pinned DESC, m.last_read_at DESC LIMIT ?""",
        (project, _like_prefix(project) + "%", limit * 4),
    ).fetchall()
    return [dict(r) for r in rows]


def fact_files(conn: sqlite3.Connection, ids: list[str]) -> dict[str, list[dict]]:
    """The file keys of the memories ``ids`` with the file state recorded when each was
    written: ``{memory id: [{path, size, mtime_ms, sha256}, ...]}`` (ids without file
    keys are absent)."""
    out: dict[str, list[dict]] = {}
    if not ids:
        return out
    marks = ",".join("?" * len(ids))
    for r in conn.execute(
        f"SELECT memory_id, path, size, mtime_ms, sha256 FROM memory_files WHERE memory_id IN ({marks}) ORDER BY memory_id, path",
        list(ids),
    ):
        out.setdefault(r[0], []).append({"path": r[1], "size": r[2], "mtime_ms": r[3], "sha256": r[4]})
    return out


def disputes(conn: sqlite3.Connection, ids: list[str]) -> dict[str, dict]:
    """The disagreements not settled yet that involve the memories ``ids``: open
    conflicts (``cf_...``, judged contradictions awaiting a resolution) and unjudged
    conflict candidates (``cc_...``, proposed by the contradiction proposer).
    ``{memory id: {"ref": cf_/cc_ id, "status": "open" | "unjudged",
    "other": other memory id, "other_text": its text, "count": how many such
    disagreements it is in}}``: one per memory (an open conflict before a candidate,
    then the lowest id), ids with none absent.

    Two small queries whatever the number of candidates (a hook runs this on every
    showing): counts and first ids per memory, then the chosen pairs' texts."""
    out: dict[str, dict] = {}
    if not ids:
        return out
    marks = ",".join("?" * len(ids))
    # One branch per side, each driven by the ids through that side's index. Written as
    # a CASE, the status tests cannot serve as an index: the planner would otherwise walk
    # every unjudged candidate (tens of thousands in a busy store) or open conflict.
    union = f"""
        SELECT c.a AS mine, c.id AS ref, 0 AS rank FROM conflicts c
          WHERE c.a IN ({marks}) AND CASE WHEN c.status = 'open' THEN 1 ELSE 0 END = 1
        UNION ALL
        SELECT c.b, c.id, 0 FROM conflicts c
          WHERE c.b IN ({marks}) AND CASE WHEN c.status = 'open' THEN 1 ELSE 0 END = 1
        UNION ALL
        SELECT cc.a, cc.id, 1 FROM conflict_candidates cc WHERE cc.a IN ({marks}) AND cc.judged_at IS NULL
        UNION ALL
        SELECT cc.b, cc.id, 1 FROM conflict_candidates cc
          WHERE cc.b IN ({marks}) AND CASE WHEN cc.judged_at IS NULL THEN 1 ELSE 0 END = 1"""
    groups = conn.execute(
        f"SELECT d.mine, d.rank, count(*), min(d.ref) FROM ({union}) d GROUP BY d.mine, d.rank ORDER BY d.mine, d.rank",
        (*ids, *ids, *ids, *ids),
    ).fetchall()
    chosen: dict[str, tuple[str, int]] = {}
    total: dict[str, int] = {}
    for mine, rank, n, ref in groups:
        total[mine] = total.get(mine, 0) + n
        chosen.setdefault(mine, (ref, rank))
    if not chosen:
        return out
    refs = sorted({ref for ref, _ in chosen.values()})
    rmarks = ",".join("?" * len(refs))
    sides = {r[0]: (r[1], r[2]) for r in conn.execute(
        f"SELECT id, a, b FROM conflicts WHERE id IN ({rmarks}) UNION ALL "
        f"SELECT id, a, b FROM conflict_candidates WHERE id IN ({rmarks})", (*refs, *refs))}
    other_of = {mine: (sides[ref][1] if sides[ref][0] == mine else sides[ref][0])
                for mine, (ref, _) in chosen.items() if ref in sides}
    others = sorted(set(other_of.values()))
    texts = {}
    if others:
        omarks = ",".join("?" * len(others))
        # Dropping a memory settles its candidates; a pair whose chosen other side was
        # dropped anyway (an open conflict) gives no mark.
        texts = {r[0]: r[1] for r in conn.execute(
            f"SELECT id, text FROM memories WHERE id IN ({omarks}) AND deleted_at IS NULL", others)}
    for mine, (ref, rank) in chosen.items():
        if other_of.get(mine) in texts:
            other = other_of[mine]
            out[mine] = {"ref": ref, "status": "open" if rank == 0 else "unjudged", "other": other,
                         "other_text": texts.get(other, ""), "count": total[mine]}
    return out


def _like_prefix(path: str) -> str:
    p = path.rstrip("/") + "/"
    return p.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


# No sqlite3 error leaves the store: each operation raises StoreUnavailable instead.
translate_module(globals(), ('open_store', 'open_store_why', 'touch_session', 'session', 'add_observation', 'observations', 'files_changed', 'facts_for_files', 'escalation_step', 'times_shown', 'reset_escalation', 'record_injection', 'shown_in_session', 'counted_in_session', 'note_shown', 'try_lease', 'release_lease', 'record_llm_call', 'tokens_today', 'tokens_since', 'llm_usage', 'watcher_counts', 'add_checkpoint', 'checkpoints', 'strongest_facts', 'fact_files', 'disputes'), path_of=lambda args: None)


class Bound:
    """This module's operations bound to one connection, for code that holds a
    :class:`~ledger.store.Store` rather than a raw connection (``store.watch.session(key)``
    is ``session(conn, key)``). The distiller and ``ledger replay`` use it, so nothing
    outside ``store/`` needs the connection itself."""

    __slots__ = ("_conn",)
    _OPS = ("touch_session", "session", "add_observation", "observations", "files_changed", "facts_for_files",
            "escalation_step", "reset_escalation", "record_injection", "try_lease", "release_lease", "record_llm_call",
            "tokens_since", "tokens_today", "llm_usage", "watcher_counts", "add_checkpoint", "checkpoints", "checkpoint_count",
            "strongest_facts", "fact_files", "disputes")

    def __init__(self, conn: sqlite3.Connection):
        self._conn = conn

    def __getattr__(self, name: str):
        if name not in Bound._OPS:
            raise AttributeError(f"store.watch has no operation {name!r}")
        fn = globals()[name]
        conn = self._conn
        return lambda *a, **kw: fn(conn, *a, **kw)

    def atomic(self):
        """A write transaction on the bound connection (see :func:`atomic`)."""
        return atomic(self._conn)
