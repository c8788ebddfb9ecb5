"""Codex CLI: one ``ledger hook codex <Event>`` process per hook event.

The payload mapping is :mod:`ledger.harness.codex` and the ``hooks.json`` editing and
trust reading :mod:`ledger.harness.codex_install`; this module is the registry entry
(see :mod:`ledger.harness.adapters` for the contract).
"""

from __future__ import annotations

from ..codex import parse_payload, render_response  # noqa: F401 - the hook capability

HARNESS = "codex"
TITLE = "Codex"


def probe(cwd: str, path: str) -> tuple[str, dict]:
    """``ledger doctor``'s check of this hook path: ``(event, payload)`` for a finished
    shell command reading ``path`` in ``cwd`` (Codex reads files through its shell)."""
    return "PostToolUse", {
        "hook_event_name": "PostToolUse", "session_id": "ledger-doctor", "turn_id": "ledger-doctor-1", "cwd": cwd,
        "transcript_path": None, "model": "doctor", "permission_mode": "default", "tool_name": "Bash",
        "tool_use_id": "call_doctor", "tool_input": {"command": f"cat {path}"}, "tool_response": "doctor\n"}


def install(scope: str, project_dir: str | None, *, link: bool = False, env: dict | None = None) -> dict:
    """Add ledger's hooks to Codex's ``hooks.json`` (``link`` does not apply); ``env``
    (``LEDGER_DB``/``LEDGER_HOME`` -> absolute path) goes in front of each command."""
    from ..codex_install import install_codex

    return install_codex(scope, project_dir, env=env)


def uninstall(scope: str, project_dir: str | None) -> dict:
    from ..codex_install import uninstall_codex

    return uninstall_codex(scope, project_dir)


def install_lines(r: dict, scope: str) -> list[str]:
    from ..codex_install import PROJECT_TRUST_HINT, TRUST_HINT

    lines = [f"✓ hooks for {', '.join(r['events'])} in {r['path']}"
             + (f" (replaced {r['replaced']} old ones)" if r["replaced"] else "")]
    if scope != "user":
        lines.append("  That file is this machine's (the hook command is an absolute path), so it stays out of version "
                     "control" + (f"; added to {r['git_exclude']}" if r.get("git_exclude") else "") + ".")
        if r.get("project_trusted") is not True:
            lines.append("  " + PROJECT_TRUST_HINT)
    mcp = r.get("mcp") or {}
    if mcp.get("error"):
        lines.append(f"  MCP server not registered: {mcp['error']}")
    elif mcp.get("path"):
        lines.append(f"✓ MCP server `ledger mcp` in {mcp['path']} ([mcp_servers.ledger])")
    trust = r.get("trust") or {}
    if trust.get("total") and trust.get("trusted") != trust.get("total"):
        lines.append("  " + TRUST_HINT)
    if r.get("compact_prompt"):
        lines.append(f"  Compaction prompt that keeps the task, files and decisions: {r['compact_prompt']}; Codex uses it with "
                     f"experimental_compact_prompt_file = \"{r['compact_prompt']}\" at the top of its config.toml.")
    if r.get("store"):
        how = (f"written into the hook command as {' and '.join(sorted(r['store_env']))}" if r.get("store_env")
               else "the default; Codex's $LEDGER_DB or $LEDGER_HOME, if set there, wins")
        lines.append(f"  Store: {r['store']} ({how})")
    return lines
