"""``ledger hook <harness> [event]``: the process a harness runs on every hook event.

Contract: read the payload on stdin, answer in the harness's output format, and never
break the agent. Whatever goes wrong inside (bad JSON, a missing, locked or corrupt
store, a full disk, a bug) the process exits 0, prints nothing on stdout, and appends
one line to ``$LEDGER_HOME/hook.log``. ``LEDGER_HOOKS_DISABLED=1`` (or ``true``, ``yes``,
``on``; ``0``/``false``/``no``/``off`` leave the hooks on, :mod:`ledger.flags`) turns every
hook into a no-op (the distiller sets it for the LLM command it runs). A value that is
not a boolean leaves the hooks on and is logged once (:func:`ledger.watcher.config.load_logged`).

Imports only the standard library and ledger's stdlib-only modules; a test checks that.
"""

from __future__ import annotations

import os
import sys
import time

from ..flags import env_flag
from ..log import log_line

#: How long a hook waits for another process's write lock before giving up (failing
#: open). The store's default (10 s) equals the hook timeout ``ledger install`` sets, so
#: a store locked by a long writer would have the harness kill the hook at its limit.
HOOK_BUSY_TIMEOUT_MS = 2_000
#: A hook applies pending schema changes itself only to a store of at most this many
#: memories (the longest, m021, rewrites index rows: about 0.15 s of CPU per 2,000
#: memories). A larger store is migrated by the detached drain process, which has no
#: time budget, while the hook spools its finished tool call and answers nothing
#: (docs/watcher.md "Migrations").
HOOK_MIGRATE_AT_MOST = 2_000


def write_answer(text: str, stream=None) -> None:
    """Write ``text`` to stdout as UTF-8 bytes, whatever ``PYTHONIOENCODING`` or the
    locale say (an ASCII stdout would raise on the em dash of the Session State block and
    lose it). Harnesses read hook output as UTF-8."""
    out = stream if stream is not None else sys.stdout
    out.flush()
    buf = getattr(out, "buffer", None)
    data = text.encode("utf-8", "replace")
    if buf is not None:
        buf.write(data)
        buf.flush()
    else:  # a text-only stream (tests): nothing else to do
        out.write(data.decode("utf-8"))
        out.flush()


def _session_state(event, engine):
    """Session-state events (Stop, PreCompact, SessionStart...) and the finished tool
    calls the session record keeps (edits, shell commands, todo lists, plans); for other
    finished calls only the check for a Session State due after a compaction."""
    if event.kind == "post_tool":
        from ..session.record import RECORDED_TOOLS

        if event.tool is None or (event.tool.name or "").lower() not in RECORDED_TOOLS:
            # Not a call the record keeps; still the place to carry the Session State
            # after a compaction the harness could not add it to (Gemini).
            from ..session.state import carry_after_compaction

            return carry_after_compaction(event, engine)
    from ..session.state import handle_session_event

    return handle_session_event(event, engine)


def _why_no_session(raw: bytes | str) -> str:
    """Why a payload has no usable ``session_id``, for the hook.log line."""
    import json

    try:
        sid = json.loads(raw).get("session_id", _MISSING)
    except (ValueError, AttributeError):
        sid = _MISSING
    if sid is _MISSING:
        return "no session_id in it"
    if isinstance(sid, str):
        return "session_id is empty"
    if sid is None:
        return "session_id is null"
    return f"session_id is {json.dumps(sid)[:40]} ({type(sid).__name__}), not a string"


_MISSING = object()


