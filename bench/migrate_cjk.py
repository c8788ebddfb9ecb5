"""What migration ``m019_cjk_apart`` (CJK runs set apart in the word index, docs/search.md
"Terms") costs a store's first open, beside an open with nothing to migrate.

Prepares a copy of ``--db`` with every migration but m019 applied; with ``--mixed N``,
N memories (every k-th seq) get a Chinese prefix touching their first word
(``设置用`` + text) and are indexed as ledger did before m019, so the migration has rows to
write again. Then, ``--rounds`` times, side by side: a fresh copy is opened once in a
new process (m019 runs) and a copy already migrated is opened (nothing runs). Wall and
CPU time of ``Ledger.open`` + ``close`` in that process, p50/p95 over the rounds.

    .venv/bin/python bench/migrate_cjk.py --db /work/benchstores/mixed-100000-84772a8a7a.db --mixed 0
    .venv/bin/python bench/migrate_cjk.py --db /work/benchstores/mixed-100000-84772a8a7a.db --mixed 5000
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
from pathlib import Path

from _common import first_and_later_opens, import_ledger, machine

import_ledger()

from ledger import terms as T  # noqa: E402
from ledger.store import migrations as M  # noqa: E402
from ledger.store import textindex  # noqa: E402
from ledger.store.connection import connect  # noqa: E402


def prepare(src: Path, dst: Path, mixed: int) -> int:
    """Copy ``src`` to ``dst`` with every migration but m019 applied and ``mixed``
    memories rewritten as mixed CJK/Latin text indexed the old way; returns how many."""
    shutil.copy(src, dst)
    saved = list(M.MIGRATIONS)
    M.MIGRATIONS[:] = [m for m in saved if m[0] != "m019_cjk_apart"]
    apart = T.set_apart_cjk
    conn = connect(dst)
    try:
        M.migrate(conn)
        n = 0
        if mixed:
            total = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
            step = max(1, total // mixed)
            rows = conn.execute("SELECT seq, text FROM memories WHERE seq % ? = 0 LIMIT ?", (step, mixed)).fetchall()
            T.set_apart_cjk = lambda text: text  # index as before m019
            with M.atomic(conn):
                for seq, text in rows:
                    conn.execute("UPDATE memories SET text = ? WHERE seq = ?", ("设置用" + text, seq))
                    ctx = textindex.unindex(conn, seq)
                    textindex.index(conn, seq, "设置用" + text, ctx)
            n = len(rows)
    finally:
        T.set_apart_cjk = apart
        M.MIGRATIONS[:] = saved
        conn.close()
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--mixed", type=int, default=0, help="memories rewritten as mixed CJK/Latin text")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="migrate-cjk-") as d:
        d = Path(d)
        prep = d / "prep.db"
        n = prepare(args.db, prep, args.mixed)
        opens, done = first_and_later_opens(prep, args.rounds)
        c = connect(done)
        redone = c.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH '\"设置用\"'").fetchone()[0]
        c.close()
        print(json.dumps({
            "machine": machine(), "load": os.getloadavg(), "store": str(args.db), "mixed": n, "set_apart_rows": redone,
            **opens,
        }, indent=1))


if __name__ == "__main__":
    main()
