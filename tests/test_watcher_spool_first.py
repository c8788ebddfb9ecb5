"""Finished tool calls that go to the spool first (``[watcher] spool_first``; a
PostgreSQL store does by default): the observations and the session record come out
the same as when each call is stored at once, a drain cut short is redone without
doubling anything, and a hook that needs no store does not open it. Both engines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import BOTH_ENGINES, T0
from fakes.hooks import cfg_with, handle, payload, post_bash, post_edit, pre_bash, pre_read

from ledger.harness.adapters import with_hook
from ledger.session import record
from ledger.store import session_record as R
from ledger.store import watch as W
from ledger.watcher import spool as S
from ledger.watcher.engine import SKIP, SPOOL, STORE, Engine, spools_first

ENGINES = BOTH_ENGINES

MIN = 60_000


def _calls(proj, session: str) -> list[dict]:
    """One agent turn's finished calls touching each part of the session record."""
    kw = {"cwd": proj, "session": session}
    return [
        post_edit(proj / "a.py", tool_use_id=f"{session}-e1", **kw),
        post_bash("pytest -x", stdout="", stderr="E   assert 1 == 2\nFAILED t.py::x", tool_use_id=f"{session}-b1", **kw)
        | {"hook_event_name": "PostToolUseFailure", "error": "Exit code 1"},
        payload("PostToolUse", tool_name="TodoWrite", tool_use_id=f"{session}-t1", tool_response={},
                tool_input={"todos": [{"content": "fix the parser", "status": "in_progress", "activeForm": "fixing"}]}, **kw),
        payload("PostToolUse", tool_name="TaskCreate", tool_use_id=f"{session}-c1", tool_input={"subject": "write docs"},
                tool_response={"task": {"id": "7"}}, **kw),
        payload("PostToolUse", tool_name="TaskUpdate", tool_use_id=f"{session}-u1",
                tool_input={"taskId": "7", "status": "completed"}, tool_response={}, **kw),
        post_edit(proj / "a.py", tool_use_id=f"{session}-e2", **kw),
        payload("PostToolUse", tool_name="ExitPlanMode", tool_use_id=f"{session}-p1", tool_input={"plan": "1. parse\n2. test"},
                tool_response={}, **kw),
        post_bash("pytest -x", stdout="1 passed", tool_use_id=f"{session}-b2", **kw),
    ]


def _record(db, key: str) -> tuple[dict, list, list]:
    conn = W.open_store(str(db))
    try:
        values = {k: v["value"] for k, v in R.values(conn, key).items()}
        files = [(f["path"], f["edits"]) for f in R.files(conn, key)]
        obs = [(o["step"], o["tool"], o["tool_use_id"].split("-", 1)[1], o["output"]) for o in W.observations(conn, key)]
        return values, files, obs
    finally:
        conn.close()


def test_spooled_calls_leave_the_same_observations_and_session_record(store_target, tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    for session, mode in (("direct", "never"), ("spooled", "always")):
        cfg = cfg_with(spool_first=mode)
        for i, p in enumerate(_calls(proj, session)):
            handle(p, db=store_target, now=T0 + i * MIN, cfg=cfg)  # the spooled ones are drained in process
    direct, spooled = _record(store_target, "claude-code:direct"), _record(store_target, "claude-code:spooled")
    assert spooled == direct
    values, files, obs = spooled
    assert files == [(str(proj / "a.py"), 2)]
    assert values["todos"] == [{"content": "fix the parser", "status": "in_progress"},
                               {"content": "write docs", "status": "completed", "id": "7"}]
    assert values["plan"] == "1. parse\n2. test" and values["last_passed"]["command"] == "pytest -x"
    assert values["last_failed"] == {"command": "pytest -x", "error": "Exit code 1"}
    assert [o[0] for o in obs] == list(range(1, 9))


def test_a_drain_cut_short_is_redone_without_doubling_observations_or_notes(store_target, tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    cfg = cfg_with(spool_first="always")
    offline = Engine.offline(str(store_target), cfg, T0, notes=record)
    for p in _calls(proj, "s"):
        offline.spool_first(_event(p))
    engine = Engine.open(str(store_target), cfg, T0, spawn_distill=lambda k, o: None, notes=record)
    try:
        real, n = engine.store_observation, {"calls": 0}

        def flaky(r, **kw):  # the connection is lost after five calls went in
            n["calls"] += 1
            if n["calls"] == 6:
                raise ConnectionError("network down")
            return real(r, **kw)

        engine.store_observation = flaky
        with pytest.raises(ConnectionError):
            engine.drain_spool()
        assert S.has_work(engine.spool)
        engine.store_observation = real
        assert engine.drain_spool() == 8  # the whole file again: five already in, three new
        assert not S.has_work(engine.spool)
    finally:
        engine.close()
    values, files, obs = _record(store_target, "claude-code:s")
    assert files == [(str(proj / "a.py"), 2)]  # two edits, each counted once
    assert [o[0] for o in obs] == list(range(1, 9)) and len({o[2] for o in obs}) == 8
    assert [i["content"] for i in values["todos"]] == ["fix the parser", "write docs"]


def _event(p: dict):
    return with_hook("claude-code").parse_payload(json.dumps(p).encode(), None)


def test_what_a_hook_needs_is_decided_without_the_store(store_target, tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "a.py").write_text("A = 1\n")
    for mode, post in (("never", STORE), ("always", SPOOL)):
        cfg = cfg_with(spool_first=mode)
        e, first = Engine.offline(str(store_target), cfg, T0), spools_first(str(store_target), cfg)
        assert first == (mode == "always")
        assert e.needs(_event(pre_bash("ls -la", cwd=proj)), first) == SKIP  # no file named: nothing could match
        assert e.needs(_event(pre_bash("cat a.py", cwd=proj)), first) == STORE
        assert e.needs(_event(pre_read(proj / "a.py", cwd=proj)), first) == STORE
        assert e.needs(_event(payload("PreToolUse", tool_name="WebFetch", tool_input={"url": "https://x"}, cwd=proj)), first) == SKIP
        assert e.needs(_event(post_bash("ls", cwd=proj)), first) == post
        assert e.needs(_event(payload("Stop", cwd=proj)), first) == STORE
    off = Engine.offline(str(store_target), cfg_with(enabled=False), T0)
    assert off.needs(_event(pre_read(proj / "a.py", cwd=proj)), False) == SKIP  # injection off
    assert spools_first(str(store_target), cfg_with()) == str(store_target).startswith("postgresql://")  # auto


def test_a_malformed_spooled_record_is_logged_and_skipped_not_left_to_block_every_drain(store_target, tmp_path):
    cfg = cfg_with(spool_first="always")
    offline = Engine.offline(str(store_target), cfg, T0, notes=record)
    S.append(offline.spool, {"tool_use_id": "bad", "key": "claude-code:s"})  # no tool, no session fields
    offline.spool_first(_event(post_bash("make", stdout="ok", cwd=tmp_path, session="s", tool_use_id="good")))
    engine = Engine.open(str(store_target), cfg, T0, spawn_distill=lambda k, o: None, notes=record)
    try:
        assert engine.drain_spool() == 2 and not S.has_work(engine.spool)
        assert engine.drain_spool() == 0
        assert [o["tool_use_id"] for o in W.observations(engine.conn, "claude-code:s")] == ["good"]
    finally:
        engine.close()
    from ledger.paths import home_dir

    assert "malformed record skipped" in (Path(home_dir()) / "hook.log").read_text()
