"""Gemini CLI adapter, extension install and ``gemini`` LLM backend.

Payloads have the shapes Gemini CLI 0.61.0 sends (docs/harness-contracts.md §D3: the
base fields of every hook, ``tool_name``/``tool_input``/``tool_response {llmContent,
returnDisplay, error?}``, ``source``, ``trigger``, ``reason``); hooks run as real
``ledger hook gemini <Event>`` subprocesses on a real store. The real program runs in
tests/test_gemini_e2e.py.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import spool_settled, store_sql
from fakes.hooks import LEDGER_BIN, run_hook

from ledger.events import HookEvent, HookResponse
from ledger.harness import gemini as G
from ledger.watcher.paths import files_touched

ROOT = Path(__file__).resolve().parent.parent


def gp(event: str, *, session: str = "g1", cwd="/tmp", transcript: str | None = None, **fields) -> dict:
    """A Gemini hook payload: the base fields every event gets, then the event's own."""
    d = {"session_id": session, "transcript_path": transcript or f"/tmp/{session}.jsonl", "cwd": str(cwd),
         "hook_event_name": event, "timestamp": "2026-12-01T05:22:06.149Z"}
    d.update(fields)
    return d


def after_tool(name: str, args: dict, content, *, error=None, **kw) -> dict:
    resp = {"llmContent": content, "returnDisplay": content if isinstance(content, str) else ""}
    if error:
        resp["error"] = error
    return gp("AfterTool", tool_name=name, tool_input=args, tool_response=resp, **kw)


def hook(event: str, payload: dict, home, db) -> subprocess.CompletedProcess:
    return run_hook(event, payload, args=["gemini", event], env={"LEDGER_DB": db, "LEDGER_HOME": home,
                                                                  "GEMINI_PROJECT_DIR": payload["cwd"]})


def context(p: subprocess.CompletedProcess) -> str:
    assert p.returncode == 0 and p.stderr == b"", p.stderr
    if not p.stdout:
        return ""
    return json.loads(p.stdout).get("hookSpecificOutput", {}).get("additionalContext", "")


# ------------------------------------------------------------------ parsing


