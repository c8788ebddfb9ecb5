"""OpenCode adapter (forwarded plugin events -> HookEvent, answers -> appended text) and
the plugin installer.

Payload shapes are the ones recorded from a real OpenCode 1.18.33 run (the plugin
forwards them unchanged): ``tool.execute.after`` input/output, bus events
``{type, properties}``, step-finish and patch parts, ``session.diff``, ``session.idle``
and ``session.status``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ledger.errors import InvalidInput
from ledger.events import HookResponse
from ledger.harness import opencode as oc
from ledger.harness import opencode_install as inst
from ledger.watcher.paths import files_touched, is_file_tool

SID = "ses_dd3b891a9ffe9lOeeFljftGxAR"


def after(tool: str, args: dict, output: object, **extra) -> dict:
    return {"hook": "tool.execute.after", "directory": "/proj", "worktree": "/proj",
            "input": {"tool": tool, "sessionID": SID, "callID": "call_2", "args": args}, "output": output, **extra}


def bus(type_: str, **props) -> dict:
    return {"hook": "event", "directory": "/proj/sub", "worktree": "/proj", "event": {"type": type_, "properties": props}}


# --------------------------------------------------------------------------- tools


def test_read_after_becomes_a_post_tool_event():
    out = {"title": "notes.txt", "output": "<content>\n1: the answer is 42\n</content>",
           "metadata": {"preview": "the answer is 42", "truncated": False}}
    p = oc.parse(after("read", {"filePath": "/proj/notes.txt"}, out))
    assert p.what == "tool" and p.session_id == SID
    ev = p.event
    assert (ev.harness, ev.kind, ev.session_id, ev.cwd, ev.raw_event_name) == ("opencode", "post_tool", SID, "/proj", "tool.execute.after")
    assert ev.tool.name == "read" and ev.tool.input == {"filePath": "/proj/notes.txt"}
    assert ev.tool.output.startswith("<content>") and ev.tool.ok is True and ev.tool.tool_use_id == "call_2"
    assert is_file_tool(ev.tool.name) and files_touched(ev.tool, ev.cwd) == ["/proj/notes.txt"]


def test_bash_exit_code_sets_ok_and_is_kept_in_the_text():
    ok = oc.parse(after("bash", {"command": "cat notes.txt"}, {"title": "", "output": "42\n", "metadata": {"exit": 0}}))
    assert ok.event.tool.ok is True and ok.event.tool.output == "42\n"
    bad = oc.parse(after("bash", {"command": "cat nope.txt"}, {"title": "", "output": "cat: nope.txt: No such file\n", "metadata": {"exit": 1}}))
    assert bad.event.tool.ok is False
    assert bad.event.tool.output == "cat: nope.txt: No such file\n[exit code 1]"
    assert files_touched(bad.event.tool, "/proj") == ["/proj/nope.txt"]


def test_odd_tool_results_are_tolerated():
    assert oc.tool_output(None) == (None, None)
    assert oc.tool_output("plain") == ("plain", True)
    assert oc.tool_output({"content": [{"type": "text", "text": "a"}, {"type": "image"}, {"type": "text", "text": "b"}]}) == ("a\nb", True)
    assert oc.tool_output({"title": "t", "metadata": "junk"}) == ("t", True)
    assert oc.tool_output({"output": "x"}, error="boom") == ("boom", False)
    p = oc.parse({"hook": "tool.execute.after", "input": {"tool": "read", "args": "not a dict"}, "output": 5})
    assert p.event.tool.input == {} and p.event.tool.output == "5" and p.event.session_id == ""


def test_v2_execute_after_shape():
    p = oc.parse({"hook": "execute.after", "directory": "/proj",
                  "input": {"tool": "read", "sessionID": "s2", "id": "c7", "input": {"filePath": "a.py"}}, "output": "text"})
    assert p.what == "tool" and p.event.tool.input == {"filePath": "a.py"} and p.event.tool.tool_use_id == "c7"
    failed = oc.parse({"hook": "execute.after", "input": {"tool": "bash", "sessionID": "s2", "input": {}, "error": "denied"}})
    assert failed.event.tool.ok is False and failed.event.tool.output == "denied"


def test_pre_tool_is_the_same_call_without_output():
    p = oc.parse(after("read", {"filePath": "/proj/a"}, {"output": "x", "metadata": {}}))
    pre = oc.pre_tool(p.event)
    assert pre.kind == "pre_tool" and pre.tool.output is None and pre.tool.ok is None
    assert pre.tool.input == p.event.tool.input and pre.session_id == SID


# --------------------------------------------------------------------------- bus events


def test_step_finish_and_patch_parts():
    part = {"id": "prt_1", "reason": "tool-calls", "messageID": "m", "sessionID": SID, "type": "step-finish",
            "tokens": {"total": 120, "input": 100, "output": 20, "reasoning": 0, "cache": {"write": 0, "read": 0}}, "cost": 0}
    p = oc.parse(bus("message.part.updated", sessionID=SID, part=part, time=1))
    assert (p.what, p.session_id, p.part_id) == ("step", SID, "prt_1")
    patch = oc.parse(bus("message.part.updated", sessionID=SID,
                         part={"id": "prt_2", "type": "patch", "sessionID": SID, "hash": "h", "files": ["/proj/out.txt", "rel.txt"]}))
    assert patch.what == "diff" and patch.files == ["/proj/out.txt", "/proj/rel.txt"]
    text = oc.parse(bus("message.part.updated", sessionID=SID, part={"type": "text", "sessionID": SID, "text": "hi"}))
    assert text.what == "other"


def test_session_diff_resolves_against_the_worktree():
    p = oc.parse(bus("session.diff", sessionID=SID, diff=[
        {"file": "out.txt", "patch": "...", "additions": 1, "deletions": 0, "status": "added"},
        {"file": "src/a.py", "additions": 2, "deletions": 1}, {"nofile": True}, 5, "plain.txt"]))
    assert p.what == "diff" and p.files == ["/proj/out.txt", "/proj/src/a.py", "/proj/plain.txt"]
    assert oc.parse(bus("session.diff", sessionID=SID, diff=[])).files == []


@pytest.mark.parametrize("event", [
    bus("session.idle", sessionID=SID),
    bus("session.status", sessionID=SID, status={"type": "idle"}),
    {"hook": "event", "directory": "/proj/sub", "event": {"type": "session.execution.succeeded", "data": {"sessionID": SID}}},
])
def test_idle_in_every_spelling_is_a_stop(event):
    p = oc.parse(event)
    assert p.what == "idle" and p.event.kind == "stop" and p.event.session_id == SID and p.event.cwd == "/proj/sub"


def test_busy_deleted_and_unknown_events():
    assert oc.parse(bus("session.status", sessionID=SID, status={"type": "busy"})).what == "other"
    deleted = oc.parse(bus("session.deleted", info={"id": "ses_gone", "title": "x"}))
    assert deleted.what == "deleted" and deleted.session_id == "ses_gone"
    assert oc.parse(bus("lsp.updated")).what == "other"
    assert oc.parse({"hook": "chat.message"}).what == "other"


def test_compacting_is_a_pre_compact():
    p = oc.parse({"hook": "experimental.session.compacting", "directory": "/proj", "input": {"sessionID": SID}})
    assert p.what == "compacting" and p.event.kind == "pre_compact" and p.event.session_id == SID


@pytest.mark.parametrize("bad", [None, [], "x", {}, {"hook": ""}, {"hook": 3}])
def test_malformed_events_raise_value_error(bad):
    with pytest.raises(ValueError):
        oc.parse(bad)


# --------------------------------------------------------------------------- answers


def test_render_append():
    assert oc.render_append(None) is None
    assert oc.render_append(HookResponse()) is None
    assert oc.render_append(HookResponse(system_message="for the user only")) is None
    assert oc.render_append(HookResponse(additional_context="FACTS")) == "\n\nFACTS"
    assert oc.render_append(HookResponse(additional_context="FACTS", deny_reason="FACTS")) == "\n\nFACTS"
    assert oc.render_append(HookResponse(additional_context="A", deny_reason="B")) == "\n\nA\n\nB"


# --------------------------------------------------------------------------- installer


def test_install_copies_the_plugin_with_the_command_written_in(tmp_path):
    r = inst.install_opencode("project", str(tmp_path), command="/venv/bin/ledger")
    path = tmp_path / ".opencode" / "plugins" / "ledger.js"
    assert r == {"path": str(path), "mode": "copy", "command": "/venv/bin/ledger", "replaced": False, "removed": [],
                 "root": str(tmp_path), "git": False}
    text = path.read_text()
    assert text.startswith(inst.MARKER)
    assert 'const LEDGER_COMMAND = "/venv/bin/ledger";' in text and "__LEDGER_COMMAND__" not in text
    assert inst.is_ours(path)
    again = inst.install_opencode("project", str(tmp_path), command="/other/ledger")
    assert again["replaced"] is True and '"/other/ledger"' in path.read_text()
    assert sorted(p.name for p in path.parent.iterdir()) == ["ledger.js"]


def test_install_link_and_legacy_folder(tmp_path):
    legacy = tmp_path / ".opencode" / "plugin" / "ledger.js"
    legacy.parent.mkdir(parents=True)
    legacy.write_text(inst.render_plugin("/old/ledger"))
    r = inst.install_opencode("project", str(tmp_path), link=True)
    path = Path(r["path"])
    assert r["mode"] == "link" and path.is_symlink() and path.resolve() == inst.plugin_source()
    assert r["removed"] == [str(legacy)] and not legacy.exists()
    assert inst.uninstall_opencode("project", str(tmp_path))["removed"] == 1
    assert not path.exists() and not path.is_symlink()


def test_install_refuses_a_foreign_file_and_uninstall_leaves_it(tmp_path):
    path = tmp_path / ".opencode" / "plugins" / "ledger.js"
    path.parent.mkdir(parents=True)
    path.write_text("export default async () => ({});\n")
    with pytest.raises(InvalidInput, match="not written by ledger"):
        inst.install_opencode("project", str(tmp_path), command="/x/ledger")
    assert inst.uninstall_opencode("project", str(tmp_path))["removed"] == 0
    assert path.read_text() == "export default async () => ({});\n"


def test_user_scope_follows_xdg_config_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    r = inst.install_opencode("user", command="/x/ledger")
    assert r["path"] == str(tmp_path / "cfg" / "opencode" / "plugins" / "ledger.js")
    assert inst.uninstall_opencode("user")["removed"] == 1


def test_install_defaults_to_this_ledger_command(tmp_path):
    r = inst.install_opencode("project", str(tmp_path))
    assert os.path.isabs(r["command"]) and os.path.basename(r["command"]) == "ledger"


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_installed_copy_is_valid_javascript(tmp_path):
    r = inst.install_opencode("project", str(tmp_path), command='/path with "quotes"/ledger')
    p = subprocess.run(["node", "--check", r["path"]], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    script = f"import('{Path(r['path']).as_uri()}').then(m => console.log(JSON.stringify([Object.keys(m), m.default.id])))"
    p = subprocess.run(["node", "--input-type=module", "-e", script], capture_output=True, text=True, timeout=30)
    assert json.loads(p.stdout) == [["default"], "ledger"], p.stderr
