"""The harness-neutral hook event: what every adapter turns a harness payload into.

The watcher and the session-state code only ever see these values, never a harness's
JSON (docs/architecture.md, L4: adapters turn a harness's payload into this type at the
edge).

Why these are hand-written slotted classes and not ``@dataclass(frozen=True)``: this
module is imported by every ``ledger hook ...`` process, whose wall time must stay within
1.5x ``python -c pass``. ``import dataclasses`` pulls in ``inspect`` (and ``ast``,
``dis``, ``tokenize``...) and measured +17 ms over ``json`` + ``shlex`` on our machines,
about 85 % of a bare interpreter start. The classes below keep the dataclass contract
that matters (keyword or positional construction in field order, immutability, value
equality, hashing when every field is hashable, a readable ``repr``) plus ``replace()``
and ``as_dict()`` in place of ``dataclasses.replace`` / ``asdict``.

Stdlib only; imports nothing at all.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover - typing only; keeps ``typing`` off the hook path
    from typing import Any, Self

#: Every value :attr:`HookEvent.kind` can take.
KINDS = (
    "session_start",
    "pre_tool",
    "post_tool",
    "stop",
    "pre_compact",
    "session_end",
    "user_prompt",
)


class _Frozen:
    """Immutable value object over ``__slots__`` (the fields, in constructor order)."""

    __slots__: tuple[str, ...] = ()

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen; use .replace({name}=...)")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen")

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, f) for f in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Frozen) or other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        # Like a frozen dataclass: TypeError if a field (e.g. a dict) is unhashable.
        return hash((self.__class__.__name__,) + self._values())

    def __repr__(self) -> str:
        inner = ", ".join(f"{f}={getattr(self, f)!r}" for f in self.__slots__)
        return f"{type(self).__name__}({inner})"

    def as_dict(self) -> dict[str, Any]:
        """Fields as a dict; nested values of this module are converted too."""
        out: dict[str, Any] = {}
        for f in self.__slots__:
            v = getattr(self, f)
            out[f] = v.as_dict() if isinstance(v, _Frozen) else v
        return out

    def replace(self, **changes: Any) -> Self:
        """A copy with ``changes`` applied (``dataclasses.replace`` equivalent)."""
        unknown = set(changes) - set(self.__slots__)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field(s) {sorted(unknown)}")
        values = {f: getattr(self, f) for f in self.__slots__}
        values.update(changes)
        return type(self)(**values)


class ToolCall(_Frozen):
    """One tool call as the harness reported it.

    - ``name``: the harness's tool name (Claude Code: ``Bash``, ``Read``, ``Edit``...).
    - ``input``: the tool's arguments, as the harness sent them (JSON object).
    - ``output``: the tool's result as one text, or ``None`` before the tool ran
      (``pre_tool``) or when the harness gave none. Not redacted or bounded here.
    - ``ok``: ``True`` succeeded, ``False`` failed or was interrupted, ``None`` unknown
      (always ``None`` on ``pre_tool``).
    - ``tool_use_id``: the harness's id for this call, pairing pre and post events.
    - ``duration_ms``: how long the tool ran, in milliseconds, when the harness says.
    """

    __slots__ = ("name", "input", "output", "ok", "tool_use_id", "duration_ms")

    name: str
    input: dict[str, Any]
    output: str | None
    ok: bool | None
    tool_use_id: str | None
    duration_ms: float | None

    def __init__(
        self,
        name: str,
        input: dict[str, Any],
        output: str | None = None,
        ok: bool | None = None,
        tool_use_id: str | None = None,
        duration_ms: float | None = None,
    ) -> None:
        s = object.__setattr__
        s(self, "name", name)
        s(self, "input", input)
        s(self, "output", output)
        s(self, "ok", ok)
        s(self, "tool_use_id", tool_use_id)
        s(self, "duration_ms", duration_ms)


class HookEvent(_Frozen):
    """One hook call, harness-neutral.

    - ``harness``: adapter name, e.g. ``"claude-code"``.
    - ``kind``: one of :data:`KINDS`.
    - ``session_id``: the harness's session id (``""`` if it sent none).
    - ``cwd``: the agent's working directory at the time of the event (absolute path).
    - ``transcript_path``: the harness's transcript file, if any (may lag the turn).
    - ``tool``: the tool call, for ``pre_tool`` / ``post_tool``; else ``None``.
    - ``source``: what caused the event: SessionStart ``source`` (``startup``,
      ``resume``, ``clear``, ``compact``, ``fork``), PreCompact ``trigger`` (``manual``,
      ``auto``) or SessionEnd ``reason`` (``clear``, ``logout``, ``prompt_input_exit``...).
    - ``stop_hook_active``: on ``stop``, true when the agent is already continuing because
      a Stop hook blocked; a hook must not block again then (loop guard).
    - ``raw_event_name``: the harness's own event name (``"PostToolUse"``), which the
      adapter's renderer needs.
    - ``prompt``: the user's prompt on ``user_prompt``; PreCompact's
      ``custom_instructions`` (the ``/compact`` argument) on ``pre_compact``.
    - ``agent_id``: set when the event comes from a subagent (Claude Code ``agent_id``);
      callers usually skip subagent traffic. Defaults to ``None``.
    - ``project``: the folder the harness was started in, as the harness defines its
      project (Claude Code: ``$CLAUDE_PROJECT_DIR``, which does not follow ``cd``);
      ``None`` when the harness did not say (the session's first ``cwd`` is used then).
      See docs/watcher.md, "Projects and worktrees".
    """

    __slots__ = (
        "harness",
        "kind",
        "session_id",
        "cwd",
        "transcript_path",
        "tool",
        "source",
        "stop_hook_active",
        "raw_event_name",
        "prompt",
        "agent_id",
        "project",
    )

    harness: str
    kind: str
    session_id: str
    cwd: str
    transcript_path: str | None
    tool: ToolCall | None
    source: str | None
    stop_hook_active: bool
    raw_event_name: str
    prompt: str | None
    agent_id: str | None
    project: str | None

    def __init__(
        self,
        harness: str,
        kind: str,
        session_id: str,
        cwd: str,
        transcript_path: str | None = None,
        tool: ToolCall | None = None,
        source: str | None = None,
        stop_hook_active: bool = False,
        raw_event_name: str = "",
        prompt: str | None = None,
        agent_id: str | None = None,
        project: str | None = None,
    ) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown event kind {kind!r}; expected one of {', '.join(KINDS)}")
        s = object.__setattr__
        s(self, "harness", harness)
        s(self, "kind", kind)
        s(self, "session_id", session_id)
        s(self, "cwd", cwd)
        s(self, "transcript_path", transcript_path)
        s(self, "tool", tool)
        s(self, "source", source)
        s(self, "stop_hook_active", stop_hook_active)
        s(self, "raw_event_name", raw_event_name)
        s(self, "prompt", prompt)
        s(self, "agent_id", agent_id)
        s(self, "project", project)


class HookResponse(_Frozen):
    """What ledger wants to say back, harness-neutral. All fields optional.

    - ``additional_context``: text for the *model* (facts to re-inject, a checkpoint...).
      Claude Code caps such strings at 10,000 characters; keep within budget upstream.
    - ``deny_reason``: the strong form, shown to the model: deny the tool call
      (``pre_tool``), block with feedback (``post_tool``, ``stop``, ``user_prompt``,
      ``pre_compact``). What each event does with it is the adapter's business.
    - ``system_message``: a warning shown to the *user*, not the model.

    Terminal control sequences are removed from each (:func:`ledger.plaintext.plain_text`).
    An all-``None`` (or all-empty) response means "say nothing".
    """

    __slots__ = ("additional_context", "deny_reason", "system_message")

    additional_context: str | None
    deny_reason: str | None
    system_message: str | None

    def __init__(
        self,
        additional_context: str | None = None,
        deny_reason: str | None = None,
        system_message: str | None = None,
    ) -> None:
        s = object.__setattr__
        if additional_context or deny_reason or system_message:
            # The last guard on what reaches the model and the user's terminal: no
            # terminal control sequence, whatever the text was built from
            # (docs/watcher.md "Terminal control sequences").
            from .plaintext import plain_text

            additional_context, deny_reason, system_message = (
                plain_text(t) if isinstance(t, str) else t for t in (additional_context, deny_reason, system_message))
        s(self, "additional_context", additional_context)
        s(self, "deny_reason", deny_reason)
        s(self, "system_message", system_message)

    @property
    def is_empty(self) -> bool:
        """True when there is nothing to say back."""
        return not (self.additional_context or self.deny_reason or self.system_message)
