"""A scripted "model" for the real Claude Code: it answers ``POST /v1/messages`` like the
Anthropic API (streamed server-sent events; harness testing notes) and drives the
agent through a fixed list of tool calls, then a final answer.

The next step is chosen from the conversation itself: the number of ``tool_result``
blocks Claude Code sends back says how many tool calls have run. Requests without our
tools (titles, topic checks and other side requests) get a short text answer.

    scenario = Scenario([("Read", {"file_path": p}), ("Bash", {"command": "cat data.bin"})], final="done")
    with ModelServer(scenario) as srv:
        ...  # run claude with ANTHROPIC_BASE_URL=srv.url
        scenario.main_requests(srv)  # what the model saw, request by request
"""

from __future__ import annotations

import json

from .llm_server import Request


def tool_results(req: Request) -> int:
    n = 0
    for m in (req.body or {}).get("messages") or []:
        c = m.get("content")
        if isinstance(c, list):
            n += sum(1 for b in c if isinstance(b, dict) and b.get("type") == "tool_result")
    return n


def is_main_loop(req: Request) -> bool:
    names = {t.get("name") for t in (req.body or {}).get("tools") or [] if isinstance(t, dict)}
    return req.protocol == "anthropic" and bool(names & {"Bash", "Read"})


def is_compaction(req: Request) -> bool:
    """Claude Code's summarisation request (``/compact`` or auto-compaction): a turn
    asking for a text-only summary of the conversation (2.1.x wording)."""
    users = [m for m in (req.body or {}).get("messages") or [] if m.get("role") == "user"]
    last = json.dumps(users[-1]) if users else ""
    return "Respond with TEXT ONLY" in last and "summary" in last


class Scenario:
    """``steps``: ``(tool name, tool input)`` pairs issued one per model turn; then
    ``final`` as the answer. ``before(n)`` (optional) runs before answering the main
    request that follows ``n`` tool results: a test can wait there for something
    asynchronous (a detached distiller) so the run is deterministic."""

    def __init__(self, steps: list[tuple[str, dict]], final: str = "Done.", before=None,
                 summary: str = "Summary: the agent inspected the files."):
        self.steps = list(steps)
        self.final = final
        self.before = before
        self.summary = summary
        self.issued: list[int] = []

    def __call__(self, req: Request):
        if not is_main_loop(req):
            return "OK"
        if is_compaction(req):
            return self.summary
        n = tool_results(req)
        if self.before is not None:
            self.before(n)
        if n < len(self.steps):
            name, inp = self.steps[n]
            self.issued.append(n)
            return [{"type": "text", "text": f"Step {n + 1}: using {name}."},
                    {"type": "tool_use", "id": f"toolu_{n + 1:02d}_scripted", "name": name, "input": inp}]
        return self.final

    @staticmethod
    def main_requests(server) -> list[Request]:
        return [r for r in list(server.requests) if is_main_loop(r) and not is_compaction(r)]

    @staticmethod
    def after_tool(server, n: int) -> Request | None:
        """The first main-loop request sent after ``n`` tool results (what the model saw
        right after the ``n``-th tool call)."""
        for r in Scenario.main_requests(server):
            if tool_results(r) == n:
                return r
        return None

    @staticmethod
    def tool_result_text(req: Request, n: int) -> str:
        """Everything Claude Code attached to the ``n``-th tool result (1-based) and the
        user turn that carries it: the result itself plus any system reminders (where
        hook ``additionalContext`` lands)."""
        seen = 0
        for m in (req.body or {}).get("messages") or []:
            c = m.get("content")
            if m.get("role") != "user" or not isinstance(c, list):
                continue
            blocks = [b for b in c if isinstance(b, dict)]
            count = sum(1 for b in blocks if b.get("type") == "tool_result")
            if seen < n <= seen + count:
                return json.dumps(blocks, ensure_ascii=False)
            seen += count
        return ""
