"""A scripted OpenAI Responses API server on loopback, for the real Codex CLI.

What Codex (``codex exec`` with a custom ``[model_providers.x]`` whose ``wire_api`` is
``"responses"``) needs from a model endpoint (docs/harness-contracts.md, Codex section):

* ``POST …/responses`` with ``"stream": true`` → server-sent events, each written as
  ``event: <type>`` + ``data: <json>``: ``response.created``, then per output item
  ``response.output_item.added`` / (``response.output_text.delta`` for text) /
  ``response.output_item.done`` carrying the whole item, and last ``response.completed``
  with the response ``id`` and ``usage`` (``input_tokens``, ``output_tokens``,
  ``total_tokens``). Codex acts on the ``done`` items; a large ``total_tokens`` is what
  makes it compact (``model_auto_compact_token_limit``).
* Items: an assistant ``message`` (``content: [{type: "output_text", text}]``), a
  ``function_call`` (``call_id``, ``name``, ``arguments`` as a JSON string; the shell
  tool; with a ``namespace`` such as ``mcp__ledger`` for an MCP tool), a
  ``custom_tool_call`` (``call_id``, ``name``, ``input`` as raw text; how Codex's
  freeform ``apply_patch`` tool is called), or a ``tool_search_call`` (``arguments:
  {query}``; how a model finds MCP tools Codex defers, answered by a
  ``tool_search_output`` item listing them).
* ``GET …/models`` → a model list (answered; Codex may probe it).

Every request is recorded (``server.requests``). What to answer is decided by
``answer(body) -> Turn``, ``body`` being the request's JSON (``input`` is the
conversation: ``message`` items with ``content`` parts, ``function_call_output`` /
``custom_tool_call_output`` items with ``output``). Runs in a daemon thread::

    with ResponsesServer(answer) as srv:
        srv.url  # "http://127.0.0.1:PORT/v1"

Nothing here calls a real model.
"""

from __future__ import annotations

import itertools
import json

from .scripted_http import ScriptedServer

_ids = itertools.count(1)


class Call:
    """One tool call the scripted model makes. ``arguments`` (a dict) makes a
    ``function_call``; ``input`` (raw text) makes a ``custom_tool_call``."""

    def __init__(self, name: str, arguments: dict | None = None, *, input: str | None = None):
        self.name = name
        self.arguments = arguments
        self.input = input
        self.call_id = f"call_{next(_ids)}"

    def item(self) -> dict:
        if self.input is not None:
            return {"type": "custom_tool_call", "id": f"ctc_{self.call_id}", "status": "completed",
                    "call_id": self.call_id, "name": self.name, "input": self.input}
        return {"type": "function_call", "id": f"fc_{self.call_id}", "status": "completed",
                "call_id": self.call_id, "name": self.name, "arguments": json.dumps(self.arguments or {})}


class RawItem:
    """An output item given as is (``tool_search_call``, a ``function_call`` with a
    ``namespace``...), for calls :class:`Call` does not build."""

    def __init__(self, item: dict):
        self._item = item

    def item(self) -> dict:
        return dict(self._item)


class Turn:
    """One scripted assistant turn: optional ``text`` and tool ``calls``, and the token
    count to report (``total_tokens``; a large one makes Codex compact)."""

    def __init__(self, text: str = "", calls: list[Call] | None = None, total_tokens: int = 200):
        self.text = text
        self.calls = list(calls or [])
        self.total_tokens = total_tokens


def input_items(body: dict) -> list[dict]:
    """The request's ``input`` items (the conversation so far)."""
    return [i for i in body.get("input") or [] if isinstance(i, dict)]


def request_text(body: dict) -> str:
    """All the text a request carries: instructions, message parts and tool outputs."""
    out = [body.get("instructions") or ""]
    for item in input_items(body):
        content = item.get("content")
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out.extend(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
        output = item.get("output")
        if isinstance(output, str):
            out.append(output)
        elif isinstance(output, list):
            out.extend(p["text"] for p in output if isinstance(p, dict) and isinstance(p.get("text"), str))
    return "\n".join(out)


def tool_outputs(body: dict) -> list[str]:
    """The outputs of the tool calls in the conversation, in order."""
    out = []
    for item in input_items(body):
        if item.get("type") in ("function_call_output", "custom_tool_call_output"):
            o = item.get("output")
            if isinstance(o, list):
                o = "\n".join(p.get("text", "") for p in o if isinstance(p, dict))
            out.append(o if isinstance(o, str) else json.dumps(o))
    return out


class ResponsesServer(ScriptedServer):
    """``with ResponsesServer(answer) as srv``: serves on 127.0.0.1 (a free port)."""

    ROUTE = "/responses"

    def models_list(self) -> dict:
        return {"object": "list", "models": [], "data": [{"id": self.model, "object": "model"}]}

    def refuse(self, headers) -> str | None:
        return "compressed bodies are not supported here" if headers.get("content-encoding") == "zstd" else None

    def text_turn(self, text: str) -> Turn:
        return Turn(text=text)

    def respond(self, handler, body: dict, turn: Turn) -> None:
        handler.send_events(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in self._events(turn))

    def _events(self, turn: Turn):
        rid = f"resp_{next(_ids)}"
        yield {"type": "response.created", "response": {"id": rid, "model": self.model, "status": "in_progress"}}
        index = 0
        if turn.text:
            mid = f"msg_{next(_ids)}"
            item = {"type": "message", "id": mid, "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": turn.text, "annotations": []}]}
            yield {"type": "response.output_item.added", "output_index": index,
                   "item": {**item, "status": "in_progress", "content": []}}
            yield {"type": "response.output_text.delta", "item_id": mid, "output_index": index, "content_index": 0,
                   "delta": turn.text}
            yield {"type": "response.output_item.done", "output_index": index, "item": item}
            index += 1
        for call in turn.calls:
            item = call.item()
            yield {"type": "response.output_item.added", "output_index": index, "item": item}
            yield {"type": "response.output_item.done", "output_index": index, "item": item}
            index += 1
        usage = {"input_tokens": max(0, turn.total_tokens - 20), "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": turn.total_tokens}
        yield {"type": "response.completed", "response": {"id": rid, "model": self.model, "status": "completed",
                                                          "usage": usage}}
