"""The watcher's decisions for one hook event: observe, inject, escalate, hand off to
distillation and session state. Harness-neutral: it sees only :class:`HookEvent`.

Stdlib only (hook path). Rules, adapted from opencode-ledger (docs/originals.md §2.8) with the
fixes of docs/design.md:

* Every tool call is an observation (a step) of its session, with a bounded, redacted
  excerpt of its output and the files it touched.
* Before a file-touching tool runs, live claims keyed to those exact files are injected.
  Per session and per file, counted once per step (parallel calls of one step are one
  showing): the first time gently, then a quiet period, then from the
  ``escalate_after``-th step on (never the first) the escalated message (optionally
  denying the call, only when it re-investigates: :func:`paths.is_investigating`).
  Only a re-investigating call shown settled facts counts toward escalation: a call
  that acts (Edit, Write, a shell command that writes) and a file whose facts are all
  unsettled ("may be stale", disputed) are shown the facts gently once, never counted.
  Only settled facts shown are counted as read.
  Facts newer than the last counted ones reset a file's counter, and a distillation that
  adds findings resets the session's counters: the agent is learning, not stuck.
* A fact whose file changed since it was learned is marked "may be stale"; one in an
  open conflict or an unjudged conflict candidate is marked "disputed". Both are
  unsettled: listed after the settled facts, under their own header, never as
  "already established" (:func:`settle_facts`, :func:`render_facts`).
* Every ``every`` steps a detached distiller is started, one per session (a lease).
"""

from __future__ import annotations

import os
import sys
import time

from ..errors import StoreUnavailable
from ..events import HookEvent, HookResponse
from ..facts import fact_prefix, fact_strength, rank_key  # noqa: F401 - fact_strength re-exported
from ..filekeys import is_changed
from ..log import log_line
from ..store import watch as W
from .paths import files_touched, is_file_tool, is_investigating

GENTLE, QUIET, ESCALATED = "gentle", "quiet", "escalated"
_LEVEL_RANK = {QUIET: 0, GENTLE: 1, ESCALATED: 2}


def session_key(event: HookEvent) -> str:
    return f"{event.harness}:{event.session_id}"


def project_root(cwd: str) -> str:
    """The project folder for a working directory: ``cwd`` itself, absolute. A project
    is the folder the harness was started in, never a parent git repository: two
    folders under one repository (dotfiles in a home directory) are two projects
    (docs/watcher.md, "Projects and worktrees")."""
    return os.path.abspath(cwd or os.getcwd())


def event_project(event: HookEvent, stored: str | None = None) -> str:
    """The project of ``event``'s session: the harness's own project folder when it
    says (``event.project``), else the one recorded when the session was first seen
    (``stored``: its first ``cwd``), else the event's ``cwd``."""
    return event.project or stored or project_root(event.cwd)


def reader_agent(event: HookEvent) -> str:
    """Who the injected facts are read by: ``$LEDGER_AGENT`` or the harness name, in the
    normal form every write uses (:func:`ledger.text.agent_id`), slugged: a hook never
    fails, so ``LEDGER_AGENT="My Agent"`` reads as ``my-agent`` here (the CLI refuses it)."""
    from ..text import agent_id

    return agent_id(os.environ.get("LEDGER_AGENT") or event.harness, slug=True) or event.harness


def open_store(db: str, busy_timeout_ms: int | None = None):
    """The watcher's store connection for ``db`` (opened and migrated). ``busy_timeout_ms``
    bounds the wait for another process's write lock (the hook passes a short one so it
    fails open instead of being killed by the harness). Raises the store's errors."""
    return W.open_store(db, busy_timeout_ms)


def is_read_only_error(exc: BaseException) -> bool:
    """Whether ``exc`` is a write refused because the store is read-only (a read-only
    SQLite file or mount, a PostgreSQL connection or role that may not write)."""
    return isinstance(exc, StoreUnavailable) and getattr(exc, "reason", "") == "read-only"


def spawn_distiller(db: str):
    """A ``spawn_distill(key, owner)`` that starts a detached distiller process for the
    store at ``db``: ``python -m ledger __distill ...`` (:mod:`ledger.cli.distiller`),
    with our own hooks disabled in it and its output discarded (it logs to
    ``hook.log``)."""

    def spawn(key: str, owner: str) -> None:
        import subprocess

        env = dict(os.environ, LEDGER_HOOKS_DISABLED="1")
        subprocess.Popen(
            [sys.executable, "-m", "ledger", "__distill", "--db", db, "--session", key, "--owner", owner],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, env=env, close_fds=True,
        )

    return spawn


