"""The session record: what a session's hook events say about its task, kept so the
Session State block and checkpoints can be built without any ``.agents/`` file.

Agents rarely keep ``.agents/tasks.md``; they keep their task in the conversation. Every
piece below already passes through ledger's hooks (docs/session-state.md):

==========================  ============================================================
the user's prompts          ``user_prompt`` events (Claude Code ``UserPromptSubmit``,
                            OpenCode ``chat.message`` user text). Redacted and bounded to
                            :data:`PROMPT_CHARS`; the store keeps the first prompt and the
                            latest 20. Harness-generated turns (task notifications, local
                            command echoes, interruptions) are not the user's words.
the latest plan             Claude Code ``ExitPlanMode``: ``tool_input.plan`` (or a
                            ``plan`` in its response). Redacted, :data:`PLAN_CHARS`.
the latest todo list        Claude Code ``TodoWrite`` (``todos: [{content, status,
                            activeForm}]``, the whole list each time), the newer task
                            tools ``TaskCreate`` (``{subject, description}``; the id is in
                            the response ``{"task": {"id"}}``) and ``TaskUpdate``
                            (``{taskId, status?, subject?}``; status ``deleted`` drops the
                            item), OpenCode ``todowrite`` (``todos: [{content, status,
                            priority, id}]``) and its ``todo.updated`` bus event.
files created or edited     Edit, Write, MultiEdit, NotebookEdit; OpenCode edit, write,
                            patch (``*** Update File:`` lines) and its patch parts and
                            ``session.diff`` events; Codex ``apply_patch`` (the same
                            patch format, in ``tool_input.command``).
last failing / passing      shell tools (Claude Code ``Bash``, OpenCode ``bash``) by
command                     their ``ok`` flag: PostToolUseFailure (``Exit code N``) or an
                            OpenCode non-zero ``metadata.exit`` is a failure. Codex
                            reports no exit code for shell commands, so they are not
                            recorded here.
==========================  ============================================================

Statuses are normalised to ``pending``, ``in_progress``, ``completed``, ``cancelled``.

Stdlib only (hook path); SQL lives in :mod:`ledger.store.session_record`.
"""

from __future__ import annotations

import json

from ..store import session_record as R

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from ..events import ToolCall

PROMPT_CHARS = 2_000  # one prompt, stored
PLAN_CHARS = 4_000  # the plan, stored
TODO_ITEMS = 50  # items kept in the todo list
TODO_CHARS = 300  # one item's text
COMMAND_CHARS = 200  # a command, stored (its start)
ERROR_CHARS = 400  # the first lines of a failing command's error

EDIT_TOOLS = frozenset({"edit", "write", "multiedit", "notebookedit", "patch", "apply_patch"})
SHELL_TOOLS = frozenset({"bash", "shell"})
PLAN_TOOLS = frozenset({"exitplanmode"})
TODO_TOOLS = frozenset({"todowrite"})
TASK_TOOLS = frozenset({"taskcreate", "taskupdate"})
#: Tools whose calls change the record (lower case); others are never looked at.
RECORDED_TOOLS = EDIT_TOOLS | SHELL_TOOLS | PLAN_TOOLS | TODO_TOOLS | TASK_TOOLS

STATUSES = ("pending", "in_progress", "completed", "cancelled")
_STATUS_ALIASES = {"todo": "pending", "open": "pending", "in-progress": "in_progress", "active": "in_progress",
                   "doing": "in_progress", "done": "completed", "complete": "completed", "canceled": "cancelled"}

# Turns the harness adds in the user's role, which are not the user's words (seen in
# real Claude Code transcripts: background task notifications, slash-command echoes,
# interruption notes, the compaction summary).
_NOT_USER_WORDS = ("<task-notification>", "<local-command-", "<command-name>", "<command-message>",
                   "[Request interrupted", "<system-reminder>", "Caveat: The messages below",
                   "This session is being continued from a previous conversation")


def _clip(text: str, n: int) -> str:
    """Without terminal control sequences (:func:`ledger.plaintext.plain_text`: the
    record is written to ``.agents/checkpoint.md`` and handed to the agent), redacted,
    at most ``n`` characters."""
    from ..plaintext import plain_text  # imported when needed (hook path)
    from ..redact import clip

    return clip(plain_text(text), n)


