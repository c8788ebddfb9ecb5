"""OpenCode adapter: what the ledger plugin forwards -> :class:`HookEvent`; answers -> text.

OpenCode runs plugins in-process (JavaScript), so it cannot call ``ledger hook ...`` per
event the way Claude Code does. The thin plugin shipped with the package
(``harness/opencode/ledger.js``) forwards each interesting hook call and bus event, as
JSON, to one long-lived ``ledger __serve-session opencode`` child (see
:mod:`ledger.harness.session_server`). This module turns those forwarded objects into
harness-neutral events; nothing else in ledger sees OpenCode's shapes.

Reference: docs/harness-contracts.md §B (B2 hooks, B3 bus events, B6 V2), checked against
payloads recorded from a real OpenCode 1.18.33 run.

What the plugin forwards (``{"hook": ..., "directory": ..., "worktree": ...}`` plus):

==================================  ===================================================
``tool.execute.after``              ``input {tool, sessionID, callID, args}`` and
                                    ``output {title, output, metadata}`` (V1). V2's
                                    ``execute.after`` ``{tool, sessionID, id, input,
                                    result|error}`` is accepted too. -> ``post_tool``.
``experimental.session.compacting`` ``input {sessionID}`` -> ``pre_compact``.
``chat.message``                    ``input {sessionID, ...}``, ``output {message,
                                    parts}``: a new user message; its non-synthetic
                                    text parts are the user's prompt -> ``user_prompt``.
``event``                           one bus event ``{type, properties}`` (V1) or
                                    ``{type, data}`` (V2); see :data:`BUS_EVENTS`.
==================================  ===================================================

Bus events (through the generic ``event`` hook: OpenCode never calls top-level
``"session.idle"`` keys, the original lean-session's bug, docs/originals.md §3):

* ``message.part.updated`` whose part has ``type: "step-finish"``: one model step of the
  part's session ended (:attr:`Parsed.what` ``"step"``, the part id for de-duplication).
* ``message.part.updated`` whose part has ``type: "patch"``: the files a step changed
  (absolute paths in ``part.files``) -> ``"diff"``.
* ``session.diff`` ``{sessionID, diff: [{file, additions, deletions, ...}]}`` (``file``
  relative to the worktree) -> ``"diff"``.
* ``session.idle`` ``{sessionID}``, ``session.status`` with ``status.type == "idle"``
  (some builds send only this) and V2's ``session.execution.succeeded`` -> ``stop``.
* ``session.deleted`` ``{info: {id}}`` -> ``"deleted"`` (forget in-memory state).
* ``todo.updated`` ``{sessionID, todos: [{content, status, priority, id}]}``: the
  session's whole todo list after a change -> ``"todos"``.

Why facts are injected at ``tool.execute.after``: OpenCode's only channel into what the
model reads next is the tool result (``output.output``, docs/harness-contracts.md §B2); a
``tool.execute.before`` hook can change the arguments or throw, not add text. So the
PreToolUse-equivalent decision (which facts about the touched files to show, at which
escalation level) is taken after the tool ran, on the same call, and its text is appended
to that call's output. The arguments are the same, so the files touched are the same;
only the moment differs (the model sees the facts next to the output it just asked for).
``deny_on_escalation`` cannot deny a call that already ran: its text is appended like any
injection.

Stdlib only (imported by the session server): ``os``.
"""

from __future__ import annotations

import os

from ledger.events import HookEvent, HookResponse, ToolCall

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

HARNESS = "opencode"

#: Bus event types the plugin forwards (everything else stays in OpenCode).
BUS_EVENTS = (
    "message.part.updated",
    "session.diff",
    "session.idle",
    "session.status",
    "session.execution.succeeded",
    "session.deleted",
    "todo.updated",
)

#: OpenCode tool outputs longer than this are cut by the plugin before forwarding (the
#: watcher keeps far less; this bounds the pipe, not the store). Every string of the
#: arguments, bus events and prompt parts is cut to the same length, and each of those
#: values to about 256,000 characters of JSON (``bounded`` in ledger.js).
MAX_FORWARDED_OUTPUT = 64_000


