"""Peer lookup of ``remember`` at 100k: all query words vs the rarest few, side by side.

Usage::

    LEDGER_BENCH_OUT=DIR python bench/peers.py [--store PATH] [--remembers 200] [--terms 4]

Copies one 100k bench store twice (the cached store is never written) and runs, in one
process and alternating write by write, ``Ledger.remember`` with every query word
searched (before: :data:`ledger.store.conflicts.PEER_TERMS` set above 12) and with the
rarest ``--terms`` words (after). Two measures:

* ``remember`` p50/p95 in ms, texts made as in ``bench/scale.py`` ``measure_remember``;
* quality through remember's full path: every pair of ``tests/data/conflict_pairs.jsonl``
  (tuning) and ``conflict_pairs_fresh.jsonl`` (fresh) is remembered into a cluster of the
  100k store, ``a`` then ``b``; the pair counts as proposed when ``b``'s write proposes a
  candidate with ``a`` or is found a duplicate of it. Precision and recall against the
  labels, for both variants.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scale as S  # noqa: E402
from _common import ROOT, dist, machine  # noqa: E402

from ledger.service import Ledger  # noqa: E402
from ledger.store import conflicts as cq  # noqa: E402


def _pairs(name: str) -> list[dict]:
    return [json.loads(line) for line in (ROOT / "tests" / "data" / name).read_text().splitlines() if line.strip()]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", type=Path, default=None, help="a 100k store (default: bench/scale.py's mixed 100k)")
    ap.add_argument("--remembers", type=int, default=200)
    ap.add_argument("--terms", type=int, default=cq.PEER_TERMS)
    ap.add_argument("--df-cap", type=int, default=cq.DF_CAP)
    args = ap.parse_args()
    cq.DF_CAP = args.df_cap
    src = args.store or S.build_store("mixed", 100_000)
    tmp = Path(tempfile.mkdtemp(prefix="ledger-peers-"))
    variants = {"before (all words)": 1000, f"after (rarest {args.terms})": args.terms}
    leds, clocks = {}, {}
    try:
        for i, name in enumerate(variants):
            shutil.copy(src, tmp / f"{i}.db")
            clocks[name] = S.Clock(S.T0 + S.SPAN_MS + 86_400_000)
            leds[name] = Ledger.open(tmp / f"{i}.db", clock=clocks[name])

        def run(name, fn):
            cq.PEER_TERMS = variants[name]
            led = leds[name]
            clocks[name].now += 1000
            return fn(led, clocks[name])

        lookup_ms: list[float] = []
        real_find = cq.find_peers

        def timed_find(*a, **kw):  # the peer lookup alone, inside remember
            t0 = time.perf_counter()
            try:
                return real_find(*a, **kw)
            finally:
                lookup_ms.append((time.perf_counter() - t0) * 1000)

        cq.find_peers = timed_find
        first = next(iter(leds.values()))
        rng = random.Random(3)
        texts = S.sample_texts(first, rng, 1000)
        gen = S.TextGen(seed=97)
        times = {n: [] for n in variants}
        proposed = {n: 0 for n in variants}
        lookups = {n: [] for n in variants}
        for i in range(args.remembers):
            cluster, text = S.remember_draw(rng, gen, texts, i)
            order = list(variants) if i % 2 else list(variants)[::-1]
            for name in order:
                lookup_ms.clear()
                t0 = time.perf_counter()
                res = run(name, lambda led, _clock: led.remember(text, cluster=cluster, agent="bench"))
                times[name].append((time.perf_counter() - t0) * 1000)
                proposed[name] += len(res.proposed)
                lookups[name] += lookup_ms
        quality = {}
        for set_name in ("conflict_pairs.jsonl", "conflict_pairs_fresh.jsonl"):
            for name in variants:
                tp = fp = fn = tn = 0
                for k, p in enumerate(_pairs(set_name)):
                    cluster = S.CLUSTERS[k % len(S.CLUSTERS)]

                    def pair(led, clock):
                        a = led.remember(p["a"], cluster=cluster, agent="bench-pairs")
                        b = led.remember(p["b"], cluster=cluster, agent="bench-pairs")
                        if b.duplicate:
                            return b.memory.id == a.memory.id
                        for cid in b.proposed:
                            c = cq.get_pending_candidate(led.store, cid, clock.now)
                            if a.memory.id in (c.a.id, c.b.id):
                                return True
                        return False

                    hit = run(name, pair)
                    if p["contradicts"]:
                        tp, fn = tp + hit, fn + (not hit)
                    else:
                        fp, tn = fp + hit, tn + (not hit)
                quality[f"{set_name} {name}"] = {
                    "tp": tp, "fp": fp, "fn": fn, "tn": tn,
                    "precision": round(tp / (tp + fp), 3) if tp + fp else None,
                    "recall": round(tp / (tp + fn), 3) if tp + fn else None}
        out = {"machine": machine(), "store": str(src), "writes": args.remembers, "terms": args.terms, "df_cap": args.df_cap,
               "remember_ms": {n: dist(t) for n, t in times.items()},
               "peer_lookup_ms": {n: dist(t) for n, t in lookups.items()}, "candidates_proposed": proposed,
               "pairs_through_remember": quality}
        print(json.dumps(out, indent=1))
    finally:
        for led in leds.values():
            led.close()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
