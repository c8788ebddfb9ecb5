"""Retrieval quality on LoCoMo: are the evidence turns of a question in the top k?

Usage::

    python bench/locomo.py PATH/locomo.json [--k 1 5 10 25] [--mode hybrid] [--json] [--pg URL]
                           [--limit-conversations N] [--neighbours 2] [--context-weight W]
                           [--no-date] [--no-caption] [--as-claims] [--no-counted]

For each conversation a fresh store is built in a temporary folder. Each session becomes
one source ingested with :meth:`Ledger.ingest_chunks`, one chunk per turn, written as
``[<session date>] <speaker>: <text> (image: <blip caption>)``, so every turn is also
indexed with its neighbours in the session as low-weight context (docs/design.md, retrieval
notes). Every question is then run through :meth:`Ledger.search` (uncounted, so the
store does not change while it is measured) and, in a second pass, through
:meth:`Ledger.recall` (counted) to show that counting reads does not change quality.

Metrics (per question, then averaged over questions):

* ``R@k`` = |evidence turns in the top k| / |evidence turns|. This is the LoCoMo paper's
  retrieval recall@k (Maharana et al. 2024, Table 3: "fraction of the ground-truth
  evidence retrieved in the top-k"), averaged per question.
* ``Hit@k`` = 1 if at least one evidence turn is in the top k.
* ``MRR`` = 1 / rank of the first evidence turn within the top max(k) (0 if none).

Evidence ids are normalised (``D8:6; D9:17`` is split, ``D30:05`` = ``D30:5``); ids that
name no turn are dropped, and a question left with no evidence is skipped and counted.
The headline is categories 1-4 (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop);
category 5 (adversarial) is reported separately, as memory papers do.

A chunk's strength is its source's trust, so counting reads cannot move chunks: the
counted pass matters for ``--as-claims``, where each turn is a claim written through
:meth:`Ledger.remember` (no neighbour context) and hits, readers and freshness change
with every recall.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import dist, import_ledger, machine, pg_schema, table  # noqa: E402

import_ledger()
from ledger.service import Ledger  # noqa: E402

CATEGORY = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
HEADLINE = (1, 2, 3, 4)
_DIA = re.compile(r"D\s*(\d+)\s*:\s*(\d+)")


def dia_key(s: str) -> tuple[int, int] | None:
    m = _DIA.fullmatch(s.strip())
    return (int(m.group(1)), int(m.group(2))) if m else None


def evidence_keys(ev) -> list[tuple[int, int]]:
    out = []
    for item in ev or []:
        for m in _DIA.finditer(str(item)):
            k = (int(m.group(1)), int(m.group(2)))
            if k not in out:
                out.append(k)
    return out


def sessions(conv: dict) -> list[tuple[int, str, list[dict]]]:
    """``[(n, date, turns)]`` in session order."""
    out = []
    for key, turns in conv.items():
        m = re.fullmatch(r"session_(\d+)", key)
        if m and isinstance(turns, list) and turns:
            out.append((int(m.group(1)), conv.get(f"{key}_date_time", ""), turns))
    return sorted(out)


def turn_text(date: str, turn: dict, *, with_date: bool = True, with_caption: bool = True) -> str:
    text = f"{turn.get('speaker', '?')}: {turn.get('text', '')}"
    if with_date and date:
        text = f"[{date}] {text}"
    cap = turn.get("blip_caption")
    if with_caption and cap:
        text += f" (image: {cap})"
    return text


def build(led: Ledger, sample: dict, args) -> dict[tuple[int, int], str]:
    """Ingest every session of one conversation; return dia key -> memory id."""
    conv = sample["conversation"]
    ids: dict[tuple[int, int], str] = {}
    for n, date, turns in sessions(conv):
        chunks = [turn_text(date, t, with_date=not args.no_date, with_caption=not args.no_caption) for t in turns]
        if args.as_claims:
            # Each turn a claim written by its speaker: no neighbour context, and a claim's
            # strength moves with counted reads, unlike a chunk's.
            for t, text in zip(turns, chunks):
                k = dia_key(t.get("dia_id", ""))
                mid = led.remember(text, cluster="people", agent=str(t.get("speaker", "locomo")).lower()).memory.id
                if k is not None:
                    ids[k] = mid
            continue
        res = led.ingest_chunks(f"{sample.get('sample_id', 'conv')}-session_{n}.txt", chunks, cluster="people",
                                agent="locomo", trust=0.75, neighbours=args.neighbours)
        mids = led.store.source_memory_ids(res.source_id, "chunk")
        assert len(mids) == len(turns), "a turn was dropped as empty"
        for t, mid in zip(turns, mids):
            k = dia_key(t.get("dia_id", ""))
            if k is not None:
                ids[k] = mid
    return ids


def run_questions(led: Ledger, sample: dict, ids: dict, args, *, counted: bool) -> tuple[list[dict], int]:
    kmax = max(args.k)
    rows, skipped = [], 0
    for qa in sample["qa"]:
        cat = qa.get("category")
        ev = [ids[k] for k in evidence_keys(qa.get("evidence")) if k in ids]
        if not ev:
            skipped += 1
            continue
        t0 = time.perf_counter()
        if counted:
            res = led.recall(qa["question"], agent="locomo-bench", limit=kmax, mode=args.mode)
        else:
            res = led.search(qa["question"], limit=kmax, mode=args.mode)
        wall = (time.perf_counter() - t0) * 1000
        ranked = [m.id for m in res.hits]
        evs = set(ev)
        first = next((i + 1 for i, mid in enumerate(ranked) if mid in evs), None)
        row = {"cat": cat, "n_ev": len(evs), "mrr": 1.0 / first if first else 0.0, "ms": wall, "search_ms": res.took_ms,
               "path": led.store.search_path}
        for k in args.k:
            found = len(evs.intersection(ranked[:k]))
            row[f"R@{k}"] = found / len(evs)
            row[f"Hit@{k}"] = 1.0 if found else 0.0
        rows.append(row)
    return rows, skipped


def summarise(rows: list[dict], ks) -> dict:
    if not rows:
        return {"questions": 0}
    n = len(rows)
    out = {"questions": n}
    for k in ks:
        out[f"R@{k}"] = round(100 * sum(r[f"R@{k}"] for r in rows) / n, 1)
    for k in ks:
        out[f"Hit@{k}"] = round(100 * sum(r[f"Hit@{k}"] for r in rows) / n, 1)
    out["MRR"] = round(sum(r["mrr"] for r in rows) / n, 3)
    return out


def report(rows: list[dict], ks) -> dict:
    head = [r for r in rows if r["cat"] in HEADLINE]
    out = {"headline (cat 1-4)": summarise(head, ks)}
    for c in sorted({r["cat"] for r in rows}):
        out[f"{c} {CATEGORY.get(c, '?')}"] = summarise([r for r in rows if r["cat"] == c], ks)
    out["latency_ms"] = dist([r["ms"] for r in head])
    # How each question was ranked: every match scored, or only those the top-k bound
    # lets reach the page (docs/search.md "Top-k"); Store.search_path.
    out["paths"] = {p: sum(r["path"] == p for r in head) for p in sorted({r["path"] for r in head})}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("path", type=Path, help="LoCoMo JSON (list of conversations)")
    ap.add_argument("--k", type=int, nargs="+", default=[1, 5, 10, 25])
    ap.add_argument("--mode", default="hybrid", choices=("hybrid", "keyword", "fuzzy"))
    ap.add_argument("--limit-conversations", type=int, default=None)
    ap.add_argument("--neighbours", type=int, default=2, help="turns on each side indexed as context (default 2)")
    ap.add_argument("--context-weight", type=float, default=None, help="override the context column's BM25 weight (experiment)")
    ap.add_argument("--no-date", action="store_true", help="leave the session date out of the text (experiment)")
    ap.add_argument("--no-caption", action="store_true", help="leave image captions out of the text (experiment)")
    ap.add_argument("--no-counted", action="store_true", help="skip the second, counted (recall) pass")
    ap.add_argument("--as-claims", action="store_true", help="store turns as claims through remember (no neighbour context)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--out", type=Path, help="also write the JSON result to this file")
    ap.add_argument("--pg", metavar="URL", help="build each conversation's store on this PostgreSQL server (a fresh "
                    "schema each, dropped afterwards) instead of a SQLite file")
    args = ap.parse_args(argv)
    args.k = sorted(set(args.k))

    if args.context_weight is not None:
        from ledger.store import store as store_mod
        store_mod.CONTEXT_WEIGHT = args.context_weight

    data = json.loads(args.path.read_text(encoding="utf-8"))
    if args.limit_conversations:
        data = data[: args.limit_conversations]
    passes = {"search": [], "recall": []}
    skipped = 0
    turns = 0
    t_build = 0.0
    with tempfile.TemporaryDirectory(prefix="ledger-locomo-") as tmp:
        for i, sample in enumerate(data):
            with contextlib.ExitStack() as stack:
                target = stack.enter_context(pg_schema(args.pg, "locomo")) if args.pg else Path(tmp) / f"conv{i}.db"
                led = stack.enter_context(Ledger.open(target))
                t0 = time.perf_counter()
                ids = build(led, sample, args)
                t_build += time.perf_counter() - t0
                turns += len(ids)
                rows, sk = run_questions(led, sample, ids, args, counted=False)
                passes["search"] += rows
                skipped += sk
                if not args.no_counted:
                    passes["recall"] += run_questions(led, sample, ids, args, counted=True)[0]
            print(f"  {sample.get('sample_id', i)}: {len(ids)} turns, {len(rows)} questions", file=sys.stderr)

    result = {
        "bench": "locomo",
        "machine": machine(),
        "data": str(args.path),
        "engine": "postgresql" if args.pg else "sqlite",
        "conversations": len(data),
        "turns": turns,
        "questions_skipped_no_evidence": skipped,
        "settings": {"mode": args.mode, "neighbours": args.neighbours,
                     "context_weight": args.context_weight, "date": not args.no_date, "caption": not args.no_caption,
                     "as_claims": args.as_claims},
        "build_s": round(t_build, 2),
        "search": report(passes["search"], args.k),
    }
    if passes["recall"]:
        result["recall"] = report(passes["recall"], args.k)

    if args.out:
        args.out.write_text(json.dumps(result, indent=2))
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    m = result["machine"]
    print(f"LoCoMo retrieval · {args.path.name} · {len(data)} conversations, {turns} turns · mode {args.mode}, "
          f"{'turns as claims' if args.as_claims else f'neighbours {args.neighbours}'} · {m['date']} · {m['nproc']} cores, Python {m['python']}, SQLite {m['sqlite']}")
    if skipped:
        print(f"({skipped} questions skipped: no evidence id names a turn)")
    cols = [f"R@{k}" for k in args.k] + ["MRR"] + [f"Hit@{k}" for k in args.k]
    for name, rep in (("search (uncounted)", result["search"]), ("recall (counted)", result.get("recall"))):
        if not rep:
            continue
        print(f"\n{name}")
        rows = [[group, s["questions"], *(s.get(c, "") for c in cols)] for group, s in rep.items() if group not in ("latency_ms", "paths")]
        print(table(["group", "questions", *cols], rows))
        lat = rep["latency_ms"]
        print(f"query latency cat 1-4 (ms): p50 {lat['p50']:.2f}  p95 {lat['p95']:.2f}  max {lat['max']:.2f}  (n={lat['n']})")
        print("ranking paths cat 1-4: " + ", ".join(f"{p} {n}" for p, n in rep["paths"].items()))
    print("\nreference (full LoCoMo, cat 1-4): DRAGON R@5 58.8 R@10 67.5 R@25 79.9 · original LEDGER R@10 55.1 · target R@10 >= 80")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
