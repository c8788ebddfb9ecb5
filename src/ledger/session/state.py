"""Session state (seed lean-session, reference §3), wired to events the harness really
sends: a checkpoint on Stop (every turn) and SessionEnd, the Session State block before
compaction (PreCompact), and that block plus the project's strongest facts after it
(SessionStart with source ``compact`` or ``resume``).

Stdlib only (hook path). Every file read is bounded; a missing or unreadable file is one
line in the output, never an error.
"""

from __future__ import annotations

import json
import os
import time

from ..events import HookEvent, HookResponse
from ..store import watch as W

READ_CAP = 16_000  # bytes read from any one state file
BLOCK_CAP = 9_000  # characters of the injected Session State block
CONTEXT_CAP = 9_500  # block + facts after compaction: under Claude Code's 10,000-character cap per string
FACTS_CAP = 2_500  # characters of facts appended after compaction
MAX_FACTS = 12
GIT_TIMEOUT_S = 3


def read_bounded(path: str, cap: int = READ_CAP) -> tuple[str, str | None]:
    """``(text, note)``: at most ``cap`` bytes of ``path``; ``note`` says what went wrong
    or what was cut, else None. Missing files give ``("", None)``."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(cap + 1)
    except FileNotFoundError:
        return "", None
    except OSError as exc:
        return "", f"_{os.path.basename(path)} unreadable: {exc.strerror or exc}_"
    text = data[:cap].decode("utf-8", "replace").strip()
    if len(data) > cap:
        return text, f"_… {os.path.basename(path)} cut at {cap} bytes_"
    return text, None


def _git(cwd: str, *args: str) -> str | None:
    import subprocess  # only Stop/SessionEnd run git: keep it off the tool hooks' import path

    try:
        p = subprocess.run(["git", "-C", cwd, *args], capture_output=True, text=True, timeout=GIT_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired):
        return None
    # rstrip, not strip: the first line of `status --short` starts with a meaningful
    # space (" M a.py" is unstaged, "M  a.py" staged).
    return p.stdout.rstrip() if p.returncode == 0 else None


def loop_state() -> tuple[str, int]:
    """``(task, iteration)`` from ``$LEDGER_LOOP_STATE`` or ``~/.config/opencode/loop-state.json``."""
    path = os.environ.get("LEDGER_LOOP_STATE") or os.path.expanduser("~/.config/opencode/loop-state.json")
    text, _ = read_bounded(path, 64_000)
    try:
        data = json.loads(text) if text else {}
    except ValueError:
        return "", 0
    if not isinstance(data, dict):
        return "", 0
    task = data.get("task") if isinstance(data.get("task"), str) else ""
    it = data.get("iter") if isinstance(data.get("iter"), int) else 0
    return task, it


def checkpoint_markdown(project: str, changed: list[str], event_name: str, now_ms: int) -> tuple[str, str | None]:
    """The checkpoint in the seed's format; returns ``(markdown, branch)``."""
    ts = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(now_ms / 1000))
    task, it = loop_state()
    inside = _git(project, "rev-parse", "--is-inside-work-tree") == "true"
    branch = _git(project, "branch", "--show-current") if inside else None
    # Our own checkpoint file is left out of status and diff, or writing it would change
    # the next checkpoint (and a tracked .agents/ would never settle).
    status = _git(project, "status", "--short", "--", ".", _NOT_CHECKPOINT) if inside else None
    stat = _git(project, "diff", "--stat", "HEAD", "--", ".", _NOT_CHECKPOINT) if inside else None
    tasks, note = read_bounded(os.path.join(project, ".agents", "tasks.md"))
    rel = [os.path.relpath(p, project) if p.startswith(project.rstrip("/") + "/") else p for p in changed]
    lines = [f"# Checkpoint — {ts}", "", "## Current Task", task or "_No active task in loop state_"]
    if it > 0:
        lines.append(f"Loop iteration: {it}")
    lines += ["", "## Branch", (branch or "_detached HEAD_") if inside else "_not a git repo_", "",
              "## Files Changed This Session"]
    lines += [f"- {p}" for p in rel[:200]] or ["_none recorded by the watcher_"]
    if len(rel) > 200:
        lines.append(f"- … and {len(rel) - 200} more")
    lines += ["", "## Git Status"]
    lines += (["```", _cap(status, 4000), "```"] if status else ["clean" if inside else "_not a git repo_"])
    lines += ["", "## Git Diff Summary", _cap(stat, 4000) if stat else "_no uncommitted changes_", "", "## Active Task List"]
    lines.append(tasks or "_create .agents/tasks.md to track tasks_")
    if note:
        lines.append(note)
    lines += ["", "---", f"_Written by ledger on {event_name} at {ts}_"]
    return "\n".join(lines) + "\n", branch


_NOT_CHECKPOINT = ":(exclude).agents/checkpoint.md"


def _cap(text: str, n: int) -> str:
    return text if len(text) <= n else text[:n] + f"\n… ({len(text) - n} more characters)"