def _head(text: str, n: int, one_line: bool = True) -> str:
    """Redacted, at most ``n`` characters, cut at the end with ``…`` (the start of a
    command says what it was; a middle marker would break it up)."""
    from ..plaintext import plain_text
    from ..redact import redact

    text = redact(plain_text(text[: n * 4]))
    if one_line:
        text = " ".join(text.split())
    return _short(text, n)


def is_user_words(text: object) -> bool:
    """True when ``text`` is a prompt the user typed (non-empty, not a harness-generated
    turn such as a task notification or a slash-command echo)."""
    if not isinstance(text, str) or not text.strip():
        return False
    return not text.lstrip().startswith(_NOT_USER_WORDS)


def note_prompt(conn, key: str, text: object, now: int) -> bool:
    """Record one user prompt (redacted, bounded). Returns whether it was kept."""
    if not is_user_words(text):
        return False
    R.add_prompt(conn, key, _clip(str(text).strip(), PROMPT_CHARS), now)
    return True


def note_files(conn, key: str, paths: list[str], now: int) -> None:
    """Record edits of ``paths`` (absolute) reported outside a tool call (OpenCode's
    patch parts and ``session.diff``)."""
    R.add_files(conn, key, [p for p in paths if isinstance(p, str) and p], now)


def note_todos(conn, key: str, todos: object, now: int) -> bool:
    """Replace the todo list with ``todos`` (a list of ``{content, status, id?}``)."""
    items = normalise_todos(todos)
    if items is None:
        return False
    R.set_value(conn, key, "todos", items, now)
    return True


def note_tool(conn, key: str, tool: ToolCall, cwd: str, now: int, subagent: bool = False) -> None:
    """Update the record from one finished tool call (``tool.ok`` known or not): what
    :func:`tool_note` says, applied by :func:`apply_note`."""
    apply_note(conn, key, tool_note(tool, cwd, subagent), now)


def tool_note(tool: ToolCall, cwd: str, subagent: bool = False) -> dict | None:
    """What one finished tool call changes in the session record, as a plain JSON-able
    dict, already redacted and bounded (a spooled observation carries it, so the record
    is the same whether the call was stored at once or drained later: watcher/spool.py).
    None when the call changes nothing. Tools outside :data:`RECORDED_TOOLS` are
    ignored; malformed inputs are ignored, never raised. A ``subagent``'s plan and todo
    list are its own, not the session's: only its edits and commands are recorded.

    Shapes (one key each): ``{"files": [abs path, ...]}``, ``{"value": [name, value]}``
    (``last_passed``, ``last_failed``, ``plan``), ``{"todos": [item, ...]}``,
    ``{"task": item}`` (TaskCreate), ``{"task_update": {"id", "status", "subject"}}``."""
    name = (tool.name or "").lower()
    if name not in RECORDED_TOOLS or (subagent and name not in EDIT_TOOLS | SHELL_TOOLS):
        return None
    inp = tool.input if isinstance(tool.input, dict) else {}
    if name in EDIT_TOOLS:
        if tool.ok is False:
            return None
        paths = edited_files(tool, cwd)
        return {"files": paths} if paths else None
    if name in SHELL_TOOLS:
        command = inp.get("command")
        if not isinstance(command, str) or not command.strip() or tool.ok is None:
            return None
        entry: dict[str, Any] = {"command": _head(command, COMMAND_CHARS)}
        if tool.ok is False:
            from ..plaintext import plain_text

            # Controls out before the lines are taken: a coloured "1 failed" is a line of its own.
            lines = [_short(l, 160) for l in plain_text((tool.output or "")[:20_000]).splitlines() if l.strip()]
            entry["error"] = _head("\n".join(lines[:6]), ERROR_CHARS, one_line=False)
        return {"value": ["last_passed" if tool.ok else "last_failed", entry]}
    if name in PLAN_TOOLS:
        plan = inp.get("plan")
        if not isinstance(plan, str) or not plan.strip():
            plan = _response_field(tool.output, "plan")
        if isinstance(plan, str) and plan.strip() and tool.ok is not False:
            return {"value": ["plan", _clip(plan.strip(), PLAN_CHARS)]}
        return None
    if name in TODO_TOOLS:
        items = normalise_todos(inp.get("todos")) if tool.ok is not False else None
        return {"todos": items} if items is not None else None
    if name == "taskcreate":
        subject = inp.get("subject")
        if tool.ok is False or not isinstance(subject, str) or not subject.strip():
            return None
        task_id = _task_id(tool.output)
        item = {"content": _clip(" ".join(subject.split()), TODO_CHARS), "status": "pending"}
        if task_id:
            item["id"] = task_id
        return {"task": item}
    if name == "taskupdate":
        task_id = inp.get("taskId")
        if tool.ok is False or not isinstance(task_id, (str, int)) or isinstance(task_id, bool):
            return None
        status, subject = inp.get("status"), inp.get("subject")
        return {"task_update": {
            "id": str(task_id)[:200],
            "status": "deleted" if status == "deleted" else (_status(status) if isinstance(status, str) else None),
            "subject": _clip(" ".join(subject.split()), TODO_CHARS) if isinstance(subject, str) and subject.strip() else None,
        }}
    return None


