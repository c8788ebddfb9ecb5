"""JSON lines over a pair of byte streams: the transport of the OpenCode session server.

One JSON object per line, UTF-8, written ASCII-escaped. Reading refuses lines longer than
:data:`MAX_LINE` bytes without buffering them, skips blank lines, and turns a line that is
not JSON, or not an object, into an error answer; the caller's handler only ever sees
decoded objects. Writing is thread-safe (a worker thread may send while the reader
answers) and a reader that went away is not an error. Knows nothing of what the
requests mean: that is :mod:`ledger.harness.session_server`'s business.

Stdlib only.
"""

from __future__ import annotations

import json
import re
import threading

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from typing import Callable

MAX_LINE = 16 * 1024 * 1024  # bytes; longer request lines are refused, not buffered


_LEADING_ID = re.compile(rb'\A\s*\{\s*"id"\s*:\s*(-?\d{1,15})\s*[,}]')


def leading_id(line: bytes) -> int | None:
    """The integer ``id`` a request line starts with (``{"id": 7, ...``, as the OpenCode
    plugin writes them), read without parsing the rest: the id of a line too long to
    parse. None when the line does not start so."""
    m = _LEADING_ID.match(line[:64])
    return int(m.group(1)) if m else None


class Channel:
    """Sends and receives JSON lines. ``out`` is a binary stream (or None: sends are
    dropped); ``error_reply(message) -> dict`` builds the answer to a line that could not
    be read, in the protocol's shape."""

    def __init__(self, out, error_reply: Callable[[str], dict], max_line: int = MAX_LINE):
        self.out = out
        self.error_reply = error_reply
        self.max_line = max_line
        self._lock = threading.Lock()

    def send(self, obj: dict) -> None:
        """Write one line (thread-safe; a vanished reader is not an error)."""
        if self.out is None:
            return
        data = json.dumps(obj, ensure_ascii=True, separators=(",", ":")).encode("ascii") + b"\n"
        with self._lock:
            try:
                self.out.write(data)
                self.out.flush()
            except (BrokenPipeError, ValueError, OSError):
                pass

    def decode(self, line: bytes | str) -> tuple[dict | None, dict | None]:
        """``(request, None)`` for a line holding a JSON object, else ``(None, error
        answer)``. Lone surrogate escapes (``"\\ud83d"``) become U+FFFD."""
        try:
            req = json.loads(line)
        except Exception as exc:  # noqa: BLE001 - ValueError, or RecursionError on absurd nesting
            return None, self.error_reply(f"request is not valid JSON: {type(exc).__name__}: {str(exc)[:200]}")
        if not isinstance(req, dict):
            return None, self.error_reply(f"request must be a JSON object, got {type(req).__name__}")
        if (b"\\u" if isinstance(line, bytes) else "\\u") in line:
            from .claude_code import scrub_surrogates

            req = scrub_surrogates(req)
        return req, None

    def serve(self, inp, handle_line: Callable[[bytes], dict]) -> None:
        """Answer each request line of the binary stream ``inp`` with ``handle_line(line)``
        until end of input (or Ctrl-C, or the writer going away)."""
        try:
            while True:
                line = inp.readline(self.max_line + 1)
                if not line:
                    break
                if len(line) > self.max_line and not line.endswith(b"\n"):
                    while True:  # drop the rest of the oversized line
                        more = inp.readline(self.max_line)
                        if not more or more.endswith(b"\n"):
                            break
                    answer = self.error_reply(f"request line longer than {self.max_line} bytes; ignored")
                    rid = leading_id(line)
                    if rid is not None:  # answered under its id, so the sender stops waiting now
                        answer["id"] = rid
                    self.send(answer)
                    continue
                if not line.strip():
                    continue
                self.send(handle_line(line))
        except (KeyboardInterrupt, BrokenPipeError):
            pass
