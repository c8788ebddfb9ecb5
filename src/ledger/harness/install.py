"""Writing and removing our hooks in a harness's configuration.

Claude Code reads hooks from ``~/.claude/settings.json`` (user),
``<project>/.claude/settings.json`` (project, committed by teams) and
``<project>/.claude/settings.local.json`` (project, kept out of version control); entries
from all levels merge (docs/harness-contracts.md §A2, docs in the README's watcher section). We
add one matcher group per event whose handler command is ``<ledger executable> hook
claude-code <Event>``, recognise ours by that command, and never touch anything else.

Where:

* The project is the repository root (the nearest folder upwards holding ``.git``), not
  the folder ``install`` runs in: Claude Code reads ``.claude/`` where it starts, which
  is the root.
* Our command is an absolute path into this machine's virtualenv, so project installs
  go to ``settings.local.json``; a ledger hook found in the shared ``settings.json`` (an
  older install) is moved out of it. When the root is a git checkout and git does not
  already ignore ``settings.local.json``, it is added to ``.git/info/exclude`` (local to
  this clone; nothing committed changes).

Only the ``"hooks"`` member is rewritten (in the file's own indentation); every other
byte of the file stays as the user wrote it. A file left holding ``{}`` after
uninstall is deleted (it held nothing but ours), with a ``.claude/`` folder left empty.
Installing twice changes nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

from . import filetx

# PostToolUseFailure: a Bash call that exits non-zero (and any failing tool) fires it
# *instead of* PostToolUse (checked on Claude Code 2.1.332); without it the watcher would
# never observe a failed command, where error root causes are confirmed.
# UserPromptSubmit: the user's prompts are the task in their own words (session record).
CLAUDE_EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop",
                 "PreCompact", "SessionEnd")
FILE_TOOLS_MATCHER = "Bash|Read|Grep|Glob|Edit|Write|MultiEdit|NotebookEdit"
MARKER = " hook claude-code "


def ledger_command() -> str:
    """Absolute path of the ``ledger`` executable, so hooks work without an activated venv."""
    exe = Path(sys.argv[0]).resolve() if sys.argv and sys.argv[0] and Path(sys.argv[0]).name == "ledger" else None
    found = exe if exe and exe.is_file() else shutil.which("ledger")
    return str(found or Path(sys.executable).with_name("ledger"))


LOCAL_SETTINGS = "settings.local.json"
SHARED_SETTINGS = "settings.json"


def project_root(start: str | os.PathLike | None = None) -> Path:
    """The repository root at or above ``start`` (default: the current directory): the
    nearest folder holding ``.git`` (a folder, or a file in a linked worktree). Without
    one, ``start`` itself."""
    here = Path(start or os.getcwd()).resolve()
    for d in (here, *here.parents):
        if (d / ".git").exists():
            return d
    return here


def in_git(root: Path) -> bool:
    """Whether ``root`` (a :func:`project_root`) is a git checkout's root."""
    return (root / ".git").exists()


def root_note(root: Path, harness: str, folder: str) -> str | None:
    """The line ``install`` prints when the project folder is not a git checkout (None
    when it is): a project install then goes to the folder it ran in, which only
    helps when the harness is started there, so say where it wrote and why."""
    if in_git(root):
        return None
    return (f"  {root} is not in a git checkout, so this folder is the project: {harness} reads {folder} from the "
            f"folder it starts in (up to the repository root). Start {harness} here, or run install in the repository "
            "(or pass --project <folder>).")


def settings_path(scope: str, project: str | os.PathLike | None = None) -> Path:
    """The file ``install`` writes: ``~/.claude/settings.json`` for ``user``, else
    ``<repository root>/.claude/settings.local.json``."""
    if scope == "user":
        return Path.home() / ".claude" / "settings.json"
    return project_root(project) / ".claude" / LOCAL_SETTINGS


def _shared_path(scope: str, project: str | os.PathLike | None) -> Path | None:
    return None if scope == "user" else project_root(project) / ".claude" / SHARED_SETTINGS


def _indent(text: str) -> str | int | None:
    """The indentation a JSON text uses: a tab, a number of spaces, or None when it is
    all on one line (then we write it compact too)."""
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            lead = line[: len(line) - len(stripped)]
            return "\t" if lead.startswith("\t") else len(lead)
    return None if text.strip() and "\n" not in text.strip() else 2


def _load(path: Path) -> dict:
    data, _ = _load_with_style(path)
    return data


