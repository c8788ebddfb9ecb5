"""Dropping a large source while many conflict candidates are pending (issue 21).

Builds a store with one ``--chunks``-chunk source and ``--claims`` claims, pairs the
first ``--paired`` chunks with every claim as pending candidates (written straight into
the table: producing ~49,000 real proposals would take the proposer far longer than the
measurement, and only their number and shape matter here), then times
``Ledger.drop_source``, which settles every candidate that touches a dropped chunk.

    .venv/bin/python bench/drop_source.py                 # 3,600 chunks, ~49,000 pending
    .venv/bin/python bench/drop_source.py --repeat 3

Before the fix (one "(a = ? OR b = ?)" update per chunk, planned on the judged_at index)
this took 49 s on the same machine.
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from _common import import_ledger

import_ledger()

from ledger.service import Ledger  # noqa: E402


def build(db: Path, chunks: int, claims: int, paired: int) -> tuple[str, int]:
    with Ledger.open(db) as led:
        sid = led.ingest_chunks("big.md", [f"Chunk {i} about pumps and valves number {i}." for i in range(chunks)],
                                cluster="reading", agent="bench", neighbours=0).source_id
        for i in range(claims):
            led.remember(f"Claim {i} says the widget weighs {i} grams", cluster="code", agent="bench")
    with sqlite3.connect(db) as c:  # fixture shortcut, see the module docstring
        chunk_ids = [r[0] for r in c.execute("SELECT id FROM memories WHERE source_id = ? ORDER BY seq LIMIT ?", (sid, paired))]
        claim_ids = [r[0] for r in c.execute("SELECT id FROM memories WHERE kind = 'claim'")]
        rows = [(f"cc_bench{n}", a, b) for n, (a, b) in enumerate((a, b) for a in chunk_ids for b in claim_ids)]
        c.executemany("INSERT OR IGNORE INTO conflict_candidates (id, a, b, score, created_at) VALUES (?, ?, ?, 0.5, 0)", rows)
        pending = c.execute("SELECT count(*) FROM conflict_candidates WHERE judged_at IS NULL").fetchone()[0]
    return sid, pending


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, default=3600)
    ap.add_argument("--claims", type=int, default=49)
    ap.add_argument("--paired", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=1)
    a = ap.parse_args()
    times = []
    for _ in range(a.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "drop.db"
            sid, pending = build(db, a.chunks, a.claims, a.paired)
            t = time.perf_counter()
            with Ledger.open(db) as led:
                dropped = led.drop_source(sid, by="bench")
            times.append(time.perf_counter() - t)
    print(f"source of {a.chunks} chunks, {pending} pending candidates: drop_source {statistics.median(times):.2f} s "
          f"(median of {a.repeat}; runs {', '.join(f'{x:.2f}' for x in times)}) -> {dropped}")


if __name__ == "__main__":
    main()
