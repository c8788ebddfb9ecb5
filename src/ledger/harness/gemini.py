"""Gemini CLI adapter: hook stdin JSON -> :class:`HookEvent`; :class:`HookResponse` -> stdout.

Reference: docs/harness-contracts.md section D (D3 stdin, D4 output, D5 tools), checked
against Gemini CLI 0.61.0 (``tests/test_gemini_e2e.py``).

Events (one ``ledger hook gemini <Event>`` process each)
    ``SessionStart`` (``source``: startup, resume, clear) -> ``session_start``;
    ``BeforeAgent`` (``prompt``, without the hook context Gemini put in front of it)
    -> ``user_prompt``; ``BeforeTool`` -> ``pre_tool``;
    ``AfterTool`` -> ``post_tool``; ``AfterAgent`` -> ``stop`` (``stop_hook_active``);
    ``PreCompress`` (``trigger``: auto, manual) -> ``pre_compact`` (source ``check`` for
    auto: Gemini fires it before every model turn, before deciding to compress); ``SessionEnd``
    (``reason``) -> ``session_end``. The project is ``$GEMINI_PROJECT_DIR``, which Gemini
    sets for every hook to the session's working directory (it does not follow ``cd``).

Tools, normalised at the edge (D5)
    The watcher and session state know tools by the names of docs/watcher.md (``Read``,
    ``Bash``...). Gemini's built-in tools are mapped to them, their arguments kept and the
    ones the watcher reads added under its names:

    ====================  ==========  ===============================================
    ``read_file``         ``Read``    ``file_path``
    ``read_many_files``   ``Read``    ``paths``: the ``include`` entries naming one
                                      concrete file or folder (globs are left out)
    ``write_file``        ``Write``   ``file_path``
    ``replace``           ``Edit``    ``file_path``
    ``run_shell_command`` ``Bash``    ``command``, prefixed ``cd <dir_path> &&`` when
                                      the call ran in another folder
    ``glob``              ``Glob``    ``pattern``, ``path`` from ``dir_path``
    ``grep_search``       ``Grep``    ``path`` from ``dir_path``, ``glob`` from
                                      ``include_pattern``
    ``write_todos``       ``TodoWrite`` ``todos`` as ``{content, status}``
    ``mcp_<server>_<t>``  ``Read`` /  when the arguments name a file (``path``,
                          ``Write`` / ``file_path``, ``paths``...): by the tool's verb
                          ``Edit``    (write/create -> Write; edit/replace/move/patch
                                      -> Edit; anything else -> Read). Not ledger's own
                                      server (``mcp_ledger_*``). Other MCP tools keep
                                      their name.
    ====================  ==========  ===============================================

    Other tools keep Gemini's name. ``AfterTool.tool_response`` is ``{llmContent,
    returnDisplay, error?}``: ``llmContent`` (a string or a list of parts) becomes the
    output text, with Gemini's ``<untrusted_context>``/``<output>`` wrapper taken off;
    ``error`` or a shell ``Exit Code: N`` (N != 0) line makes ``ok`` False.

Rendering (:func:`render_response`); ``""`` means print nothing (D4):

=================  ===============================================================
SessionStart       ``hookSpecificOutput.additionalContext`` (interactive: the first
                   turn of the history; ``gemini -p``: in front of the prompt).
BeforeAgent        ``additionalContext`` (appended to this turn's prompt);
                   ``deny_reason`` -> ``decision: deny`` + ``reason`` (drops the turn).
BeforeTool         ``deny_reason`` -> ``decision: deny`` + ``reason`` (the model gets
                   it as the tool's error). Gemini takes no context here: the text is
                   dropped, which is why ``ledger install gemini`` does not hook it and
                   decides injections at AfterTool (:func:`expand`).
AfterTool          ``additionalContext`` (appended to the tool result);
                   ``deny_reason`` -> ``decision: deny`` + ``reason``: the reason
                   *replaces* the tool's output (the escalated form of an injection,
                   only with ``[watcher] deny_on_escalation``).
AfterAgent         nothing for the model (a ``deny`` would force a retry turn).
PreCompress        nothing: Gemini fires it without waiting for an answer to add.
SessionEnd         nothing: Gemini does not wait for it.
=================  ===============================================================

``system_message`` becomes top-level ``systemMessage`` on every event. Gemini escapes
``<`` and ``>`` in ``additionalContext`` and wraps it in its own ``<hook_context>`` tag,
so what ledger injects for Gemini holds no ``<`` or ``>`` at all (:func:`readable` turns
the Session State's quoted lines into ``│`` lines and any other bracket, in a fact's text
too, into a look-alike: ``→``, ``≤``, ``‹`` ...); a deny reason goes through it as well.

Stdlib only: ``json``, ``os``, ``re`` (compiled on use), ``shlex`` (quoting a folder).
"""

