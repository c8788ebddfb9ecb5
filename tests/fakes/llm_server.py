"""A scripted model server on loopback that speaks the real wire protocols.

* OpenAI chat completions: ``POST …/chat/completions`` → ``{"choices": [{"message":
  {"role": "assistant", "content": …}}], "usage": {"prompt_tokens", "completion_tokens"}}``.
* Anthropic Messages: ``POST /v1/messages`` (any query, e.g. ``?beta=true``) → a message
  object with ``content`` blocks and ``usage.input_tokens/output_tokens``; with
  ``"stream": true`` in the request the same message as server-sent events
  (``message_start``, ``content_block_start``/``_delta``/``_stop``, ``message_delta``,
  ``message_stop``), which is what Claude Code asks for.
* ``POST /v1/messages/count_tokens`` → ``{"input_tokens": N}``.

Every request is recorded (method, path, headers with lower-cased names, parsed JSON
body) so a test can check exactly what the client sent. What to answer is decided by
``answer(request)``, which returns one of:

* a ``str``: a text answer in the protocol of the request;
* a ``list`` of Anthropic content blocks (``{"type": "text", …}``, ``{"type":
  "tool_use", "id", "name", "input"}``): the stop reason is ``tool_use`` when one of
  them is a tool call, else ``end_turn``;
* a :class:`Reply`: the raw status, body and content type (errors, broken JSON).

Runs in a daemon thread of the test process (``with ModelServer(answer) as srv:``), or
as a script for a separate process: ``python llm_server.py --port-file F --text T``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

_ids = itertools.count(1)


class Reply:
    """A raw HTTP answer: ``status``, ``body`` (bytes, str or JSON-able) and content type."""

    def __init__(self, status: int = 200, body=b"", content_type: str = "application/json", delay: float = 0.0):
        self.status = status
        if isinstance(body, (dict, list)):
            body = json.dumps(body)
        self.body = body.encode() if isinstance(body, str) else bytes(body)
        self.content_type = content_type
        self.delay = delay


class Request:
    """One recorded request."""

    def __init__(self, method: str, path: str, headers: dict[str, str], raw: bytes):
        self.method = method
        split = urlsplit(path)
        self.path = split.path
        self.query = split.query
        self.headers = headers
        self.raw = raw
        try:
            self.body = json.loads(raw) if raw else None
        except ValueError:
            self.body = None

    @property
    def protocol(self) -> str:
        if self.path.endswith("/chat/completions"):
            return "openai"
        if self.path.endswith("/messages/count_tokens"):
            return "count_tokens"
        if self.path.endswith("/messages"):
            return "anthropic"
        return "unknown"

    @property
    def streaming(self) -> bool:
        return isinstance(self.body, dict) and self.body.get("stream") is True

    def text(self) -> str:
        """Every text the request carries (system prompt, messages, tool results), for
        assertions like "the model saw this fact"."""
        return json.dumps(self.body, ensure_ascii=False) if self.body is not None else self.raw.decode("utf-8", "replace")

    def prompt(self) -> str:
        """The last user message's text (OpenAI or Anthropic shape)."""
        msgs = (self.body or {}).get("messages") or []
        for m in reversed(msgs):
            if m.get("role") != "user":
                continue
            c = m.get("content")
            if isinstance(c, str):
                return c
            if isinstance(c, list):
                return "\n".join(b.get("text", "") for b in c if isinstance(b, dict))
        return ""


# ---------------------------------------------------------------- protocol bodies


