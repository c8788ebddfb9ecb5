"""Setup commands: install / uninstall harness hooks, replay transcripts, checkpoints."""

from __future__ import annotations

import sys

import click

from ..errors import InvalidInput
from .base import WholeNumber, _json, _out, cli, common


def _harnesses() -> list[str]:
    """Every harness in the registry (ledger/harness/adapters/: one module each)."""
    from ..harness.adapters import names

    return names()


#: ``ledger install mcp --client X``: the MCP server for any MCP client (docs/mcp.md).
MCP = "mcp"


def _mcp_clients() -> list[str]:
    from ..harness.mcp_clients import CLIENTS

    return list(CLIENTS)


class _HarnessChoice(click.Choice):
    """A harness, or `mcp`; an MCP client's name given as the harness (`ledger install
    cursor`) is answered with the command that was meant."""

    def convert(self, value, param, ctx):
        if value not in self.choices and value in _mcp_clients():
            verb = ctx.info_name if ctx is not None else "install"
            self.fail(f"{value!r} is an MCP client, not a harness with hooks. Try: ledger {verb} mcp --client {value}",
                      param, ctx)
        return super().convert(value, param, ctx)


@cli.command()
@click.argument("harness", type=_HarnessChoice(_harnesses() + [MCP]))
@click.option("--client", type=click.Choice(_mcp_clients()),
              help="With `mcp`: the MCP client whose configuration to write.")
@click.option("--print", "print_only", is_flag=True,
              help="With `mcp`: print the client's configuration snippet instead of writing it.")
@click.option("--user", "scope", flag_value="user",
              help="Every project: ~/.claude/settings.json, $CODEX_HOME/hooks.json (~/.codex/) for Codex, or "
                   "$XDG_CONFIG_HOME/opencode/plugins/ for OpenCode; with `mcp`, the client's user configuration.")
@click.option("--project", "scope", flag_value="project",
              help="This project (default): <repository root>/.claude/settings.local.json, which stays out of "
                   "version control; <repository root>/.codex/hooks.json for Codex; or <repository root>/.opencode/plugins/; "
                   "with `mcp`, the client's project file.")
@click.option("--dir", "project_dir", type=click.Path(file_okay=False),
              help="A folder of the project (default: current directory; Claude Code hooks go to its repository root).")
@click.option("--link", is_flag=True, help="OpenCode: symlink the plugin instead of copying it; Gemini CLI: link the "
              "extension to a copy in $LEDGER_HOME.")
@click.option("--no-distill", is_flag=True,
              help="Do not turn distillation on (by default it runs through `claude -p`, `codex exec` or OpenCode itself).")
@common()
def install(harness, client, print_only, scope, project_dir, link, no_distill, db, as_json):
    """Wire ledger's hooks into a harness (idempotent; your own hooks are kept), or
    register `ledger mcp` with an MCP client.

    \b
    ledger install claude-code            # this project (its .claude/settings.local.json)
    ledger install claude-code --user     # every project (~/.claude/settings.json)
    ledger install codex                  # this project (its .codex/hooks.json)
    ledger install opencode               # <repository root>/.opencode/plugins/ledger.js
    ledger install mcp --client cursor    # ./.cursor/mcp.json (mcpServers.ledger)
    ledger install mcp --client zed --print
    """
    if harness == MCP:
        return _install_mcp(client, scope, project_dir, print_only, db, as_json)
    _mcp_only(harness, client, print_only)
    scope = scope or "project"
    from ..harness import distill_setup
    from ..harness.adapters import get
    from ..paths import shown_location

    adapter = get(harness)
    store_env = _store_env(db)
    shown = _shown_store(db)  # before anything is written: a store ledger cannot open is refused here
    import inspect

    # ``env`` is optional in the adapter contract (a harness may have nowhere to put it).
    takes_env = "env" in inspect.signature(adapter.install).parameters
    from ..harness.filetx import all_or_nothing

    with all_or_nothing():  # every file of the install, or none (harness/filetx.py)
        r = adapter.install(scope, project_dir, link=link, **({"env": store_env} if takes_env else {}))
        d = distill_setup.disable() if no_distill else distill_setup.enable(harness)
    r["store"] = shown
    r["store_env"] = {k: shown_location(v) for k, v in store_env.items()}  # printed: no password
    if as_json:
        _json({**r, "distill": d})
        return
    for line in adapter.install_lines(r, scope):
        _out(line)
    _out("  " + (_opted_out(d) if no_distill else distill_setup.summary(d, harness)))


