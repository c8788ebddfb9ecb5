"""How long a writer waits for the write lock while a large document is ingested or
re-ingested (issue 21), batched (the default) against one transaction, side by side in
one run. The re-ingest rewords a third of the passages and adds a first one, so a third
of the chunks are new, a third retired and every kept one moves.

A probe process takes the write lock (``BEGIN IMMEDIATE`` ... ``COMMIT``) every 20 ms
for the whole ingest and records each wait; the ingest runs in this process.

    .venv/bin/python bench/ingest_batches.py                   # 24,000 chunks
    .venv/bin/python bench/ingest_batches.py --chunks 48000
    .venv/bin/python bench/ingest_batches.py --reingest        # re-ingest of a known file
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import import_ledger

import_ledger()

from ledger.ingest import SourceText  # noqa: E402
from ledger.service import Ledger  # noqa: E402

PROBE = """
import sqlite3, sys, time, json
conn = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=60)
waits = []
while True:
    try:
        open(sys.argv[2]).close()
        break
    except FileNotFoundError:
        pass
    t = time.monotonic()
    conn.execute("BEGIN IMMEDIATE")
    waits.append((time.monotonic() - t) * 1000)
    conn.execute("COMMIT")
    time.sleep(0.02)
print(json.dumps(waits))
"""


def _doc(chunks: int, revised: bool) -> SourceText:
    """A markdown text of ``chunks`` sections (one chunk each); ``revised``: every third
    reworded and a preface first."""
    out = ["# Preface\n\nThe revised manual starts with a preface."] if revised else []
    for i in range(chunks):
        word = "revised pump curve" if revised and i % 3 == 0 else "pump curve"
        out.append(f"# Station {i}\n\nThe {word} at station {i} peaks at {i % 97} litres per second.")
    text = "\n\n".join(out) + "\n"
    return SourceText("manual.md", "md", text, len(text.encode()))


def run(db: Path, chunks: int, batched: bool, reingest: bool = False) -> dict:
    import json

    parts = [f"Section {i}: the pump curve at station {i} peaks at {i % 97} litres per second." for i in range(chunks)]
    with Ledger.open(db) as led:
        if reingest:  # the known version, written at once (not measured)
            with led.store.atomic():
                led.ingest(_doc(chunks, False), cluster="reading", agent="bench", path="/bench/manual.md")
    stop = db.with_suffix(".stop")
    probe = subprocess.Popen([sys.executable, "-c", PROBE, str(db), str(stop)], stdout=subprocess.PIPE, text=True)
    time.sleep(0.3)
    t = time.monotonic()
    with Ledger.open(db) as led:
        if reingest:
            if batched:
                led.ingest(_doc(chunks, True), cluster="reading", agent="bench", path="/bench/manual.md")
            else:
                with led.store.atomic():  # a caller's transaction: the re-ingest writes in it, as before batching
                    led.ingest(_doc(chunks, True), cluster="reading", agent="bench", path="/bench/manual.md")
        elif batched:
            led.ingest_chunks("big.md", parts, cluster="reading", agent="bench")
        else:
            with led.store.atomic():  # a caller's transaction: the ingest writes in it, as before batching
                led.ingest_chunks("big.md", parts, cluster="reading", agent="bench")
    wall = time.monotonic() - t
    stop.touch()
    waits = sorted(json.loads(probe.communicate()[0]))
    q = statistics.quantiles(waits, n=100, method="inclusive") if len(waits) > 1 else waits * 99
    return {"wall": wall, "n": len(waits), "p50": q[49], "p99": q[98], "max": waits[-1]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chunks", type=int, default=24_000)
    ap.add_argument("--reingest", action="store_true", help="re-ingest a changed known file instead of a first ingest")
    a = ap.parse_args()
    what = "re-ingest" if a.reingest else "ingest"
    print(f"| {what} of {a.chunks:,} chunks | {what} wall s | probe writes | wait p50 ms | wait p99 ms | wait max ms |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as d:
        for batched in (False, True):
            r = run(Path(d) / f"{batched}.db", a.chunks, batched, a.reingest)
            label = "batched (default)" if batched else "one transaction (before)"
            print(f"| {label} | {r['wall']:.2f} | {r['n']} | {r['p50']:.1f} | {r['p99']:.1f} | {r['max']:.0f} |")


if __name__ == "__main__":
    main()
