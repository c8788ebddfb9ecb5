"""The store's history in ``ledger export`` / ``ledger import``: conflicts, the operation
log (events), checkpoints, and the watcher's sessions and observations.

``ledger export`` without a query writes, after the memory lines, one line per history
row with a ``"record"`` field naming its kind (memory lines have none)::

    {"record": "conflict", "id", "kind", "clusterId", "a", "b", "detector", "note", "status",
     "createdAt", "resolvedAt", "resolution", "resolvedBy"}
    {"record": "event", "at", "agent", "op", "memoryId", "detail", "ms"}
    {"record": "session", "key", "harness", "sessionId", "project", "cwd", "agent",
     "transcriptPath", "startedAt", "lastSeen", "steps", "distilledStep"}
    {"record": "observation", "session", "step", "at", "tool", "input", "output", "ok",
     "durationMs", "toolUseId", "files"}
    {"record": "checkpoint", "session", "project", "at", "event", "branch", "content"}
    {"record": "candidate", "id", "a", "b", "score", "signals", "createdAt", "judgedAt", "verdict", "judgedBy"}
    {"record": "formerText", "memoryId", "text", "replacedAt", "replacedBy"}
    {"record": "prompt", "session", "at", "text"}
    {"record": "sessionValue", "session", "name", "value" (JSON text), "at"}
    {"record": "sessionFile", "session", "path", "firstAt", "lastAt", "edits"}
    {"record": "injection", "session", "step", "at", "level", "memoryIds", "paths" (JSON text), "chars",
     "countedIds" (JSON text: the facts shown settled; null in exports before it existed)}
    {"record": "llmCall", "at", "session", "backend", "model", "promptTokens", "completionTokens", "ms", "ok",
     "error"}

A whole-store export also writes the dropped memories a conflict names (a resolution
retires one side), as memory lines with their ``deletedAt``, so every conflict keeps
its two sides. An export with a query carries only the conflicts between memories it
exports, and likewise its candidates and earlier texts (the log, sessions and
checkpoints belong to the whole store). Times are epoch ms. What is not carried, and
why, is in docs/cli.md "Export and import".

Import (:func:`import_history`) runs after the memories, so a conflict finds its two
sides (through ``renamed``: a memory merged into an equal claim here goes by that id).
Nothing is written twice: a conflict is known by its id, a session by its key, an
observation by its session and tool-use id (or step, time and tool), a candidate by its
id or pair, a session value by its session and name (the newer kept), a session file by
its session and path; events, checkpoints, earlier texts, prompts, injections and LLM
calls by all their fields. Imported from ``ledger export`` files written before
this existed, it is simply not there.
"""

from __future__ import annotations

import json
from typing import Iterable, Sequence

from ..errors import InvalidInput
from ..text import storable_problem
from . import textindex
from .connection import is_postgres
from .source_sync import conn_of

#: The ``"record"`` values of history lines, in the order import writes them.
RECORDS = ("conflict", "candidate", "formerText", "event", "session", "prompt", "sessionValue", "sessionFile",
           "observation", "injection", "llmCall", "checkpoint")
#: Records that belong to one memory (or a pair): a filtered export carries those of its
#: memories; the others belong to the whole store.
MEMORY_RECORDS = ("conflict", "candidate", "formerText")

_CONFLICT = (("id", "id"), ("kind", "kind"), ("clusterId", "cluster_id"), ("a", "a"), ("b", "b"),
             ("detector", "detector"), ("note", "note"), ("status", "status"), ("createdAt", "created_at"),
             ("resolvedAt", "resolved_at"), ("resolution", "resolution"), ("resolvedBy", "resolved_by"))
_EVENT = (("at", "at"), ("agent", "agent"), ("op", "op"), ("memoryId", "memory_id"), ("detail", "detail"), ("ms", "ms"))
_SESSION = (("key", "key"), ("harness", "harness"), ("sessionId", "session_id"), ("project", "project"), ("cwd", "cwd"),
            ("agent", "agent"), ("transcriptPath", "transcript_path"), ("startedAt", "started_at"),
            ("lastSeen", "last_seen"), ("steps", "steps"), ("distilledStep", "distilled_step"))
_OBSERVATION = (("session", "session"), ("step", "step"), ("at", "at"), ("tool", "tool"), ("input", "input"),
                ("output", "output"), ("ok", "ok"), ("durationMs", "duration_ms"), ("toolUseId", "tool_use_id"))
