"""Session state (docs/originals.md §3), wired to events the harness really
sends: a checkpoint on Stop (every turn) and SessionEnd, the Session State block before
compaction (PreCompact), and that block plus the project's strongest facts after it
(SessionStart with source ``compact`` or ``resume``; for a harness without such an event,
Gemini, the first prompt or finished tool call after the compaction:
:func:`carry_after_compaction`).

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


def checkpoint_markdown(project: str, changed: list[str], event_name: str, now_ms: int,
                        rec: dict | None = None, session: str | None = None) -> tuple[str, str | None]:
    """The checkpoint: the seed's format plus the session record (:mod:`.record`), with
    empty sections left out; the footer names ``session`` when given (several sessions
    share one project's file). Returns ``(markdown, branch)``.

    Sections, in order: Current Task (the loop state's task, then the task in the user's
    words), Plan, Todo List, Branch, Files Changed This Session (``changed``: the record's
    edited files plus what the harness reported), Last Commands, Git Status, Git Diff
    Summary, Active Task List (``.agents/tasks.md``)."""
    from . import record as RC

    ts = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(now_ms / 1000))
    rec = rec or _EMPTY_RECORD
    task, it = loop_state()
    exists = os.path.isdir(project)
    inside = exists and _git(project, "rev-parse", "--is-inside-work-tree") == "true"
    branch = _git(project, "branch", "--show-current") if inside else None
    # Our own checkpoint file is left out of status and diff, or writing it would change
    # the next checkpoint (and a tracked .agents/ would never settle).
    status = _git(project, "status", "--short", "--", ".", _NOT_CHECKPOINT) if inside else None
    stat = _git(project, "diff", "--stat", "HEAD", "--", ".", _NOT_CHECKPOINT) if inside else None
    tasks, note = read_bounded(os.path.join(project, ".agents", "tasks.md")) if exists else ("", None)
    current = "\n".join(x for x in (task, f"Loop iteration: {it}" if task and it > 0 else "", RC.task_text(rec)) if x)
    sections = [
        ("Current Task", current),
        ("Plan", rec["plan"] or ""),
        ("Todo List", RC.todo_text(rec)),
        ("Branch", (branch or "_detached HEAD_") if inside else ""),
        ("Files Changed This Session", RC.files_text(rec, project, changed)),
        ("Last Commands", RC.commands_text(rec)),
        ("Git Status", ("```\n" + _cap(status, 4000) + "\n```" if status else "clean") if inside else ""),
        ("Git Diff Summary", _cap(stat, 4000) if stat else ""),
        ("Active Task List", tasks + ("\n" + note if note else "") if tasks or note else ""),
    ]
    lines = [f"# Checkpoint — {ts}"]
    for title, body in sections:
        if body:
            lines += ["", f"## {title}", body]
    who = f" for session {session}" if session else ""
    lines += ["", "---", f"_Written by ledger on {event_name} at {ts}{who}_"]
    # Nothing a terminal acts on reaches the file (`cat .agents/checkpoint.md`) or the
    # agent: a record stored before controls were removed, the agent's tasks.md, git.
    from ..plaintext import plain_text

    return plain_text("\n".join(lines) + "\n"), branch


_NOT_CHECKPOINT = ":(exclude).agents/checkpoint.md"
#: Checkpoint sections that carry what a session did. A checkpoint without any of them
#: (only Branch, Git Status, Git Diff Summary or the agent's own task list, which git and
#: ``.agents/tasks.md`` already hold) hands nothing over: it is never written, nor shown.
SESSION_SECTIONS = frozenset({"Current Task", "Plan", "Todo List", "Files Changed This Session", "Last Commands"})
_EMPTY_RECORD = {"prompts": [], "plan": None, "todos": [], "files": [], "last_failed": None, "last_passed": None}
_LEDGER_MARK = "\n_Written by ledger on "


def _cap(text: str, n: int) -> str:
    return text if len(text) <= n else text[:n] + f"\n… ({len(text) - n} more characters)"


def hands_over(md: str) -> bool:
    """Whether checkpoint markdown ``md`` carries anything of a session (one of
    :data:`SESSION_SECTIONS`). A file ledger did not write counts when it has any text."""
    if _LEDGER_MARK not in "\n" + md:
        return bool(md.strip())
    return any(t in SESSION_SECTIONS for t in checkpoint_sections(md))


def write_checkpoint(conn, key: str, project: str, event_name: str, now_ms: int,
                     extra_files: list[str] | tuple[str, ...] = ()) -> str | None:
    """Write ``.agents/checkpoint.md`` and keep it in the store. It carries the session
    record (:mod:`.record`) and git state; files changed are the record's edited files,
    the session's edit observations and ``extra_files`` (what a harness reported).

    Nothing is written (file or store) when the session recorded nothing
    (:func:`hands_over` is false): a session that only started, in a project several
    sessions share, must not replace another session's hand-off with git state alone.
    So the file holds the latest checkpoint that had something to hand over, whichever
    session wrote it (its footer names the session); every session's checkpoints stay in
    the store (``ledger checkpoints --session``).
    Idempotent: when nothing but the time changed since the latest checkpoint of this
    session, nothing is written. A project folder that does not exist (a replayed
    transcript from another machine) gets the store row only. A file that cannot be
    written (``.agents`` is a file, a read-only project) is one hook.log line; the store
    row is kept. Returns the markdown, or None when nothing was written."""
    from . import record as RC

    rec = RC.load(conn, key)
    changed = list(dict.fromkeys([*W.files_changed(conn, key), *extra_files]))
    if RC.is_empty(rec) and not changed and not loop_state()[0]:
        return None  # nothing recorded: no git call, no row, no file
    if os.path.isdir(project):
        exclude_agents_dir(project)  # before git status is taken, so .agents/ is not in it
    md, branch = checkpoint_markdown(project, changed, event_name, now_ms, rec, session=key)
    if not hands_over(md):
        return None
    prev = W.checkpoints(conn, session=key, limit=1)
    if prev and _strip_times(prev[0]["content"]) == _strip_times(md):
        return None
    W.add_checkpoint(conn, session=key, project=project, event=event_name, branch=branch, content=md, now=now_ms)
    if os.path.isdir(project):
        _write_file(project, md, event_name)
    return md


def _write_file(project: str, md: str, event_name: str) -> bool:
    """``<project>/.agents/checkpoint.md`` replaced atomically by ``md``; on failure one
    hook.log line, no temporary file and no ``.agents/`` folder this call created left
    behind. True when written."""
    agents = os.path.join(project, ".agents")
    made = not os.path.lexists(agents)
    tmp = os.path.join(agents, f".checkpoint.{os.getpid()}.tmp")
    try:
        os.makedirs(agents, exist_ok=True)
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(md)
        os.replace(tmp, os.path.join(agents, "checkpoint.md"))
        return True
    except OSError as exc:
        from ..log import log_line

        for undo in (lambda: os.unlink(tmp), lambda: made and os.rmdir(agents)):
            try:
                undo()
            except OSError:
                pass
        why = ".agents is a file, not a folder" if os.path.lexists(agents) and not os.path.isdir(agents) \
            else (exc.strerror or str(exc))
        log_line(f"{event_name}: checkpoint not written to {os.path.join(agents, 'checkpoint.md')}: {why}; "
                 "it is kept in the store (ledger checkpoints)")
        return False


def exclude_agents_dir(project: str) -> str | None:
    """Keep ``<project>/.agents/`` out of ``git status`` by adding it to the repository's
    ``info/exclude`` (in the *common* git dir, so a linked worktree writes the main
    repository's file, which git reads for every worktree). Nothing is done outside git,
    when the user tracks files under ``.agents/``, or when a line already excludes it.
    Returns the exclude file written, else None. Never raises."""
    out = _git(project, "rev-parse", "--git-common-dir", "--show-prefix")
    if out is None:
        return None
    lines = out.split("\n")
    common = lines[0].strip()
    prefix = lines[1].strip() if len(lines) > 1 else ""
    if not common:
        return None
    common = os.path.normpath(os.path.join(project, common))
    pattern = "/" + prefix + ".agents/"
    path = os.path.join(common, "info", "exclude")
    current, _ = read_bounded(path, 1_000_000)
    wanted = {pattern, pattern.rstrip("/"), pattern.lstrip("/"), pattern.strip("/")}
    if any(l.strip() in wanted for l in current.splitlines()):
        return None
    if _git(project, "ls-files", "--", ".agents"):
        return None  # the user tracks it: their choice
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "a", encoding="utf-8") as fh:
            if current and not current.endswith("\n"):
                fh.write("\n")
            fh.write("# session state written by ledger (checkpoints)\n" + pattern + "\n")
    except OSError:
        return None
    return path


def _strip_times(md: str) -> str:
    return "\n".join(l for l in md.splitlines() if not l.startswith("# Checkpoint — ") and not l.startswith("_Written by ledger"))


SECTION_CAPS = {"task": 2_600, "plan": 2_500, "todos": 2_000, "files": 1_500, "commands": 900, "file": 2_500}


def session_block(project: str, cap: int = BLOCK_CAP, rec: dict | None = None) -> str:
    """The Session State block, ``""`` when there is nothing to say.

    Built from the session record (``rec``, see :mod:`.record`) merged with the agent's
    ``.agents/`` files: ``tasks.md`` replaces the recorded todo list (files the agent
    wrote take precedence), ``decisions.md`` is added, and ``checkpoint.md`` is shown
    when an agent wrote it, or when the record is empty (a new session resuming from the
    last one; ledger's own checkpoint otherwise repeats the record). Empty sections are
    left out. Each section is bounded (:data:`SECTION_CAPS`), the whole to ``cap``
    characters with a visible truncation note."""
    from . import record as RC

    rec = rec or _EMPTY_RECORD
    exists = os.path.isdir(project)

    def agents_file(name: str) -> str:
        if not exists:
            return ""
        text, note = read_bounded(os.path.join(project, ".agents", name))
        return _cap(text, SECTION_CAPS["file"]) + ("\n" + note if note else "") if text or note else ""

    tasks = agents_file("tasks.md")
    checkpoint = agents_file("checkpoint.md")
    if checkpoint and _LEDGER_MARK in "\n" + checkpoint and (not RC.is_empty(rec) or not hands_over(checkpoint)):
        # ledger's own checkpoint repeats the record, and one with nothing of a session
        # in it (written by an older ledger) is only git state: neither is shown
        checkpoint = ""
    sections = [
        ("Task (the user's words)", _cap(RC.task_text(rec), SECTION_CAPS["task"])),
        ("Plan", _cap(rec["plan"] or "", SECTION_CAPS["plan"])),
        ("Active Tasks", tasks),
        ("Todo List", "" if tasks else _cap(RC.todo_text(rec), SECTION_CAPS["todos"])),
        ("Files Edited This Session", _cap(RC.files_text(rec, project), SECTION_CAPS["files"])),
        ("Last Commands", _cap(RC.commands_text(rec), SECTION_CAPS["commands"])),
        ("Last Checkpoint", checkpoint),
        ("Project Decisions", agents_file("decisions.md")),
    ]
    from ..plaintext import plain_text

    # Terminal controls out (the agent's own .agents/ files, an older record), before
    # the cap is measured.
    present = [(t, plain_text(b)) for t, b in sections if b]
    present = [(t, b) for t, b in present if b.strip()]
    if not present:
        return ""
    parts = ["## Session State (auto-injected by ledger — read this to resume)"]
    for title, body in present:
        parts += ["", f"### {title}", body]
    block = "\n".join(parts)
    if len(block) > cap:
        block = block[: cap - 80].rstrip() + f"\n\n_… Session State cut at {cap} characters; read .agents/ for the rest._"
    return block


def block_sections(block: str) -> list[str]:
    """The ``### `` section titles of a Session State block, in order (reports, tests)."""
    return [l[4:] for l in block.splitlines() if l.startswith("### ")]


def checkpoint_sections(md: str) -> list[str]:
    """The ``## `` section titles of a checkpoint, in order (reports, tests)."""
    return [l[3:] for l in md.splitlines() if l.startswith("## ")]


def facts_block(conn, project: str, now_ms: int, cap: int = FACTS_CAP, limit: int = MAX_FACTS) -> str:
    """The project's strongest live facts (keyed to files in the project), bounded;
    says how many were left out. Marked as the watcher marks them before a tool call
    (:func:`ledger.watcher.engine.settle_facts`): a fact whose file changed "may be
    stale", one in an open conflict or an unjudged candidate "disputed"; those follow
    the settled ones under their own line, never as plain known facts, and a stale fact
    ranks below every fresh one."""
    from ..facts import fact_line
    from ..plaintext import visible_text
    from ..watcher.engine import fact_marks, settle_facts, settled_rank
    from ..watcher.worktrees import aliases

    # The project as checked out in the repository's other linked worktrees shares facts
    # about the same repository-relative files.
    facts, seen = [], set()
    if os.path.dirname(project) == project:
        # A session started in "/" (or a drive's root) has no project folder to speak
        # of: every fact in the store lies under it, other projects' too. Nothing is
        # listed rather than everything (docs/watcher.md, "Projects and worktrees").
        return ""
    others = aliases(project)
    for root in [project, *others]:
        for f in W.strongest_facts(conn, root, now_ms, limit):
            if f["id"] not in seen:
                seen.add(f["id"])
                facts.append(f)
    # As before a tool call: a fact that reads as instructions to the agent is not
    # handed back (watcher/admit.py handed_back).
    from ..watcher.admit import handed_back

    facts = handed_back(facts, "known facts after a compaction")
    if not facts:
        return ""

    def local(path: str) -> str:
        # A fact learned in another worktree is judged against this checkout's copy.
        for root in others:
            if path.startswith(root.rstrip("/") + "/"):
                return project.rstrip("/") + path[len(root.rstrip("/")):]
        return path

    settle_facts(conn, facts, local=local)
    facts.sort(key=lambda f: settled_rank(f, now_ms))
    listed = {f["id"] for f in facts[:limit]}
    lines = ["## Known facts about this project (from ledger)"]
    shown = 0
    for n, f in enumerate(facts[:limit]):
        mark = fact_marks(f, listed)
        head = []
        if mark and (n == 0 or not fact_marks(facts[n - 1], listed)):
            head = ["", "Not settled (may be stale or disputed; check before relying on them):"]
        line = visible_text(fact_line(f, now_ms, suffix=mark))
        if sum(len(x) + 1 for x in lines + head) + len(line) > cap:
            break
        lines.extend(head)
        lines.append(line)
        shown += 1
    if not shown:
        return ""
    if len(facts) > shown:
        lines.append(f"_(+{len(facts) - shown} more left out; `ledger recall` finds them)_")
    return "\n".join(lines)


#: Session value set by a compaction (PreCompact / PreCompress) until the Session State
#: has been handed back after it.
COMPACTED = "compacted"
#: PreCompact ``source`` of a harness that fires its compaction hook before it decides
#: whether to compact (Gemini's automatic PreCompress, docs/harness-contracts.md §D6).
CHECK = "check"
#: Bytes of transcript read looking for a replaced history (the compacted history is
#: written whole, so this bounds what one check costs).
REWRITE_SCAN_CAP = 32_000_000
_HISTORY_SET = b'{"$set":{"messages":'


def history_replaced(transcript: object, size: object) -> bool:
    """True when the transcript ``transcript`` got a record replacing the whole history
    after byte ``size``: what Gemini writes when it compresses a session
    (docs/harness-contracts.md §D6 [obs]). False when unknown or unreadable."""
    if not isinstance(transcript, str) or not transcript or not isinstance(size, int):
        return False
    try:
        with open(transcript, "rb") as fh:
            fh.seek(size)
            data = fh.read(REWRITE_SCAN_CAP)
    except OSError:
        return False
    return (b"\n" + _HISTORY_SET) in data or data.startswith(_HISTORY_SET)


def _rehydrate(engine, key: str, project: str) -> HookResponse | None:
    """The Session State block plus the project's strongest facts, bounded to
    :data:`CONTEXT_CAP` characters, or None when there is nothing to say."""
    from . import record as RC

    facts = facts_block(engine.conn, project, engine.now)
    text = session_block(project, cap=min(BLOCK_CAP, CONTEXT_CAP - (len(facts) + 2 if facts else 0)),
                         rec=RC.load(engine.conn, key))
    text = "\n\n".join(t for t in (text, facts) if t)
    return HookResponse(additional_context=text) if text else None


def compaction_pending(conn, event: HookEvent) -> bool:
    """Whether ``event``'s session has a compaction whose Session State is still to be
    carried back (:func:`carry_after_compaction`)."""
    from ..store import session_record as R
    from ..watcher.engine import session_key

    return R.values(conn, session_key(event)).get(COMPACTED) is not None


def carry_after_compaction(event: HookEvent, engine) -> HookResponse | None:
    """After a compaction whose hook could not add text (Gemini's PreCompress, or a
    Claude Code compaction not followed by ``SessionStart compact``), the first event
    that can add context to what the model reads next (a prompt, a finished tool call)
    hands the Session State back, once. None when no compaction is pending. The mark is
    taken under the write lock, so two parallel tool hooks do not both carry it."""
    from ..store import session_record as R
    from ..watcher.engine import session_key

    key = session_key(event)
    mark = R.values(engine.conn, key).get(COMPACTED)
    if mark is None or not event.cwd:
        return None
    value = mark["value"] if isinstance(mark["value"], dict) else {}
    if value.get("trigger") == CHECK and not history_replaced(value.get("transcript"), value.get("size")):
        return None  # the harness only checked; it did not compress (yet)
    if R.take_value(engine.conn, key, COMPACTED) is None:
        return None  # a parallel hook carried it
    project = engine.project or event.project or os.path.abspath(event.cwd)
    return _rehydrate(engine, key, project)


def read_only_session_event(event: HookEvent, engine) -> HookResponse | None:
    """The read-only part of a session event on a store that cannot be written
    (``engine.read_only``): nothing is recorded (no prompt, tool note, checkpoint or
    compaction mark), but what the store already holds is handed back where the event
    takes context: before a compaction (PreCompact) the Session State block, after one or
    on resume (SessionStart compact/resume) the Session State plus the project's strongest
    facts. Every other event answers nothing."""
    from ..watcher.engine import session_key
    from . import record as RC

    if not event.cwd or event.kind not in ("pre_compact", "session_start"):
        return None
    key = session_key(event)
    project = engine.project or event.project or os.path.abspath(event.cwd)
    if event.kind == "pre_compact":
        text = session_block(project, rec=RC.load(engine.conn, key))
        return HookResponse(additional_context=text) if text else None
    if (event.source or "") in ("compact", "resume"):
        return _rehydrate(engine, key, project)
    return None


def handle_session_event(event: HookEvent, engine) -> HookResponse | None:
    """Session-state side of a hook event: the session record from finished tool calls
    and prompts (:mod:`.record`), checkpoints on Stop / SessionEnd, the Session State
    block before compaction (PreCompact) and after it or on resume (SessionStart)."""
    from ..watcher.engine import session_key
    from . import record as RC

    key = session_key(event)
    if getattr(engine, "read_only", None) is not None:
        return read_only_session_event(event, engine)
    if event.kind == "post_tool":
        if event.tool is not None:
            RC.note_tool(engine.conn, key, event.tool, event.cwd, engine.now, subagent=bool(event.agent_id))
        return carry_after_compaction(event, engine)
    if event.kind == "user_prompt":
        RC.note_prompt(engine.conn, key, event.prompt, engine.now)
        return carry_after_compaction(event, engine)
    if not event.cwd:
        # No working directory: never write .agents/ into wherever this process happens
        # to run. (A cwd that does not exist, e.g. a replayed transcript from another
        # machine, still gets its checkpoint in the store, never a folder.)
        if event.kind in ("stop", "session_end", "pre_compact", "session_start"):
            from ..log import log_line

            log_line(f"{event.raw_event_name or event.kind}: no cwd in the payload; session state skipped")
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
        # Marked for the events after the compaction (carry_after_compaction): Gemini's
        # PreCompress cannot add to the summary, Claude Code's SessionStart compact takes
        # the mark back below.
        from ..store import session_record as R

        size = None
        if event.transcript_path:
            try:
                size = os.path.getsize(event.transcript_path)
            except OSError:
                size = None
        R.set_value(engine.conn, key, COMPACTED, {"trigger": event.source or "", "transcript": event.transcript_path,
                                                  "size": size}, engine.now)
        text = session_block(project, rec=RC.load(engine.conn, key))
        return HookResponse(additional_context=text) if text else None
    if event.kind == "session_start" and (event.source or "") in ("compact", "resume"):
        from ..store import session_record as R

        R.take_value(engine.conn, key, COMPACTED)
        return _rehydrate(engine, key, project)
    return None