from __future__ import annotations

import json
import os

from ledger.events import HookEvent, HookResponse, ToolCall

from .eventnames import EventNames

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

HARNESS = "gemini"
#: Per-string and total caps (characters) on ``tool_response`` before it is flattened.
RESPONSE_STRING_CAP = 16_000
RESPONSE_TOTAL_CAP = 64_000

#: Gemini event name -> :attr:`HookEvent.kind`.
EVENTS: dict[str, str] = {
    "SessionStart": "session_start",
    "BeforeAgent": "user_prompt",
    "BeforeTool": "pre_tool",
    "AfterTool": "post_tool",
    "AfterAgent": "stop",
    "PreCompress": "pre_compact",
    "SessionEnd": "session_end",
}
NAMES = EventNames(EVENTS)
_CONTEXT_EVENTS = frozenset({"SessionStart", "BeforeAgent", "AfterTool"})
_DENY_EVENTS = frozenset({"BeforeAgent", "BeforeTool", "AfterTool"})

#: Gemini built-in tool -> the watcher's tool name (docs/watcher.md).
TOOL_NAMES = {
    "read_file": "Read",
    "read_many_files": "Read",
    "write_file": "Write",
    "replace": "Edit",
    "run_shell_command": "Bash",
    "glob": "Glob",
    "grep_search": "Grep",
    "search_file_content": "Grep",  # the name before 0.20
    "write_todos": "TodoWrite",
}
#: Our own MCP server's name: its tools (recall, remember...) are not file tools.
OWN_MCP_SERVER = "ledger"
_MCP_PATH_KEYS = ("file_path", "path", "filePath", "absolute_path", "filename")
_MCP_LIST_KEYS = ("paths", "file_paths", "files")
_WRITE_VERBS = ("write", "create", "save", "append")
_EDIT_VERBS = ("edit", "replace", "move", "rename", "patch", "update", "delete", "remove")


def canonical_event(name: str) -> str | None:
    """Gemini's spelling of ``name`` (``after-tool`` -> ``AfterTool``), or None."""
    return NAMES.canonical(name)


def parse_payload(raw: bytes | str, expected_event: str | None = None) -> HookEvent:
    """Parse one Gemini CLI hook payload (stdin) into a :class:`HookEvent`.

    Raises ``ValueError`` on invalid JSON, a non-object payload, a missing or unknown
    ``hook_event_name``, or an ``expected_event`` (the command line's) that disagrees
    with it. Every other field is optional and tolerated in any shape.
    """
    from .claude_code import decode_payload

    payload, event_name = decode_payload(raw, expected_event, title="Gemini CLI", events=EVENTS,
                                         canonical=canonical_event, config="the extension's hooks/hooks.json")
    kind = EVENTS[event_name]
    env_project = os.environ.get("GEMINI_PROJECT_DIR") or ""
    project = os.path.abspath(env_project) if os.path.isabs(env_project) else None
    cwd = _str(payload.get("cwd")) or env_project or ""

    tool = _tool_call(event_name, payload, cwd) if kind in ("pre_tool", "post_tool") else None
    source = prompt = None
    if kind == "session_start":
        source = _str(payload.get("source"))
    elif kind == "pre_compact":
        # Gemini fires PreCompress "auto" before every model turn, before it decides
        # whether to compress (D6): only a check; session state confirms a compression
        # from the transcript. "manual" (/compress) always compresses.
        source = _str(payload.get("trigger"))
        source = "check" if source in (None, "auto") else source
    elif kind == "session_end":
        source = _str(payload.get("reason"))
    elif kind == "user_prompt":
        prompt = user_words(_str(payload.get("prompt")))
    return HookEvent(
        harness=HARNESS, kind=kind, session_id=_str(payload.get("session_id")) or "", cwd=cwd,
        transcript_path=_str(payload.get("transcript_path")), tool=tool, source=source,
        stop_hook_active=payload.get("stop_hook_active") is True, raw_event_name=event_name, prompt=prompt,
        project=project,
    )


def user_words(prompt: str | None) -> str | None:
    """The user's prompt without the hook context Gemini put into it: in ``gemini -p``
    SessionStart's context is put in front of the prompt, wrapped in
    ``<hook_context>...</hook_context>`` (D4), and BeforeAgent then sees it as part of
    the prompt. None when nothing of the user's is left."""
    if not prompt or "<hook_context>" not in prompt:
        return prompt
    import re

    rest = re.sub(r"<hook_context>.*?</hook_context>\s*", "", prompt, flags=re.S).strip()
    return rest or None


