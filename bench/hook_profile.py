"""Where a hook process's time goes, phase by phase, on SQLite and PostgreSQL.

Usage::

    python bench/hook_profile.py [--n 15] [--claims 3000] [--pg URL] [--json]

Each run is a fresh ``python`` process (nothing imported yet, like a real hook) that
times, with ``time.perf_counter`` and ``time.process_time``:

- ``import``: the hook's own imports (``ledger.harness.runner`` and what it pulls in
  before the store is touched);
- ``driver``: ``import psycopg`` (PostgreSQL only: a SQLite hook never imports it);
- ``connect``: opening the store (for PostgreSQL the TCP connect, authentication and the
  session settings :func:`ledger.store.pg.connect` sends), then ``migrate`` (the
  up-to-date check);
- ``handle``: the event itself (:meth:`Engine.handle`), with every statement sent
  counted and timed: ``statements`` and ``sql ms`` (wall time inside ``execute``);
- ``total``: from the first line of the child to the answer.

Events: a PreToolUse that injects a fact (a new session each run), a PreToolUse of a
shell command (not a file tool: nothing to inject), a PostToolUse that records an
observation, and a Stop. The child's interpreter start-up (``python -c pass``) is not
in ``total``; bench/hook.py measures whole processes.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import dist, import_ledger, machine, pg_schema, table  # noqa: E402

import_ledger()

CHILD = r"""
import json, os, sys, time
t0, c0 = time.perf_counter(), time.process_time()
marks = {}
def mark(name):
    marks[name] = ((time.perf_counter() - t0) * 1000, (time.process_time() - c0) * 1000)
from ledger.harness import runner
from ledger.harness.adapters import with_hook
from ledger.watcher import config as config_mod
from ledger.watcher.engine import Engine
import ledger.watcher.engine as eng
mark("import")
db = os.environ["LEDGER_DB"]
if db.startswith("postgresql://"):
    import psycopg
    from ledger.store import pg
    mark("driver")
    sql = {"n": 0, "ms": 0.0, "each": []}
    orig = pg.PgConnection.execute
    def timed(self, q, params=()):
        s = time.perf_counter()
        try:
            return orig(self, q, params)
        finally:
            ms = (time.perf_counter() - s) * 1000
            sql["n"] += 1; sql["ms"] += ms; sql["each"].append((" ".join(q.split())[:70], round(ms, 2)))
    pg.PgConnection.execute = timed
else:
    import sqlite3
    mark("driver")
    sql = {"n": 0, "ms": 0.0, "each": []}
raw = sys.stdin.buffer.read()
adapter = with_hook("claude-code")
event = adapter.parse_payload(raw, None)
cfg = config_mod.load_logged()
now = time.time_ns() // 1_000_000
conn = eng.open_store(db, runner.HOOK_BUSY_TIMEOUT_MS)
mark("connect")
before = sql["n"], sql["ms"]
from ledger.watcher.spool import spool_dir
engine = Engine(conn, cfg, now, spawn_distill=lambda k, o: None, session_state=runner._session_state, spool=spool_dir(db))
resp = engine.handle(event)
mark("handle")
out = adapter.render_response(event, resp) if resp is not None else ""
mark("total")
print(json.dumps({"marks": marks, "sql_connect": before[0], "sql_handle": sql["n"] - before[0],
                  "sql_ms_handle": sql["ms"] - before[1], "each": sql["each"], "injected": "KNOWN FACTS" in out}))