_CHECKPOINT = (("session", "session"), ("project", "project"), ("at", "at"), ("event", "event"), ("branch", "branch"),
               ("content", "content"))
_CANDIDATE = (("id", "id"), ("a", "a"), ("b", "b"), ("score", "score"), ("signals", "signals"),
              ("createdAt", "created_at"), ("judgedAt", "judged_at"), ("verdict", "verdict"), ("judgedBy", "judged_by"))
_FORMER = (("memoryId", "memory_id"), ("text", "text"), ("replacedAt", "replaced_at"), ("replacedBy", "replaced_by"))
_PROMPT = (("session", "session"), ("at", "at"), ("text", "text"))
_VALUE = (("session", "session"), ("name", "name"), ("value", "value"), ("at", "at"))
_FILE = (("session", "session"), ("path", "path"), ("firstAt", "first_at"), ("lastAt", "last_at"), ("edits", "edits"))
_INJECTION = (("session", "session"), ("step", "step"), ("at", "at"), ("level", "level"), ("memoryIds", "memory_ids"),
              ("paths", "paths"), ("chars", "chars"), ("countedIds", "counted_ids"))
_LLM = (("at", "at"), ("session", "session"), ("backend", "backend"), ("model", "model"),
        ("promptTokens", "prompt_tokens"), ("completionTokens", "completion_tokens"), ("ms", "ms"), ("ok", "ok"),
        ("error", "error"))
_FIELDS = {"candidate": _CANDIDATE, "formerText": _FORMER, "prompt": _PROMPT, "sessionValue": _VALUE,
           "sessionFile": _FILE, "injection": _INJECTION, "llmCall": _LLM, "conflict": _CONFLICT, "event": _EVENT, "session": _SESSION, "observation": _OBSERVATION,
           "checkpoint": _CHECKPOINT}
#: Fields each record must have, with their JSON types (the rest may be null).
_REQUIRED = {
    "conflict": (("id", str), ("kind", str), ("clusterId", str), ("a", str), ("b", str), ("status", str), ("createdAt", int)),
    "event": (("at", int), ("agent", str), ("op", str)),
    "session": (("key", str), ("harness", str), ("sessionId", str), ("project", str), ("startedAt", int)),
    "observation": (("session", str), ("step", int), ("at", int), ("tool", str), ("input", str)),
    "checkpoint": (("project", str), ("at", int), ("event", str), ("content", str)),
    "candidate": (("id", str), ("a", str), ("b", str), ("score", (int, float)), ("createdAt", int)),
    "formerText": (("memoryId", str), ("text", str), ("replacedAt", int)),
    "prompt": (("session", str), ("at", int), ("text", str)),
    "sessionValue": (("session", str), ("name", str), ("value", str), ("at", int)),
    "sessionFile": (("session", str), ("path", str), ("firstAt", int), ("lastAt", int), ("edits", int)),
    "injection": (("session", str), ("step", int), ("at", int), ("level", str), ("memoryIds", str), ("paths", str),
                  ("chars", int)),
    "llmCall": (("at", int), ("backend", str), ("promptTokens", int), ("completionTokens", int), ("ok", int)),
}


def export_history(store, memory_ids: Sequence[str] | None) -> Iterable[dict]:
    """History lines for an export: every row when ``memory_ids`` is None (a whole-store
    export), else only the records of :data:`MEMORY_RECORDS` (conflicts, candidates,
    former texts) whose memories are all in ``memory_ids``."""
    conn = conn_of(store)
    wanted = None if memory_ids is None else set(memory_ids)

    def rows(kind: str, table: str, order: str):
        cols = ", ".join(c for _, c in _FIELDS[kind])
        return (_record(kind, _FIELDS[kind], r) for r in conn.execute(f"SELECT {cols} FROM {table} ORDER BY {order}"))

    for rec in rows("conflict", "conflicts", "created_at, id"):
        if wanted is None or (rec["a"] in wanted and rec["b"] in wanted):
            yield rec
    for rec in rows("candidate", "conflict_candidates", "created_at, id"):
        if wanted is None or (rec["a"] in wanted and rec["b"] in wanted):
            yield rec
    for rec in rows("formerText", "memory_text_history", "memory_id, replaced_at, rowid"):
        if wanted is None or rec["memoryId"] in wanted:
            yield rec
    if wanted is not None:
        return
    yield from rows("event", "events", "id")
    yield from rows("session", "watch_sessions", "started_at, key")
    yield from rows("prompt", "session_prompts", "id")
    yield from rows("sessionValue", "session_values", "session, name")
    yield from rows("sessionFile", "session_files", "session, path")
    files: dict[int, list[str]] = {}
    for oid, path in conn.execute("SELECT observation_id, path FROM observation_files ORDER BY observation_id, path"):
        files.setdefault(oid, []).append(path)
    for r in conn.execute(f"SELECT id, {', '.join(c for _, c in _OBSERVATION)} FROM observations ORDER BY id"):
        rec = _record("observation", _OBSERVATION, tuple(r)[1:])
        rec["files"] = files.get(r[0], [])
        yield rec
    yield from rows("injection", "injections", "id")
    yield from rows("llmCall", "llm_calls", "id")
    yield from rows("checkpoint", "checkpoints", "at, id")


