"""``ledger doctor``: check an installation end to end and say what to fix.

Each check returns a :class:`Check` (``status`` is ``ok``, ``warn``, ``fail`` or ``skip``;
``fix`` is the command or edit that repairs a ``warn``/``fail``). :func:`run_checks`
runs them in the order a hook needs them:

1. ``ledger``: the executable this process runs as, and its version.
2. ``claude-code hooks``: every ledger handler in Claude Code's settings files (user,
   and the project root's shared and local files), the events they cover, and whether
   each command's executable exists and answers ``--version``.
3. ``opencode plugin``: the plugin file for this project or user, and the command in it.
   ``codex hooks``: ledger's hooks in Codex's ``hooks.json`` (project, user), whether
   their command runs, and whether Codex's trust state (read, never written) lets them
   run: Codex skips a new or changed hook until the user trusts it in ``/hooks``.
   ``gemini extension``: ledger's Gemini CLI extension (a copy or a link), its hooks
   for every event, and whether their command runs.
4. ``store``: path, pending migrations (read without changing the file), write lock.
5. ``llm backend``: the configured distillation backend is there (a command on
   ``PATH``, an HTTP endpoint that answers, an API key that is set).
6. ``<harness> round trip``, one per installed harness: the command that harness runs
   (its hook, or OpenCode's session child) gets a finished tool call in that harness's
   own payload shape (the adapter's ``probe``) in a throwaway ``$LEDGER_HOME``; it must
   exit 0, print only JSON, log no failure, and record the observation in the throwaway
   store. With nothing installed, ``hook round trip`` checks Claude Code's path with
   this ledger.

Nothing here writes to the user's store or settings.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import tempfile
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path

from .install import CLAUDE_EVENTS, LOCAL_SETTINGS, SHARED_SETTINGS, _is_ours, ledger_command, project_root

#: Seconds any one probe (a subprocess, an HTTP request) may take.
PROBE_TIMEOUT = 10


@dataclass(frozen=True)
class Check:
    """One line of the report. ``status``: ``ok`` | ``warn`` | ``fail`` | ``skip``."""

    name: str
    status: str
    detail: str
    fix: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


def run_checks(db: str | None = None, project: str | None = None) -> list[Check]:
    """Every check, in order. ``db`` is the store path as the CLI resolved it (``--db``,
    ``$LEDGER_DB``...), ``project`` a folder of the project (default: the current one)."""
    from ..paths import db_path

    store = str(db_path(db))
    handlers = claude_handlers(project)
    claude, opencode, codex, gemini = (check_claude_hooks(handlers), check_opencode(project), check_codex(project),
                                       check_gemini())
    if not handlers and any(c.status != "skip" for c in (opencode, codex, gemini)):
        # Ledger serves another harness here: no Claude Code hooks is a choice, not a fault.
        claude = Check(claude.name, "skip", "not installed (ledger install claude-code, if you use Claude Code)")
    checks = [check_ledger(), claude, opencode, codex, gemini, check_store(store), check_settings(), check_llm()]
    installed = installed_commands(project, handlers)
    if not installed:
        checks.append(check_round_trip(ledger_command(), "claude-code", name="hook round trip"))
    for harness, exe in installed.items():
        checks.append(check_round_trip(exe, harness))
    return checks


def installed_commands(project: str | None, handlers: list[dict] | None = None) -> dict[str, str]:
    """``{harness: ledger executable its configuration runs}`` for every harness ledger
    is installed in here (Claude Code, Codex, Gemini CLI, OpenCode), in that order."""
    from .codex_install import hooks_path, our_hooks
    from .opencode_install import is_ours, plugin_path

    out: dict[str, str] = {}
    handlers = claude_handlers(project) if handlers is None else handlers
    if handlers:
        out["claude-code"] = next((h["exe"] for h in handlers if h["works"]), handlers[0]["exe"])
    for f in dict.fromkeys([hooks_path("project", project), hooks_path("user")]):
        hs = our_hooks(f)
        if hs:
            out["codex"] = _exe_of(hs[0]["command"])
            break
    hooks = _gemini_hooks()
    if hooks:
        out["gemini"] = _exe_of(hooks[0][1])
    plugin = next((p for p in (plugin_path("project", project), plugin_path("user")) if p.exists() and is_ours(p)), None)
    if plugin is not None:
        out["opencode"] = _opencode_command(plugin) or ledger_command()
    return out


def _opencode_command(plugin: Path) -> str | None:
    """The ledger command written into an OpenCode plugin file (None for a linked one)."""
    for line in plugin.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith("const LEDGER_COMMAND = "):
            try:
                cmd = json.loads(line.split("=", 1)[1].strip().rstrip(";"))
            except ValueError:
                return None
            return None if cmd == "__LEDGER_COMMAND__" else cmd
    return None


def _gemini_hooks() -> list[tuple[str, str]]:
    """``[(event, command)]`` of ledger's Gemini extension (followed through a link),
    ``[]`` when it is not installed or not ours or its hooks file is unreadable."""
    from .gemini_install import extension_dir, is_ours

    folder = extension_dir()
    if not folder.is_dir() or not is_ours(folder):
        return []
    source = _gemini_source(folder)
    try:
        data = json.loads((source / "hooks" / "hooks.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    hooks = data.get("hooks") if isinstance(data, dict) else None
    out = []
    for event, groups in (hooks.items() if isinstance(hooks, dict) else ()):
        for g in groups if isinstance(groups, list) else ():
            for h in (g.get("hooks") or []) if isinstance(g, dict) else ():
                if isinstance(h, dict) and f" hook gemini {event}" in str(h.get("command", "")):
                    out.append((event, str(h["command"])))
    return out


def _gemini_source(folder: Path) -> Path:
    """Where the extension's files are: the folder, or the target of its link record."""
    from .gemini_install import LINK_RECORD

    try:
        rec = json.loads((folder / LINK_RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return folder
    return Path(rec["source"]) if isinstance(rec, dict) and isinstance(rec.get("source"), str) else folder


def _version(exe: str, cache: dict[str, str | None] = {}) -> str | None:  # noqa: B006 - per-process memo
    """``exe --version`` output, or None when it does not run."""
    if exe not in cache:
        try:
            p = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=PROBE_TIMEOUT,
                               stdin=subprocess.DEVNULL)
            cache[exe] = p.stdout.strip() if p.returncode == 0 and p.stdout.strip() else None
        except (OSError, subprocess.SubprocessError):
            cache[exe] = None
    return cache[exe]


def check_ledger() -> Check:
    exe = ledger_command()
    v = _version(exe)
    if v is None:
        return Check("ledger", "fail", f"{exe} does not run", "Reinstall ledger (README: Install).")
    return Check("ledger", "ok", f"{v} at {exe}")


def _settings_files(project: str | None) -> list[Path]:
    home = Path.home() / ".claude"
    root = project_root(project) / ".claude"
    files = [home / SHARED_SETTINGS, home / LOCAL_SETTINGS, root / SHARED_SETTINGS, root / LOCAL_SETTINGS]
    return list(dict.fromkeys(files))  # the project may be the home folder


def _exe_of(command: str) -> str:
    """The program a hook command runs (skipping ``VAR=value`` prefixes)."""
    try:
        argv = shlex.split(command)
    except ValueError:
        return ""
    while argv and "=" in argv[0] and not argv[0].startswith(("/", ".")):
        argv.pop(0)
    return os.path.expanduser(argv[0]) if argv else ""


def claude_handlers(project: str | None = None) -> list[dict]:
    """Our handlers in every Claude Code settings file that applies here:
    ``[{"file", "event", "command", "exe", "works"}]``. Unreadable files are skipped
    (``check_claude_hooks`` reports them)."""
    out = []
    for f in _settings_files(project):
        try:
            data = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        hooks = data.get("hooks") if isinstance(data, dict) else None
        if not isinstance(hooks, dict):
            continue
        for event, groups in hooks.items():
            for g in groups if isinstance(groups, list) else ():
                for h in (g.get("hooks") or []) if isinstance(g, dict) else ():
                    if _is_ours(h):
                        exe = _exe_of(str(h.get("command", "")))
                        works = bool(exe) and os.access(exe, os.X_OK) and _version(exe) is not None
                        out.append({"file": str(f), "event": event, "command": h["command"], "exe": exe, "works": works})
    return out


def hooks_disabled(name: str) -> Check | None:
    """A warning for check ``name`` when ``$LEDGER_HOOKS_DISABLED`` turns the hooks off
    here: any true word (``1``, ``true``, ``yes``, ``on``, any case; :mod:`ledger.flags`),
    named as it is set. A value that is not a boolean leaves them on (``settings``
    reports it)."""
    from ..flags import env_flag

    if not env_flag("LEDGER_HOOKS_DISABLED"):
        return None
    raw = os.environ.get("LEDGER_HOOKS_DISABLED", "")
    return Check(name, "warn", f"installed, but LEDGER_HOOKS_DISABLED={raw.strip()} here turns every hook into a no-op",
                 "unset LEDGER_HOOKS_DISABLED   (or set it to 0)")


def check_claude_hooks(handlers: list[dict]) -> Check:
    name = "claude-code hooks"
    if not handlers:
        return Check(name, "warn", "not installed for this project or user", "ledger install claude-code")
    broken = sorted({h["exe"] for h in handlers if not h["works"]})
    if broken:
        return Check(name, "fail", f"the hook command {', '.join(broken)} does not run (a moved or deleted virtualenv?)",
                     "ledger install claude-code   (points the hooks at this ledger)")
    files = sorted({h["file"] for h in handlers})
    missing = [e for e in CLAUDE_EVENTS if e not in {h["event"] for h in handlers}]
    if missing:
        return Check(name, "warn", f"in {', '.join(files)} but without {', '.join(missing)}", "ledger install claude-code")
    if len(files) > 1:
        per_event = max(sum(1 for h in handlers if h["event"] == e) for e in CLAUDE_EVENTS)
        if per_event > 1:
            return Check(name, "warn", f"registered in {len(files)} files ({', '.join(files)}): every hook runs twice",
                         "ledger uninstall claude-code --user   (or without --user, to keep the other one)")
    off = hooks_disabled(name)
    if off is not None:
        return off
    return Check(name, "ok", f"{len(CLAUDE_EVENTS)} events in {', '.join(files)}")


def check_opencode(project: str | None) -> Check:
    from .opencode_install import is_ours, plugin_path

    name = "opencode plugin"
    found = [p for p in (plugin_path("project", project), plugin_path("user")) if (p.exists() or p.is_symlink())]
    ours = [p for p in found if is_ours(p)]
    if not ours:
        return Check(name, "skip", "not installed (ledger install opencode, if you use OpenCode)")
    p = ours[0]
    if p.is_symlink() and not p.exists():
        return Check(name, "fail", f"{p} points at a file that is gone", "ledger install opencode")
    text = p.read_text(encoding="utf-8", errors="replace")
    cmd = None
    for line in text.splitlines():
        if line.startswith("const LEDGER_COMMAND = "):
            try:
                cmd = json.loads(line.split("=", 1)[1].strip().rstrip(";"))
            except ValueError:
                cmd = None
    if cmd and cmd != "__LEDGER_COMMAND__" and _version(cmd) is None:
        return Check(name, "fail", f"{p} starts {cmd}, which does not run", "ledger install opencode")
    off = hooks_disabled(name)  # the plugin reads the variable by the same rule
    if off is not None:
        return off
    return Check(name, "ok", f"{p}" + (f" (starts {cmd})" if cmd and cmd != "__LEDGER_COMMAND__" else ""))


def check_codex(project: str | None) -> Check:
    """Ledger's hooks in Codex's project and user ``hooks.json`` and their trust state."""
    from .codex_install import (
        CODEX_EVENTS,
        PROJECT_TRUST_HINT,
        TRUST_HINT,
        hooks_path,
        our_hooks,
        project_trusted,
        trust_status,
    )

    name = "codex hooks"
    files = list(dict.fromkeys([hooks_path("project", project), hooks_path("user")]))
    found = [(f, our_hooks(f)) for f in files]
    found = [(f, hs) for f, hs in found if hs]
    if not found:
        return Check(name, "skip", "not installed (ledger install codex, if you use Codex)")
    for f, hs in found:
        exes = sorted({_exe_of(h["command"]) for h in hs})
        broken = [e for e in exes if not (e and os.access(e, os.X_OK) and _version(e) is not None)]
        if broken:
            return Check(name, "fail", f"{f}: the hook command {', '.join(broken)} does not run",
                         "ledger install codex   (points the hooks at this ledger)")
        missing = [e for e in CODEX_EVENTS if e not in {h["event"] for h in hs}]
        if missing:
            return Check(name, "warn", f"{f} lacks {', '.join(missing)}", "ledger install codex")
        if f == files[0] and f != hooks_path("user") and project_trusted(f.parent.parent) is False:
            return Check(name, "warn", f"{f}: Codex does not trust this project, so it ignores its .codex/ folder",
                         PROJECT_TRUST_HINT + " Or, for every project instead: ledger uninstall codex && "
                         "ledger install codex --user")
        t = trust_status(f)
        if t["trusted"] < t["total"]:
            what = ("changed since you trusted them" if t["modified"] and not t["untrusted"]
                    else "disabled" if t["disabled"] and not (t["untrusted"] or t["modified"]) else "not trusted yet")
            return Check(name, "warn", f"{f}: {t['total'] - t['trusted']} of {t['total']} hooks {what} "
                         f"({', '.join(t['events_untrusted'])}); Codex skips them", TRUST_HINT)
    if len(found) > 1:
        # Codex runs the matching hooks of every hooks.json it loads (docs/harness-contracts.md C1).
        return Check(name, "warn", f"registered in {len(found)} files ({', '.join(str(f) for f, _ in found)}): "
                     "every hook runs twice", "ledger uninstall codex --user   (or without --user, to keep the other one)")
    off = hooks_disabled(name)
    if off is not None:
        return off
    return Check(name, "ok", f"{len(CODEX_EVENTS)} events, trusted, in {', '.join(str(f) for f, _ in found)}")


def check_gemini() -> Check:
    """Ledger's Gemini CLI extension: there and ours, every event hooked, the command runs."""
    from .gemini_install import CONFIG_FILE, HOOK_EVENTS, _broken, extension_dir, is_ours

    name = "gemini extension"
    folder = extension_dir()
    if not (folder.exists() or folder.is_symlink()):
        return Check(name, "skip", "not installed (ledger install gemini, if you use Gemini CLI)")
    broken = _broken(folder)
    if broken:
        return Check(name, "fail", f"{broken}: Gemini CLI cannot load the extension",
                     f"move {folder} away, then: ledger install gemini")
    if not is_ours(folder):
        return Check(name, "skip", f"{folder} is another program's extension named ledger (not installed by ledger)")
    source = _gemini_source(folder)
    if not (source / CONFIG_FILE).is_file():
        return Check(name, "fail", f"{folder} links to {source}, which is gone", "ledger install gemini --link")
    hooks = _gemini_hooks()
    missing = [e for e in HOOK_EVENTS if e not in {e2 for e2, _ in hooks}]
    broken_exes = sorted({e for e in (_exe_of(c) for _, c in hooks) if not (e and os.access(e, os.X_OK) and _version(e))})
    if broken_exes:
        return Check(name, "fail", f"{source / 'hooks' / 'hooks.json'}: the hook command {', '.join(broken_exes)} "
                     "does not run (a moved or deleted virtualenv?)", "ledger install gemini   (points the hooks at this ledger)")
    if missing:
        return Check(name, "warn", f"{source / 'hooks' / 'hooks.json'} lacks {', '.join(missing)}", "ledger install gemini")
    off = hooks_disabled(name)
    if off is not None:
        return off
    return Check(name, "ok", f"{len(HOOK_EVENTS)} events in {folder}" + (f" (linked to {source})" if source != folder else ""))


def check_store(path: str) -> Check:
    from ..errors import LedgerError
    from ..store.connection import is_url, read_only_message, unwritable
    from ..store.health import DAMAGE_FIX, migration_status, quick_check, write_probe

    name = "store"
    if is_url(path):
        return _check_pg_store(path)
    fix = "Check the file and its folder's permissions, or point --db / $LEDGER_DB elsewhere."
    if not os.path.exists(path):
        # Not created yet (that happens on first use): the nearest existing folder
        # must let us create it. Doctor itself creates nothing.
        folder = Path(path).resolve().parent
        while not folder.exists():
            folder = folder.parent
        if not os.access(folder, os.W_OK | os.X_OK):
            return Check(name, "fail", f"{path} cannot be created: {folder} is not writable", fix)
        return Check(name, "ok", f"{path} (new: created on first use)")
    why = unwritable(path)
    if why is not None:
        return Check(name, "fail", f"{path} cannot be written: {why}",
                     read_only_message(path, why).split("To save changes, ", 1)[-1])
    try:
        st = migration_status(path)
        write_probe(path)
    except LedgerError as exc:
        # A file SQLite cannot read as a database (random bytes, a truncated copy) is not
        # fixed by permissions: say how to restore or salvage it, as quick_check's finding does.
        return Check(name, "fail", exc.message, DAMAGE_FIX if getattr(exc, "reason", None) == "corrupt" else fix)
    qc = quick_check(path)
    took = f"{qc['ms'] / 1000:.1f} s"
    if not qc["ok"]:
        shown = "; ".join(" ".join(x.split()) for x in qc["problems"][:3])
        return Check(name, "fail", f"{path} is damaged: SQLite's quick_check ({took}) found: {shown}. "
                     "Reading some memories fails with \"database disk image is malformed\"", DAMAGE_FIX)
    checked = f"quick_check ok in {took}" if qc["finished"] else f"quick_check found nothing in its first {took}, not finished"
    if st["pending"]:
        return Check(name, "warn", f"{path}: {len(st['pending'])} migration(s) not applied yet ({', '.join(st['pending'])})",
                     "ledger stats   (any command applies them)")
    return Check(name, "ok", f"{path} (writable, {len(st['applied'])} migrations current, {checked})")


def _check_pg_store(url: str) -> Check:
    """:func:`check_store` for a PostgreSQL store: reachable, its migrations, its write
    lock. The URL is shown without its password."""
    from ..errors import LedgerError
    from ..store.health import migration_status, write_probe
    from ..store.pg import redact

    shown = redact(url)
    fix = "Check the URL (--db, $LEDGER_DB), that the server is running and that this machine may connect."
    try:
        st = migration_status(url)
        if not st["exists"]:
            return Check("store", "ok", f"{shown} (new: its tables are created on first use)")
        write_probe(url)
    except LedgerError as exc:
        return Check("store", "fail", exc.message, fix)
    if st["pending"]:
        return Check("store", "warn", f"{shown}: {len(st['pending'])} migration(s) not applied yet ({', '.join(st['pending'])})",
                     "ledger stats   (any command applies them)")
    return Check("store", "ok", f"{shown} (PostgreSQL, writable, {len(st['applied'])} migrations current)")


def check_settings() -> Check:
    """Every value in config.toml and the environment is valid (a bad one falls back to
    its default in the hooks, so the user would not otherwise notice)."""
    from ..watcher import config as config_mod

    loaded = config_mod.load_checked()
    if loaded.problems:
        return Check("settings", "fail", "; ".join(str(p) for p in loaded.problems),
                     "`ledger config set <key> <value>` or edit the file; `ledger config list` shows every setting")
    return Check("settings", "ok", f"{len(config_mod.SETTINGS)} settings valid ({loaded.path})")


def check_llm() -> Check:
    from ..watcher import config as config_mod

    name = "llm backend"
    cfg = config_mod.load(errors=[])  # bad values are check_settings' report; the defaults apply
    llm = cfg["llm"]
    backend = llm.get("backend") or "none"
    if backend == "none":
        return Check(name, "warn", "none: nothing is distilled (injection and checkpoints still work)",
                     'set [llm] backend in $LEDGER_HOME/config.toml (README: Configuration)')
    if backend in ("fallback", "heuristic"):
        return Check(name, "ok", f"{backend}: the deterministic distiller, no LLM (file outlines, command outcomes)")
    if backend == "command":
        exe = _exe_of(llm.get("command") or "")
        found = shutil.which(exe) if exe else None
        if not found:
            return Check(name, "fail", f"command: {exe or '(empty)'} is not on PATH", "install it, or set [llm] command")
        return Check(name, "ok", f"command: {llm['command']} ({found})")
    if backend == "codex":
        from ..watcher.llm import codex_argv

        exe = codex_argv(llm)[0]
        found = shutil.which(exe)
        return Check(name, "ok", f"codex exec ({found})") if found else Check(
            name, "fail", f"codex: {exe} is not on PATH", "install Codex, or pick another [llm] backend")
    if backend == "opencode":
        found = shutil.which("opencode")
        return Check(name, "ok", f"opencode ({found})") if found else Check(
            name, "fail", "opencode: the opencode command is not on PATH", "install OpenCode, or pick another [llm] backend")
    if backend in ("openai", "anthropic"):
        base = (llm.get("url") or ("https://api.openai.com/v1" if backend == "openai" else "https://api.anthropic.com")).rstrip("/")
        var = llm.get("api_key_env") or ("ANTHROPIC_API_KEY" if backend == "anthropic" else "")
        if var and not os.environ.get(var):
            return Check(name, "fail", f"{backend}: ${var} is not set", f"export {var}=...")
        url = base + ("/models" if backend == "openai" else "/v1/models")
        try:
            with urllib.request.urlopen(urllib.request.Request(url, method="GET"), timeout=PROBE_TIMEOUT):
                pass
        except urllib.error.HTTPError:
            pass  # it answered (401/404 without a key is still reachable)
        except (urllib.error.URLError, OSError) as exc:
            return Check(name, "fail", f"{backend}: cannot reach {base} ({getattr(exc, 'reason', exc)})",
                         "start the server, or fix [llm] url")
        return Check(name, "ok", f"{backend}: {base} answers" + (f" (model {llm['model']})" if llm.get("model") else ""))
    return Check(name, "fail", f"unknown backend {backend!r}", "[llm] backend = command | openai | anthropic | codex | opencode | fallback | none")


def check_round_trip(exe: str, harness: str = "claude-code", *, name: str | None = None) -> Check:
    """Send a finished tool call through ``harness``'s own path with ``exe``: ``exe hook
    <harness> <event>`` with the adapter's :func:`probe` payload, or for a harness whose
    plugin talks to a child (OpenCode), one request to ``exe __serve-session <harness>``;
    against a throwaway store, then confirm the observation arrived (the hook fails
    open, so its exit status alone proves nothing)."""
    from ..service import Ledger
    from .adapters import get

    name = name or f"{harness} round trip"
    fix = f"ledger install {harness}"
    with tempfile.TemporaryDirectory(prefix="ledger-doctor-") as tmp:
        home, proj = Path(tmp) / "home", Path(tmp) / "project"
        proj.mkdir()
        (proj / "notes.txt").write_text("doctor\n")
        env = {k: v for k, v in os.environ.items() if not k.startswith("LEDGER_")}
        env.update(LEDGER_HOME=str(home), LEDGER_DB=str(home / "doctor.db"), LEDGER_LLM_BACKEND="none")
        event, payload = get(harness).probe(str(proj), str(proj / "notes.txt"))
        if event is None:
            argv, data = [exe, "__serve-session", harness], json.dumps({"id": 1, "event": payload}) + "\n"
        else:
            argv, data = [exe, "hook", harness, event], json.dumps(payload)
        try:
            p = subprocess.run(argv, input=data.encode(), capture_output=True, env=env, cwd=proj, timeout=PROBE_TIMEOUT)
        except (OSError, subprocess.SubprocessError) as exc:
            return Check(name, "fail", f"{' '.join(argv[:3])} ... did not run: {exc}", fix)
        log = home / "hook.log"
        if p.returncode != 0:
            return Check(name, "fail", f"{' '.join(argv)}: exit status {p.returncode}", fix)
        if log.exists() and log.read_text(encoding="utf-8", errors="replace").strip():
            last = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-1]
            return Check(name, "fail", f"the hook failed (and failed open): {last}", "report this line; the agent is unaffected")
        for line in p.stdout.decode("utf-8", "replace").strip().splitlines():
            try:
                answer = json.loads(line)
            except ValueError:
                return Check(name, "fail", f"{' '.join(argv[1:])} printed non-JSON: {line[:120]!r}",
                             "report this; the harness would ignore it")
            if event is None and isinstance(answer, dict) and answer.get("error"):
                return Check(name, "fail", f"the session child answered an error: {answer['error']}", fix)
        try:
            with Ledger.open(home / "doctor.db") as led:
                seen = led.stats()["watcher"]["observations"]
        except Exception as exc:  # noqa: BLE001 - any failure here is the finding
            return Check(name, "fail", f"cannot read the test store: {exc}", "")
        if seen < 1:
            return Check(name, "fail", "the hook ran but recorded no observation", "check LEDGER_HOOKS_DISABLED and [watcher] enabled")
    via = f"{' '.join(argv[1:3])}" if event is None else f"{' '.join(argv[1:])}"
    return Check(name, "ok", f"{harness}'s finished tool call observed through {exe} {via}")