def _mcp_only(harness: str, client, print_only: bool) -> None:
    """--client and --print belong to `mcp`: refuse them elsewhere rather than ignore them."""
    if client or print_only:
        flag = "--client" if client else "--print"
        raise InvalidInput(f"{flag} goes with `ledger install mcp`, not with {harness}. "
                           f"Try: ledger install mcp --client {client or 'cursor'}", field="client", value=client)


def _need_client(client, verb: str) -> None:
    if not client:
        from ..harness.mcp_clients import CLIENTS

        raise InvalidInput(f"Which MCP client? Try: ledger {verb} mcp --client cursor (one of: {', '.join(CLIENTS)}).",
                           field="client", choices=CLIENTS)


def _install_mcp(client, scope, project_dir, print_only, db, as_json) -> None:
    """`ledger install mcp --client X`: write (or with --print show) the client's entry
    for `ledger mcp`, with the store variables of this install in its env."""
    from ..harness import mcp_clients

    _need_client(client, "install")
    store_env = _store_env(db)
    if print_only:
        snippet = mcp_clients.config_snippet(client, store_env or None)
        if as_json:
            _json({"client": client, "path": str(mcp_clients.config_path(client, scope, project_dir)),
                   "format": "toml" if client == "codex" else "json", "snippet": snippet})
        else:
            click.echo(snippet, nl=False)
        return
    from ..harness.filetx import all_or_nothing

    shown = _shown_store(db)  # before anything is written: a store ledger cannot open is refused here
    with all_or_nothing():  # the client's file and its backup, or neither
        r = mcp_clients.install(client, scope, project_dir, env=store_env or None)
    r["store"] = shown
    if as_json:
        _json(r)
        return
    what = "already registered" if not r["changed"] else ("registered" if not r["created"] else "registered (new file)")
    _out(f"✓ ledger MCP server {what} for {client}: {r['path']}")
    _out(f"  runs: {r['entry']['command']} {' '.join(r['entry']['args'])}   store: {r['store']}")
    if r["backup"]:
        _out(f"  the file had comments, which JSON rewriting drops: your original is kept at {r['backup']}")
    _out(f"  {_MCP_NEXT.get(client, 'Restart the client to load it.')}"
         + (f" {_MCP_PROJECT_NOTE[client]}" if client in _MCP_PROJECT_NOTE and r["scope"] == "project" else ""))


#: What to do after writing a client's configuration (docs/mcp.md).
_MCP_NEXT = {
    "claude-desktop": "Restart Claude Desktop to load it.",
    "cursor": "Cursor picks it up in Settings → MCP (enable it there if asked).",
    "vscode": "VS Code shows it under MCP: List Servers; start it there or from Copilot's agent mode.",
    "zed": "Zed reloads settings on save; the server shows in the Agent Panel's settings.",
    "claude-code": "Start Claude Code: a project .mcp.json asks once for approval; tools appear as mcp__ledger__*.",
    "codex": "Start Codex (codex mcp list shows it).",
    "gemini": "Start Gemini CLI; /mcp lists the server and its tools.",
}


#: Added for a project install only (a user install has no such condition).
_MCP_PROJECT_NOTE = {"codex": "Codex reads a project's .codex/config.toml only once you trust the project."}


