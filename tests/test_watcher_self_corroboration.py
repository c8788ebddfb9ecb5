"""Strength counts independent confirmation, not repetition (docs/store.md "Strength"):
one session re-reading a file and being handed its facts again and again does not
corroborate or inflate them. Real hook processes, the no-LLM distiller, the CLI."""

from __future__ import annotations

import json
import time

from conftest import BOTH_ENGINES, spool_settled, store_sql
from fakes.hooks import context_of, post_bash, post_read, pre_read, run_hook

ENGINES = BOTH_ENGINES

SRC = "import os\n\n\ndef main():\n    return 0\n\n\nclass Svc:\n    pass\n"


def _outline(db):
    rows = store_sql(db, "SELECT id FROM memories WHERE writer = 'watcher' AND topic = 'outline:svc.py'")
    return rows[0][0] if rows else None


def _read_round(env, proj, src, session, n):
    """Four reads of ``src`` (each its PreToolUse, then its PostToolUse), and a test run:
    what the handed-back facts say, last first."""
    shown = []
    for i in range(4):
        r = run_hook("PreToolUse", pre_read(src, cwd=proj, session=session, tool_use_id=f"r{session}{n}{i}"), env=env)
        assert r.returncode == 0, r
        shown.append(context_of(r.stdout.decode()))
        assert run_hook("PostToolUse", post_read(src, SRC, cwd=proj, session=session, tool_use_id=f"r{session}{n}{i}"),
                        env=env).returncode == 0
    assert run_hook("PostToolUse", post_bash("pytest -q tests", stdout="3 passed in 0.1s", cwd=proj, session=session),
                    env=env).returncode == 0
    return shown


def _settle(db, want_step, session="s1", timeout=60):
    key = f"claude-code:{session}"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        spool_settled(db)
        rows = store_sql(db, "SELECT distilled_step FROM watch_sessions WHERE key = ?", (key,))
        if rows and rows[0][0] >= want_step and _outline(db):
            return
        time.sleep(0.2)
    raise AssertionError(f"session {key} not distilled up to step {want_step}")


def test_one_session_rereading_a_file_neither_corroborates_nor_inflates_its_fact(tmp_path, store_target, cli):
    proj = tmp_path / "proj"
    proj.mkdir()
    src = proj / "svc.py"
    src.write_text(SRC)
    env = {"LEDGER_DB": store_target, "LEDGER_LLM_BACKEND": "fallback", "LEDGER_DISTILL_EVERY": "3"}
    _read_round(env, proj, src, "s1", 0)  # steps 1-5: the outline is distilled
    _settle(store_target, 3)
    shown = []
    for n in range(1, 4):  # the same session keeps re-reading it: distilled again, shown again
        shown += _read_round(env, proj, src, "s1", n)
    _settle(store_target, 15)
    assert sum("svc.py (9 lines" in s for s in shown) >= 3  # handed back, escalated even
    fid = _outline(store_target)
    rc, out, _ = cli("show", fid, "--json")
    assert rc == 0, out
    m = json.loads(out)
    m = m.get("memory", m)
    # the re-distillations from the same session and the showings add no reader
    assert m["readers"] == ["watcher"] and m["factors"]["corroborated"] == 0, m
    assert m["hits"] == 1  # one session, one use, however often it was shown
    assert m["strength"] < 0.6
    # another session shown it is one more use, still no reader
    _read_round(env, proj, src, "s2", 0)
    spool_settled(store_target)
    rc, out, _ = cli("show", fid, "--json")
    m2 = json.loads(out)
    m2 = m2.get("memory", m2)
    assert m2["hits"] == 2 and m2["readers"] == ["watcher"]
    # an agent that recalls it is a reader: the seed's corroboration
    rc, out, _ = cli("recall", "svc.py top-level", "--agent", "bob", "--json")
    assert rc == 0 and fid in out
    rc, out, _ = cli("show", fid, "--json")
    m3 = json.loads(out)
    m3 = m3.get("memory", m3)
    assert sorted(m3["readers"]) == ["bob", "watcher"] and abs(m3["factors"]["corroborated"] - 1 / 3) < 1e-3
