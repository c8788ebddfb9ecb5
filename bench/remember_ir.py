"""Instructions a fresh ``ledger remember`` process executes, against ``python -c pass``.

Usage::

    python bench/remember_ir.py --db STORE [--n 20] [--baseline-venv OTHER/.venv]

On a shared machine the wall time of a short process mostly measures waiting for a core,
and even its CPU time moves with what runs beside it. The number of instructions it
executes in user space does not: ``valgrind --tool=callgrind`` counts them (about 60x
slower than a plain run, so keep ``--n`` small). Kernel time (SQLite's page reads) is
not counted, so this complements ``bench/startup.py``'s CPU columns, it does not replace
them.

Claims are drawn as ``bench/startup.py`` draws them (the first 12 words of a stored
memory plus a round number, into the cluster of another); each side writes into its own
copy of ``--db``, in the same order. Prints p50 and mean millions of instructions per
side and the p50 ratio to ``python -c pass`` (run under the same valgrind).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

_COLLECTED = re.compile(r"Collected : (\d+)")


def _count(cmd: list[str], env: dict) -> float:
    """Millions of instructions ``cmd`` executed (user space), under callgrind."""
    r = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *cmd],
                       capture_output=True, text=True, env=env)
    m = _COLLECTED.search(r.stderr)
    if not m:
        raise RuntimeError(f"no count from valgrind for {cmd[:3]}: {r.stderr[-400:]}")
    return int(m.group(1)) / 1e6


def _claims(db: Path, n: int, seed: int = 11) -> list[tuple[str, str]]:
    import sqlite3

    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = con.execute("SELECT text, cluster_id FROM memories WHERE kind = 'claim' AND deleted_at IS NULL").fetchall()
    con.close()
    rng = random.Random(seed)
    return [(" ".join(rng.choice(rows)[0].split()[:12]) + f" (ir {i})", rng.choice(rows)[1]) for i in range(n)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path, required=True, help="a store (copied, never written)")
    ap.add_argument("--n", type=int, default=20, help="claims, one fresh process each per side")
    ap.add_argument("--baseline-venv", type=Path, help="another checkout's venv, counted in the same rounds")
    a = ap.parse_args(argv)
    if not shutil.which("valgrind"):
        print("valgrind is not installed", file=sys.stderr)
        return 2
    venvs = {"this": Path(sys.prefix)} | ({"before": a.baseline_venv} if a.baseline_venv else {})
    # Bytecode written once: without .pyc files every run would count compiling the modules.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"NO_COLOR": "1", "LEDGER_AGENT": "bench"}
    with tempfile.TemporaryDirectory(prefix="ledger-ir-") as tmp:
        stores = {}
        for name, venv in venvs.items():
            stores[name] = Path(tmp) / f"{name}.db"
            shutil.copyfile(a.db, stores[name])
            subprocess.run([str(venv / "bin" / "ledger"), "remember", "Warm-up claim of the instruction bench",
                            "--cluster", _claims(a.db, 1)[0][1], "--db", str(stores[name])], capture_output=True, env=env)
        counts: dict[str, list[float]] = {name: [] for name in venvs}
        for text, cluster in _claims(a.db, a.n):
            for name, venv in venvs.items():
                counts[name].append(_count([str(venv / "bin" / "python"), str(venv / "bin" / "ledger"), "remember", text,
                                            "--cluster", cluster, "--db", str(stores[name])], env))
        floor = _count([sys.executable, "-c", "pass"], env)
    print(f"python -c pass: {floor:.1f} M instructions; {a.n} remember processes per side on copies of {a.db.name}")
    for name, v in counts.items():
        p50 = statistics.median(v)
        print(f"{name:>7}: p50 {p50:.1f} M, mean {statistics.mean(v):.1f} M, p50 / pass {p50 / floor:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
