"""``ledger hook <harness> <event>`` as Claude Code runs it: a real subprocess, JSON on
stdin. Whatever goes wrong the hook exits 0, prints nothing on stdout and appends one
line to ``$LEDGER_HOME/hook.log``; it imports nothing outside the standard library."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import WriteLock, foreign_modules, is_pg, spool_settled, store_exists, store_sql
from fakes.hooks import LEDGER_BIN, context_of, post_bash, pre_read, run_hook

from ledger.filekeys import file_key
from ledger.harness.runner import HOOK_BUSY_TIMEOUT_MS
from ledger.service import Ledger


@pytest.fixture
def home(_isolated_home) -> Path:
    return Path(_isolated_home)


@pytest.fixture
def proj(tmp_path) -> Path:
    p = tmp_path / "proj"
    p.mkdir()
    (p / "data.bin").write_bytes(b"\x00\x01binary")
    return p


@pytest.fixture
def store_with_fact(store_target, proj):
    db = store_target
    with Ledger.open(db) as led:
        led.remember("data.bin is a little-endian uint16 array", cluster="code", agent="alice",
                     files=[file_key(proj / "data.bin")])
    return db


def log_lines(home: Path) -> list[str]:
    p = home / "hook.log"
    return p.read_text().splitlines() if p.exists() else []


def assert_failed_open(p: subprocess.CompletedProcess, home: Path, *needles: str) -> str:
    assert p.returncode == 0
    assert p.stdout == b""
    assert p.stderr == b""
    lines = log_lines(home)
    assert len(lines) == 1, lines
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


def test_a_good_payload_injects_and_logs_nothing(store_with_fact, proj, home):
    p = run_hook("PreToolUse", pre_read(proj / "data.bin", cwd=proj), env={"LEDGER_DB": store_with_fact})
    assert p.returncode == 0 and p.stderr == b""
    assert "little-endian uint16" in context_of(p.stdout.decode())
    assert log_lines(home) == []


@pytest.mark.parametrize("stdin,needle", [
    (b"{not json", "not valid JSON"),
    (b"", "empty hook payload"),
    (b"   \n", "empty hook payload"),
    (b"[1, 2]", "must be a JSON object"),
    (b'{"session_id": "s"}', "hook_event_name"),
    (b'{"hook_event_name": "Bogus"}', "unknown Claude Code event"),
    (b"\xff\xfe\x00garbage", "not valid JSON"),
])
def test_bad_payloads_fail_open(stdin, needle, home, tmp_path):
    p = run_hook("PreToolUse", stdin, env={"LEDGER_DB": tmp_path / "l.db"})
    assert_failed_open(p, home, "hook claude-code PreToolUse", needle)


def test_unknown_harness_fails_open(home, proj, tmp_path):
    p = run_hook("", pre_read(proj / "data.bin", cwd=proj), args=["cursor", "PreToolUse"], env={"LEDGER_DB": tmp_path / "l.db"})
    assert_failed_open(p, home, "unknown harness 'cursor'")


def test_no_harness_at_all_fails_open(home):
    p = run_hook("", b"{}", args=[])
    assert_failed_open(p, home, "without a harness")


def test_event_argument_disagreeing_with_the_payload_fails_open(home, proj, store_with_fact):
    p = run_hook("PostToolUse", pre_read(proj / "data.bin", cwd=proj), env={"LEDGER_DB": store_with_fact})
    assert_failed_open(p, home, "installed for PostToolUse but the payload is PreToolUse")
    p = run_hook("", pre_read(proj / "data.bin", cwd=proj), args=["claude-code", "NoSuchEvent"],
                 env={"LEDGER_DB": store_with_fact})
    assert p.returncode == 0 and p.stdout == b"" and "NoSuchEvent" in log_lines(home)[-1]


def test_event_argument_is_optional_and_case_insensitive(store_with_fact, proj, home):
    for args in (["claude-code"], ["claude-code", "pre-tool-use"], ["claude-code", "pretooluse"]):
        p = run_hook("", pre_read(proj / "data.bin", cwd=proj, session="x" + "".join(args)), args=args,
                     env={"LEDGER_DB": store_with_fact})
        assert "uint16" in context_of(p.stdout.decode()), args
    assert log_lines(home) == []


def _bad_store_paths(tmp_path: Path) -> list[tuple[str, Path, str]]:
    a_dir = tmp_path / "a-directory.db"
    a_dir.mkdir()
    not_sqlite = tmp_path / "notes.db"
    not_sqlite.write_text("these are my notes, not a database\n" * 200)
    a_file = tmp_path / "plainfile"
    a_file.write_text("x")
    return [
        ("directory", a_dir, "Cannot open the store"),
        ("not sqlite", not_sqlite, "Cannot open the store"),
        ("parent is a file", a_file / "ledger.db", f"{a_file} is a file, not a folder"),
        ("read-only file system", Path("/proc/ledger-test/ledger.db"), "Cannot create the store folder"),
    ]


@pytest.mark.parametrize("case", range(4))
def test_unusable_store_paths_fail_open(case, tmp_path, home, proj):
    name, path, needle = _bad_store_paths(tmp_path)[case]
    before = path.read_bytes() if path.is_file() else None
    p = run_hook("PreToolUse", pre_read(proj / "data.bin", cwd=proj), env={"LEDGER_DB": path})
    assert_failed_open(p, home, "StoreUnavailable", needle)
    if before is not None:
        assert path.read_bytes() == before, "a non-SQLite file must not be touched"


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root ignores directory permissions")
def test_store_in_a_read_only_directory_fails_open(tmp_path, home, proj):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        p = run_hook("PreToolUse", pre_read(proj / "data.bin", cwd=proj), env={"LEDGER_DB": ro / "ledger.db"})
        assert_failed_open(p, home, "StoreUnavailable")
    finally:
        ro.chmod(0o700)


def test_a_locked_store_fails_open_within_the_hook_busy_timeout(store_with_fact, proj, home):
    holder = WriteLock(store_with_fact)
    try:
        t0 = time.monotonic()
        p = run_hook("PostToolUse", post_bash("cat data.bin", stdout="x", cwd=proj), env={"LEDGER_DB": store_with_fact})
        elapsed = time.monotonic() - t0
        if is_pg(store_with_fact):
            # a finished call goes to the spool first and a drain process stores it: the
            # hook neither waits nor fails (docs/postgres.md "Hooks")
            assert p.returncode == 0 and p.stdout == b"" and p.stderr == b"" and log_lines(home) == []
        else:
            # the observation is kept in the spool, not dropped (issue 12)
            line = assert_failed_open(p, home, "observation", "spooled")
            assert "busy" in line or "locked" in line
            assert HOOK_BUSY_TIMEOUT_MS / 1000 - 0.2 <= elapsed < HOOK_BUSY_TIMEOUT_MS / 1000 + 3.0
        # reads still work while a writer holds the lock? The hook writes first, so it
        # also fails open on PreToolUse, in the same time.
        t0 = time.monotonic()
        p = run_hook("PreToolUse", pre_read(proj / "data.bin", cwd=proj), env={"LEDGER_DB": store_with_fact})
        # One budget for everything the hook waits for: on PostgreSQL the spool's drain
        # lock (held by the drain process, itself stuck behind the writer), then the
        # store's lock; on SQLite the drain's write, then its own (they waited a budget
        # each before).
        assert p.returncode == 0 and p.stdout == b"" and time.monotonic() - t0 < HOOK_BUSY_TIMEOUT_MS / 1000 + 1.5
    finally:
        holder.release()
    # and once the lock is gone the hook works again
    p = run_hook("PreToolUse", pre_read(proj / "data.bin", cwd=proj, session="after"), env={"LEDGER_DB": store_with_fact})
    assert "uint16" in context_of(p.stdout.decode())
    # ... and has drained the spooled observation into the store
    spool_settled(store_with_fact)
    assert store_sql(store_with_fact, "SELECT tool, output FROM observations") == [("Bash", "x")]


def test_the_hook_busy_timeout_is_well_under_the_installed_hook_timeout():
    from ledger.harness.install import install_claude_code  # noqa: F401  (the 10 s there)

    assert HOOK_BUSY_TIMEOUT_MS <= 3_000


def test_a_malformed_config_is_logged_and_defaults_apply(store_with_fact, proj, home):
    (home / "config.toml").write_text("[watcher\nevery = = 3\n")
    p = run_hook("PostToolUse", post_bash("cat data.bin", stdout="x", cwd=proj), env={"LEDGER_DB": store_with_fact})
    assert_failed_open(p, home, "config ignored", "config.toml")
    # injection still works with the defaults (no second log line for the same config file)
    p = run_hook("PreToolUse", pre_read(proj / "data.bin", cwd=proj), env={"LEDGER_DB": store_with_fact})
    assert "uint16" in context_of(p.stdout.decode())
    assert len(log_lines(home)) == 1


def test_a_bad_environment_override_is_ignored_with_one_log_line(store_with_fact, proj, home):
    env = {"LEDGER_DB": store_with_fact, "LEDGER_DISTILL_EVERY": "often", "LEDGER_ESCALATE_AFTER": "2"}
    p = run_hook("PostToolUse", post_bash("ls", stdout="x", cwd=proj), env=env)
    assert_failed_open(p, home, "config ignored", "LEDGER_DISTILL_EVERY")
    run_hook("PreToolUse", pre_read(proj / "data.bin", cwd=proj), env=env)
    run_hook("PostToolUse", post_bash("ls", stdout="x", cwd=proj), env=env)
    # the other (valid) overrides still apply: escalation at the second step (default 4)
    p = run_hook("PreToolUse", pre_read(proj / "data.bin", cwd=proj), env=env)
    assert "LEDGER ESCALATION" in context_of(p.stdout.decode())


def test_a_malformed_config_keeps_valid_environment_overrides(store_with_fact, proj, home):
    (home / "config.toml").write_text("this is not toml")
    env = {"LEDGER_DB": store_with_fact, "LEDGER_ESCALATE_AFTER": "2"}
    run_hook("PreToolUse", pre_read(proj / "data.bin", cwd=proj), env=env)
    run_hook("PostToolUse", post_bash("ls", stdout="x", cwd=proj), env=env)
    p = run_hook("PreToolUse", pre_read(proj / "data.bin", cwd=proj), env=env)
    assert "LEDGER ESCALATION" in context_of(p.stdout.decode())
    assert len(log_lines(home)) == 1  # one "config ignored" line per version of the file, not per hook call


def test_hooks_disabled_is_a_no_op(store_with_fact, proj, home, new_store):
    fresh = new_store("never")
    for db in (store_with_fact, fresh):
        p = run_hook("PreToolUse", pre_read(proj / "data.bin", cwd=proj), env={"LEDGER_DB": db, "LEDGER_HOOKS_DISABLED": "1"})
        assert p.returncode == 0 and p.stdout == b"" and p.stderr == b""
    p = run_hook("PreToolUse", b"{broken", env={"LEDGER_DB": fresh, "LEDGER_HOOKS_DISABLED": "1"})
    assert p.returncode == 0 and p.stdout == b""
    assert not store_exists(fresh) and (is_pg(fresh) or not fresh.parent.exists())
    assert log_lines(home) == []
    assert store_sql(store_with_fact, "SELECT count(*) FROM watch_sessions") == [(0,)]


def test_the_log_line_is_one_line_and_bounded(home, tmp_path):
    p = run_hook("PreToolUse", b'{"hook_event_name": "' + b"x\\n" * 5000 + b'"}', env={"LEDGER_DB": tmp_path / "l.db"})
    line = assert_failed_open(p, home)
    assert len(line) <= 2100


def test_a_log_home_that_cannot_be_written_is_still_silent(tmp_path):
    p = run_hook("PreToolUse", b"{bad", env={"LEDGER_HOME": "/proc/nope", "LEDGER_DB": tmp_path / "l.db"})
    assert p.returncode == 0 and p.stdout == b"" and p.stderr == b""


# ---------------------------------------------------------------- imports

_HEAVY = ("click", "rich", "textual", "starlette", "uvicorn", "httpx", "anyio", "pydantic")
_LEDGER_HEAVY = ("ledger.service", "ledger.store.store", "ledger.cli.app", "ledger.models", "ledger.query",
                 "ledger.conflicts", "ledger.web", "ledger.tui", "ledger.ingest")


def _startup_modules() -> set[str]:
    """What the interpreter itself imports in this venv (site, .pth hooks such as
    ``_distutils_hack`` or ``_virtualenv``): not the hook's doing."""
    p = subprocess.run([sys.executable, "-X", "importtime", "-c", "pass"], capture_output=True, timeout=30)
    return {line.rsplit("|", 1)[1].strip() for line in p.stderr.decode().splitlines() if line.startswith("import time:")}