def conflict_sides(store, exported: set[str]) -> list[str]:
    """Ids of memories some conflict names that are not in ``exported`` (the side a
    resolution retired is dropped, and a plain export leaves dropped memories out):
    a whole-store export adds them, dropped, so every conflict has its two sides."""
    conn = conn_of(store)
    sides = {x for a, b in conn.execute("SELECT a, b FROM conflicts") for x in (a, b)}
    return sorted(sides - exported)


def _record(kind: str, fields, row) -> dict:
    return {"record": kind, **{k: v for (k, _), v in zip(fields, tuple(row))}}


_TIMES = {"at", "createdAt", "resolvedAt", "judgedAt", "replacedAt", "startedAt", "lastSeen", "firstAt", "lastAt"}
_COUNTS = {"steps", "distilledStep", "step", "chars", "edits", "promptTokens", "completionTokens", "ok"}
_NUMBERS = {"detector", "score", "ms", "durationMs"}
#: Characters: the longest free text of a history line (a checkpoint, a tool's input or
#: output). The hooks keep much less; this only refuses what no hook wrote.
_HISTORY_TEXT = 1_000_000


def validate_history(rec: dict, line: int) -> dict:
    """Check one history line (see the module docstring); returns it, or raises
    :class:`InvalidInput` naming the line."""
    kind = rec.get("record")
    if kind not in _REQUIRED:
        kinds = ", ".join(RECORDS)
        if kind == "memory":  # the natural guess, but memory lines are the ones without the field
            raise InvalidInput(f'line {line}: "record": "memory" is not a record kind: a memory line has no "record" '
                               f'field (remove it). Only history lines have one: {kinds}. Nothing was imported.')
        raise InvalidInput(f"line {line}: unknown record {kind!r}. A memory line has no \"record\" field; a history "
                           f"line has one of: {kinds}. Was the file written by a newer ledger? Nothing was imported.")
    from ..vocab import MAX_TEXT_CHARS
    from .transfer import _Check

    c = _Check(rec, line, kind + " ")
    required = dict(_REQUIRED[kind])
    for key, _ in _FIELDS[kind]:
        need = key in required
        if key in _TIMES:
            c.int_(key, required=need, time=True)
        elif key in _COUNTS:
            c.int_(key, required=need, high=10 ** 12)
        elif key in _NUMBERS:
            c.number(key, low=0, high=10 ** 12, required=need)
        elif key in ("agent", "resolvedBy", "judgedBy", "replacedBy") and rec.get(key):
            c.agent(key, rec[key])
        else:
            c.text(key, required=need, empty_ok=not need or key in ("sessionId", "project", "input", "content"),
                   limit=MAX_TEXT_CHARS if kind == "formerText" else _HISTORY_TEXT)
    if kind == "observation":
        files = rec.get("files", [])
        if not isinstance(files, list) or not all(isinstance(p, str) and not storable_problem(p) for p in files):
            c.fail("files", "is not a list of file paths")
    return rec