def handle_payload(harness: str, raw: bytes, expected_event: str | None, *, db: str, now: int | None = None,
                   spawn=None, cfg: dict | None = None, close: bool = True, drainer=None) -> str:
    """Process one payload and return the text to print (may be empty). Raises on any
    problem; :func:`hook_main` turns that into a log line. ``close=False`` leaves the
    connection for process exit (see :func:`hook_main`).

    Events that need no store are answered without opening it (docs/watcher.md, "What a
    hook connects for"): a tool about to run that cannot touch a file with facts, and,
    when the store spools first (:func:`ledger.watcher.engine.spools_first`: a
    PostgreSQL store), a finished tool call, which goes to this machine's spool; then
    ``drainer(db)`` (default :func:`ledger.watcher.spool.spawn_drainer`) starts the
    detached process that stores it, unless one runs."""
    from .adapters import with_hook

    adapter = with_hook(harness)  # the registry: one module per harness (ledger/harness/adapters/)
    from ..errors import StoreUnavailable
    from ..session import record as notes
    from ..watcher import config as config_mod
    from ..watcher.engine import SKIP, SPOOL, Engine, spools_first

    event = adapter.parse_payload(raw, expected_event)
    if not event.session_id:
        # Every harness names its session; without a name the call would be filed under
        # one shared nameless session (mixing unrelated calls): dropped, and said why.
        log_line(f"{harness} {event.raw_event_name or event.kind}: payload dropped: {_why_no_session(raw)}")
        return ""
    # An adapter may turn one hook call into several engine events (Gemini's AfterTool is
    # the injection decision plus the observation) and merge the answers.
    expand = getattr(adapter, "expand", None)
    events = expand(event) if expand is not None else [event]
    if cfg is None:
        cfg = config_mod.load_logged()  # a bad setting falls back to its default, one log line each
    now = now if now is not None else time.time_ns() // 1_000_000
    offline = Engine.offline(db, cfg, now, notes=notes)
    first = spools_first(db, cfg)
    plan = [offline.needs(e, first and not _carry_due(offline.spool, e)) for e in events]
    if all(p in (SKIP, SPOOL) for p in plan):
        spooled = False
        for e, p in zip(events, plan):
            if p == SPOOL:
                try:
                    offline.spool_first(e)
                    spooled = True
                except OSError as exc:  # the spool cannot be written: store it the usual way
                    log_line(f"spool: {type(exc).__name__}: {exc}; storing directly")
                    plan = None
                    break
        if plan is not None:
            if spooled:
                from ..watcher.spool import spawn_drainer

                (drainer or spawn_drainer)(db)
            return ""
    if any(e.kind == "pre_compact" for e in events) and first:
        _mark_carry(offline.spool, events[0])
    try:
        engine = Engine.open(db, cfg, now, busy_timeout_ms=HOOK_BUSY_TIMEOUT_MS, spawn_distill=spawn,
                             session_state=_session_state, notes=notes, defer_migrations_above=HOOK_MIGRATE_AT_MOST)
    except StoreUnavailable as exc:
        reason = getattr(exc, "reason", "")
        # A shared store out of reach (network, server down): a finished tool call waits
        # in this machine's spool and the next hook that reaches the store drains it.
        # The hook still fails open: the error is logged by hook_main, the agent goes on.
        if reason in ("unreachable", "migrating"):
            offline.spool_observation(event, exc)
        if reason == "migrating":
            # A large store with schema changes pending: the drain process applies them
            # (no time budget) and then stores what waits in the spool.
            try:
                if drainer is not None:
                    pid = drainer(db)
                else:
                    from ..watcher.spool import spawn_drainer

                    pid = spawn_drainer(db, migrate=True)
                handed = f"Handed to the drain process ({f'pid {pid}' if pid else 'already running'})"
            except OSError as err:
                handed = f"The drain process could not be started ({err}); the next hook tries again"
            log_line(f"{harness} {event.raw_event_name or event.kind}: {exc} {handed}; this call answers nothing.")
            return ""
        raise
    try:
        answers = [engine.handle(e) for e in events]
        resp = adapter.merge(answers) if len(answers) > 1 else answers[0]
        if first:
            try:
                _clear_carry(engine, events)
            except Exception as exc:  # noqa: BLE001 - the answer (maybe the carried Session State) matters more
                log_line(f"carry mark: {type(exc).__name__}: {exc}")
    finally:
        if close:
            engine.close()
    if resp is None:
        return ""
    return adapter.render_response(event, resp)


# A finished tool call may have to carry the Session State back after a compaction
# (session.state.carry_after_compaction), which takes the store. Where finished calls
# spool first, a PreCompact leaves a mark file for its session in this machine's spool
# folder (a session runs on one machine), and the session's finished calls connect
# while it is there; it goes once the store holds no compaction mark for the session.
def _carry_file(folder: str | None, event) -> str | None:
    if folder is None:
        return None
    import hashlib

    from ..watcher.engine import session_key

    return os.path.join(folder, "carry-" + hashlib.sha256(session_key(event).encode("utf-8", "replace")).hexdigest()[:16])


def _carry_due(folder: str | None, event) -> bool:
    path = _carry_file(folder, event)
    return path is not None and os.path.exists(path)


def _mark_carry(folder: str | None, event) -> None:
    path = _carry_file(folder, event)
    if path is not None:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        with open(path, "w"):
            pass


def _clear_carry(engine, events) -> None:
    from ..session.state import compaction_pending

    for e in events:
        path = _carry_file(engine.spool, e)
        if e.kind in ("post_tool", "user_prompt", "session_start") and path and os.path.exists(path) \
                and not compaction_pending(engine.conn, e):
            try:
                os.unlink(path)
            except OSError:
                pass


def hook_main(args: list[str], *, fast_exit: bool = False) -> int:
    """Entry point for ``ledger hook <harness> [event]``. Always returns 0.

    ``fast_exit`` (the console command) ends the process with ``os._exit(0)`` as soon as
    the answer is flushed, leaving the SQLite connection open: closing the last
    connection checkpoints the WAL with an fsync, and interpreter teardown adds more,
    together about as much as the hook's own work. Every write was committed before, so
    nothing is lost; the next process simply finds the WAL as it was."""
    if env_flag("LEDGER_HOOKS_DISABLED"):
        return 0
    try:
        _hook(args, close=not fast_exit)
    finally:
        if fast_exit:
            try:
                sys.stdout.flush()
            finally:
                os._exit(0)
    return 0


#: The most bytes of one hook payload read from stdin (64 MiB); more is dropped and logged.
MAX_PAYLOAD_BYTES = 64 * 1024 * 1024

def _hook(args: list[str], *, close: bool) -> None:
    try:
        if not args:
            log_line("hook called without a harness; usage: ledger hook claude-code [EventName]")
            return
        harness, expected = args[0], (args[1] if len(args) > 1 else None)
        # Bounded: a payload is one JSON object (a big Write is a few MB); a stdin that
        # never ends would otherwise fill the memory until a MemoryError.
        raw = sys.stdin.buffer.read(MAX_PAYLOAD_BYTES + 1)
        if len(raw) > MAX_PAYLOAD_BYTES:
            log_line(f"hook {' '.join(args[:2])}: payload dropped: more than {MAX_PAYLOAD_BYTES:,} bytes on stdin "
                     "(a harness sends one JSON object)")
            return
        from ..paths import check_environment, db_file

        check_environment()  # a variable that is not UTF-8: one log line naming it, the agent goes on

        out = handle_payload(harness, raw, expected, db=db_file(), close=close)
        if out:
            write_answer(out)
    except BaseException as exc:  # noqa: BLE001 - fail open, whatever it was
        if isinstance(exc, KeyboardInterrupt):
            return
        log_line(f"hook {' '.join(args)[:80]}: {type(exc).__name__}: {exc}")