def imported_modules(argv: list[str], stdin: bytes, env: dict) -> list[str]:
    """Every module a real hook process imported (``python -X importtime`` on the
    installed console script)."""
    p = subprocess.run([sys.executable, "-X", "importtime", LEDGER_BIN, *argv], input=stdin, capture_output=True,
                       env={**os.environ, **{k: str(v) for k, v in env.items()}}, timeout=30)
    assert p.returncode == 0
    mods = []
    for line in p.stderr.decode().splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name != "imported package":
                mods.append(name)
    assert mods, p.stderr.decode()[:500]
    return mods


@pytest.mark.parametrize("event,make", [
    ("PreToolUse", lambda proj: pre_read(proj / "data.bin", cwd=proj)),
    ("PostToolUse", lambda proj: post_bash("cat data.bin", stdout="x", cwd=proj)),
    ("Stop", lambda proj: {"session_id": "s", "cwd": str(proj), "hook_event_name": "Stop", "stop_hook_active": False}),
    ("SessionStart", lambda proj: {"session_id": "s", "cwd": str(proj), "hook_event_name": "SessionStart", "source": "compact"}),
    ("PreCompact", lambda proj: {"session_id": "s", "cwd": str(proj), "hook_event_name": "PreCompact", "trigger": "auto"}),
])
def test_the_hook_imports_only_the_standard_library(event, make, store_with_fact, proj, home):
    mods = imported_modules(["hook", "claude-code", event], json.dumps(make(proj)).encode(), {"LEDGER_DB": store_with_fact})
    startup = _startup_modules()
    foreign = foreign_modules((m for m in mods if m not in startup), store_with_fact)
    assert foreign == [], f"third-party modules on the hook path: {foreign}"
    assert not [m for m in mods if m.split(".")[0] in _HEAVY]
    heavy = sorted(m for m in mods if m.startswith(_LEDGER_HEAVY))
    assert heavy == [], f"heavy ledger modules on the hook path: {heavy}"
    assert "ledger.harness.runner" in mods
    assert log_lines(home) == []


