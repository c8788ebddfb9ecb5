"""``ledger install codex`` / ``ledger uninstall codex``: ledger's hooks in Codex's
``hooks.json``, and what Codex's trust state says about them.

Where (docs/harness-contracts.md, Codex section): ``<repository root>/.codex/hooks.json``
for one project (Codex reads a project's ``.codex/`` only when the project is trusted),
``$CODEX_HOME/hooks.json`` (``~/.codex/hooks.json``) with ``--user``. The file has
Claude Code's shape: ``{"hooks": {Event: [{"matcher"?, "hooks": [{"type": "command",
"command", "timeout"}]}]}}``. We add one matcher group per event whose command is
``<ledger executable> hook codex <Event>``, recognise ours by that command, and leave
everything else as it was (the file keeps its indentation; a file left empty after
uninstall is deleted). The project file holds this machine's absolute path, so it is
kept out of git through ``info/exclude`` like Claude Code's local settings.

MCP: install also registers ledger's MCP server (``ledger mcp``) in Codex's
``[mcp_servers]`` of the same scope (``<root>/.codex/config.toml`` or
``$CODEX_HOME/config.toml``) through :mod:`ledger.harness.mcp_clients`, and uninstall
removes exactly that entry. A configuration the MCP step cannot take (a ``ledger``
server that is not ours, TOML that does not parse) is reported and changes nothing
there; the hooks are installed all the same.

Trust: Codex runs a hook that is not managed by an administrator only after the user
has reviewed it in ``/hooks``; a new or changed hook is skipped until then. Codex keeps
that decision in the *user* ``config.toml`` as ``[hooks.state."<key>"] trusted_hash``,
``<key>`` being ``<hooks.json path>:<event label>:<group index>:<handler index>`` and
the hash ``sha256:`` + the SHA-256 of the hook's identity (event label, matcher, handler)
as compact JSON with sorted keys. ledger never writes that state; :func:`trust_status`
only reads it (``ledger doctor``), and :func:`trust_hash` computes what the hash of our
hook must be for the comparison.
"""

from __future__ import annotations

import hashlib
import json
import os
import tomllib
from pathlib import Path

from . import filetx
from .install import _load_with_style, _quote, _write, ledger_command, project_root, strip_handlers

#: The events ledger hooks, in the order they are written.
CODEX_EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "PreCompact", "SessionEnd")
#: PreToolUse runs before the tools that touch files: every shell tool (reported as
#: ``Bash``) and ``apply_patch``. An exact matcher (letters, ``_`` and ``|``).
PRE_TOOL_MATCHER = "Bash|apply_patch"
#: Seconds. Codex clamps SessionEnd hooks to 3 s (and warns when asked for more).
TIMEOUTS = {"SessionEnd": 3}
DEFAULT_TIMEOUT = 10
MARKER = " hook codex "
HOOKS_FILE = "hooks.json"
#: Codex's labels for events in its hook-state keys and trust hashes.
EVENT_LABELS = {"SessionStart": "session_start", "UserPromptSubmit": "user_prompt_submit", "PreToolUse": "pre_tool_use",
                "PostToolUse": "post_tool_use", "Stop": "stop", "PreCompact": "pre_compact", "PostCompact": "post_compact",
                "SessionEnd": "session_end", "PermissionRequest": "permission_request",
                "SubagentStart": "subagent_start", "SubagentStop": "subagent_stop"}
# Events whose matcher Codex applies (others ignore it, and so does the trust hash).
_MATCHER_EVENTS = frozenset({"PreToolUse", "PostToolUse", "PermissionRequest", "SessionStart", "PreCompact",
                             "PostCompact", "SubagentStart", "SubagentStop"})
TRUST_HINT = "Codex runs new or changed hooks only once you trust them: open `/hooks` in Codex and trust ledger's."
PROJECT_TRUST_HINT = ("Codex reads a project's .codex/ only when you trust the project (its first-run prompt, "
                      "or `codex exec --trust`).")
