"""Issue 20's load test: 3 processes acting as 3 machines, each with 4 writers and 2
readers on their own connections, 5,000 operations against one shared PostgreSQL store.
Nothing errs, nothing written is lost (every claim is there, every counted read is in
its hits, every edit of the shared claims left its text-history row) and ``asof:``
answers the same during the run, after it, and as the writers' own logs say."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import psycopg
import pytest

from ledger.service import Ledger

pytestmark = pytest.mark.reliability

WORKER = Path(__file__).with_name("pg_load_worker.py")
MACHINES, WRITER_OPS, READER_OPS = 3, 300, 234  # 3 x (4 x 300 + 2 x 234) = 5,004 operations


def iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def test_three_machines_of_writers_and_readers_lose_nothing(pg_url):
    with Ledger.open(pg_url) as led:
        hot = [led.remember(f"hot value number {i} starts here", cluster="proc", agent="setup").memory.id for i in range(3)]
    procs = [subprocess.Popen([sys.executable, str(WORKER), pg_url, f"m{i}", str(WRITER_OPS), str(READER_OPS), ",".join(hot)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(MACHINES)]
    threads = []
    for p in procs:
        out, err = p.communicate(timeout=1200)
        assert p.returncode == 0, err[-2000:]
        threads += [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert len(threads) == MACHINES * 6
    assert sum(t["ops"] for t in threads) >= 5000
    errors = [e for t in threads for e in t["errors"]]
    assert errors == [], errors[:5]

    written = {k: v for t in threads for k, v in t["written"].items()}
    dropped = {k: v for t in threads for k, v in t["dropped"].items()}
    hits: dict[str, int] = {}
    updates: dict[str, int] = {}
    for t in threads:
        for k, v in t["hits"].items():
            hits[k] = hits.get(k, 0) + v
        for k, v in t["updates"].items():
            updates[k] = updates.get(k, 0) + v
    assert len(written) > 1500 and dropped and sum(hits.values()) > 1000 and sum(updates.values()) > 100

    with psycopg.connect(pg_url) as c:
        rows = dict(((r[0], (r[1], r[2], r[3])) for r in c.execute(
            "SELECT id, created_at, deleted_at, hits FROM memories WHERE writer LIKE 'm%'")))
        history = dict(c.execute("SELECT memory_id, count(*) FROM memory_text_history GROUP BY memory_id").fetchall())
        setup_hits = dict(c.execute("SELECT id, hits FROM memories WHERE writer = 'setup'").fetchall())
    # 0 lost writes: every acknowledged claim, drop, counted read and edit is in the store.
    assert set(rows) == set(written)
    assert all(rows[k][0] == written[k] for k in written)
    assert {k for k, r in rows.items() if r[1] is not None} == set(dropped)
    assert all(rows[k][1] == dropped[k] for k in dropped)
    assert {k: r[2] for k, r in rows.items() if r[2]} == {k: v for k, v in hits.items() if k in rows}
    assert {k: setup_hits[k] for k in hot} == {k: hits.get(k, 0) for k in hot}
    assert {k: history.get(k, 0) for k in hot} == {k: updates.get(k, 0) for k in hot}

    # asof: what each reader saw during the run is what the store says now, and what
    # the writers' logs say it held then.
    checked = 0
    with Ledger.open(pg_url) as led:
        for t in threads:
            for instant, ids_then, total in t["asof"]:
                expected = sorted(k for k, created in written.items()
                                  if created <= instant and (k not in dropped or dropped[k] > instant))
                assert ids_then == expected, (t["thread"], instant)
                now = led.search(f"load asof:{iso(instant)} kind:claim", limit=100000)
                assert sorted(h.id for h in now.hits) == ids_then and now.total == total
                checked += 1
    assert checked >= 100
