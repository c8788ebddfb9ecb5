"""What migration ``m021_versions_apart`` (a version's number set apart from its word in
the word index, docs/search.md "Terms") costs a store's first open, beside an open with
nothing to migrate.

Prepares a copy of ``--db`` with every migration but m021 applied (the bench stores of
``bench/scale.py`` write versions such as ``v1.14`` into about 3 texts in 10, so the
migration has rows to write again). Then, ``--rounds`` times, side by side: a fresh copy
is opened once in a new process (m021 runs) and a copy already migrated is opened
(nothing runs). Wall and CPU time of ``Ledger.open`` + ``close`` in that process,
p50/p95 over the rounds. ``--db`` is only read (copy a shared store to /tmp first).

    cp /work/benchstores/mixed-100000-84772a8a7a.db /tmp/qs/m100k.db
    .venv/bin/python bench/migrate_versions.py --db /tmp/qs/m100k.db
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

from ledger.store import migrations as M  # noqa: E402
from ledger.store.connection import connect  # noqa: E402

NAME = "m021_versions_apart"


def prepare(src: Path, dst: Path) -> None:
    """Copy ``src`` to ``dst`` with every migration but m021 applied."""
    shutil.copy(src, dst)
    saved = list(M.MIGRATIONS)
    M.MIGRATIONS[:] = [m for m in saved if m[0] != NAME]
    conn = connect(dst)
    try:
        M.migrate(conn)
    finally:
        M.MIGRATIONS[:] = saved
        conn.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="migrate-versions-", dir="/tmp") as d:
        d = Path(d)
        prep = d / "prep.db"
        prepare(args.db, prep)
        c = connect(prep)
        glued = c.execute("SELECT count(*) FROM memories_fts WHERE text GLOB '*[A-Za-z][0-9]*' "
                          "OR context GLOB '*[A-Za-z][0-9]*'").fetchone()[0]
        total = c.execute("SELECT count(*) FROM memories").fetchone()[0]
        c.close()
        opens, done = first_and_later_opens(prep, args.rounds)
        c = connect(done)
        split = c.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH '\"v\"'").fetchone()[0]
        c.close()
        print(json.dumps({
            "machine": machine(), "load": os.getloadavg(), "store": str(args.db), "memories": total,
            "rows_with_a_letter_before_a_digit": glued, "rows_holding_v_as_a_word_after": split,
            **opens,
        }, indent=1))


if __name__ == "__main__":
    main()
