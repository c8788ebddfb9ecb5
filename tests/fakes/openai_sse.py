"""A scripted OpenAI-compatible chat-completions server on loopback, streaming included.

What a real harness (OpenCode through the AI SDK's OpenAI-compatible provider) needs
from a model endpoint:

* ``POST …/chat/completions`` with ``"stream": true`` → server-sent events, one
  ``data: {chat.completion.chunk}`` line per delta and a final ``data: [DONE]``. A text
  answer streams ``choices[0].delta.content``; a tool call streams
  ``choices[0].delta.tool_calls[{index, id, type: "function", function: {name,
  arguments}}]`` with the arguments JSON split over several chunks, then a chunk with
  ``finish_reason: "tool_calls"`` (``"stop"`` for text), then a usage chunk.
* the same without ``stream`` → one ``chat.completion`` object.
* ``GET …/models`` → a model list (some clients probe it).

Every request is recorded (``server.requests``: method, path, parsed JSON body). What to
answer is decided by ``answer(body) -> Turn`` where ``body`` is the request's JSON; a
:class:`Turn` is text and/or tool calls. Runs in a daemon thread of the test process::

    with OpenAIServer(answer) as srv:
        srv.url  # "http://127.0.0.1:PORT/v1"

Nothing here calls a real model.
"""

from __future__ import annotations

import itertools
import json
import time

from .scripted_http import ScriptedServer

_ids = itertools.count(1)


class ToolCall:
    """One function call the scripted model makes: ``name`` and ``arguments`` (a dict)."""

    def __init__(self, name: str, arguments: dict):
        self.name = name
        self.arguments = arguments
        self.id = f"call_{next(_ids)}"


class Turn:
    """One scripted assistant turn: optional ``text`` and ``tool_calls``, and the token
    counts to report (a large ``prompt_tokens`` makes a harness think its context is
    full, which is how a test triggers compaction)."""

    def __init__(self, text: str = "", tool_calls: list[ToolCall] | None = None, prompt_tokens: int = 100,
                 completion_tokens: int = 20):
        self.text = text
        self.tool_calls = list(tool_calls or [])
        self.usage = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens}


def messages_text(body: dict) -> str:
    """All the text of a request's messages (system, user, assistant, tool), joined."""
    out = []
    for m in body.get("messages") or []:
        content = m.get("content")
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    out.append(part["text"])
    return "\n".join(out)


def tool_results(body: dict) -> list[str]:
    """The contents of the ``role: "tool"`` messages, in order."""
    out = []
    for m in body.get("messages") or []:
        if m.get("role") != "tool":
            continue
        content = m.get("content")
        if isinstance(content, list):
            content = "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
        out.append(content if isinstance(content, str) else json.dumps(content))
    return out


class OpenAIServer(ScriptedServer):
    """``with OpenAIServer(answer) as srv``: serves on 127.0.0.1 (port 0 = any free)."""

    ROUTE = "/chat/completions"

    def text_turn(self, text: str) -> Turn:
        return Turn(text=text)

    def respond(self, handler, body: dict, turn: Turn) -> None:
        if not body.get("stream"):
            return handler.send_json(200, self._completion(turn))
        frames = [b"data: " + json.dumps(chunk).encode() + b"\n\n" for chunk in self._chunks(turn)]
        handler.send_events([*frames, b"data: [DONE]\n\n"])

    def chat_requests(self) -> list[dict]:
        """Bodies of the chat-completion requests received so far."""
        return self.bodies()

    def _base(self, cid: str) -> dict:
        return {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()), "model": self.model}

    def _chunks(self, turn: Turn):
        cid = f"chatcmpl-{next(_ids)}"
        yield {**self._base(cid), "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]}
        if turn.text:
            words = turn.text.split(" ")
            for i, w in enumerate(words):
                piece = w if i == len(words) - 1 else w + " "
                yield {**self._base(cid), "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
        for index, call in enumerate(turn.tool_calls):
            args = json.dumps(call.arguments)
            half = len(args) // 2
            yield {**self._base(cid), "choices": [{"index": 0, "delta": {"tool_calls": [
                {"index": index, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": args[:half]}}
            ]}, "finish_reason": None}]}
            yield {**self._base(cid), "choices": [{"index": 0, "delta": {"tool_calls": [
                {"index": index, "function": {"arguments": args[half:]}}
            ]}, "finish_reason": None}]}
        finish = "tool_calls" if turn.tool_calls else "stop"
        yield {**self._base(cid), "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}
        yield {**self._base(cid), "choices": [], "usage": dict(turn.usage)}

    def _completion(self, turn: Turn) -> dict:
        message: dict = {"role": "assistant", "content": turn.text or None}
        if turn.tool_calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                for c in turn.tool_calls
            ]
        return {
            "id": f"chatcmpl-{next(_ids)}", "object": "chat.completion", "created": int(time.time()), "model": self.model,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if turn.tool_calls else "stop"}],
            "usage": dict(turn.usage),
        }
