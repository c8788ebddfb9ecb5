"""Issue 12, injection under real conditions, through real hook subprocesses: parallel
PreToolUse calls of one step count once and never escalate or deny; a tool call delivered
twice is stored once; a fact shown marked "may be stale" gains no strength."""

from __future__ import annotations

import json
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import spool_settled, store_sql
from fakes.hooks import context_of, post_bash, post_read, pre_bash, pre_read, run_hook

from ledger.service import Ledger, file_key


@pytest.fixture
def world(tmp_path, store_target):
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "data.bin").write_bytes(b"\x00\x01 payload")
    (proj / "notes.md").write_text("# notes\n")
    db = store_target
    with Ledger.open(db) as led:
        ids = [led.remember("data.bin is a little-endian uint16 array", cluster="code", agent="alice",
                            files=[file_key(proj / "data.bin")]).memory.id,
               led.remember("notes.md lists the open questions", cluster="code", agent="alice",
                            files=[file_key(proj / "notes.md")]).memory.id]
    return proj, db, ids


def _parallel(payloads: list[dict], env: dict) -> list[subprocess.CompletedProcess]:
    with ThreadPoolExecutor(len(payloads)) as pool:
        return list(pool.map(lambda p: run_hook(p["hook_event_name"], p, env=env), payloads))


def _hits(db: Path, mid: str) -> int:
    [(hits,)] = store_sql(db, "SELECT hits FROM memories WHERE id = ?", (mid,))
    return hits


@pytest.mark.parametrize("escalate_after", ["1", "4"])
def test_six_parallel_reads_of_one_file_in_one_step_show_the_facts_once(world, escalate_after):
    proj, db, (data_id, _) = world
    env = {"LEDGER_DB": db, "LEDGER_ESCALATE_AFTER": escalate_after, "LEDGER_DENY_ON_ESCALATION": "1"}
    outs = _parallel([pre_read(proj / "data.bin", cwd=proj) for _ in range(6)], env)
    assert all(p.returncode == 0 for p in outs)
    ctxs = [context_of(p.stdout.decode()) for p in outs]
    assert sum("little-endian" in c for c in ctxs) == 1, ctxs
    assert not any("ESCALATION" in c for c in ctxs)
    assert not any(b"permissionDecision" in p.stdout for p in outs)
    assert _hits(db, data_id) == 1
    # the agent acted (the six reads ran); the next step may escalate when configured so
    for _ in range(6):
        run_hook("PostToolUse", post_read(proj / "data.bin", "…", cwd=proj), env=env)
    nxt = run_hook("PreToolUse", pre_read(proj / "data.bin", cwd=proj), env=env)
    if escalate_after == "1":
        assert json.loads(nxt.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    else:
        assert nxt.stdout == b""  # quiet period


def test_parallel_calls_on_two_files_count_each_file_once(world):
    proj, db, (data_id, notes_id) = world
    env = {"LEDGER_DB": db}
    outs = _parallel([pre_read(proj / "data.bin", cwd=proj), pre_bash("xxd data.bin | head", cwd=proj),
                      pre_read(proj / "notes.md", cwd=proj), pre_bash("cat notes.md data.bin", cwd=proj)], env)
    ctxs = [context_of(p.stdout.decode()) for p in outs]
    assert sum("little-endian" in c for c in ctxs) == 1 and sum("open questions" in c for c in ctxs) == 1
    assert _hits(db, data_id) == 1 and _hits(db, notes_id) == 1


def test_the_same_tool_call_delivered_twice_is_stored_once(world):
    proj, db, _ = world
    env = {"LEDGER_DB": db}
    once = post_bash("make test", stdout="ok", cwd=proj, tool_use_id="toolu_dup1")
    run_hook("PostToolUse", once, env=env)
    run_hook("PostToolUse", once, env=env)  # delivered again, later
    _parallel([post_bash("make lint", stdout="ok", cwd=proj, tool_use_id="toolu_dup2") for _ in range(4)], env)
    # the same id in another session is another call
    run_hook("PostToolUse", {**once, "session_id": "other"}, env=env)
    spool_settled(db)
    rows = store_sql(db, "SELECT session, tool_use_id, step FROM observations ORDER BY id")
    steps = store_sql(db, "SELECT key, steps FROM watch_sessions ORDER BY key")
    assert sorted(r[1] for r in rows) == ["toolu_dup1", "toolu_dup1", "toolu_dup2"]
    assert steps == [("claude-code:other", 1), ("claude-code:s1", 2)]


def test_a_fact_shown_as_maybe_stale_gains_no_strength(world):
    proj, db, (data_id, notes_id) = world
    (proj / "data.bin").write_bytes(b"changed since the fact was learned")
    env = {"LEDGER_DB": db, "LEDGER_ESCALATE_AFTER": "2"}
    for i in range(5):
        p = run_hook("PreToolUse", pre_read(proj / "data.bin", cwd=proj, session=f"s{i}"), env=env)
        assert "may be stale" in context_of(p.stdout.decode())
        run_hook("PostToolUse", post_read(proj / "data.bin", "…", cwd=proj, session=f"s{i}"), env=env)
    assert _hits(db, data_id) == 0
    with Ledger.open(db) as led:
        m = led.get(data_id)
        assert m.hits == 0 and "alice" in m.readers and len(m.readers) == 1
    # an unchanged fact shown the same way does gain
    p = run_hook("PreToolUse", pre_read(proj / "notes.md", cwd=proj), env=env)
    assert "open questions" in context_of(p.stdout.decode()) and _hits(db, notes_id) == 1
