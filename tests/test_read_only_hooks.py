"""Hooks on a store this process cannot write read what they can and write nothing.

Issue: on a read-only store (a shared store on a read-only mount, a read-only file) a
PreToolUse about a file the store has facts on injected nothing: the hook's first write
(the session row) failed and it failed open with an empty answer. It cannot record the
event or count the read, but it can read: the facts are handed back, gently, once per
session and file; PreCompact and SessionStart compact/resume hand back the Session State
and the project's facts; PostToolUse, Stop, SessionEnd and UserPromptSubmit exit 0 and
print nothing. Every process is a real ``ledger hook <harness> <Event>``, as the
installed hooks call it, in a mount namespace where the store is read-only
(tests/readonly.py). On PostgreSQL the same holds for a role that may only read."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess

import pytest
from conftest import LEDGER_BIN, select_only_role
from fakes import codex_hooks as C
from fakes.hooks import payload, post_bash, post_edit, pre_read
from readonly import require_ro_mounts, ro_prefix

from ledger.filekeys import file_key
from ledger.service import Ledger

FACT = "The deploy script needs AWS_PROFILE=ops set"
OTHER = "deploy.sh is run from the repository root"


def _digest(folder) -> dict:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


def _hook(harness: str, event: str, p: dict, *, db, home, prefix=()) -> subprocess.CompletedProcess:
    return subprocess.run([*prefix, LEDGER_BIN, "hook", harness, event], input=json.dumps(p).encode(),
                          capture_output=True, timeout=60,
                          env={**os.environ, "LEDGER_DB": str(db), "LEDGER_HOME": str(home)})


def _context(out: bytes) -> str:
    if not out:
        return ""
    h = json.loads(out).get("hookSpecificOutput", {})
    return h.get("additionalContext") or ""


@pytest.fixture()
def proj(tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "deploy.sh").write_text("#!/bin/sh\naws s3 sync . s3://bucket\n")
    (proj / "README.md").write_text("# A project\n")
    return proj


def _fill(db, proj, home) -> None:
    """Facts about deploy.sh, and a session ``s1`` whose record has a prompt and an edit
    (what PreCompact and SessionStart compact hand back), written while the store could
    be written."""
    with Ledger.open(db) as led:
        led.remember(FACT, cluster="code", agent="alice", files=[file_key(proj / "deploy.sh")])
        led.remember(OTHER, cluster="code", agent="alice", files=[file_key(proj / "deploy.sh")])
    for event, p in (("UserPromptSubmit", payload("UserPromptSubmit", cwd=proj, prompt="Fix the nightly deploy")),
                     ("PostToolUse", post_edit(proj / "README.md", cwd=proj))):
        r = _hook("claude-code", event, p, db=db, home=home)
        assert r.returncode == 0 and r.stderr == b"", r.stderr


@pytest.fixture()
def ro_sqlite(tmp_path, proj):
    """``(db, prefix)``: a SQLite store in its own folder, filled and closed cleanly, and
    the argv prefix that runs a process with that folder read-only."""
    require_ro_mounts()
    db = tmp_path / "store" / "ledger.db"
    _fill(db, proj, tmp_path / "home-writer")
    con = sqlite3.connect(db)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    return db, ro_prefix(db.parent)


@pytest.mark.sqlite_only  # a read-only mount of the store's folder: a SQLite file
def test_pre_tool_use_on_a_read_only_store_hands_the_facts_back(ro_sqlite, proj, tmp_path):
    db, ro = ro_sqlite
    home = tmp_path / "home"
    before = _digest(db.parent)
    first = _hook("claude-code", "PreToolUse", pre_read(proj / "deploy.sh", cwd=proj, session="s2"), db=db, home=home,
                  prefix=ro)
    assert first.returncode == 0 and first.stderr == b"", first.stderr
    out = json.loads(first.stdout)
    assert out["hookSpecificOutput"]["hookEventName"] == "PreToolUse"
    text = out["hookSpecificOutput"]["additionalContext"]
    assert FACT in text and OTHER in text and "KNOWN FACTS" in text, text
    # Not counted (the store cannot be written), and not repeated on every call of the
    # session: the second read of the same file in the same session adds nothing.
    again = _hook("claude-code", "PreToolUse", pre_read(proj / "deploy.sh", cwd=proj, session="s2"), db=db, home=home,
                  prefix=ro)
    assert again.returncode == 0 and again.stdout == b"" and again.stderr == b"", again
    # The note is outside the store; notes of sessions long gone are removed.
    notes = list((home / "readonly-shown").iterdir())
    assert len(notes) == 1
    stale = home / "readonly-shown" / "0123456789abcdef01234567.json"
    stale.write_text("{}")
    os.utime(stale, (0, 0))
    # Another session is shown them once too.
    other = _hook("claude-code", "PreToolUse", pre_read(proj / "deploy.sh", cwd=proj, session="s3"), db=db, home=home,
                  prefix=ro)
    assert FACT in _context(other.stdout)
    assert not stale.exists() and len(list((home / "readonly-shown").iterdir())) == 2
    # A file without facts: nothing.
    none = _hook("claude-code", "PreToolUse", pre_read(proj / "README.md", cwd=proj, session="s2"), db=db, home=home,
                 prefix=ro)
    assert none.returncode == 0 and none.stdout == b"" and none.stderr == b""
    assert _digest(db.parent) == before
    con = sqlite3.connect(db)
    assert con.execute("SELECT count(*) FROM watch_sessions WHERE session_id IN ('s2', 's3')").fetchone()[0] == 0
    assert con.execute("SELECT count(*) FROM injections").fetchone()[0] == 0
    con.close()


@pytest.mark.sqlite_only  # a read-only mount of the store's folder: a SQLite file
def test_newer_facts_are_shown_again_on_a_read_only_store(tmp_path, proj):
    """The once-per-session note keeps the newest fact shown per file: a fact learned
    since (the store was writable for a moment, another machine wrote it) is shown."""
    require_ro_mounts()
    db = tmp_path / "store" / "ledger.db"
    home = tmp_path / "home"
    with Ledger.open(db) as led:
        led.remember(FACT, cluster="code", agent="alice", files=[file_key(proj / "deploy.sh")])
    ro = ro_prefix(db.parent)
    assert FACT in _context(_hook("claude-code", "PreToolUse", pre_read(proj / "deploy.sh", cwd=proj), db=db, home=home,
                                  prefix=ro).stdout)
    with Ledger.open(db) as led:
        led.remember(OTHER, cluster="code", agent="alice", files=[file_key(proj / "deploy.sh")])
    text = _context(_hook("claude-code", "PreToolUse", pre_read(proj / "deploy.sh", cwd=proj), db=db, home=home,
                          prefix=ro).stdout)
    assert OTHER in text, text


@pytest.mark.sqlite_only  # a read-only mount of the store's folder: a SQLite file
def test_every_claude_code_event_on_a_read_only_store(ro_sqlite, proj, tmp_path):
    """Each event exits 0 and prints only what Claude Code reads: nothing, or its JSON
    with the read-only part (the Session State around a compaction)."""
    db, ro = ro_sqlite
    home = tmp_path / "home"
    before = _digest(db.parent)
    runs = {
        "SessionStart startup": ("SessionStart", payload("SessionStart", cwd=proj, source="startup")),
        "UserPromptSubmit": ("UserPromptSubmit", payload("UserPromptSubmit", cwd=proj, prompt="And the weekly one")),
        "PostToolUse": ("PostToolUse", post_bash("make", stdout="built", cwd=proj)),
        "PreCompact": ("PreCompact", payload("PreCompact", cwd=proj, trigger="auto", custom_instructions="")),
        "SessionStart compact": ("SessionStart", payload("SessionStart", cwd=proj, source="compact")),
        "SessionStart resume": ("SessionStart", payload("SessionStart", cwd=proj, source="resume")),
        "Stop": ("Stop", payload("Stop", cwd=proj, stop_hook_active=False)),
        "SessionEnd": ("SessionEnd", payload("SessionEnd", cwd=proj, reason="other")),
    }
    out = {}
    for name, (event, p) in runs.items():
        r = _hook("claude-code", event, p, db=db, home=home, prefix=ro)
        assert r.returncode == 0 and r.stderr == b"", (name, r.stderr)
        out[name] = r.stdout
    for name in ("SessionStart startup", "UserPromptSubmit", "PostToolUse", "Stop", "SessionEnd"):
        assert out[name] == b"", (name, out[name])
    # PreCompact takes plain text on stdout (no hookSpecificOutput: docs/harness-contracts.md A4)
    assert out["PreCompact"].decode().startswith("## Session State") and b"Fix the nightly deploy" in out["PreCompact"]
    for name in ("SessionStart compact", "SessionStart resume"):
        h = json.loads(out[name])["hookSpecificOutput"]
        assert h["hookEventName"] == "SessionStart"
        assert "Fix the nightly deploy" in h["additionalContext"] and FACT in h["additionalContext"], (name, h)
    assert _digest(db.parent) == before
    assert not (proj / ".agents" / "checkpoint.md").exists()  # Stop writes no checkpoint it cannot keep
    log = (home / "hook.log").read_text()
    assert "read-only" in log and "Traceback" not in log, log


@pytest.mark.sqlite_only  # a read-only store file in a writable folder: a SQLite file
def test_post_tool_use_on_a_read_only_file_is_spooled_and_facts_still_shown(tmp_path, proj):
    require_ro_mounts()
    db = tmp_path / "store" / "ledger.db"
    home = tmp_path / "home"
    with Ledger.open(db) as led:
        led.remember(FACT, cluster="code", agent="alice", files=[file_key(proj / "deploy.sh")])
    ro = ro_prefix(db)
    pre = _hook("claude-code", "PreToolUse", pre_read(proj / "deploy.sh", cwd=proj), db=db, home=home, prefix=ro)
    assert pre.returncode == 0 and pre.stderr == b"" and FACT in _context(pre.stdout)
    post = _hook("claude-code", "PostToolUse", post_bash("make -j4", stdout="built", cwd=proj), db=db, home=home, prefix=ro)
    assert post.returncode == 0 and post.stdout == b"" and post.stderr == b""
    assert "built" in (db.parent / "ledger.db.spool" / "pending.jsonl").read_text()


@pytest.mark.sqlite_only  # a read-only mount of the store's folder: a SQLite file
def test_codex_hooks_on_a_read_only_store(ro_sqlite, proj, tmp_path):
    """Codex goes through the same runner: its apply_patch PreToolUse gets the facts in
    Codex's output shape, its other events answer nothing or their read-only part."""
    db, ro = ro_sqlite
    home = tmp_path / "home"
    before = _digest(db.parent)
    pre = _hook("codex", "PreToolUse", C.pre_patch(C.patch("*** Update File: deploy.sh", "@@", "-aws", "+aws --profile ops"),
                                                   cwd=proj), db=db, home=home, prefix=ro)
    assert pre.returncode == 0 and pre.stderr == b"", pre.stderr
    h = json.loads(pre.stdout)["hookSpecificOutput"]
    assert h["hookEventName"] == "PreToolUse" and FACT in h["additionalContext"], h
    assert pre.stdout.isascii()  # Codex's output is ASCII-only JSON
    for event, p in (("SessionStart", C.session_start(cwd=proj)), ("UserPromptSubmit", C.user_prompt("go", cwd=proj)),
                     ("PostToolUse", C.post_bash("make", "built", cwd=proj)), ("Stop", C.stop(cwd=proj)),
                     ("PreCompact", C.pre_compact(cwd=proj)), ("SessionEnd", C.session_end(cwd=proj))):
        r = _hook("codex", event, p, db=db, home=home, prefix=ro)
        assert r.returncode == 0 and r.stderr == b"", (event, r.stderr)
        if r.stdout:  # only JSON Codex's schema for the event takes
            json.loads(r.stdout)
    resumed = _hook("codex", "SessionStart", C.session_start("resume", cwd=proj), db=db, home=home, prefix=ro)
    assert FACT in json.loads(resumed.stdout)["hookSpecificOutput"]["additionalContext"]
    assert _digest(db.parent) == before