#: ledger's compaction prompt for Codex (``experimental_compact_prompt_file``), written
#: under ``$LEDGER_HOME/codex/``. Its first line marks it as ours.
COMPACT_PROMPT_NAME = "compact_prompt.md"
COMPACT_PROMPT = """You are compacting a coding session so that another model can carry on with it.
Write a handoff summary that keeps, concretely (paths, names, numbers, commands):
- the user's task in their own words, and every constraint or preference they stated;
- the plan, with the steps done and the step in progress;
- each file created, edited or deleted, and what changed in it;
- commands that failed and why, and the last ones that passed;
- decisions made and the reasons for them;
- facts learned about the code, data formats, tools and environment;
- open questions and the next concrete step.
Leave out pleasantries and long file contents. After this summary, ledger adds the session
state it recorded (task, files, last checkpoint in .agents/checkpoint.md) and the project's
known facts, so the summary does not need to repeat them word for word.
"""


def codex_home() -> Path:
    """``$CODEX_HOME``, else ``~/.codex``."""
    env = os.environ.get("CODEX_HOME")
    return Path(env).expanduser() if env else Path.home() / ".codex"


def hooks_path(scope: str = "project", project: str | os.PathLike | None = None) -> Path:
    """The ``hooks.json`` that ``install`` writes for ``scope``."""
    if scope == "user":
        return codex_home() / HOOKS_FILE
    return project_root(project) / ".codex" / HOOKS_FILE


def is_ours(handler: object) -> bool:
    return isinstance(handler, dict) and MARKER in f" {handler.get('command', '')} "


def _invalid(msg: str):
    from ..errors import InvalidInput

    return InvalidInput(msg)


def _strip_ours(hooks: dict) -> int:
    return strip_handlers(hooks, is_ours)  # Codex's hooks.json has Claude Code's shape


def install_codex(scope: str = "project", project: str | None = None, command: str | None = None,
                  env: dict | None = None) -> dict:
    """Merge ledger's hooks into ``hooks.json`` for ``scope``.

    Returns ``{"path", "events", "replaced", "root", "git_exclude", "trust", "mcp"}``:
    the file written, the hooked events, how many old ledger handlers were replaced,
    the project root (None for ``user``), the git exclude file the project file was
    added to (or None), :func:`trust_status` of the hooks just written (new ones are
    untrusted until the user trusts them in Codex's ``/hooks``), and the MCP server
    registration (:func:`ledger.harness.mcp_clients.install`'s result, or ``{"error"}``
    saying why it was not written). ``env`` (``{"LEDGER_DB": "/abs"}``)
    goes in front of each command (Codex runs it through a shell). Raises
    :class:`ledger.errors.InvalidInput` when the file is not a JSON object or its
    ``hooks`` are malformed; nothing is changed then.
    """
    path = hooks_path(scope, project)
    data, style = _load_with_style(path)
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise _invalid(f'{path}: "hooks" is not an object; nothing was changed.')
    for event in CODEX_EVENTS:
        if event in hooks and not isinstance(hooks[event], list):
            raise _invalid(f"{path}: hooks.{event} is not a list of matcher groups; fix it, then run this again. "
                           "Nothing was changed.")
    replaced = _strip_ours(hooks)
    cmd = command or ledger_command()
    prefix = "".join(f"{k}={_quote(v)} " for k, v in sorted((env or {}).items()))
    for event in CODEX_EVENTS:
        group: dict = {}
        if event == "PreToolUse":
            group["matcher"] = PRE_TOOL_MATCHER
        group["hooks"] = [{"type": "command", "command": f"{prefix}{_quote(cmd)} hook codex {event}",
                           "timeout": TIMEOUTS.get(event, DEFAULT_TIMEOUT)}]
        hooks.setdefault(event, []).append(group)
    _write(path, data, style)
    root = None if scope == "user" else project_root(project)
    exclude = None
    if root is not None:
        from .install import _keep_out_of_git

        exclude = _keep_out_of_git(root, path, why="ledger install codex: machine-specific hook commands")
    return {"path": str(path), "events": list(CODEX_EVENTS), "replaced": replaced, "root": str(root) if root else None,
            "git_exclude": exclude, "trust": trust_status(path), "mcp": _mcp("install", scope, project, env),
            "project_trusted": project_trusted(root) if root is not None else None,
            "compact_prompt": write_compact_prompt()}


