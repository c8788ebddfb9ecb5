"""Measure the lexical contradiction proposer against a labelled set of claim pairs.

Usage::

    python bench/proposer.py [PATH] [--json]

PATH defaults to ``tests/data/conflict_pairs.jsonl``: one JSON object per line with
``a``, ``b`` (claim texts), ``contradicts`` (bool), ``note`` and optionally ``hard``
(bool; the report then also gives the figures for the hard and the plain rows). A pair counts as
*proposed* when :func:`ledger.conflicts.signals.suspect` returns a suspicion. The
report gives precision, recall, F1, the confusion counts, and lists every miss
(contradiction not proposed) and false alarm (compatible pair proposed).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PATH = ROOT / "tests" / "data" / "conflict_pairs.jsonl"

try:
    from ledger.conflicts.signals import suspect
except ImportError:  # running from a checkout without the package installed
    sys.path.insert(0, str(ROOT / "src"))
    from ledger.conflicts.signals import suspect


@dataclass
class Report:
    path: str
    pairs: int
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    precision: float = 0.0
    recall: float = 0.0
    f1: float = 0.0
    misses: list[dict] = field(default_factory=list)
    false_alarms: list[dict] = field(default_factory=list)
    # for sets whose rows carry "hard": the same figures for the hard and plain rows
    subsets: dict[str, dict] = field(default_factory=dict)


def load_pairs(path: Path) -> list[dict]:
    """The labelled pairs, skipping blank lines; raises ValueError on a malformed line."""
    pairs = []
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            row = json.loads(line)
            if not isinstance(row.get("contradicts"), bool) or not all(
                isinstance(row.get(k), str) for k in ("a", "b")
            ):
                raise ValueError(f"{path}:{lineno}: need string a, b and boolean contradicts")
            pairs.append(row)
    return pairs


def evaluate(pairs: list[dict], path: str = "") -> Report:
    report = Report(path=path, pairs=len(pairs))
    for row in pairs:
        s = suspect(row["a"], row["b"])
        entry = {
            "a": row["a"],
            "b": row["b"],
            "note": row.get("note", ""),
            "overlap": s.overlap if s else None,
            "signals": list(s.signals) if s else [],
            "score": s.score if s else None,
        }
        if row["contradicts"] and s:
            report.tp += 1
        elif row["contradicts"]:
            report.fn += 1
            report.misses.append(entry)
        elif s:
            report.fp += 1
            report.false_alarms.append(entry)
        else:
            report.tn += 1
    _rates(report)
    if path and any("hard" in row for row in pairs):
        for name, flag in (("hard", True), ("plain", False)):
            sub = evaluate([r for r in pairs if bool(r.get("hard")) == flag])
            report.subsets[name] = {k: getattr(sub, k) for k in ("pairs", "tp", "fp", "fn", "tn", "precision", "recall", "f1")}
    return report


def _rates(report: Report) -> None:
    proposed, positives = report.tp + report.fp, report.tp + report.fn
    report.precision = round(report.tp / proposed, 4) if proposed else 0.0
    report.recall = round(report.tp / positives, 4) if positives else 0.0
    p, r = report.precision, report.recall
    report.f1 = round(2 * p * r / (p + r), 4) if p + r else 0.0


def _print_text(report: Report) -> None:
    print(f"labelled set: {report.path} ({report.pairs} pairs)")
    print(f"precision {report.precision:.3f}  recall {report.recall:.3f}  F1 {report.f1:.3f}")
    print(f"TP {report.tp}  FP {report.fp}  FN {report.fn}  TN {report.tn}")
    for name, sub in report.subsets.items():
        print(f"  {name} ({sub['pairs']} pairs): precision {sub['precision']:.3f}  "
              f"recall {sub['recall']:.3f}  (TP {sub['tp']} FP {sub['fp']} FN {sub['fn']} TN {sub['tn']})")
    for title, rows in (("misses", report.misses), ("false alarms", report.false_alarms)):
        print(f"\n{title} ({len(rows)}):")
        for e in rows:
            why = f"  [{', '.join(e['signals'])}; score {e['score']}]" if e["signals"] else ""
            print(f"  - {e['a']!r}\n    vs {e['b']!r}{why}\n    note: {e['note']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    report = evaluate(load_pairs(args.path), str(args.path))
    if args.json:
        json.dump(asdict(report), sys.stdout, indent=2, ensure_ascii=False)
        print()
    else:
        _print_text(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