def expand(event: HookEvent) -> list[HookEvent]:
    """The events the engine handles for one Gemini hook call, in order.

    ``AfterTool`` is two: the injection decision for the call (a ``pre_tool`` event
    with the same tool and no output, since Gemini's BeforeTool cannot add context)
    and then the observation itself. Everything else is itself."""
    if event.raw_event_name == "AfterTool" and event.tool is not None:
        return [event.replace(kind="pre_tool", tool=event.tool.replace(output=None, ok=None)), event]
    return [event]


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


# --------------------------------------------------------------------------- tools


def normalise_tool(name: str, args: dict[str, Any], cwd: str = "") -> tuple[str, dict[str, Any]]:
    """``(watcher tool name, arguments)`` for a Gemini tool call (see the module
    docstring's table). The arguments are a copy: Gemini's keys are kept and the
    watcher's added. Never raises."""
    args = dict(args)
    canon = TOOL_NAMES.get(name)
    if canon is None and name.startswith("mcp_"):
        return _mcp_tool(name, args)
    if canon is None:
        return name, args
    if name == "read_file" and not isinstance(args.get("file_path"), str):
        for key in ("absolute_path", "path"):  # earlier spellings
            if isinstance(args.get(key), str):
                args["file_path"] = args[key]
                break
    elif name == "read_many_files":
        include = args.get("include", args.get("paths"))
        if isinstance(include, str):
            include = [include]
        if isinstance(include, list):
            args["paths"] = [p for p in include if isinstance(p, str) and p.strip() and not set("*?[]{}") & set(p)]
    elif name == "run_shell_command":
        where = args.get("dir_path", args.get("directory"))
        command = args.get("command")
        if isinstance(where, str) and where.strip() and isinstance(command, str):
            import shlex

            args["command"] = f"cd {shlex.quote(where.strip())} && {command}"
    elif name in ("glob", "grep_search", "search_file_content"):
        where = args.get("dir_path")
        if isinstance(where, str) and where.strip() and "path" not in args:
            args["path"] = where
        include = args.get("include_pattern", args.get("include"))
        if name != "glob" and isinstance(include, str) and "glob" not in args:
            args["glob"] = include
    elif name == "write_todos":
        todos = args.get("todos")
        if isinstance(todos, list):
            args["todos"] = [{"content": t.get("description") or t.get("content"), "status": t.get("status")}
                             if isinstance(t, dict) else t for t in todos]
    return canon, args


