"""``ledger install opencode`` / ``ledger uninstall opencode``: place the plugin file.

OpenCode loads every ``*.js``/``*.ts`` file in a config directory's ``plugin/`` or
``plugins/`` folder at start-up (docs/harness-contracts.md §B1, checked in OpenCode 1.18.33):
``<project>/.opencode/plugins/`` for one project, ``$XDG_CONFIG_HOME/opencode/plugins/``
(``~/.config/opencode/plugins/``) for every project. A file there is registered by being
there, so nothing is added to ``opencode.json`` (listing it in ``"plugin"`` as well would
load it twice).

By default the packaged ``harness/opencode/ledger.js`` is **copied**, with the absolute
path of this ``ledger`` command written into it, so the plugin finds the right venv
whatever OpenCode's ``PATH`` is. ``link=True`` makes a symlink to the packaged file
instead (updates with the package; the command then comes from ``$LEDGER_BIN`` or
``PATH``). Our file is recognised by its first line (copies) or its target (links);
anything else at that path is left alone and reported. Installing twice changes
nothing but the file's contents.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from . import filetx

PLUGIN_FILE = "ledger.js"
MARKER = "// ledger-managed:"
_HEADER = MARKER + " written by `ledger install opencode`; `ledger uninstall opencode` removes it. Do not edit.\n"
_PLACEHOLDER = 'const LEDGER_COMMAND = "__LEDGER_COMMAND__";'
_SIGNATURE = "ledger: local memory for coding agents, OpenCode plugin"


def plugin_source() -> Path:
    """The plugin shipped inside the package."""
    return Path(__file__).resolve().with_name("opencode") / PLUGIN_FILE


def config_dir(scope: str = "project", project: str | os.PathLike | None = None) -> Path:
    """OpenCode's config directory for ``scope`` (``project`` or ``user``). For a
    project it is ``.opencode`` in the repository root at or above ``project`` (default:
    the current folder): OpenCode reads every ``.opencode/plugins/`` from the folder it
    starts in up to the repository root, so the root serves every subfolder (an install
    run in ``src/`` used to hook only sessions started in ``src/``)."""
    if scope == "user":
        base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
        return Path(base) / "opencode"
    from .install import project_root

    return project_root(project) / ".opencode"


def plugin_path(scope: str = "project", project: str | os.PathLike | None = None) -> Path:
    return config_dir(scope, project) / "plugins" / PLUGIN_FILE


def render_plugin(command: str) -> str:
    """The plugin text with ``command`` (absolute path of ``ledger``) written in."""
    src = plugin_source().read_text(encoding="utf-8")
    if _PLACEHOLDER not in src:  # pragma: no cover - guards the packaged file
        raise RuntimeError(f"{plugin_source()} has no command placeholder")
    return _HEADER + src.replace(_PLACEHOLDER, f"const LEDGER_COMMAND = {json.dumps(command)};", 1)


def is_ours(path: Path) -> bool:
    """True when ``path`` is a plugin file or link that ledger installed."""
    if path.is_symlink():
        target = os.readlink(path)
        return target.replace("\\", "/").endswith("ledger/harness/opencode/" + PLUGIN_FILE)
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            head = fh.read(400)
    except OSError:
        return False
    return head.startswith(MARKER) or (_SIGNATURE in head and path.name == PLUGIN_FILE)


def _exists(path: Path) -> bool:
    return path.exists() or path.is_symlink()


def install_opencode(scope: str = "project", project: str | None = None, command: str | None = None,
                     link: bool = False) -> dict:
    """Place the plugin; returns ``{"path", "mode", "command", "replaced", "removed",
    "root", "git"}`` (the project root it went to, None for ``user``, and whether that
    root is a git checkout).

    Raises :class:`ledger.errors.InvalidInput` when a ``ledger.js`` that ledger did not
    write is in the way (nothing is changed then).
    """
    path = plugin_path(scope, project)
    if _exists(path) and not is_ours(path):
        from ..errors import InvalidInput

        raise InvalidInput(f"{path} exists and was not written by ledger; move it away, then run install again. "
                           "Nothing was changed.")
    replaced = _exists(path)
    # The singular plugin/ folder is loaded too: an old copy there would run twice.
    removed = _remove_ours([config_dir(scope, project) / "plugin" / PLUGIN_FILE])
    filetx.save(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{PLUGIN_FILE}.{os.getpid()}.tmp")
    if link:
        cmd = None
        if _exists(tmp):
            tmp.unlink()
        os.symlink(plugin_source(), tmp)
    else:
        from .install import ledger_command

        cmd = command or ledger_command()
        tmp.write_text(render_plugin(cmd), encoding="utf-8")
    os.replace(tmp, path)
    root = config_dir(scope, project).parent if scope != "user" else None
    from .install import in_git

    return {"path": str(path), "mode": "link" if link else "copy", "command": cmd, "replaced": replaced,
            "removed": removed, "root": str(root) if root else None, "git": bool(root and in_git(root))}


def uninstall_opencode(scope: str = "project", project: str | None = None) -> dict:
    """Remove our plugin file(s); returns ``{"path", "removed"}`` (count)."""
    d = config_dir(scope, project)
    removed = _remove_ours([d / "plugins" / PLUGIN_FILE, d / "plugin" / PLUGIN_FILE])
    return {"path": str(plugin_path(scope, project)), "removed": len(removed)}


def _remove_ours(paths: list[Path]) -> list[str]:
    out = []
    for p in paths:
        if _exists(p) and is_ours(p):
            filetx.save(p)
            p.unlink()
            out.append(str(p))
    return out
