"""Codex CLI adapter: payloads (the shapes of Codex 0.169.0's generated hook schemas, as
the real ``codex exec`` sent them) into harness-neutral events, the files its shell and
``apply_patch`` tools touch, and answers in Codex's output format; then the real
``ledger hook codex <Event>`` subprocess: facts injected, session state carried through
a compaction, failures open."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import foreign_modules
from fakes import codex_hooks as C
from test_hook_runner import _HEAVY, _LEDGER_HEAVY, _startup_modules, imported_modules

from ledger.events import HookEvent, HookResponse, ToolCall
from ledger.filekeys import file_key
from ledger.harness import codex as cx
from ledger.harness.adapters import with_hook
from ledger.service import Ledger
from ledger.watcher.paths import files_touched, is_file_tool, patch_paths

# --------------------------------------------------------------------------- parsing


def parse(p: dict, expected: str | None = None) -> HookEvent:
    return cx.parse_payload(json.dumps(p).encode(), expected)


@pytest.mark.parametrize("make,kind,source", [
    (lambda: C.session_start("startup"), "session_start", "startup"),
    (lambda: C.session_start("compact"), "session_start", "compact"),
    (lambda: C.user_prompt("fix the build"), "user_prompt", None),
    (lambda: C.pre_bash("cat notes.txt"), "pre_tool", None),
    (lambda: C.post_bash("cat notes.txt", "hello\n"), "post_tool", None),
    (lambda: C.pre_patch(C.patch("*** Add File: a.txt", "+x")), "pre_tool", None),
    (lambda: C.stop(), "stop", None),
    (lambda: C.pre_compact("manual"), "pre_compact", "manual"),
    (lambda: C.session_end(), "session_end", "other"),
])
def test_every_event_ledger_hooks_becomes_its_kind(make, kind, source):
    p = make()
    ev = parse(p, p["hook_event_name"])
    assert (ev.harness, ev.kind, ev.source) == ("codex", kind, source)
    assert ev.session_id == C.SESSION and ev.cwd == "/tmp" and ev.transcript_path.endswith(".jsonl")
    assert ev.raw_event_name == p["hook_event_name"] and ev.project is None


def test_tool_calls_keep_codex_names_inputs_and_ids():
    ev = parse(C.post_bash("cat notes.txt", "hello\n", tool_use_id="call_7"))
    assert ev.tool == ToolCall(name="Bash", input={"command": "cat notes.txt"}, output="hello\n", ok=None,
                               tool_use_id="call_7")
    assert parse(C.user_prompt("fix the build")).prompt == "fix the build"
    assert parse(C.stop(active=True)).stop_hook_active is True
    assert parse({**C.pre_bash("ls"), "agent_id": "agent-1", "agent_type": "worker"}).agent_id == "agent-1"


@pytest.mark.parametrize("response,ok", [
    ("Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nA added.txt\n", True),
    ("Exit code: 1\nWall time: 0 seconds\nOutput:\napply_patch verification failed: no such file\n", False),
    ("hello\n", None),  # shell output carries no exit code
    ("", None),
])
def test_tool_responses_say_ok_only_when_codex_does(response, ok):
    text, got = cx.tool_output("apply_patch", response)
    assert text == response and got is ok


def test_structured_mcp_results_are_flattened_and_errors_seen():
    ev = parse(C.post_mcp("docs", "search", {"q": "x"}, {"content": [{"type": "text", "text": "found it"}], "isError": True}))
    assert ev.tool.name == "mcp__docs__search" and "found it" in ev.tool.output and ev.tool.ok is False


@pytest.mark.parametrize("raw,needle", [
    (b"", "empty hook payload"),
    (b"{bad", "not valid JSON"),
    (b"[1]", "must be a JSON object"),
    (json.dumps({"session_id": "s"}).encode(), "no 'hook_event_name'"),
    (json.dumps({"hook_event_name": "PermissionRequest"}).encode(), "unknown Codex event"),
])
def test_bad_payloads_say_what_is_wrong(raw, needle):
    with pytest.raises(ValueError, match=needle):
        cx.parse_payload(raw)


def test_the_event_on_the_command_line_must_agree():
    with pytest.raises(ValueError, match="installed for Stop but the payload is PreToolUse"):
        parse(C.pre_bash("ls"), "Stop")
    with pytest.raises(ValueError, match="unknown Codex event 'Nope' on the command line"):
        parse(C.pre_bash("ls"), "Nope")
    assert parse(C.pre_bash("ls"), "pre-tool-use").kind == "pre_tool"


# --------------------------------------------------------------------------- files touched


def test_a_patch_names_its_files_in_add_update_and_delete_lines(tmp_path):
    """The issue's example: the files an apply_patch touches are its *** lines."""
    text = C.patch("*** Update File: src/app.py", "@@", "-a", "+b", "*** Add File: docs/new.md", "+# New",
                   "*** Delete File: old.txt")
    tool = parse(C.pre_patch(text, cwd=tmp_path)).tool
    assert is_file_tool(tool.name)
    assert files_touched(tool, str(tmp_path)) == [str(tmp_path / "src/app.py"), str(tmp_path / "docs/new.md"),
                                                  str(tmp_path / "old.txt")]