def test_every_event_maps_to_its_kind_with_its_fields(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMINI_PROJECT_DIR", str(tmp_path))
    ev = G.parse_payload(json.dumps(gp("SessionStart", cwd=tmp_path, source="resume")), "SessionStart")
    assert (ev.kind, ev.source, ev.project, ev.harness) == ("session_start", "resume", str(tmp_path), "gemini")
    ev = G.parse_payload(json.dumps(gp("BeforeAgent", prompt="fix the build")).encode())
    assert (ev.kind, ev.prompt) == ("user_prompt", "fix the build")
    ev = G.parse_payload(json.dumps(gp("AfterAgent", prompt="p", prompt_response="r", stop_hook_active=True)))
    assert (ev.kind, ev.stop_hook_active) == ("stop", True)
    assert G.parse_payload(json.dumps(gp("PreCompress", trigger="manual"))).source == "manual"
    # Gemini fires the automatic one before every turn, before deciding: only a check.
    assert G.parse_payload(json.dumps(gp("PreCompress", trigger="auto"))).source == "check"
    assert G.parse_payload(json.dumps(gp("SessionEnd", reason="exit"))).kind == "session_end"
    assert G.parse_payload(json.dumps(gp("BeforeTool", tool_name="read_file", tool_input={"file_path": "a.py"}))).kind == "pre_tool"


@pytest.mark.parametrize("raw, expected, message", [
    (b"", None, "empty hook payload"),
    (b"[1]", None, "must be a JSON object"),
    (b"{not json", None, "not valid JSON"),
    (json.dumps({"session_id": "x"}).encode(), None, "no 'hook_event_name'"),
    (json.dumps(gp("BeforeModel")).encode(), None, "unknown Gemini CLI event 'BeforeModel'"),
    (json.dumps(gp("AfterTool")).encode(), "BeforeAgent", "installed for BeforeAgent but the payload is AfterTool"),
    (json.dumps(gp("AfterTool")).encode(), "PostToolUse", "unknown Gemini CLI event 'PostToolUse' on the command line"),
])
def test_bad_payloads_say_what_is_wrong(raw, expected, message):
    with pytest.raises(ValueError, match=message):
        G.parse_payload(raw, expected)


def test_builtin_tools_are_normalised_and_name_their_files(tmp_path):
    (tmp_path / "src").mkdir()
    cases = [
        ("read_file", {"file_path": "src/a.py", "start_line": 1}, "Read", ["src/a.py"]),
        ("read_file", {"absolute_path": str(tmp_path / "b.md")}, "Read", ["b.md"]),
        ("write_file", {"file_path": "out.txt", "content": "x"}, "Write", ["out.txt"]),
        ("replace", {"file_path": "src/a.py", "old_string": "a", "new_string": "b", "instruction": "i"}, "Edit", ["src/a.py"]),
        ("read_many_files", {"include": ["src/a.py", "docs/*.md", "README.md"]}, "Read", ["src/a.py", "README.md"]),
        ("run_shell_command", {"command": "cat config.toml | head", "description": "d"}, "Bash", ["config.toml"]),
        ("run_shell_command", {"command": "pytest tests/test_x.py", "dir_path": "src"}, "Bash", ["src/tests/test_x.py"]),
        ("grep_search", {"pattern": "def f", "dir_path": "src", "include_pattern": "a.py"}, "Grep", ["src", "src/a.py"]),
        ("glob", {"pattern": "setup.cfg"}, "Glob", ["setup.cfg"]),
    ]
    for name, args, canon, files in cases:
        ev = G.parse_payload(json.dumps(after_tool(name, args, "ok", cwd=tmp_path)))
        assert ev.tool.name == canon, name
        assert files_touched(ev.tool, str(tmp_path)) == [str(tmp_path / f) for f in files], (name, args)
        assert all(ev.tool.input[k] == v for k, v in args.items() if k not in ("command",)), "Gemini's keys are kept"


def test_mcp_tools_with_file_arguments_become_file_tools_by_their_verb(tmp_path):
    cases = [
        ("mcp_fs_read_text_file", {"path": "a.py"}, "Read", ["a.py"]),
        ("mcp_fs_read_multiple_files", {"paths": ["a.py", "b.py"]}, "Read", ["a.py", "b.py"]),
        ("mcp_fs_write_file", {"path": "c.txt", "content": "x"}, "Write", ["c.txt"]),
        ("mcp_fs_edit_file", {"path": "a.py", "edits": []}, "Edit", ["a.py"]),
        ("mcp_github_get_issue", {"owner": "o", "repo": "r", "issue_number": 3}, "mcp_github_get_issue", []),
        ("mcp_ledger_recall", {"query": "a.py", "path": "a.py"}, "mcp_ledger_recall", []),  # ours: not a file tool
    ]
    for name, args, canon, files in cases:
        ev = G.parse_payload(json.dumps(after_tool(name, args, "ok", cwd=tmp_path)))
        assert ev.tool.name == canon, name
        from ledger.watcher.paths import is_file_tool

        got = files_touched(ev.tool, str(tmp_path)) if is_file_tool(ev.tool.name) else []
        assert got == [str(tmp_path / f) for f in files], name


def test_tool_responses_become_text_and_an_outcome():
    shell_ok = "<untrusted_context>\nOutput: 3 passed\nProcess Group PGID: 25260\n</untrusted_context>"
    shell_bad = "<untrusted_context>\nOutput: E assert 1 == 2\nExit Code: 1\nProcess Group PGID: 7\n</untrusted_context>"
    assert G.tool_output("run_shell_command", {"llmContent": shell_ok, "returnDisplay": "3 passed"}) == \
        ("Output: 3 passed\nProcess Group PGID: 25260", True)
    text, ok = G.tool_output("run_shell_command", {"llmContent": shell_bad, "returnDisplay": ""})
    assert ok is False and "Exit Code: 1" in text
    text, ok = G.tool_output("read_file", {"llmContent": "", "returnDisplay": "File not found.",
                                            "error": {"message": "File not found: /x/a.py", "type": "file_not_found"}})
    assert ok is False and "File not found: /x/a.py" in text
    parts = [{"text": "--- a.py ---\n"}, {"text": "print(1)\n"}, {"inlineData": {"mimeType": "image/png", "data": "AAAA"}}]
    text, ok = G.tool_output("read_many_files", {"llmContent": parts, "returnDisplay": "Read 2 files"})
    assert ok and "print(1)" in text and "[image]" in text and "AAAA" not in text
    assert G.tool_output("read_file", None) == (None, None)


def test_write_todos_feeds_the_session_todo_list():
    ev = G.parse_payload(json.dumps(after_tool("write_todos", {"todos": [{"description": "fix parser", "status": "in_progress"},
                                                                         {"description": "add tests", "status": "pending"}]}, "ok")))
    from ledger.session.record import normalise_todos

    assert ev.tool.name == "TodoWrite"
    assert normalise_todos(ev.tool.input["todos"]) == [{"content": "fix parser", "status": "in_progress"},
                                                        {"content": "add tests", "status": "pending"}]


# ------------------------------------------------------------------ answers


def _ev(name: str, **kw) -> HookEvent:
    return G.parse_payload(json.dumps(gp(name, **kw)))


def test_answers_are_in_geminis_format():
    r = HookResponse(additional_context="facts", deny_reason=None, system_message="note")
    assert json.loads(G.render_response(_ev("AfterTool", tool_name="read_file", tool_input={}), r)) == {
        "hookSpecificOutput": {"hookEventName": "AfterTool", "additionalContext": "facts"}, "systemMessage": "note"}
    assert json.loads(G.render_response(_ev("SessionStart", source="resume"), r))["hookSpecificOutput"]["additionalContext"] == "facts"
    assert json.loads(G.render_response(_ev("BeforeAgent", prompt="x"), r))["hookSpecificOutput"]["hookEventName"] == "BeforeAgent"
    deny = HookResponse(additional_context="facts", deny_reason="STOP re-reading")
    out = json.loads(G.render_response(_ev("AfterTool", tool_name="read_file", tool_input={}), deny))
    assert out == {"decision": "deny", "reason": "STOP re-reading\n\nfacts"}  # replaces the output: keep the facts
    out = json.loads(G.render_response(_ev("BeforeTool", tool_name="read_file", tool_input={}), deny))
    assert out == {"decision": "deny", "reason": "STOP re-reading"}  # BeforeTool takes no context
    for name in ("PreCompress", "SessionEnd", "AfterAgent"):
        assert G.render_response(_ev(name), HookResponse(additional_context="x")) == ""
    assert G.render_response(_ev("AfterTool", tool_name="x", tool_input={}), HookResponse()) == ""


def test_after_tool_is_the_injection_decision_then_the_observation():
    ev = G.parse_payload(json.dumps(after_tool("read_file", {"file_path": "a.py"}, "text")))
    pre, post = G.expand(ev)
    assert (pre.kind, pre.tool.output, post.kind, post.tool.output) == ("pre_tool", None, "post_tool", "text")
    assert G.expand(_ev("BeforeAgent", prompt="p")) == [_ev("BeforeAgent", prompt="p")]
    merged = G.merge([HookResponse(additional_context="a"), None, HookResponse(additional_context="b", deny_reason="d")])
    assert (merged.additional_context, merged.deny_reason) == ("a\n\nb", "d")
    assert G.merge([None, HookResponse()]) is None


# ------------------------------------------------------------------ real hook processes


@pytest.fixture
def store(tmp_path, _isolated_home, store_target):
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "data.bin").write_bytes(b"DATAV1 x\n")
    (proj / "notes.txt").write_text("n\n")
    db = store_target
    env = {**os.environ, "LEDGER_DB": str(db), "LEDGER_HOME": str(_isolated_home)}
    for text, f in (("data.bin is FORMAT-ZETA with a 6-byte header", "data.bin"),
                    ("notes.txt lists the open questions (QUESTION-LIST-7)", "notes.txt")):
        p = subprocess.run([LEDGER_BIN, "remember", text, "--cluster", "code", "--file", str(proj / f)], env=env,
                           capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
    return {"proj": proj, "db": str(db), "home": str(_isolated_home)}


def test_a_read_gets_the_files_facts_appended_and_is_observed(store):
    proj = store["proj"]
    for name, args in (("read_file", {"file_path": "data.bin"}), ("run_shell_command", {"command": "cat notes.txt"}),
                       ("read_many_files", {"include": ["notes.txt", "data.bin"]})):
        p = hook("AfterTool", after_tool(name, args, "out", cwd=proj, session=f"s-{name}"), store["home"], store["db"])
        text = context(p)
        assert "KNOWN FACTS" in text, name
        assert "<" not in text and ">" not in text, "Gemini escapes angle brackets: none in what we inject"
    spool_settled(store["db"])
    rows = store_sql(store["db"], "SELECT session, tool FROM observations ORDER BY id")
    assert rows == [("gemini:s-read_file", "Read"), ("gemini:s-run_shell_command", "Bash"), ("gemini:s-read_many_files", "Read")]


@pytest.mark.parametrize("spool_first", ["auto", "always"])
def test_session_state_comes_back_after_a_real_compression_only(store, tmp_path, monkeypatch, spool_first):
    # "always": finished tool calls go to the spool, as on a PostgreSQL store; after a
    # PreCompress they still connect, to carry the Session State back.
    monkeypatch.setenv("LEDGER_SPOOL_FIRST", spool_first)
    proj, transcript = store["proj"], tmp_path / "chat.jsonl"
    transcript.write_text('{"sessionId":"g1","kind":"main"}\n{"id":"u1","type":"user","content":[{"text":"port the parser"}]}\n')
    base = {"cwd": proj, "transcript": str(transcript)}
    assert context(hook("BeforeAgent", gp("BeforeAgent", prompt="port the parser to rust", **base), store["home"], store["db"])) == ""
    # The automatic PreCompress fires every turn: without a replaced history nothing is carried.
    assert hook("PreCompress", gp("PreCompress", trigger="auto", **base), store["home"], store["db"]).stdout == b""
    assert context(hook("AfterTool", after_tool("list_directory", {"dir_path": "."}, "x", **base), store["home"], store["db"])) == ""
    assert hook("PreCompress", gp("PreCompress", trigger="auto", **base), store["home"], store["db"]).stdout == b""
    with transcript.open("a") as fh:  # what Gemini writes when it did compress
        fh.write('{"$set":{"messages":[{"id":"s","type":"user","content":[{"text":"summary"}]}]}}\n')
    text = context(hook("AfterTool", after_tool("list_directory", {"dir_path": "."}, "x", **base), store["home"], store["db"]))
    assert "Session State" in text and "port the parser to rust" in text and "FORMAT-ZETA" in text
    assert "<" not in text and ">" not in text
    # Once: the next call does not repeat it.
    assert context(hook("AfterTool", after_tool("list_directory", {"dir_path": "."}, "x", **base), store["home"], store["db"])) == ""
    # /compress (manual) always compresses: the next prompt carries it.
    hook("PreCompress", gp("PreCompress", trigger="manual", **base), store["home"], store["db"])
    assert "Session State" in context(hook("BeforeAgent", gp("BeforeAgent", prompt="go on", **base), store["home"], store["db"]))
    # A resumed session gets it at SessionStart.
    assert "Session State" in context(hook("SessionStart", gp("SessionStart", source="resume", **base), store["home"], store["db"]))
    assert context(hook("SessionStart", gp("SessionStart", source="startup", **base), store["home"], store["db"])) == ""


def test_hooks_fail_open_on_bad_input(store):
    for raw in (b"", b"{", json.dumps(gp("BeforeModel")).encode(), b"\xff\xfe"):
        p = run_hook("AfterTool", raw, args=["gemini", "AfterTool"], env={"LEDGER_DB": store["db"], "LEDGER_HOME": store["home"]})
        assert (p.returncode, p.stdout, p.stderr) == (0, b"", b"")
    p = run_hook("AfterTool", json.dumps(gp("AfterTool", tool_name="read_file", tool_input={"file_path": "a"})).encode(),
                 args=["gemini", "AfterTool"], env={"LEDGER_DB": "/proc/nope/x.db", "LEDGER_HOME": store["home"]})
    assert (p.returncode, p.stdout) == (0, b"")


def test_repeated_reads_escalate_and_nothing_injected_needs_angle_brackets(store):
    proj, seen = store["proj"], []
    for i in range(6):
        p = hook("AfterTool", after_tool("read_file", {"file_path": "data.bin"}, "binary", cwd=proj, session="esc"),
                 store["home"], store["db"])
        seen.append(context(p))
    assert "KNOWN FACTS" in seen[0] and seen[1] == ""
    assert any("LEDGER ESCALATION" in t for t in seen[2:]), seen
    assert all("<" not in t and ">" not in t for t in seen)


def test_readable_turns_quote_marks_into_bars_and_other_brackets_into_look_alikes():
    block = "### Task (the user's words)\n> port the parser\n>\n> keep x -> y\n- a -> b"
    assert G.readable(block) == "### Task (the user's words)\n│ port the parser\n│\n│ keep x → y\n- a → b"
    assert G.readable("no quotes") == "no quotes"
    # fact text with brackets (finding 11: injected as is, shown by Gemini as &lt; / &gt;)
    assert G.readable("Vec<T> holds x >= 5, y <= 2, z > 1 < 3; f => g; a <- b; <b>bold</b>") == \
        "Vec‹T› holds x ≥ 5, y ≤ 2, z › 1 ‹ 3; f ⇒ g; a ← b; ‹b›bold‹/b›"


def test_the_users_words_leave_out_the_hook_context_gemini_put_in_front():
    ctx = "<hook_context>## Session State (auto-injected by ledger)\n\n### Task\n│ port it</hook_context>\n\n"
    assert _ev("BeforeAgent", prompt=ctx + "Continue.").prompt == "Continue."
    assert _ev("BeforeAgent", prompt=ctx + "a <b> c <hook_context>x</hook_context> d").prompt == "a <b> c d"
    assert _ev("BeforeAgent", prompt=ctx).prompt is None
    assert _ev("BeforeAgent", prompt="if a < b then go").prompt == "if a < b then go"


def test_fact_text_with_angle_brackets_reaches_gemini_without_them(store):
    # Finding 11: a fact's own < and > were injected as is (Gemini shows &lt; / &gt;).
    proj = store["proj"]
    (proj / "lib.rs").write_text("fn f() {}\n")
    env = {**os.environ, "LEDGER_DB": store["db"], "LEDGER_HOME": store["home"]}
    p = subprocess.run([LEDGER_BIN, "remember", "lib.rs returns Result<Vec<u8>> when n >= 3 and maps a -> b",
                        "--cluster", "code", "--file", str(proj / "lib.rs")], env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    text = context(hook("AfterTool", after_tool("read_file", {"file_path": "lib.rs"}, "fn f", cwd=proj, session="ang"),
                        store["home"], store["db"]))
    assert "Result‹Vec‹u8›› when n ≥ 3 and maps a → b" in text
    assert "<" not in text and ">" not in text
