"""Browse's first page without text, in process: ``search("")`` (strength order, 100 rows,
what the web UI's first request asks for) and ``ledger search`` with no words (25 rows),
on a copy of a benchmark store, with the store's make-up, because the cost follows it:
``_strength_page`` ranks every live claim and only the newest chunks of each trust level
(docs/search.md "Browse's first page").

Usage::

    python bench/browse_page.py STORE.db [STORE.db ...] [--runs 30] [--json]

Several stores are measured one after the other in one run. Each is copied to a temporary folder first (the shared cache is never written).
Reports CPU time (``time.process_time``) and wall time per call, p50/p95, and the load
average before and after (the machine is shared).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import dist, import_ledger, machine  # noqa: E402

import_ledger()

from ledger.service import Ledger  # noqa: E402


def makeup(path: Path) -> dict:
    """Counts that decide the no-text page's cost: live claims and chunks, sources and
    distinct clamped trust levels among live chunks."""
    c = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    one = lambda q: c.execute(q).fetchone()[0]  # noqa: E731
    out = {
        "memories": one("SELECT count(*) FROM memories"),
        "live_claims": one("SELECT count(*) FROM memories WHERE deleted_at IS NULL AND archived = 0 AND kind = 'claim'"),
        "live_chunks": one("SELECT count(*) FROM memories WHERE deleted_at IS NULL AND archived = 0 AND kind = 'chunk'"),
        "pinned": one("SELECT count(*) FROM memories WHERE deleted_at IS NULL AND pinned <> 0"),
        "sources": one("SELECT count(*) FROM sources"),
        "trust_levels": one("SELECT count(DISTINCT min(0.97, max(0.15, coalesce(s.trust, 0.7)))) FROM memories m "
                            "JOIN sources s ON s.id = m.source_id WHERE m.kind = 'chunk' AND m.deleted_at IS NULL"),
    }
    c.close()
    return out


def timed(fn, runs: int) -> tuple[dict, dict]:
    cpu, wall = [], []
    for _ in range(runs):
        c0, w0 = time.process_time(), time.perf_counter()
        fn()
        cpu.append((time.process_time() - c0) * 1000)
        wall.append((time.perf_counter() - w0) * 1000)
    return dist(cpu), dist(wall)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("stores", type=Path, nargs="+")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    load_before = os.getloadavg()
    stores = {}
    for store in a.stores:
        with tempfile.TemporaryDirectory(prefix="browse-page-") as tmp:
            copy = Path(tmp) / store.name
            shutil.copyfile(store, copy)
            rows = {}
            with Ledger.open(str(copy)) as led:  # migrates the copy if it is older
                led.search("", limit=100)  # warm: pages cached
                mk = makeup(copy)
                for name, q, limit in [("web first page (100 rows)", "", 100), ("ledger search, no words (25 rows)", "", 25),
                                       ("every row ranked: after:2000-01-01 (100 rows)", "after:2000-01-01", 100),
                                       ("with a filter: kind:claim (100 rows)", "kind:claim", 100)]:
                    cpu, wall = timed(lambda: led.search(q, limit=limit), a.runs)
                    rows[name] = {"cpu_ms": cpu, "wall_ms": wall, "path": led.store.search_path}
        stores[str(store)] = {"makeup": mk, "results": rows}
    result = {"machine": machine(), "runs": a.runs, "load_before": [round(x, 2) for x in load_before],
              "load_after": [round(x, 2) for x in os.getloadavg()], "stores": stores}
    if a.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"load {result['load_before']} -> {result['load_after']}, {a.runs} runs each")
    for store, r in stores.items():
        print(f"{store}  {r['makeup']}")
        for name, x in r["results"].items():
            print(f"  {name:<46} CPU p50 {x['cpu_ms']['p50']:7.1f} p95 {x['cpu_ms']['p95']:7.1f} ms   "
                  f"wall p50 {x['wall_ms']['p50']:7.1f} p95 {x['wall_ms']['p95']:7.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
