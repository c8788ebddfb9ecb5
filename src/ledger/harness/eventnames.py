"""A harness's hook event names, as every per-event adapter (Claude Code, Codex, Gemini
CLI) needs them: the name -> :attr:`ledger.events.HookEvent.kind` table, the harness's
spelling of a name given loosely on a command line (``post-tool-use``, ``pretooluse``),
and the name to answer an event under. Each adapter had its own copy of these three.
Stdlib only (the hook path)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from ledger.events import HookEvent


class EventNames:
    """``EventNames({"PostToolUse": "post_tool", ...})``. Iterating ``events`` gives the
    names the adapter handles, in the table's order; where several names share a kind
    (Claude Code's PostToolUse and PostToolUseFailure), the first answers for the kind."""

    def __init__(self, events: dict[str, str]):
        self.events = events
        self._canon = {name.lower(): name for name in events}
        self._by_kind: dict[str, str] = {}
        for name, kind in events.items():
            self._by_kind.setdefault(kind, name)

    def canonical(self, name: str) -> str | None:
        """The harness's spelling of ``name`` (case, ``-`` and ``_`` ignored), or None."""
        return self._canon.get(name.replace("-", "").replace("_", "").strip().lower())

    def of(self, event: "HookEvent") -> str:
        """The name to answer ``event`` under: its own (``raw_event_name``), else the
        first of its kind (an event that did not come from this adapter); ``""`` if none."""
        return self.canonical(event.raw_event_name) or self._by_kind.get(event.kind, "")
