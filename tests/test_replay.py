"""``ledger replay``: real Claude Code transcripts fed through the same hook code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import scoped_store, store_sql

DATA = Path("/work/shared/data/transcripts")
LOCAL = Path(__file__).parent / "data"
SHORT = DATA / "short.jsonl" if (DATA / "short.jsonl").exists() else LOCAL / "short.jsonl"
BIG = next((p for p in (DATA / "258c7280-ae70-4798-800f-63464d01a85d.jsonl",
                        LOCAL / "258c7280-ae70-4798-800f-63464d01a85d.jsonl") if p.exists()), None)

FIELDS = {"transcript", "session", "toolCalls", "repeatedReads", "repeatedCommands", "injections", "gentle",
          "escalations", "charsInjected", "distillations", "hookP50Ms", "hookP95Ms", "compactions", "db", "repeatReads",
          "prompts", "stops", "checkpoints", "skippedLines"}


def test_replay_short_transcript_text_report(cli):
    rc, out, err = cli("replay", SHORT, db=None)
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].startswith(f"▍ replay {SHORT.name}  session ")
    for label in ("tool calls", "repeated reads", "repeated commands", "distillations", "injections",
                  "characters injected", "hook time (in-process) p50"):
        assert any(l.strip().startswith(label) for l in lines), label


def test_replay_short_transcript_json(cli):
    rc, out, err = cli("replay", SHORT, "--json", db=None)
    assert rc == 0, err
    (r,) = json.loads(out)
    assert set(r) == FIELDS
    assert r["toolCalls"] >= 1 and r["transcript"] == str(SHORT)
    assert r["hookP50Ms"] is not None and r["hookP50Ms"] <= r["hookP95Ms"]
    assert set(r["distillations"]) == {"runs", "added", "corroborated"}
    assert r["db"] is None  # a throwaway store, removed afterwards
    # the user's one prompt, one turn end made up, one checkpoint carrying the task
    assert r["prompts"] == 1 and r["stops"] == 1
    (c,) = r["checkpoints"]
    assert c["event"] == "Stop" and c["sections"][0] == "Current Task"


def test_replay_leaves_no_temporary_store_behind(cli, tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    rc, out, err = cli("replay", SHORT, "--json", db=None, env={"TMPDIR": str(tmp)})
    assert rc == 0, err
    assert list(tmp.iterdir()) == []


@pytest.fixture(scope="module")
def big_report(tmp_path_factory, engine, request):
    if BIG is None:
        pytest.skip("no big transcript available")
    import os
    import subprocess
    import sys

    home = tmp_path_factory.mktemp("replay-home")
    db = scoped_store(request, engine, tmp_path_factory, "replay")
    exe = str(Path(sys.executable).with_name("ledger"))
    env = {**os.environ, "LEDGER_HOME": str(home)}
    env.pop("LEDGER_DB", None)
    p = subprocess.run([exe, "replay", str(BIG), "--json", "--db", str(db)], capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    t = subprocess.run([exe, "replay", str(BIG), "--db", str(scoped_store(request, engine, tmp_path_factory, "text"))], capture_output=True, text=True, env=env,
                       timeout=300)
    assert t.returncode == 0, t.stderr
    (r,) = json.loads(p.stdout)
    return r, t.stdout, db


def test_replay_big_transcript_injects_and_never_escalates_on_unsettled_facts(big_report):
    r, _, _ = big_report
    assert set(r) == FIELDS
    assert r["toolCalls"] > 100
    assert r["repeatedReads"] > 0
    # The transcript's files are not on this machine: every fact with a recorded file
    # state "may be stale: the file is gone", and the fallback distiller's facts about
    # one file are conflict candidates of each other (disputed). Unsettled facts are
    # shown gently once and never count toward escalation (docs/watcher.md, "Settled and
    # unsettled facts").
    assert r["injections"] > 0 and r["gentle"] > 0 and r["escalations"] == 0
    assert r["injections"] == r["gentle"] + r["escalations"]
    assert r["charsInjected"] > 0
    assert r["charsInjected"] / r["injections"] <= 1200 + 150  # the per-injection budget holds
    assert r["distillations"]["runs"] > 0 and r["distillations"]["added"] > 0


def test_replay_big_transcript_shows_the_compaction_block(big_report):
    r, text, _ = big_report
    assert r["compactions"], "the big transcript has a compact_boundary"
    c = r["compactions"][0]
    assert c["preCompact"].startswith("## Session State")
    ctx = json.loads(c["sessionStart"])["hookSpecificOutput"]["additionalContext"]
    assert ctx.startswith("## Session State") and "## Known facts about this project (from ledger)" in ctx
    assert "  compaction at line " in text
    assert "    PreCompact: " in text and "    SessionStart(compact): " in text
    assert "      ## Session State (auto-injected by ledger" in text


def test_replay_with_db_keeps_the_store(big_report):
    r, _, db = big_report
    assert r["db"] == str(db)
    assert store_sql(db, "SELECT count(*) FROM observations") == [(r["toolCalls"],)]
    assert store_sql(db, "SELECT count(*) FROM injections") == [(r["injections"],)]
    assert store_sql(db, "SELECT count(*) FROM memories WHERE writer = 'watcher'") == [(r["distillations"]["added"],)]


def test_replay_options_change_the_outcome(cli, new_store):
    if BIG is None:
        pytest.skip("no big transcript available")
    rc, out, err = cli("replay", BIG, "--json", "--escalate-after", "1", "--every", "5", db=new_store("r"),
                        timeout=300)
    assert rc == 0, err
    (r,) = json.loads(out)
    assert r["gentle"] > 0 and r["distillations"]["added"] > 0
    # (no escalation even at 1: this transcript's facts are all unsettled here, see above)
    rc, out, err = cli("replay", BIG, "--json", "--escalate-after", "1", "--every", "1000", db=new_store("r2"),
                        timeout=300)
    (never,) = json.loads(out)
    assert never["distillations"]["added"] == 0 and never["injections"] == 0


def test_replay_of_a_missing_file_is_an_error(cli, tmp_path):
    rc, out, err = cli("replay", tmp_path / "nope.jsonl", db=None)
    assert rc != 0 and "nope.jsonl" in err


def test_replay_tolerates_garbage_lines(cli, tmp_path):
    t = tmp_path / "t.jsonl"
    t.write_text("not json\n[]\n" + SHORT.read_text() + "\n{\"type\": \"assistant\", \"message\": 5}\n")
    rc, out, err = cli("replay", t, "--json", db=None)
    assert rc == 0, err
    assert json.loads(out)[0]["toolCalls"] >= 1
    assert json.loads(out)[0]["skippedLines"] == {"count": 1, "first": 1}  # "[]" is JSON, not a bad line


def test_replay_skips_and_counts_lines_that_are_not_utf8(cli, tmp_path):
    # The tester's case: one bad line in an otherwise valid transcript was a traceback.
    t = tmp_path / "t.jsonl"
    good = SHORT.read_bytes().rstrip(b"\n").split(b"\n")
    t.write_bytes(b"\n".join([good[0], b"\xff\xfe{broken \xc3(", *good[1:], b'{"cut": "mid-wr']) + b"\n")
    rc, out, err = cli("replay", t, "--json", db=None)
    assert rc == 0, err
    (r,) = json.loads(out)
    assert r["toolCalls"] >= 1 and r["skippedLines"] == {"count": 2, "first": 2}
    rc, out, err = cli("replay", t, db=None)
    assert rc == 0 and "Traceback" not in err
    assert "skipped lines         2  (not UTF-8 or not JSON; first at line 2)" in out


@pytest.mark.parametrize("as_json", [False, True])
def test_replay_refuses_a_binary_file_clearly(cli, tmp_path, as_json):
    import random

    b = tmp_path / "bin.dat"
    b.write_bytes(bytes(random.Random(7).randrange(256) for _ in range(5000)) + b"\0")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    rc, out, err = cli("replay", b, *(["--json"] if as_json else []), db=None, env={"TMPDIR": str(tmp)})
    assert rc == 1 and out == "" and "Traceback" not in err
    if as_json:
        e = json.loads(err)
        assert e["kind"] == "invalid-input" and "binary content" in e["error"]
    else:
        assert err.startswith("✕ ") and f"{b}: binary content, not a Claude Code session transcript" in err
    assert list(tmp.iterdir()) == []  # refused before a throwaway store was made


@pytest.mark.parametrize("as_json", [False, True])
def test_replay_of_a_file_with_no_json_line_says_so(cli, tmp_path, as_json):
    t = tmp_path / "latin1.txt"
    t.write_bytes("caf\xe9 au lait\nna\xefve\n".encode("latin-1"))
    rc, out, err = cli("replay", t, *(["--json"] if as_json else []), db=None)
    assert rc == 1 and "Traceback" not in err
    msg = json.loads(err)["error"] if as_json else err
    assert "none of its 2 lines is JSON (first bad line: 1" in msg


def test_replay_distils_outlines_and_command_outcomes_not_first_lines(big_report):
    _, _, db = big_report
    rows = store_sql(db, "SELECT topic, text FROM memories WHERE writer = 'watcher'")
    assert rows
    assert not [t for _, t in rows if "starts with:" in t]
    outlines = [t for topic, t in rows if topic.startswith("outline:")]
    assert outlines and all(" top-level: " in t for t in outlines)
    assert any("lines, " in t and " bytes, sha256 " in t for t in outlines)
    commands = [t for topic, t in rows if topic.split(":")[0] in ("test", "build", "error")]
    assert any(" works (exit 0)" in t for t in commands)
    assert any(" last failed (" in t for t in commands)


def test_replay_measures_repeated_reads_met_with_true_facts(big_report):
    r, text, _ = big_report
    m = r["repeatReads"]
    assert m["repeatedReads"] > 0 and 0 < m["metWithFact"] <= m["repeatedReads"]
    assert m["factsTrue"] <= m["factsShown"] and m["trueShare"] == round(m["factsTrue"] / m["factsShown"], 3)
    # The transcript's files are materialised, so facts about files the agent edited
    # later are shown marked "may be stale" (before, no file had a state to compare).
    assert m["factsMarkedStale"] > 0 and m["factsUnchanged"] > 0
    assert m["charsPerRepeatedRead"] > 0
    assert "  repeated reads met    " in text


def test_the_meter_follows_file_versions_through_reads_and_edits():
    from ledger.harness.replay_measure import RepeatReadMeter

    m = RepeatReadMeter()
    read = {"type": "text", "file": {"filePath": "/p/a.py", "content": "x = 1\n", "startLine": 1, "numLines": 1,
                                     "totalLines": 1}}
    m.before("Read", ["/p/a.py"], "")
    m.after("Read", {"file_path": "/p/a.py"}, ["/p/a.py"], read)
    m.learned("m1", ["/p/a.py"])
    m.before("Read", ["/p/a.py"], "📋 KNOWN FACTS\n  - [m1 · 51] a.py sets x")  # unchanged: true
    m.after("Edit", {"file_path": "/p/a.py", "old_string": "x = 1", "new_string": "x = 2"}, ["/p/a.py"],
            {"filePath": "/p/a.py", "originalFile": "x = 1\n"})
    m.before("Grep", ["/p/a.py"], "📋 KNOWN FACTS\n  - [m1 · 51] a.py sets x")  # changed, unmarked: false
    m.before("Bash", ["/p/a.py"], "📋 KNOWN FACTS\n  - [m1 · 51] a.py sets x (may be stale: the file changed since this was learned)")
    m.before("Read", ["/p/b.py"], "")  # first read of another file: not repeated
    assert m.content["/p/a.py"] == "x = 2\n"
    assert m.report() == {"repeatedReads": 3, "metWithFact": 3, "metShare": 1.0, "factsShown": 3, "factsTrue": 2,
                          "trueShare": 0.667, "factsUnchanged": 1, "factsMarkedStale": 1,
                          "charsPerRepeatedRead": round(sum(len(c) for c in (
                              "📋 KNOWN FACTS\n  - [m1 · 51] a.py sets x",
                              "📋 KNOWN FACTS\n  - [m1 · 51] a.py sets x",
                              "📋 KNOWN FACTS\n  - [m1 · 51] a.py sets x (may be stale: the file changed since this was learned)"))
                              / 3, 1)}


def test_replay_big_transcript_names_the_task_and_the_edited_files_at_compaction(big_report):
    r, text, _ = big_report
    c = r["compactions"][0]
    pre = c["preCompact"]
    assert c["sections"][:2] == ["Task (the user's words)", "Files Edited This Session"]
    assert "> Implement spotter-gqc" in pre  # the user's words, not the harness's notifications
    assert "<task-notification>" not in pre
    assert "- lib/spotter/transcripts/annotation.ex" in pre and c["chars"] == len(pre) < 9_000
    assert "_No " not in pre
    assert "sections: Task (the user's words)" in text
    # Stop made up at each turn end: checkpoints as a live session would have written
    assert r["stops"] >= 3 and len(r["checkpoints"]) >= 2
    assert all(k["event"] == "Stop" and "Current Task" in k["sections"] for k in r["checkpoints"])
    assert "turn ends (Stop)" in text and "checkpoints written" in text


def _line(**d) -> str:
    base = {"sessionId": "syn-1", "cwd": "/nonexistent/syn", "timestamp": "2026-02-01T10:00:00Z"}
    return json.dumps({**base, **d})


def _tool(n: int, name: str, inp: dict, result, ts: str) -> list[str]:
    tid = f"toolu_{n}"
    return [_line(type="assistant", timestamp=ts, message={"role": "assistant", "content": [
                {"type": "tool_use", "id": tid, "name": name, "input": inp}]}),
            _line(type="user", timestamp=ts, toolUseResult=result, message={"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": tid, "content": "ok"}]})]


def test_replay_shows_the_plan_and_todo_list_where_there_was_one(cli, tmp_path):
    """Own examples of the kind: a plan (ExitPlanMode), a todo list (TodoWrite) and the
    newer task tools, an edit, then a compaction; a second turn, a Stop hook summary."""
    t = tmp_path / "syn.jsonl"
    lines = [_line(type="user", message={"role": "user", "content": "Add a --dry-run flag to the sync command (TASK-SYN)"})]
    lines += _tool(1, "ExitPlanMode", {"plan": "1. parse --dry-run\n2. skip writes"}, {"plan": "1. parse --dry-run"},
                   "2026-02-01T10:01:00Z")
    lines += _tool(2, "TodoWrite", {"todos": [{"content": "parse the flag", "status": "completed", "activeForm": "p"},
                                              {"content": "skip writes", "status": "in_progress", "activeForm": "s"}]},
                   {"oldTodos": [], "newTodos": []}, "2026-02-01T10:02:00Z")
    lines += _tool(3, "Edit", {"file_path": "/nonexistent/syn/sync.py", "old_string": "a", "new_string": "b"},
                   {"filePath": "/nonexistent/syn/sync.py", "structuredPatch": []}, "2026-02-01T10:03:00Z")
    lines += [_line(type="system", subtype="stop_hook_summary", timestamp="2026-02-01T10:04:00Z"),
              _line(type="user", timestamp="2026-02-01T10:05:00Z", message={"role": "user", "content": [
                  {"type": "text", "text": "also cover the delete path"}]})]
    lines += _tool(4, "TaskCreate", {"subject": "cover deletes"}, {"task": {"id": "1", "subject": "cover deletes"}},
                   "2026-02-01T10:06:00Z")
    lines += [_line(type="system", subtype="compact_boundary", timestamp="2026-02-01T10:07:00Z",
                    compactMetadata={"trigger": "auto"}),
              _line(type="user", isCompactSummary=True, timestamp="2026-02-01T10:07:01Z", message={
                  "role": "user", "content": "This session is being continued from a previous conversation ..."})]
    t.write_text("\n".join(lines) + "\n")
    rc, out, err = cli("replay", t, "--json", db=None)
    assert rc == 0, err
    (r,) = json.loads(out)
    assert r["prompts"] == 2 and r["stops"] == 2  # the summary line is not a prompt; one stop per turn
    (c,) = r["compactions"]
    assert c["sections"] == ["Task (the user's words)", "Plan", "Todo List", "Files Edited This Session"]
    pre = c["preCompact"]
    assert "> Add a --dry-run flag to the sync command (TASK-SYN)" in pre and "- also cover the delete path" in pre
    assert "1. parse --dry-run\n2. skip writes" in pre
    # TodoWrite set the list; the later TaskCreate added to it
    assert "- [x] parse the flag\n- [~] skip writes (in progress)\n- [ ] cover deletes" in pre
    assert "- sync.py" in pre
