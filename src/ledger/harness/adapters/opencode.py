"""OpenCode: a thin JavaScript plugin forwarding to one ``ledger __serve-session opencode``
child over JSON lines.

The payload mapping is :mod:`ledger.harness.opencode`, the child
:mod:`ledger.harness.session_server` and the plugin placement
:mod:`ledger.harness.opencode_install`; this module is the registry entry (see
:mod:`ledger.harness.adapters` for the contract).
"""

from __future__ import annotations

HARNESS = "opencode"
TITLE = "OpenCode"


def probe(cwd: str, path: str) -> tuple[None, dict]:
    """``ledger doctor``'s check of this harness's path: ``(None, event)``, the
    ``tool.execute.after`` of a read of ``path`` in ``cwd`` as the plugin forwards it to
    ``ledger __serve-session opencode`` (there is no per-event command)."""
    return None, {"hook": "tool.execute.after", "directory": cwd, "worktree": cwd,
                  "input": {"tool": "read", "sessionID": "ses_doctor", "callID": "call_doctor",
                            "args": {"filePath": path}},
                  "output": {"title": "notes.txt", "output": "<content>\n1: doctor\n</content>",
                             "metadata": {"truncated": False}}}


def serve_session(args: list[str]) -> int:
    """``ledger __serve-session opencode [--db PATH]``."""
    from ..session_server import main

    return main([HARNESS, *args])


def install(scope: str, project_dir: str | None, *, link: bool = False, env: dict | None = None) -> dict:
    """Place the plugin file (``link``: a symlink to the packaged one). ``env`` is not
    written: the plugin's child inherits OpenCode's environment."""
    from ..opencode_install import install_opencode

    return install_opencode(scope, project_dir, link=link)


def uninstall(scope: str, project_dir: str | None) -> dict:
    from ..opencode_install import uninstall_opencode

    return uninstall_opencode(scope, project_dir)


def install_lines(r: dict, scope: str) -> list[str]:
    lines = [f"✓ OpenCode plugin at {r['path']} (starts {r['command'] or 'ledger'} __serve-session opencode)"]
    if scope != "user" and r.get("root") and not r.get("git", True):
        from pathlib import Path

        from ..install import root_note

        lines.append(root_note(Path(r["root"]), "OpenCode", ".opencode/plugins/"))
    db = (r.get("store_env") or {}).get("LEDGER_DB")
    if db:  # the plugin carries no variables: OpenCode's own environment picks the store
        lines.append(f"  Store: {r.get('store') or db} only when OpenCode starts with LEDGER_DB set; "
                     f"to make it the default everywhere: ledger config set store.db '<the same location>'")
    return lines
