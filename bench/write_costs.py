"""What a store's write paths cost, in one process on a fresh store: a batched ingest of
``--chunks`` chunks (wall and CPU), counted reads of 10 memories, and ``remember``.

Usage::

    python bench/write_costs.py [--chunks 20000] [--reads 300] [--remembers 100] [--json]

Run it with two checkouts (``PYTHONPATH=<other>/src``) one after the other to compare
the write cost of a change, e.g. the per-agent summary kept on write (migration m017,
docs/benchmarks.md): every figure is measured on the same generated text (seeded).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import dist, import_ledger, machine  # noqa: E402

import_ledger()

from ledger.clock import FixedClock  # noqa: E402
from ledger.service import Ledger  # noqa: E402

WORDS = ["alpha", "beta", "gamma", "delta", "release", "deploy", "cache", "store", "index", "python"]


def measure(chunks: int, reads: int, remembers: int) -> dict:
    rnd = random.Random(1)
    clock = FixedClock(1_700_000_000_000)
    with tempfile.TemporaryDirectory() as d, Ledger.open(os.path.join(d, "w.db"), clock=clock) as led:
        texts = [" ".join(rnd.choice(WORDS) + str(rnd.randrange(5000)) for _ in range(15)) for _ in range(chunks)]
        c0, t0 = time.process_time(), time.perf_counter()
        src = led.ingest_chunks("bench.md", texts, cluster="code", agent="a")
        ingest = {"wall_s": round(time.perf_counter() - t0, 3), "cpu_s": round(time.process_time() - c0, 3)}
        ids = led.store.source_memory_ids(src.source_id, "chunk")
        read_ms = []
        for _ in range(reads):
            t0 = time.perf_counter()
            led.store.count_read(rnd.sample(ids, 10), rnd.choice("abcd"), clock())
            read_ms.append((time.perf_counter() - t0) * 1000)
        remember_ms = []
        for i in range(remembers):
            t0 = time.perf_counter()
            led.remember(f"claim {i} about {rnd.choice(WORDS)} {rnd.randrange(10**9)}", cluster="code", agent="b")
            remember_ms.append((time.perf_counter() - t0) * 1000)
    return {"ingest": ingest, "count_read_10_ms": dist(read_ms), "remember_ms": dist(remember_ms)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, default=20_000)
    ap.add_argument("--reads", type=int, default=300)
    ap.add_argument("--remembers", type=int, default=100)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    r = measure(args.chunks, args.reads, args.remembers)
    r["machine"] = machine()
    r["load"] = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    if args.json:
        print(json.dumps(r, indent=2))
        return 0
    print(f"ingest {args.chunks:,} chunks: wall {r['ingest']['wall_s']} s, CPU {r['ingest']['cpu_s']} s")
    print(f"count_read of 10 memories: p50 {r['count_read_10_ms']['p50']:.2f} ms, p95 {r['count_read_10_ms']['p95']:.2f} ms")
    print(f"remember: p50 {r['remember_ms']['p50']:.2f} ms, p95 {r['remember_ms']['p95']:.2f} ms   (load {r['load']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
