"""Helpers shared by the benchmarks: import path, machine facts, percentiles, tables.

Stdlib only. Every bench imports ``ledger`` through :func:`import_ledger` so it also runs
from a checkout where the package is not installed.
"""

from __future__ import annotations

import contextlib
import os
import platform
import sqlite3
import statistics
import sys
import time
from pathlib import Path
from typing import Iterable, Sequence

ROOT = Path(__file__).resolve().parent.parent
# Where benchmark stores are cached: bench/out (git-ignored) unless $LEDGER_BENCH_OUT names
# another folder (a 1M store takes half an hour to build; share it between checkouts).
OUT = Path(os.environ.get("LEDGER_BENCH_OUT") or ROOT / "bench" / "out")


def import_ledger() -> None:
    """Make ``import ledger`` work from a plain checkout."""
    try:
        import ledger  # noqa: F401
    except ImportError:
        sys.path.insert(0, str(ROOT / "src"))


def machine() -> dict:
    """What a figure was measured on: cores, Python, SQLite, platform, date (UTC)."""
    return {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "nproc": os.cpu_count(),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "platform": platform.platform(terse=True),
    }


def pct(values: Sequence[float], p: float) -> float:
    """The ``p``-th percentile (0-100) by linear interpolation; NaN for no values."""
    if not values:
        return float("nan")
    xs = sorted(values)
    if len(xs) == 1:
        return xs[0]
    k = (len(xs) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def dist(values: Sequence[float]) -> dict:
    """p50 / p95 / min / max / mean / n of a list of timings (ms)."""
    if not values:
        return {"n": 0}
    return {
        "n": len(values),
        "p50": round(pct(values, 50), 3),
        "p95": round(pct(values, 95), 3),
        "min": round(min(values), 3),
        "max": round(max(values), 3),
        "mean": round(statistics.fmean(values), 3),
    }


def table(headers: Sequence[str], rows: Iterable[Sequence], *, markdown: bool = False) -> str:
    """A plain-text (or GitHub markdown) table, numbers right-aligned."""
    rows = [[_cell(c) for c in r] for r in rows]
    heads = [str(h) for h in headers]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(heads)]
    numeric = [all(_is_num(r[i]) for r in rows) if rows else False for i in range(len(heads))]

    def line(cells):
        out = []
        for i, c in enumerate(cells):
            out.append(c.rjust(widths[i]) if numeric[i] else c.ljust(widths[i]))
        return ("| " + " | ".join(out) + " |") if markdown else "  ".join(out).rstrip()

    sep = ("|" + "|".join(("-" * (w + 1) + ":") if numeric[i] else ("-" * (w + 2)) for i, w in enumerate(widths)) + "|") if markdown \
        else "  ".join("-" * w for w in widths)
    return "\n".join([line(heads), sep, *(line(r) for r in rows)])


def _cell(c) -> str:
    if isinstance(c, float):
        return f"{c:.1f}" if abs(c) >= 10 else f"{c:.2f}"
    return str(c)


def _is_num(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


class Progress:
    """Prints ``label: i/n (rate/s, eta)`` to stderr at most every ``every`` seconds."""

    def __init__(self, label: str, total: int, every: float = 5.0):
        self.label, self.total, self.every = label, total, every
        self.t0 = self.last = time.perf_counter()

    def __call__(self, done: int, force: bool = False) -> None:
        now = time.perf_counter()
        if not force and now - self.last < self.every:
            return
        self.last = now
        el = now - self.t0
        rate = done / el if el > 0 else 0.0
        eta = (self.total - done) / rate if rate > 0 else float("inf")
        print(f"  {self.label}: {done:,}/{self.total:,} ({rate:,.0f}/s, {el:.0f}s elapsed, eta {eta:.0f}s)", file=sys.stderr, flush=True)


@contextlib.contextmanager
def pg_schema(server: str, prefix: str = "bench"):
    """A fresh, empty PostgreSQL store in ``server`` (a ``postgresql://`` URL): its own
    schema, dropped on exit. Yields the store URL (the schema first on the search path,
    pg_trgm reachable in public). ``scripts/pg-test-cluster start DIR`` prints a server URL."""
    import uuid

    import psycopg

    schema = f"{prefix}_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server, autocommit=True) as c:
        c.execute(f"CREATE SCHEMA {schema}")
        c.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    sep = "&" if "?" in server else "?"
    try:
        yield f"{server}{sep}options=-csearch_path%3D{schema}%2Cpublic"
    finally:
        with psycopg.connect(server, autocommit=True) as c:
            c.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