def compact_prompt_path() -> Path:
    """Where ledger keeps its compaction prompt for Codex: ``$LEDGER_HOME/codex/compact_prompt.md``."""
    from ..paths import home_dir

    return Path(home_dir()) / "codex" / COMPACT_PROMPT_NAME


def write_compact_prompt() -> str | None:
    """Write :data:`COMPACT_PROMPT` to :func:`compact_prompt_path` (unless the user
    edited the file: a file whose text differs is kept) and return its path; None when
    it cannot be written. Codex uses it once ``experimental_compact_prompt_file`` in
    its ``config.toml`` names it; ledger offers that line and never sets it."""
    p = compact_prompt_path()
    try:
        if not p.exists():
            filetx.save(p)
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(COMPACT_PROMPT, encoding="utf-8")
    except OSError:
        return None
    return str(p)


def project_trusted(root: str | os.PathLike, config: Path | None = None) -> bool | None:
    """Whether Codex's user ``config.toml`` trusts the project at ``root`` (or a folder
    above it): ``[projects."<path>"] trust_level = "trusted"``. False when it says
    ``untrusted`` or nothing; None when the file cannot be read."""
    p = config or codex_home() / "config.toml"
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return False
    except (OSError, ValueError):
        return None
    projects = data.get("projects")
    if not isinstance(projects, dict):
        return False
    here = Path(os.path.realpath(root))
    levels = {Path(os.path.realpath(os.path.expanduser(k))): v.get("trust_level")
              for k, v in projects.items() if isinstance(v, dict)}
    for d in (here, *here.parents):
        if d in levels:
            return levels[d] == "trusted"  # the nearest setting wins
    return False


def _mcp(action: str, scope: str, project: str | None, env: dict | None = None) -> dict:
    """Register (``install``) or remove (``uninstall``) ``ledger mcp`` in Codex's
    ``[mcp_servers]``. Another program's ``ledger`` entry in the way is reported as
    ``{"error": msg}`` (the hooks go in without it); a ``config.toml`` that cannot be
    read or written raises InvalidInput, so the whole install or uninstall changes
    nothing (``ledger.harness.filetx``) and says what to fix."""
    from . import mcp_clients

    try:
        if action == "install":
            return mcp_clients.install("codex", scope, project, env=env)
        return mcp_clients.uninstall("codex", scope, project)
    except mcp_clients.ForeignEntry as exc:
        return {"error": str(exc)}


def uninstall_codex(scope: str = "project", project: str | None = None) -> dict:
    """Remove exactly ledger's handlers from ``hooks.json`` and ledger's MCP server from
    Codex's ``[mcp_servers]``; returns ``{"path", "removed", "deleted", "mcp", "notes"}``
    (``removed``: hooks; ``deleted``: the files left holding nothing; ``mcp``:
    :func:`ledger.harness.mcp_clients.uninstall`'s result or ``{"error"}``; ``notes``:
    lines for the user about the MCP entry)."""
    mcp = _mcp("uninstall", scope, project)
    notes = ([f"removed ledger's MCP server from {mcp['path']}"] if mcp.get("removed")
             else [f"MCP server left as it was: {mcp['error']}"] if mcp.get("error") else [])
    r = _uninstall_hooks(scope, project)
    r["deleted"] = r["deleted"] + list(mcp.get("deleted") or [])
    return {**r, "mcp": mcp, "notes": notes}


def _uninstall_hooks(scope: str, project: str | None) -> dict:
    from .install import _remove_from

    path = hooks_path(scope, project)
    removed, deleted = _remove_from(path, _strip_ours)
    return {"path": str(path), "removed": removed, "deleted": [str(path)] if deleted else []}


# --------------------------------------------------------------------------- trust


