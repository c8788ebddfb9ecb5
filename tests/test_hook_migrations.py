"""Schema changes and the hook's time budget (docs/watcher.md "Migrations").

A migration that rewrites index rows takes seconds on a large store (m021: about 7 s of
CPU at 100k memories), a hook has 2 s and its harness kills it at 10 s, and a killed
migration rolls back, so every later hook would start it again. A hook therefore applies
pending migrations only to a small store; on a larger one it spools its finished tool
call, answers nothing, and the detached drain process applies them and stores the call.
Real SQLite files, real hook and drain processes."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time

import pytest
from fakes.hooks import post_bash, pre_read

from ledger.errors import StoreUnavailable
from ledger.harness import runner
from ledger.service import Ledger
from ledger.store.connection import connect
from ledger.store.migrations import MIGRATIONS, migrate

LAST = MIGRATIONS[-1][0]


def _store(path, n: int) -> str:
    """A store of ``n`` claims whose newest migration is not recorded (as after an upgrade)."""
    with Ledger.open(path) as led:
        for i in range(n):
            led.remember(f"service {i} listens on port {8000 + i}", cluster="code", agent="a")
    c = sqlite3.connect(path)
    c.execute("DELETE FROM _migrations WHERE name = ?", (LAST,))
    c.commit()
    c.close()
    return str(path)


def _applied(path) -> set[str]:
    c = sqlite3.connect(path)
    try:
        return {r[0] for r in c.execute("SELECT name FROM _migrations")}
    finally:
        c.close()


def _observed(path) -> list[str]:
    c = sqlite3.connect(path)
    try:
        return [r[0] for r in c.execute("SELECT tool_use_id FROM observations ORDER BY id")]
    finally:
        c.close()


def test_migrate_defers_on_a_large_store_and_writes_nothing(tmp_path):
    db = _store(tmp_path / "s.db", 6)
    conn = connect(db)
    try:
        with pytest.raises(StoreUnavailable) as err:
            migrate(conn, defer_above=5)
        assert err.value.reason == "migrating" and LAST in str(err.value)
        assert LAST not in _applied(db)
        assert migrate(conn, defer_above=6) == [LAST]  # at the limit: applied here
    finally:
        conn.close()


def test_a_new_store_is_migrated_by_the_hook_whatever_the_limit(tmp_path, monkeypatch):
    monkeypatch.setenv("LEDGER_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(runner, "HOOK_MIGRATE_AT_MOST", 0)
    db = str(tmp_path / "new.db")
    out = runner.handle_payload("claude-code", json.dumps(post_bash("make", stdout="ok", cwd=tmp_path, tool_use_id="toolu_n")).encode(),
                                None, db=db, drainer=lambda d: pytest.fail("no drain process for a new store"))
    assert out == "" and LAST in _applied(db) and _observed(db) == ["toolu_n"]


def test_a_small_store_is_migrated_by_the_hook_itself(tmp_path, monkeypatch):
    monkeypatch.setenv("LEDGER_HOME", str(tmp_path / "home"))
    db = _store(tmp_path / "s.db", 3)
    asked: list[str] = []
    out = runner.handle_payload("claude-code", json.dumps(post_bash("make", stdout="ok", cwd=tmp_path, tool_use_id="toolu_s")).encode(),
                                None, db=db, drainer=asked.append)
    assert out == "" and asked == [] and LAST in _applied(db) and _observed(db) == ["toolu_s"]


@pytest.mark.parametrize("make", [lambda cwd: post_bash("make", stdout="ok", cwd=cwd, tool_use_id="toolu_l"),
                                  lambda cwd: pre_read(cwd / "app.py", cwd=cwd)])
def test_a_large_store_is_handed_to_the_drain_process(tmp_path, monkeypatch, make):
    home = tmp_path / "home"
    monkeypatch.setenv("LEDGER_HOME", str(home))
    monkeypatch.setattr(runner, "HOOK_MIGRATE_AT_MOST", 2)
    db = _store(tmp_path / "s.db", 3)
    asked: list[str] = []
    out = runner.handle_payload("claude-code", json.dumps(make(tmp_path)).encode(), None, db=db, drainer=asked.append)
    assert out == "" and asked == [db]  # nothing printed for the harness; the drain process asked for
    assert LAST not in _applied(db) and _observed(db) == []  # the hook wrote nothing to the store
    assert "drain process" in (home / "hook.log").read_text()


HOOK = ("import sys\n"
        "from ledger.harness import runner\n"
        "runner.HOOK_MIGRATE_AT_MOST = 2\n"
        "sys.exit(runner.hook_main(['claude-code', 'PostToolUse']))\n")


def test_the_drain_process_migrates_and_stores_the_spooled_call(tmp_path):
    """End to end: a real hook process on a store above the limit exits 0 and prints
    nothing; the real drain process it starts applies the schema change and stores the
    finished tool call."""
    home = tmp_path / "home"
    db = _store(tmp_path / "s.db", 3)
    env = dict(os.environ, LEDGER_HOME=str(home), LEDGER_DB=db)
    env.pop("LEDGER_HOOKS_DISABLED", None)
    p = subprocess.run([sys.executable, "-c", HOOK], input=json.dumps(post_bash("make", stdout="ok", cwd=tmp_path,
                       tool_use_id="toolu_e")).encode(), capture_output=True, env=env, timeout=60)
    assert p.returncode == 0 and p.stdout == b"", p.stderr
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (LAST in _applied(db) and _observed(db) == ["toolu_e"]):
        time.sleep(0.1)
    assert LAST in _applied(db) and _observed(db) == ["toolu_e"], (home / "hook.log").read_text()


def test_the_drain_process_migrates_with_nothing_spooled(tmp_path):
    db = _store(tmp_path / "s.db", 3)
    env = dict(os.environ, LEDGER_HOME=str(tmp_path / "home"), LEDGER_DB=db)
    p = subprocess.run([sys.executable, "-m", "ledger", "__drain", "--migrate", "--linger", "0.1"], capture_output=True,
                       env=env, timeout=60)
    assert p.returncode == 0, p.stderr
    assert LAST in _applied(db)
