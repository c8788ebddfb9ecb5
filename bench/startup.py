"""Wall time of the agent verbs as separate processes, against ``python -c pass``.

Usage::

    python bench/startup.py --db STORE [--db STORE2 ...] [--n 30] [--json] [--importtime]

An agent calls ``ledger recall`` (and ``remember``, ``search``, ``show``) as a fresh
process for every question, so start-up is latency it pays each time. For each store
given (``bench/scale.py`` builds them; ``$LEDGER_BENCH_OUT`` says where), the bench
runs, interleaved so machine noise hits all of them alike, ``--n`` rounds of:

* ``python -c pass`` in the same venv (the floor, ratio 1.00),
* ``python -c "import re, json, sqlite3"`` (the floor of a ``--json`` call that
  searches; the default text output imports neither ``re`` nor ``json`` since the
  patterns are built from stored matcher code, ``ledger.regex``),
* ``python -c "import ledger.service"`` (the facade with the store and the models:
  what every verb imports before it opens the store),
* ``python -c "import click"`` (what click alone would cost on this path),
* ``python -c "import <the verbs' modules>"`` (:data:`VERB_MODULES`: every ledger module
  ``remember`` imports, a superset of the other verbs'; their start-up without the
  store's work, which at 100k varies with the query more than the imports do),
* ``ledger --version``,
* ``ledger recall <query> --db STORE`` (counted, on a private copy of the store),
* ``ledger search <query> --db STORE``,
* ``ledger show <id> --db STORE``,
* ``ledger remember <new text> --cluster <c> --db STORE`` (proposer included);
* with ``--baseline-venv``, the same ledger calls through another checkout's venv, on
  a copy of the store of its own.

Queries are drawn like ``bench/scale.py``'s (words of stored memories, questions, random
words); each round uses a new one. It prints p50 / p95 / min per process and the p50
ratio to ``python -c pass`` measured in the same run, for wall time and for CPU time
(user + system of the child, from ``getrusage``): on a machine shared with other jobs
the wall time mostly measures waiting for a core, the CPU time does not. Targets (issue 14): ``recall`` at
10k <= 3x, at 100k <= 4x; ``remember`` at 100k <= 3x.

``--importtime`` also prints the heaviest imports of one ``ledger recall`` process.
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


VERB_MODULES = ("import ledger.cli.fast, ledger.cli.render, ledger.service, ledger.redact, ledger.store.conflicts,"
                " ledger.conflicts.duplicates")


def _ledger_cmd() -> list[str]:
    exe = Path(sys.executable).with_name("ledger")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "ledger.cli"]


def _sample(db: Path, k: int, seed: int) -> tuple[list[str], list[str], list[str]]:
    """Texts, ids and clusters of ``k`` random live memories of ``db``, a private copy.
    It is opened for writing so that schema changes made since the cached store was built
    are applied here, as on a user's store at its first use, and not left to the first
    timed command (a read-only open of an older store is refused)."""
    from ledger.service import Ledger

    with Ledger.open(db) as led:
        ids = list(led.store.iter_ids())
        rng = random.Random(seed)
        ms = led.store.get_many(rng.sample(ids, min(k, len(ids))), led.clock())
    return [m.text for m in ms], [m.id for m in ms], [m.cluster_id for m in ms]


def _query(rng: random.Random, texts: list[str]) -> list[str]:
    words = [w.strip(".,;:!?()[]\"'") for w in rng.choice(texts).split()]
    words = [w for w in words if len(w) > 2] or ["deploy"]
    x = rng.random()
    if x < 0.6:
        return rng.sample(words, min(len(words), rng.choice((2, 3, 4))))
    if x < 0.85:
        return ["how", "do", "we", rng.choice(words), "the", rng.choice(words)]
    return [rng.choice(words)]


def measure(db: Path, n: int, seed: int = 11, baseline: Path | None = None, baseline_db: Path | None = None) -> dict:
    """Interleaved rounds on a private copy of ``db``; timings in ms."""
    tmp = Path(tempfile.mkdtemp(prefix="ledger-startup-"))
    try:
        work = tmp / "store.db"
        shutil.copyfile(db, work)
        # The other checkout gets a copy of its own (its schema may differ: --baseline-db),
        # so both sides run the same commands on the same data: on one shared copy the
        # baseline's remember found the claim just stored and only counted a duplicate.
        old_work = tmp / "before.db"
        if baseline:
            shutil.copyfile(baseline_db or db, old_work)
        texts, ids, clusters = _sample(work, 500, seed)
        rng = random.Random(seed)
        led = _ledger_cmd()
        env = dict(os.environ, LEDGER_AGENT="bench", NO_COLOR="1")
        keys = ["python -c pass", "import re, json, sqlite3", "import ledger.service", "import click", "import verb modules",
                "ledger --version", "recall", "search", "show", "remember"]
        old = [str(baseline / "bin" / "ledger")] if baseline else None
        if old:
            keys += ["before: import verb modules", "before: ledger --version", "before: recall", "before: search",
                     "before: show", "before: remember"]
        runs: dict[str, list[float]] = {k: [] for k in keys}
        cpu: dict[str, list[float]] = {k: [] for k in keys}

        def timed(key: str, cmd: list[str]) -> None:
            c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            r = subprocess.run(cmd, capture_output=True, env=env)
            runs[key].append((time.perf_counter() - t0) * 1000)
            c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[key].append((c1.ru_utime - c0.ru_utime + c1.ru_stime - c0.ru_stime) * 1000)
            if r.returncode != 0:
                raise RuntimeError(f"{' '.join(cmd[:3])} failed: {r.stderr.decode()[:400]}")

        # One untimed round first: the page cache and the .pyc files are then warm for all.
        # Bytecode is written in this round even if $PYTHONDONTWRITEBYTECODE is set here
        # (an installed ledger has its .pyc files; without them every run would compile
        # the modules changed since the last write, and the bench would measure that).
        warm_env = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
        warm = [(led, work)] + ([(old, old_work)] if old else [])
        for cmd, store in warm:
            for args in (["recall", "warm", "up"], ["search", "warm"], ["show", ids[0]],
                         ["remember", "Warm-up claim of the start-up bench", "--cluster", clusters[0]]):
                subprocess.run([*cmd, *args, "--db", str(store)], capture_output=True, env=warm_env)
        for i in range(n):
            q = _query(rng, texts)
            timed("python -c pass", [sys.executable, "-c", "pass"])
            timed("import re, json, sqlite3", [sys.executable, "-c", "import re, json, sqlite3"])
            timed("import ledger.service", [sys.executable, "-c", "import ledger.service"])
            timed("import click", [sys.executable, "-c", "import click"])
            timed("import verb modules", [sys.executable, "-c", VERB_MODULES])
            timed("ledger --version", [*led, "--version"])
            timed("recall", [*led, "recall", *q, "--db", str(work)])
            timed("search", [*led, "search", *q, "--db", str(work)])
            timed("show", [*led, "show", ids[i % len(ids)], "--db", str(work)])
            claim = " ".join(rng.sample(texts, 1)[0].split()[:12]) + f" (bench {i})"
            timed("remember", [*led, "remember", claim, "--cluster", clusters[i % len(clusters)], "--db", str(work)])
            if old:  # the same calls through the other checkout, on its own copy of the store
                timed("before: import verb modules", [str(baseline / "bin" / "python"), "-c", VERB_MODULES])
                timed("before: ledger --version", [*old, "--version"])
                timed("before: recall", [*old, "recall", *q, "--db", str(old_work)])
                timed("before: search", [*old, "search", *q, "--db", str(old_work)])
                timed("before: show", [*old, "show", ids[i % len(ids)], "--db", str(old_work)])
                timed("before: remember", [*old, "remember", claim, "--cluster", clusters[i % len(clusters)],
                                           "--db", str(old_work)])
        base = dist(runs["python -c pass"])["p50"]
        cbase = dist(cpu["python -c pass"])["p50"]
        out = {k: dict(dist(v), ratio=round(dist(v)["p50"] / base, 2), cpu=dist(cpu[k]),
                       cpu_ratio=round(dist(cpu[k])["p50"] / cbase, 2)) for k, v in runs.items()}
        with_memories = _count(work)
        return {"db": str(db), "memories": with_memories, "rounds": n, "runs": out}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _count(db: Path) -> int:
    from ledger.service import Ledger

    with Ledger.open(db, readonly=True) as led:
        return led.store.counts(0)["memories"]


def importtime(db: Path) -> list[tuple[int, int, str]]:
    """(self µs, cumulative µs, module) of one ``ledger recall`` process, heaviest first."""
    cmd = [sys.executable, "-X", "importtime", *(_ledger_cmd()[-1:] if _ledger_cmd()[0] != sys.executable else ["-m", "ledger.cli"]),
           "recall", "deploy", "--db", str(db)]
    r = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, NO_COLOR="1"))
    rows = []
    for line in r.stderr.splitlines():
        if line.startswith("import time:") and "|" in line and "self [us]" not in line:
            a, b, name = line[len("import time:"):].split("|")
            rows.append((int(a), int(b), name.rstrip()))
    return sorted(rows, key=lambda x: -x[1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", type=Path, action="append", required=True, help="a store to run against (repeatable)")
    ap.add_argument("--n", type=int, default=30, help="interleaved rounds per store")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--importtime", action="store_true")
    ap.add_argument("--baseline-venv", type=Path, help="another checkout's venv (e.g. main's) timed in the same rounds")
    ap.add_argument("--baseline-db", type=Path, action="append", help="the store for --baseline-venv, one per --db (default: the same)")
    a = ap.parse_args(argv)
    bdbs = a.baseline_db or [None] * len(a.db)
    results = [measure(db, a.n, baseline=a.baseline_venv, baseline_db=b) for db, b in zip(a.db, bdbs)]
    if a.json:
        print(json.dumps({"machine": machine(), "results": results}, indent=2))
        return 0
    m = machine()
    print(f"{m['date']} · {m['nproc']} cores · Python {m['python']} · SQLite {m['sqlite']} · load {os.getloadavg()[0]:.1f}"
          f" (1 min) at the end, {os.getloadavg()[2]:.1f} (15 min)")
    for res in results:
        print(f"\n{res['memories']:,} memories ({Path(res['db']).name}), {res['rounds']} interleaved rounds, ms")
        rows = [[k, v["p50"], v["p95"], v["min"], f"{v['ratio']:.2f}x", v["cpu"]["p50"], f"{v['cpu_ratio']:.2f}x"]
                for k, v in res["runs"].items()]
        print(table(["process", "wall p50", "wall p95", "wall min", "wall p50 / pass", "CPU p50", "CPU p50 / pass"], rows,
                    markdown=True))
    if a.importtime:
        print("\nheaviest imports of `ledger recall` (cumulative µs, self µs):")
        for s, c, name in importtime(a.db[0])[:25]:
            print(f"  {c:>7} {s:>7}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