def trust_hash(event: str, handler: dict, matcher: str | None = None) -> str:
    """The ``trusted_hash`` Codex records when the user trusts ``handler`` (one entry of
    a matcher group's ``hooks``) under ``event``: ``"sha256:<hex>"`` of the compact,
    key-sorted JSON of ``{"event_name": <label>, "matcher": ..., "hooks": [handler]}``,
    where the handler is normalised as Codex does (``type``, ``command``, ``timeout``
    defaulting to 600 s and at least 1, ``async``; optional keys only when set) and the
    matcher is left out for events that ignore it. Checked against the real Codex in
    tests/test_codex_e2e.py (a hook trusted with this hash runs)."""
    norm: dict = {"type": "command", "command": handler.get("command", "")}
    for key in ("commandWindows", "statusMessage", "additionalContextLimit"):
        if handler.get(key) is not None:
            norm[key] = handler[key]
    timeout = handler.get("timeout")
    norm["timeout"] = max(1, int(timeout)) if isinstance(timeout, int) and not isinstance(timeout, bool) else 600
    norm["async"] = handler.get("async") is True
    identity: dict = {"event_name": EVENT_LABELS.get(event, event), "hooks": [norm]}
    if matcher is not None and event in _MATCHER_EVENTS:
        identity["matcher"] = matcher
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def our_hooks(path: Path) -> list[dict]:
    """Ledger's handlers in ``path``: ``[{"event", "key", "hash", "command"}]`` with the
    state key and the trust hash Codex gives each. ``[]`` for a missing or unreadable
    file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    hooks = data.get("hooks") if isinstance(data, dict) else None
    out = []
    for event, groups in (hooks.items() if isinstance(hooks, dict) else ()):
        for gi, g in enumerate(groups if isinstance(groups, list) else ()):
            handlers = g.get("hooks") if isinstance(g, dict) else None
            for hi, h in enumerate(handlers if isinstance(handlers, list) else ()):
                if is_ours(h):
                    matcher = g.get("matcher") if isinstance(g.get("matcher"), str) else None
                    out.append({"event": event, "key": f"{path}:{EVENT_LABELS.get(event, event)}:{gi}:{hi}",
                                "hash": trust_hash(event, h, matcher), "command": h.get("command", "")})
    return out


def hook_states(config: Path | None = None) -> dict[str, dict]:
    """``[hooks.state]`` of Codex's user ``config.toml`` (key -> ``{"enabled"?,
    "trusted_hash"?}``); ``{}`` when the file is missing or not valid TOML."""
    p = config or codex_home() / "config.toml"
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    hooks = data.get("hooks")
    state = hooks.get("state") if isinstance(hooks, dict) else None
    return {str(k).strip(): v for k, v in state.items() if isinstance(v, dict)} if isinstance(state, dict) else {}


def trust_status(path: Path | str, config: Path | None = None) -> dict:
    """What Codex's trust state says about ledger's hooks in ``path``:
    ``{"total", "trusted", "modified", "untrusted", "disabled", "events_untrusted"}``
    (counts of handlers; ``modified``: trusted once, changed since, e.g. after a
    reinstall with another ledger path; ``events_untrusted``: the events not trusted).
    The key's path part is compared after resolving symlinks, as Codex may have seen
    the file through another spelling of the same path."""
    path = Path(path)
    ours = our_hooks(path)
    states = hook_states(config)
    by_key: dict[str, dict] = {}
    for key, st in states.items():
        head, sep, tail = key.rpartition(":")  # handler index
        head2, _, group = head.rpartition(":")
        file_part, _, label = head2.rpartition(":")
        if sep and file_part:
            by_key[f"{os.path.realpath(file_part)}:{label}:{group}:{tail}"] = st
    real = os.path.realpath(path)
    counts = {"total": len(ours), "trusted": 0, "modified": 0, "untrusted": 0, "disabled": 0, "events_untrusted": []}
    for h in ours:
        st = by_key.get(real + h["key"][len(str(path)):], {})
        if st.get("enabled") is False:
            counts["disabled"] += 1
            counts["events_untrusted"].append(h["event"])
        elif st.get("trusted_hash") == h["hash"]:
            counts["trusted"] += 1
        else:
            counts["modified" if st.get("trusted_hash") else "untrusted"] += 1
            counts["events_untrusted"].append(h["event"])
    return counts
