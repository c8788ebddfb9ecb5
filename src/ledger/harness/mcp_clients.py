"""Registering ``ledger mcp`` with MCP clients, each in its own configuration format.

One entry named ``ledger`` runs ``<ledger executable> mcp`` over stdio. Where each client
keeps it (docs/mcp.md "Client configuration" gives the sources we relied on):

============== ========================================== ===================================== =========
client         user scope                                 project scope                         format
============== ========================================== ===================================== =========
claude-desktop ``<config>/Claude/claude_desktop_config``  (none)                                JSON ``mcpServers``
cursor         ``~/.cursor/mcp.json``                     ``<root>/.cursor/mcp.json``           JSON ``mcpServers``
vscode         ``<config>/Code/User/mcp.json``            ``<root>/.vscode/mcp.json``           JSON ``servers`` + ``type: stdio``
zed            ``$XDG_CONFIG_HOME/zed/settings.json``     ``<root>/.zed/settings.json``         JSON ``context_servers``
claude-code    ``~/.claude.json``                         ``<root>/.mcp.json``                  JSON ``mcpServers``
codex          ``$CODEX_HOME/config.toml``                ``<root>/.codex/config.toml``         TOML ``[mcp_servers.ledger]``
gemini         ``~/.gemini/settings.json``                ``<root>/.gemini/settings.json``      JSON ``mcpServers``
============== ========================================== ===================================== =========

``<root>`` is the repository root above the project folder (as for the hooks,
:func:`ledger.harness.install.project_root`). Claude Desktop has no project file, so its
default scope is ``user``; every other client defaults to ``project``.

Merging: the user's other entries and keys are kept. JSON files are edited in place by
:mod:`.jsonc_edit` (our member spliced in, every other byte kept: comments, trailing
commas, layout; uninstall gives the file back byte for byte); a one-line file is
rewritten compact; TOML goes through tomlkit, which keeps comments and layout. Should a
commented file ever defeat the splicer, it is rewritten and its original first copied
next to it as ``<name>.ledger-backup``; the result says so.

Ours is the entry named ``ledger`` whose arguments are ``["mcp"]`` and whose command is a
``ledger`` executable. An entry named ``ledger`` that is something else is refused, never
overwritten; ``uninstall`` removes exactly ours and deletes a file left empty.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

from ..errors import InvalidInput
from . import filetx
from .install import ledger_command, project_root

#: Every client ``ledger install mcp --client`` knows, in the order help lists them.
CLIENTS = ("claude-desktop", "cursor", "vscode", "zed", "claude-code", "codex", "gemini")
#: The server's name in every client's configuration (Claude Code shows tools as ``mcp__ledger__<tool>``).
SERVER_NAME = "ledger"
#: The arguments after the ledger executable.
SERVER_ARGS = ["mcp"]
#: The key holding the servers, by client.
_SERVERS_KEY = {"claude-desktop": "mcpServers", "cursor": "mcpServers", "vscode": "servers", "zed": "context_servers",
                "claude-code": "mcpServers", "codex": "mcp_servers", "gemini": "mcpServers"}
BACKUP_SUFFIX = ".ledger-backup"


def _check_client(client: str) -> None:
    if client not in CLIENTS:
        raise InvalidInput(f"Unknown MCP client {client!r}. Known: {', '.join(CLIENTS)}.", field="client",
                           value=client, choices=CLIENTS)


def default_scope(client: str) -> str:
    """``user`` for Claude Desktop (it has no project configuration), else ``project``."""
    _check_client(client)
    return "user" if client == "claude-desktop" else "project"


def _config_home() -> Path:
    """Where desktop applications keep settings: ``%APPDATA%`` on Windows,
    ``~/Library/Application Support`` on macOS, ``$XDG_CONFIG_HOME`` or ``~/.config`` elsewhere."""
    if sys.platform == "win32" and os.environ.get("APPDATA"):
        return Path(os.environ["APPDATA"])
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support"
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")


def config_path(client: str, scope: str | None = None, project_dir: str | os.PathLike | None = None) -> Path:
    """The file :func:`install` writes for ``client`` at ``scope`` (``"user"`` or
    ``"project"``; None = :func:`default_scope`). Raises InvalidInput for an unknown
    client or scope, or a project scope the client does not have."""
    _check_client(client)
    scope = scope or default_scope(client)
    if scope not in ("user", "project"):
        raise InvalidInput(f"scope must be user or project, got {scope!r}", field="scope", value=scope,
                           choices=("user", "project"))
    home = Path.home()
    if scope == "user":
        if client == "claude-desktop":
            return _config_home() / "Claude" / "claude_desktop_config.json"
        if client == "cursor":
            return home / ".cursor" / "mcp.json"
        if client == "vscode":
            return _config_home() / "Code" / "User" / "mcp.json"
        if client == "zed":
            # Zed reads ~/.config/zed on macOS and Linux alike; $XDG_CONFIG_HOME where set.
            base = Path(os.environ["APPDATA"]) if sys.platform == "win32" and os.environ.get("APPDATA") else \
                Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
            return base / "zed" / "settings.json"
        if client == "claude-code":
            return home / ".claude.json"
        if client == "codex":
            return Path(os.environ.get("CODEX_HOME") or home / ".codex") / "config.toml"
        return home / ".gemini" / "settings.json"
    if client == "claude-desktop":
        raise InvalidInput("Claude Desktop has no project configuration; install it for the user (--user).",
                           field="scope", value=scope, choices=("user",))
    root = project_root(project_dir)
    return root / {"cursor": ".cursor/mcp.json", "vscode": ".vscode/mcp.json", "zed": ".zed/settings.json",
                   "claude-code": ".mcp.json", "codex": ".codex/config.toml", "gemini": ".gemini/settings.json"}[client]


def server_entry(client: str, env: dict | None = None, command: str | None = None) -> dict:
    """Our entry in ``client``'s format: ``{"command", "args", "env"?}``, with
    ``"type": "stdio"`` first for VS Code (its schema requires it). ``env`` (e.g. the
    store's ``LEDGER_DB``) is left out when empty; ``command`` defaults to this
    machine's ledger executable (an absolute path, so no activated venv is needed)."""
    _check_client(client)
    entry: dict = {"type": "stdio"} if client == "vscode" else {}
    entry["command"] = command or ledger_command()
    entry["args"] = list(SERVER_ARGS)
    if env:
        entry["env"] = {str(k): str(v) for k, v in env.items()}
    return entry


def config_snippet(client: str, env: dict | None = None) -> str:
    """The text to paste into ``client``'s configuration by hand: a JSON object with the
    client's servers key (``mcpServers``, ``servers``, ``context_servers``) holding our
    entry, or for Codex the TOML table ``[mcp_servers.ledger]``. Ends with a newline."""
    entry = server_entry(client, env)
    if client == "codex":
        import tomlkit

        doc = tomlkit.document()
        servers = tomlkit.table(is_super_table=True)
        servers[SERVER_NAME] = _toml_table(entry)
        doc["mcp_servers"] = servers
        return tomlkit.dumps(doc)
    return json.dumps({_SERVERS_KEY[client]: {SERVER_NAME: entry}}, indent=2) + "\n"


def is_ours(entry) -> bool:
    """True for an entry that runs ``<something>/ledger mcp`` (ledger's server, from any
    install location); False for anything else, including a user's own ``ledger`` entry."""
    if not isinstance(entry, dict):
        return False
    cmd = entry.get("command")
    args = entry.get("args")
    if not isinstance(cmd, str) or list(args or []) != SERVER_ARGS:
        return False
    name = Path(cmd).name.lower()
    return name in ("ledger", "ledger.exe", "ledger.cmd")


def install(client: str, scope: str | None, project_dir: str | os.PathLike | None, env: dict | None = None) -> dict:
    """Register ``ledger mcp`` with ``client`` (idempotent; other entries kept).

    Returns ``{"client", "scope", "path", "server": "ledger", "entry", "changed",
    "created", "backup"}``: ``changed`` False when our entry was already exactly so,
    ``created`` True when the file did not exist, ``backup`` the path of the copy kept
    when a commented JSON file was rewritten (else None). Raises InvalidInput for an
    unknown client or scope, a file that does not parse (nothing is written), or an
    entry named ``ledger`` that is not ours."""
    scope = scope or default_scope(client)
    path = config_path(client, scope, project_dir)
    entry = server_entry(client, env)
    try:
        if client == "codex":
            changed, created, backup = _install_toml(path, entry)
        else:
            changed, created, backup = _install_json(path, _SERVERS_KEY[client], entry)
    except OSError as exc:
        raise _unwritable(path, exc) from None
    return {"client": client, "scope": scope, "path": str(path), "server": SERVER_NAME, "entry": entry,
            "changed": changed, "created": created, "backup": backup}


def uninstall(client: str, scope: str | None, project_dir: str | os.PathLike | None) -> dict:
    """Remove exactly our entry from ``client``'s configuration.

    Returns ``{"client", "scope", "path", "removed", "deleted", "backup"}``: ``removed``
    is 1 or 0 (nothing of ours there), ``deleted`` lists files removed because they held
    nothing else, ``backup`` as for :func:`install`. A ``ledger`` entry that is not ours
    is left alone (``removed`` 0, ``kept`` names it). Raises InvalidInput for an unknown
    client or scope, or a file that does not parse."""
    scope = scope or default_scope(client)
    path = config_path(client, scope, project_dir)
    r = {"client": client, "scope": scope, "path": str(path), "removed": 0, "deleted": [], "backup": None}
    if not path.is_file():
        return r
    try:
        r.update(_uninstall_toml(path) if client == "codex" else _uninstall_json(path, _SERVERS_KEY[client]))
    except OSError as exc:
        raise _unwritable(path, exc) from None
    if r["deleted"] and scope == "project" and path.parent != project_root(project_dir):
        try:
            filetx.save_folder(path.parent)
            path.parent.rmdir()  # the client's folder (.cursor/...) install made, when nothing else is in it
        except OSError:
            pass
    return r


def _unwritable(path: Path, exc: OSError) -> InvalidInput:
    return InvalidInput(f"Cannot write {path}: {exc.strerror or exc}; nothing was changed. Check the file's and its "
                        "folder's permissions, or paste the snippet from --print by hand.", field="path",
                        value=str(path))


# ------------------------------------------------------------------------------- JSON (and JSONC)
def _strip_jsonc(text: str) -> tuple[str, bool]:
    """``text`` with ``//`` and ``/* */`` comments and trailing commas removed (strings
    untouched), and whether it had comments. Zed, VS Code and Gemini accept both."""
    out: list[str] = []
    comma = -1  # index in ``out`` of a comma outside strings with nothing but blanks after it yet
    i, n, had = 0, len(text), False
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            comma = -1
            i = j + 1
        elif text.startswith("//", i):
            had = True
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            had = True
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        else:
            if c in "}]" and comma >= 0:
                out[comma] = ""  # a trailing comma: JSON proper refuses it
            if not c.isspace():
                comma = len(out) if c == "," else -1
            out.append(c)
            i += 1
    return "".join(out), had


#: What to do about a file that cannot be read, by action.
_FIX = {"install": "Fix it, or paste the snippet from --print by hand.",
        "uninstall": f'Fix it, or take the "{SERVER_NAME}" entry out by hand.'}


def _read_json(path: Path, action: str = "install") -> tuple[dict, str | int | None, bool, str]:
    """(document, indentation, had comments, original text). A missing or blank file
    is ``{}``. Raises InvalidInput when the file is not a JSON object (its message says
    what to do for ``action``, ``install`` or ``uninstall``)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, 2, False, ""
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"Cannot read {path}: {exc}. Fix or move it, then run this again; nothing was changed.") from None
    if not text.lstrip("\ufeff").strip():
        return {}, 2, False, text
    plain, had = _strip_jsonc(text)
    try:
        doc = _loads(plain)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); "
                           f"nothing was changed. {_FIX[action]}") from None
    if not isinstance(doc, dict):
        raise InvalidInput(f"{path} holds JSON that is not an object; nothing was changed. A client's "
                           f"configuration is one {{...}} object. {_FIX[action]}")
    return doc, _indent(text), had, text


def _loads(plain: str):
    """``json.loads`` past a UTF-8 byte order mark, which Windows editors write and the
    clients read; the splicer keeps it in the file."""
    return json.loads(plain.lstrip("\ufeff"))


def _indent(text: str) -> str | int | None:
    """The indentation ``text`` uses: a tab, a number of spaces, or None when it is all
    on one line (then it is written compact again)."""
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and not stripped.startswith(("//", "/*")) and len(stripped) < len(line):
            lead = line[: len(line) - len(stripped)]
            return "\t" if lead.startswith("\t") else len(lead)
    return None if "\n" not in text.strip() else 2


def _write_json(path: Path, doc: dict, indent, had_comments: bool, original: str) -> str | None:
    """Write ``doc`` atomically (temp file + rename); keep a backup first when the old
    text had comments this rewrite drops. Returns the backup's path or None."""
    backup = None
    if had_comments:
        backup = str(path) + BACKUP_SUFFIX
        filetx.save(backup)
        shutil.copy2(path, backup)
    text = json.dumps(doc, indent=indent, ensure_ascii=False)
    if indent is None:
        text = json.dumps(doc, ensure_ascii=False)
    if original.startswith("\ufeff"):
        text = "\ufeff" + text
    filetx.write_text(path, text + ("\n" if not original or original.endswith("\n") else ""))
    return backup


class ForeignEntry(InvalidInput):
    """An entry named ``ledger`` that is not ours is in the way: the one refusal that is
    not a broken file (a harness install may go on without its MCP entry)."""


def _foreign(path: Path, key: str) -> InvalidInput:
    return ForeignEntry(f'{path} already has an MCP server named "{SERVER_NAME}" under "{key}" that is not ledger\'s '
                        f"(it does not run `ledger mcp`); nothing was changed. Rename or remove it, then run this again.")


def _splice(path: Path, original: str, indent, had: bool, edit) -> bool:
    """Write ``edit(original)`` when the file can be edited in place (it has comments, or
    is laid out on several lines): every byte but our member is kept
    (:mod:`.jsonc_edit`). False when it cannot (a one-line file, which is rewritten
    compact, or text the splicer does not follow), so the caller rewrites the document."""
    from . import jsonc_edit

    if not original.strip() or (indent is None and not had):
        return False
    try:
        text = edit(jsonc_edit, original, "\t" if indent == "\t" else " " * (indent or 2))
        _loads(_strip_jsonc(text)[0])  # never write what does not parse back
    except (jsonc_edit.JsoncError, ValueError):
        return False
    filetx.write_text(path, text)
    return True


def _install_json(path: Path, key: str, entry: dict) -> tuple[bool, bool, str | None]:
    created = not path.exists()
    doc, indent, had, original = _read_json(path)
    servers = doc.get(key)
    if servers is not None and not isinstance(servers, dict):
        raise InvalidInput(f'"{key}" in {path} is not an object; nothing was changed.')
    old = (servers or {}).get(SERVER_NAME)
    if old is not None and not is_ours(old):
        raise _foreign(path, key)
    if old == entry:
        return False, False, None
    # "mcpServers": null is taken as no servers yet: the object replaces the null.
    where, value = ([key, SERVER_NAME], entry) if servers is not None else ([key], {SERVER_NAME: entry})
    if _splice(path, original, indent, had, lambda je, text, unit: je.set_member(text, where, value, unit)):
        return True, created, None
    if servers is None:
        doc[key] = {}
    doc[key][SERVER_NAME] = entry
    return True, created, _write_json(path, doc, indent, had, original)


def _uninstall_json(path: Path, key: str) -> dict:
    doc, indent, had, original = _read_json(path, "uninstall")
    servers = doc.get(key)
    if not isinstance(servers, dict) or SERVER_NAME not in servers:
        return {}
    if not is_ours(servers[SERVER_NAME]):
        return {"kept": f'{key}.{SERVER_NAME} (not ledger\'s: it does not run "ledger mcp")'}
    del servers[SERVER_NAME]
    if not servers:
        del doc[key]  # the key was ours alone (an install creates it when missing)
    if not doc and not had:
        filetx.save(path)
        path.unlink()  # it held nothing but ours
        return {"removed": 1, "deleted": [str(path)]}

    def edit(je, text, unit):
        text = je.delete_member(text, [key, SERVER_NAME])
        node = je.get_node(text, [key])
        # An object left empty goes (install made it), unless comments are in it: those are the user's.
        empty = node is not None and node.kind == "object" and not node.members \
            and not text[node.start + 1:node.end - 1].strip()
        return je.delete_member(text, [key]) if empty else text

    if _splice(path, original, indent, had, edit):
        return {"removed": 1}
    return {"removed": 1, "backup": _write_json(path, doc, indent, had, original)}


# ------------------------------------------------------------------------------- TOML (Codex)
def _toml_table(entry: dict):
    import tomlkit

    t = tomlkit.table()
    for k, v in entry.items():
        if isinstance(v, dict):
            inline = tomlkit.inline_table()
            inline.update(v)
            t[k] = inline
        else:
            t[k] = v
    return t


def _read_toml(path: Path, action: str = "install"):
    import tomlkit

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return tomlkit.document(), ""
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"Cannot read {path}: {exc}. Fix or move it, then run this again; nothing was changed.") from None
    try:
        return tomlkit.parse(text), text
    except Exception as exc:  # tomlkit raises its own ParseError subclasses
        raise InvalidInput(f"{path} is not valid TOML ({exc}); nothing was changed. {_FIX[action]}") from None