def test_a_moved_file_counts_under_both_names(tmp_path):
    text = C.patch("*** Update File: a/old_name.py", "*** Move to: a/new_name.py", "@@", "-x", "+y")
    assert patch_paths(text, str(tmp_path)) == [str(tmp_path / "a/old_name.py"), str(tmp_path / "a/new_name.py")]


def test_marker_text_inside_a_hunk_is_content_not_a_file(tmp_path):
    text = C.patch("*** Add File: notes.md", "+*** Update File: not/a/file.py", "+ *** Delete File: nor.py",
                   "*** Update File: /abs/elsewhere.py", "@@", " *** Add File: context.py", "-x", "+y")
    assert patch_paths(text, str(tmp_path)) == [str(tmp_path / "notes.md"), "/abs/elsewhere.py"]


def test_opencode_patch_tool_is_the_same_kind(tmp_path):
    tool = ToolCall(name="patch", input={"patchText": C.patch("*** Update File: lib/x.ts", "@@", "-a", "+b")})
    assert files_touched(tool, str(tmp_path)) == [str(tmp_path / "lib/x.ts")]


@pytest.mark.parametrize("command,expected", [
    ("cat notes.txt", ["notes.txt"]),
    ("sed -n '1,20p' src/main.rs && wc -l data/rows.csv", ["src/main.rs", "data/rows.csv"]),
    ("cd sub && python -m pytest tests/test_a.py::test_x", ["sub/tests/test_a.py"]),
])
def test_shell_commands_use_the_command_path_extraction(tmp_path, command, expected):
    (tmp_path / "sub").mkdir()
    tool = parse(C.pre_bash(command, cwd=tmp_path)).tool
    assert files_touched(tool, str(tmp_path)) == [str(tmp_path / e) for e in expected]


# --------------------------------------------------------------------------- rendering


def render(p: dict, **resp) -> dict | str:
    out = cx.render_response(parse(p), HookResponse(**resp))
    return json.loads(out) if out else ""


def test_answers_use_codex_keys_per_event():
    assert render(C.session_start("compact"), additional_context="state") == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "state"}}
    assert render(C.post_bash("cat x", "y"), additional_context="facts") == {
        "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "facts"}}
    assert render(C.pre_bash("cat x"), additional_context="facts", deny_reason="read the facts first") == {
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "facts",
                               "permissionDecision": "deny", "permissionDecisionReason": "read the facts first"}}
    assert render(C.post_bash("cat x", "y"), deny_reason="stop looping") == {"decision": "block", "reason": "stop looping"}
    assert render(C.user_prompt("hi"), deny_reason="no") == {"decision": "block", "reason": "no"}
    assert render(C.stop(), additional_context="unsaved work") == {"decision": "block", "reason": "unsaved work"}


def test_what_codex_cannot_take_is_not_sent():
    # PreCompact's schema has no context field: the text would fail the hook.
    assert render(C.pre_compact(), additional_context="state") == ""
    assert render(C.pre_compact(), system_message="saved") == {"systemMessage": "saved"}
    assert render(C.session_end(), additional_context="x", system_message="y") == ""
    assert render(C.stop(active=True), deny_reason="again") == ""  # loop guard
    assert render(C.pre_bash("ls")) == ""
    assert "permissionDecision" not in json.dumps(render(C.pre_bash("ls"), additional_context="facts"))


def test_the_registry_finds_codex():
    adapter = with_hook("codex")
    assert adapter.HARNESS == "codex" and adapter.TITLE == "Codex" and adapter.parse_payload is cx.parse_payload


# --------------------------------------------------------------------------- the real hook process


@pytest.fixture
def home(_isolated_home) -> Path:
    return Path(_isolated_home)


@pytest.fixture
def proj(tmp_path) -> Path:
    p = tmp_path / "proj"
    p.mkdir()
    (p / "data.bin").write_bytes(b"\x00\x01binary")
    (p / "conf.toml").write_text("port = 8080\n")
    return p