@pytest.mark.sqlite_only  # a read-only mount of the store's folder: a SQLite file
def test_gemini_after_tool_on_a_read_only_store_appends_the_facts(ro_sqlite, proj, tmp_path):
    """Gemini's AfterTool is the injection decision plus the observation (the adapter
    expands it into both): on a read-only store the facts still come back, in Gemini's
    shape and without angle brackets, and nothing is written."""
    db, ro = ro_sqlite
    home = tmp_path / "home"
    before = _digest(db.parent)
    base = {"session_id": "g1", "transcript_path": "/tmp/g1.json", "cwd": str(proj), "timestamp": "2026-12-01T05:22:06.149Z"}
    after = {**base, "hook_event_name": "AfterTool", "tool_name": "read_file", "tool_input": {"file_path": "deploy.sh"},
             "tool_response": {"llmContent": "aws s3 sync", "returnDisplay": "aws s3 sync"}}
    r = _hook("gemini", "AfterTool", after, db=db, home=home, prefix=ro)
    assert r.returncode == 0 and r.stderr == b"", r.stderr
    text = json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
    assert FACT in text and "<" not in text and ">" not in text, text
    for event, p in (("BeforeTool", {**base, "hook_event_name": "BeforeTool", "tool_name": "read_file",
                                     "tool_input": {"file_path": "deploy.sh"}}),
                     ("SessionStart", {**base, "hook_event_name": "SessionStart", "source": "startup"}),
                     ("PreCompress", {**base, "hook_event_name": "PreCompress", "trigger": "auto"}),
                     ("AfterAgent", {**base, "hook_event_name": "AfterAgent", "prompt": "go", "prompt_response": "done",
                                     "stop_hook_active": False})):
        out = _hook("gemini", event, p, db=db, home=home, prefix=ro)
        assert out.returncode == 0 and out.stderr == b"", (event, out.stderr)
        if out.stdout:
            json.loads(out.stdout)
    assert _digest(db.parent) == before


