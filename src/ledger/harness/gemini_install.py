"""``ledger install gemini`` / ``ledger uninstall gemini``: ledger as a Gemini CLI extension.

Gemini CLI loads every folder of ``~/.gemini/extensions/`` (``$GEMINI_CLI_HOME`` in place
of the home folder when set) holding a ``gemini-extension.json`` at start-up, enabled in
every workspace unless ``extension-enablement.json`` says otherwise
(docs/harness-contracts.md §D1, checked in 0.61.0). There is no per-project extensions
folder: a "project" install writes the same user folder, and ``install_lines`` says how
to limit it to one workspace with Gemini's own ``gemini extensions disable/enable
--scope``.

The extension (folder ``ledger``) holds:

- ``gemini-extension.json``: name, version, the MCP server ``ledger`` running
  ``<ledger executable> mcp`` (stdio), and two settings, ``LEDGER_HOME`` and
  ``LEDGER_DB``. Gemini hands an extension's settings to its hooks as their own
  environment, after it strips variables named like secrets (``KEY``, ``TOKEN``,
  ``AUTH``... §D2), and to its MCP servers: that is how the store ``install`` used
  reaches both, whatever Gemini's environment.
- ``.env``: the settings' values (``LEDGER_HOME`` always, as an absolute path;
  ``LEDGER_DB`` when one was given).
- ``hooks/hooks.json``: one command hook per event in :data:`HOOK_EVENTS`,
  ``<ledger executable> hook gemini <Event>``, timeout :data:`TIMEOUT_MS` (Gemini counts
  hook timeouts in milliseconds). BeforeTool is not hooked: Gemini takes no context
  there, so injections are decided at AfterTool (:mod:`ledger.harness.gemini`).

``link=True`` keeps the extension in ``$LEDGER_HOME/gemini-extension/`` and writes
Gemini's own link record (``.gemini-extension-install.json``, ``type: link``) plus the
``.env`` in the extensions folder, the way ``gemini extensions link`` does. The folder
is ours when its ``gemini-extension.json`` carries :data:`SIGNATURE` or its link record
points at our copy; anything else named ``ledger`` is left alone and reported.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from . import filetx

EXTENSION_NAME = "ledger"
#: Events the extension hooks, in the order Gemini fires them in a session.
HOOK_EVENTS = ("SessionStart", "BeforeAgent", "AfterTool", "AfterAgent", "PreCompress", "SessionEnd")
#: Per-hook timeout in milliseconds (Gemini's unit; its default is 60,000).
TIMEOUT_MS = 10_000
SIGNATURE = "ledger: local memory for coding agents (written by `ledger install gemini`)"
CONFIG_FILE = "gemini-extension.json"
LINK_RECORD = ".gemini-extension-install.json"
SETTINGS = (
    ("Ledger home", "LEDGER_HOME", "ledger's folder (store, config.toml, hook.log); the hooks and the MCP server use it"),
    ("Ledger store", "LEDGER_DB", "the store file, when it is not $LEDGER_HOME/ledger.db"),
)


def gemini_home() -> Path:
    """Gemini's home folder: ``$GEMINI_CLI_HOME`` when set, else the user's home."""
    return Path(os.environ.get("GEMINI_CLI_HOME") or Path.home())


def extension_dir() -> Path:
    """``~/.gemini/extensions/ledger``."""
    return gemini_home() / ".gemini" / "extensions" / EXTENSION_NAME


def linked_dir() -> Path:
    """Where ``--link`` keeps the extension: ``$LEDGER_HOME/gemini-extension``."""
    from ..paths import home_dir

    return Path(home_dir()) / "gemini-extension"


def manifest(command: str) -> dict:
    """``gemini-extension.json`` for ledger at ``command`` (absolute path)."""
    from .. import __version__
    from .mcp_clients import SERVER_NAME, server_entry

    return {
        "name": EXTENSION_NAME,
        "version": __version__,
        "description": SIGNATURE,
        "mcpServers": {SERVER_NAME: server_entry("gemini", command=command)},
        "settings": [{"name": n, "description": d, "envVar": v} for n, v, d in SETTINGS],
    }


def hooks_file(command: str) -> dict:
    """``hooks/hooks.json``: one command hook per event of :data:`HOOK_EVENTS`."""
    import shlex

    return {"hooks": {event: [{"hooks": [{
        "name": f"ledger-{event}", "type": "command", "command": f"{shlex.quote(command)} hook gemini {event}",
        "timeout": TIMEOUT_MS, "description": "ledger: facts, observations and session state",
    }]}] for event in HOOK_EVENTS}}


def env_text(env: dict) -> str:
    """The ``.env`` Gemini reads the settings from (dotenv; values double-quoted)."""
    return "".join(f'{k}="{v}"\n' for k, v in sorted(env.items()) if v)


def _write_json(path: Path, data: dict) -> None:
    filetx.write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def is_ours(folder: Path) -> bool:
    """True when ``folder`` is an extension ``ledger install gemini`` wrote (a copy
    carrying :data:`SIGNATURE`, or a link record pointing at :func:`linked_dir`)."""
    try:
        if (folder / CONFIG_FILE).is_file():
            data = json.loads((folder / CONFIG_FILE).read_text(encoding="utf-8"))
            return isinstance(data, dict) and data.get("description") == SIGNATURE
        if (folder / LINK_RECORD).is_file():
            rec = json.loads((folder / LINK_RECORD).read_text(encoding="utf-8"))
            return isinstance(rec, dict) and rec.get("type") == "link" and \
                os.path.realpath(str(rec.get("source", ""))) == os.path.realpath(linked_dir())
    except (OSError, ValueError):
        return False
    return False


def _broken(folder: Path) -> str | None:
    """What is wrong with ``folder``'s manifest when it cannot be read as JSON (so
    ledger cannot tell whether the extension is its own), else None."""
    manifest_file = folder / CONFIG_FILE
    if not manifest_file.is_file():
        return None
    try:
        json.loads(manifest_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        return f"{manifest_file} cannot be read ({exc})"
    except ValueError as exc:
        return f"{manifest_file} is not valid JSON ({exc})"
    return None


def _refuse_broken(folder: Path, verb: str) -> None:
    why = _broken(folder)
    if why:
        from ..errors import InvalidInput

        raise InvalidInput(f"{why}, so ledger cannot tell whether {folder} is its extension; nothing was changed. "
                           f"Fix the file, or move the folder away if it is ledger's, then run {verb} again.",
                           field="path", value=str(folder))


def _write_extension(folder: Path, command: str) -> None:
    _write_json(folder / CONFIG_FILE, manifest(command))
    _write_json(folder / "hooks" / "hooks.json", hooks_file(command))


def install_gemini(scope: str = "user", project: str | None = None, *, link: bool = False, env: dict | None = None,
                   command: str | None = None) -> dict:
    """Write (or link) the extension. Returns ``{"path", "events", "linked", "source",
    "settings", "replaced", "scope_note"}``: the extension folder, the hooked events,
    whether it is a link, the folder Gemini reads it from, the settings written to
    ``.env``, whether an earlier ledger extension was replaced, and for a project
    install the note that Gemini has only a user folder.

    Raises :class:`ledger.errors.InvalidInput` when a folder named ``ledger`` that is
    not ours is in the way (nothing is changed then)."""
    from ..paths import home_dir
    from .install import ledger_command

    folder = extension_dir()
    replaced = folder.exists()
    _refuse_broken(folder, "install")
    if replaced and not is_ours(folder):
        from ..errors import InvalidInput

        raise InvalidInput(f"{folder} exists and is not ledger's extension; move it away, then run install again. "
                           "Nothing was changed.")
    cmd = command or ledger_command()
    values = {"LEDGER_HOME": os.path.abspath(os.path.expanduser(home_dir()))}
    values.update({k: v for k, v in (env or {}).items() if k in ("LEDGER_HOME", "LEDGER_DB") and v})
    if replaced:
        filetx.save(folder)
        shutil.rmtree(folder)
    if link:
        source = linked_dir()
        if source.exists():
            filetx.save(source)
            shutil.rmtree(source)
        _write_extension(source, cmd)
        _write_json(folder / LINK_RECORD, {"source": str(source), "type": "link"})
    else:
        source = folder
        _write_extension(folder, cmd)
    filetx.write_text(folder / ".env", env_text(values))
    return {"path": str(folder), "events": list(HOOK_EVENTS), "linked": link, "source": str(source),
            "settings": values, "replaced": replaced, "command": cmd,
            "scope_note": scope != "user"}


def uninstall_gemini(scope: str = "user", project: str | None = None) -> dict:
    """Remove the extension folder when it is ours (and ``--link``'s copy). Returns
    ``{"path", "removed", "deleted", "kept"}``: ``removed`` is 1 when an extension was
    removed, ``deleted`` the folders deleted, ``kept`` a folder named ``ledger`` that is
    not ours (left alone), else None. Raises InvalidInput, changing nothing, when the
    folder's manifest is not JSON (whose it is cannot be told)."""
    folder = extension_dir()
    deleted: list[str] = []
    kept = None
    _refuse_broken(folder, "uninstall")
    if folder.exists() or folder.is_symlink():
        if is_ours(folder):
            filetx.save(folder)
            if folder.is_symlink():
                folder.unlink()
            else:
                shutil.rmtree(folder)
            deleted.append(str(folder))
        else:
            kept = str(folder)
    source = linked_dir()
    if (source / CONFIG_FILE).is_file() and is_ours(source):
        filetx.save(source)
        shutil.rmtree(source)
        deleted.append(str(source))
    notes = [f"left alone: {kept} is another program's extension named ledger (not written by ledger install)"] \
        if kept else []
    return {"path": str(folder), "removed": 1 if str(folder) in deleted else 0, "deleted": deleted, "kept": kept,
            "notes": notes}


def install_lines(r: dict, scope: str) -> list[str]:
    """What ``ledger install gemini`` prints."""
    how = f"linked to {r['source']}" if r["linked"] else "written"
    lines = [f"✓ Gemini CLI extension {how} at {r['path']} (hooks for {', '.join(r['events'])}; "
             f"MCP server `{r['command']} mcp`)" + (" (replaced the earlier one)" if r["replaced"] else "")]
    lines.append("  Settings for its hooks and MCP server: "
                 + ", ".join(f"{k}={v}" for k, v in sorted(r["settings"].items())) + f" (in {r['path']}/.env)")
    if r.get("scope_note"):
        lines.append("  Gemini CLI loads extensions only from ~/.gemini/extensions, so it is on in every project; "
                     "to keep it to this one: `gemini extensions disable ledger` then, in the project, "
                     "`gemini extensions enable ledger --scope workspace`.")
    lines.append("  Restart Gemini CLI to load it (`gemini extensions list` shows it).")
    return lines