def apply_note(conn, key: str, note: dict | None, now: int) -> None:
    """Write what :func:`tool_note` returned into session ``key``'s record (inside the
    caller's transaction, or its own). Unknown or malformed notes are ignored."""
    if not isinstance(note, dict):
        return
    if isinstance(note.get("files"), list):
        R.add_files(conn, key, [p for p in note["files"] if isinstance(p, str) and p], now)
    elif isinstance(note.get("value"), list) and len(note["value"]) == 2 and note["value"][0] in (
            "last_passed", "last_failed", "plan"):
        R.set_value(conn, key, note["value"][0], note["value"][1], now)
    elif isinstance(note.get("todos"), list):
        R.set_value(conn, key, "todos", note["todos"], now)
    elif isinstance(note.get("task"), dict):
        item = note["task"]
        task_id = item.get("id")

        def add(old):
            items = [i for i in (old or []) if not (task_id and i.get("id") == task_id)]
            return (items + [item])[-TODO_ITEMS:]

        R.update_value(conn, key, "todos", add, now)
    elif isinstance(note.get("task_update"), dict):
        u = note["task_update"]
        task_id, status, subject = u.get("id"), u.get("status"), u.get("subject")

        def update(old):
            items = []
            for i in old or []:
                if i.get("id") == task_id:
                    if status == "deleted":
                        continue
                    i = dict(i)
                    if status:
                        i["status"] = status
                    if subject:
                        i["content"] = subject
                items.append(i)
            return items

        R.update_value(conn, key, "todos", update, now)


def edited_files(tool: ToolCall, cwd: str) -> list[str]:
    """Absolute paths an edit tool changed: its path argument, or for a patch tool
    (Codex ``apply_patch``, OpenCode ``patch``) the ``*** Add/Update/Delete File:`` and
    ``*** Move to:`` lines of the patch text (:func:`ledger.watcher.paths.patch_paths`)."""
    from ..watcher.paths import PATCH_TOOLS, files_touched

    name = (tool.name or "").lower()
    if name in PATCH_TOOLS:
        return files_touched(tool, cwd)
    return files_touched(tool.replace(name="Edit") if hasattr(tool, "replace") else tool, cwd)


def normalise_todos(todos: object) -> list[dict] | None:
    """``[{"content", "status", "id"?}]`` from a harness's todo list, or None when it is
    not a list. Items without text are dropped; at most :data:`TODO_ITEMS` are kept."""
    if not isinstance(todos, list):
        return None
    out = []
    for t in todos:
        if isinstance(t, str):
            t = {"content": t}
        if not isinstance(t, dict):
            continue
        text = t.get("content") or t.get("subject") or t.get("title") or t.get("text")
        if not isinstance(text, str) or not text.strip():
            continue
        item = {"content": _clip(" ".join(text.split()), TODO_CHARS),
                "status": _status(t.get("status")) or "pending"}
        if isinstance(t.get("id"), (str, int)) and not isinstance(t.get("id"), bool):
            item["id"] = str(t["id"])
        out.append(item)
    return out[:TODO_ITEMS]