class Parsed:
    """One forwarded object, classified.

    - ``what``: ``"tool"``, ``"compacting"``, ``"idle"``, ``"prompt"`` (these carry
      :attr:`event`), ``"step"``, ``"diff"``, ``"todos"``, ``"deleted"`` or ``"other"``
      (ignored).
    - ``event``: the :class:`HookEvent` for ``tool`` / ``compacting`` / ``idle`` /
      ``prompt`` (a ``user_prompt`` event whose ``prompt`` is the user's text).
    - ``session_id``: OpenCode's session id (``""`` when the payload had none).
    - ``cwd``: the directory OpenCode runs in; ``worktree``: its project root.
    - ``files``: for ``diff``, the absolute paths of the files changed.
    - ``part_id``: for ``step``, the step-finish part's id.
    - ``todos``: for ``todos``, the todo list as OpenCode sent it (a list).
    """

    __slots__ = ("what", "event", "session_id", "cwd", "worktree", "files", "part_id", "todos")

    def __init__(self, what: str, session_id: str = "", cwd: str = "", worktree: str = "",
                 event: HookEvent | None = None, files: list[str] | None = None, part_id: str | None = None,
                 todos: list | None = None):
        self.todos = todos if todos is not None else []
        self.what = what
        self.event = event
        self.session_id = session_id
        self.cwd = cwd
        self.worktree = worktree
        self.files = files or []
        self.part_id = part_id

    def __repr__(self) -> str:
        return f"Parsed({self.what!r}, session_id={self.session_id!r}, files={self.files!r}, part_id={self.part_id!r})"


def parse(obj: object) -> Parsed:
    """Classify one forwarded object (the ``event`` of a request line).

    Raises ``ValueError`` naming what is wrong when ``obj`` is not an object or has no
    ``hook``; unknown hooks and bus events give ``Parsed("other")``. Every other field is
    optional and tolerated in any shape.
    """
    if not isinstance(obj, dict):
        raise ValueError(f"event must be a JSON object, got {type(obj).__name__}")
    hook = obj.get("hook")
    if not isinstance(hook, str) or not hook:
        raise ValueError("event has no 'hook' (expected e.g. \"tool.execute.after\" or \"event\")")
    cwd = _str(obj.get("directory")) or os.getcwd()
    worktree = _str(obj.get("worktree")) or cwd

    if hook in ("tool.execute.after", "execute.after"):
        return _tool(obj, cwd, worktree)
    if hook in ("experimental.session.compacting", "compaction"):
        inp = _dict(obj.get("input"))
        sid = _str(inp.get("sessionID")) or ""
        ev = HookEvent(harness=HARNESS, kind="pre_compact", session_id=sid, cwd=cwd, source="auto",
                       raw_event_name="experimental.session.compacting")
        return Parsed("compacting", sid, cwd, worktree, event=ev)
    if hook == "chat.message":
        return _chat_message(obj, cwd, worktree)
    if hook == "event":
        return _bus(_dict(obj.get("event")), cwd, worktree)
    return Parsed("other", "", cwd, worktree)


def _tool(obj: dict, cwd: str, worktree: str) -> Parsed:
    inp = _dict(obj.get("input"))
    out = obj.get("output")
    sid = _str(inp.get("sessionID")) or ""
    name = _str(inp.get("tool")) or ""
    args = inp.get("args")
    if not isinstance(args, dict):
        args = inp.get("input") if isinstance(inp.get("input"), dict) else {}  # V2: input.input
    text, ok = tool_output(out if out is not None else inp.get("result"), inp.get("error"))
    call = ToolCall(
        name=name,
        input=args,
        output=text,
        ok=ok,
        tool_use_id=_str(inp.get("callID")) or _str(inp.get("id")),
        duration_ms=None,
    )
    ev = HookEvent(harness=HARNESS, kind="post_tool", session_id=sid, cwd=cwd, tool=call,
                   raw_event_name="tool.execute.after")
    return Parsed("tool", sid, cwd, worktree, event=ev)


def _chat_message(obj: dict, cwd: str, worktree: str) -> Parsed:
    """A user message: the text of its non-synthetic text parts (OpenCode marks the
    text it adds itself, e.g. file contents of an @-mention, ``synthetic: true``)."""
    inp = _dict(obj.get("input"))
    out = _dict(obj.get("output"))
    msg = _dict(out.get("message"))
    sid = _str(inp.get("sessionID")) or _str(msg.get("sessionID")) or ""
    role = msg.get("role")
    if role not in (None, "user"):
        return Parsed("other", sid, cwd, worktree)
    texts = [p["text"] for p in out.get("parts") or [] if isinstance(p, dict) and p.get("type") == "text"
             and isinstance(p.get("text"), str) and p["text"].strip() and not p.get("synthetic") and not p.get("ignored")]
    if not texts:
        return Parsed("other", sid, cwd, worktree)
    ev = HookEvent(harness=HARNESS, kind="user_prompt", session_id=sid, cwd=cwd, raw_event_name="chat.message",
                   prompt="\n\n".join(texts))
    return Parsed("prompt", sid, cwd, worktree, event=ev)


