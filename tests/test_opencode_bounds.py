"""The OpenCode path keeps what it is given within bounds, and files nothing under a
session nobody named, the same rules as the Claude Code hook path.

Found by a fresh-user pass: a ``write`` of 17 MB went to the child uncut (only the output
was capped), the line was over the child's 16 MiB limit, the plugin waited out its 3 s
timeout and the observation was lost; and events without ``sessionID`` were filed under
one shared session ``opencode:``, where Claude Code drops such payloads."""

from __future__ import annotations

import json
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest
from conftest import LEDGER_BIN, is_pg, spool_settled
from test_opencode_server import bus, console_command_serves, project, read, server, step  # noqa: F401  (project, server: fixtures)

from ledger.service import Ledger
from ledger.store import watch as W

NODE = shutil.which("node")
PLUGIN = Path(__file__).resolve().parent.parent / "src" / "ledger" / "harness" / "opencode" / "ledger.js"


def _session_keys(target) -> list[str]:
    with Ledger.open(target) as led:
        return [r[0] for r in led.store._conn.execute("SELECT key FROM watch_sessions")]


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_a_17_mb_write_through_the_real_plugin_and_child_is_observed_without_a_stall(project, store_target, _isolated_home):  # noqa: F811
    if not console_command_serves():
        pytest.skip("ledger __serve-session is not wired in this build")
    big = project / "big.txt"
    code = textwrap.dedent("""
        const [url, bin, dir, file] = process.argv.slice(1);
        const { default: LedgerPlugin } = await import(url);
        const logs = [];
        const client = { app: { log: async ({ body }) => { logs.push(body.message); } } };
        const hooks = await LedgerPlugin({ client, directory: dir, worktree: dir }, { command: [bin, "__serve-session", "opencode"] });
        // Warm up: the child's start is not what is measured.
        await hooks["tool.execute.after"]({ tool: "read", sessionID: "ses_big", callID: "c0", args: { filePath: file } },
          { title: "", output: "x", metadata: {} });
        const content = "w".repeat(17 * 1024 * 1024);
        const t0 = Date.now();
        const out = { title: "", output: "Wrote file successfully.", metadata: {} };
        await hooks["tool.execute.after"]({ tool: "write", sessionID: "ses_big", callID: "c1", args: { filePath: file, content } }, out);
        const ms = Date.now() - t0;
        await hooks.dispose();
        console.log(JSON.stringify({ ms, logs, output: out.output }));
    """)
    env = {"LEDGER_DB": str(store_target), "LEDGER_HOME": str(_isolated_home), "PATH": "/usr/bin:/bin"}
    p = subprocess.run([NODE, "--input-type=module", "-e", code, PLUGIN.as_uri(), LEDGER_BIN, str(project), str(big)],
                       capture_output=True, text=True, timeout=120, env=env)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout.strip().splitlines()[-1])
    assert r["logs"] == [], r["logs"]  # no "did not answer within 3000 ms"
    assert r["ms"] < 2500, r
    assert r["output"] == "Wrote file successfully."
    if is_pg(store_target):
        spool_settled(store_target)
    with Ledger.open(store_target) as led:
        obs = W.observations(led.store._conn, "opencode:ses_big")
    assert [o["tool"] for o in obs] == ["read", "write"]
    stored = obs[1]["input"]
    stored = json.loads(stored) if isinstance(stored, str) else stored
    assert stored["filePath"] == str(big)
    assert 1000 < len(stored["content"]) <= 20_000 and "chars cut" in stored["content"]


def test_events_without_a_session_are_dropped_and_logged_once_per_kind(project, store_target, _isolated_home, server):  # noqa: F811
    s = server()
    nosid = read(project)
    del nosid["input"]["sessionID"]
    events = [
        nosid, dict(nosid, input={**nosid["input"], "sessionID": ""}), dict(nosid, input={**nosid["input"], "sessionID": 5}),
        step(project, "", "p1"),
        bus(project, "session.idle"),
        bus(project, "session.diff", diff=[{"file": "notes.txt"}]),
        bus(project, "todo.updated", todos=[{"content": "a", "status": "pending"}]),
        {"hook": "experimental.session.compacting", "directory": str(project), "input": {}},
        {"hook": "chat.message", "directory": str(project), "input": {}, "output": {"message": {"role": "user"},
                                                                                   "parts": [{"type": "text", "text": "hi"}]}},
    ]
    for ev in events:
        answer = s.event(ev)
        assert answer["error"] is None and answer.get("dropped") == "no sessionID", (ev, answer)
        assert answer["append"] is None and answer["context"] == []
    # a named session still works, next to them
    assert s.event(read(project, sid="ses_ok"))["error"] is None
    s.close()  # the checks below read what the child wrote by the time it ended
    if is_pg(store_target):
        spool_settled(store_target)
    assert _session_keys(store_target) == ["opencode:ses_ok"]
    assert not (project / ".agents").exists(), "no checkpoint for a nameless session"
    lines = (Path(_isolated_home) / "hook.log").read_text().splitlines()
    dropped = [line for line in lines if "payload dropped: no sessionID" in line]
    assert len(dropped) == 7, lines  # one per kind: tool, step, idle, diff, todos, compaction, prompt
    assert any("opencode tool.execute.after: payload dropped" in line for line in dropped)
    assert any("opencode event session.idle: payload dropped" in line for line in dropped)
