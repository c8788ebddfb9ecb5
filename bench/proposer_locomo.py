"""How many contradiction candidates do unrelated facts raise? LoCoMo turns in one store.

Usage::

    python bench/proposer_locomo.py ../shared/data/locomo/locomo-dev.json [--facts 1000]
        [--seed 7] [--json]

Takes ``--facts`` dialogue turns of at least five words from the LoCoMo conversations (a
seeded sample across all of them), writes each as ``"<speaker>: <text>"`` through
``Ledger.remember`` into one cluster of a fresh store, and counts the candidates the
proposer recorded. Chit-chat turns almost never contradict each other, so nearly every
candidate is a false alarm; the target is fewer than 20 for 1,000 facts.

Two figures come out of one run:

* ``store``: what ``remember`` really proposed (peers found through the full-text index,
  at most 20 kept per write), the figure the target is about;
* ``all_pairs``: every pair of the sample put through ``suspect`` directly (no peer
  limit, no per-write cap), an upper bound that does not depend on the store.

The sample, the store and the timings are printed; ``--json`` gives the same as JSON
with every proposed pair listed.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

from _common import import_ledger, machine

import_ledger()

from ledger.conflicts.signals import suspect  # noqa: E402
from ledger.service import Ledger  # noqa: E402

CLUSTER = "proc"  # one of the clusters every store starts with


def load_turns(path: Path, n: int, seed: int) -> list[str]:
    """``n`` turns (>= 5 words) sampled with ``seed`` from every conversation in the file,
    each as ``"<speaker>: <text>"``, in a stable order. Raises ValueError if the file
    holds fewer than ``n`` such turns."""
    data = json.loads(path.read_text(encoding="utf-8"))
    turns = []
    for conv in data:
        c = conv["conversation"]
        for key in sorted(k for k in c if k.startswith("session_") and isinstance(c[k], list)):
            for t in c[key]:
                text = " ".join(t.get("text", "").split())
                if len(text.split()) >= 5:
                    turns.append(f"{t['speaker']}: {text}")
    turns = list(dict.fromkeys(turns))
    if len(turns) < n:
        raise ValueError(f"{path} holds {len(turns)} usable turns, fewer than {n}")
    return random.Random(seed).sample(turns, n)


def _clear_caches() -> None:
    # What a fresh `ledger remember` process starts with: nothing read yet.
    for mod in ("ledger.conflicts.values", "ledger.conflicts.signals"):
        m = sys.modules.get(mod)
        for name in ("read", "_values", "_tokens"):
            fn = getattr(m, name, None)
            if hasattr(fn, "cache_clear"):
                fn.cache_clear()


def through_store(facts: list[str], cold: bool = False) -> dict:
    """Write every fact with ``remember``; count what was proposed. With ``cold`` the
    proposer's caches are emptied before each write, as in one CLI process per write."""
    pairs = []
    times = []
    with tempfile.TemporaryDirectory() as tmp, Ledger.open(Path(tmp) / "ledger.db") as led:
        for text in facts:
            if cold:
                _clear_caches()
            t0 = time.perf_counter()
            res = led.remember(text, cluster=CLUSTER, agent="bench")
            times.append((time.perf_counter() - t0) * 1000)
            pairs.extend(res.proposed)
    times.sort()
    return {
        "candidates": len(pairs),
        "remember_ms_p50": round(times[len(times) // 2], 2),
        "remember_ms_p95": round(times[int(len(times) * 0.95)], 2),
    }


def all_pairs(facts: list[str]) -> dict:
    """Every unordered pair through ``suspect``: count, signals histogram, examples."""
    hits = []
    by_signal: dict[str, int] = {}
    t0 = time.perf_counter()
    for i, a in enumerate(facts):
        for b in facts[i + 1 :]:
            s = suspect(a, b)
            if s is not None:
                hits.append({"a": a, "b": b, "signals": list(s.signals), "score": s.score})
                for name in s.signals:
                    by_signal[name] = by_signal.get(name, 0) + 1
    return {
        "pairs_compared": len(facts) * (len(facts) - 1) // 2,
        "candidates": len(hits),
        "by_signal": dict(sorted(by_signal.items(), key=lambda kv: -kv[1])),
        "seconds": round(time.perf_counter() - t0, 1),
        "pairs": sorted(hits, key=lambda h: -h["score"]),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path, help="locomo-dev.json (or any file of that shape)")
    parser.add_argument("--facts", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--show", type=int, default=10, help="proposed pairs to print")
    args = parser.parse_args(argv)
    try:
        facts = load_turns(args.path, args.facts, args.seed)
    except (OSError, ValueError, KeyError) as exc:
        print(f"cannot read {args.path}: {exc}", file=sys.stderr)
        return 2
    store = through_store(facts)
    cold = through_store(facts, cold=True)
    pure = all_pairs(facts)
    out = {"machine": machine(), "facts": len(facts), "seed": args.seed, "store": store, "store_cold": cold,
           "all_pairs": pure}
    if args.json:
        json.dump(out, sys.stdout, indent=2, ensure_ascii=False)
        print()
        return 0
    print(f"{len(facts)} LoCoMo turns (seed {args.seed}) in one store, cluster {CLUSTER!r}")
    print(f"store:     {store['candidates']} candidates proposed by remember "
          f"(remember p50 {store['remember_ms_p50']} ms, p95 {store['remember_ms_p95']} ms; "
          f"caches emptied before each write, as one CLI process per write: "
          f"p50 {cold['remember_ms_p50']} ms, p95 {cold['remember_ms_p95']} ms)")
    print(f"all pairs: {pure['candidates']} of {pure['pairs_compared']:,} pairs suspected "
          f"({pure['seconds']} s); by signal: {pure['by_signal']}")
    for h in pure["pairs"][: args.show]:
        print(f"  - {h['a'][:90]!r}\n    vs {h['b'][:90]!r}  [{', '.join(h['signals'])}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
