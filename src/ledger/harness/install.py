"""Writing and removing our hooks in a harness's configuration.

Claude Code reads hooks from ``~/.claude/settings.json`` (user) or
``<project>/.claude/settings.json`` (project); entries from all levels merge (harness
contracts §A2). We add one matcher group per event whose handler command is
``<ledger executable> hook claude-code <Event>``, recognise ours by that command, and
never touch anything else in the file. Installing twice changes nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

# PostToolUseFailure: a Bash call that exits non-zero (and any failing tool) fires it
# *instead of* PostToolUse (checked on Claude Code 2.1.332); without it the watcher would
# never observe a failed command, where error root causes are confirmed.
CLAUDE_EVENTS = ("SessionStart", "PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop", "PreCompact", "SessionEnd")
FILE_TOOLS_MATCHER = "Bash|Read|Grep|Glob|Edit|Write|MultiEdit|NotebookEdit"
MARKER = " hook claude-code "


def ledger_command() -> str:
    """Absolute path of the ``ledger`` executable, so hooks work without an activated venv."""
    exe = Path(sys.argv[0]).resolve() if sys.argv and sys.argv[0] and Path(sys.argv[0]).name == "ledger" else None
    found = exe if exe and exe.is_file() else shutil.which("ledger")
    return str(found or Path(sys.executable).with_name("ledger"))


def settings_path(scope: str, project: str | os.PathLike | None = None) -> Path:
    if scope == "user":
        return Path.home() / ".claude" / "settings.json"
    return Path(project or os.getcwd()) / ".claude" / "settings.json"


def _load(path: Path) -> dict:
    if not path.exists():
        return {}
    text = path.read_text(encoding="utf-8")
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        from ..errors import InvalidInput

        raise InvalidInput(f"{path} is not valid JSON ({exc}); fix or move it, then run install again. Nothing was changed.") from None
    if not isinstance(data, dict):
        from ..errors import InvalidInput

        raise InvalidInput(f"{path} does not hold a JSON object; nothing was changed.")
    return data


def _is_ours(handler: dict) -> bool:
    return isinstance(handler, dict) and MARKER in f" {handler.get('command', '')} "


def _strip_ours(hooks: dict) -> int:
    removed = 0
    for event in list(hooks):
        groups = hooks.get(event)
        if not isinstance(groups, list):
            continue
        kept_groups = []
        for g in groups:
            if isinstance(g, dict) and isinstance(g.get("hooks"), list):
                before = len(g["hooks"])
                g["hooks"] = [h for h in g["hooks"] if not _is_ours(h)]
                removed += before - len(g["hooks"])
                if not g["hooks"]:
                    continue
            kept_groups.append(g)
        if kept_groups:
            hooks[event] = kept_groups
        else:
            del hooks[event]
    return removed


def _write(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".ledger-tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def install_claude_code(scope: str = "project", project: str | None = None, command: str | None = None) -> dict:
    """Merge our hooks into the settings file; returns ``{"path", "events", "replaced"}``."""
    path = settings_path(scope, project)
    data = _load(path)
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        from ..errors import InvalidInput

        raise InvalidInput(f'{path}: "hooks" is not an object; nothing was changed.')
    for event in CLAUDE_EVENTS:
        if event in hooks and not isinstance(hooks[event], list):
            from ..errors import InvalidInput

            raise InvalidInput(f'{path}: hooks.{event} is not a list of matcher groups; fix it, then run install again. Nothing was changed.')
    replaced = _strip_ours(hooks)
    cmd = command or ledger_command()
    for event in CLAUDE_EVENTS:
        group: dict = {"hooks": [{"type": "command", "command": f"{_quote(cmd)} hook claude-code {event}", "timeout": 10}]}
        if event in ("PreToolUse", "PostToolUse", "PostToolUseFailure"):
            group["matcher"] = FILE_TOOLS_MATCHER if event == "PreToolUse" else "*"
        hooks.setdefault(event, []).append(group)
    _write(path, data)
    return {"path": str(path), "events": list(CLAUDE_EVENTS), "replaced": replaced}


def uninstall_claude_code(scope: str = "project", project: str | None = None) -> dict:
    """Remove exactly our handlers; returns ``{"path", "removed"}``."""
    path = settings_path(scope, project)
    if not path.exists():
        return {"path": str(path), "removed": 0}
    data = _load(path)
    hooks = data.get("hooks")
    removed = _strip_ours(hooks) if isinstance(hooks, dict) else 0
    if isinstance(hooks, dict) and not hooks:
        del data["hooks"]
    if removed:
        _write(path, data)
    return {"path": str(path), "removed": removed}


def _quote(cmd: str) -> str:
    import shlex

    return shlex.quote(cmd)