def _gemini(event: str, proj, **fields) -> dict:
    return {"session_id": "g", "transcript_path": "/tmp/g.jsonl", "cwd": str(proj), "hook_event_name": event,
            "timestamp": "2026-12-01T05:22:06.149Z", **fields}


@pytest.mark.parametrize("event,make", [
    ("AfterTool", lambda proj: _gemini("AfterTool", proj, tool_name="read_file", tool_input={"file_path": "data.bin"},
                                       tool_response={"llmContent": "x", "returnDisplay": "x"})),
    ("AfterTool", lambda proj: _gemini("AfterTool", proj, tool_name="run_shell_command", tool_input={"command": "ls -d x"},
                                       tool_response={"llmContent": "Output: x\nExit Code: 2", "returnDisplay": ""})),
    ("BeforeAgent", lambda proj: _gemini("BeforeAgent", proj, prompt="<hook_context>s</hook_context>\n\ngo")),
    ("PreCompress", lambda proj: _gemini("PreCompress", proj, trigger="auto")),
    ("SessionStart", lambda proj: _gemini("SessionStart", proj, source="resume")),
])
def test_the_gemini_hook_imports_only_the_standard_library_too(event, make, store_with_fact, proj, home):
    mods = imported_modules(["hook", "gemini", event], json.dumps(make(proj)).encode(), {"LEDGER_DB": store_with_fact})
    startup = _startup_modules()
    assert foreign_modules((m for m in mods if m not in startup), store_with_fact) == []
    assert not [m for m in mods if m.split(".")[0] in _HEAVY or m.startswith(_LEDGER_HEAVY)]
    assert "ledger.harness.gemini" in mods
    assert log_lines(home) == []


