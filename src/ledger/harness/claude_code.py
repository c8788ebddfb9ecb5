"""Claude Code adapter: hook stdin JSON -> :class:`HookEvent`; :class:`HookResponse` -> stdout.

Reference: docs/harness-contracts.md section A (A3 stdin, A4 output, A6 answers), checked
against real transcripts for the ``tool_response`` shapes.

Parsing (:func:`parse_payload`)
    One JSON object on stdin with ``hook_event_name`` and the common fields (A3). The
    ``<Event>`` argument of ``ledger hook claude-code <Event>`` must agree with it (compared
    ignoring case, ``-`` and ``_``). Anything else raises ``ValueError`` with a message
    saying what was wrong; the CLI turns that into a fail-open exit 0.

    ``PostToolUseFailure`` is accepted too (kind ``post_tool``, ``ok=False``, ``output``
    = the ``error`` string): failed commands are where error root causes are confirmed.

Tool output normalisation (:func:`tool_output`)
    PostToolUse's ``tool_response`` is the tool's *structured* result (A3) and its shape
    varies per tool: Bash ``{stdout, stderr, interrupted, isImage, ...}``, Read
    ``{type, file: {filePath, content, ...}}``, Edit/Write ``{filePath, structuredPatch,
    originalFile, ...}``, Grep/Glob ``{filenames, content?, numFiles, ...}``, Task/Agent
    ``{status, content: [text blocks], ...}``, WebFetch ``{result, code, ...}``, MCP tools a
    list of content blocks, and plain strings for errors. It becomes one text plus an ``ok``
    flag; unknown shapes fall back to compact JSON. Bulky copies the model already has
    (``originalFile``, written ``content``, image data) are left out.

Rendering (:func:`render_response`), per event; ``""`` means print nothing:

============================  =============================================================
SessionStart                  ``hookSpecificOutput.additionalContext`` (A4; the documented
                              re-hydration path after compaction, A6). Cannot block:
                              ``deny_reason`` is ignored.
UserPromptSubmit              ``additionalContext``; ``deny_reason`` -> ``decision: block``
                              + ``reason`` (erases the prompt, A4).
PreToolUse                    ``additionalContext`` (Claude Code >= 2.1.9, A1 version list
                              and A4); ``deny_reason`` -> ``permissionDecision: "deny"`` +
                              ``permissionDecisionReason`` (shown to the model). Without a
                              denial no ``permissionDecision`` is sent, so the user's normal
                              permission flow is untouched (``allow`` would bypass it).
PostToolUse / ...Failure      ``additionalContext`` (next to the tool result, A4/A6);
                              ``deny_reason`` -> top-level ``decision: block`` + ``reason``
                              (feedback shown to the model; the tool already ran).
Stop                          Any text (``deny_reason`` and/or ``additional_context``) ->
                              ``decision: block`` + ``reason``: the agent keeps going with
                              it. Chosen over Stop ``additionalContext`` (only >= 2.1.163,
                              with the same keep-going semantics, A4). Never emitted when
                              ``stop_hook_active`` is true (loop guard, A3/E.5).
PreCompact                    ``additional_context`` -> **plain text** on stdout, exit 0.
                              PreCompact accepts no ``hookSpecificOutput`` (schema
                              validation fails, A4) but the stdout of successful PreCompact
                              hooks is merged into the compaction's custom instructions
                              (A6, marked [obs]: undocumented, could change). The text is
                              never allowed to start with ``{`` (it would be parsed as
                              JSON). ``deny_reason`` -> ``decision: block`` + ``reason``
                              (blocks compaction; >= 2.1.105), which then wins over text.
SessionEnd                    Nothing reaches the model; only ``systemMessage``.
============================  =============================================================

``system_message`` becomes top-level ``systemMessage`` (shown to the user) on every event
that emits JSON; PreCompact discards it (A6). Claude Code caps each string at 10,000
characters (longer text is saved to a file, A4), so keep budgets upstream.

Stdlib only: ``json`` and ``os``.
"""

from __future__ import annotations

import json
import os

from ledger.events import HookEvent, HookResponse, ToolCall

from .eventnames import EventNames

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

