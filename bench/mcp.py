"""`ledger mcp`: start-up (spawn to the ``initialize`` answer) and a tool call's round trip.

Usage::

    python bench/mcp.py [--db STORE] [--memories 2000] [--starts 20] [--calls 200] [--json]

An MCP client spawns ``ledger mcp`` when it starts (and again whenever the server is
restarted), then waits for the answer to ``initialize`` before it lists tools; every tool
call after that is one JSON-RPC request and answer over the pipes. The bench speaks the
protocol itself (JSON lines on stdin/stdout, stdlib only), so the figures are the
server's, not a client library's.

Start-up: ``--starts`` rounds, interleaved so machine noise hits all alike, of

* ``python -c pass`` in the same venv (the floor, ratio 1.00),
* ``python -c "import mcp.server.mcpserver"`` (the SDK's import alone),
* ``ledger --version``,
* ``ledger mcp``: spawn, send ``initialize``, read its answer (then close stdin).

Round trip: one server, ``--calls`` calls of each tool in turn (``recall`` counted,
``search``, ``show``, ``remember`` of a new claim, ``conflicts``), the time from writing
the request to reading its answer. Wall times on a shared machine mostly measure waiting
for a core, so start-up also gives the CPU time (user + system) of each child process,
from ``getrusage``. The store is a private copy of ``--db``, or a new one
with ``--memories`` generated claims.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import dist, import_ledger, machine, table  # noqa: E402

import_ledger()

LEDGER = str(Path(sys.executable).with_name("ledger"))
WORDS = ("deploy staging vpn token invoice acme python ci runner cache build docker image schema migration "
         "billing stripe key region bucket backup cron nightly review owner dana approves budget limit").split()
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}


def make_store(path: Path, n: int, rng: random.Random) -> list[str]:
    """A store with ``n`` generated claims across a few clusters; returns their ids."""
    from ledger.service import Ledger

    ids = []
    with Ledger.open(path) as led:
        for i in range(n):
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14))) + f" (item {i})"
            ids.append(led.remember(text, cluster=rng.choice(("code", "proc", "projects", "money")), agent="bench").memory.id)
    return ids


def _child_cpu_ms() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (r.ru_utime + r.ru_stime) * 1000


def timed(argv: list[str], env: dict) -> tuple[float, float]:
    """Run ``argv`` to the end: (wall ms, CPU ms of the child)."""
    c0, t0 = _child_cpu_ms(), time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True)
    return (time.perf_counter() - t0) * 1000, _child_cpu_ms() - c0


def start_mcp(env: dict) -> tuple[float, float]:
    """Spawn ``ledger mcp``, send initialize, read the answer: (wall ms to the answer,
    CPU ms of the whole process, which ends right after: stdin is closed)."""
    c0, t0 = _child_cpu_ms(), time.perf_counter()
    p = subprocess.Popen([LEDGER, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         env=env)
    p.stdin.write((json.dumps(INIT) + "\n").encode())
    p.stdin.flush()
    line = p.stdout.readline()
    ms = (time.perf_counter() - t0) * 1000
    assert json.loads(line)["id"] == 0, line
    p.stdin.close()
    p.wait(timeout=30)
    return ms, _child_cpu_ms() - c0


class Session:
    """One ``ledger mcp`` process spoken to in JSON lines."""

    def __init__(self, env: dict):
        self.p = subprocess.Popen([LEDGER, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env=env)
        self.n = 0
        self.request("initialize", INIT["params"])
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg: dict) -> None:
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        self.n += 1
        self.send({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params})
        while True:
            msg = json.loads(self.p.stdout.readline())
            if msg.get("id") == self.n:
                return msg

    def call(self, tool: str, args: dict) -> tuple[float, dict]:
        t0 = time.perf_counter()
        r = self.request("tools/call", {"name": tool, "arguments": args})
        ms = (time.perf_counter() - t0) * 1000
        assert "result" in r and not r["result"].get("isError"), r
        return ms, r["result"]

    def close(self) -> None:
        self.p.stdin.close()
        self.p.wait(timeout=30)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", help="Copy this store (default: a new one with --memories claims).")
    ap.add_argument("--memories", type=int, default=2000)
    ap.add_argument("--starts", type=int, default=20)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    tmp = Path(tempfile.mkdtemp(prefix="ledger-bench-mcp-"))
    try:
        store = tmp / "ledger.db"
        if a.db:
            shutil.copy(a.db, store)
            from ledger.service import Ledger

            with Ledger.open(store) as led:
                ids = [m.id for m in led.search("", limit=500).hits]
        else:
            ids = make_store(store, a.memories, rng)
        env = {**os.environ, "LEDGER_DB": str(store), "LEDGER_HOME": str(tmp / "home")}
        env.pop("LEDGER_AGENT", None)

        names = ("python -c pass", "import mcp.server.mcpserver", "ledger --version", "ledger mcp")
        wall: dict[str, list[float]] = {k: [] for k in names}
        cpu: dict[str, list[float]] = {k: [] for k in names}
        start_mcp(env)  # warm the page cache once
        for _ in range(a.starts):
            for k, fn in (("python -c pass", lambda: timed([sys.executable, "-c", "pass"], env)),
                          ("import mcp.server.mcpserver",
                           lambda: timed([sys.executable, "-c", "import mcp.server.mcpserver"], env)),
                          ("ledger --version", lambda: timed([LEDGER, "--version"], env)),
                          ("ledger mcp", lambda: start_mcp(env))):
                w, c = fn()
                wall[k].append(w)
                cpu[k].append(c)
        floor, cfloor = dist(wall["python -c pass"])["p50"], dist(cpu["python -c pass"])["p50"]
        starts = {k: {**dist(wall[k]), "ratio": round(dist(wall[k])["p50"] / floor, 2),
                      "cpu": dist(cpu[k]), "cpu_ratio": round(dist(cpu[k])["p50"] / cfloor, 2)} for k in names}

        s = Session(env)
        calls: dict[str, list[float]] = {t: [] for t in ("recall", "search", "show", "remember", "conflicts")}
        for i in range(a.calls):
            q = " ".join(rng.sample(WORDS, 2))
            calls["recall"].append(s.call("recall", {"query": q})[0])
            calls["search"].append(s.call("search", {"query": q})[0])
            calls["show"].append(s.call("show", {"id": rng.choice(ids)})[0])
            text = " ".join(rng.choice(WORDS) for _ in range(10)) + f" (bench {i})"
            calls["remember"].append(s.call("remember", {"claim": text, "cluster": "code"})[0])
            calls["conflicts"].append(s.call("conflicts", {})[0])
        s.close()
        rtt = {k: dist(v) for k, v in calls.items()}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    out = {"machine": machine(), "memories": len(ids) if not a.db else a.db, "startup_ms": starts, "call_ms": rtt}
    if a.json:
        print(json.dumps(out, indent=2))
        return
    print(json.dumps(out["machine"]))
    print(f"\nStart-up, {a.starts} interleaved rounds (ms; ratio = p50 / python -c pass p50; CPU = user + system)")
    print(table(["process", "wall p50", "wall p95", "wall min", "ratio", "CPU p50", "CPU ratio"],
                [[k, v["p50"], v["p95"], v["min"], v["ratio"], v["cpu"]["p50"], v["cpu_ratio"]]
                 for k, v in starts.items()]))
    print(f"\nTool call round trip, {a.calls} calls each, one server, store of {out['memories']} memories (ms)")
    print(table(["tool", "p50", "p95", "min", "max"], [[k, v["p50"], v["p95"], v["min"], v["max"]] for k, v in rtt.items()]))


if __name__ == "__main__":
    main()
