"""The loopback HTTP server the scripted model endpoints share (:mod:`.openai_sse`, the
chat-completions API; :mod:`.responses_sse`, the Responses API): one route that takes a
JSON body, records every request, asks the test's ``answer(body)`` for a turn and
answers it as JSON or server-sent events; ``GET …/models`` answers a model list. A
subclass names its route and writes its protocol's answer (:meth:`ScriptedServer.respond`).
Runs in a daemon thread of the test process. Nothing here calls a real model."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class ScriptedServer:
    """``with Sub(answer) as srv: srv.url`` (``http://127.0.0.1:PORT/v1``). ``answer(body)``
    returns the subclass's turn, or a string for a text-only one (:meth:`text_turn`); a
    script that raises is answered 500 (the test sees it) instead of hanging the client."""

    #: The POST route (path suffix) the protocol serves.
    ROUTE = ""

    def __init__(self, answer, model: str = "scripted-model", port: int = 0):
        self.answer = answer
        self.model = model
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # keep test output quiet
                pass

            def do_GET(self):
                outer._record("GET", self.path, None)
                if self.path.split("?")[0].rstrip("/").endswith("/models"):
                    return self.send_json(200, outer.models_list())
                return self.send_json(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self):
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                refused = outer.refuse(self.headers)
                if refused:
                    return self.send_json(415, {"error": {"message": refused}})
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    return self.send_json(400, {"error": {"message": "invalid JSON"}})
                outer._record("POST", self.path, body)
                if not self.path.split("?")[0].rstrip("/").endswith(outer.ROUTE):
                    return self.send_json(404, {"error": {"message": f"no route {self.path}"}})
                try:
                    turn = outer.answer(body)
                except Exception as exc:  # a broken script answers 500, it does not hang
                    return self.send_json(500, {"error": {"message": f"script failed: {exc!r}"}})
                outer.respond(self, body, outer.text_turn(turn) if isinstance(turn, str) else turn)

            def send_json(self, status: int, obj: dict):
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def send_events(self, frames):
                """Server-sent events: each of ``frames`` (bytes) written and flushed as
                it comes, then the connection closed."""
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()
                for frame in frames:
                    self.wfile.write(frame)
                    self.wfile.flush()
                self.close_connection = True

        self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    # ------------------------------------------------------------------ the protocol's part
    def models_list(self) -> dict:
        """The body of ``GET …/models``."""
        return {"object": "list", "data": [{"id": self.model, "object": "model", "owned_by": "test"}]}

    def refuse(self, headers) -> str | None:
        """Why a POST is refused before its body is read as JSON (answered 415), or None."""
        return None

    def text_turn(self, text: str):
        """The turn a script's plain string answer stands for."""
        raise NotImplementedError

    def respond(self, handler, body: dict, turn) -> None:
        """Answer ``turn`` to the request ``body`` through ``handler``'s ``send_json`` or
        ``send_events``."""
        raise NotImplementedError

    # ------------------------------------------------------------------ shared
    def _record(self, method: str, path: str, body: dict | None) -> None:
        with self._lock:
            self.requests.append({"method": method, "path": path, "body": body, "at": time.time()})

    def bodies(self) -> list[dict]:
        """Bodies of the POST requests received so far, in order."""
        with self._lock:
            return [r["body"] for r in self.requests if r["method"] == "POST" and r["body"] is not None]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