def import_history(store, records: Iterable[dict], renamed: dict[str, str]) -> dict:
    """Write history records (already validated) that this store does not have yet, in
    one transaction. ``renamed`` maps an exported memory id to the id it was merged
    into here. A conflict, candidate or former text whose memory is missing here is
    skipped. Returns counts ``{"conflicts", "candidates", "formerTexts", "events",
    "sessions", "prompts", "sessionValues", "sessionFiles", "observations",
    "injections", "llmCalls", "checkpoints"}``."""
    conn = conn_of(store)
    counts = {COUNT_KEYS[k]: 0 for k in RECORDS}
    by_kind: dict[str, list[dict]] = {k: [] for k in RECORDS}
    for rec in records:
        by_kind[rec["record"]].append(rec)
    with store.atomic():
        for rec in by_kind["conflict"]:
            counts["conflicts"] += _conflict(conn, rec, renamed)
        for rec in by_kind["candidate"]:
            counts["candidates"] += _candidate(conn, rec, renamed)
        for rec in by_kind["formerText"]:
            counts["formerTexts"] += _former(conn, {**rec, "memoryId": renamed.get(rec["memoryId"], rec["memoryId"])})
        for rec in by_kind["event"]:
            counts["events"] += _once(conn, "events", _EVENT, {**rec, "memoryId": renamed.get(rec.get("memoryId"),
                                                                                                 rec.get("memoryId"))})
        for rec in by_kind["session"]:
            counts["sessions"] += _ignore(conn, "watch_sessions", _SESSION, rec)
        for rec in by_kind["prompt"]:
            counts["prompts"] += _once(conn, "session_prompts", _PROMPT, rec)
        for rec in by_kind["sessionValue"]:
            counts["sessionValues"] += _session_value(conn, rec)
        for rec in by_kind["sessionFile"]:
            counts["sessionFiles"] += _ignore(conn, "session_files", _FILE, rec)
        for rec in by_kind["observation"]:
            counts["observations"] += _observation(conn, rec)
        for rec in by_kind["injection"]:
            counts["injections"] += _once(conn, "injections", _INJECTION, rec)
            _shown(conn, rec)
        for rec in by_kind["llmCall"]:
            counts["llmCalls"] += _once(conn, "llm_calls", _LLM, rec)
        for rec in by_kind["checkpoint"]:
            counts["checkpoints"] += _once(conn, "checkpoints", _CHECKPOINT, rec)
    return counts


#: The key of each record kind in :func:`import_history`'s counts.
COUNT_KEYS = {"conflict": "conflicts", "candidate": "candidates", "formerText": "formerTexts", "event": "events",
              "session": "sessions", "prompt": "prompts", "sessionValue": "sessionValues",
              "sessionFile": "sessionFiles", "observation": "observations", "injection": "injections",
              "llmCall": "llmCalls", "checkpoint": "checkpoints"}


def _shown(conn, rec: dict) -> None:
    """The facts an imported injection showed its session, and those it counted as
    used (``countedIds``; all it showed when absent, as for an injection written before
    that field), as a hook records them (:func:`.watch.note_shown`): the session does
    not count them as used again."""
    from .watch import note_shown

    def ids(field: str) -> list | None:
        try:
            value = json.loads(rec[field]) if rec.get(field) is not None else None
        except (TypeError, ValueError):
            return None
        return value if isinstance(value, list) else None

    shown = ids("memoryIds")
    if shown is not None:
        note_shown(conn, rec["session"], shown, ids("countedIds"))


def _ignore(conn, table: str, fields, rec: dict) -> int:
    """Insert ``rec`` unless a row with its key is there (that row is kept)."""
    return conn.execute(f"INSERT OR IGNORE INTO {table} ({', '.join(c for _, c in fields)}) "
                        f"VALUES ({', '.join('?' * len(fields))})", [_value(rec, k) for k, _ in fields]).rowcount


def _session_value(conn, rec: dict) -> int:
    """A named session value (plan, todos ...): the newer of the two is kept."""
    row = conn.execute("SELECT at FROM session_values WHERE session = ? AND name = ?", (rec["session"], rec["name"])).fetchone()
    if row and row[0] >= rec["at"]:
        return 0
    if row:
        conn.execute("DELETE FROM session_values WHERE session = ? AND name = ?", (rec["session"], rec["name"]))
    return _ignore(conn, "session_values", _VALUE, rec)


def _candidate(conn, rec: dict, renamed: dict[str, str]) -> int:
    a, b = renamed.get(rec["a"], rec["a"]), renamed.get(rec["b"], rec["b"])
    if a == b or conn.execute("SELECT count(*) FROM memories WHERE id IN (?, ?)", (a, b)).fetchone()[0] != 2:
        return 0  # merged into one, or a side that is not in this store
    return _ignore(conn, "conflict_candidates", _CANDIDATE, {**rec, "a": a, "b": b})


