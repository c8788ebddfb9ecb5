"""Claude Code: one ``ledger hook claude-code <Event>`` process per hook event.

The payload mapping is :mod:`ledger.harness.claude_code` and the settings-file editing
:mod:`ledger.harness.install`; this module is the registry entry that ties them to the
commands (see :mod:`ledger.harness.adapters` for the contract).
"""

from __future__ import annotations

from ..claude_code import parse_payload, render_response  # noqa: F401 - the hook capability

HARNESS = "claude-code"
TITLE = "Claude Code"


def probe(cwd: str, path: str) -> tuple[str, dict]:
    """What ``ledger doctor`` sends through this harness's own hook to check it end to
    end: ``(event, payload)`` for a finished Read of ``path`` in ``cwd``."""
    return "PostToolUse", {
        "hook_event_name": "PostToolUse", "session_id": "ledger-doctor", "cwd": cwd, "transcript_path": "",
        "tool_name": "Read", "tool_use_id": "toolu_doctor", "tool_input": {"file_path": path},
        "tool_response": {"type": "text", "file": {"filePath": path, "content": "doctor\n"}}}


def install(scope: str, project_dir: str | None, *, link: bool = False, env: dict | None = None) -> dict:
    """Add ledger's hooks to Claude Code's settings (``link`` does not apply); ``env``
    (``LEDGER_DB``/``LEDGER_HOME`` -> absolute path) goes in front of each hook command."""
    from ..install import install_claude_code

    return install_claude_code(scope, project_dir, env=env)


def uninstall(scope: str, project_dir: str | None) -> dict:
    from ..install import uninstall_claude_code

    return uninstall_claude_code(scope, project_dir)


def install_lines(r: dict, scope: str) -> list[str]:
    lines = [f"✓ hooks for {', '.join(r['events'])} in {r['path']}"
             + (f" (replaced {r['replaced']} old ones)" if r["replaced"] else "")]
    if scope != "user" and r.get("git", True):
        lines.append("  That file is this machine's (the hook command is an absolute path), so it stays out of "
                     "version control" + (f"; added to {r['git_exclude']}" if r.get("git_exclude") else "") + ".")
    elif scope != "user" and r.get("root"):
        from pathlib import Path

        from ..install import root_note

        lines.append(root_note(Path(r["root"]), "Claude Code", ".claude/"))
    if r.get("moved_from"):
        lines.append(f"  Moved ledger's hooks out of the shared {r['moved_from']}.")
    if r.get("store"):
        how = (f"written into the hook command as {' and '.join(sorted(r['store_env']))}" if r.get("store_env")
               else "the default; Claude Code's $LEDGER_DB or $LEDGER_HOME, if set there, wins")
        lines.append(f"  Store: {r['store']} ({how})")
    return lines
