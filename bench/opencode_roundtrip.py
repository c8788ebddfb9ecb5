"""Round-trip latency through the OpenCode session child (``ledger __serve-session opencode``).

Usage::

    python bench/opencode_roundtrip.py [--n 2000] [--warmup 100] [--json]

What one OpenCode tool call costs ledger: the plugin writes one JSON line to the
long-lived child and waits for its answer. Measured, all against a fresh store in a
temporary folder with one fact keyed to the file the calls read:

* ``cold start``: spawn the child until its first answer (paid once per OpenCode run);
* ``ping``: the protocol alone (Python client);
* ``tool.execute.after``: a ``read`` of the file (Python client): session touch,
  injection decision, observation (two small write transactions);
* ``step-finish``: a bus event (Python client);
* ``plugin after-hook (node)``: the real plugin's ``tool.execute.after`` hook called from
  node, as OpenCode calls it: JSON in JavaScript, the pipe, Python, the answer applied.

Target: p50 <= 10 ms for a round trip. Also reported: ``python -c pass`` in the same venv,
i.e. what a per-call ``ledger hook`` process would cost at the very least.
The child is started through ``ledger __serve-session`` when that is wired, else through
``python -m ledger.harness.session_server`` (the same code).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, dist, import_ledger, machine, table  # noqa: E402

import_ledger()

TARGET_P50_MS = 10.0
PLUGIN = ROOT / "src" / "ledger" / "harness" / "opencode" / "ledger.js"


def serve_argv(env: dict) -> list[str]:
    ledger = Path(sys.executable).with_name("ledger")
    if ledger.exists():
        try:
            p = subprocess.run([str(ledger), "__serve-session", "opencode"], input=b'{"id":1,"type":"ping"}\n',
                               capture_output=True, timeout=30, env=env)
            if b'"pong":true' in p.stdout:
                return [str(ledger), "__serve-session", "opencode"]
        except (OSError, subprocess.TimeoutExpired):
            pass
    return [sys.executable, "-m", "ledger.harness.session_server", "opencode"]


class Child:
    def __init__(self, argv: list[str], env: dict):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        self.n = 0

    def call(self, obj: dict) -> dict:
        self.n += 1
        self.proc.stdin.write(json.dumps({"id": self.n, **obj}).encode() + b"\n")
        self.proc.stdin.flush()
        while True:
            msg = json.loads(self.proc.stdout.readline())
            if msg.get("id") == self.n:
                return msg

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def timed(fn, n: int, warmup: int) -> list[float]:
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
    return out


NODE_SCRIPT = r"""
const [pluginPath, argvJson, project, n, warmup] = process.argv.slice(1);
const { default: LedgerPlugin } = await import(new URL("file://" + pluginPath));
const hooks = await LedgerPlugin({ client: { app: { log: async (x) => { console.error(x.body.message); } } }, directory: project, worktree: project },
  { command: JSON.parse(argvJson), timeoutMs: 30000 });