def _plain(value):
    """A tomlkit value as plain Python (for comparing and :func:`is_ours`)."""
    return value.unwrap() if hasattr(value, "unwrap") else value


def _install_toml(path: Path, entry: dict) -> tuple[bool, bool, None]:
    import tomlkit

    created = not path.exists()
    doc, _ = _read_toml(path)
    servers = doc.get("mcp_servers")
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        doc["mcp_servers"] = servers
    elif not isinstance(_plain(servers), dict):
        raise InvalidInput(f'"mcp_servers" in {path} is not a table; nothing was changed.')
    old = servers.get(SERVER_NAME)
    if old is not None and not is_ours(_plain(old)):
        raise _foreign(path, "mcp_servers")
    if old is not None and _plain(old) == entry:
        return False, False, None
    servers[SERVER_NAME] = _toml_table(entry)
    filetx.write_text(path, tomlkit.dumps(doc))
    return True, created, None


def _uninstall_toml(path: Path) -> dict:
    import tomlkit

    doc, _ = _read_toml(path, "uninstall")
    servers = doc.get("mcp_servers")
    if servers is None or SERVER_NAME not in servers:
        return {}
    if not is_ours(_plain(servers[SERVER_NAME])):
        return {"kept": f'mcp_servers.{SERVER_NAME} (not ledger\'s: it does not run "ledger mcp")'}
    del servers[SERVER_NAME]
    if not _plain(servers):
        del doc["mcp_servers"]
    text = tomlkit.dumps(doc)
    if not text.strip():
        filetx.save(path)
        path.unlink()
        return {"removed": 1, "deleted": [str(path)]}
    filetx.write_text(path, text)
    return {"removed": 1}