def _status(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    v = value.strip().lower()
    v = _STATUS_ALIASES.get(v, v)
    return v if v in STATUSES else None


def _response_field(output: str | None, field: str) -> object:
    if not output or not output.lstrip().startswith("{"):
        return None
    try:
        d = json.loads(output)
    except ValueError:
        return None
    return d.get(field) if isinstance(d, dict) else None


def _task_id(output: str | None) -> str | None:
    """The id of a created task: ``{"task": {"id": "1"}}`` (Claude Code 2.1 response) or
    ``Task #1 created ...`` (the text the model sees)."""
    task = _response_field(output, "task")
    if isinstance(task, dict) and isinstance(task.get("id"), (str, int)) and not isinstance(task.get("id"), bool):
        return str(task["id"])
    text = output or ""
    i = text.find("Task #")
    if i >= 0:
        digits = ""
        for ch in text[i + 6:]:
            if not ch.isdigit():
                break
            digits += ch
        return digits or None
    return None


def load(conn, key: str) -> dict:
    """The record of session ``key``::

        {"prompts": [{"at", "text"}], "plan": str | None, "todos": [{"content", "status", "id"?}],
         "files": [{"path", "first_at", "last_at", "edits"}], "last_failed": {"command", "error", "at"} | None,
         "last_passed": {"command", "at"} | None}
    """
    vals = R.values(conn, key)

    def val(name):
        v = vals.get(name)
        if v is None:
            return None
        if isinstance(v["value"], dict):
            return {**v["value"], "at": v["at"]}
        return v["value"]

    return {"prompts": R.prompts(conn, key), "plan": val("plan"), "todos": val("todos") or [],
            "files": R.files(conn, key), "last_failed": val("last_failed"), "last_passed": val("last_passed")}


def is_empty(rec: dict) -> bool:
    """True when nothing was recorded."""
    return not (rec["prompts"] or rec["plan"] or rec["todos"] or rec["files"] or rec["last_failed"] or rec["last_passed"])


# ------------------------------------------------------------------ rendering

_MARKS = {"completed": "x", "in_progress": "~", "pending": " ", "cancelled": "-"}
LATER_PROMPTS = 4  # later prompts shown besides the first
FIRST_PROMPT_CHARS = 1_200
LATER_PROMPT_CHARS = 300
FILES_SHOWN = 60


def task_text(rec: dict) -> str:
    """The task in the user's words: the first prompt, then the latest few, quoted."""
    ps = rec["prompts"]
    if not ps:
        return ""
    lines = _quote(_short(ps[0]["text"], FIRST_PROMPT_CHARS))
    later = ps[1:][-LATER_PROMPTS:]
    if later:
        skipped = len(ps) - 1 - len(later)
        lines.append("")
        lines.append("Later prompts" + (f" ({skipped} earlier ones left out)" if skipped else "") + ":")
        for p in later:
            lines.append("- " + " ".join(_short(p["text"], LATER_PROMPT_CHARS).split()))
    return "\n".join(lines)


def todo_text(rec: dict) -> str:
    """The todo list, one ``- [x]`` line per item (``[~]`` in progress, ``[-]``
    cancelled)."""
    out = []
    for t in rec["todos"]:
        status = t.get("status") or "pending"
        suffix = " (in progress)" if status == "in_progress" else " (cancelled)" if status == "cancelled" else ""
        out.append(f"- [{_MARKS.get(status, ' ')}] {t.get('content', '')}{suffix}")
    return "\n".join(out)


def files_text(rec: dict, project: str, extra: list[str] | tuple[str, ...] = ()) -> str:
    """Edited files, relative to ``project`` when inside it, first-edited first."""
    paths = list(dict.fromkeys([f["path"] for f in rec["files"]] + list(extra)))
    root = project.rstrip("/") + "/"
    rel = [p[len(root):] if p.startswith(root) else p for p in paths]
    lines = [f"- {p}" for p in rel[:FILES_SHOWN]]
    if len(rel) > FILES_SHOWN:
        lines.append(f"- … and {len(rel) - FILES_SHOWN} more")
    return "\n".join(lines)


def commands_text(rec: dict) -> str:
    """The last failing and the last passing command, failing first."""
    lines = []
    f, p = rec["last_failed"], rec["last_passed"]
    if f:
        lines.append(f"- last failing: `{f.get('command', '')}`")
        if f.get("error"):
            lines += ["  " + l for l in f["error"].splitlines()[:6]]
    if p:
        lines.append(f"- last passing: `{p.get('command', '')}`")
    return "\n".join(lines)


def _short(text: str, n: int) -> str:
    text = text.strip()
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


def _quote(text: str) -> list[str]:
    return ["> " + l if l.strip() else ">" for l in text.splitlines()]
