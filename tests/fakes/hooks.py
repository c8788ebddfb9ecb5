"""Claude Code hook payloads (docs/harness-contracts.md §A3) and two ways to deliver them: in
process through :func:`ledger.harness.runner.handle_payload` (with a chosen ``now``) or
as a real ``ledger hook claude-code <Event>`` subprocess, exactly as Claude Code runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

_BIN = Path(sys.executable).with_name("ledger")
LEDGER_BIN = str(_BIN)


_IDS = iter(range(1, 10**9))


def _tid(prefix: str, kw: dict) -> str:
    """The ``tool_use_id`` given in ``kw`` (popped), else a fresh one: every call a
    harness makes has its own id, and ledger stores one observation per id."""
    return kw.pop("tool_use_id", None) or f"{prefix}{next(_IDS):06d}"


def payload(event: str, *, session: str = "s1", cwd: str | os.PathLike = "/tmp", **fields) -> dict:
    d = {"session_id": session, "transcript_path": f"/tmp/{session}.jsonl", "cwd": str(cwd),
         "hook_event_name": event, "permission_mode": "default"}
    d.update(fields)
    return d


def pre_read(path: str | os.PathLike, **kw) -> dict:
    return payload("PreToolUse", tool_name="Read", tool_input={"file_path": str(path)}, tool_use_id=_tid("toolu_r", kw), **kw)


def pre_bash(command: str, **kw) -> dict:
    return payload("PreToolUse", tool_name="Bash", tool_input={"command": command}, tool_use_id=_tid("toolu_b", kw), **kw)


def post_bash(command: str, stdout: str = "", stderr: str = "", **kw) -> dict:
    return payload("PostToolUse", tool_name="Bash", tool_input={"command": command}, tool_use_id=_tid("toolu_b", kw),
                   tool_response={"stdout": stdout, "stderr": stderr, "interrupted": False, "isImage": False},
                   duration_ms=12, **kw)


def post_read(path: str | os.PathLike, content: str = "", **kw) -> dict:
    return payload("PostToolUse", tool_name="Read", tool_input={"file_path": str(path)}, tool_use_id=_tid("toolu_r", kw),
                   tool_response={"type": "text", "file": {"filePath": str(path), "content": content, "numLines": 1,
                                                           "startLine": 1, "totalLines": 1}}, **kw)


def post_edit(path: str | os.PathLike, **kw) -> dict:
    return payload("PostToolUse", tool_name="Edit", tool_input={"file_path": str(path), "old_string": "a", "new_string": "b"},
                   tool_use_id=_tid("toolu_e", kw), tool_response={"filePath": str(path), "structuredPatch": []}, **kw)


def post_write(path: str | os.PathLike, content: str = "x", **kw) -> dict:
    return payload("PostToolUse", tool_name="Write", tool_input={"file_path": str(path), "content": content},
                   tool_use_id=_tid("toolu_w", kw), tool_response={"type": "create", "filePath": str(path), "content": content}, **kw)


def handle(p: dict | str | bytes, *, db, now: int, cfg: dict | None = None, spawn=None, expected: str | None = None) -> str:
    """One payload in process; returns what the hook would print. A finished tool call
    that the hook spools first (a PostgreSQL store) is drained at once, in process, as
    the detached drain process would (tests/test_pg_hook.py runs that process)."""
    from ledger.harness.runner import handle_payload
    from ledger.watcher import config as config_mod

    raw = p if isinstance(p, (str, bytes)) else json.dumps(p)
    if cfg is None:
        cfg = config_mod.load(os.devnull)
    spawn = spawn or (lambda key, owner: None)

    def drain_now(target: str) -> None:
        from ledger.session import record
        from ledger.watcher.engine import Engine

        engine = Engine.open(target, cfg, now, spawn_distill=spawn, notes=record)
        try:
            engine.drain_spool(raise_unavailable=True)
        finally:
            engine.close()

    return handle_payload("claude-code", raw.encode() if isinstance(raw, str) else raw, expected, db=str(db), now=now,
                          spawn=spawn, cfg=cfg, drainer=drain_now)


def wait_drained(db, timeout: float = 60, home=None) -> None:
    """Wait until the spool of the store at ``db`` is empty and no drain process runs
    (hook subprocesses on a store that spools first leave the upload to one). ``home``:
    the hooks' ``$LEDGER_HOME`` when it is not this process's (the spool is under it).
    Raises AssertionError when that takes longer than ``timeout`` seconds."""
    from conftest import spool_settled

    spool_settled(db, home=home, timeout_s=timeout, idle=True)


def context_of(out: str) -> str:
    """The additionalContext (or deny reason) of a hook answer; ``""`` for none."""
    if not out:
        return ""
    d = json.loads(out)
    h = d.get("hookSpecificOutput", {})
    return h.get("additionalContext") or h.get("permissionDecisionReason") or d.get("reason") or ""


def run_hook(event: str, p: dict | str | bytes | None, *, env: dict | None = None, args: list[str] | None = None,
             timeout: float = 30) -> subprocess.CompletedProcess:
    """``ledger hook claude-code <event>`` in a subprocess; stdin = the payload."""
    full = dict(os.environ)
    for k, v in (env or {}).items():
        if v is None:
            full.pop(k, None)
        else:
            full[k] = str(v)
    data = b"" if p is None else (p if isinstance(p, bytes) else (p.encode() if isinstance(p, str) else json.dumps(p).encode()))
    argv = [LEDGER_BIN, "hook", *(args if args is not None else ["claude-code", event])]
    return subprocess.run(argv, input=data, capture_output=True, env=full, timeout=timeout)


def cfg_with(**watcher) -> dict:
    from ledger.watcher import config as config_mod

    cfg = config_mod.load(os.devnull)
    for k, v in watcher.items():
        if k.startswith("llm_"):
            cfg["llm"][k[4:]] = v
        else:
            cfg["watcher"][k] = v
    return cfg
