"""``remember`` with the proposer at 100k, two checkouts side by side, write by write.

    LEDGER_BENCH_OUT=... python bench/remember_ab.py --base-src /tmp/base/src [--claims-store 100000]
                                                     [--remembers 200] [--rounds 2]

On a shared machine two runs of ``bench/scale.py --only remember`` a minute apart differ
by more than a change to the proposer does (other processes come and go). Here each side
is a long-lived worker process (this checkout's ``src`` and ``--base-src``), each on its
own copy of the cached claims store, both making the writes of ``measure_remember`` in
``bench/scale.py`` (the same draw: half new sentences, half stored claims with a number
changed). The driver hands each write to both workers one after the other, in a random
order, so both sides meet the same load at nearly the same moment; each reports the CPU
time (``time.process_time``) and wall time of its ``Ledger.remember`` call and what it
proposed. With ``--rounds`` > 1 the writes are made again on fresh copies (the peer
lookups read cold pages again).

Prints both sides' CPU and wall p50 / p90 / mean, the per-write difference of CPU
(paired: the median of base - this), and whether the two sides proposed the same number
of candidates and took the same duplicate decisions on every write.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def worker(n_claims: int, tag: str) -> None:
    """Read "go" lines on stdin; make the next write; answer one JSON line."""
    sys.path.insert(0, str(HERE))
    from scale import SPAN_MS, T0, Clock, TextGen, build_store, drop, remember_draw, sample_texts, working_copy

    from ledger.service import Ledger

    work = working_copy(build_store("claims", n_claims), tag)
    try:
        clock = Clock(T0 + SPAN_MS + 86_400_000)
        rng = random.Random(3)
        gen = TextGen(seed=97)
        with Ledger.open(work, clock=clock) as led:
            texts = sample_texts(led, rng, 1000)
            print(json.dumps({"ready": True, "ledger": sys.modules["ledger"].__file__}), flush=True)
            i = 0
            for line in sys.stdin:
                if line.strip() != "go":
                    break
                cluster, text = remember_draw(rng, gen, texts, i)  # as bench/scale.py measure_remember
                clock.now += 1000
                c0, t0 = time.process_time(), time.perf_counter()
                res = led.remember(text, cluster=cluster, agent="bench")
                wall, cpu = (time.perf_counter() - t0) * 1000, (time.process_time() - c0) * 1000
                print(json.dumps({"cpu": cpu, "wall": wall, "proposed": len(res.proposed), "dup": res.duplicate}),
                      flush=True)
                i += 1
    finally:
        drop(work)


def _start(src: Path, n_claims: int, tag: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(src))
    p = subprocess.Popen([sys.executable, __file__, "--worker", tag, "--claims-store", str(n_claims)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    ready = json.loads(p.stdout.readline())
    print(f"{tag}: {ready['ledger']}", file=sys.stderr)
    return p


def _q(xs: list[float]) -> str:
    s = sorted(xs)
    return f"p50 {statistics.median(s):.3f}  p90 {s[int(len(s) * 0.9)]:.3f}  mean {statistics.fmean(s):.3f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base-src", type=Path, help="the other checkout's src folder")
    ap.add_argument("--claims-store", type=int, default=100_000)
    ap.add_argument("--remembers", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.claims_store, args.worker)
        return
    if not args.base_src:
        ap.error("--base-src is required")
    sides = {"base": args.base_src.resolve(), "this": HERE.parent / "src"}
    got: dict[str, list[dict]] = {k: [] for k in sides}
    order = random.Random(args.seed)
    load = [os.getloadavg()[0]]
    for _ in range(args.rounds):
        procs = {k: _start(src, args.claims_store, f"ab-{k}") for k, src in sides.items()}
        try:
            for _ in range(args.remembers):
                for k in order.sample(list(procs), len(procs)):
                    procs[k].stdin.write("go\n")
                    procs[k].stdin.flush()
                    got[k].append(json.loads(procs[k].stdout.readline()))
        finally:
            for p in procs.values():
                p.stdin.close()
                p.wait()
        load.append(os.getloadavg()[0])
    for k, rows in got.items():
        print(f"{k:5} CPU ms  {_q([r['cpu'] for r in rows])}   wall ms {_q([r['wall'] for r in rows])}   "
              f"candidates {sum(r['proposed'] for r in rows)}, duplicates {sum(r['dup'] for r in rows)}")
    diff = [b["cpu"] - t["cpu"] for b, t in zip(got["base"], got["this"])]
    print(f"base - this, CPU ms per write: {_q(diff)}")
    same = all((b["proposed"], b["dup"]) == (t["proposed"], t["dup"]) for b, t in zip(got["base"], got["this"]))
    print(f"same candidates count and duplicate decision on every write: {same}; "
          f"{len(diff)} writes; load average (1 min) {', '.join(f'{x:.2f}' for x in load)}")


if __name__ == "__main__":
    main()