def _load_with_style(path: Path) -> tuple[dict, dict]:
    """``(data, style)``; style is ``{"indent", "newline", "text"}`` to write the file
    back as the user had it (2 spaces and a final newline for a new file; ``text`` is
    what it held, so only our member is rewritten)."""
    style = {"indent": 2, "newline": True, "text": ""}
    if not path.exists():
        return {}, style
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:  # a folder, unreadable, not UTF-8
        from ..errors import InvalidInput

        raise InvalidInput(f"Cannot read {path}: {exc}. Fix or move it, then run this again. Nothing was changed.") from None
    if not text.strip():
        return {}, style
    style = {"indent": _indent(text), "newline": text.endswith("\n"), "text": text}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        from ..errors import InvalidInput

        raise InvalidInput(f"{path} is not valid JSON ({exc}); fix or move it, then run this again. Nothing was changed.") from None
    if not isinstance(data, dict):
        from ..errors import InvalidInput

        raise InvalidInput(f"{path} does not hold a JSON object; nothing was changed.")
    return data, style


def _is_ours(handler: dict) -> bool:
    return isinstance(handler, dict) and MARKER in f" {handler.get('command', '')} "


def strip_handlers(hooks: dict, is_ours) -> int:
    """Take the handlers ``is_ours(handler)`` recognises out of a ``hooks`` mapping in the
    shape Claude Code and Codex share (event -> matcher groups -> ``hooks`` list), in
    place: a group left without handlers goes, and so does an event left without groups.
    Anything not in that shape is kept as it is. Returns how many handlers went."""
    removed = 0
    for event in list(hooks):
        groups = hooks.get(event)
        if not isinstance(groups, list):
            continue
        kept_groups = []
        for g in groups:
            if isinstance(g, dict) and isinstance(g.get("hooks"), list):
                before = len(g["hooks"])
                g["hooks"] = [h for h in g["hooks"] if not is_ours(h)]
                removed += before - len(g["hooks"])
                if not g["hooks"]:
                    continue
            kept_groups.append(g)
        if kept_groups:
            hooks[event] = kept_groups
        else:
            del hooks[event]
    return removed


def _strip_ours(hooks: dict) -> int:
    return strip_handlers(hooks, _is_ours)


def _write(path: Path, data: dict, style: dict | None = None) -> None:
    """Write ``data`` where only its ``"hooks"`` member differs from the file's text
    (``style["text"]``): that member is rewritten in the file's indentation and every
    other byte is kept, key order, one-line arrays and spacing included (jsonc_edit.py).
    Raises InvalidInput naming the file (the temporary file removed, ``path`` as it
    was) when the folder or the file cannot be written."""
    from .jsonc_edit import rewrite

    style = style or {"indent": 2, "newline": True}
    text = rewrite(style.get("text") or "", data, "hooks", indent=style["indent"], newline=style["newline"])
    try:
        filetx.write_text(path, text)
    except OSError as exc:
        from ..errors import InvalidInput

        raise InvalidInput(f"Cannot write {path}: {exc.strerror or exc}; nothing was changed. Check the file's and "
                           "its folder's permissions, then run this again.", field="path", value=str(path)) from None


def _remove_from(path: Path, strip=None) -> tuple[int, bool]:
    """Take our handlers out of the hooks file ``path`` (Claude Code's shape, which
    Codex's ``hooks.json`` shares; ``strip(hooks) -> count`` removes the harness's own,
    Claude Code's by default): ``(removed, deleted)``. A file left holding nothing is
    deleted (with its folder when that is left empty); a file with nothing of ours is
    not rewritten at all. Raises InvalidInput for a file that is not a JSON object."""
    if not path.exists():
        return 0, False
    data, style = _load_with_style(path)
    hooks = data.get("hooks")
    removed = (strip or _strip_ours)(hooks) if isinstance(hooks, dict) else 0
    if not removed:
        return 0, False
    if isinstance(hooks, dict) and not hooks:
        del data["hooks"]
    if data:
        _write(path, data, style)
        return removed, False
    filetx.save_folder(path.parent)  # it may be left empty and removed
    filetx.save(path)
    path.unlink()
    try:
        path.parent.rmdir()  # only when empty
    except OSError:
        pass
    return removed, True


