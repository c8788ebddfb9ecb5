"""A worker process for the reliability suite (tests/test_reliability.py): it writes to a
store through the library, one open per operation like a CLI call, and prints one line
per operation on stdout, flushed after the commit returned:

    ack <memory-or-source id> [chunks]     the write is committed
    err <kind> <json message>              a LedgerError (a clear, expected refusal)

A traceback goes to stderr as usual; the suite counts it as a failure.

    python reliability_worker.py remember <db> <agent> <n> [recall_every]
    python reliability_worker.py ingest <db> <chunks> <label>
    python reliability_worker.py reingest <db> <file>     (ingest a file by its path: a known one is re-ingested)

``LEDGER_TEST_WAIT_MS`` sets the store's wait limit for the write lock (default 10 s), so
a test can show no writer is kept waiting longer than that.
"""

from __future__ import annotations

import json
import os
import sys


def _remember(db: str, agent: str, n: int, recall_every: int) -> None:
    from ledger.errors import LedgerError
    from ledger.service import Ledger

    for i in range(n):
        text = f"Reliability fact by {agent} number {i}: widget {agent}-{i} weighs {i * 7 + 3} grams"
        try:
            with Ledger.open(db) as led:
                mid = led.remember(text, cluster="code", agent=agent).memory.id
                if recall_every and i % recall_every == 0:
                    led.recall(f"widget {agent}", agent=agent, limit=3)  # a counted read: a write too
            print("ack", mid, flush=True)
        except LedgerError as exc:
            print("err", exc.kind, json.dumps(exc.message), flush=True)


def _ingest(db: str, chunks: int, label: str) -> None:
    from ledger.errors import LedgerError
    from ledger.service import Ledger

    parts = [f"Section {i} of {label}: the pump curve at station {i} peaks at {i % 97} litres per second." for i in range(chunks)]
    try:
        with Ledger.open(db) as led:
            res = led.ingest_chunks(f"{label}-{chunks}.md", parts, cluster="reading", agent="ingester")
        print("ack", res.source_id, res.chunks, flush=True)
    except LedgerError as exc:
        print("err", exc.kind, json.dumps(exc.message), flush=True)


def _reingest(db: str, file: str) -> None:
    from pathlib import Path

    from ledger.errors import LedgerError
    from ledger.ingest import read_source_file
    from ledger.service import Ledger

    try:
        with Ledger.open(db) as led:
            res = led.ingest(read_source_file(file), cluster="reading", agent="ingester", path=str(Path(file).resolve()))
        print("ack", res.source_id, res.chunks, res.kept, res.added, res.retired, flush=True)
    except LedgerError as exc:
        print("err", exc.kind, json.dumps(exc.message), flush=True)


def main(argv: list[str]) -> int:
    wait = os.environ.get("LEDGER_TEST_WAIT_MS")
    if wait:
        from ledger.store import connection

        connection.BUSY_TIMEOUT_MS = int(wait)
    mode, db = argv[0], argv[1]
    if mode == "remember":
        _remember(db, argv[2], int(argv[3]), int(argv[4]) if len(argv) > 4 else 0)
    elif mode == "ingest":
        _ingest(db, int(argv[2]), argv[3])
    elif mode == "reingest":
        _reingest(db, argv[2])
    else:
        raise SystemExit(f"unknown mode {mode}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