def write_checkpoint(conn, key: str, project: str, event_name: str, now_ms: int,
                     extra_files: list[str] | tuple[str, ...] = ()) -> str | None:
    """Write ``.agents/checkpoint.md`` and keep it in the store. Files changed are the
    session's edit observations plus ``extra_files`` (what a harness reported, e.g.
    OpenCode's ``session.diff``). Idempotent: when nothing but the time changed since the
    latest checkpoint of this session, nothing is written. Returns the markdown, or None."""
    changed = list(dict.fromkeys([*W.files_changed(conn, key), *extra_files]))
    md, branch = checkpoint_markdown(project, changed, event_name, now_ms)
    prev = W.checkpoints(conn, session=key, limit=1)
    if prev and _strip_times(prev[0]["content"]) == _strip_times(md):
        return None
    W.add_checkpoint(conn, session=key, project=project, event=event_name, branch=branch, content=md, now=now_ms)
    agents = os.path.join(project, ".agents")
    try:
        os.makedirs(agents, exist_ok=True)
        tmp = os.path.join(agents, f".checkpoint.{os.getpid()}.tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(md)
        os.replace(tmp, os.path.join(agents, "checkpoint.md"))
    except OSError:
        pass  # read-only project: the store still has it (`ledger checkpoints`)
    return md


def _strip_times(md: str) -> str:
    return "\n".join(l for l in md.splitlines() if not l.startswith("# Checkpoint — ") and not l.startswith("_Written by ledger"))


def session_block(project: str, cap: int = BLOCK_CAP) -> str:
    """The Session State block: tasks, latest checkpoint, decisions (each bounded), with
    a visible truncation note when the whole exceeds ``cap`` characters."""
    parts = ["## Session State (auto-injected by ledger from .agents/ — read this to resume)"]
    for title, name, empty in (("Active Tasks", "tasks.md", "_No .agents/tasks.md found_"),
                               ("Last Checkpoint", "checkpoint.md", "_No checkpoint yet_"),
                               ("Project Decisions", "decisions.md", "_No decisions recorded_")):
        text, note = read_bounded(os.path.join(project, ".agents", name))
        parts += ["", f"### {title}", text or empty]
        if note:
            parts.append(note)
    block = "\n".join(parts)
    if len(block) > cap:
        block = block[: cap - 80].rstrip() + f"\n\n_… Session State cut at {cap} characters; read .agents/ for the rest._"
    return block


def facts_block(conn, project: str, now_ms: int, cap: int = FACTS_CAP, limit: int = MAX_FACTS) -> str:
    """The project's strongest live facts (keyed to files in the project), bounded;
    says how many were left out."""
    from ..facts import fact_line, fact_strength

    from ..watcher.worktrees import aliases

    # The project as checked out in the repository's other linked worktrees shares facts
    # about the same repository-relative files.
    facts, seen = [], set()
    for root in [project, *aliases(project)]:
        for f in W.strongest_facts(conn, root, now_ms, limit):
            if f["id"] not in seen:
                seen.add(f["id"])
                facts.append(f)
    if not facts:
        return ""
    facts.sort(key=lambda f: (-int(bool(f["pinned"])), -fact_strength(f, now_ms)))
    lines = ["## Known facts about this project (from ledger)"]
    shown = 0
    for f in facts[:limit]:
        line = fact_line(f, now_ms)
        if sum(len(x) + 1 for x in lines) + len(line) > cap:
            break
        lines.append(line)
        shown += 1
    if len(facts) > shown:
        lines.append(f"_(+{len(facts) - shown} more left out; `ledger recall` finds them)_")
    return "\n".join(lines)


def handle_session_event(event: HookEvent, engine) -> HookResponse | None:
    """Session-state side of a hook event (the engine handles tool events)."""
    from ..watcher.engine import session_key

    key = session_key(event)
    writes = event.kind in ("stop", "session_end")
    if not event.cwd or (writes and not os.path.isdir(event.cwd)):
        # No real working directory: never write .agents/ into wherever this process
        # happens to run, nor create folders that do not exist. (Reading a missing
        # folder is harmless: the block then says there is no state.)
        if writes or event.kind in ("pre_compact", "session_start"):
            from ..log import log_line

            log_line(f"{event.raw_event_name or event.kind}: cwd {event.cwd!r} is not a directory; session state skipped")
        return None
    project = engine.project or event.project or os.path.abspath(event.cwd)
    if event.kind == "stop":
        if event.stop_hook_active:
            return None
        write_checkpoint(engine.conn, key, project, "Stop", engine.now)
        return None
    if event.kind == "session_end":
        write_checkpoint(engine.conn, key, project, "SessionEnd", engine.now)
        engine.maybe_distill(key, force=True)
        return None
    if event.kind == "pre_compact":
        return HookResponse(additional_context=session_block(project))
    if event.kind == "session_start" and (event.source or "") in ("compact", "resume"):
        facts = facts_block(engine.conn, project, engine.now)
        text = session_block(project, cap=min(BLOCK_CAP, CONTEXT_CAP - (len(facts) + 2 if facts else 0)))
        return HookResponse(additional_context=text + ("\n\n" + facts if facts else ""))
    return None
