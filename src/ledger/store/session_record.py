"""SQL for the session record: what a session's hook events said about its task (the
user's prompts, the latest plan, the latest todo list, the files edited, the last failing
and passing command), kept per session so it survives compaction and hook processes.

Tables (migration ``m006_session_record``): ``session_prompts`` (one row per prompt,
pruned to the first plus the latest :data:`KEEP_PROMPTS`), ``session_values`` (one JSON
value per session and name: ``plan``, ``todos``, ``last_failed``, ``last_passed``) and
``session_files`` (edited files, first and last edit time, edit count). Plus the lookup
of one checkpoint by id.

Imported on the hook path: standard library and the connection module only; rows come
back as plain dicts. Values are stored as given: bounding and redaction are the caller's
job (:mod:`ledger.session.record`).
"""

from __future__ import annotations

import json

from ._sqlite import sqlite3
from .connection import atomic

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable

#: Prompts kept per session besides the first one (the task is usually stated first).
KEEP_PROMPTS = 20


def add_prompt(conn: sqlite3.Connection, session: str, text: str, now: int, keep: int = KEEP_PROMPTS) -> None:
    """Append one prompt (epoch ms ``now``); keeps the session's first prompt and its
    latest ``keep`` ones."""
    with atomic(conn):
        conn.execute("INSERT INTO session_prompts (session, at, text) VALUES (?, ?, ?)", (session, now, text))
        conn.execute(
            """DELETE FROM session_prompts WHERE session = ?
                 AND id > (SELECT min(id) FROM session_prompts WHERE session = ?)
                 AND id NOT IN (SELECT id FROM session_prompts WHERE session = ? ORDER BY id DESC LIMIT ?)""",
            (session, session, session, keep),
        )


def prompts(conn: sqlite3.Connection, session: str) -> list[dict]:
    """The kept prompts, oldest first: ``[{"at": ms, "text": str}]``."""
    return [{"at": at, "text": text} for at, text in conn.execute(
        "SELECT at, text FROM session_prompts WHERE session = ? ORDER BY id", (session,))]


def set_value(conn: sqlite3.Connection, session: str, name: str, value: Any, now: int) -> None:
    """Store ``value`` (JSON-able) under ``name`` for the session, replacing the old one."""
    with atomic(conn):
        conn.execute(
            "INSERT OR REPLACE INTO session_values (session, name, value, at) VALUES (?, ?, ?, ?)",
            (session, name, json.dumps(value, ensure_ascii=False), now),
        )


def update_value(conn: sqlite3.Connection, session: str, name: str, fn: Callable[[Any], Any], now: int) -> Any:
    """Read-modify-write ``name`` under the write lock (parallel tool hooks of one
    session must not lose each other's updates): ``fn(old or None) -> new``. A ``None``
    result leaves the value unchanged. Returns the new value."""
    with atomic(conn):
        row = conn.execute("SELECT value FROM session_values WHERE session = ? AND name = ?", (session, name)).fetchone()
        old = json.loads(row[0]) if row else None
        new = fn(old)
        if new is not None:
            conn.execute(
                "INSERT OR REPLACE INTO session_values (session, name, value, at) VALUES (?, ?, ?, ?)",
                (session, name, json.dumps(new, ensure_ascii=False), now),
            )
        return new


def take_value(conn: sqlite3.Connection, session: str, name: str) -> Any:
    """Remove ``name`` for the session and return its decoded value (None when it was
    not set). Under the write lock: of two parallel callers, one gets it."""
    with atomic(conn):
        row = conn.execute("SELECT value FROM session_values WHERE session = ? AND name = ?", (session, name)).fetchone()
        if row is None:
            return None
        conn.execute("DELETE FROM session_values WHERE session = ? AND name = ?", (session, name))
        return json.loads(row[0])


def values(conn: sqlite3.Connection, session: str) -> dict[str, dict]:
    """``{name: {"value": decoded JSON, "at": ms}}`` for the session."""
    return {name: {"value": json.loads(value), "at": at} for name, value, at in conn.execute(
        "SELECT name, value, at FROM session_values WHERE session = ?", (session,))}


def add_files(conn: sqlite3.Connection, session: str, paths: list[str], now: int) -> None:
    """Count one edit of each path (absolute) in the session."""
    if not paths:
        return
    with atomic(conn):
        conn.executemany(
            """INSERT INTO session_files (session, path, first_at, last_at, edits) VALUES (?, ?, ?, ?, 1)
               ON CONFLICT (session, path) DO UPDATE SET last_at = excluded.last_at, edits = session_files.edits + 1""",
            [(session, p, now, now) for p in dict.fromkeys(paths)],
        )


def files(conn: sqlite3.Connection, session: str, limit: int = 1000) -> list[dict]:
    """Edited files in first-edit order: ``[{"path", "first_at", "last_at", "edits"}]``."""
    return [{"path": p, "first_at": f, "last_at": l, "edits": n} for p, f, l, n in conn.execute(
        "SELECT path, first_at, last_at, edits FROM session_files WHERE session = ? ORDER BY first_at, rowid LIMIT ?",
        (session, limit))]


def checkpoint(conn: sqlite3.Connection, checkpoint_id: int) -> dict | None:
    """One checkpoint row (``id, session, project, at, event, branch, content``) or None."""
    row = conn.execute(
        "SELECT id, session, project, at, event, branch, content FROM checkpoints WHERE id = ?", (checkpoint_id,)
    ).fetchone()
    if row is None:
        return None
    return dict(zip(("id", "session", "project", "at", "event", "branch", "content"), row))