"""


def events(target: Path, i: int) -> dict[str, bytes]:
    base = {"session_id": f"prof-{i}", "transcript_path": "/tmp/t.jsonl", "cwd": str(target.parent), "permission_mode": "default"}
    return {
        "PreToolUse Read (injects)": {**base, "hook_event_name": "PreToolUse", "tool_name": "Read",
                                      "tool_input": {"file_path": str(target)}, "tool_use_id": f"r{i}"},
        "PreToolUse Bash (nothing to inject)": {**base, "hook_event_name": "PreToolUse", "tool_name": "Bash",
                                                "tool_input": {"command": "ls"}, "tool_use_id": f"b{i}"},
        "PostToolUse Bash (observes)": {**base, "hook_event_name": "PostToolUse", "tool_name": "Bash",
                                        "tool_input": {"command": "xxd model.ckpt | head"},
                                        "tool_response": {"stdout": "00000000: 8a01", "stderr": "", "interrupted": False},
                                        "tool_use_id": f"b{i}", "duration_ms": 9},
        "Stop": {**base, "hook_event_name": "Stop", "stop_hook_active": False},
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=15)
    ap.add_argument("--claims", type=int, default=3000)
    ap.add_argument("--pg", metavar="URL")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--statements", action="store_true", help="also list the statements of one run of each event")
    a = ap.parse_args(argv)
    from hook import build_store

    with contextlib.ExitStack() as stack:
        pg = stack.enter_context(pg_schema(a.pg, "hookprof")) if a.pg else None
        root = Path(tempfile.mkdtemp(prefix="ledger-bench-hookprof-"))
        stack.callback(shutil.rmtree, root, True)
        db, target = build_store(root, a.claims)
        stores = {"SQLite": db}
        if pg:
            build_store(root, a.claims, pg)
            stores["PostgreSQL"] = pg
        env = {k: v for k, v in os.environ.items() if not k.startswith("LEDGER_") and k != "PYTHONDONTWRITEBYTECODE"}
        env["LEDGER_HOME"] = str(root / "home")
        results: dict[tuple[str, str], list[dict]] = {}
        for i in range(-2, a.n):  # two warm-up rounds
            for engine_name, store in stores.items():
                for ev, payload in events(target, i + (50_000 if engine_name == "PostgreSQL" else 0)).items():
                    p = subprocess.run([sys.executable, "-c", CHILD], input=json.dumps(payload).encode(), capture_output=True,
                                       env={**env, "LEDGER_DB": store})
                    if p.returncode != 0:
                        raise SystemExit(p.stderr.decode()[-2000:])
                    r = json.loads(p.stdout)
                    if ev.startswith("PreToolUse Read") and not r["injected"]:
                        raise SystemExit("the PreToolUse Read did not inject: not the real path")
                    if i >= 0:
                        results.setdefault((engine_name, ev), []).append(r)
        rows, report = [], {"machine": machine(), "loadavg": list(os.getloadavg()), "n": a.n, "runs": {}}
        for (engine_name, ev), rs in results.items():
            phases = {}
            for name in ("import", "driver", "connect", "handle", "total"):
                if name == "total":
                    phases[name] = (dist([r["marks"][name][0] for r in rs])["p50"], dist([r["marks"][name][1] for r in rs])["p50"])
                else:
                    # each phase on its own: this mark minus the one before, run by run
                    pw = [r["marks"][name][0] - (r["marks"][k][0] if (k := _prev(name)) else 0) for r in rs]
                    pc = [r["marks"][name][1] - (r["marks"][k][1] if (k := _prev(name)) else 0) for r in rs]
                    phases[name] = (dist(pw)["p50"], dist(pc)["p50"])
            sqlms = dist([r["sql_ms_handle"] for r in rs])["p50"]
            report["runs"][f"{engine_name} / {ev}"] = {"phases": phases, "sqlConnect": rs[0]["sql_connect"],
                                                       "sqlHandle": rs[0]["sql_handle"], "sqlMsHandle": sqlms,
                                                       "statements": rs[0]["each"]}
            rows.append([engine_name, ev] + [f"{phases[k][0]:.1f} / {phases[k][1]:.1f}" for k in
                                             ("import", "driver", "connect", "handle", "total")]
                        + [f"{rs[0]['sql_connect']} + {rs[0]['sql_handle']}", round(sqlms, 1)])
        if a.json:
            print(json.dumps(report, indent=2))
            return 0
        m = report["machine"]
        print(f"hook phases, p50 wall ms / CPU ms, {a.n} runs each, {a.claims:,} claims; {m['nproc']} cores, "
              f"Python {m['python']}, {m['date']}, load {report['loadavg'][0]:.1f}")
        print(table(["store", "event", "import", "driver", "connect+migrate", "handle", "total",
                     "statements (connect + handle)", "sql ms in handle"], rows))
        if a.statements:
            for name, r in report["runs"].items():
                if name.startswith("PostgreSQL"):
                    print(f"\n{name}:")
                    for q, ms in r["statements"]:
                        print(f"  {ms:7.2f}  {q}")
        return 0


def _prev(name: str) -> str | None:
    order = ("import", "driver", "connect", "handle", "total")
    i = order.index(name)
    return order[i - 1] if i else None


if __name__ == "__main__":
    raise SystemExit(main())
