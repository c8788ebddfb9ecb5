"""Codex CLI hook payloads as Codex 0.169.0 sends them (docs/harness-contracts.md, Codex):
every field its generated input schema requires for the event, with the values the real
``codex exec`` was seen to send (shell tools as ``Bash`` with ``{"command": str}``,
``apply_patch`` with the patch text in ``command``, PostToolUse ``tool_response`` the
text the model saw). Plus :func:`run_codex_hook`, the real ``ledger hook codex <Event>``
subprocess."""

from __future__ import annotations

import itertools
import json
import os
import subprocess

from fakes.hooks import LEDGER_BIN

_IDS = itertools.count(1)
SESSION = "019a2300-f4ad-7c81-aeac-eaa29d529cbe"


def base(event: str, *, session: str = SESSION, cwd: str | os.PathLike = "/tmp", turn: bool = True, **fields) -> dict:
    """The fields every event (but SessionEnd) carries; ``turn`` adds ``turn_id``."""
    d = {"session_id": session, "transcript_path": f"/tmp/codex-home/sessions/rollout-{session}.jsonl",
         "cwd": str(cwd), "hook_event_name": event, "model": "gpt-5.5", "permission_mode": "default"}
    if turn:
        d["turn_id"] = f"019a2300-f53b-7d12-b926-{next(_IDS):012d}"
    d.update(fields)
    return d


def session_start(source: str = "startup", **kw) -> dict:
    return base("SessionStart", turn=False, source=source, **kw)


def user_prompt(prompt: str, **kw) -> dict:
    return base("UserPromptSubmit", prompt=prompt, **kw)


def _call_id(kw: dict) -> str:
    return kw.pop("tool_use_id", None) or f"call_{next(_IDS)}"


def pre_bash(command: str, **kw) -> dict:
    return base("PreToolUse", tool_name="Bash", tool_input={"command": command}, tool_use_id=_call_id(kw), **kw)


def post_bash(command: str, output: str = "", **kw) -> dict:
    return base("PostToolUse", tool_name="Bash", tool_input={"command": command}, tool_response=output,
                tool_use_id=_call_id(kw), **kw)


def patch(*lines: str) -> str:
    """A patch in Codex's ``*** Begin Patch`` format made of ``lines``."""
    return "*** Begin Patch\n" + "\n".join(lines) + "\n*** End Patch\n"


def pre_patch(text: str, **kw) -> dict:
    return base("PreToolUse", tool_name="apply_patch", tool_input={"command": text}, tool_use_id=_call_id(kw), **kw)


def post_patch(text: str, *, exit_code: int = 0, summary: str = "", **kw) -> dict:
    response = f"Exit code: {exit_code}\nWall time: 0 seconds\nOutput:\n{summary or 'Success. Updated the following files:'}\n"
    return base("PostToolUse", tool_name="apply_patch", tool_input={"command": text}, tool_response=response,
                tool_use_id=_call_id(kw), **kw)


def post_mcp(server: str, tool: str, arguments: dict, result: dict, **kw) -> dict:
    return base("PostToolUse", tool_name=f"mcp__{server}__{tool}", tool_input=arguments, tool_response=result,
                tool_use_id=_call_id(kw), **kw)


def stop(last: str | None = "done", active: bool = False, **kw) -> dict:
    return base("Stop", stop_hook_active=active, last_assistant_message=last, **kw)


def pre_compact(trigger: str = "auto", **kw) -> dict:
    d = base("PreCompact", trigger=trigger, **kw)
    d.pop("permission_mode")  # not in PreCompact's schema
    return d


def session_end(**kw) -> dict:
    d = base("SessionEnd", turn=False, reason="other", **kw)
    d.pop("permission_mode")
    d.pop("model")
    return d


def run_codex_hook(event: str, p: dict | str | bytes, *, env: dict | None = None, timeout: float = 30) -> subprocess.CompletedProcess:
    """``ledger hook codex <event>`` in a subprocess, as Codex runs it; stdin = ``p``."""
    full = dict(os.environ)
    for k, v in (env or {}).items():
        if v is None:
            full.pop(k, None)
        else:
            full[k] = str(v)
    data = p if isinstance(p, bytes) else (p.encode() if isinstance(p, str) else json.dumps(p).encode())
    return subprocess.run([LEDGER_BIN, "hook", "codex", event], input=data, capture_output=True, env=full, timeout=timeout)
