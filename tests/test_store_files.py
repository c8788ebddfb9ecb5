"""Defects a fresh-user pass found in how the store lives on disk, each through real
``ledger`` processes on real SQLite files: a new store is one file, a store made
writable again is writable, damage is reported, a mistyped ``--db`` is not an empty
store, ``--db`` before the command, and an interrupted import says what it kept."""

from __future__ import annotations

import shutil
import sqlite3

import pytest
from test_cli import ok, remember

from ledger.store.migrations import MIGRATIONS

pytestmark = pytest.mark.sqlite_only


# ------------------------------------------------------------ 1. a new store is one file
def _tables_and_migrations(path) -> tuple[set[str], int]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        n = conn.execute("SELECT count(*) FROM _migrations").fetchone()[0] if "_migrations" in tables else 0
        return tables, n
    finally:
        conn.close()


@pytest.mark.parametrize("verb", [("remember", "Uses pytest", "--cluster", "code"), ("stats",)])
def test_a_new_store_file_alone_holds_the_schema(cli, tmp_path, verb):
    """The agent verbs end with os._exit (no close, no checkpoint): creating a store
    checkpoints the migrations' writes into the file, so copying the .db alone gives a
    store with every table and migration, not an empty file."""
    ok(*cli(*verb))
    copy = tmp_path / "copy" / "ledger.db"
    copy.parent.mkdir()
    shutil.copy(cli.db, copy)  # the .db alone, without its -wal/-shm
    tables, n = _tables_and_migrations(copy)
    assert n == len(MIGRATIONS) and {"memories", "clusters"} <= tables, (n, tables)
    # the copy opens as a current store: its clusters are there
    assert "prefs" in ok(*cli("clusters", db=copy))


def test_an_ordinary_write_keeps_the_fast_exit_and_loses_nothing(cli):
    """After creation, a remember goes to the WAL (no checkpoint per call); the next
    process sees it, and `ledger export` carries it."""
    ok(*cli("stats"))
    mid = remember(cli, "Deploys go out on Tuesdays", "proc")
    assert mid in ok(*cli("export"))
