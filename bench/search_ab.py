"""In-process search, before and after a change, side by side in one run.

Usage::

    LEDGER_BENCH_OUT=DIR python bench/search_ab.py --base REV [--paths P ...] [--sizes 10000 100000]
                                                   [--queries 200] [--common 50] [--json]

Two worker processes, one importing ``ledger`` from ``git archive REV`` (before) and one
from this checkout (after); with ``--paths``, "before" is this checkout with only those
files taken from REV (e.g. ``src/ledger/store/search.py``: the old search code on the
current schema, so a store migrated by the new code still opens), each open their own copy of the cached ``bench/scale.py``
store of each size (the cached store is never written: opening a copy applies that
version's migrations to the copy only). The same queries go to both, alternating which
runs first, so both see the same machine noise. Per query: wall and CPU time of
``Ledger.search(q, limit=10)`` in the worker, the ranking path (``Store.search_path``),
and whether page (ids, and scores within 1e-12) and ``total`` are identical.

Queries: the generated queries of ``bench/scale.py`` (same seeds as ``measure_recall``:
2-4 words of a memory, questions, free words) and the common-term queries of
``measure_common_terms`` (one of the 40 most frequent words plus one or two words of a
memory).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def worker(src: str, db: str) -> None:
    """Serve queries from stdin (one JSON string a line) with the ``ledger`` in ``src``."""
    sys.path.insert(0, src)
    sys.path.insert(1, str(HERE))
    import scale as S

    from ledger.service import Ledger

    assert Path(sys.modules["ledger"].__file__).is_relative_to(src), sys.modules["ledger"].__file__
    led = Ledger.open(db, clock=S.Clock(S.T0 + S.SPAN_MS + 86_400_000))
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        q = json.loads(line)
        c0, t0 = time.process_time(), time.perf_counter()
        res = led.search(q, limit=10)
        wall, cpu = (time.perf_counter() - t0) * 1000, (time.process_time() - c0) * 1000
        print(json.dumps({"wall": wall, "cpu": cpu, "total": res.total, "path": led.store.search_path,
                          "page": [(m.id, m.score) for m in res.hits]}), flush=True)


def _same(a: dict, b: dict) -> bool:
    """Whether two answers are the same: equal totals, the same ids in the same order,
    scores within 1e-12 (two ways of writing one formula in SQL may differ in the last
    bit of a float; a real change moves a score by far more)."""
    return a["total"] == b["total"] and [i for i, _ in a["page"]] == [i for i, _ in b["page"]] and all(
        abs(x - y) <= 1e-12 for (_, x), (_, y) in zip(a["page"], b["page"]))


def queries(db: Path, count: int, common: int) -> tuple[list[str], list[str]]:
    """The generated and common-term queries of bench/scale.py for the store ``db``."""
    sys.path.insert(0, str(HERE))
    import scale as S

    from ledger.service import Ledger

    with Ledger.open(db, clock=S.Clock(S.T0 + S.SPAN_MS + 86_400_000)) as led:
        rng = random.Random(11)
        gen = S.TextGen(seed=99)
        texts = S.sample_texts(led, rng)
        qs = [gen.query(texts) for _ in range(count)]
        rng = random.Random(13)
        words = S.common_words(led)
        cq = []
        for _ in range(common):
            ws = [w.strip(".,;:?!").lower() for w in rng.choice(texts).split()]
            content = [w for w in ws if len(w) > 2 and w.isalpha() and w not in S.FUNCTION_WORDS and w not in words]
            picked = rng.sample(content, min(len(content), rng.choice((1, 2))))
            cq.append(" ".join([rng.choice(words), *picked]))
    return qs, cq


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(sys.argv[2], sys.argv[3])
        return 0
    sys.path.insert(0, str(HERE))
    from _common import ROOT, dist, machine, table

    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True, help="git revision of the 'before' code")
    ap.add_argument("--paths", nargs="+", help="only these files from --base, the rest from this checkout")
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--common", type=int, default=50)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    import scale as S

    tmp = Path(tempfile.mkdtemp(prefix="ledger-search-ab-"))
    procs = []
    out: dict = {"machine": machine(), "base": args.base, "paths": args.paths,
                 "head": subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                                        capture_output=True, text=True).stdout.strip(), "sizes": {}}
    try:
        if args.paths:
            shutil.copytree(ROOT / "src", tmp / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
            for path in args.paths:
                old = subprocess.run(["git", "-C", str(ROOT), "show", f"{args.base}:{path}"], check=True, capture_output=True).stdout
                (tmp / path).write_bytes(old)
        else:
            archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.base, "src"], check=True, capture_output=True).stdout
            subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive, check=True)
        sides = {"before": str(tmp / "src"), "after": str(ROOT / "src")}
        for n in args.sizes:
            cached = S.store_path("mixed", n)
            if not cached.exists():
                print(f"no cached store {cached}; build it with bench/scale.py --sizes {n}", file=sys.stderr)
                return 2
            work = {}
            for side in sides:
                work[side] = tmp / f"{side}-{n}.db"
                shutil.copyfile(cached, work[side])
            gen_q, common_q = queries(work["after"], args.queries, args.common)
            procs = {side: subprocess.Popen([sys.executable, __file__, "--worker", src, str(work[side])],
                                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
                     for side, src in sides.items()}
            for p in procs.values():
                json.loads(p.stdout.readline())

            def ask(side: str, q: str) -> dict:
                p = procs[side]
                p.stdin.write(json.dumps(q) + "\n")
                p.stdin.flush()
                return json.loads(p.stdout.readline())

            for q in gen_q[:5]:  # warm both page caches
                for side in sides:
                    ask(side, q)
            entry = {}
            load0 = os.getloadavg()
            for label, qs in (("generated", gen_q), ("common-term", common_q)):
                res: dict = {side: [] for side in sides}
                same = 0
                for i, q in enumerate(qs):
                    order = list(sides) if i % 2 else list(sides)[::-1]
                    got = {side: ask(side, q) for side in order}
                    for side in sides:
                        res[side].append(got[side])
                    a, b = got["before"], got["after"]
                    same += _same(a, b)
                e = {"queries": len(qs), "identical": f"{same}/{len(qs)}",
                     "matches": dist([r["total"] for r in res["after"]])}
                for side in sides:
                    e[side] = {"wall_ms": dist([r["wall"] for r in res[side]]), "cpu_ms": dist([r["cpu"] for r in res[side]]),
                               "paths": {p: sum(r["path"] == p for r in res[side]) for p in {r["path"] for r in res[side]}}}
                entry[label] = e
            entry["load"] = [round(x, 2) for x in (*load0, *os.getloadavg())]
            for p in procs.values():
                p.stdin.close()
                p.wait()
            procs = {}
            out["sizes"][n] = entry
            for side in sides:
                os.unlink(work[side])
    finally:
        for p in (procs.values() if isinstance(procs, dict) else []):
            p.kill()
        shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    m = out["machine"]
    what = f"{args.base}: {' '.join(args.paths)}" if args.paths else args.base
    print(f"search before ({what}) / after ({out['head']} + working tree) · {m['date']} · {m['nproc']} cores, SQLite {m['sqlite']}")
    rows = []
    for n, entry in out["sizes"].items():
        for label in ("generated", "common-term"):
            e = entry[label]
            b, a = e["before"], e["after"]
            rows.append([f"{n:,}", label, e["queries"], f"{e['matches']['p50']:.0f}",
                         f"{b['wall_ms']['p50']:.2f} ({b['cpu_ms']['p50']:.2f})", f"{a['wall_ms']['p50']:.2f} ({a['cpu_ms']['p50']:.2f})",
                         f"{b['wall_ms']['p95']:.1f} ({b['cpu_ms']['p95']:.1f})", f"{a['wall_ms']['p95']:.1f} ({a['cpu_ms']['p95']:.1f})",
                         ", ".join(f"{k} {v}" for k, v in sorted(a["paths"].items())), e["identical"]])
        rows.append(["", "load avg (1/5/15 min) at start, end", "", "", " ".join(map(str, entry["load"])), "", "", "", "", ""])
    print(table(["memories", "queries", "n", "matches p50", "before p50 wall (CPU)", "after p50 wall (CPU)",
                 "before p95", "after p95", "after paths", "identical page+total"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
