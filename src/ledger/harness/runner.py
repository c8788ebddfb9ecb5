"""``ledger hook <harness> [event]``: the process a harness runs on every hook event.

Contract: read the payload on stdin, answer in the harness's output format, and never
break the agent. Whatever goes wrong inside (bad JSON, a missing, locked or corrupt
store, a full disk, a bug) the process exits 0, prints nothing on stdout, and appends
one line to ``$LEDGER_HOME/hook.log``. ``LEDGER_HOOKS_DISABLED=1`` turns every hook
into a no-op (the distiller sets it for the LLM command it runs).

Imports only the standard library and ledger's stdlib-only modules; a test checks that.
"""

from __future__ import annotations

import os
import sys
import time

ADAPTERS = ("claude-code",)


def log_line(message: str) -> None:
    """Append one timestamped line to ``$LEDGER_HOME/hook.log``; never raises."""
    try:
        from ..paths import ledger_home

        home = ledger_home()
        os.makedirs(home, exist_ok=True)
        with open(os.path.join(home, "hook.log"), "a", encoding="utf-8") as fh:
            fh.write(time.strftime("%Y-%m-%dT%H:%M:%S") + " " + " ".join(str(message).split())[:2000] + "\n")
    except Exception:
        pass


def spawn_distiller(db: str):
    """A ``spawn_distill(key, owner)`` that starts a detached distiller process."""

    def spawn(key: str, owner: str) -> None:
        import subprocess

        env = dict(os.environ, LEDGER_HOOKS_DISABLED="1")
        subprocess.Popen(
            [sys.executable, "-m", "ledger.watcher.distill", "--db", db, "--session", key, "--owner", owner],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, env=env, close_fds=True,
        )

    return spawn


def handle_payload(harness: str, raw: bytes, expected_event: str | None, *, db: str, now: int | None = None,
                   spawn=None, cfg: dict | None = None) -> str:
    """Process one payload and return the text to print (may be empty). Raises on any
    problem; :func:`hook_main` turns that into a log line."""
    if harness != "claude-code":
        raise ValueError(f"unknown harness {harness!r}; supported: {', '.join(ADAPTERS)}")
    from . import claude_code as adapter
    from ..session.state import handle_session_event
    from ..store.watch import open_store
    from ..watcher import config as config_mod
    from ..watcher.engine import Engine

    event = adapter.parse_payload(raw, expected_event)
    if cfg is None:
        try:
            cfg = config_mod.load()
        except ValueError as exc:
            log_line(f"config ignored: {exc}")
            cfg = config_mod.load(os.devnull)
    conn = open_store(db)
    try:
        engine = Engine(conn, cfg, now if now is not None else time.time_ns() // 1_000_000,
                        spawn_distill=spawn if spawn is not None else spawn_distiller(db), session_state=handle_session_event)
        resp = engine.handle(event)
    finally:
        conn.close()
    if resp is None:
        return ""
    return adapter.render_response(event, resp)


def hook_main(args: list[str]) -> int:
    """Entry point for ``ledger hook <harness> [event]``. Always returns 0."""
    if os.environ.get("LEDGER_HOOKS_DISABLED"):
        return 0
    try:
        if not args:
            log_line("hook called without a harness; usage: ledger hook claude-code [EventName]")
            return 0
        harness, expected = args[0], (args[1] if len(args) > 1 else None)
        raw = sys.stdin.buffer.read()
        from ..paths import db_path

        out = handle_payload(harness, raw, expected, db=str(db_path()))
        if out:
            sys.stdout.write(out)
            sys.stdout.flush()
    except BaseException as exc:  # noqa: BLE001 - fail open, whatever it was
        if isinstance(exc, KeyboardInterrupt):
            return 0
        log_line(f"hook {' '.join(args)[:80]}: {type(exc).__name__}: {exc}")
    return 0


def session_server_main(args: list[str]) -> int:
    """Reserved for the OpenCode plugin's long-lived child (JSON lines); not built yet."""
    log_line("__serve-session is not available in this version")
    return 0