def _mcp_tool(name: str, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """An MCP tool (``mcp_<server>_<tool>``) whose arguments name files becomes a file
    tool by its verb; ledger's own server's tools and the rest keep their name."""
    server, _, tool = name[4:].partition("_")
    if server == OWN_MCP_SERVER or not tool:
        return name, args
    if not isinstance(args.get("file_path"), str):
        for key in _MCP_PATH_KEYS:
            if isinstance(args.get(key), str) and args[key].strip():
                args["file_path"] = args[key]
                break
    if not isinstance(args.get("paths"), list):
        for key in _MCP_LIST_KEYS:
            if isinstance(args.get(key), list):
                args["paths"] = [p for p in args[key] if isinstance(p, str)]
                break
    if not (isinstance(args.get("file_path"), str) or args.get("paths")):
        return name, args
    verb = tool.lower()
    if any(v in verb for v in _WRITE_VERBS):
        return "Write", args
    if any(v in verb for v in _EDIT_VERBS):
        return "Edit", args
    return "Read", args


def _tool_call(event_name: str, payload: dict[str, Any], cwd: str) -> ToolCall:
    raw_name = _str(payload.get("tool_name")) or ""
    tool_input = payload.get("tool_input")
    name, args = normalise_tool(raw_name, tool_input if isinstance(tool_input, dict) else {}, cwd)
    output = ok = None
    if event_name == "AfterTool":
        response = payload.get("tool_response")
        if response is not None:
            from ..redact import clip_value

            response = clip_value(response, per_string=RESPONSE_STRING_CAP, total=RESPONSE_TOTAL_CAP)
        output, ok = tool_output(raw_name, response)
    return ToolCall(name=name, input=args, output=output, ok=ok, tool_use_id=None, duration_ms=None)


def tool_output(tool_name: str, response: object) -> tuple[str | None, bool | None]:
    """``(text, ok)`` from an AfterTool ``tool_response`` ``{llmContent, returnDisplay,
    error?}``. ``text`` is None only without a response. Never raises."""
    if response is None:
        return None, None
    if isinstance(response, str):
        return _unwrap(response), True
    if not isinstance(response, dict):
        return _dumps(response), True
    error = response.get("error")
    content = response.get("llmContent")
    text = _parts_text(content) if content is not None else None
    if not text:
        display = response.get("returnDisplay")
        text = display if isinstance(display, str) else (_dumps(display) if display else "")
    text = _unwrap(text)
    ok = not error
    if error:
        message = error.get("message") if isinstance(error, dict) else error
        if isinstance(message, str) and message and message not in text:
            text = (text + "\n" if text else "") + f"[error] {message}"
    if ok and tool_name == "run_shell_command":
        import re

        m = re.search(r"(?m)^Exit Code: (-?\d+)\s*$", text)
        if m and m.group(1) != "0":
            ok = False
    return text, ok


def _parts_text(content: object) -> str:
    """Text of ``llmContent``: a string, a part ``{text}``, or a list of either;
    inline data becomes ``[image]``/``[file]``."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        if isinstance(content.get("text"), str):
            return content["text"]
        if "inlineData" in content or "fileData" in content:
            mime = (content.get("inlineData") or content.get("fileData") or {}).get("mimeType", "")
            return "[image]" if str(mime).startswith("image/") else "[file]"
        if isinstance(content.get("functionResponse"), dict):
            return _dumps(content["functionResponse"].get("response"))
        return _dumps(content)
    if isinstance(content, list):
        return "\n".join(t for t in (_parts_text(c) for c in content) if t)
    return "" if content is None else str(content)


_WRAPPERS = (("<untrusted_context>\n", "\n</untrusted_context>"), ("<output>\n", "\n</output>"))


def _unwrap(text: str) -> str:
    """``text`` without the wrapper tags Gemini puts around shell and MCP output."""
    t = text.strip()
    for head, tail in _WRAPPERS:
        if t.startswith(head) and t.endswith(tail):
            t = t[len(head):-len(tail)]
    return t


def _dumps(obj: object) -> str:
    try:
        return json.dumps(obj, ensure_ascii=False, default=str, separators=(",", ":"))
    except (TypeError, ValueError):
        return str(obj)


# --------------------------------------------------------------------------- rendering


def render_response(event: HookEvent, resp: HookResponse) -> str:
    """What to print on stdout (exit 0) for ``resp`` to ``event``; ``""`` = nothing.
    See the module docstring for the per-event mapping. ASCII-only JSON."""
    name = NAMES.of(event)
    context = resp.additional_context or None
    deny = resp.deny_reason or None
    out: dict[str, Any] = {}
    if deny and name in _DENY_EVENTS:
        out["decision"] = "deny"
        # AfterTool's reason replaces the tool's output: keep the context with it.
        out["reason"] = readable(deny if (name != "AfterTool" or not context or context == deny) else f"{deny}\n\n{context}")
        context = None if name == "AfterTool" else context
    if context and name in _CONTEXT_EVENTS:
        out["hookSpecificOutput"] = {"hookEventName": name, "additionalContext": readable(context)}
    if resp.system_message:
        out["systemMessage"] = resp.system_message
    return json.dumps(out) if out else ""


#: What stands in for ``<`` and ``>`` in text for Gemini, pairs first (arrows and
#: comparisons keep their meaning), then a lone bracket as its look-alike guillemet.
_ANGLES = (("<=", "≤"), (">=", "≥"), ("<-", "←"), ("->", "→"), ("=>", "⇒"), ("<", "‹"), (">", "›"))


def readable(text: str) -> str:
    """``text`` as it should reach Gemini, which shows ``<`` and ``>`` in hook context
    as ``&lt;`` and ``&gt;``: our markdown quote marks (a line starting ``>``, the user's
    words in the Session State) become a bar, ``│``; every other ``<`` and ``>`` (in a
    fact's text: ``Vec<T>``, ``x > 5``, ``a -> b``) becomes a look-alike with no markup
    meaning (:data:`_ANGLES`: ``≤ ≥ ← → ⇒ ‹ ›``). The result holds neither character."""
    if "<" not in text and ">" not in text:
        return text
    text = "\n".join("│ " + line[2:] if line.startswith("> ") else "│" if line == ">" else line
                     for line in text.split("\n"))
    for old, new in _ANGLES:
        text = text.replace(old, new)
    return text


def merge(responses: list[HookResponse | None]) -> HookResponse | None:
    """One answer from the answers to :func:`expand`'s events: texts joined by a blank
    line, the first deny reason; None when all are empty."""
    got = [r for r in responses if r is not None and not r.is_empty]
    if not got:
        return None
    if len(got) == 1:
        return got[0]

    def join(field: str) -> str | None:
        texts = [getattr(r, field) for r in got if getattr(r, field)]
        return "\n\n".join(texts) if texts else None

    return HookResponse(additional_context=join("additional_context"),
                        deny_reason=next((r.deny_reason for r in got if r.deny_reason), None),
                        system_message=join("system_message"))