# ------------------------------------------------------------------ PostgreSQL
@pytest.fixture()
def pg_reader(engine, store_target, pg_server):
    """The store URL with a login role that may only read its schema (a shared team
    store handed to a reader), dropped after the test."""
    if engine != "postgresql":
        pytest.skip("a PostgreSQL role; the SQLite cases above mount the store read-only")
    with Ledger.open(store_target):
        pass  # the tables, made by the owner
    with select_only_role(pg_server, store_target) as (url, _schema, _role):
        yield url


def test_a_read_only_role_gets_the_facts_on_pre_tool_use(engine, store_target, pg_reader, proj, tmp_path):
    """PostgreSQL: a role that may only read is refused every write (read-only), and the
    hook answers as on a read-only SQLite store."""
    with Ledger.open(store_target) as led:
        led.remember(FACT, cluster="code", agent="alice", files=[file_key(proj / "deploy.sh")])
    home = tmp_path / "home"
    pre = _hook("claude-code", "PreToolUse", pre_read(proj / "deploy.sh", cwd=proj, session="r1"), db=pg_reader, home=home)
    assert pre.returncode == 0 and pre.stderr == b"", pre.stderr
    assert FACT in _context(pre.stdout), (pre.stdout, (home / "hook.log").read_text() if (home / "hook.log").exists() else "")
    again = _hook("claude-code", "PreToolUse", pre_read(proj / "deploy.sh", cwd=proj, session="r1"), db=pg_reader, home=home)
    assert again.returncode == 0 and again.stdout == b""
    for event, p in (("PreCompact", payload("PreCompact", cwd=proj, session="r1", trigger="auto", custom_instructions="")),
                     ("SessionStart", payload("SessionStart", cwd=proj, session="r1", source="compact")),
                     ("Stop", payload("Stop", cwd=proj, session="r1", stop_hook_active=False))):
        r = _hook("claude-code", event, p, db=pg_reader, home=home)
        assert r.returncode == 0 and r.stderr == b"", (event, r.stderr)
    resumed = _hook("claude-code", "SessionStart", payload("SessionStart", cwd=proj, session="r1", source="resume"),
                    db=pg_reader, home=home)
    assert FACT in _context(resumed.stdout)
    import psycopg

    with psycopg.connect(store_target) as c:
        assert c.execute("SELECT count(*) FROM watch_sessions WHERE session_id = 'r1'").fetchone()[0] == 0
