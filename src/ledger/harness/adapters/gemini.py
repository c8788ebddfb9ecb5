"""Gemini CLI: one ``ledger hook gemini <Event>`` process per hook event, declared by a
Gemini extension that ``ledger install gemini`` writes.

The payload mapping is :mod:`ledger.harness.gemini` and the extension
:mod:`ledger.harness.gemini_install`; this module is the registry entry (see
:mod:`ledger.harness.adapters` for the contract).
"""

from __future__ import annotations

from ..gemini import expand, merge, parse_payload, render_response  # noqa: F401 - the hook capability

HARNESS = "gemini"
TITLE = "Gemini CLI"


def probe(cwd: str, path: str) -> tuple[str, dict]:
    """``ledger doctor``'s check of this hook path: ``(event, payload)`` for a finished
    ``read_file`` of ``path`` in ``cwd``."""
    return "AfterTool", {
        "hook_event_name": "AfterTool", "session_id": "ledger-doctor", "cwd": cwd, "transcript_path": "",
        "timestamp": "2026-01-01T00:00:00.000Z", "tool_name": "read_file", "tool_input": {"file_path": path},
        "tool_response": {"llmContent": "doctor\n", "returnDisplay": ""}}


def install(scope: str, project_dir: str | None, *, link: bool = False, env: dict | None = None) -> dict:
    """Write ledger's extension under ``~/.gemini/extensions/ledger`` (Gemini loads
    extensions only there, whatever ``scope``); ``link`` makes it a link to a copy kept
    in ``$LEDGER_HOME``. ``env`` (``LEDGER_DB``/``LEDGER_HOME``) become extension settings."""
    from ..gemini_install import install_gemini

    return install_gemini(scope, project_dir, link=link, env=env)


def uninstall(scope: str, project_dir: str | None) -> dict:
    from ..gemini_install import uninstall_gemini

    return uninstall_gemini(scope, project_dir)


def install_lines(r: dict, scope: str) -> list[str]:
    from ..gemini_install import install_lines as lines

    return lines(r, scope)