def drain_spool(db: str, cfg: dict, now: int, notes=None) -> int:
    """Store the observations spooled for the store at ``db`` (the distiller calls this
    before it reads a session). ``notes`` applies their session-record notes (see
    :class:`Engine`). Returns how many were handed over."""
    engine = Engine.open(db, cfg, now, spawn_distill=lambda key, owner: None, notes=notes)
    try:
        return engine.drain_spool()
    finally:
        engine.close()


def spools_first(db: str, cfg: dict) -> bool:
    """Whether a finished tool call on the store at ``db`` goes to the spool first
    (``[watcher] spool_first``: ``auto`` means for a PostgreSQL store, where connecting
    costs the hook far more than the write; ``always``; ``never``). POSIX only."""
    mode = str(cfg["watcher"].get("spool_first", "auto")).lower()
    if mode == "never" or os.name != "posix":
        return False
    return mode == "always" or str(db).startswith(("postgresql://", "postgres://"))


SKIP, SPOOL, STORE = "skip", "spool", "store"


class Engine:
    """Handles events against one open store connection (:func:`open_store`).
    ``spawn_distill(key, owner)`` is called when a session is due for distillation and
    its lease was taken; the hook runner passes :func:`spawn_distiller` (a detached
    process), ``ledger replay`` one that distills inline. ``session_state(event, engine)``
    handles the non-tool events (checkpoints, the Session State block); the surface
    wires it in, so the watcher never imports session state. ``notes`` (the surface
    passes :mod:`ledger.session.record`) has ``tool_note(tool, cwd, subagent)`` and
    ``apply_note(conn, key, note, now)``: a spooled observation carries its session-record
    note and a drain applies it, so the record is the same whether the call was stored at
    once or later. ``wait_ms`` bounds waits for the store's and the spool's locks.

    ``read_only`` (what a write is told: the store is read-only, why and what to do;
    None when it can be written) makes the engine read what it can and write nothing to
    the store (:meth:`handle_read_only`); a write refused as read-only on the way (a
    PostgreSQL role that may only read) sets it too."""

    def __init__(self, conn, cfg: dict, now: int, spawn_distill=None, session_state=None, spool: str | None = None,
                 notes=None, wait_ms: int | None = None, read_only: str | None = None):
        self.conn = conn
        self.read_only = read_only
        self.spool = spool  # folder where observations wait while the store is locked (watcher/spool.py)
        self.notes = notes
        self.wait_ms = wait_ms
        # One budget for the whole hook: the spool's lock, the drain's writes and the
        # event's own writes all wait within wait_ms of the start, not wait_ms each.
        self.deadline = None if wait_ms is None else time.monotonic() + wait_ms / 1000
        self.cfg = cfg
        self.w = cfg["watcher"]
        self.now = now
        self.spawn_distill = spawn_distill
        self.session_state = session_state  # callable(event, engine) -> HookResponse | None
        self.project: str | None = None  # the current event's project, set by _touch

    @classmethod
    def open(cls, db: str, cfg: dict, now: int, *, busy_timeout_ms: int | None = None, spawn_distill=None,
             session_state=None, notes=None, defer_migrations_above: int | None = None) -> Engine:
        """An engine on a fresh connection to ``db`` (close it with :meth:`close`);
        ``spawn_distill`` defaults to :func:`spawn_distiller` for ``db``.
        ``defer_migrations_above``: raise StoreUnavailable (reason ``migrating``)
        rather than apply pending migrations to a store of more memories than that
        (:func:`ledger.store.migrations.migrate`)."""
        from .spool import spool_dir

        started = time.monotonic()
        conn, why = W.open_store_why(db, busy_timeout_ms, defer_migrations_above=defer_migrations_above)
        engine = cls(conn, cfg, now, spawn_distill=spawn_distill if spawn_distill is not None else spawn_distiller(db),
                     session_state=session_state, spool=spool_dir(db), notes=notes, wait_ms=busy_timeout_ms,
                     read_only=why)
        if busy_timeout_ms is not None:  # opening (connecting, a busy migration check) counts too
            engine.deadline = started + busy_timeout_ms / 1000
        return engine

    def _left_ms(self) -> int | None:
        """What is left of the hook's lock-wait budget (ms), or None without one."""
        if self.deadline is None:
            return None
        return max(0, int((self.deadline - time.monotonic()) * 1000))

    def _tight_ms(self) -> int | None:
        """The budget left when a tenth or more of it is spent, else None (the
        connection's own wait is then close enough, and no statement is spent on it)."""
        left = self._left_ms()
        return left if left is not None and self.wait_ms and left < self.wait_ms * 0.9 else None

    @classmethod
    def offline(cls, db: str, cfg: dict, now: int, notes=None) -> Engine:
        """An engine with no store connection, only able to spool observations for
        ``db`` (:meth:`spool_observation`) and to tell what an event needs
        (:meth:`needs`): for a store out of reach, and for the hooks that spool first."""
        from .spool import spool_dir

        return cls(None, cfg, now, spool=spool_dir(db), notes=notes)

    def needs(self, event: HookEvent, spool_first: bool) -> str:
        """What handling ``event`` takes, decided without the store: :data:`SKIP` (a
        tool about to run that cannot touch a file with facts: not a file tool, no
        file named, or injection off: nothing to read or write), :data:`SPOOL` (a
        finished tool call when ``spool_first``: the observation goes to the spool),
        else :data:`STORE` (connect and :meth:`handle`)."""
        if event.tool is not None and event.kind == "pre_tool":
            if not self.w.get("enabled", True) or not is_file_tool(event.tool.name):
                return SKIP
            return STORE if files_touched(event.tool, event.cwd) else SKIP
        if event.tool is not None and event.kind == "post_tool" and spool_first and self.spool is not None:
            return SPOOL
        return STORE

    def close(self) -> None:
        """Close the store connection."""
        if self.conn is not None:
            self.conn.close()

    def spool_record(self, record: dict, why: BaseException) -> None:
        """Keep an observation record in the spool (watcher/spool.py) until the store
        takes it; raises OSError when even the spool cannot be written."""
        from .spool import append

        append(self.spool, record)
        log_line(f"store unavailable ({why}); observation {record.get('tool_use_id') or ''} of {record['key']} spooled")

    def spool_observation(self, event: HookEvent, why: BaseException) -> bool:
        """Spool ``event``'s finished tool call (nothing observed is lost while the
        store is out of reach); False for events that are not finished tool calls."""
        if event.tool is None or event.kind != "post_tool" or self.spool is None:
            return False
        self.spool_record(self.observation_record(event, session_key(event)), why)
        return True

    def spool_first(self, event: HookEvent) -> None:
        """Append ``event``'s finished tool call to the spool, with no store connection
        (the hooks that spool first; :meth:`needs` said :data:`SPOOL`). Raises OSError
        when the spool cannot be written."""
        from .spool import append

        append(self.spool, self.observation_record(event, session_key(event)))

    # ------------------------------------------------------------------ entry
    def handle(self, event: HookEvent) -> HookResponse | None:
        key = session_key(event)
        if self.read_only is not None:
            return self.handle_read_only(event, key)
        try:
            return self._handle(event, key)
        except StoreUnavailable as exc:
            if not is_read_only_error(exc):
                raise
            # Opened for writing, refused as read-only (a PostgreSQL role or connection
            # that may only read): answer as on a store known to be read-only.
            self.read_only = exc.message
            return self.handle_read_only(event, key)

    def _handle(self, event: HookEvent, key: str) -> HookResponse | None:
        self.drain_spool()
        if event.tool is not None and event.kind == "pre_tool":
            # One write transaction per tool event: one commit on the agent's critical path.
            with W.atomic(self.conn):
                self._touch(event, key)
                return self.inject(event, key)
        if event.tool is not None and event.kind == "post_tool":
            record = self.observation_record(event, key)
            try:
                with W.atomic(self.conn):
                    self._touch(event, key)
                    self.store_observation(record)
                    if self.session_state is not None:
                        # The session record (todo list, plan, edited files, last commands);
                        # a spooled observation (store busy) leaves it as it was. Its answer
                        # is the Session State carried after a compaction, if one is due.
                        carried = self._record(event)
            except StoreUnavailable as exc:
                # Locked longer than the hook may wait: keep the observation in the spool
                # for the next hook or the distiller (watcher/spool.py), never drop it.
                if self.spool is None:
                    raise
                self.spool_record(record, exc)
                return None
            # After the commit: the distiller (a process, or inline in replays) writes too.
            self.maybe_distill(key)
            return carried if self.session_state is not None else None
        self._touch(event, key)
        if self.session_state is not None:
            return self.session_state(event, self)
        return None

    def handle_read_only(self, event: HookEvent, key: str) -> HookResponse | None:
        """``event`` on a store this process cannot write (:attr:`read_only` says why):
        read what can be read, write nothing to the store.

        * A tool about to run gets the facts about its files (:meth:`inject_read_only`).
        * A finished tool call goes to the spool beside the store when that folder is
          writable (the next hook that can write stores it); else one log line.
        * Session events get their read-only part from ``session_state`` (the Session
          State and known facts handed back around a compaction); nothing is recorded.
        """
        session = W.session(self.conn, key)
        self.project = event_project(event, session.get("project"))
        if event.tool is not None and event.kind == "pre_tool":
            return self.inject_read_only(event, key)
        if event.tool is not None and event.kind == "post_tool":
            try:
                if self.spool is None:
                    raise OSError("no spool for this store")
                self.spool_record(self.observation_record(event, key), StoreUnavailable(self.read_only, reason="read-only"))
            except OSError as exc:  # a read-only folder or mount: the spool cannot be written either
                log_line(f"{self.read_only} The observation of {key} was not kept: the spool cannot be written either "
                         f"({exc}).")
            return None
        if self.session_state is not None:
            return self.session_state(event, self)
        return None

    def inject_read_only(self, event: HookEvent, key: str) -> HookResponse | None:
        """The facts about the files a tool is about to touch, from a read-only store:
        shown gently, once per session and file until newer facts exist (the store
        cannot count showings, so a small note in ``$LEDGER_HOME/readonly-shown/``
        remembers them; where that cannot be written either, they are shown each time).
        Nothing is counted as read, no escalation (it needs the store's counters)."""
        facts = self._facts_touched(event)
        if not facts:
            return None
        by_path: dict[str, list[dict]] = {}
        for f in facts:
            by_path.setdefault(f["path"], []).append(f)
        memo = _ShownMemo(key)
        shown = [f for path, fs in by_path.items() if memo.fresh(path, max(f["seq"] for f in fs)) for f in fs]
        if not shown:
            return None
        settle_facts(self.conn, shown)
        text, ids = render_facts(shown, level=GENTLE, times=1, steps=0, now=self.now,
                                 max_facts=int(self.w["max_facts"]), max_chars=int(self.w["max_chars"]))
        if not ids:
            _too_small(self.w)
            return None
        memo.save()
        return HookResponse(additional_context=text)

    def _record(self, event: HookEvent) -> HookResponse | None:
        """Hand a finished tool call to session state and return its answer; a failure
        there is logged and never costs the observation stored in the same transaction."""
        try:
            return self.session_state(event, self)
        except StoreUnavailable:
            raise
        except Exception as exc:  # noqa: BLE001 - the observation matters more
            log_line(f"session record: {type(exc).__name__}: {exc}")
            return None

    def _touch(self, event: HookEvent, key: str) -> None:
        row = W.touch_session(
            self.conn, key, harness=event.harness, session_id=event.session_id, project=event_project(event),
            cwd=event.cwd, agent=reader_agent(event), transcript_path=event.transcript_path, now=self.now,
        )
        self.project = event_project(event, (row or {}).get("project"))

    # ------------------------------------------------------------------ observe
    def observe(self, event: HookEvent, key: str) -> int:
        """Store ``event``'s tool call as the session's next observation (inside the
        caller's transaction); returns its step."""
        return self.store_observation(self.observation_record(event, key))

    def store_observation(self, r: dict, *, with_note: bool = False) -> int:
        """Write one observation record (see :meth:`observation_record`); idempotent per
        ``tool_use_id``. ``with_note`` also applies the record's session-record note
        (a drained record; the direct path hands the event to session state instead),
        once: not when the observation was already stored. Returns its step."""
        W.touch_session(self.conn, r["key"], harness=r["harness"], session_id=r["session_id"], project=r["project"],
                        cwd=r["cwd"], agent=r["agent"], transcript_path=r["transcript_path"], now=r["at"])
        note = r.get("note") if with_note and self.notes is not None else None
        if note and r["tool_use_id"] and W.observation_of(self.conn, r["key"], r["tool_use_id"]) == (r["tool"], r["at"]):
            # This very record was stored, and noted, by a drain cut short. (Another call
            # the harness gave the same id is noted, as on the direct path.)
            note = None
        step = W.add_observation(self.conn, r["key"], tool=r["tool"], input=r["input"], output=r["output"], ok=r["ok"],
                                 duration_ms=r["duration_ms"], tool_use_id=r["tool_use_id"], files=r["files"], now=r["at"])
        if note:
            self.notes.apply_note(self.conn, r["key"], note, r["at"])
        return step

    def drain_spool(self, *, raise_unavailable: bool = False) -> int:
        """Store the spooled observations, oldest first, each in its own transaction with
        its session-record note (cheap when there are none: one ``listdir``), then start
        the distillations now due for their sessions. Returns how many were handed over;
        a store still locked or out of reach leaves the rest for later (raising
        :class:`StoreUnavailable` with ``raise_unavailable``), and so does another
        drainer busy past :attr:`wait_ms`."""
        if self.spool is None:
            return 0
        from .spool import drain, has_work

        if not has_work(self.spool):
            return 0
        keys: dict[str, None] = {}

        def insert(record: dict) -> None:
            try:
                with W.atomic(self.conn, wait_ms=self._tight_ms()):
                    self.store_observation(record, with_note=True)
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                # A record this version cannot read (another version wrote it, or the
                # file was edited): skipped and logged, never left to stop every later
                # drain (a hook that drains would fail on it each time).
                log_line(f"spool: malformed record skipped: {type(exc).__name__}: {exc}: {str(record)[:120]}")
                return
            keys[record["key"]] = None

        try:
            n = drain(self.spool, insert, log=log_line, wait_ms=self._left_ms())
        except StoreUnavailable:
            if raise_unavailable:
                raise
            return 0
        finally:
            self._bound_later_waits()
        for key in keys:
            try:
                self.maybe_distill(key)
            except StoreUnavailable:
                pass  # the next drain or hook checks again
        return n

    def _bound_later_waits(self) -> None:
        """After a drain that spent part of the budget, let later writes on this
        connection wait only for what is left."""
        left = self._tight_ms()
        if left is None:
            return
        try:
            W.set_lock_wait(self.conn, left)
        except Exception:  # noqa: BLE001 - a lost connection shows on the next statement
            pass

    def observation_record(self, event: HookEvent, key: str) -> dict:
        """``event``'s tool call as a plain, JSON-able observation record: redacted and
        bounded already, so it may be stored or spooled as is."""
        tool = event.tool
        files = files_touched(tool, event.cwd) if is_file_tool(tool.name) else []
        # clip = bound(redact(...)) that redacts only what it keeps: a 10 MB output full of
        # trigger words costs milliseconds, not seconds, on the tool call's critical path.
        # Imported here: PreToolUse hooks never need it.
        # clip_value does the same at every depth of the input (MultiEdit edits[i].new_string,
        # an MCP tool's nested arguments) and bounds the whole, so no field stored is
        # unbounded or unredacted.
        # Terminal control sequences go first (docs/watcher.md "Terminal control
        # sequences"): a coloured log parses, redacts and reads as it showed on screen.
        # Only the ends a long output keeps are cleaned before the cut (cost), and what
        # is kept once more after it (bounded: cheap), so no control is ever stored.
        from ..plaintext import plain_ends, plain_text, plain_value
        from ..redact import bound, clip, clip_value

        cap = int(self.w["max_output_chars"])

        note = self.notes.tool_note(tool, event.cwd, bool(event.agent_id)) if self.notes is not None else None
        return {
            "key": key, "harness": event.harness, "session_id": event.session_id, "project": event_project(event),
            "cwd": event.cwd, "agent": reader_agent(event), "transcript_path": event.transcript_path,
            "tool": bound(plain_text(tool.name or ""), 200), "input": plain_value(clip_value(tool.input or {})),
            "output": plain_text(clip(plain_ends(tool.output or "", 4 * (cap + 8192)), cap)), "ok": tool.ok,
            "duration_ms": tool.duration_ms, "tool_use_id": bound(tool.tool_use_id, 200) if tool.tool_use_id else None,
            "files": [p for p in files if len(p) <= 4096], "at": self.now, "note": note,
        }

    def maybe_distill(self, key: str, *, force: bool = False) -> bool:
        """Start a distillation if ``every`` new steps accumulated (or ``force`` and at
        least one) and no other one holds the session's lease."""
        if self.spawn_distill is None or self.cfg["llm"]["backend"] in ("", "none"):
            return False
        s = W.session(self.conn, key)
        pending = s.get("steps", 0) - s.get("distilled_step", 0)
        if pending <= 0 or (pending < int(self.w["every"]) and not force):
            return False
        owner = f"{os.getpid()}-{self.now}"
        if not W.try_lease(self.conn, key, owner, self.now):
            return False
        self.spawn_distill(key, owner)
        return True

    # ------------------------------------------------------------------ inject
    def _facts_touched(self, event: HookEvent) -> list[dict]:
        """The facts about the files the event's tool touches (none when the watcher is
        off or the tool touches no file), each reported under the path the agent used."""
        tool = event.tool
        if not self.w.get("enabled", True) or not is_file_tool(tool.name):
            return []
        paths = files_touched(tool, event.cwd)
        # The same repository-relative file in the repository's other linked worktrees
        # carries the same facts; each is reported (and checked for staleness) under the
        # path the agent touched.
        from .worktrees import aliases

        asked = {p: p for p in paths}
        for p in paths:
            for a in aliases(p):
                asked.setdefault(a, p)
        # A fact that reads as instructions to the agent (stored by an older version, by
        # `ledger remember`, an import or MCP: never through the distiller's filter) is
        # not handed back (docs/watcher.md "What a finding must be to be handed back").
        from .admit import handed_back

        facts = handed_back(W.facts_for_files(self.conn, list(asked)), "inject")
        for f in facts:
            f["path"] = asked.get(f["path"], f["path"])
        return facts

    def inject(self, event: HookEvent, key: str) -> HookResponse | None:
        tool = event.tool
        facts = self._facts_touched(event)
        if not facts:
            return None
        step = W.session(self.conn, key).get("steps", 0) + 1  # the step this call will be
        by_path: dict[str, list[dict]] = {}
        for f in facts:
            by_path.setdefault(f["path"], []).append(f)
        settle_facts(self.conn, facts)
        # Only a call that re-investigates (reads, greps, a reading shell command) and is
        # shown settled facts brings escalation nearer; an edit acts on the facts, and
        # facts that may be stale or are disputed are worth checking again.
        investigating = is_investigating(tool)
        # The first showing is never escalated: the agent has not had a chance to act on
        # the facts yet (escalate_after below 2 acts as 2). Counts are per step, so
        # parallel calls of one model step are one showing (store.watch.escalation_step).
        threshold = max(2, int(self.w["escalate_after"]))
        level, shown, shown_paths, times, first_step = QUIET, [], [], 0, None
        with W.atomic(self.conn):
            for path, fs in by_path.items():
                settled_here = any(not unsettled(f) for f in fs)
                counted = investigating and settled_here
                # Facts shown settled that have since become stale or disputed are shown
                # once more, marked: the agent was told they hold.
                injections, first = W.escalation_step(self.conn, key, path, max(f["seq"] for f in fs), step,
                                                      counted=counted, reshow=not settled_here)
                # injections == 0: this step already showed the path's facts (a parallel
                # call), or an uncounted showing of facts already shown
                if counted:
                    lvl = ESCALATED if injections >= threshold else GENTLE if injections == 1 else QUIET
                else:
                    lvl = GENTLE if injections == 1 else QUIET
                if lvl == QUIET:
                    continue
                if _LEVEL_RANK[lvl] > _LEVEL_RANK[level]:
                    level = lvl
                # Times *shown*: earlier injections of this path plus this one, not the
                # quiet calls between them that the escalation counter also counts.
                shown_times = 1 if lvl == GENTLE else W.times_shown(self.conn, key, path, first if first is not None else step) + 1
                if shown_times > times:
                    times, first_step = shown_times, first
                shown.extend(fs)
                shown_paths.append(path)
            if level == QUIET:
                return None
            text, ids = render_facts(shown, level=level, times=times, steps=step - (first_step or step),
                                     now=self.now, max_facts=int(self.w["max_facts"]), max_chars=int(self.w["max_chars"]))
            if not ids:
                _too_small(self.w)
                return None  # not even one fact fits max_chars: a header alone says nothing
            # A fact shown marked "may be stale" or "disputed" is not strengthened by
            # being shown: only settled facts count as read.
            unsure = {f["id"] for f in shown if f["id"] in ids and unsettled(f)}
            # Only the paths whose facts were shown: times_shown counts these rows.
            W.record_injection(self.conn, key, step, level, ids, shown_paths, len(text), reader_agent(event), self.now,
                               counted_ids=[i for i in ids if i not in unsure])
        deny = text if level == ESCALATED and investigating and self.w.get("deny_on_escalation") else None
        return HookResponse(additional_context=text, deny_reason=deny)