def _uninstall_mcp(client, scope, project_dir, as_json) -> None:
    from ..harness import mcp_clients

    _need_client(client, "uninstall")
    from ..harness.filetx import all_or_nothing

    with all_or_nothing():
        r = mcp_clients.uninstall(client, scope, project_dir)
    if as_json:
        _json(r)
        return
    if r["removed"]:
        _out(f"removed the ledger MCP server from {r['path']}")
    else:
        _out(f"no ledger MCP server registered for {client} in {r['path']} (nothing removed)")
    if r.get("kept"):
        _out(f"  left alone: {r['kept']}")
    for p in r["deleted"]:
        _out(f"  deleted {p}: it held nothing but ledger's entry")
    if r.get("backup"):
        _out(f"  the file had comments, which JSON rewriting drops: your original is kept at {r['backup']}")


def _shown_store(db: str | None) -> str:
    """The store this install points at, fit to print: an absolute path, or the URL
    without its password."""
    from ..paths import db_file, shown_location, store_location

    return shown_location(store_location(db_file(db)))


def _store_env(db: str | None) -> dict:
    """The store variables to write into a hook command: the ones set for this install
    (``--db``, ``$LEDGER_DB``, ``$LEDGER_HOME``) as absolute paths, so the harness,
    started from anywhere without them, uses the store the user installed with."""
    import os

    env = {}
    if os.environ.get("LEDGER_HOME"):
        env["LEDGER_HOME"] = os.path.abspath(os.path.expanduser(os.environ["LEDGER_HOME"]))
    explicit = db or os.environ.get("LEDGER_DB")
    if explicit:
        from ..paths import store_location

        env["LEDGER_DB"] = store_location(explicit)  # a PostgreSQL URL stays a URL
    return env


def _opted_out(d: dict) -> str:
    return ("Distillation off (--no-distill): ledger's [llm] lines removed from " + d["path"] if d["removed"]
            else "Distillation not turned on (--no-distill). Injection and checkpoints work without it.")


@cli.command()
@click.argument("harness", type=_HarnessChoice(_harnesses() + [MCP]))
@click.option("--client", type=click.Choice(_mcp_clients()), help="With `mcp`: the MCP client to remove ledger from.")
@click.option("--user", "scope", flag_value="user",
              help="Every project: ~/.claude/settings.json, ~/.codex/hooks.json, or OpenCode's user plugins.")
@click.option("--project", "scope", flag_value="project", help="This project (default).")
@click.option("--dir", "project_dir", type=click.Path(file_okay=False), help="A folder of the project (default: current directory).")
@common()
def uninstall(harness, client, scope, project_dir, db, as_json):
    """Remove exactly ledger's hooks (or plugin) from a harness, and the [llm] lines its
    install wrote to turn distillation on (when they are still as written); with `mcp`,
    exactly ledger's server entry from an MCP client's configuration."""
    if harness == MCP:
        return _uninstall_mcp(client, scope, project_dir, as_json)
    _mcp_only(harness, client, False)
    scope = scope or "project"
    from ..harness import distill_setup
    from ..harness.adapters import get
    from ..harness.filetx import all_or_nothing

    with all_or_nothing():  # every file of the uninstall, or none (harness/filetx.py)
        r = get(harness).uninstall(scope, project_dir)
        d = distill_setup.disable(harness)
    if as_json:
        _json({**r, "distill": d})
        return
    from .render import plural

    if not r["removed"]:
        where = "for this user" if scope == "user" else "here"
        _out(f"no ledger hooks installed for {harness} {where} (nothing removed)")
    else:
        what = {"claude-code": "ledger hook", "codex": "ledger hook", "gemini": "ledger extension"}.get(harness, "ledger plugin file")
        _out(f"removed {plural(r['removed'], what)} from {r['path']}")
    for line in r.get("notes") or ():
        _out("  " + line)
    for p in r.get("deleted") or ():
        _out(f"  deleted {p}: it held nothing but ledger's settings")
    if d["removed"]:
        _out(f"  Distillation off: removed the [llm] backend \"{d['backend']}\" that `ledger install {harness}` "
             f"set in {d['path']}")