def _keep_out_of_git(root: Path, path: Path, why: str = "ledger install claude-code: machine-specific hook commands") -> str | None:
    """Make git ignore ``path`` in this clone when nothing ignores it yet: one line in
    ``info/exclude`` (never the committed ``.gitignore``). Returns the exclude file
    changed, or None (already ignored, not a git checkout, or git unavailable)."""
    import subprocess

    if not (root / ".git").exists() or shutil.which("git") is None:
        return None
    rel = path.relative_to(root).as_posix()
    try:
        ignored = subprocess.run(["git", "-C", str(root), "check-ignore", "-q", "--no-index", rel],
                                 capture_output=True, timeout=10).returncode == 0
        if ignored:
            return None
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "--git-path", "info/exclude"],
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0 or not out.stdout.strip():
        return None
    exclude = Path(out.stdout.strip())
    if not exclude.is_absolute():
        exclude = root / exclude
    try:
        filetx.save(exclude)
        exclude.parent.mkdir(parents=True, exist_ok=True)
        old = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
        sep = "" if not old or old.endswith("\n") else "\n"
        exclude.write_text(f"{old}{sep}# {why}\n/{rel}\n",
                           encoding="utf-8")
    except OSError:
        return None
    return str(exclude)


def install_claude_code(scope: str = "project", project: str | None = None, command: str | None = None,
                        env: dict | None = None) -> dict:
    """Merge our hooks into the settings file for ``scope`` (see the module docstring).

    Returns ``{"path", "events", "replaced", "root", "git", "moved_from", "git_exclude"}``:
    the file written, the hooked events, how many old ledger handlers were replaced in
    it, the project root (None for ``user``), whether that root is a git checkout, the shared ``settings.json`` our handlers
    were moved out of (or None), and the git exclude file we added the local settings
    file to (or None). ``env`` (name -> value, e.g. ``{"LEDGER_DB": "/abs/x.db"}``) is
    put in front of each hook command (``LEDGER_DB=/abs/x.db ledger hook ...``; Claude
    Code runs the command through a shell) so the hooks use that store wherever Claude
    Code starts. Raises :class:`ledger.errors.InvalidInput` for a settings file
    that is not a JSON object (nothing is changed then).
    """
    path = settings_path(scope, project)
    data, style = _load_with_style(path)
    shared = _shared_path(scope, project)
    if shared is not None and shared.exists():
        _load(shared)  # refuse before changing anything when it is not valid JSON
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        from ..errors import InvalidInput

        raise InvalidInput(f'{path}: "hooks" is not an object; nothing was changed.')
    for event in CLAUDE_EVENTS:
        if event in hooks and not isinstance(hooks[event], list):
            from ..errors import InvalidInput

            raise InvalidInput(f'{path}: hooks.{event} is not a list of matcher groups; fix it, then run this again. Nothing was changed.')
    replaced = _strip_ours(hooks)
    cmd = command or ledger_command()
    prefix = "".join(f"{k}={_quote(v)} " for k, v in sorted((env or {}).items()))
    for event in CLAUDE_EVENTS:
        group: dict = {"hooks": [{"type": "command", "command": f"{prefix}{_quote(cmd)} hook claude-code {event}",
                                  "timeout": 10}]}
        if event in ("PreToolUse", "PostToolUse", "PostToolUseFailure"):
            group["matcher"] = FILE_TOOLS_MATCHER if event == "PreToolUse" else "*"
        hooks.setdefault(event, []).append(group)
    _write(path, data, style)
    moved = _remove_from(shared)[0] if shared is not None else 0
    root = None if scope == "user" else project_root(project)
    exclude = _keep_out_of_git(root, path) if root is not None else None
    return {"path": str(path), "events": list(CLAUDE_EVENTS), "replaced": replaced + moved,
            "root": str(root) if root else None, "git": bool(root and in_git(root)),
            "moved_from": str(shared) if moved else None, "git_exclude": exclude}


def uninstall_claude_code(scope: str = "project", project: str | None = None) -> dict:
    """Remove exactly our handlers; returns ``{"path", "removed", "deleted"}`` (the
    local or user settings file, how many handlers were removed from it and from the
    shared ``settings.json`` of the project, and the files deleted because nothing but
    ours was in them)."""
    path = settings_path(scope, project)
    removed, deleted = 0, []
    for p in (path, _shared_path(scope, project)):
        if p is None:
            continue
        n, gone = _remove_from(p)
        removed += n
        if gone:
            deleted.append(str(p))
    return {"path": str(path), "removed": removed, "deleted": deleted}


def _quote(cmd: str) -> str:
    import shlex

    return shlex.quote(cmd)