def _too_small(w: dict) -> None:
    log_line(f"inject: watcher.max_chars {w['max_chars']} leaves no room for any fact; nothing injected "
             "(ledger config set watcher.max_chars 1200)")


class _ShownMemo:
    """Which files' facts a session was shown while its store was read-only:
    ``$LEDGER_HOME/readonly-shown/<hash of the session key>.json``, ``{path: highest seq
    shown}``. Outside the store (it cannot be written); best effort: unreadable means
    nothing shown yet, unwritable means shown again next time. Notes untouched for
    :data:`MEMO_DAYS` days are removed when another is written (sessions end)."""

    MEMO_DAYS = 30

    def __init__(self, key: str):
        import hashlib

        from ..paths import home_dir

        name = hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()[:24] + ".json"
        self.path = os.path.join(home_dir(), "readonly-shown", name)
        self.seen: dict[str, int] = {}
        self.changed = False
        try:
            import json

            with open(self.path, encoding="utf-8") as fh:
                data = json.load(fh)
            if isinstance(data, dict):
                self.seen = {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, int)}
        except (OSError, ValueError):
            pass

    def fresh(self, path: str, seq: int) -> bool:
        """True (and noted) when ``path`` has facts up to ``seq`` not shown yet."""
        if self.seen.get(path, -1) >= seq:
            return False
        self.seen[path] = seq
        self.changed = True
        return True

    def save(self) -> None:
        if not self.changed:
            return
        try:
            import json

            os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
            tmp = f"{self.path}.{os.getpid()}.tmp"
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(self.seen, fh)
            os.replace(tmp, self.path)
        except OSError as exc:
            log_line(f"read-only store: cannot note the facts shown ({exc}); they will be shown again")
            return
        folder = os.path.dirname(self.path)
        old = time.time() - self.MEMO_DAYS * 86400
        try:
            for name in os.listdir(folder):
                path = os.path.join(folder, name)
                try:
                    if os.stat(path).st_mtime < old:
                        os.unlink(path)
                except OSError:
                    pass  # another hook removed it first
        except OSError:
            pass


