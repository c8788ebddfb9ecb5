"""What one match costs the search, piece by piece, inside SQLite.

Usage::

    LEDGER_BENCH_OUT=DIR python bench/match_cost.py [--sizes 100000] [--queries 80] [--json]

Exact search scores every match (docs/search.md "Top-k"); at 100k memories the
generated queries of ``bench/scale.py`` match about 5,000 memories at the median, at 1M
about 70,000. This bench splits what a match costs, on the cached ``bench/scale.py``
store of each size (opened on a copy), for each query's exact phrases as
``textindex.expression_parts`` writes them, in statements that return one row so no
Python work per match is counted:

* ``iterate``: walking the matches of the MATCH expression (rowids only);
* ``iterate as typed``: the same with the prefix stars removed (each phrase one term),
  for what the implicit prefixes of ``hybrid`` mode cost;
* ``+ row length``: each match joined to FTS5's own table of row lengths
  (``memories_fts_docsize``), the lookup a row-level test would pay at the least;
* ``+ strength``: each match joined to its memory row and source, strength computed
  (``sqlbits.strength_sql``), what testing a match against its strength costs today;
* ``+ bm25``: FTS5's ``bm25()`` for each match, what ranking pays.

Each is reported as CPU ns per match (p50 over queries, queries with 200+ matches), and the
extra cost of the last three over ``iterate``. It also reports the page's last score θ
and the ranking paths the search took (``Store.search_path``), which say how much room a
bound has: a row can reach the page only if 0.75·r + 0.25·strength ≥ θ.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import import_ledger, machine, table  # noqa: E402

import_ledger()

import scale as S  # noqa: E402

from ledger.query import parse  # noqa: E402
from ledger.store import textindex  # noqa: E402
from ledger.store.sqlbits import strength_sql  # noqa: E402

_W = f"bm25(memories_fts, 1.0, {textindex.CONTEXT_WEIGHT})"
# `LIMIT -1` keeps SQLite from flattening the subquery into the aggregate (bm25() may
# only be called where the full-text cursor is current).
STATEMENTS = {
    "iterate": "SELECT count(*) FROM (SELECT rowid FROM memories_fts WHERE memories_fts MATCH :ex LIMIT -1)",
    "+ row length": """SELECT count(*) FROM (SELECT f.rowid FROM memories_fts f CROSS JOIN memories_fts_docsize d
                       ON d.id = f.rowid WHERE memories_fts MATCH :ex LIMIT -1)""",
    "+ strength": f"""SELECT max(st) FROM (SELECT {strength_sql()} AS st FROM memories_fts f CROSS JOIN memories m
                      ON m.seq = f.rowid LEFT JOIN sources s ON s.id = m.source_id WHERE memories_fts MATCH :ex LIMIT -1)""",
    "+ bm25": f"SELECT max(p) FROM (SELECT -{_W} AS p FROM memories_fts WHERE memories_fts MATCH :ex LIMIT -1)",
}


def _cpu(c, sql: str, params: dict) -> float:
    t = time.process_time()
    c.execute(sql, params).fetchall()
    return time.process_time() - t


def measure(db: Path, queries: int) -> dict:
    with S.generated_queries_on_a_copy(db) as (led, next_query):
        c = led.store._conn
        now = led.clock()
        per_match: dict[str, list[float]] = {k: [] for k in [*STATEMENTS, "iterate as typed"]}
        matches, typed, thetas, paths = [], [], [], {}
        for _ in range(queries):
            q = next_query()
            res = led.search(q, limit=10)
            paths[led.store.search_path] = paths.get(led.store.search_path, 0) + 1
            if len(res.hits) == 10:
                thetas.append(res.hits[-1].score)
            exact = textindex.expression_parts(c, parse(q, now).terms, "hybrid")[0]
            if not exact:
                continue
            ex = " OR ".join(exact)
            n = c.execute(STATEMENTS["iterate"], {"ex": ex}).fetchone()[0]
            if n < 200:
                continue
            c.execute(STATEMENTS["+ bm25"], {"ex": ex}).fetchall()  # the doclists in the page cache for every side
            matches.append(n)
            for key, sql in STATEMENTS.items():
                per_match[key].append(_cpu(c, sql, {"ex": ex, "now": now}) * 1e9 / n)
            bare = " OR ".join(p[:-1] if p.endswith("*") else p for p in exact)
            n_bare = c.execute(STATEMENTS["iterate"], {"ex": bare}).fetchone()[0]
            typed.append(n_bare / n)
            per_match["iterate as typed"].append(_cpu(c, STATEMENTS["iterate"], {"ex": bare}) * 1e9 / max(1, n_bare))
    p50 = {k: statistics.median(v) for k, v in per_match.items() if v}
    return {
        "queries": len(matches),
        "matches_p50": statistics.median(matches) if matches else 0,
        "matches_as_typed_share_p50": statistics.median(typed) if typed else 0,
        "ns_per_match_p50": p50,
        "extra_over_iterate_ns": {k: p50[k] - p50["iterate"] for k in ("+ row length", "+ strength", "+ bm25") if k in p50},
        "theta": {q: statistics.quantiles(thetas, n=20)[i] for q, i in (("p5", 0), ("p50", 9), ("p95", 18))}
        if len(thetas) >= 20 else {},
        "paths": paths,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    ap.add_argument("--queries", type=int, default=80)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    out: dict = {"machine": machine(), "sizes": {}}
    for n in args.sizes:
        db = S.store_path("mixed", n)
        if not db.exists():
            print(f"no cached store {db}; build it with bench/scale.py --sizes {n} --only recall", file=sys.stderr)
            return 2
        out["sizes"][n] = measure(db, args.queries)
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    m = out["machine"]
    print(f"{m['date']} · {m['nproc']} cores · SQLite {m['sqlite']} · load {os.getloadavg()[0]:.1f}\n")
    for n, r in out["sizes"].items():
        print(f"{n:,} memories: {r['queries']} queries with 200+ matches, {r['matches_p50']:,.0f} matches at p50 "
              f"({r['matches_as_typed_share_p50']:.0%} of them without the prefix stars); ranking paths {r['paths']}; "
              f"page's last score θ {', '.join(f'{k} {v:.3f}' for k, v in r['theta'].items())}")
        rows = [(k, f"{v:,.0f}", f"{r['extra_over_iterate_ns'][k]:,.0f}" if k in r["extra_over_iterate_ns"] else "")
                for k, v in r["ns_per_match_p50"].items()]
        print(table(["statement", "CPU ns a match, p50", "over iterate"], rows))
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