def _former(conn, rec: dict) -> int:
    """A text a memory had before an edit, indexed for ``asof:`` as the edit indexed it."""
    if not conn.execute("SELECT 1 FROM memories WHERE id = ?", (rec["memoryId"],)).fetchone():
        return 0
    if not _once(conn, "memory_text_history", _FORMER, rec):
        return 0
    hid = conn.execute("SELECT max(rowid) FROM memory_text_history WHERE memory_id = ?", (rec["memoryId"],)).fetchone()[0]
    textindex.index_old_text(conn, hid, rec["text"])
    return 1


_DEFAULTS = {"detector": 0.0, "note": "", "cwd": "", "agent": "", "steps": 0, "distilledStep": 0, "output": "",
             "detail": "", "signals": "", "replacedBy": ""}


def _value(rec: dict, key: str):
    v = rec.get(key)
    if v is None and key in _DEFAULTS:
        return _DEFAULTS[key]
    if key == "lastSeen" and v is None:
        return rec.get("startedAt")
    return v


def _once(conn, table: str, fields, rec: dict) -> int:
    """Insert ``rec`` into ``table`` unless a row with all the same fields is there."""
    cols = [c for _, c in fields]
    vals = [_value(rec, k) for k, _ in fields]
    same = " IS NOT DISTINCT FROM ?" if is_postgres(conn) else " IS ?"  # equal, NULL equal to NULL
    where = " AND ".join(f"{c}{same}" for c in cols)
    if conn.execute(f"SELECT 1 FROM {table} WHERE {where} LIMIT 1", vals).fetchone():
        return 0
    conn.execute(f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})", vals)
    return 1


def _conflict(conn, rec: dict, renamed: dict[str, str]) -> int:
    if conn.execute("SELECT 1 FROM conflicts WHERE id = ?", (rec["id"],)).fetchone():
        return 0
    a, b = renamed.get(rec["a"], rec["a"]), renamed.get(rec["b"], rec["b"])
    if conn.execute("SELECT count(*) FROM memories WHERE id IN (?, ?)", (a, b)).fetchone()[0] != (1 if a == b else 2):
        return 0  # a side that is not in this store (a partial export): nothing to hang it on
    if not conn.execute("SELECT 1 FROM clusters WHERE id = ?", (rec["clusterId"],)).fetchone():
        rec = {**rec, "clusterId": conn.execute("SELECT cluster_id FROM memories WHERE id = ?", (a,)).fetchone()[0]}
    vals = [_value({**rec, "a": a, "b": b}, k) for k, _ in _CONFLICT]
    conn.execute(f"INSERT INTO conflicts ({', '.join(c for _, c in _CONFLICT)}) VALUES ({', '.join('?' * len(_CONFLICT))})",
                 vals)
    return 1


def _observation(conn, rec: dict) -> int:
    if not conn.execute("SELECT 1 FROM watch_sessions WHERE key = ?", (rec["session"],)).fetchone():
        harness, _, sid = rec["session"].partition(":")
        conn.execute("INSERT INTO watch_sessions (key, harness, session_id, project, cwd, agent, started_at, last_seen) "
                     "VALUES (?, ?, ?, '', '', '', ?, ?)", (rec["session"], harness, sid, rec["at"], rec["at"]))
    if rec.get("toolUseId"):
        dup = conn.execute("SELECT 1 FROM observations WHERE session = ? AND tool_use_id = ?",
                           (rec["session"], rec["toolUseId"])).fetchone()
    else:
        dup = conn.execute("SELECT 1 FROM observations WHERE session = ? AND step = ? AND at = ? AND tool = ? AND input = ?",
                           (rec["session"], rec["step"], rec["at"], rec["tool"], rec["input"])).fetchone()
    if dup:
        return 0
    cur = conn.execute(f"INSERT INTO observations ({', '.join(c for _, c in _OBSERVATION)}) "
                       f"VALUES ({', '.join('?' * len(_OBSERVATION))})", [_value(rec, k) for k, _ in _OBSERVATION])
    conn.executemany("INSERT OR IGNORE INTO observation_files (observation_id, path) VALUES (?, ?)",
                     [(cur.lastrowid, p) for p in rec.get("files") or [] if isinstance(p, str)])
    return 1