const file = project + "/notes.txt";
const times = [];
let appended = 0;
for (let i = 0; i < Number(warmup) + Number(n); i++) {
  const out = { title: "notes.txt", output: "<content>\n1: the answer is 42\n</content>", metadata: {} };
  const t0 = performance.now();
  await hooks["tool.execute.after"]({ tool: "read", sessionID: "ses_node", callID: "c" + i, args: { filePath: file } }, out);
  const dt = performance.now() - t0;
  if (out.output.includes("FACTS")) appended++;
  if (i >= Number(warmup)) times.push(dt);
}
await hooks.dispose();
console.log(JSON.stringify({ times, appended }));
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000, help="timed round trips per scenario")
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--json", action="store_true", help="machine-readable output")
    args = ap.parse_args(argv)

    from ledger.filekeys import file_key
    from ledger.service import Ledger

    work = Path(tempfile.mkdtemp(prefix="ledger-bench-oc-"))
    try:
        project = work / "proj"
        project.mkdir()
        (project / "notes.txt").write_text("the answer is 42\n")
        db = work / "ledger.db"
        with Ledger.open(db) as led:
            led.remember("notes.txt holds the answer 42", cluster="code", agent="bench", files=[file_key(project / "notes.txt")])
        env = dict(os.environ, LEDGER_HOME=str(work / "home"), LEDGER_DB=str(db), LEDGER_LLM_BACKEND="none")
        cmd = serve_argv(env)

        results: dict[str, list[float]] = {}
        colds = []
        for _ in range(5):
            t0 = time.perf_counter()
            c = Child(cmd, env)
            c.call({"type": "ping"})
            colds.append((time.perf_counter() - t0) * 1000)
            c.close()
        results["cold start (spawn -> first answer)"] = colds
        starts = []
        for _ in range(10):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            starts.append((time.perf_counter() - t0) * 1000)
        results["python -c pass (per-call process floor)"] = starts

        c = Child(cmd, env)
        read = {"event": {"hook": "tool.execute.after", "directory": str(project), "worktree": str(project),
                          "input": {"tool": "read", "sessionID": "ses_py", "callID": "c", "args": {"filePath": str(project / "notes.txt")}},
                          "output": {"title": "notes.txt", "output": "<content>\n1: the answer is 42\n</content>", "metadata": {}}}}
        first = c.call(read)
        assert first["append"] and "KNOWN FACTS" in first["append"], first
        results["ping"] = timed(lambda: c.call({"type": "ping"}), args.n, args.warmup)
        results["tool.execute.after (read)"] = timed(lambda: c.call(read), args.n, args.warmup)
        k = iter(range(10**9))
        def step():
            return c.call({"event": {"hook": "event", "directory": str(project), "event": {"type": "message.part.updated", "properties": {
                    "sessionID": "ses_py", "part": {"id": f"p{next(k)}", "type": "step-finish", "sessionID": "ses_py"}}}}})
        results["step-finish event"] = timed(step, args.n, args.warmup)
        stats = c.call({"type": "stats"})["stats"]
        c.close()

        node = shutil.which("node")
        node_note = None
        if node:
            p = subprocess.run([node, "--input-type=module", "-e", NODE_SCRIPT, str(PLUGIN), json.dumps(cmd), str(project),
                                str(args.n), str(args.warmup)], capture_output=True, text=True, env=env, timeout=600)
            if p.returncode == 0:
                data = json.loads(p.stdout.strip().splitlines()[-1])
                results["plugin after-hook (node -> child -> node)"] = data["times"]
                node_note = (f"facts appended on {data['appended']} of {args.n + args.warmup} node calls "
                             "(gentle once, quiet, then escalated on every later call)")
            else:
                node_note = f"node client failed: {p.stderr.strip()[-300:]}"
        else:
            node_note = "node not found: plugin path not measured"
    finally:
        shutil.rmtree(work, ignore_errors=True)

    report = {
        "machine": machine(),
        "child": cmd,
        "n": args.n,
        "target_p50_ms": TARGET_P50_MS,
        "store_connections_opened": stats["opened"],
        "results": {name: dist(v) for name, v in results.items()},
        "note": node_note,
    }
    ok = all(report["results"][k]["p50"] <= TARGET_P50_MS for k in report["results"]
             if not k.startswith(("cold", "python")))
    report["meets_target"] = ok
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        print()
    else:
        m = report["machine"]
        print(f"OpenCode child round trip — {m['date']}, {m['nproc']} cores, Python {m['python']}, SQLite {m['sqlite']}")
        print(f"child: {' '.join(cmd)}; store connections opened: {stats['opened']}")
        rows = [[name, d["n"], d["p50"], d["p95"], d["min"], d["max"]] for name, d in report["results"].items()]
        print(table(["scenario", "n", "p50 ms", "p95 ms", "min ms", "max ms"], rows))
        if node_note:
            print(node_note)
        print(f"target p50 <= {TARGET_P50_MS} ms per round trip: {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