def openai_body(text: str, *, prompt_tokens: int = 11, completion_tokens: int = 7, model: str = "fake-gpt") -> dict:
    return {
        "id": f"chatcmpl-{next(_ids)}", "object": "chat.completion", "created": int(time.time()), "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }


def _blocks(answer) -> list[dict]:
    return [{"type": "text", "text": answer}] if isinstance(answer, str) else list(answer)


def _stop_reason(blocks: list[dict]) -> str:
    return "tool_use" if any(b.get("type") == "tool_use" for b in blocks) else "end_turn"


def anthropic_body(answer, *, input_tokens: int = 13, output_tokens: int = 5, model: str = "claude-fake") -> dict:
    blocks = _blocks(answer)
    return {
        "id": f"msg_{next(_ids):06d}", "type": "message", "role": "assistant", "model": model, "content": blocks,
        "stop_reason": _stop_reason(blocks), "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }


def _sse(event: str, data: dict) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def anthropic_sse(answer, *, input_tokens: int = 13, output_tokens: int = 5, model: str = "claude-fake") -> bytes:
    """The Messages streaming form of ``answer`` (text and/or tool_use blocks)."""
    blocks = _blocks(answer)
    msg = anthropic_body([], input_tokens=input_tokens, output_tokens=1, model=model)
    msg["stop_reason"] = None
    out = [_sse("message_start", {"type": "message_start", "message": msg})]
    for i, b in enumerate(blocks):
        if b.get("type") == "tool_use":
            start = {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(b.get("input") or {})}
        else:
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": b.get("text", "")}
        out.append(_sse("content_block_start", {"type": "content_block_start", "index": i, "content_block": start}))
        out.append(_sse("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}))
        out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": i}))
    out.append(_sse("message_delta", {"type": "message_delta",
                                      "delta": {"stop_reason": _stop_reason(blocks), "stop_sequence": None},
                                      "usage": {"output_tokens": output_tokens}}))
    out.append(_sse("message_stop", {"type": "message_stop"}))
    return b"".join(out)


def reply_for(req: Request, answer) -> Reply:
    """Wrap an ``answer`` (str / blocks / Reply) in the protocol ``req`` spoke."""
    if isinstance(answer, Reply):
        return answer
    if req.protocol == "openai":
        text = answer if isinstance(answer, str) else "".join(b.get("text", "") for b in answer)
        return Reply(200, openai_body(text))
    if req.protocol == "count_tokens":
        return Reply(200, {"input_tokens": max(1, len(req.raw) // 4)})
    if req.protocol == "anthropic":
        if req.streaming:
            return Reply(200, anthropic_sse(answer), content_type="text/event-stream")
        return Reply(200, anthropic_body(answer))
    return Reply(404, {"type": "error", "error": {"type": "not_found_error", "message": f"no route {req.path}"}})


# ---------------------------------------------------------------- server


class ModelServer:
    """``ModelServer(answer)``: a loopback HTTP server answering with ``answer(request)``
    (default: ``"[]"``). ``url`` is ``http://127.0.0.1:<port>``; ``requests`` lists what
    arrived, in order."""

    def __init__(self, answer=None):
        self.answer = answer or (lambda req: "[]")
        self.requests: list[Request] = []
        self.errors: list[str] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def _handle(self):
                n = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(n) if n else b""
                req = Request(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, raw)
                with server._lock:
                    server.requests.append(req)
                try:
                    rep = reply_for(req, server.answer(req)) if req.protocol != "unknown" else reply_for(req, None)
                except Exception as exc:  # a broken script must show up in the test, not hang it
                    server.errors.append(f"{type(exc).__name__}: {exc}")
                    rep = Reply(500, {"type": "error", "error": {"type": "api_error", "message": str(exc)}})
                if rep.delay:
                    time.sleep(rep.delay)
                self.send_response(rep.status)
                self.send_header("content-type", rep.content_type)
                self.send_header("content-length", str(len(rep.body)))
                if rep.content_type == "text/event-stream":
                    self.send_header("cache-control", "no-cache")
                self.end_headers()
                self.wfile.write(rep.body)

            do_POST = _handle
            do_GET = _handle
            do_PUT = _handle

            def do_HEAD(self):
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="model-server", daemon=True)

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "ModelServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread.is_alive():
            self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> "ModelServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def of(self, protocol: str) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.protocol == protocol]


def main(argv: list[str] | None = None) -> int:
    """Serve a fixed text answer in a separate process until killed."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--text", default="[]")
    a = ap.parse_args(argv)
    srv = ModelServer(lambda req: a.text).start()
    with open(a.port_file, "w") as fh:
        fh.write(str(srv.port))
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        srv.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