def is_stale(f: dict) -> bool:
    """True when the fact's file changed since the fact was learned
    (:func:`ledger.filekeys.is_changed`). A fact recorded without file state is not stale."""
    return is_changed(f["path"], f.get("size"), f.get("mtime_ms"), f.get("sha256"))


STALE_MARK = " (may be stale: the file changed since this was learned)"
GONE_MARK = " (may be stale: the file is gone since this was learned)"
MIN_TEXT = 60  # characters of fact text worth showing when a fact must be cut to fit
OTHER_TEXT = 60  # characters of the other side's text quoted in a "disputed" mark


def stale_mark(f: dict) -> str:
    """The mark for a fact whose file changed (or is gone) since it was learned; ``""``
    when it still holds. ``f`` has ``path`` and the recorded file state."""
    if not is_stale(f):
        return ""
    return GONE_MARK if not os.path.exists(f["path"]) else STALE_MARK


def settle_facts(conn, facts: list[dict], local=None) -> list[dict]:
    """Set, on each fact dict (in place; also returned), what says whether it is settled:

    * ``stale``: :data:`STALE_MARK`, :data:`GONE_MARK` or ``""``. A fact row with a
      ``path`` (:func:`ledger.store.watch.facts_for_files`) is judged on that file; one
      without (:func:`~ledger.store.watch.strongest_facts`) on all its file keys: stale
      when any changed. ``local(path) -> path`` maps a key to the copy the agent works
      on (another linked worktree's file, judged here).
    * ``disputes``: the first of the open conflicts and unjudged candidates it is part
      of, with their count (:func:`ledger.store.watch.disputes`), None when none.

    One query for the disagreements and, for rows without a path, one for their files;
    a ``stat`` per file key (a hash only when size and mtime disagree)."""
    ids = list(dict.fromkeys(f["id"] for f in facts))
    disp = W.disputes(conn, ids)
    need = [i for i in ids if any(f["id"] == i and "path" not in f for f in facts)]
    keys = W.fact_files(conn, need) if need else {}
    for f in facts:
        if "path" in f:
            f["stale"] = stale_mark(f)
        else:
            f["stale"] = ""
            for k in keys.get(f["id"], []):
                if local is not None:
                    k = dict(k, path=local(k["path"]))
                mark = stale_mark(k)
                if mark:
                    f["stale"] = mark
                    break
        f["disputes"] = disp.get(f["id"])
    return facts


