"""LoCoMo on both engines, question by question: which questions rank their evidence
differently on SQLite and PostgreSQL, and whether the ranking function explains it.

Usage::

    python bench/locomo_engines.py PATH/locomo.json --pg URL [--limit-conversations N] [--list] [--json]

For each conversation the same turns are ingested into a SQLite store and a PostgreSQL
store (bench/locomo.py's ``build``), and every question is searched on both. Three
rankings are compared:

- ``sqlite``: FTS5's BM25 (what SQLite ships);
- ``postgresql``: ``ts_rank`` weighted by BM25's idf (what PostgreSQL ships,
  docs/search.md "On PostgreSQL");
- ``postgresql, BM25``: PostgreSQL's own matches (the rows its ``tsvector`` query
  finds, with its stemmer) re-scored in Python with FTS5's BM25 formula exactly:
  ``idf = max(ln((N - n + 0.5) / (n + 0.5)), 1e-6)``, term frequency
  ``f = (text occurrences) + 0.3 * (context occurrences)`` read from the row's
  ``tsvector``, ``idf * f * (k1 + 1) / (f + k1 * (1 - b + b * D / avgD))`` with
  k1 = 1.2, b = 0.75 and D the row's words in both columns. ``--no-length`` sets b = 0.

If the third ranking gives SQLite's figures, the engines match the same rows and the
whole difference is the ranking function, not a bug in matching. It also reports how
many questions' match sets differ between the engines (stemmers differ: Porter on
SQLite, Snowball English on PostgreSQL). The re-scoring is slow (Python over every
matched row); it is an experiment, not a way to search.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import import_ledger, machine, pg_schema, table  # noqa: E402

import_ledger()
from locomo import CATEGORY, HEADLINE, build, evidence_keys  # noqa: E402

from ledger.service import Ledger  # noqa: E402
from ledger.store import textindex_pg as P  # noqa: E402
from ledger.vocab import CONTEXT_WEIGHT, FUZZY_WEIGHT  # noqa: E402

K1, B = 1.2, 0.75
_LEX = re.compile(r"'((?:[^']|'')*)'(?::([\dA-D,]+))?")


class Bm25:
    """FTS5's BM25 over PostgreSQL's matches (see the module docstring); ``b`` = 0
    leaves length out."""

    def __init__(self, b: float = B):
        self.b = b
        self.lengths: dict[int, int] = {}
        self.avg = 1.0

    def load(self, conn) -> None:
        rows = conn.execute("SELECT seq, text, context FROM memories_fts").fetchall()
        self.lengths = {r[0]: len(r[1].split()) + len(r[2].split()) for r in rows}
        self.avg = sum(self.lengths.values()) / max(1, len(self.lengths))

    def scores(self, conn, terms: list[str]) -> dict[int, float]:
        n_rows, out = len(self.lengths), {}
        for t in dict.fromkeys(terms):
            q = conn.execute("SELECT to_tsquery('english', ?)::text", (t,)).fetchone()[0] or ""
            m = re.fullmatch(r"'([^']*)'(:\*)?", q)
            rows = conn.execute("SELECT seq, tsv::text FROM memories_fts WHERE tsv @@ to_tsquery('english', ?)", (t,)).fetchall()
            idf = max(math.log((n_rows - len(rows) + 0.5) / (len(rows) + 0.5)), 1e-6)
            for seq, tsv in rows:
                f = 1.0  # a phrase: counted once (rare in LoCoMo's questions)
                if m:
                    lex, prefix, f = m.group(1), bool(m.group(2)), 0.0
                    for lx, pos in _LEX.findall(tsv):
                        if lx == lex or (prefix and lx.startswith(lex)):
                            f += sum(1.0 if p.endswith("A") else CONTEXT_WEIGHT for p in (pos or "").split(","))
                norm = 1 - self.b + self.b * self.lengths.get(seq, 0) / self.avg
                out[seq] = out.get(seq, 0.0) + idf * f * (K1 + 1) / (f + K1 * norm)
        return out

    def fill_relevance(self, conn, raw_terms, mode, parts=None) -> bool:
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS ledger_rel (seq BIGINT PRIMARY KEY, r DOUBLE PRECISION NOT NULL)")
        conn.execute("DELETE FROM pg_temp.ledger_rel")
        exact, fuzzy, side = parts or P.term_lists(conn, raw_terms, mode)
        sc = self.scores(conn, exact) if exact else {}
        if side:  # compounds and CJK: as shipped (none in LoCoMo's questions)
            params: list = []
            for seq, p in conn.execute(P.rank_sql("side", P.weighted_terms(conn, "side", side), params), params).fetchall():
                sc[seq] = sc.get(seq, 0.0) + p
        for seq, p in sc.items():
            conn.execute("INSERT INTO pg_temp.ledger_rel (seq, r) VALUES (?, ?)", (seq, p / (p + 1.0)))
        if fuzzy:
            for seq, p in self.scores(conn, fuzzy).items():
                conn.execute("INSERT INTO pg_temp.ledger_rel (seq, r) VALUES (?, ?) ON CONFLICT (seq) DO NOTHING",
                             (seq, FUZZY_WEIGHT * p / (p + 1.0)))
        return conn.execute("SELECT 1 FROM pg_temp.ledger_rel LIMIT 1").fetchone() is not None


@contextlib.contextmanager
def rescored(bm: Bm25):
    shipped = P.fill_relevance
    P.fill_relevance = bm.fill_relevance
    try:
        yield
    finally:
        P.fill_relevance = shipped


def _matches(led: Ledger, question: str) -> set[str]:
    from ledger.query import parse
    from ledger.store import textindex as TI

    conn = led.store._conn
    TI.fill_relevance(conn, parse(question, 0).terms, "hybrid")
    tbl = "pg_temp.ledger_rel" if getattr(conn, "is_postgres", False) else "temp.ledger_rel"
    return {r[0] for r in conn.execute(f"SELECT m.text FROM {tbl} x JOIN memories m ON m.seq = x.seq")}


def r_at(ranked: list, ev: list, k: int) -> float:
    return len(set(ev).intersection(ranked[:k])) / len(ev)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("path", type=Path)
    ap.add_argument("--pg", metavar="URL", required=True)
    ap.add_argument("--limit-conversations", type=int)
    ap.add_argument("--no-length", action="store_true", help="the re-scoring without length normalisation (b = 0)")
    ap.add_argument("--list", action="store_true", help="list the questions whose R@10 differs")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    data = json.loads(a.path.read_text(encoding="utf-8"))[: a.limit_conversations]
    opts = argparse.Namespace(no_date=False, no_caption=False, as_claims=False, neighbours=2)
    rows = []
    with tempfile.TemporaryDirectory(prefix="ledger-locomo-engines-") as tmp:
        for i, sample in enumerate(data):
            with contextlib.ExitStack() as stack:
                url = stack.enter_context(pg_schema(a.pg, "locoeng"))
                ls = stack.enter_context(Ledger.open(Path(tmp) / f"c{i}.db"))
                lp = stack.enter_context(Ledger.open(url))
                keys = {"s": build(ls, sample, opts), "p": build(lp, sample, opts)}
                back = {e: {v: k for k, v in ids.items()} for e, ids in keys.items()}
                bm = Bm25(0.0 if a.no_length else B)
                bm.load(lp.store._conn)
                for qi, qa in enumerate(sample["qa"]):
                    ev = [k for k in evidence_keys(qa.get("evidence")) if k in keys["s"]]
                    if not ev:
                        continue
                    ranks = {"sqlite": [back["s"].get(h.id) for h in ls.search(qa["question"], limit=25).hits],
                             "postgresql": [back["p"].get(h.id) for h in lp.search(qa["question"], limit=25).hits]}
                    with rescored(bm):
                        ranks["postgresql, BM25"] = [back["p"].get(h.id) for h in lp.search(qa["question"], limit=25).hits]
                    same = _matches(ls, qa["question"]) == _matches(lp, qa["question"])
                    rows.append({"conv": sample.get("sample_id", i), "q": qi, "cat": qa.get("category"),
                                 "question": qa["question"], "ev": ev, "same_matches": same,
                                 **{f"R@10 {k}": r_at(v, ev, 10) for k, v in ranks.items()},
                                 "ranks": {k: [v.index(e) + 1 if e in v else None for e in ev] for k, v in ranks.items()}})
            print(f"  {sample.get('sample_id', i)}: {len(rows)} questions so far", file=sys.stderr)
    engines = ("sqlite", "postgresql", "postgresql, BM25")
    report = {"machine": machine(), "questions": len(rows), "noLength": a.no_length, "groups": {},
              "matchSetsDiffer": sum(not r["same_matches"] for r in rows)}
    table_rows = []
    for name, sel in [("headline (cat 1-4)", lambda r: r["cat"] in HEADLINE)] + [
            (f"{c} {CATEGORY[c]}", (lambda c: lambda r: r["cat"] == c)(c)) for c in sorted(CATEGORY)]:
        g = [r for r in rows if sel(r)]
        if not g:
            continue
        differ = [r for r in g if r["R@10 sqlite"] != r["R@10 postgresql"]]
        fixed = [r for r in differ if r["R@10 postgresql, BM25"] == r["R@10 sqlite"]]
        vals = {e: round(100 * sum(r[f"R@10 {e}"] for r in g) / len(g), 1) for e in engines}
        report["groups"][name] = {"questions": len(g), **vals, "differ": len(differ), "sameWithBm25": len(fixed),
                                  "sqliteBetter": sum(r["R@10 sqlite"] > r["R@10 postgresql"] for r in differ)}
        table_rows.append([name, len(g), *vals.values(), len(differ), report["groups"][name]["sqliteBetter"], len(fixed)])
    if a.json:
        print(json.dumps({**report, "rows": rows if a.list else None}, indent=2))
        return 0
    print(f"LoCoMo R@10 on both engines · {a.path.name} · {len(rows)} questions · {report['machine']['date']}"
          + (" · re-scoring without length (b = 0)" if a.no_length else ""))
    print(table(["group", "questions", "SQLite", "PostgreSQL", "PostgreSQL, BM25", "differ", "SQLite better",
                 "same as SQLite with BM25"], table_rows))
    print(f"questions whose matched rows differ between the engines: {report['matchSetsDiffer']}")
    if a.list:
        for r in rows:
            if r["R@10 sqlite"] != r["R@10 postgresql"]:
                print(f"- {r['conv']} q{r['q']} ({CATEGORY.get(r['cat'])}) {r['question']!r}: evidence ranks "
                      + "; ".join(f"{k} {v}" for k, v in r["ranks"].items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
