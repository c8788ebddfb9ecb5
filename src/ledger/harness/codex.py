"""Codex CLI adapter: hook stdin JSON -> :class:`HookEvent`; :class:`HookResponse` -> stdout.

Reference: docs/harness-contracts.md, section "Codex CLI" (the payload and output
schemas Codex generates, checked against the real ``codex exec`` 0.169.0).

Parsing (:func:`parse_payload`)
    One JSON object on stdin with ``hook_event_name``; ``session_id`` is Codex's thread
    id (it stays the same across a compaction), ``cwd`` the working directory. The
    ``<Event>`` argument of ``ledger hook codex <Event>`` must agree with the payload
    (compared ignoring case, ``-`` and ``_``). Anything else raises ``ValueError``; the
    CLI turns that into a fail-open exit 0.

    Tools: every shell-like tool (``exec_command``, ``shell``, unified exec) arrives as
    ``Bash`` with ``tool_input.command`` (a string); ``apply_patch`` arrives under its own
    name with the whole patch text in ``tool_input.command`` (the files it touches are
    its ``*** Add/Update/Delete File:`` lines, :func:`ledger.watcher.paths.patch_paths`);
    MCP tools as ``mcp__<server>__<tool>`` with their JSON arguments. PostToolUse's
    ``tool_response`` is the text the model saw: for ``Bash`` only the command's output
    (no exit code, so ``ok`` stays ``None``), for ``apply_patch`` a text starting
    ``Exit code: N`` (``ok`` is ``N == 0``); MCP results are JSON, flattened like Claude
    Code's. Subagent events carry ``agent_id``.

Rendering (:func:`render_response`), per event; ``""`` means print nothing:

============================  =============================================================
SessionStart                  ``hookSpecificOutput.additionalContext`` (a developer message
                              the model sees; source ``compact`` is how state survives a
                              compaction).
UserPromptSubmit              ``additionalContext``; ``deny_reason`` -> ``decision: block``
                              + ``reason``.
PreToolUse                    ``additionalContext``; ``deny_reason`` ->
                              ``permissionDecision: "deny"`` + ``permissionDecisionReason``
                              (the tool does not run; the model sees the reason). Never
                              ``allow``: that would skip the user's approval policy.
PostToolUse                   ``additionalContext`` (reaches the model with the next
                              request); ``deny_reason`` -> ``decision: block`` + ``reason``.
Stop                          Any text -> ``decision: block`` + ``reason`` (the agent keeps
                              going with it); never when ``stop_hook_active`` is true.
PreCompact                    Nothing can reach the summary (its output schema has only
                              ``continue``/``stopReason``/``suppressOutput``/
                              ``systemMessage``): context is dropped, only
                              ``systemMessage`` is sent.
SessionEnd                    Nothing (Codex reads no output for it).
============================  =============================================================

Codex rejects keys its schema for the event does not list (the hook then counts as
failed), so each event gets exactly the keys above. Stdlib only.
"""

from __future__ import annotations

from ledger.events import HookEvent, HookResponse, ToolCall

from . import claude_code as _claude
from .eventnames import EventNames

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

HARNESS = "codex"
#: Caps (characters) applied to a PostToolUse ``tool_response`` before it is flattened:
#: Claude Code's, whose hook protocol Codex's hooks speak.
RESPONSE_STRING_CAP, RESPONSE_TOTAL_CAP = _claude.RESPONSE_STRING_CAP, _claude.RESPONSE_TOTAL_CAP