@pytest.fixture
def store(store_target, proj):
    db = store_target
    with Ledger.open(db) as led:
        led.remember("data.bin is a little-endian uint16 array", cluster="code", agent="alice",
                     files=[file_key(proj / "data.bin")])
        led.remember("conf.toml port must match the proxy's upstream", cluster="code", agent="alice",
                     files=[file_key(proj / "conf.toml")])
    return db


def context(out: bytes) -> str:
    d = json.loads(out)
    return d["hookSpecificOutput"].get("additionalContext", "")


@pytest.mark.parametrize("payload,fact", [
    (lambda proj: C.pre_bash("xxd data.bin | head", cwd=proj), "little-endian uint16"),
    (lambda proj: C.pre_patch(C.patch("*** Update File: conf.toml", "@@", "-port = 8080", "+port = 9090"), cwd=proj),
     "must match the proxy"),
    (lambda proj: C.pre_bash(f"grep -n port {proj}/conf.toml", cwd="/"), "must match the proxy"),
])
def test_a_known_fact_comes_back_when_codex_touches_its_file(payload, fact, proj, store, home):
    p = payload(proj)
    r = C.run_codex_hook(p["hook_event_name"], p, env={"LEDGER_DB": store})
    assert r.returncode == 0 and r.stderr == b""
    assert fact in context(r.stdout)
    assert not (home / "hook.log").exists()


@pytest.mark.parametrize("stdin", [b"{bad", json.dumps(C.stop()).encode()])
def test_the_hook_fails_open(stdin, home, tmp_path):
    # A wrong event argument (Stop payload to the PreToolUse hook) or broken JSON: exit 0,
    # nothing on stdout, one log line.
    r = C.run_codex_hook("PreToolUse", stdin, env={"LEDGER_DB": tmp_path / "x.db"})
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    assert len((home / "hook.log").read_text().splitlines()) == 1


@pytest.mark.parametrize("make", [
    lambda proj: C.pre_patch(C.patch("*** Update File: conf.toml", "@@", "-a", "+b"), cwd=proj),
    lambda proj: C.post_bash("cat data.bin", "x", cwd=proj),
    lambda proj: C.session_start("compact", cwd=proj),
])
def test_the_codex_hook_imports_only_the_standard_library(make, proj, store, home):
    p = make(proj)
    mods = imported_modules(["hook", "codex", p["hook_event_name"]], json.dumps(p).encode(), {"LEDGER_DB": store})
    startup = _startup_modules()
    assert foreign_modules((m for m in mods if m not in startup), store) == []
    assert not [m for m in mods if m.split(".")[0] in _HEAVY or m.startswith(_LEDGER_HEAVY)]
    assert "ledger.harness.codex" in mods
    assert not (home / "hook.log").exists()


def test_session_state_survives_a_codex_compaction(proj, store, home):
    """PreCompact cannot add to Codex's summary, so the state comes back on SessionStart
    with source compact: the task in the user's words, the files apply_patch edited and
    the project's facts."""
    env = {"LEDGER_DB": store}
    text = C.patch("*** Update File: conf.toml", "@@", "-port = 8080", "+port = 9090", "*** Add File: notes/plan.md", "+x")
    for p in (C.session_start("startup", cwd=proj), C.user_prompt("Move the service to port 9090", cwd=proj),
              C.post_patch(text, cwd=proj), C.post_patch(C.patch("*** Delete File: gone.txt"), exit_code=1, cwd=proj)):
        r = C.run_codex_hook(p["hook_event_name"], p, env=env)
        assert r.returncode == 0 and r.stderr == b"", r
    r = C.run_codex_hook("PreCompact", C.pre_compact(cwd=proj), env=env)
    assert (r.returncode, r.stdout) == (0, b"")  # nothing Codex would reject
    r = C.run_codex_hook("SessionStart", C.session_start("compact", cwd=proj), env=env)
    ctx = context(r.stdout)
    assert "Session State" in ctx and "Move the service to port 9090" in ctx
    assert "conf.toml" in ctx and "notes/plan.md" in ctx and "gone.txt" not in ctx  # the failed patch changed nothing
    assert "must match the proxy" in ctx
    r = C.run_codex_hook("Stop", C.stop(cwd=proj), env=env)
    assert r.returncode == 0 and r.stdout == b""
    checkpoint = (proj / ".agents" / "checkpoint.md").read_text()
    assert "conf.toml" in checkpoint and "Move the service to port 9090" in checkpoint
    assert not (home / "hook.log").exists()
    assert os.environ.get("LEDGER_DB") is None  # the store came only through the hook's env
