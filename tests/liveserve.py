"""A real ``ledger serve`` child process for tests that go through HTTP as a browser
would: started with ``--port 0 --json`` (one JSON line once it listens), stopped on exit.
``prefix`` runs it under another command (tests/readonly.py's read-only mount)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from conftest import LEDGER_BIN


class LiveServe:
    """``with LiveServe(db) as srv: httpx.get(srv.url + "api/stats")``. ``srv.url`` ends
    in ``/``; ``srv.banner`` is the JSON line ``serve --json`` printed. The constructor
    raises AssertionError with the server's stderr when it does not start. ``db=None``:
    no ``--db``, the store the environment names (``env``)."""

    def __init__(self, db: Path | str | None, *args: str, prefix: tuple[str, ...] = (), env: dict | None = None):
        store = ["--db", str(db)] if db is not None else []
        self.proc = subprocess.Popen([*prefix, LEDGER_BIN, "serve", *store, "--port", "0", "--json", *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env={**os.environ, "NO_COLOR": "1", **(env or {})})
        first = self.proc.stdout.readline()
        if not first.startswith("{"):
            self.proc.kill()
            _, err = self.proc.communicate(timeout=10)
            raise AssertionError(f"ledger serve did not start: {first}{err}")
        self.banner = json.loads(first)
        self.url = self.banner["url"]
        self.origin = {"origin": self.url.rstrip("/")}

    def __enter__(self) -> "LiveServe":
        return self

    def __exit__(self, *exc) -> None:
        self.proc.terminate()
        try:
            self.proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover - a hung server
            self.proc.kill()
            self.proc.communicate()