@cli.command("mcp")
@click.option("--db", type=click.Path(dir_okay=False), help="Store path (default: $LEDGER_DB, $LEDGER_HOME/ledger.db, ~/.ledger/ledger.db).")
@click.option("--agent", help="Agent id for reads and writes (default: $LEDGER_AGENT, else the MCP client's name).")
def mcp_command(db, agent):
    """Serve the store to an MCP client over stdio (Claude Desktop, Cursor, VS Code, Zed...).

    A client starts this itself; `ledger install mcp --client <client>` registers it.
    Tools: recall, search, show, remember, conflicts, judge, checkpoint (docs/mcp.md).

    \b
    ledger install mcp --client cursor
    ledger install mcp --client zed --print
    """
    # `ledger mcp` is normally routed before click is imported (cli/__init__.py).
    from ..mcp.server import main as serve_mcp

    raise SystemExit(serve_mcp([*(["--db", db] if db else []), *(["--agent", agent] if agent else [])]))


@cli.command()
@click.option("--dir", "project_dir", type=click.Path(file_okay=False), help="A folder of the project (default: current directory).")
@common()
def doctor(project_dir, db, as_json):
    """Check the installation end to end and say what to fix.

    Hooks registered for each harness and pointing at a working ledger, the store
    writable with its migrations current, the LLM backend reachable, and a test hook
    payload going all the way through. Exit status 1 when a check fails.

    \b
    ledger doctor
    ledger doctor --json
    """
    from ..harness.doctor import run_checks

    checks = run_checks(db, project_dir)
    failed = any(c.status == "fail" for c in checks)
    if as_json:
        _json({"ok": not failed, "checks": [c.to_dict() for c in checks]})
    else:
        marks = {"ok": "✓", "warn": "!", "fail": "✕", "skip": "·"}
        width = max(len(c.name) for c in checks)
        lines = []
        for c in checks:
            lines.append(f"{marks[c.status]} {c.name:<{width}} {c.detail}")
            if c.fix and c.status in ("warn", "fail"):
                lines.append(f"  {'':<{width}} fix: {c.fix}")
        lines.append("")
        n_fail = sum(c.status == "fail" for c in checks)
        n_warn = sum(c.status == "warn" for c in checks)
        lines.append("all good" if not (n_fail or n_warn) else
                     ", ".join(x for x in (f"{n_fail} failed" if n_fail else "", f"{n_warn} to look at" if n_warn else "") if x))
        _out("\n".join(lines))
    if failed:
        raise SystemExit(1)


@cli.command()
@click.argument("transcripts", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--distiller", type=click.Choice(["heuristic", "config"]), default="heuristic", show_default=True,
              help="heuristic: the deterministic fallback distiller (file outlines, command outcomes; docs/watcher.md); config: the LLM in config.toml.")
@click.option("--every", type=WholeNumber(1, 10000), help="Distill every N steps (default from config: 15).")
@click.option("--escalate-after", type=WholeNumber(1, 1000), help="Injections before escalation (default 4).")
@click.option("--db", type=click.Path(dir_okay=False),
              help="Replay into this store and keep it (default: a throwaway store, never your own).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable JSON output.")
def replay(transcripts, distiller, every, escalate_after, db, as_json):
    """Replay Claude Code transcripts through the hooks and report what ledger would do.

    \b
    ledger replay ~/.claude/projects/*/SESSION.jsonl
    """
    from ..harness.replay import format_report
    from ..harness.replay import replay as run_replay

    reports = [run_replay(t, db=db, distiller=distiller, every=every, escalate_after=escalate_after) for t in transcripts]
    if as_json:
        _json(reports)
    else:
        _out("\n\n".join(format_report(r) for r in reports))