def test_a_failing_hook_does_not_import_heavy_modules_either(home):
    mods = imported_modules(["hook", "claude-code", "PreToolUse"], b"{bad", {})
    assert not [m for m in mods if m.split(".")[0] in _HEAVY or m.startswith(_LEDGER_HEAVY)]


def test_other_commands_do_import_click(tmp_path):
    """The control for the test above: the same measurement sees click when it is used."""
    mods = imported_modules(["--help"], b"", {})
    assert "click" in {m.split(".")[0] for m in mods}


def _escalation_header(ctx: str) -> str:
    return next(line for line in ctx.splitlines() if "LEDGER ESCALATION" in line)


@pytest.mark.parametrize("after,calls,times,steps", [
    ("4", 4, 2, 3),  # gentle at step 1, quiet at 2 and 3, escalated at 4: shown twice, not 4 times
    ("2", 2, 2, 1),  # gentle, then escalated at once
    ("2", 3, 3, 2),  # every escalation is a real showing too
    ("3", 5, 4, 4),  # gentle, quiet, escalated, escalated, escalated
])
def test_escalation_counts_only_real_showings(store_with_fact, proj, home, after, calls, times, steps):
    env = {"LEDGER_DB": store_with_fact, "LEDGER_ESCALATE_AFTER": after}
    for n in range(calls):
        p = run_hook("PreToolUse", pre_read(proj / "data.bin", cwd=proj), env=env)
        run_hook("PostToolUse", post_bash("ls", stdout="x", cwd=proj), env=env)
    head = _escalation_header(context_of(p.stdout.decode()))
    assert f"shown these facts {times} times across {steps} steps" in head, head