#: Codex event name -> :attr:`HookEvent.kind`: Claude Code's names and kinds, without
#: PostToolUseFailure (Codex reports a failed call as a PostToolUse). Iterating gives
#: the names we handle.
EVENTS: dict[str, str] = {name: kind for name, kind in _claude.EVENTS.items() if name != "PostToolUseFailure"}
NAMES = EventNames(EVENTS)
_CONTEXT_EVENTS = frozenset({"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse"})
_BLOCK_EVENTS = frozenset({"UserPromptSubmit", "PostToolUse", "Stop"})
#: Events whose output schema has ``systemMessage`` (SessionEnd has no output at all).
_SYSTEM_EVENTS = frozenset({"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "PreCompact"})


def canonical_event(name: str) -> str | None:
    """Codex's spelling of ``name`` (``post-tool-use`` -> ``PostToolUse``), or None."""
    return NAMES.canonical(name)


def parse_payload(raw: bytes | str, expected_event: str | None = None) -> HookEvent:
    """Parse one Codex hook payload (stdin) into a :class:`HookEvent`.

    Raises ``ValueError`` on invalid JSON, a non-object payload, a missing or unknown
    ``hook_event_name``, or an ``expected_event`` that names another event. Other fields
    are optional and tolerated in any shape (wrong types become ``None``/defaults).
    """
    payload, event_name = _claude.decode_payload(raw, expected_event, title="Codex", events=EVENTS,
                                         canonical=canonical_event, config=".codex/hooks.json")

    kind = EVENTS[event_name]
    tool = _tool_call(event_name, payload) if kind in ("pre_tool", "post_tool") else None
    source = prompt = None
    if kind == "session_start":
        source = _str(payload.get("source"))
    elif kind == "pre_compact":
        source = _str(payload.get("trigger"))
    elif kind == "session_end":
        source = _str(payload.get("reason"))
    elif kind == "user_prompt":
        prompt = _str(payload.get("prompt"))
    return HookEvent(
        harness=HARNESS,
        kind=kind,
        session_id=_str(payload.get("session_id")) or "",
        cwd=_str(payload.get("cwd")) or "",
        transcript_path=_str(payload.get("transcript_path")),
        tool=tool,
        source=source,
        stop_hook_active=payload.get("stop_hook_active") is True,
        raw_event_name=event_name,
        prompt=prompt,
        agent_id=_str(payload.get("agent_id")),
        project=None,  # Codex names no project folder; the session's first cwd is used
    )


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _tool_call(event_name: str, payload: dict[str, Any]) -> ToolCall:
    name = _str(payload.get("tool_name")) or ""
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        # Shell and patch inputs are objects; anything else is kept, not dropped.
        tool_input = {} if tool_input is None else {"input": tool_input}
    output = ok = None
    if event_name == "PostToolUse":
        output, ok = tool_output(name, payload.get("tool_response"))
    return ToolCall(name=name, input=tool_input, output=output, ok=ok, tool_use_id=_str(payload.get("tool_use_id")))


def tool_output(tool_name: str, response: object) -> tuple[str | None, bool | None]:
    """``(text, ok)`` from a PostToolUse ``tool_response``. ``ok`` is ``None`` when Codex
    does not say (shell output carries no exit code), ``True``/``False`` from an
    ``apply_patch`` result's ``Exit code: N`` line or a structured result's error flag.
    Never raises."""
    if response is None:
        return None, None
    if isinstance(response, str):
        text = response
        if len(text) > RESPONSE_TOTAL_CAP:
            from ..redact import clip

            text = clip(text, RESPONSE_TOTAL_CAP)
        first = text.split("\n", 1)[0].strip()
        if first.startswith("Exit code:"):
            code = first[len("Exit code:"):].strip()
            return text, code == "0" if code.lstrip("-").isdigit() else None
        return text, None
    from ..redact import clip_value

    clipped = clip_value(response, per_string=RESPONSE_STRING_CAP, total=RESPONSE_TOTAL_CAP)
    text, ok = _claude.tool_output(tool_name, clipped)
    if isinstance(response, dict) and response.get("isError") is True:
        ok = False  # an MCP CallToolResult that failed
    return text, ok


def render_response(event: HookEvent, resp: HookResponse) -> str:
    """What to print on stdout (exit 0) for ``resp`` to ``event``; ``""`` = nothing.
    See the module docstring for the per-event keys. ASCII-only JSON."""
    # Codex rejects keys an event's schema lacks: only _CONTEXT_EVENTS take
    # hookSpecificOutput or a block (Stop aside), only _SYSTEM_EVENTS systemMessage.
    return _claude.hook_output(NAMES.of(event), event, resp, context_events=_CONTEXT_EVENTS,
                       block_events=_BLOCK_EVENTS & _CONTEXT_EVENTS, system_events=_SYSTEM_EVENTS)
