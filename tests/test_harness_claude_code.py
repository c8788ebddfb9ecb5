"""Claude Code adapter: payload parsing, tool-output normalisation, output rendering.

Payload shapes follow docs/harness-contracts.md §A3/A4; tool inputs and structured tool
results come from real Claude Code transcripts under ../shared/data/transcripts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ledger.events import KINDS, HookEvent, HookResponse, ToolCall
from ledger.harness import claude_code as cc
from ledger.watcher.paths import files_touched, is_file_tool

TRANSCRIPTS = Path(__file__).resolve().parents[2] / "shared" / "data" / "transcripts"
SHORT = TRANSCRIPTS / "short.jsonl"
needs_transcripts = pytest.mark.skipif(
    not SHORT.exists(), reason="real transcripts not available (../shared/data/transcripts)"
)

SESSION = "abc123"
CWD = "/home/user/project"


def payload(event: str, **fields: object) -> str:
    base = {
        "session_id": SESSION,
        "transcript_path": "/home/user/.claude/projects/p/abc123.jsonl",
        "cwd": CWD,
        "permission_mode": "default",
        "hook_event_name": event,
    }
    base.update(fields)
    return json.dumps(base)


# --------------------------------------------------------------------------- loader


def tool_uses(path: Path) -> list[tuple[dict, str]]:
    """(tool_use block, cwd) for every assistant tool_use in a transcript."""
    out = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            msg = rec.get("message")
            if rec.get("type") != "assistant" or not isinstance(msg, dict):
                continue
            for block in msg.get("content") or []:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    out.append((block, rec.get("cwd") or "/"))
    return out


def tool_results(path: Path) -> list[tuple[str, object]]:
    """(tool name, toolUseResult) pairs: the structured tool_response shapes."""
    names: dict[str, str] = {}
    out = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            msg = rec.get("message")
            if not isinstance(msg, dict):
                continue
            content = msg.get("content")
            if rec.get("type") == "assistant" and isinstance(content, list):
                for b in content:
                    if isinstance(b, dict) and b.get("type") == "tool_use":
                        names[b["id"]] = b["name"]
            elif rec.get("type") == "user" and "toolUseResult" in rec and isinstance(content, list):
                ids = [b.get("tool_use_id") for b in content if isinstance(b, dict)]
                name = next((names[i] for i in ids if i in names), "")
                out.append((name, rec["toolUseResult"]))
    return out


# --------------------------------------------------------------------------- parsing


def test_events_cover_the_brief() -> None:
    for name in ("SessionStart", "PreToolUse", "PostToolUse", "Stop", "PreCompact",
                 "SessionEnd", "UserPromptSubmit"):
        assert name in cc.EVENTS
    assert set(cc.EVENTS.values()) == set(KINDS)


def test_session_start_compact() -> None:
    ev = cc.parse_payload(payload("SessionStart", source="compact", model="claude-x"))
    assert ev.kind == "session_start"
    assert ev.harness == "claude-code"
    assert ev.session_id == SESSION
    assert ev.cwd == CWD
    assert ev.source == "compact"
    assert ev.transcript_path.endswith("abc123.jsonl")
    assert ev.tool is None
    assert ev.raw_event_name == "SessionStart"


def test_pre_tool_use_bash() -> None:
    raw = payload(
        "PreToolUse",
        tool_name="Bash",
        tool_input={"command": "pytest -q tests/test_a.py", "description": "run", "timeout": 1000},
        tool_use_id="toolu_01",
    )
    ev = cc.parse_payload(raw.encode(), "PreToolUse")
    assert ev.kind == "pre_tool"
    assert ev.tool == ToolCall(
        name="Bash",
        input={"command": "pytest -q tests/test_a.py", "description": "run", "timeout": 1000},
        output=None,
        ok=None,
        tool_use_id="toolu_01",
        duration_ms=None,
    )


def test_post_tool_use_bash_output_and_duration() -> None:
    raw = payload(
        "PostToolUse",
        tool_name="Bash",
        tool_input={"command": "ls"},
        tool_response={"stdout": "a.py\nb.py\n", "stderr": "warn: x\n", "interrupted": False,
                       "isImage": False},
        tool_use_id="toolu_02",
        duration_ms=12,
    )
    ev = cc.parse_payload(raw, "PostToolUse")
    assert ev.kind == "post_tool"
    assert ev.tool.output == "a.py\nb.py\n[stderr]\nwarn: x"
    assert ev.tool.ok is True
    assert ev.tool.duration_ms == 12.0


def test_post_tool_use_bash_interrupted_is_not_ok() -> None:
    raw = payload("PostToolUse", tool_name="Bash", tool_input={"command": "sleep 9"},
                  tool_response={"stdout": "", "stderr": "", "interrupted": True})
    ev = cc.parse_payload(raw)
    assert ev.tool.ok is False
    assert "[interrupted]" in ev.tool.output


def test_post_tool_use_failure() -> None:
    raw = payload("PostToolUseFailure", tool_name="Bash", tool_input={"command": "false"},
                  tool_use_id="t", error="Exit code 1\nboom", is_interrupt=False)
    ev = cc.parse_payload(raw, "PostToolUseFailure")
    assert ev.kind == "post_tool"
    assert ev.raw_event_name == "PostToolUseFailure"
    assert ev.tool.ok is False
    assert ev.tool.output == "Exit code 1\nboom"


def test_user_prompt_stop_precompact_session_end() -> None:
    ev = cc.parse_payload(payload("UserPromptSubmit", prompt="fix the bug"))
    assert (ev.kind, ev.prompt) == ("user_prompt", "fix the bug")

    ev = cc.parse_payload(payload("Stop", stop_hook_active=True, last_assistant_message="done"))
    assert (ev.kind, ev.stop_hook_active) == ("stop", True)
    ev = cc.parse_payload(payload("Stop", stop_hook_active=False))
    assert ev.stop_hook_active is False

    ev = cc.parse_payload(payload("PreCompact", trigger="manual", custom_instructions="keep X"))
    assert (ev.kind, ev.source, ev.prompt) == ("pre_compact", "manual", "keep X")

    ev = cc.parse_payload(payload("SessionEnd", reason="prompt_input_exit"))
    assert (ev.kind, ev.source) == ("session_end", "prompt_input_exit")


def test_subagent_id_is_kept() -> None:
    ev = cc.parse_payload(payload("PostToolUse", tool_name="Read", agent_id="a1",
                                  agent_type="Explore", tool_input={"file_path": "/x"},
                                  tool_response={"type": "text", "file": {"content": "x"}}))
    assert ev.agent_id == "a1"


def test_event_argument_spellings() -> None:
    raw = payload("PostToolUse", tool_name="Read", tool_input={})
    for spelling in ("PostToolUse", "posttooluse", "post-tool-use", "post_tool_use"):
        assert cc.parse_payload(raw, spelling).kind == "post_tool"


def test_tolerates_missing_and_mistyped_fields(monkeypatch) -> None:
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    raw = json.dumps({"hook_event_name": "PostToolUse", "tool_input": "not a dict",
                      "session_id": 5, "duration_ms": "slow", "tool_response": 42})
    ev = cc.parse_payload(raw)
    assert ev.session_id == ""
    assert ev.cwd == ""  # no guess: only the payload or $CLAUDE_PROJECT_DIR name a project
    assert ev.tool.input == {}
    assert ev.tool.duration_ms is None
    assert ev.tool.output == "42"


def test_utf8_bom_and_bytes() -> None:
    raw = ("\ufeff" + payload("UserPromptSubmit", prompt="héllo")).encode("utf-8")
    assert cc.parse_payload(raw).prompt == "héllo"


@pytest.mark.parametrize(
    "raw, message",
    [
        ("", "empty"),
        ("{not json", "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        (json.dumps({"session_id": "x"}), "no 'hook_event_name'"),
        (json.dumps({"hook_event_name": ""}), "no 'hook_event_name'"),
        (json.dumps({"hook_event_name": "Notification"}), "unknown Claude Code event"),
        (b"\xff\xfe{", "not valid JSON"),
    ],
)
def test_bad_payloads_raise_value_error(raw: str | bytes, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        cc.parse_payload(raw)


def test_event_argument_disagreeing_with_payload() -> None:
    with pytest.raises(ValueError, match="installed for PreToolUse but the payload is Stop"):
        cc.parse_payload(payload("Stop"), "PreToolUse")


def test_unknown_event_argument() -> None:
    with pytest.raises(ValueError, match="command line"):
        cc.parse_payload(payload("Stop"), "Sleep")


def test_hook_event_rejects_unknown_kind() -> None:
    with pytest.raises(ValueError):
        HookEvent(harness="x", kind="nap", session_id="s", cwd="/")


def test_values_are_frozen_and_compare_by_value() -> None:
    a = ToolCall("Read", {"file_path": "/x"})
    b = ToolCall(name="Read", input={"file_path": "/x"})
    assert a == b and a != ToolCall("Read", {})
    with pytest.raises(AttributeError):
        a.name = "Bash"  # type: ignore[misc]
    assert a.replace(ok=True).ok is True and a.ok is None
    r = HookResponse()
    assert r.is_empty and hash(r) == hash(HookResponse())
    assert "additional_context=None" in repr(r)
    ev = cc.parse_payload(payload("Stop"))
    assert ev.as_dict()["kind"] == "stop"


# --------------------------------------------------------------------------- tool outputs


def test_tool_output_shapes() -> None:
    text, ok = cc.tool_output("Read", {"type": "text", "file": {
        "filePath": "/p/mix.exs", "content": "defmodule X", "numLines": 1, "startLine": 1,
        "totalLines": 1}})
    assert (text, ok) == ("defmodule X", True)

    text, ok = cc.tool_output("Read", {"type": "image", "file": {"base64": "AAAA" * 1000,
                                                                  "type": "image/png"}})
    assert "AAAA" not in text and "image" in text

    text, ok = cc.tool_output("Edit", {
        "filePath": "/p/a.py", "oldString": "a", "newString": "b", "originalFile": "SECRET" * 99,
        "structuredPatch": [{"oldStart": 1, "oldLines": 1, "newStart": 1, "newLines": 1,
                             "lines": ["-a", "+b"]}], "userModified": False, "replaceAll": False})
    assert text == "Updated /p/a.py\n@@ -1,1 +1,1 @@\n-a\n+b"
    assert "SECRET" not in text

    text, _ = cc.tool_output("Write", {"type": "create", "filePath": "/p/n.py",
                                       "content": "x = 1\n", "structuredPatch": [],
                                       "originalFile": None})
    assert text == "Created /p/n.py (6 chars)"

    text, _ = cc.tool_output("Glob", {"filenames": ["/p/a", "/p/b"], "numFiles": 2,
                                      "truncated": True, "durationMs": 3})
    assert text == "/p/a\n/p/b\n[truncated]"

    text, _ = cc.tool_output("Grep", {"mode": "content", "numFiles": 0, "filenames": [],
                                      "content": "22: post(...)", "numLines": 1})
    assert text == "22: post(...)"
    text, _ = cc.tool_output("Grep", {"mode": "files_with_matches", "numFiles": 0,
                                      "filenames": []})
    assert text == "No matches found"

    text, ok = cc.tool_output("Task", {"status": "completed", "content": [
        {"type": "text", "text": "Found it."}], "usage": {"x": 1}})
    assert (text, ok) == ("Found it.", True)

    text, ok = cc.tool_output("WebFetch", {"result": "nope", "code": 404, "url": "u"})
    assert (text, ok) == ("nope", False)

    text, ok = cc.tool_output("mcp__x__y", [{"type": "text", "text": "hi"}, {"type": "image"}])
    assert text == "hi\n[image]"

    text, ok = cc.tool_output("Edit", "Error: String to replace not found in file.")
    assert ok is False

    text, ok = cc.tool_output("Weird", {"foo": {"bar": [1, 2]}})
    assert json.loads(text) == {"foo": {"bar": [1, 2]}}

    assert cc.tool_output("Bash", None) == (None, None)


@needs_transcripts
def test_every_real_tool_result_normalises() -> None:
    seen = 0
    for path in sorted(TRANSCRIPTS.glob("*.jsonl")):
        for name, result in tool_results(path):
            text, ok = cc.tool_output(name, result)
            assert isinstance(text, str)
            assert ok in (True, False)
            original = result.get("originalFile") if isinstance(result, dict) else None
            if isinstance(original, str) and len(original) > 200:
                assert original not in text
            seen += 1
    assert seen > 100


# --------------------------------------------------------------------------- real tool inputs


@needs_transcripts
def test_files_touched_on_short_transcript() -> None:
    uses = tool_uses(SHORT)
    assert uses, "short.jsonl has tool_use blocks"
    touched_any = False
    for block, cwd in uses:
        tool = ToolCall(name=block["name"], input=block["input"])
        paths = files_touched(tool, cwd)
        assert all(os.path.isabs(p) for p in paths), (block, paths)
        assert len(paths) == len(set(paths))
        if block["name"] in ("Read", "Edit", "Write"):
            assert paths and paths[0] == os.path.realpath(block["input"]["file_path"])
        touched_any = touched_any or bool(paths)
        # The same call through a PreToolUse payload parses and keeps the input.
        ev = cc.parse_payload(payload("PreToolUse", tool_name=block["name"],
                                      tool_input=block["input"], cwd=cwd,
                                      tool_use_id=block["id"]))
        assert ev.tool.input == block["input"]
        assert is_file_tool(block["name"]) == (block["name"] in (
            "Bash", "Read", "Grep", "Glob", "Edit", "Write", "NotebookEdit", "MultiEdit"))
    assert touched_any


@needs_transcripts
def test_files_touched_never_raises_on_any_real_call() -> None:
    count = 0
    for path in sorted(TRANSCRIPTS.glob("*.jsonl")):
        for block, cwd in tool_uses(path):
            paths = files_touched(ToolCall(block["name"], block["input"]), cwd)
            assert all(isinstance(p, str) and os.path.isabs(p) for p in paths)
            if block["name"] == "Bash":
                count += 1
    assert count > 100


# --------------------------------------------------------------------------- rendering


def event(name: str, **kw: object) -> HookEvent:
    fields = {"tool_name": "Bash", "tool_input": {"command": "ls"}} if "Tool" in name else {}
    fields.update(kw)
    return cc.parse_payload(payload(name, **fields))


CTX = HookResponse(additional_context="Known: model.ckpt is a zip of tensors.")


@pytest.mark.parametrize("name", ["SessionStart", "UserPromptSubmit", "PreToolUse",
                                  "PostToolUse", "PostToolUseFailure"])
def test_render_additional_context(name: str) -> None:
    extra = {"error": "x"} if name == "PostToolUseFailure" else {}
    out = json.loads(cc.render_response(event(name, **extra), CTX))
    assert out == {"hookSpecificOutput": {
        "hookEventName": name, "additionalContext": CTX.additional_context}}


def test_render_pre_tool_deny() -> None:
    resp = HookResponse(additional_context="facts", deny_reason="Already established: X")
    out = json.loads(cc.render_response(event("PreToolUse"), resp))
    assert out == {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "additionalContext": "facts",
        "permissionDecision": "deny", "permissionDecisionReason": "Already established: X"}}


def test_render_pre_tool_without_denial_sends_no_permission_decision() -> None:
    out = json.loads(cc.render_response(event("PreToolUse"), CTX))
    assert "permissionDecision" not in out["hookSpecificOutput"]


def test_render_post_tool_block() -> None:
    resp = HookResponse(deny_reason="You have seen these facts 4 times.")
    out = json.loads(cc.render_response(event("PostToolUse"), resp))
    assert out == {"decision": "block", "reason": "You have seen these facts 4 times."}


def test_render_user_prompt_block() -> None:
    out = json.loads(cc.render_response(event("UserPromptSubmit", prompt="p"),
                                        HookResponse(deny_reason="no")))
    assert out == {"decision": "block", "reason": "no"}


def test_render_stop_blocks_unless_already_active() -> None:
    resp = HookResponse(additional_context="Write the checkpoint first.")
    out = json.loads(cc.render_response(event("Stop", stop_hook_active=False), resp))
    assert out == {"decision": "block", "reason": "Write the checkpoint first."}
    assert cc.render_response(event("Stop", stop_hook_active=True), resp) == ""


def test_render_precompact_is_plain_text() -> None:
    resp = HookResponse(additional_context="Preserve: task T, branch b.", system_message="x")
    out = cc.render_response(event("PreCompact", trigger="auto"), resp)
    assert out == "Preserve: task T, branch b."
    # Never parsed as JSON by Claude Code (first non-space char '{').
    out = cc.render_response(event("PreCompact"), HookResponse(additional_context=' {"a": 1}'))
    assert not out.lstrip().startswith("{")
    assert '{"a": 1}' in out


def test_render_precompact_block() -> None:
    out = json.loads(cc.render_response(event("PreCompact"), HookResponse(deny_reason="busy")))
    assert out == {"decision": "block", "reason": "busy"}


def test_render_session_end_only_system_message() -> None:
    ev = event("SessionEnd", reason="other")
    assert cc.render_response(ev, CTX) == ""
    out = json.loads(cc.render_response(ev, HookResponse(system_message="saved")))
    assert out == {"systemMessage": "saved"}


def test_render_session_start_ignores_deny_and_adds_system_message() -> None:
    resp = HookResponse(additional_context="c", deny_reason="d", system_message="s")
    out = json.loads(cc.render_response(event("SessionStart", source="startup"), resp))
    assert out == {"hookSpecificOutput": {"hookEventName": "SessionStart",
                                          "additionalContext": "c"}, "systemMessage": "s"}


@pytest.mark.parametrize("name", list(cc.EVENTS))
def test_render_nothing_to_say_is_empty(name: str) -> None:
    assert cc.render_response(event(name), HookResponse()) == ""
    assert cc.render_response(event(name), HookResponse("", "", "")) == ""


def test_render_is_ascii_json() -> None:
    out = cc.render_response(event("PostToolUse"), HookResponse(additional_context="→ ✓ é"))
    assert out.isascii()
    assert json.loads(out)["hookSpecificOutput"]["additionalContext"] == "→ ✓ é"


def test_render_event_built_by_hand_uses_kind() -> None:
    ev = HookEvent(harness="claude-code", kind="post_tool", session_id="s", cwd="/")
    out = json.loads(cc.render_response(ev, CTX))
    assert out["hookSpecificOutput"]["hookEventName"] == "PostToolUse"


# --------------------------------------------------------------------------- import cost


def test_hook_path_modules_import_only_stdlib() -> None:
    code = (
        "import sys, json\n"
        "before = set(sys.modules)\n"
        "import ledger.events, ledger.harness.claude_code\n"
        "import ledger.watcher.paths, ledger.redact, ledger.watcher.trajectory\n"
        "new = sorted(set(sys.modules) - before)\n"
        "print(json.dumps(new))\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    new = json.loads(res.stdout)
    tops = {m.split(".")[0] for m in new}
    foreign = sorted(t for t in tops if t not in sys.stdlib_module_names and t != "ledger")
    assert foreign == [], f"hook path imports non-stdlib modules: {foreign}"
    heavy = {"dataclasses", "inspect", "typing", "asyncio", "email", "http", "sqlite3",
             "subprocess", "logging", "ast"}
    assert sorted(tops & heavy) == [], "heavy stdlib modules on the hook path"