def tool_output(out: object, error: object = None) -> tuple[str | None, bool | None]:
    """``(text, ok)`` of an OpenCode tool result.

    V1 passes ``{title, output, metadata}``: ``output`` is the text the model reads;
    bash's ``metadata.exit`` is its exit code. MCP tools may have no ``output`` string
    (their result is ``{content: [...]}``). V2 may pass a plain string or an ``error``.
    """
    if error not in (None, "", False):
        return (error if isinstance(error, str) else str(error)), False
    if out is None:
        return None, None
    if isinstance(out, str):
        return out, True
    if not isinstance(out, dict):
        return str(out), True
    meta = out.get("metadata") if isinstance(out.get("metadata"), dict) else {}
    ok: bool | None = True
    code = meta.get("exit")
    if isinstance(code, int) and not isinstance(code, bool):
        ok = code == 0
    if meta.get("error") not in (None, "", False):
        ok = False
    text = out.get("output")
    if isinstance(text, str):
        if ok is False and isinstance(code, int) and not isinstance(code, bool) and code != 0:
            text = (text.rstrip("\n") + f"\n[exit code {code}]") if text else f"[exit code {code}]"
        return text, ok
    content = out.get("content")
    if isinstance(content, list):
        parts = [b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]
        return "\n".join(parts), ok
    title = out.get("title")
    return (title if isinstance(title, str) else None), ok


def _bus(event: dict, cwd: str, worktree: str) -> Parsed:
    etype = _str(event.get("type")) or ""
    props = event.get("properties")
    if not isinstance(props, dict):
        props = _dict(event.get("data"))  # V2 events are {type, data}
    sid = _str(props.get("sessionID")) or ""

    if etype == "message.part.updated":
        part = _dict(props.get("part"))
        sid = _str(part.get("sessionID")) or sid
        ptype = part.get("type")
        if ptype == "step-finish":
            return Parsed("step", sid, cwd, worktree, part_id=_str(part.get("id")))
        if ptype == "patch":
            files = [_resolve(worktree, f) for f in part.get("files") or [] if isinstance(f, str) and f]
            return Parsed("diff", sid, cwd, worktree, files=files)
        return Parsed("other", sid, cwd, worktree)
    if etype == "session.diff":
        files = []
        for d in props.get("diff") or []:
            f = d.get("file") if isinstance(d, dict) else d
            if isinstance(f, str) and f:
                files.append(_resolve(worktree, f))
        return Parsed("diff", sid, cwd, worktree, files=files)
    if etype in ("session.idle", "session.execution.succeeded") or (
        etype == "session.status" and _dict(props.get("status")).get("type") == "idle"
    ):
        ev = HookEvent(harness=HARNESS, kind="stop", session_id=sid, cwd=cwd, raw_event_name=etype)
        return Parsed("idle", sid, cwd, worktree, event=ev)
    if etype == "todo.updated":
        todos = props.get("todos")
        return Parsed("todos", sid, cwd, worktree, todos=todos if isinstance(todos, list) else [])
    if etype == "session.deleted":
        info = _dict(props.get("info"))
        return Parsed("deleted", _str(info.get("id")) or sid, cwd, worktree)
    return Parsed("other", sid, cwd, worktree)


def pre_tool(event: HookEvent) -> HookEvent:
    """The PreToolUse-equivalent of a ``tool.execute.after`` event: same call, no output
    yet (what :meth:`Engine.inject` decides on; see the module docstring)."""
    tool = event.tool.replace(output=None, ok=None) if event.tool is not None else None
    return event.replace(kind="pre_tool", tool=tool)


def render_append(resp: HookResponse | None) -> str | None:
    """Text to append to the tool's ``output.output`` for ``resp``, or None.

    ``additional_context`` and ``deny_reason`` both reach the model this way (a call that
    already ran cannot be denied); a deny reason equal to the context is not repeated.
    ``system_message`` is for the user and has no channel here.
    """
    if resp is None:
        return None
    parts = []
    for text in (resp.additional_context, resp.deny_reason):
        if text and text not in parts:
            parts.append(text)
    if not parts:
        return None
    return "\n\n" + "\n\n".join(parts)


def _resolve(base: str, path: str) -> str:
    return os.path.realpath(os.path.join(base, os.path.expanduser(path)))


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
