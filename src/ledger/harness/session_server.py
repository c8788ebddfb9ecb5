"""``ledger __serve-session opencode``: the long-lived child of the OpenCode plugin.

OpenCode calls plugin hooks in-process and awaits ``tool.execute.after`` on every tool
call, so starting Python per call (``ledger hook ...``) would add an interpreter start
to each one. The plugin (``harness/opencode/ledger.js``) instead starts this process
once, lazily, restarts it if it dies, and talks JSON lines over its stdin and stdout:
a tool call costs one round trip. The store connection and the settings stay open
between requests; all the logic is here and in the watcher, none in JavaScript.

Protocol (one JSON object per line, UTF-8, ASCII-escaped on our side):

Requests (plugin -> server)::

    {"id": n, "event": {...}}                         # a forwarded hook/bus event
    {"id": n, "type": "ping"}                         # -> "pong": true, "pid"
    {"id": n, "type": "stats"}                        # -> "stats": per-session counters
    {"id": n, "type": "ignore_session", "session": "<OpenCode session id>"}
    {"id": n, "type": "distill_answer", "token": "...", "text": "..." | null,
     "error": null | "..."}

Every request gets exactly one response line, in order::

    {"id": n, "append": "<text to append to the tool output>" | null,
     "context": ["<text for output.context>", ...], "error": null | "<message>"}

A line that is not JSON, not an object, or fails in any way gets a response with
``error`` set (``id`` null when it could not be read) and the server carries on: it
never dies on a bad line. The forwarded event shapes are :mod:`ledger.harness.opencode`'s
business.

Server-initiated lines (``id`` null) ask the plugin to distill through OpenCode's own
session API when ``[llm] backend = "opencode"``::

    {"id": null, "distill": {"token": "...", "session": "opencode:<id>", "prompt": "...",
     "system": "...", "agent": "<agent>" | null, "model": "<provider/model>" | null,
     "timeoutMs": 120000}}

The plugin runs a throwaway OpenCode session (excluded from observation, deleted after)
and sends the answer back as a ``distill_answer`` request. Meanwhile the distillation
itself (:func:`ledger.watcher.distill.distill_session`) runs in a worker thread with its
own connection, so observation goes on. Any other backend distills in a detached
process, as for Claude Code.

What each event does (the same rules as Claude Code, through the same Engine):

* ``tool.execute.after``: the PreToolUse-equivalent injection decision for that call
  (facts about the files it touched, per-file escalation), then the observation. The
  injection text is returned as ``append``. See :mod:`ledger.harness.opencode` for why
  the decision happens after the tool ran.
* step-finish parts: counted per session (never the extraction session: the plugin
  tells us its id, and events of ignored sessions are dropped), de-duplicated by part
  id; a step boundary is also a distillation check.
* ``session.diff`` and patch parts: files changed, kept in the session record.
* ``chat.message`` (user text) and ``todo.updated``: the user's prompt and the todo
  list, kept in the session record (:mod:`ledger.session.record`), like the edits,
  shell commands and ``todowrite`` calls seen at ``tool.execute.after``.
* ``session.idle``: writes the checkpoint (``.agents/checkpoint.md`` and the store),
  with the watcher's edited files plus the diff files. Idempotent.
* ``experimental.session.compacting``: ``context`` gets the Session State block (built
  from the session record and ``.agents/``) and the project's strongest facts, which
  OpenCode appends to its compaction prompt.

``LEDGER_HOOKS_DISABLED=1`` (any true word of :mod:`ledger.flags`) makes every request a
no-op (the plugin also checks it, by the same rule).
An event that names no session (``sessionID`` missing, empty or not a string) is
answered ``"dropped": "no sessionID"`` and changes nothing, as the Claude Code hook drops
such payloads: otherwise every one of them would share one nameless session
``opencode:``. hook.log says so once per kind of event.
Diagnostics go to ``$LEDGER_HOME/hook.log``; stdout carries protocol lines only (stray
prints are redirected to stderr).

Stdlib only.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
import threading
import time

from ..flags import env_flag
from ..log import log_line
from . import opencode
from .jsonlines import MAX_LINE, Channel  # noqa: F401 - MAX_LINE: part of the protocol this module documents

PROTOCOL = 1
SEEN_PARTS_CAP = 4096  # step-finish part ids remembered per session, for de-duplication
DIFF_FILES_CAP = 2000  # changed files kept per session for the checkpoint
#: How long a request waits for another process's write lock before failing (the answer
#: then carries the error and the tool call goes on without facts). Below the plugin's
#: 3 s request timeout, so a busy store never makes OpenCode wait longer than that.
BUSY_TIMEOUT_MS = 2_000


def session_harnesses() -> list[str]:
    """Harnesses whose registry adapter runs through this server (``serve_session``)."""
    from . import adapters

    return [n for n in adapters.names() if hasattr(adapters.get(n), "serve_session")]


def reply(rid: object, *, append: str | None = None, context: list[str] | None = None, error: str | None = None,
          **extra: object) -> dict:
    """A response line: always ``id``, ``append``, ``context`` and ``error``."""
    out = {"id": rid, "append": append, "context": context or [], "error": error}
    out.update(extra)
    return out


class SessionServer:
    """Serves one plugin over JSON lines. ``out`` is a binary stream (stdout).

    ``cfg`` is the watcher/LLM settings (loaded from ``config.toml`` and the environment
    when None); ``clock()`` returns epoch milliseconds.
    """

    def __init__(self, harness: str = "opencode", *, db: str, out=None, cfg: dict | None = None, clock=None):
        if harness not in session_harnesses():
            raise ValueError(f"unknown harness {harness!r} for __serve-session; supported: {', '.join(session_harnesses())}")
        self.harness = harness
        self.db = db
        self.out = out
        self.cfg = cfg if cfg is not None else _load_config()
        self.clock = clock or (lambda: time.time_ns() // 1_000_000)
        self.disabled = env_flag("LEDGER_HOOKS_DISABLED")
        self.conn = None  # the store connection (sqlite3, opened through ledger.store)
        self.opened = 0  # store connections opened (1 while healthy: it stays open)
        self.requests = 0
        self.model_steps: dict[str, int] = {}
        self.seen_parts: dict[str, set[str]] = {}
        self.diff_files: dict[str, dict[str, None]] = {}
        self.ignored: set[str] = set()
        self.dropped: set[str] = set()  # kinds of event dropped for naming no session (logged once each)
        self.seen: dict[str, None] = {}  # session keys seen, in order (stats)
        self.idle_clean: set[str] = set()  # checkpointed, and no activity since
        self.channel = Channel(out, lambda message: reply(None, error=message))
        self._waiting: dict[str, list] = {}  # token -> [threading.Event, text, error]
        self._waiting_lock = threading.Lock()
        self._tokens = itertools.count(1)
        self._threads: list[threading.Thread] = []

    # ------------------------------------------------------------------ transport (ledger.harness.jsonlines)
    def serve(self, inp) -> int:
        """Answer request lines from the binary stream ``inp`` until end of input."""
        try:
            self.channel.serve(inp, self.handle_line)
        finally:
            self.close()
        return 0

    def send(self, obj: dict) -> None:
        """Write one line (thread-safe; a vanished reader is not an error)."""
        self.channel.send(obj)

    def handle_line(self, line: bytes | str) -> dict:
        """One request line -> its response (never raises)."""
        self.requests += 1
        req, bad = self.channel.decode(line)
        if req is None:
            return bad
        rid = req.get("id")
        try:
            return self.dispatch(rid, req)
        except Exception as exc:  # noqa: BLE001 - one bad request must not end the server
            if _is_db_error(exc):
                self._drop_connection()  # reopened on the next request
            log_line(f"__serve-session {self.harness}: {type(exc).__name__}: {exc}")
            return reply(rid, error=f"{type(exc).__name__}: {exc}")

    # ------------------------------------------------------------------ requests
    def dispatch(self, rid: object, req: dict) -> dict:
        kind = req.get("type") or ("event" if "event" in req else None)
        if kind == "event":
            return self.handle_event(rid, req.get("event"))
        if kind == "ping":
            return reply(rid, pong=True, protocol=PROTOCOL, pid=os.getpid(), harness=self.harness)
        if kind == "stats":
            return reply(rid, stats=self.stats())
        if kind == "ignore_session":
            sid = req.get("session")
            if not isinstance(sid, str) or not sid:
                raise ValueError("ignore_session needs a 'session' id")
            self.ignored.add(sid)
            self._forget(f"{self.harness}:{sid}")
            return reply(rid)
        if kind == "distill_answer":
            self.deliver_answer(req)
            return reply(rid)
        raise ValueError(f"unknown request type {kind!r}; expected an 'event' or a type of "
                         "ping, stats, ignore_session, distill_answer")

    def handle_event(self, rid: object, obj: object) -> dict:
        p = opencode.parse(obj)
        if self.disabled or p.what == "other":
            return reply(rid)
        if not p.session_id:
            # The rule of every hook path (docs/watcher.md): an event that names no session
            # would be filed under one nameless session shared by every such event, mixing
            # unrelated calls. Dropped, and said why in hook.log (once per kind of event
            # in this process: a build that never sends one would fill the log).
            if p.what not in self.dropped:
                self.dropped.add(p.what)
                log_line(f"{self.harness} {_hook_name(obj)}: payload dropped: no sessionID in it "
                         "(further such payloads of this kind are dropped without a line)")
            return reply(rid, dropped="no sessionID")
        if p.session_id and p.session_id in self.ignored:
            return reply(rid, ignored=True)
        key = f"{self.harness}:{p.session_id}"
        if p.what == "deleted":
            self._forget(key)
            return reply(rid)
        self.seen.setdefault(key, None)
        if p.what == "idle":
            # session.status idle and session.idle arrive together: one checkpoint.
            if key in self.idle_clean:
                return reply(rid)
        else:
            self.idle_clean.discard(key)
        if p.what == "diff":
            files = self.diff_files.setdefault(key, {})
            new = [f for f in p.files if f not in files][: max(0, DIFF_FILES_CAP - len(files))]
            for f in new:
                files.setdefault(f, None)
            if new:
                from ..session.record import note_files

                note_files(self.connection(), key, new, self.clock())  # the session record: files edited
            return reply(rid)
        if p.what == "todos":
            from ..session.record import note_todos

            note_todos(self.connection(), key, p.todos, self.clock())
            return reply(rid)

        from ..session import record as notes
        from ..session.state import handle_session_event
        from ..watcher.engine import Engine
        from ..watcher.spool import spool_dir

        # A tool call that finds the store locked past the wait is spooled, not lost.
        engine = Engine(self.connection(), self.cfg, self.clock(), spawn_distill=self.spawn_distill,
                        session_state=handle_session_event, spool=spool_dir(self.db), notes=notes)
        if p.what == "step":
            seen = self.seen_parts.setdefault(key, set())
            if p.part_id:
                if p.part_id in seen:
                    return reply(rid)
                if len(seen) >= SEEN_PARTS_CAP:
                    seen.clear()
                seen.add(p.part_id)
            self.model_steps[key] = self.model_steps.get(key, 0) + 1
            engine.maybe_distill(key)
            return reply(rid)
        if p.what == "tool":
            resp = engine.handle(opencode.pre_tool(p.event))  # touches the session, injects
            engine.observe(p.event, key)
            handle_session_event(p.event, engine)  # the session record (edits, todos, commands)
            engine.maybe_distill(key)
            return reply(rid, append=opencode.render_append(resp))
        if p.what == "idle":
            self.checkpoint(engine, p, key)
            self.idle_clean.add(key)
            return reply(rid)
        if p.what == "compacting":
            return reply(rid, context=self.compaction_context(engine, p))
        if p.what == "prompt":
            engine.handle(p.event)  # touches the session; the record keeps the prompt
            return reply(rid)
        return reply(rid)

    # ------------------------------------------------------------------ session state
    def checkpoint(self, engine, p: opencode.Parsed, key: str) -> str | None:
        """Write the idle checkpoint with the watcher's edited files plus the files
        ``session.diff`` / patch parts reported (:func:`ledger.session.state.write_checkpoint`)."""
        from ..session import state
        from ..store import watch as W
        from ..watcher.engine import project_root, reader_agent

        conn = engine.conn
        W.touch_session(conn, key, harness=self.harness, session_id=p.session_id, project=project_root(p.cwd), cwd=p.cwd,
                        agent=reader_agent(p.event), transcript_path=None, now=engine.now)
        project = project_root(p.cwd)
        return state.write_checkpoint(conn, key, project, "session.idle", engine.now,
                                      extra_files=list(self.diff_files.get(key, {})))

    def compaction_context(self, engine, p: opencode.Parsed) -> list[str]:
        """The Session State block plus the project's strongest facts: OpenCode has no
        post-compaction context hook in V1, so the facts ride along in the summary."""
        from ..session.record import load
        from ..session.state import facts_block, session_block
        from ..watcher.engine import project_root

        project = project_root(p.cwd)
        text = session_block(project, rec=load(engine.conn, f"{self.harness}:{p.session_id}"))
        facts = facts_block(engine.conn, project, engine.now)
        text = "\n\n".join(t for t in (text, facts) if t)
        return [text] if text else []

    def _forget(self, key: str) -> None:
        self.model_steps.pop(key, None)
        self.seen_parts.pop(key, None)
        self.diff_files.pop(key, None)
        self.seen.pop(key, None)
        self.idle_clean.discard(key)

    def stats(self) -> dict:
        from ..store import watch as W

        sessions = {}
        conn = self.conn
        for key in self.seen:
            row = W.session(conn, key) if conn is not None else {}
            sessions[key] = {"modelSteps": self.model_steps.get(key, 0), "toolSteps": row.get("steps", 0),
                             "diffFiles": list(self.diff_files.get(key, {}))}
        return {"sessions": sessions, "opened": self.opened, "requests": self.requests, "ignored": sorted(self.ignored),
                "pid": os.getpid(), "distilling": len(self._waiting)}

    # ------------------------------------------------------------------ store
    def connection(self):
        """The store connection, opened (and migrated) on first use and kept open."""
        if self.conn is None:
            from ..watcher.engine import open_store

            self.conn = open_store(self.db, BUSY_TIMEOUT_MS)
            self.opened += 1
        return self.conn

    def _drop_connection(self) -> None:
        conn, self.conn = self.conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:  # noqa: BLE001
                pass

    def close(self) -> None:
        """End of input: fail pending distillations (their leases are released), wait
        briefly for their threads, close the store."""
        with self._waiting_lock:
            waiting = list(self._waiting.values())
        for slot in waiting:
            slot[2] = "the OpenCode plugin went away before answering"
            slot[0].set()
        for t in self._threads:
            t.join(timeout=5)
        self._drop_connection()

    # ------------------------------------------------------------------ distillation
    def spawn_distill(self, key: str, owner: str) -> None:
        """Engine callback once a session's lease is taken: distill through the plugin
        (backend ``opencode``) or in a detached process (any other backend)."""
        if str(self.cfg["llm"].get("backend") or "").lower() == "opencode":
            t = threading.Thread(target=self._distill_via_plugin, args=(key, owner), name=f"distill {key}", daemon=True)
            self._threads = [x for x in self._threads if x.is_alive()] + [t]
            t.start()
            return
        from ..watcher.engine import spawn_distiller

        spawn_distiller(self.db)(key, owner)

    def _distill_via_plugin(self, key: str, owner: str) -> None:
        from ..service import Ledger
        from ..watcher.distill import distill_session
        from ..watcher.llm import SYSTEM, LLMError

        timeout_s = float(self.cfg["llm"].get("timeout") or 120)
        model = self.cfg["llm"].get("model") or None

        def answer(prompt: str) -> tuple[str, int, int]:
            token = f"d{next(self._tokens)}"
            slot = [threading.Event(), None, None]
            with self._waiting_lock:
                self._waiting[token] = slot
            try:
                self.send({"id": None, "distill": {
                    "token": token, "session": key, "prompt": prompt, "system": SYSTEM,
                    "agent": os.environ.get("LEDGER_OPENCODE_AGENT") or None,
                    "model": model if isinstance(model, str) and "/" in model else None,
                    "timeoutMs": int(timeout_s * 1000),
                }})
                if not slot[0].wait(timeout_s + 15):
                    raise LLMError(f"opencode backend: the plugin did not answer within {timeout_s:.0f} s")
                if slot[2]:
                    raise LLMError(f"opencode backend: {slot[2]}")
                text = slot[1] or ""
                return text, max(1, len(prompt) // 4), max(1, len(text) // 4)
            finally:
                with self._waiting_lock:
                    self._waiting.pop(token, None)

        try:
            with Ledger.open(self.db) as led:
                r = distill_session(led, key, owner, self.cfg, answer_fn=answer, log=log_line)
            log_line(f"distill {key} (via OpenCode): {json.dumps(r)}")
        except Exception as exc:  # noqa: BLE001 - a thread: the log is the record
            log_line(f"distill {key} (via OpenCode) failed: {type(exc).__name__}: {exc}")

    def deliver_answer(self, req: dict) -> None:
        token = req.get("token")
        with self._waiting_lock:
            slot = self._waiting.get(token) if isinstance(token, str) else None
        if slot is None:
            raise ValueError(f"no distillation is waiting for token {token!r} (timed out or already answered)")
        text, error = req.get("text"), req.get("error")
        slot[1] = text if isinstance(text, str) else None
        slot[2] = (error if isinstance(error, str) else "the plugin sent an error") if error else (
            None if isinstance(text, str) else "the plugin sent no text")
        slot[0].set()


def _hook_name(obj: object) -> str:
    """``tool.execute.after``, or for a bus event ``event session.idle``: for log lines."""
    hook = obj.get("hook") if isinstance(obj, dict) else None
    ev = obj.get("event") if isinstance(obj, dict) else None
    etype = ev.get("type") if isinstance(ev, dict) else None
    return f"{hook} {etype}" if hook == "event" and isinstance(etype, str) else str(hook)[:80]


def _is_db_error(exc: BaseException) -> bool:
    """The store failed (the store translates every sqlite3 error into StoreUnavailable)."""
    from ..errors import StoreUnavailable

    return isinstance(exc, StoreUnavailable)


def _load_config() -> dict:
    from ..watcher import config as config_mod

    return config_mod.load_logged()


def main(args: list[str]) -> int:
    """``ledger __serve-session <harness> [--db PATH]``: serve stdin/stdout until EOF."""
    harness, db = "opencode", None
    rest = list(args)
    if rest and not rest[0].startswith("-"):
        harness = rest.pop(0)
    while rest:
        a = rest.pop(0)
        if a == "--db" and rest:
            db = rest.pop(0)
        elif a.startswith("--db="):
            db = a[5:]
        else:
            print(f"__serve-session: unexpected argument {a!r}; usage: ledger __serve-session opencode [--db PATH]",
                  file=sys.stderr)
            return 2
    if harness not in session_harnesses():
        print(f"__serve-session: unknown harness {harness!r}; supported: {', '.join(session_harnesses())}", file=sys.stderr)
        return 2
    from ..paths import db_path

    out = sys.stdout.buffer
    sys.stdout = sys.stderr  # stdout carries protocol lines only
    server = SessionServer(harness, db=str(db_path(db)), out=out)
    return server.serve(sys.stdin.buffer)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
