"""Fresh-user finding 11, through real ``ledger hook claude-code`` processes on a real
store: a payload with no usable session_id is dropped with a hook.log line saying why,
and ``watcher.max_chars`` too small for any fact injects nothing (not a bare header)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import BOTH_ENGINES, spool_settled, store_sql
from fakes.hooks import post_bash, pre_read, run_hook
from test_cli import ok

ENGINES = BOTH_ENGINES


def hook_log() -> list[str]:
    path = Path(os.environ["LEDGER_HOME"]) / "hook.log"
    return path.read_text().splitlines() if path.exists() else []


@pytest.mark.parametrize("sid,why", [
    (None, "no session_id in it"),
    (5, "session_id is 5 (int), not a string"),
    ("", "session_id is empty"),
    ({"id": "x"}, 'session_id is {"id": "x"} (dict), not a string'),
])
def test_a_payload_without_a_usable_session_id_is_dropped_and_logged(store_target, tmp_path, sid, why):
    r = run_hook("PostToolUse", post_bash("ls", stdout="a.py", cwd=tmp_path, session="real"), env={"LEDGER_DB": store_target})
    assert r.returncode == 0 and not any("payload dropped" in l for l in hook_log())
    for event, p in (("PostToolUse", post_bash("ls", stdout="a.py", cwd=tmp_path)),
                     ("PreToolUse", pre_read(tmp_path / "a.py", cwd=tmp_path))):
        p.pop("session_id")
        if sid is not None:
            p["session_id"] = sid
        r = run_hook(event, p, env={"LEDGER_DB": store_target})
        assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
        assert hook_log()[-1].endswith(f"claude-code {event}: payload dropped: {why}")
    spool_settled(store_target)
    # only the named session's call is kept: nothing under a nameless session
    assert store_sql(store_target, "SELECT session FROM observations") == [("claude-code:real",)]


def test_max_chars_too_small_for_any_fact_injects_nothing(store_target, tmp_path, cli):
    f = tmp_path / "config.py"
    f.write_text("PORT = 9090\n")
    ok(*cli("remember", "The server port is 9090 (config.py PORT)", "--cluster", "code", "--file", str(f)))
    env = {"LEDGER_DB": store_target}
    ok(*cli("config", "set", "watcher.max_chars", "10", db=None))
    r = run_hook("PreToolUse", pre_read(f, cwd=tmp_path, session="tiny"), env=env)
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")  # no "KNOWN FACTS" header with nothing under it
    assert hook_log()[-1].endswith("inject: watcher.max_chars 10 leaves no room for any fact; nothing injected "
                                   "(ledger config set watcher.max_chars 1200)")
    ok(*cli("config", "set", "watcher.max_chars", "400", db=None))
    r = run_hook("PreToolUse", pre_read(f, cwd=tmp_path, session="roomy"), env=env)
    ctx = json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "KNOWN FACTS" in ctx and "port is 9090" in ctx