HARNESS = "claude-code"
#: Per-string and total caps (characters) applied to a PostToolUse ``tool_response``
#: before it is flattened; the engine cuts the flattened text again to its own cap.
RESPONSE_STRING_CAP = 16_000
RESPONSE_TOTAL_CAP = 64_000

#: Claude Code event name -> :attr:`HookEvent.kind`. Iterating gives the names we handle.
EVENTS: dict[str, str] = {
    "SessionStart": "session_start",
    "PreToolUse": "pre_tool",
    "PostToolUse": "post_tool",
    "PostToolUseFailure": "post_tool",
    "Stop": "stop",
    "PreCompact": "pre_compact",
    "SessionEnd": "session_end",
    "UserPromptSubmit": "user_prompt",
}

NAMES = EventNames(EVENTS)  # post_tool answers as PostToolUse, the first of its kind
# Events whose hookSpecificOutput accepts additionalContext (A4), among those we handle.
_CONTEXT_EVENTS = frozenset(
    {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure"}
)
# Events where top-level decision "block" + reason is meaningful (A4).
_BLOCK_EVENTS = frozenset({"UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "Stop"})


def canonical_event(name: str) -> str | None:
    """Claude Code's spelling of ``name`` (``post-tool-use`` -> ``PostToolUse``), or None."""
    return NAMES.canonical(name)


def parse_payload(raw: bytes | str, expected_event: str | None = None) -> HookEvent:
    """Parse one Claude Code hook payload (stdin) into a :class:`HookEvent`.

    ``expected_event`` is the event named on the command line; when given it must name
    an event in :data:`EVENTS` and agree with the payload's ``hook_event_name``.

    Raises ``ValueError`` on invalid JSON, a non-object payload, a missing or unknown
    ``hook_event_name``, or a disagreeing ``expected_event``. Every other field is
    optional and tolerated in any shape (wrong types become ``None`` / defaults).
    """
    payload, event_name = decode_payload(raw, expected_event, title="Claude Code", events=EVENTS,
                                         canonical=canonical_event, config="the hook configuration")

    kind = EVENTS[event_name]
    # Claude Code's project is the folder it was started in: $CLAUDE_PROJECT_DIR (set for
    # every hook, does not follow `cd`); the payload's cwd is the live directory.
    env_project = os.environ.get("CLAUDE_PROJECT_DIR") or ""
    project = os.path.abspath(env_project) if os.path.isabs(env_project) else None
    cwd = _str(payload.get("cwd")) or env_project or ""

    tool = None
    if kind in ("pre_tool", "post_tool"):
        tool = _tool_call(event_name, payload)

    source = None
    prompt = None
    if kind == "session_start":
        source = _str(payload.get("source"))
    elif kind == "pre_compact":
        source = _str(payload.get("trigger"))
        prompt = _str(payload.get("custom_instructions"))
    elif kind == "session_end":
        source = _str(payload.get("reason"))
    elif kind == "user_prompt":
        prompt = _str(payload.get("prompt"))

    return HookEvent(
        harness=HARNESS,
        kind=kind,
        session_id=_str(payload.get("session_id")) or "",
        cwd=cwd,
        transcript_path=_str(payload.get("transcript_path")),
        tool=tool,
        source=source,
        stop_hook_active=payload.get("stop_hook_active") is True,
        raw_event_name=event_name,
        prompt=prompt,
        agent_id=_str(payload.get("agent_id")),
        project=project,
    )


def decode_payload(raw: bytes | str, expected_event: str | None, *, title: str, events, canonical,
                   config: str) -> tuple[dict, str]:
    """The checks every per-event hook payload goes through, for any harness: ``raw``
    (stdin; a UTF-8 byte-order mark tolerated, undecodable bytes replaced) as a JSON
    object with lone surrogates replaced, and its ``hook_event_name`` in the harness's
    spelling. Returns ``(payload, event_name)``.

    ``title`` names the harness in messages, ``events`` are the event names it handles,
    ``canonical(name)`` gives its spelling of a name or None, ``config`` says where the
    event argument was written (for a disagreeing ``expected_event``). Raises
    ``ValueError`` on an empty or non-JSON payload, a non-object, a missing or unknown
    ``hook_event_name``, or an ``expected_event`` that is unknown or names another event.
    """
    if isinstance(raw, (bytes, bytearray)):
        text = bytes(raw).decode("utf-8-sig", errors="replace")
    else:
        text = raw.lstrip("\ufeff")
    if not text.strip():
        raise ValueError(f"empty hook payload: {title} sends one JSON object on stdin")
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"hook payload is not valid JSON: {exc}") from None
    if not isinstance(payload, dict):
        raise ValueError(f"hook payload must be a JSON object, got {type(payload).__name__}")
    if "\\u" in text:
        # JSON may escape a lone surrogate ("build ok \ud83d"): Python keeps it in the str,
        # and SQLite, files and UTF-8 streams then refuse the whole value. Replaced with
        # U+FFFD here, at the edge, so every later step sees valid text.
        payload = scrub_surrogates(payload)
    name = payload.get("hook_event_name")
    if not isinstance(name, str) or not name:
        raise ValueError("hook payload has no 'hook_event_name'")
    event_name = canonical(name)
    if event_name is None:
        raise ValueError(f"unknown {title} event {name!r}; ledger handles {', '.join(events)}")
    if expected_event is not None:
        expected = canonical(expected_event)
        if expected is None:
            raise ValueError(f"unknown {title} event {expected_event!r} on the command line; "
                             f"expected one of {', '.join(events)}")
        if expected != event_name:
            raise ValueError(f"hook was installed for {expected} but the payload is {event_name}: "
                             f"check the event argument in {config}")
    return payload, event_name


def scrub_surrogates(value: Any) -> Any:
    """``value`` with every lone surrogate code point (U+D800-U+DFFF) in every string,
    key included, at any depth replaced by U+FFFD. Other values pass unchanged."""
    if isinstance(value, str):
        if not any("\ud800" <= c <= "\udfff" for c in value):
            return value
        return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in value)
    if isinstance(value, dict):
        return {scrub_surrogates(k): scrub_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub_surrogates(v) for v in value]
    return value


def _str(value: object) -> str | None:
    """``value`` if it is a non-empty string, else None."""
    return value if isinstance(value, str) and value else None


def _tool_call(event_name: str, payload: dict[str, Any]) -> ToolCall:
    name = _str(payload.get("tool_name")) or ""
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        tool_input = {}
    duration = payload.get("duration_ms")
    duration_ms = (
        float(duration)
        if isinstance(duration, (int, float)) and not isinstance(duration, bool)
        else None
    )
    output: str | None = None
    ok: bool | None = None
    if event_name == "PostToolUse":
        response = payload.get("tool_response")
        if response is not None and not isinstance(response, (bool, int, float)):
            # Redact and bound every string of the structured response *before* it is
            # flattened: a secret nested in an MCP result or an escaped JSON string is
            # then caught in its own text, and a multi-megabyte field costs a clip, not
            # a copy. Imported here: PreToolUse never needs it.
            from ..redact import clip_value

            response = clip_value(response, per_string=RESPONSE_STRING_CAP, total=RESPONSE_TOTAL_CAP)
        output, ok = tool_output(name, response)
    elif event_name == "PostToolUseFailure":
        err = payload.get("error")
        if isinstance(err, str) and len(err) > RESPONSE_TOTAL_CAP:
            from ..redact import clip

            err = clip(err, RESPONSE_TOTAL_CAP)
        output = err if isinstance(err, str) else (None if err is None else _dumps(err))
        if payload.get("is_interrupt") is True:
            output = (output + "\n" if output else "") + "[interrupted]"
        ok = False
    return ToolCall(
        name=name,
        input=tool_input,
        output=output,
        ok=ok,
        tool_use_id=_str(payload.get("tool_use_id")),
        duration_ms=duration_ms,
    )


# --------------------------------------------------------------------------- outputs

_ERROR_PREFIXES = ("Error", "<tool_use_error>", "User rejected", "The user doesn't want")


def tool_output(tool_name: str, response: object) -> tuple[str | None, bool | None]:
    """Normalise a PostToolUse ``tool_response`` into ``(text, ok)``.

    ``text`` is ``None`` only when there was no response; ``ok`` is ``False`` when the
    response says the tool failed or was interrupted, ``True`` otherwise, ``None`` when
    there was no response. Never raises, whatever the shape.
    """
    try:
        return _tool_output(tool_name, response)
    except Exception:  # pragma: no cover - defensive: a hook must never crash on shapes
        return _dumps(response), None


def _tool_output(tool_name: str, resp: object) -> tuple[str | None, bool | None]:
    if resp is None:
        return None, None
    if isinstance(resp, str):
        return resp, not resp.lstrip().startswith(_ERROR_PREFIXES)
    if isinstance(resp, list):
        return _blocks_text(resp), True
    if not isinstance(resp, dict):
        return str(resp), True

    ok = _dict_ok(resp)
    # Bash (and anything shaped like it).
    if "stdout" in resp or "stderr" in resp:
        return _shell_text(resp), ok
    # Read: {"type": "text"|"image"|"notebook"|"pdf"..., "file": {...}}
    file = resp.get("file")
    if isinstance(file, dict):
        return _read_text(resp.get("type"), file), ok
    # Edit / Write / MultiEdit: a patch against the file.
    if "structuredPatch" in resp or ("filePath" in resp and "content" in resp):
        return _edit_text(resp), ok
    # Glob / Grep.
    if "filenames" in resp:
        return _search_text(resp), ok
    # Task / Agent: final text blocks.
    content = resp.get("content")
    if isinstance(content, list):
        return _blocks_text(content), ok
    # WebFetch.
    if isinstance(resp.get("result"), str):
        code = resp.get("code")
        if isinstance(code, int) and not isinstance(code, bool) and code >= 400:
            ok = False
        return resp["result"], ok
    # TaskOutput: {"retrieval_status", "task": {"output", ...}}
    task = resp.get("task")
    if isinstance(task, dict) and isinstance(task.get("output"), str):
        return task["output"], ok
    for key in ("output", "text", "content", "message", "data", "error"):
        value = resp.get(key)
        if isinstance(value, str):
            return value, ok
    return _dumps(_without_bulk(resp)), ok


def _dict_ok(resp: dict[str, Any]) -> bool:
    if resp.get("interrupted") is True or resp.get("is_interrupt") is True:
        return False
    if resp.get("success") is False:
        return False
    if resp.get("is_error") is True or resp.get("isError") is True:
        return False
    status = resp.get("status")
    return not (isinstance(status, str) and status.lower() in ("failed", "error", "killed"))


def _shell_text(resp: dict[str, Any]) -> str:
    parts = []
    stdout = resp.get("stdout")
    if resp.get("isImage") is True:
        parts.append("[image output]")
    elif isinstance(stdout, str) and stdout:
        parts.append(stdout.rstrip("\n"))
    stderr = resp.get("stderr")
    if isinstance(stderr, str) and stderr.strip():
        parts.append("[stderr]\n" + stderr.rstrip("\n"))
    interp = resp.get("returnCodeInterpretation")
    if isinstance(interp, str) and interp:
        parts.append(f"[{interp}]")
    if resp.get("interrupted") is True:
        parts.append("[interrupted]")
    bg = resp.get("backgroundTaskId")
    if isinstance(bg, str) and bg:
        parts.append(f"[running in background as {bg}]")
    return "\n".join(parts)


def _read_text(kind: object, file: dict[str, Any]) -> str:
    path = file.get("filePath") or file.get("file_path") or ""
    content = file.get("content")
    if kind in (None, "text") and isinstance(content, str):
        return content
    cells = file.get("cells")
    if isinstance(cells, list):
        out = []
        for cell in cells:
            if isinstance(cell, dict):
                src = cell.get("source")
                if isinstance(src, list):
                    src = "".join(s for s in src if isinstance(s, str))
                if isinstance(src, str):
                    out.append(src)
        return "\n\n".join(out)
    if kind == "image" or "base64" in file:
        return _placeholder("image", path)
    if isinstance(content, str):
        return content
    return _placeholder(str(kind or "file"), path)


def _placeholder(kind: str, path: object) -> str:
    """``[image /p/x.png]`` for content we do not inline (binary, base64)."""
    return f"[{kind} {path}]" if path else f"[{kind}]"


def _edit_text(resp: dict[str, Any]) -> str:
    path = resp.get("filePath") or ""
    patch = resp.get("structuredPatch")
    lines: list[str] = []
    if isinstance(patch, list):
        for hunk in patch:
            if not isinstance(hunk, dict):
                continue
            lines.append(
                "@@ -{},{} +{},{} @@".format(
                    hunk.get("oldStart", "?"),
                    hunk.get("oldLines", "?"),
                    hunk.get("newStart", "?"),
                    hunk.get("newLines", "?"),
                )
            )
            body = hunk.get("lines")
            if isinstance(body, list):
                lines.extend(x for x in body if isinstance(x, str))
    if lines:
        return f"Updated {path}\n" + "\n".join(lines)
    content = resp.get("content")
    if resp.get("type") == "create" or (isinstance(content, str) and not patch):
        size = len(content) if isinstance(content, str) else 0
        return f"Created {path} ({size} chars)"
    return f"Updated {path}"


def _search_text(resp: dict[str, Any]) -> str:
    content = resp.get("content")
    if isinstance(content, str) and content:
        text = content
    else:
        names = [n for n in resp.get("filenames") or [] if isinstance(n, str)]
        text = "\n".join(names) if names else "No matches found"
    if resp.get("truncated") is True:
        text += "\n[truncated]"
    return text


def _blocks_text(blocks: list[Any]) -> str:
    out = []
    for block in blocks:
        if isinstance(block, str):
            out.append(block)
        elif isinstance(block, dict):
            if isinstance(block.get("text"), str):
                out.append(block["text"])
            elif block.get("type") == "image":
                out.append("[image]")
            else:
                out.append(_dumps(_without_bulk(block)))
    return "\n".join(out)


_BULK_KEYS = ("originalFile", "base64", "data", "usage")


def _without_bulk(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in _BULK_KEYS}


def _dumps(obj: object) -> str:
    try:
        return json.dumps(obj, ensure_ascii=False, default=str, separators=(",", ":"))
    except (TypeError, ValueError):
        return str(obj)


# --------------------------------------------------------------------------- rendering


def render_response(event: HookEvent, resp: HookResponse) -> str:
    """What to print on stdout (exit code 0) for ``resp`` to ``event``; ``""`` = nothing.

    See the module docstring for the per-event mapping and the contract sections behind
    it. JSON output is ASCII-only (``ensure_ascii``) so any stdout encoding works.
    """
    name = NAMES.of(event)
    if name == "PreCompact":
        if resp.deny_reason:
            return json.dumps({"decision": "block", "reason": resp.deny_reason})
        if resp.additional_context:
            return _plain_text(resp.additional_context)
        return ""
    return hook_output(name, event, resp, context_events=_CONTEXT_EVENTS, block_events=_BLOCK_EVENTS)


def hook_output(name: str, event: HookEvent, resp: HookResponse, *, context_events: frozenset,
                block_events: frozenset, system_events: frozenset | None = None) -> str:
    """The JSON answer of Claude Code's hook protocol, which Codex's hooks speak too:
    for ``Stop``, ``decision: "block"`` with the deny reason and context as the reason
    (not when the Stop hook is already active); elsewhere ``hookSpecificOutput`` with
    ``additionalContext`` on ``context_events``, a PreToolUse deny as
    ``permissionDecision``, another deny as ``decision: "block"`` on ``block_events``;
    ``systemMessage`` on every event, or only on ``system_events`` when given. ``""``
    when there is nothing to say. ASCII-only JSON."""
    context = resp.additional_context or None
    deny = resp.deny_reason or None
    out: dict[str, Any] = {}
    if name == "Stop":
        reason = "\n\n".join(t for t in (deny, context) if t)
        if reason and not event.stop_hook_active:
            out["decision"] = "block"
            out["reason"] = reason
    else:
        specific: dict[str, Any] = {}
        if context and name in context_events:
            specific["additionalContext"] = context
        if deny and name == "PreToolUse":
            specific["permissionDecision"] = "deny"
            specific["permissionDecisionReason"] = deny
        elif deny and name in block_events:
            out["decision"] = "block"
            out["reason"] = deny
        if specific:
            out["hookSpecificOutput"] = {"hookEventName": name, **specific}
    if resp.system_message and (system_events is None or name in system_events):
        out["systemMessage"] = resp.system_message
    return json.dumps(out) if out else ""


def _plain_text(text: str) -> str:
    """Plain stdout that Claude Code will not mistake for JSON (A4: first char ``{``)."""
    if text.lstrip().startswith(("{", "[")):
        return "Compaction instructions:\n" + text
    return text