def dispute_mark(f: dict, listed: frozenset | set = frozenset()) -> str:
    """The mark for a fact in an open conflict or an unjudged conflict candidate
    (``f["disputes"]``, set by :func:`settle_facts`): the other side's id, the start of
    its text unless the other side is among ``listed`` (the ids shown in the same
    block), and the conflict or candidate id; ``""`` when undisputed."""
    d = f.get("disputes")
    if not d:
        return ""
    other = d["other"]
    if other not in listed:
        text = " ".join(str(d["other_text"]).split())
        if len(text) > OTHER_TEXT:
            text = text[: OTHER_TEXT - 1].rstrip() + "…"
        other += f' "{text}"'
    if d["status"] == "open":
        mark = f" (disputed: contradicts {other}; conflict {d['ref']} open, not yet resolved"
    else:
        mark = f" (disputed: conflicts with {other}, not yet judged: {d['ref']}"
    if d.get("count", 1) > 1:
        mark += f"; +{d['count'] - 1} more"
    return mark + ")"


def _stale_of(f: dict) -> str:
    """The fact's stale mark: as :func:`settle_facts` set it, else judged on its path."""
    return f["stale"] if "stale" in f else (stale_mark(f) if "path" in f else "")


def fact_marks(f: dict, listed: frozenset | set = frozenset()) -> str:
    """All marks of a fact, stale first then disputed; ``""`` for a settled fact.
    ``listed``: see :func:`dispute_mark`."""
    return _stale_of(f) + dispute_mark(f, listed)


