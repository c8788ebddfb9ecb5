"""Helpers shared by the benchmarks: import path, machine facts, percentiles, tables,
the first open of a store that has a migration to run.

Stdlib only. Every bench imports ``ledger`` through :func:`import_ledger` so it also runs
from a checkout where the package is not installed.
"""

from __future__ import annotations

import contextlib
import os
import platform
import shutil
import sqlite3
import statistics
import subprocess
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


# ------------------------------------------------------------------ migrations' cost
_OPEN = """
import sys, time
from ledger.service import Ledger
w, c = time.perf_counter(), time.process_time()
Ledger.open(sys.argv[1]).close()
print(f"{(time.perf_counter() - w) * 1000:.1f} {(time.process_time() - c) * 1000:.1f}")
"""


def open_once(db: Path) -> tuple[float, float]:
    """(wall ms, CPU ms) of ``Ledger.open(db).close()`` in a new process, which applies
    whatever migration the store still needs."""
    out = subprocess.run([sys.executable, "-c", _OPEN, str(db)], capture_output=True, text=True, check=True,
                         env={**os.environ, "LEDGER_HOME": str(db.parent / "home")})
    wall, cpu = out.stdout.split()
    return float(wall), float(cpu)


def first_and_later_opens(prep: Path, rounds: int) -> tuple[dict, Path]:
    """What a migration costs a store's first open, beside an open with nothing to run:
    ``rounds`` times, side by side, a fresh copy of ``prep`` (a store with the migration
    still to run) is opened once, and a copy migrated once beforehand is opened. Returns
    the wall and CPU distributions (:func:`dist`, ms) under ``first_open_*`` and
    ``later_open_*``, and the migrated copy (beside ``prep``) for the caller to inspect."""
    done = prep.parent / "done.db"
    shutil.copy(prep, done)
    open_once(done)  # migrated once: the "nothing to migrate" side
    first, later = [], []
    for _ in range(rounds):
        run = prep.parent / "run.db"
        shutil.copy(prep, run)
        first.append(open_once(run))
        later.append(open_once(done))
        for p in prep.parent.glob("run.db*"):
            p.unlink()
    return {"first_open_wall_ms": dist([w for w, _ in first]), "first_open_cpu_ms": dist([c for _, c in first]),
            "later_open_wall_ms": dist([w for w, _ in later]), "later_open_cpu_ms": dist([c for _, c in later])}, done
