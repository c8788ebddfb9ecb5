"""How many matches could an exact top-k search leave unscored? Headroom of bounds.

Usage::

    LEDGER_BENCH_OUT=DIR python bench/bound_headroom.py [--size 100000] [--queries 60] [--json]

Search at 100k memories spends most of its time computing FTS5's ``bm25()`` for every
match (docs/benchmarks.md). An exact top-k search may skip a match only when a bound
proves it cannot reach the page. This bench measures, on the generated queries of
``bench/scale.py`` (the cached store of ``--size``, opened read-only on a copy), what
share of the matches each kind of bound could skip, given the page's true last score
θ (score = 0.75·r + 0.25·strength, r = p/(p+1), p = -bm25; docs/search.md):

* ``phrase bound``: what ledger does (docs/search.md "Top-k"): each exact phrase adds
  less than 2.2·idf to p, strength is at most 1; the most common phrases whose bounds
  sum low enough are left out (MaxScore). ``textindex.phrase_bounds``.
* ``true phrase max``: the same, with each phrase's real largest share over the rows
  holding it (what a per-term maximum kept beside the index would give).
* ``true max, row strength``: a row is skipped when 0.75·R(sum of the real maxima of
  the phrases it holds) + 0.25·(its own strength) < θ: per-term maxima with every
  row's strength known (a block-max index with exact strength is at most this good).
* ``phrase bound, row strength``: ledger's phrase bounds with every row's strength.
* ``phrase bound, undecayed strength``: the same with each row's strength at its last
  read (freshness 1), a bound that stays true as time passes without a write, so it
  could be stored with the row.
* ``reach θ``: the rows whose true score reaches θ (the page and its ties): the least
  any exact method must score.

A row-strength bound only saves time if testing it costs less than the ``bm25()`` it
spares (about 1 µs a match, most of it a lookup of the row's length): docs/benchmarks.md
"How far a bound could go" has the figures and what they mean for the design.

Queries with fuzzy neighbours, compounds or CJK runs, or fewer than 10 matches, are
left out (the bound is not tried on them). Shares are medians and means over queries.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import import_ledger, machine, table  # noqa: E402

import_ledger()

import scale as S  # noqa: E402

from ledger.query import parse  # noqa: E402
from ledger.store import textindex  # noqa: E402
from ledger.store.sqlbits import strength_sql  # noqa: E402
from ledger.vocab import RELEVANCE_WEIGHT, STRENGTH_WEIGHT  # noqa: E402


def _r(p: float) -> float:
    return p / (p + 1.0)


def _maxscore_skips(phrases, cap: dict[str, float], rows_of: dict[str, set], p_floor: float) -> set:
    """Rows holding only the most common phrases whose caps sum below ``p_floor``."""
    left, u = [], 0.0
    for ph in sorted(phrases, key=lambda x: cap[x]):
        if u + cap[ph] >= p_floor:
            break
        u += cap[ph]
        left.append(ph)
    if not left:
        return set()
    essential = set().union(*(rows_of[ph] for ph in phrases if ph not in left)) if len(left) < len(phrases) else set()
    return set().union(*(rows_of[ph] for ph in left)) - essential


def measure(db: Path, queries: int) -> dict:
    with S.generated_queries_on_a_copy(db) as (led, next_query):
        c = led.store._conn
        now = led.clock()
        shares: dict[str, list[float]] = {k: [] for k in ("phrase bound", "true phrase max", "true max, row strength",
                                                          "phrase bound, row strength", "phrase bound, undecayed strength", "reach θ")}
        matches = []
        st_sql = strength_sql()
        st_ub = strength_sql(now="m.last_read_at")  # freshness 1: the strength at the row's last read
        for _ in range(queries):
            q = next_query()
            pq = parse(q, now)
            exact, fuzzy, side = textindex.expression_parts(c, pq.terms, "hybrid")
            if fuzzy or side or len(exact) < 2:
                continue
            page, total = led.store.search(pq, now, limit=10)
            if len(page) < 10:
                continue
            theta = page[-1].score
            rows_of, cap_true = {}, {}
            for ph in exact:
                got = c.execute(f"SELECT rowid, -bm25(memories_fts, 1.0, {textindex.CONTEXT_WEIGHT}) FROM memories_fts "
                                "WHERE memories_fts MATCH ?", (ph,)).fetchall()
                rows_of[ph] = {r for r, _ in got}
                cap_true[ph] = max((s for _, s in got), default=0.0)
            cap_now = {ph: b for ph, _, b in textindex.phrase_bounds(c, exact)}
            textindex.fill_relevance(c, pq.terms, "hybrid")
            scored = c.execute(f"""SELECT rel.seq, rel.r, {st_sql}, {st_ub} FROM temp.ledger_rel rel JOIN memories m ON m.seq = rel.seq
                                   LEFT JOIN sources s ON s.id = m.source_id
                                   WHERE m.deleted_at IS NULL AND m.archived = 0""", {"now": now}).fetchall()
            n = len(scored)
            matches.append(n)
            floor_r = (theta - STRENGTH_WEIGHT * 1.0) / RELEVANCE_WEIGHT
            p_floor = floor_r / (1 - floor_r) if 0 < floor_r < 1 else (0.0 if floor_r <= 0 else float("inf"))
            shares["phrase bound"].append(len(_maxscore_skips(exact, cap_now, rows_of, p_floor)) / n)
            shares["true phrase max"].append(len(_maxscore_skips(exact, cap_true, rows_of, p_floor)) / n)
            for key, cap, col in (("true max, row strength", cap_true, 2), ("phrase bound, row strength", cap_now, 2),
                                  ("phrase bound, undecayed strength", cap_now, 3)):
                skip = 0
                for row in scored:
                    u = sum(cap[ph] for ph in exact if row[0] in rows_of[ph])
                    if RELEVANCE_WEIGHT * _r(u) + STRENGTH_WEIGHT * row[col] < theta - 1e-9:
                        skip += 1
                shares[key].append(skip / n)
            shares["reach θ"].append(sum(1 for _, r, st, _ in scored if RELEVANCE_WEIGHT * r + STRENGTH_WEIGHT * st >= theta - 1e-9) / n)
    return {"queries": len(matches), "matches_p50": statistics.median(matches) if matches else 0,
            "skippable": {k: {"p50": statistics.median(v), "mean": statistics.fmean(v)} for k, v in shares.items() if v}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=60, help="generated queries drawn (some are left out, see above)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    db = S.store_path("mixed", a.size)
    if not db.exists():
        print(f"no cached store at {db}: build it with python bench/scale.py --sizes {a.size} --only recall", file=sys.stderr)
        return 2
    res = {"machine": machine(), "size": a.size, **measure(db, a.queries)}
    if a.json:
        print(json.dumps(res, indent=2))
        return 0
    print(f"bound headroom at {a.size:,} memories: {res['queries']} queries, {res['matches_p50']:,.0f} matches at p50")
    print(table(["bound", "share of matches skippable, p50", "mean"],
                [[k, f"{v['p50']:.1%}", f"{v['mean']:.1%}"] for k, v in res["skippable"].items()]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