def unsettled(f: dict) -> bool:
    """True for a fact that may be stale or is disputed (after :func:`settle_facts`)."""
    return bool(fact_marks(f))


def settled_rank(f: dict, now: int) -> tuple:
    """Sort key: settled facts first, then disputed ones, then the stale ones; within
    each, :func:`ledger.facts.rank_key` (pinned, strongest, newest). A stale fact so
    ranks below a fresh one about the same file, whatever their strengths."""
    return (int(unsettled(f)), int(bool(_stale_of(f))), *rank_key(f, now))


ESTABLISHED_HEAD = "📋 KNOWN FACTS (already established — do not re-investigate):"
UNSETTLED_HEAD = "⚖️ NOT SETTLED (may be stale or disputed — check before relying on them):"


def render_facts(facts: list[dict], *, level: str, times: int, steps: int, now: int, max_facts: int = 8,
                 max_chars: int = 1200) -> tuple[str, list[str]]:
    """The KNOWN FACTS block (docs/originals.md §2.8 shapes) with ids and strengths, bounded to
    ``max_facts`` facts and ``max_chars`` characters; says what was left out.
    Returns ``(text, ids shown)``; ``ids`` is empty when not one fact fits.

    Settled facts come first under the "already established" header (or the escalation
    header); facts that may be stale or are disputed (:func:`unsettled`: run
    :func:`settle_facts` first for the disputes) follow under :data:`UNSETTLED_HEAD`,
    never under a header that calls them established. The escalation header claims
    "ALL the information you need" only when every fact shown is settled.

    Only fact *text* is ever cut (ending in ``…``): the headers, each fact's id and
    strength, its marks and the left-out note are kept whole, so a long fact about a
    changed file still says it may be stale (issue 12). A fact is shown cut when at
    least :data:`MIN_TEXT` characters of its text fit, else it is left out."""
    from ..plaintext import visible_text

    seen, uniq = set(), []
    for f in facts:
        if f["id"] not in seen:
            seen.add(f["id"])
            uniq.append(f)
    uniq.sort(key=lambda f: settled_rank(f, now))
    listed = {f["id"] for f in uniq[:max_facts]}
    marks = {f["id"]: fact_marks(f, listed) for f in uniq}
    all_settled = not any(marks.values())
    if level == ESCALATED:
        head = [
            f"⚠️ LEDGER ESCALATION: You have been shown these facts {times} times across {steps} steps.",
            ("You have ALL the information you need about these files. STOP re-investigating them."
             if all_settled else
             "The established facts below still hold: STOP re-investigating what they cover. "
             "Check only the facts listed as not settled."),
            "Act on the facts listed below.",
            "",
            "📋 ESTABLISHED FACTS:",
        ]
    else:
        head = [ESTABLISHED_HEAD]
    lines, ids = [], []
    used = 0

    def note(left: int) -> str:
        return f"  (+{left} more fact{'s' if left != 1 else ''} left out; `ledger recall` with the file's name lists them)"

    for n, f in enumerate(uniq):
        if len(ids) >= max_facts:
            break
        # The section header goes in with the section's first fact.
        section: list[str] = []
        if marks[f["id"]]:
            if n == 0 or not marks[uniq[n - 1]["id"]]:
                section = ([""] if lines else []) + [UNSETTLED_HEAD]
        elif n == 0:
            section = head
        extra = sum(len(x) + 1 for x in section)
        prefix = fact_prefix(f, now, indent="  ")
        mark = marks[f["id"]]
        # a fact stored before controls and invisible characters were removed
        text = " ".join(visible_text(f["text"]).split())
        left_after = len(uniq) - n - 1
        # Room for this line, keeping room for the note about the facts after it.
        reserve = len(note(left_after)) + 1 if left_after else 0
        room = max_chars - used - extra - reserve - len(prefix) - len(mark) - 1
        if len(text) > room:
            if room < MIN_TEXT:
                break
            cut = text[: room - 1]
            space = cut.rfind(" ")
            text = (cut[:space] if space > room // 2 else cut).rstrip(" ,;:") + "…"
        line = prefix + text + mark
        lines.extend(section)
        lines.append(line)
        ids.append(f["id"])
        used += extra + len(line) + 1
    left = len(uniq) - len(ids)
    if left > 0 and ids:
        lines.append(note(left))
    return "\n".join(lines), ids