@cli.group(invoke_without_command=True)
@click.option("--session", help="Only this session id.")
@click.option("--project", "project_dir", help="Only this project folder.")
@click.option("--limit", default=10, show_default=True, type=WholeNumber(1, 1000))
@click.option("--full", is_flag=True, help="Print each checkpoint in full.")
@common()
@click.pass_context
def checkpoints(ctx, session, project_dir, limit, full, db, as_json):
    """Checkpoints written at Stop / SessionEnd / OpenCode idle, newest first.

    \b
    ledger checkpoints                 # the latest ten, one line each
    ledger checkpoints show 12         # one checkpoint in full
    """
    if ctx.invoked_subcommand is not None:
        return
    import os

    from ..paths import db_path
    from ..store.watch import checkpoint_count, open_store
    from ..store.watch import checkpoints as list_checkpoints
    from ..text import plural
    from .verbs import require_store

    require_store(db)  # a read: a store that does not exist is not created
    conn = open_store(str(db_path(db)))
    project = os.path.abspath(project_dir) if project_dir else None
    try:
        rows = list_checkpoints(conn, session=session, project=project, limit=limit)
        total = checkpoint_count(conn) if not rows else len(rows)
    finally:
        conn.close()
    if as_json:
        _json(rows)
        return
    if not rows and total:  # the filter matched nothing, not the store holding none
        given = " and ".join(f for f in (f"--session {session}" if session else "",
                                         f"--project {project}" if project else "") if f)
        _out(f"no checkpoints match {given} ({plural(total, 'checkpoint')} in the store: "
             "`ledger checkpoints` lists the latest, with their project and [session])")
        return
    if not rows:
        _out("no checkpoints yet — they are written when a hooked agent stops (ledger install claude-code)")
        return
    import time

    for r in rows:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(r["at"] / 1000))
        _out(f"#{r['id']:<5} {when}  {r['event']:<12} {r['branch'] or '—':<20} {r['project']}  [{r['session']}]")
        if full:
            _out(r["content"])


# `checkpoints show -1` is an id that is not a number, not the unknown option "-1".
@checkpoints.command("show", context_settings={"ignore_unknown_options": True})
@click.argument("checkpoint_id", metavar="ID")
@common()
def checkpoints_show(checkpoint_id, db, as_json):
    """Print one checkpoint (its id is the number `ledger checkpoints` shows after #)."""
    from ..paths import db_path
    from ..store.session_record import checkpoint
    from ..store.watch import open_store

    raw = checkpoint_id.lstrip("#")
    if not raw.isdigit():
        raise InvalidInput(f"checkpoint id must be a number like 12 (from `ledger checkpoints`), got {checkpoint_id!r}")
    from .verbs import require_store

    require_store(db)
    conn = open_store(str(db_path(db)))
    try:
        row = checkpoint(conn, int(raw))
    finally:
        conn.close()
    if row is None:
        from ..errors import UnknownCheckpoint

        raise UnknownCheckpoint(f"no checkpoint #{raw}; `ledger checkpoints` lists them")
    if as_json:
        _json(row)
    else:
        _out(row["content"].rstrip("\n"))


@cli.command(hidden=False, context_settings={"ignore_unknown_options": True})
@click.argument("args", nargs=-1)
@click.pass_context
def hook(ctx, args):
    """Harness hook entry (JSON on stdin): ledger hook claude-code <Event>.

    A harness runs this on every hook event, with the event's JSON on stdin; ledger
    answers in the harness's format and exits 0 whatever happens (failures go to
    $LEDGER_HOME/hook.log). `ledger install claude-code` registers it for you.

    \b
    echo '{"hook_event_name":"SessionStart","session_id":"s1","cwd":"."}' | ledger hook claude-code SessionStart
    """
    if sys.stdin.isatty():  # a person at a terminal, not a harness piping a payload
        click.echo(ctx.get_help())
        return
    # `ledger hook` is normally routed before click is imported (cli/__init__.py); this
    # command exists for --help and for callers that import the click app directly.
    from ..harness.runner import hook_main

    raise SystemExit(hook_main(list(args)))
