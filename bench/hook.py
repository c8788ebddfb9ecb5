"""Wall time of one ``ledger hook <harness> <Event>`` process against ``python -c pass``.

Usage::

    python bench/hook.py [--n 40] [--claims 3000] [--harness claude-code|codex|gemini] [--json] [--importtime] [--pg URL]

``--harness codex`` sends Codex's payloads instead (a ``Bash`` command touching the file
before the tool, its plain-text output after; docs/harness-contracts.md, C2).
``--harness gemini`` measures two ``AfterTool`` events: a ``read_file`` of the fact's
file (Gemini takes no context before a tool runs, so this one call makes the injection
decision and records the observation) and a ``run_shell_command`` (docs/harness-contracts.md, D3).

Every tool call of a hooked Claude Code session starts one hook process before the tool
runs (PreToolUse) and one after (PostToolUse), so this is latency the agent pays on the
critical path. docs/design.md target: p50 <= 1.5x ``python -c pass`` in the same venv.

The store is realistic: ``--claims`` claims (a tenth keyed to files of a project), a few
hundred earlier observations, and one fact keyed to the file the measured calls touch.
Each measured PreToolUse call uses a new session, so every call injects (the gentle
message, an escalation counter, an injection row and a counted retrieval: the slowest
PreToolUse path); PostToolUse records one observation. Runs are interleaved (pass,
PreToolUse, PostToolUse, pass, ...) so machine noise hits all of them alike; figures are
from one run, compare the ratio, not the milliseconds.

``--importtime`` also prints the hook's heaviest imports (``python -X importtime``).

With ``--pg URL`` the same calls also run against a PostgreSQL store in a fresh schema
of that server. There a PostToolUse goes to this machine's spool and a detached drain
process uploads it (docs/watcher.md "The spool"); those processes run during the
measurement, as they would beside an agent, and the run checks afterwards that every
observation arrived. The drain process itself is then measured on its own: ``--n``
observations spooled while the bench holds the drain lock, then one
``ledger __drain --linger 0`` that stores them all (wall and CPU of that process).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import dist, import_ledger, machine, pg_schema, table  # noqa: E402

import_ledger()

TARGET_RATIO = 1.5
WORDS = ("cache schema index parser token model config deploy branch test fixture build worker queue "
         "retry timeout header column encoder decoder layout buffer checkpoint tensor weights shard").split()


def build_store(root: Path, claims: int, db: str | None = None) -> tuple[str, Path]:
    """A store with ``claims`` claims and one fact keyed to ``<project>/model.ckpt`` (at
    ``db``, a file or a PostgreSQL URL; default ``root/ledger.db``)."""
    from ledger.filekeys import file_key
    from ledger.service import Ledger
    from ledger.store import watch as W

    proj = root / "proj"
    (proj / "src").mkdir(parents=True, exist_ok=True)
    target = proj / "model.ckpt"
    if not target.exists():  # a second store (--pg) keys its facts to the same, unchanged files
        target.write_bytes(os.urandom(4096))
    files = []
    for i in range(50):
        f = proj / "src" / f"mod_{i}.py"
        if not f.exists():
            f.write_text(f"X = {i}\n")
        files.append(file_key(f))
    db = db or str(root / "ledger.db")
    rnd = random.Random(7)
    now = int(time.time() * 1000)
    with Ledger.open(db) as led:
        with led.store.atomic():
            for i in range(claims):
                text = f"claim {i}: the {rnd.choice(WORDS)} {rnd.choice(WORDS)} uses {rnd.choice(WORDS)} {rnd.randint(1, 999)}"
                keys = [files[i % len(files)]] if i % 10 == 0 else []
                led.store.insert_claim(text, "code", f"agent-{i % 7}", now - rnd.randint(0, 90) * 86_400_000, files=keys)
        led.remember("model.ckpt is a safetensors file: 8-byte header length, JSON header, then fp16 tensors",
                     cluster="code", agent="alice", files=[file_key(target)])
        conn = led.store._conn
        key = "claude-code:history"
        W.touch_session(conn, key, harness="claude-code", session_id="history", project=str(proj), cwd=str(proj),
                        agent="claude-code", transcript_path=None, now=now)
        for i in range(300):
            W.add_observation(conn, key, tool="Bash", input={"command": f"pytest -k t{i}"}, output="ok " * 50, ok=True,
                              duration_ms=5.0, tool_use_id=f"t{i}", files=[files[i % len(files)].path], now=now)
    return db, target


def payloads(target: Path, i: int, harness: str = "claude-code") -> tuple[bytes, bytes]:
    if harness == "codex":
        base = {"session_id": f"bench-{i}", "turn_id": f"turn-{i}", "transcript_path": None, "cwd": str(target.parent),
                "model": "gpt-5.5", "permission_mode": "default"}
        pre = {**base, "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "xxd model.ckpt | head"},
               "tool_use_id": f"call_{i}"}
        post = {**base, "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": "xxd model.ckpt | head"},
                "tool_response": "00000000: 8a01 0000 0000 0000 7b22 5f5f 6d65 7461\n", "tool_use_id": f"call_{i}"}
        return json.dumps(pre).encode(), json.dumps(post).encode()
    base = {"session_id": f"bench-{i}", "transcript_path": "/tmp/t.jsonl", "cwd": str(target.parent),
            "permission_mode": "default"}
    pre = {**base, "hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {"file_path": str(target)},
           "tool_use_id": f"toolu_{i}"}
    post = {**base, "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": "xxd model.ckpt | head"},
            "tool_response": {"stdout": "00000000: 8a01 0000 0000 0000 7b22 5f5f 6d65 7461", "stderr": "",
                              "interrupted": False, "isImage": False}, "tool_use_id": f"toolu_{i}", "duration_ms": 9}
    return json.dumps(pre).encode(), json.dumps(post).encode()


def gemini_payloads(target: Path, i: int) -> tuple[bytes, bytes]:
    """Gemini CLI 0.61.0 shapes (docs/harness-contracts.md §D3): two AfterTool calls."""
    base = {"session_id": f"bench-{i}", "transcript_path": "/tmp/t.jsonl", "cwd": str(target.parent),
            "timestamp": "2026-12-01T05:22:06.149Z", "hook_event_name": "AfterTool"}
    read = {**base, "tool_name": "read_file", "tool_input": {"file_path": str(target)},
            "tool_response": {"llmContent": "Cannot display content of binary file: model.ckpt", "returnDisplay": "Skipped"}}
    shell = {**base, "tool_name": "run_shell_command", "tool_input": {"command": "xxd model.ckpt | head"},
             "tool_response": {"llmContent": "<untrusted_context>\nOutput: 00000000: 8a01 0000\nProcess Group PGID: 7\n"
                                             "</untrusted_context>", "returnDisplay": "00000000: 8a01 0000"}}
    return json.dumps(read).encode(), json.dumps(shell).encode()


def _cpu_children() -> float:
    try:
        import resource
    except ImportError:  # not Unix
        return 0.0
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (r.ru_utime + r.ru_stime) * 1000


def timed(argv: list[str], stdin: bytes, env: dict) -> tuple[float, float, bytes]:
    """``(wall ms, cpu ms of the child, stdout)``. CPU time (user + system) is far less
    sensitive than wall time to other load on the machine."""
    c0 = _cpu_children()
    t0 = time.perf_counter()
    p = subprocess.run(argv, input=stdin, capture_output=True, env=env)
    ms = (time.perf_counter() - t0) * 1000
    cpu = _cpu_children() - c0
    if p.returncode != 0:
        raise SystemExit(f"{argv} exited {p.returncode}: {p.stderr.decode()[:500]}")
    return ms, cpu, p.stdout


def importtime(ledger: str, stdin: bytes, env: dict, top: int = 15, harness: str = "claude-code",
               event: str = "PreToolUse") -> list[tuple[str, int]]:
    p = subprocess.run([sys.executable, "-X", "importtime", ledger, "hook", harness, event], input=stdin,
                       capture_output=True, env=env)
    rows = []
    for line in p.stderr.decode().splitlines():
        if line.startswith("import time:") and "|" in line:
            parts = [x.strip() for x in line[len("import time:"):].split("|")]
            if parts[0].isdigit():
                rows.append((parts[2], int(parts[1])))
    return sorted(rows, key=lambda r: -r[1])[:top]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=40, help="measured runs of each (interleaved)")
    ap.add_argument("--claims", type=int, default=3000)
    ap.add_argument("--harness", choices=("claude-code", "codex", "gemini"), default="claude-code")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--importtime", action="store_true", help="also list the hook's heaviest imports")
    ap.add_argument("--pg", metavar="URL", help="also measure against a PostgreSQL store on this server (docs/postgres.md)")
    a = ap.parse_args(argv)
    with contextlib.ExitStack() as stack:
        pg = stack.enter_context(pg_schema(a.pg, "hookbench")) if a.pg else None
        return _run(a, pg)


def _run(a, pg: str | None) -> int:
    ledger = str(Path(sys.executable).with_name("ledger"))
    if not Path(ledger).exists():
        raise SystemExit(f"no ledger console script next to {sys.executable}: install the package (pip install -e .)")
    root = Path(tempfile.mkdtemp(prefix="ledger-bench-hook-"))
    try:
        db, target = build_store(root, a.claims)
        # Like a real install: byte-code on disk and allowed (a developer shell may set
        # PYTHONDONTWRITEBYTECODE, which would recompile every changed module per call).
        env = {k: v for k, v in os.environ.items() if not k.startswith("LEDGER_") and k != "PYTHONDONTWRITEBYTECODE"}
        env.update({"LEDGER_DB": str(db), "LEDGER_HOME": str(root / "home")})
        env_pg = None
        if pg:
            build_store(root, a.claims, pg)
            env_pg = {**env, "LEDGER_DB": pg}
        import ledger as ledger_pkg

        subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(ledger_pkg.__file__).parent)], env=env,
                       capture_output=True)
        py_pass = [sys.executable, "-c", "pass"]
        hook = lambda ev: [ledger, "hook", a.harness, ev]  # noqa: E731
        make = gemini_payloads if a.harness == "gemini" else (lambda t, i: payloads(t, i, a.harness))
        events = ("AfterTool", "AfterTool") if a.harness == "gemini" else ("PreToolUse", "PostToolUse")
        for i in range(3):  # warm-up: page cache, .pyc files
            pre, post = make(target, -1 - i)
            timed(py_pass, b"", env)
            timed(hook(events[0]), pre, env)
            timed(hook(events[1]), post, env)
        names = (("python -c pass", "hook AfterTool read_file (injects + observes)", "hook AfterTool shell (observes)")
                 if a.harness == "gemini" else ("python -c pass", "hook PreToolUse (injects)", "hook PostToolUse (observes)"))
        if env_pg:
            names = (*names, f"{names[1]}, PostgreSQL", f"{names[2]}, PostgreSQL")
        res: dict[str, list[float]] = {n: [] for n in names}
        cpu: dict[str, list[float]] = {n: [] for n in names}
        injected = 0
        for i in range(a.n):
            pre, post = make(target, i)
            runs = [(py_pass, b"", env), (hook(events[0]), pre, env), (hook(events[1]), post, env)]
            if env_pg:
                pre2, post2 = make(target, 50_000 + i)
                runs += [(hook(events[0]), pre2, env_pg), (hook(events[1]), post2, env_pg)]
            for name, (argv, stdin, e) in zip(names, runs):
                ms, c, out = timed(argv, stdin, e)
                res[name].append(ms)
                cpu[name].append(c)
                injected += b"KNOWN FACTS" in out
        if injected != a.n * (2 if env_pg else 1):  # only the PreToolUse calls print facts
            raise SystemExit(f"only {injected} of {a.n} PreToolUse calls injected the fact: the benchmark is not measuring the real path")
        drain_row = None
        if env_pg:
            drain_row = _check_and_drain(a, pg, target, make, hook, events, env_pg)
        log = root / "home" / "hook.log"
        if log.exists():
            raise SystemExit(f"the hook logged errors: {log.read_text()[:1000]}")
        base, cbase = dist(res["python -c pass"]), dist(cpu["python -c pass"])
        report = {"machine": machine(), "loadavg": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
                  "claims": a.claims, "n": a.n, "harness": a.harness, "targetRatio": TARGET_RATIO, "runs": {}}
        rows = []
        for name, values in res.items():
            d, c = dist(values), dist(cpu[name])
            ratio = d["p50"] / base["p50"]
            cratio = c["p50"] / cbase["p50"] if cbase["p50"] else float("nan")
            report["runs"][name] = {**d, "ratioP50": round(ratio, 2), "ratioP95": round(d["p95"] / base["p95"], 2),
                                    "cpu": c, "cpuRatioP50": round(cratio, 2)}
            rows.append([name, d["p50"], d["p95"], d["min"], round(ratio, 2), c["p50"], round(cratio, 2)])
        if drain_row is not None:
            ms, c, n = drain_row
            report["drain"] = {"observations": n, "wallMs": round(ms, 1), "cpuMs": round(c, 1)}
            rows.append([f"drain process, {n} observations, PostgreSQL", round(ms, 1), "", "", "", round(c, 1), ""])
        worst = max(r["ratioP50"] for k, r in report["runs"].items() if k.startswith("hook") and "PostgreSQL" not in k)
        report["meetsTarget"] = worst <= TARGET_RATIO
        if a.importtime:
            report["imports"] = importtime(ledger, make(target, 10_000)[0], env, harness=a.harness, event=events[0])
        if a.json:
            print(json.dumps(report, indent=2))
        else:
            m = report["machine"]
            load = report["loadavg"]
            print(f"ledger hook {a.harness} wall time — {a.n} interleaved runs each, {a.claims:,} claims; "
                  f"{m['nproc']} cores, Python {m['python']}, SQLite {m['sqlite']}, {m['date']}"
                  + (f", load {load[0]:.1f}" if load else ""))
            print(table(["process", "p50 ms", "p95 ms", "min ms", "x pass (p50)", "cpu p50 ms", "cpu x pass"], rows))
            print(f"target: p50 <= {TARGET_RATIO}x python -c pass -> {'met' if report['meetsTarget'] else 'MISSED'} "
                  f"(worst {worst:.2f}x)")
            if a.importtime:
                print("\nheaviest imports of the PreToolUse hook (cumulative us, python -X importtime):")
                for name, us in report["imports"]:
                    print(f"  {us:>8}  {name}")
        return 0
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _check_and_drain(a, pg: str, target: Path, make, hook, events, env_pg: dict) -> tuple[float, float, int]:
    """After the measured calls on PostgreSQL: wait for the drain processes, check that
    every observation arrived once, then measure one drain process storing ``a.n``
    spooled observations. Returns ``(wall ms, cpu ms, observations)``."""
    import psycopg

    from ledger.watcher import spool as S

    old_home = os.environ.get("LEDGER_HOME")
    os.environ["LEDGER_HOME"] = env_pg["LEDGER_HOME"]  # spool_dir() is under $LEDGER_HOME
    try:
        folder = S.spool_dir(pg)
    finally:
        if old_home is None:
            os.environ.pop("LEDGER_HOME", None)
        else:
            os.environ["LEDGER_HOME"] = old_home
    per_call = 2 if a.harness == "gemini" else 1

    def count() -> int:
        with psycopg.connect(pg) as c:
            return c.execute("SELECT count(*) FROM observations WHERE session LIKE %s", ("%:bench-%",)).fetchone()[0]

    def settle(expected: int) -> None:
        deadline = time.monotonic() + 300
        while S.has_work(folder) or S.drainer_running(folder):
            if time.monotonic() > deadline:
                raise SystemExit(f"the spool {folder} was not drained in 300 s")
            time.sleep(0.05)
        got = count()
        if got != expected:
            raise SystemExit(f"{got} observations in the PostgreSQL store, expected {expected}: the spool lost or doubled some")

    settle(a.n * per_call)
    held = S.hold_drainer(folder)  # the hooks below see a drain process running and start none
    try:
        for i in range(a.n):
            timed(hook(events[1]), make(target, 90_000 + i)[1], env_pg)
    finally:
        os.close(held)
    ms, c, _ = timed([sys.executable, "-m", "ledger", "__drain", "--linger", "0"], b"", env_pg)
    settle(a.n * per_call + a.n)
    return ms, c, a.n


if __name__ == "__main__":
    raise SystemExit(main())
