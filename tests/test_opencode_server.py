"""The OpenCode session server (``ledger __serve-session opencode``) through a real
subprocess speaking JSON lines: protocol robustness, injection and escalation, per-session
step counts with the extraction session excluded, the idle checkpoint with diff files,
the compaction context, distillation through the plugin, and one store connection kept
open across requests.
"""

from __future__ import annotations

import functools
import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import LEDGER_BIN, store_exists

from ledger.filekeys import file_key
from ledger.service import Ledger
from ledger.store import watch as W

SERVE_MODULE = [sys.executable, "-m", "ledger.harness.session_server", "opencode"]


@functools.lru_cache(maxsize=1)
def console_command_serves() -> bool:
    """True once ``ledger __serve-session`` is routed to the session server."""
    try:
        p = subprocess.run([LEDGER_BIN, "__serve-session", "opencode"], input=b'{"id": 1, "type": "ping"}\n',
                           capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return b'"pong":true' in p.stdout


def serve_argv() -> list[str]:
    """How to start the server: the console command when wired, else the module."""
    return [LEDGER_BIN, "__serve-session", "opencode"] if console_command_serves() else list(SERVE_MODULE)


class Server:
    """A running session server: ``request(obj)`` -> response; pushed lines collect in
    ``pushes``."""

    def __init__(self, db: Path, env: dict | None = None, argv: list[str] | None = None):
        full = dict(os.environ)
        full.pop("LEDGER_DB", None)
        full.update({"LEDGER_DB": str(db)})
        for k, v in (env or {}).items():
            if v is None:
                full.pop(k, None)
            else:
                full[k] = v
        self.proc = subprocess.Popen(argv or serve_argv(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=full)
        self.lines: queue.Queue = queue.Queue()
        self.pushes: queue.Queue = queue.Queue()
        self.next_id = 1
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for raw in self.proc.stdout:
            msg = json.loads(raw)
            (self.pushes if msg.get("id") is None and "distill" in msg else self.lines).put(msg)

    def send_raw(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def reply(self, timeout: float = 20) -> dict:
        return self.lines.get(timeout=timeout)

    def request(self, obj: dict, timeout: float = 20) -> dict:
        rid = self.next_id
        self.next_id += 1
        self.send_raw(json.dumps({"id": rid, **obj}).encode() + b"\n")
        msg = self.reply(timeout)
        assert msg["id"] == rid, msg
        return msg

    def event(self, event: dict, **kw) -> dict:
        return self.request({"event": event}, **kw)

    def close(self) -> int:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                return self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                raise
        return self.proc.returncode


@pytest.fixture
def project(tmp_path) -> Path:
    p = tmp_path / "proj"
    p.mkdir()
    (p / "notes.txt").write_text("the answer is 42\n")
    subprocess.run(["git", "init", "-q", str(p)], check=True)
    return p


@pytest.fixture
def server(store_target):
    started: list[Server] = []

    def start(**env) -> Server:
        s = Server(store_target, env)
        started.append(s)
        return s

    yield start
    for s in started:
        s.close()


def read(project: Path, name: str = "notes.txt", sid: str = "ses_a", call: str = "c1") -> dict:
    return {"hook": "tool.execute.after", "directory": str(project), "worktree": str(project),
            "input": {"tool": "read", "sessionID": sid, "callID": call, "args": {"filePath": str(project / name)}},
            "output": {"title": name, "output": "<content>\n1: the answer is 42\n</content>", "metadata": {"truncated": False}}}


def bus(project: Path, type_: str, **props) -> dict:
    return {"hook": "event", "directory": str(project), "worktree": str(project), "event": {"type": type_, "properties": props}}


def step(project: Path, sid: str, part_id: str) -> dict:
    return bus(project, "message.part.updated", sessionID=sid,
               part={"id": part_id, "type": "step-finish", "sessionID": sid, "reason": "tool-calls", "cost": 0})


def remember(store_target: Path, text: str, path: Path) -> str:
    with Ledger.open(store_target) as led:
        return led.remember(text, cluster="code", agent="tester", files=[file_key(path)]).memory.id


def store(store_target: Path):
    return Ledger.open(store_target)


# --------------------------------------------------------------------------- protocol


def test_ping_and_bad_lines_never_kill_the_server(server):
    s = server()
    first = s.request({"type": "ping"})
    assert first["pong"] is True and first["protocol"] == 1 and first["error"] is None
    assert set(first) >= {"id", "append", "context", "error"}
    for bad in (b"not json\n", b"[1, 2]\n", b'"text"\n', b"\xff\xfe\n", b"{\"id\": 7\n", b"[" * 100_000 + b"\n"):
        s.send_raw(bad)
        r = s.reply()
        assert r["id"] is None and r["error"], r
    assert s.request({"type": "nope"})["error"].startswith("ValueError: unknown request type")
    assert "no 'hook'" in s.request({"event": {"directory": "/x"}})["error"]
    assert "JSON object" in s.request({"event": [1]})["error"]
    assert s.request({"type": "distill_answer", "token": "zzz", "text": "x"})["error"]
    s.send_raw(b"\n   \n")  # blank lines are skipped, not answered
    last = s.request({"type": "ping"})
    assert last["pong"] is True and last["pid"] == first["pid"]
    assert s.close() == 0


def test_an_oversized_line_is_refused_without_buffering_it(server):
    s = server()
    s.send_raw(b'{"id": 1, "x": "' + b"x" * (17 * 1024 * 1024) + b'"}\n')
    r = s.reply(timeout=60)
    # Answered under the id the line starts with, so the plugin stops waiting at once
    # instead of timing out.
    assert r["id"] == 1 and "longer than" in r["error"]
    s.send_raw(b'{"x": "' + b"x" * (17 * 1024 * 1024) + b'", "id": 2}\n')
    r = s.reply(timeout=60)
    assert r["id"] is None and "longer than" in r["error"]  # an id further in is not looked for
    assert s.request({"type": "ping"})["pong"] is True


def test_leading_id_reads_only_the_start_of_a_line():
    from ledger.harness.jsonlines import leading_id

    assert leading_id(b'{"id":7,"event":{}}') == 7
    assert leading_id(b' { "id" : 12 }') == 12
    assert leading_id(b'{"id":"7"}') is None and leading_id(b'{"x":1,"id":7}') is None
    assert leading_id(b'{"id":7.5}') is None and leading_id(b"garbage") is None


def test_unicode_round_trip_and_ascii_lines(server, project, store_target):
    remember(store_target, "notes.txt says “42” — élan ✓", project / "notes.txt")
    s = server()
    s.send_raw((json.dumps({"id": 1, "event": read(project)}, ensure_ascii=False) + "\n").encode())
    raw_ok = s.reply()
    assert "“42” — élan ✓" in raw_ok["append"]


def test_store_unavailable_is_an_error_answer_not_a_crash(tmp_path, project):
    bad = tmp_path / "a-directory.db"
    bad.mkdir()
    s = Server(bad)
    try:
        r = s.event(read(project))
        assert r["append"] is None and "StoreUnavailable" in r["error"]
        assert s.request({"type": "ping"})["pong"] is True
    finally:
        s.close()


def test_hooks_disabled_answers_empty_and_touches_nothing(server, project, store_target):
    s = server(LEDGER_HOOKS_DISABLED="1")
    r = s.event(read(project))
    assert r == {"id": 1, "append": None, "context": [], "error": None}
    assert s.close() == 0
    assert not store_exists(store_target)


def test_end_of_input_ends_the_server(server):
    s = server()
    s.request({"type": "ping"})
    t0 = time.monotonic()
    assert s.close() == 0
    assert time.monotonic() - t0 < 5


def test_console_command(tmp_path):
    if not console_command_serves():
        pytest.skip("`ledger __serve-session` is not routed to ledger.harness.session_server.main yet (lead wiring)")
    s = Server(tmp_path / "l.db", argv=[LEDGER_BIN, "__serve-session", "opencode"])
    try:
        assert s.request({"type": "ping"})["pong"] is True
    finally:
        assert s.close() == 0


# --------------------------------------------------------------------------- watcher


def test_facts_are_appended_then_quiet_then_escalated(server, project, store_target):
    mid = remember(store_target, "notes.txt holds the answer 42 on line 1", project / "notes.txt")
    s = server(LEDGER_ESCALATE_AFTER="3")
    first = s.event(read(project, call="c1"))
    assert first["error"] is None
    assert first["append"].startswith("\n\n📋 KNOWN FACTS")
    assert mid in first["append"] and "notes.txt holds the answer 42" in first["append"]
    assert s.event(read(project, call="c2"))["append"] is None  # quiet period
    third = s.event({**read(project, call="c3"), "input": {"tool": "bash", "sessionID": "ses_a", "callID": "c3",
                                                            "args": {"command": "cat notes.txt", "description": "again"}},
                     "output": {"title": "cat", "output": "the answer is 42\n", "metadata": {"exit": 0}}})
    assert "LEDGER ESCALATION" in third["append"] and "2 times" in third["append"]  # shown at c1 and now; c2 was quiet
    other = s.event(read(project, sid="ses_b"))  # counters are per session
    assert "KNOWN FACTS" in other["append"]
    with store(store_target) as led:
        conn = led.store._conn
        assert W.session(conn, "opencode:ses_a")["steps"] == 3
        obs = W.observations(conn, "opencode:ses_a")
        assert [o["tool"] for o in obs] == ["read", "read", "bash"]
        assert "KNOWN FACTS" not in obs[0]["output"], "the raw output is observed, not the appended facts"
        levels = [r[0] for r in conn.execute("SELECT level FROM injections WHERE session = 'opencode:ses_a' ORDER BY id")]
        assert levels == ["gentle", "escalated"]


def test_an_edit_after_an_escalation_gets_no_escalation_and_stale_facts_never_escalate(server, project, store_target):
    # docs/watcher.md "Settled and unsettled facts": OpenCode appends a deny reason to the
    # tool's output, so an escalation on an edit would tell the agent to stop editing.
    remember(store_target, "notes.txt holds the answer 42 on line 1", project / "notes.txt")
    s = server(LEDGER_ESCALATE_AFTER="2", LEDGER_DENY_ON_ESCALATION="1")
    assert "KNOWN FACTS" in s.event(read(project, call="c1"))["append"]
    assert "LEDGER ESCALATION" in s.event(read(project, call="c2"))["append"]
    edit = {**read(project, call="c3"), "input": {"tool": "edit", "sessionID": "ses_a", "callID": "c3",
                                                   "args": {"filePath": str(project / "notes.txt"), "oldString": "42",
                                                            "newString": "43"}},
            "output": {"title": "notes.txt", "output": "", "metadata": {}}}
    assert s.event(edit)["append"] is None
    (project / "notes.txt").write_text("the answer is 43\n")  # the fact may be stale now
    got = [s.event(read(project, sid="ses_b", call=f"d{i}"))["append"] for i in range(4)]
    assert "may be stale" in got[0] and "NOT SETTLED" in got[0] and "already established" not in got[0]
    assert got[1:] == [None, None, None]


def test_unrelated_files_and_non_file_tools_get_nothing(server, project, store_target):
    remember(store_target, "notes.txt holds 42", project / "notes.txt")
    (project / "other.txt").write_text("x")
    s = server()
    assert s.event(read(project, "other.txt"))["append"] is None
    todo = {**read(project), "input": {"tool": "todowrite", "sessionID": "ses_a", "callID": "t", "args": {"todos": []}}}
    assert s.event(todo)["append"] is None


def test_steps_are_counted_per_session_and_the_extraction_session_is_excluded(server, project, store_target):
    s = server()
    for sid, part in [("ses_a", "p1"), ("ses_a", "p2"), ("ses_a", "p2"), ("ses_b", "p3")]:
        assert s.event(step(project, sid, part))["error"] is None
    assert s.request({"type": "ignore_session", "session": "ses_x"})["error"] is None
    assert s.event(step(project, "ses_x", "p4"))["ignored"] is True
    assert s.event(read(project, sid="ses_x"))["append"] is None
    s.event(bus(project, "session.idle", sessionID="ses_x"))
    stats = s.request({"type": "stats"})["stats"]
    assert {k: v["modelSteps"] for k, v in stats["sessions"].items()} == {"opencode:ses_a": 2, "opencode:ses_b": 1}
    assert stats["ignored"] == ["ses_x"]
    with store(store_target) as led:
        keys = [r[0] for r in led.store._conn.execute("SELECT key FROM watch_sessions")]
        assert "opencode:ses_x" not in keys
        assert led.store._conn.execute("SELECT count(*) FROM observations WHERE session = 'opencode:ses_x'").fetchone()[0] == 0
    assert not (project / ".agents").exists(), "no checkpoint for the extraction session"


def test_idle_writes_one_checkpoint_with_the_diff_files(server, project, store_target):
    s = server()
    edit = {**read(project, "c.txt"), "input": {"tool": "edit", "sessionID": "ses_a", "callID": "e1",
                                                 "args": {"filePath": str(project / "c.txt"), "oldString": "a", "newString": "b"}},
            "output": {"title": "c.txt", "output": "Edit applied successfully.", "metadata": {}}}
    s.event(edit)
    s.event(bus(project, "session.diff", sessionID="ses_a", diff=[{"file": "a.txt", "additions": 1, "deletions": 0}]))
    s.event(bus(project, "message.part.updated", sessionID="ses_a",
                part={"id": "pp", "type": "patch", "sessionID": "ses_a", "files": [str(project / "b.txt")]}))
    s.event(bus(project, "session.status", sessionID="ses_a", status={"type": "idle"}))
    s.event(bus(project, "session.idle", sessionID="ses_a"))
    md = (project / ".agents" / "checkpoint.md").read_text()
    files = md.split("## Files Changed This Session\n", 1)[1].split("\n\n", 1)[0]
    assert files.splitlines() == ["- c.txt", "- a.txt", "- b.txt"]
    assert "_Written by ledger on session.idle at" in md
    with store(store_target) as led:
        rows = W.checkpoints(led.store._conn, session="opencode:ses_a")
        assert [r["event"] for r in rows] == ["session.idle"], "status idle + session.idle: one checkpoint"
    s.event(bus(project, "session.idle", sessionID="ses_a"))  # nothing happened since
    s.event(step(project, "ses_a", "p9"))
    s.event(bus(project, "session.idle", sessionID="ses_a"))  # activity, but same content: still one
    with store(store_target) as led:
        assert len(W.checkpoints(led.store._conn, session="opencode:ses_a")) == 1


def test_deleted_session_forgets_its_diff_files(server, project):
    s = server()
    s.event(bus(project, "session.diff", sessionID="ses_a", diff=[{"file": "a.txt"}]))
    s.event(bus(project, "session.deleted", info={"id": "ses_a"}))
    assert s.request({"type": "stats"})["stats"]["sessions"] == {}


def test_compaction_context_has_the_session_state_and_facts(server, project, store_target):
    (project / ".agents").mkdir()
    (project / ".agents" / "tasks.md").write_text("- [ ] ship the OpenCode plugin\n")
    remember(store_target, "notes.txt holds the answer 42", project / "notes.txt")
    s = server()
    r = s.event({"hook": "experimental.session.compacting", "directory": str(project), "worktree": str(project),
                 "input": {"sessionID": "ses_a"}})
    assert r["error"] is None and r["append"] is None and len(r["context"]) == 1
    text = r["context"][0]
    assert text.startswith("## Session State")
    assert "ship the OpenCode plugin" in text and "_No " not in text  # no placeholders for empty sections
    assert "## Known facts about this project" in text and "notes.txt holds the answer 42" in text


def test_prompts_todos_edits_and_commands_reach_the_block_and_the_checkpoint(server, project, store_target):
    """OpenCode's own shapes (chat.message, todo.updated, todowrite, edit, bash with a
    non-zero exit) feed the same session record as Claude Code's hooks."""
    s = server()
    d = {"directory": str(project), "worktree": str(project)}
    s.event({**d, "hook": "chat.message", "input": {"sessionID": "ses_a"},
             "output": {"message": {"role": "user"}, "parts": [{"type": "text", "text": "Port the parser to Rust (TASK-OC)"},
                                                              {"type": "text", "text": "<file>", "synthetic": True}]}})
    s.event({**d, "hook": "tool.execute.after", "input": {"tool": "todowrite", "sessionID": "ses_a", "callID": "t1", "args": {
        "todos": [{"content": "write lexer", "status": "in_progress", "priority": "high", "id": "1"}]}},
        "output": {"title": "1 todo", "output": "[]", "metadata": {}}})
    s.event(bus(project, "todo.updated", sessionID="ses_a", todos=[
        {"content": "write lexer", "status": "completed", "priority": "high", "id": "1"},
        {"content": "write parser", "status": "pending", "priority": "high", "id": "2"}]))
    s.event({**d, "hook": "tool.execute.after", "input": {"tool": "edit", "sessionID": "ses_a", "callID": "e1",
             "args": {"filePath": str(project / "lexer.rs"), "oldString": "a", "newString": "b"}},
             "output": {"title": "lexer.rs", "output": "", "metadata": {}}})
    s.event({**d, "hook": "tool.execute.after", "input": {"tool": "bash", "sessionID": "ses_a", "callID": "b1",
             "args": {"command": "cargo test"}}, "output": {"title": "", "output": "error[E0425]: x", "metadata": {"exit": 101}}})
    s.event(bus(project, "message.part.updated", sessionID="ses_a",
                part={"id": "p1", "type": "patch", "sessionID": "ses_a", "files": [str(project / "parser.rs")]}))
    text = s.event({**d, "hook": "experimental.session.compacting", "input": {"sessionID": "ses_a"}})["context"][0]
    assert "### Task (the user's words)\n> Port the parser to Rust (TASK-OC)" in text and "<file>" not in text
    assert "### Todo List\n- [x] write lexer\n- [ ] write parser" in text
    assert "### Files Edited This Session\n- lexer.rs\n- parser.rs" in text
    assert "- last failing: `cargo test`" in text and "exit code 101" in text
    assert s.event(bus(project, "session.idle", sessionID="ses_a"))["error"] is None
    md = (project / ".agents" / "checkpoint.md").read_text()
    assert "TASK-OC" in md and "- [x] write lexer" in md and "- parser.rs" in md
    # another session's record stays its own; it resumes from the last checkpoint
    (other,) = s.event({**d, "hook": "experimental.session.compacting", "input": {"sessionID": "ses_b"}})["context"]
    assert "### Task (the user's words)" not in other and "### Last Checkpoint" in other


def test_the_store_connection_stays_open(server, project, store_target):
    s = server()
    for i in range(20):
        s.event(read(project, call=f"c{i}"))
        s.event(step(project, "ses_a", f"p{i}"))
    stats = s.request({"type": "stats"})["stats"]
    assert stats["opened"] == 1 and stats["requests"] == 41
    assert stats["sessions"]["opencode:ses_a"] == {"modelSteps": 20, "toolSteps": 20, "diffFiles": []}


# --------------------------------------------------------------------------- distillation


def findings(*facts: tuple[str, str]) -> str:
    return json.dumps([{"fact": f, "topic": f"file-format:{p}", "files": [p]} for f, p in facts])


def test_distillation_through_the_plugin(server, project, store_target):
    s = server(LEDGER_LLM_BACKEND="opencode", LEDGER_DISTILL_EVERY="2", LEDGER_LLM_MODEL="scripted/model-1",
               LEDGER_OPENCODE_AGENT="plan")
    assert s.event(read(project, call="c1"))["append"] is None
    assert s.event(read(project, call="c2"))["append"] is None
    push = s.pushes.get(timeout=20)["distill"]
    assert push["session"] == "opencode:ses_a" and push["token"]
    assert push["agent"] == "plan" and push["model"] == "scripted/model-1" and push["timeoutMs"] == 120_000
    assert "JSON array" in push["system"]
    assert "the answer is 42" in push["prompt"] and "notes.txt" in push["prompt"]
    # Observation goes on while the distillation waits for OpenCode.
    assert s.event(step(project, "ses_a", "p1"))["error"] is None
    r = s.request({"type": "distill_answer", "token": push["token"],
                   "text": findings(("notes.txt stores the answer 42 on its first line", "notes.txt")), "error": None})
    assert r["error"] is None
    deadline = time.time() + 20
    while time.time() < deadline:
        with store(store_target) as led:
            sess = W.session(led.store._conn, "opencode:ses_a")
            if sess.get("lease_until") == 0 and sess.get("distilled_step") == 2:
                break
        time.sleep(0.05)
    with store(store_target) as led:
        conn = led.store._conn
        row = conn.execute("SELECT text, writer, provenance FROM memories WHERE writer = 'watcher'").fetchone()
        assert row is not None and row["text"] == "notes.txt stores the answer 42 on its first line"
        assert row["provenance"] == "distilled from opencode:ses_a steps 1-2"
        assert W.session(conn, "opencode:ses_a")["distilled_step"] == 2
        assert conn.execute("SELECT count(*) FROM llm_calls WHERE ok = 1").fetchone()[0] == 1
    third = s.event(read(project, call="c3"))
    assert "notes.txt stores the answer 42" in third["append"]


def test_a_failed_plugin_distillation_releases_the_lease(server, project, store_target):
    s = server(LEDGER_LLM_BACKEND="opencode", LEDGER_DISTILL_EVERY="1")
    s.event(read(project, call="c1"))
    push = s.pushes.get(timeout=20)["distill"]
    s.request({"type": "distill_answer", "token": push["token"], "text": None, "error": "session.prompt failed"})
    deadline = time.time() + 20
    while time.time() < deadline:
        with store(store_target) as led:
            if W.session(led.store._conn, "opencode:ses_a").get("lease_until") == 0:
                break
        time.sleep(0.05)
    with store(store_target) as led:
        conn = led.store._conn
        assert W.session(conn, "opencode:ses_a")["distilled_step"] == 0
        assert conn.execute("SELECT error FROM llm_calls").fetchone()[0] == "opencode backend: session.prompt failed"
    s.event(read(project, call="c2"))  # the next step may try again
    assert s.pushes.get(timeout=20)["distill"]["token"] != push["token"]


def test_going_away_mid_distillation_releases_the_lease(project, store_target):
    s = Server(store_target, {"LEDGER_LLM_BACKEND": "opencode", "LEDGER_DISTILL_EVERY": "1"})
    s.event(read(project, call="c1"))
    s.pushes.get(timeout=20)
    assert s.close() == 0
    with store(store_target) as led:
        sess = W.session(led.store._conn, "opencode:ses_a")
        assert sess["lease_until"] == 0 and sess["distilled_step"] == 0
