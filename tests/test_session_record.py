"""The session record (issue 13): the user's prompts, the latest plan, the latest todo
list, the files edited and the last failing/passing command, recorded from the hook
events ledger already receives; the Session State block and checkpoints built from it;
``.agents/`` kept out of ``git status``; ``ledger checkpoints show``.

Payload shapes: ``tests/data/claude_code_2.1.332_task_tools.jsonl`` was recorded from the
real Claude Code 2.1.332 (TaskCreate, TaskUpdate, PostToolUseFailure of Bash); the other
shapes follow docs/harness-contracts.md (TodoWrite, ExitPlanMode) and OpenCode 1.x
(``todowrite``, ``todo.updated``, ``chat.message``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import BOTH_ENGINES, T0, spool_settled
from fakes.gitrepo import git, make_repo
from fakes.hooks import handle, payload, post_bash, post_edit, post_write, run_hook

from ledger.session import record as RC
from ledger.session import state as ST
from ledger.store import watch as W

ENGINES = BOTH_ENGINES  # the same behaviour on SQLite and PostgreSQL (tests/conftest.py)

MIN = 60_000
DATA = Path(__file__).parent / "data" / "claude_code_2.1.332_task_tools.jsonl"


pytestmark = pytest.mark.usefixtures("session_env")  # tests/conftest.py


@pytest.fixture
def repo(tmp_path) -> Path:
    r = make_repo(tmp_path / "repo", {"src/a.py": "A = 1\n"})
    return r


class Hook:
    """Claude Code payloads for one session in ``cwd``, one minute apart."""

    def __init__(self, db, cwd, session="s1"):
        self.db, self.cwd, self.session, self.now = db, cwd, session, T0

    def __call__(self, p: dict) -> str:
        self.now += MIN
        return handle({**p, "session_id": self.session, "cwd": str(self.cwd)}, db=self.db, now=self.now)

    def prompt(self, text: str) -> str:
        return self(payload("UserPromptSubmit", prompt=text))

    def tool(self, name: str, inp: dict, response=None, **kw) -> str:
        return self(payload("PostToolUse", tool_name=name, tool_input=inp, tool_use_id=f"toolu_{self.now}",
                            tool_response=response if response is not None else {}, **kw))

    def record(self) -> dict:
        spool_settled(self.db)  # on PostgreSQL finished calls go to the spool first
        conn = W.open_store(str(self.db))
        try:
            return RC.load(conn, f"claude-code:{self.session}")
        finally:
            conn.close()


def todos(rec: dict) -> list[tuple[str, str]]:
    return [(t["content"], t["status"]) for t in rec["todos"]]


# ---------------------------------------------------------------- todo lists


def test_real_task_tool_payloads_make_the_todo_list(store_target, repo):
    hook = Hook(store_target, repo)
    for line in DATA.read_text().splitlines():
        hook(json.loads(line))
    rec = hook.record()
    assert todos(rec) == [("Write foo", "completed"), ("Test foo", "pending")]
    assert [t["id"] for t in rec["todos"]] == ["1", "2"]
    assert [p["text"] for p in rec["prompts"]] == ["hi"]
    assert rec["last_failed"]["command"] == "false" and rec["last_failed"]["error"] == "Exit code 1"
    assert RC.todo_text(rec) == "- [x] Write foo\n- [ ] Test foo"


def test_task_update_changes_status_and_subject_and_deletes(store_target, repo):
    hook = Hook(store_target, repo)
    for i, subject in enumerate(["parse", "render", "ship"], 1):
        hook.tool("TaskCreate", {"subject": subject, "description": "d"}, {"task": {"id": str(i), "subject": subject}})
    hook.tool("TaskUpdate", {"taskId": "1", "status": "in_progress"}, {"success": True, "taskId": "1"})
    hook.tool("TaskUpdate", {"taskId": "2", "subject": "render the block"}, {"success": True, "taskId": "2"})
    hook.tool("TaskUpdate", {"taskId": "3", "status": "deleted"}, {"success": True, "taskId": "3"})
    hook.tool("TaskUpdate", {"taskId": "99", "status": "completed"}, "Task not found")  # unknown id: nothing
    assert todos(hook.record()) == [("parse", "in_progress"), ("render the block", "pending")]
    assert "- [~] parse (in progress)" in RC.todo_text(hook.record())


def test_todowrite_replaces_the_whole_list(store_target, repo):
    hook = Hook(store_target, repo)
    first = [{"content": "Read the spec", "status": "completed", "activeForm": "Reading"},
             {"content": "Write the parser", "status": "in_progress", "activeForm": "Writing"},
             {"content": "Test it", "status": "pending", "activeForm": "Testing"}]
    hook.tool("TodoWrite", {"todos": first}, {"oldTodos": [], "newTodos": first})
    assert todos(hook.record()) == [("Read the spec", "completed"), ("Write the parser", "in_progress"), ("Test it", "pending")]
    hook.tool("TodoWrite", {"todos": [{"content": "Test it", "status": "completed", "activeForm": "Testing"}]}, {})
    assert todos(hook.record()) == [("Test it", "completed")]
    hook.tool("TodoWrite", {"todos": "not a list"}, {})  # malformed: the list stays
    assert todos(hook.record()) == [("Test it", "completed")]


def test_opencode_todowrite_shape_and_odd_statuses():
    items = RC.normalise_todos([
        {"content": "a", "status": "pending", "priority": "high", "id": "1"},
        {"content": "b", "status": "cancelled", "priority": "low", "id": 2},
        {"content": "c", "status": "done"}, {"content": "  "}, "plain text item", 7,
        {"content": "d", "status": "weird"}])
    assert items == [{"content": "a", "status": "pending", "id": "1"}, {"content": "b", "status": "cancelled", "id": "2"},
                     {"content": "c", "status": "completed"}, {"content": "plain text item", "status": "pending"},
                     {"content": "d", "status": "pending"}]
    assert RC.normalise_todos({"todos": []}) is None
    assert len(RC.normalise_todos([{"content": f"t{i}"} for i in range(500)])) == RC.TODO_ITEMS


# ---------------------------------------------------------------- prompts, plan, commands


def test_prompts_are_redacted_bounded_and_harness_turns_skipped(store_target, repo):
    hook = Hook(store_target, repo)
    hook.prompt("Fix the login bug; the key is sk-ant-api03-" + "A" * 40 + " and password=hunter2hunter2")
    hook.prompt("<task-notification> <task-id>b0be39e</task-id> done</task-notification>")
    hook.prompt("[Request interrupted by user for tool use]")
    hook.prompt("   ")
    hook.prompt("x" * 50_000)
    ps = [p["text"] for p in hook.record()["prompts"]]
    assert len(ps) == 2
    assert "Fix the login bug" in ps[0] and "sk-ant-api03" not in ps[0] and "hunter2" not in ps[0]
    assert "[REDACTED:anthropic-key]" in ps[0]
    assert len(ps[1]) <= RC.PROMPT_CHARS and "chars cut" in ps[1]


def test_the_first_prompt_and_the_latest_ones_are_kept(store_target, repo):
    hook = Hook(store_target, repo)
    for i in range(40):
        hook.prompt(f"prompt number {i}")
    ps = [p["text"] for p in hook.record()["prompts"]]
    assert ps == ["prompt number 0"] + [f"prompt number {i}" for i in range(20, 40)]
    text = RC.task_text(hook.record())
    assert text.startswith("> prompt number 0\n")
    assert "Later prompts (16 earlier ones left out):" in text and text.endswith("- prompt number 39")


@pytest.mark.parametrize("inp,resp", [
    ({"plan": "1. Parse\n2. Render"}, {}),  # the contract's ExitPlanMode input
    ({}, {"plan": "1. Parse\n2. Render", "filePath": "/home/u/.claude/plans/x.md"}),  # plan only in the response
])
def test_the_latest_plan_comes_from_exit_plan_mode(store_target, repo, inp, resp):
    hook = Hook(store_target, repo)
    hook.tool("ExitPlanMode", {"plan": "an older plan"}, {})
    hook.tool("ExitPlanMode", inp, resp)
    assert hook.record()["plan"] == "1. Parse\n2. Render"


def test_last_failing_and_passing_commands(store_target, repo):
    hook = Hook(store_target, repo)
    hook(post_bash("pytest -q", stdout="3 passed"))
    hook(payload("PostToolUseFailure", tool_name="Bash", tool_input={"command": "make   build"}, tool_use_id="t1",
                 error="Exit code 2\nmake: *** No rule to make target 'build'.  Stop.", is_interrupt=False))
    hook(payload("PostToolUseFailure", tool_name="Read", tool_input={"file_path": str(repo / "nope")}, tool_use_id="t2",
                 error="File does not exist."))  # not a command
    rec = hook.record()
    assert rec["last_passed"]["command"] == "pytest -q"
    assert rec["last_failed"]["command"] == "make build"
    assert rec["last_failed"]["error"].startswith("Exit code 2\nmake: *** No rule")
    assert RC.commands_text(rec).splitlines()[0] == "- last failing: `make build`"


def test_edited_files_from_edit_tools_and_patches(store_target, repo):
    hook = Hook(store_target, repo)
    hook(post_edit(repo / "src" / "a.py"))
    hook(post_write(repo / "new.md"))
    hook(payload("PostToolUseFailure", tool_name="Edit", tool_input={"file_path": str(repo / "failed.py")},
                 tool_use_id="t", error="String not found"))  # a failed edit changed nothing
    hook.tool("MultiEdit", {"file_path": str(repo / "src" / "a.py"), "edits": []}, {"filePath": str(repo / "src" / "a.py")})
    assert [f["path"] for f in hook.record()["files"]] == [str(repo / "src" / "a.py"), str(repo / "new.md")]
    assert hook.record()["files"][0]["edits"] == 2
    from ledger.events import ToolCall

    patch = "*** Begin Patch\n*** Update File: src/a.py\n@@\n-A\n+B\n*** Add File: docs/n.md\n+x\n*** End Patch"
    assert RC.edited_files(ToolCall("apply_patch", {"patchText": patch}), str(repo)) == [
        str(repo / "src" / "a.py"), str(repo / "docs" / "n.md")]


# ---------------------------------------------------------------- the Session State block


def test_the_block_is_built_from_the_record_without_agents_files(store_target, repo):
    hook = Hook(store_target, repo)
    hook.prompt("Add CSV export to the report page (TASK-CSV)")
    hook.tool("TodoWrite", {"todos": [{"content": "write exporter", "status": "in_progress", "activeForm": "w"}]}, {})
    hook(post_edit(repo / "src" / "a.py"))
    hook(payload("PostToolUseFailure", tool_name="Bash", tool_input={"command": "pytest"}, tool_use_id="t",
                 error="Exit code 1\nFAILED test_export"))
    out = hook(payload("PreCompact", trigger="auto"))
    assert out.startswith("## Session State (auto-injected by ledger")
    assert ST.block_sections(out) == ["Task (the user's words)", "Todo List", "Files Edited This Session", "Last Commands"]
    assert "> Add CSV export to the report page (TASK-CSV)" in out
    assert "- [~] write exporter (in progress)" in out and "- src/a.py" in out and "FAILED test_export" in out
    assert "_No " not in out
    ctx = json.loads(hook(payload("SessionStart", source="compact")))["hookSpecificOutput"]["additionalContext"]
    assert ctx.startswith(out)  # the same block after compaction
    assert not (repo / ".agents").exists()  # reading never creates the folder


def test_agent_files_take_precedence_and_are_merged(store_target, repo):
    hook = Hook(store_target, repo)
    hook.prompt("Ship the exporter")
    hook.tool("TodoWrite", {"todos": [{"content": "RECORDED-TODO", "status": "pending", "activeForm": "x"}]}, {})
    hook.stop = lambda: hook(payload("Stop", stop_hook_active=False))
    hook.stop()  # ledger's own checkpoint.md: not repeated in the block while the record has the same
    (repo / ".agents" / "tasks.md").write_text("- [ ] AGENT-TASK from tasks.md\n")
    (repo / ".agents" / "decisions.md").write_text("- DECISION: CSV, not XLSX\n")
    out = hook(payload("PreCompact", trigger="auto"))
    assert ST.block_sections(out) == ["Task (the user's words)", "Active Tasks", "Project Decisions"]
    assert "AGENT-TASK" in out and "RECORDED-TODO" not in out and "DECISION: CSV" in out
    # a checkpoint the agent wrote itself is shown
    (repo / ".agents" / "checkpoint.md").write_text("# my own notes\nhalfway through the exporter\n")
    assert "halfway through the exporter" in hook(payload("PreCompact", trigger="auto"))


def test_a_new_session_resumes_from_the_last_checkpoint(store_target, repo):
    first = Hook(store_target, repo, session="old")
    first.prompt("Rename the CLI flag --out to --output (TASK-RENAME)")
    first(post_edit(repo / "src" / "a.py"))
    first(payload("SessionEnd", reason="prompt_input_exit"))
    ctx = json.loads(Hook(store_target, repo, session="new")(payload("SessionStart", source="resume")))
    text = ctx["hookSpecificOutput"]["additionalContext"]
    assert ST.block_sections(text) == ["Last Checkpoint"]
    assert "TASK-RENAME" in text and "_Written by ledger on SessionEnd" in text


# ---------------------------------------------------------------- checkpoints


def test_checkpoints_carry_the_record(store_target, repo):
    hook = Hook(store_target, repo)
    hook.prompt("Make the importer idempotent (TASK-IMP)")
    hook.tool("ExitPlanMode", {"plan": "1. hash rows\n2. skip seen hashes"}, {})
    hook.tool("TaskCreate", {"subject": "hash rows"}, {"task": {"id": "1", "subject": "hash rows"}})
    (repo / "src" / "a.py").write_text("A = 2\n")
    hook(post_edit(repo / "src" / "a.py"))
    hook(post_bash("pytest -q", stdout="ok"))
    hook(payload("Stop", stop_hook_active=False))
    md = (repo / ".agents" / "checkpoint.md").read_text()
    assert re.findall(r"^## (.+)$", md, re.M) == ["Current Task", "Plan", "Todo List", "Branch", "Files Changed This Session",
                                                 "Last Commands", "Git Status", "Git Diff Summary"]
    assert "## Current Task\n> Make the importer idempotent (TASK-IMP)\n" in md
    assert "## Plan\n1. hash rows\n2. skip seen hashes\n" in md and "## Todo List\n- [ ] hash rows\n" in md
    assert "## Last Commands\n- last passing: `pytest -q`\n" in md
    # a todo status change is a change: a new checkpoint
    hook.tool("TaskUpdate", {"taskId": "1", "status": "completed"}, {"success": True})
    hook(payload("Stop", stop_hook_active=False))
    rows = W.open_store(str(store_target)).execute("SELECT content FROM checkpoints ORDER BY id").fetchall()
    assert len(rows) == 2 and "- [x] hash rows" in rows[1][0]


def test_a_replayed_session_without_its_folder_keeps_checkpoints_in_the_store_only(store_target, tmp_path):
    gone = tmp_path / "not-here"
    hook = Hook(store_target, gone)
    hook.prompt("Work on bead X")
    hook(payload("Stop", stop_hook_active=False))
    assert not gone.exists()
    (row,) = W.open_store(str(store_target)).execute("SELECT content FROM checkpoints").fetchall()
    assert "## Current Task\n> Work on bead X" in row[0] and "## Branch" not in row[0]


def test_checkpoints_list_and_show(cli, store_target, repo):
    hook = Hook(store_target, repo)
    hook.prompt("Task for show (TASK-SHOW)")
    hook(payload("Stop", stop_hook_active=False))
    hook(post_write(repo / "b.txt"))
    hook(payload("SessionEnd", reason="other"))
    rc, out, err = cli("checkpoints", "--json")
    assert rc == 0, err
    rows = json.loads(out)
    assert [r["event"] for r in rows] == ["SessionEnd", "Stop"]
    rc, out, err = cli("checkpoints")
    assert out.splitlines()[0].startswith(f"#{rows[0]['id']} ")
    rc, out, err = cli("checkpoints", "show", str(rows[1]["id"]))
    assert rc == 0, err
    assert out.startswith("# Checkpoint — ") and "TASK-SHOW" in out and "b.txt" not in out
    rc, out, err = cli("checkpoints", "show", f"#{rows[0]['id']}", "--json")
    shown = json.loads(out)
    assert shown["id"] == rows[0]["id"] and shown["event"] == "SessionEnd" and "- b.txt" in shown["content"]
    rc, out, err = cli("checkpoints", "show", "999")
    assert rc != 0 and "no checkpoint #999" in (out + err)
    rc, out, err = cli("checkpoints", "show", "abc")
    assert rc != 0 and "must be a number" in (out + err)


# ---------------------------------------------------------------- .agents/ out of git status


def test_agents_dir_is_excluded_in_a_linked_worktree(store_target, repo, tmp_path):
    wt = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", str(wt), "-b", "side")
    h = Hook(store_target, wt)
    h.prompt("work on the side branch")
    h(payload("Stop", stop_hook_active=False))
    assert (wt / ".agents" / "checkpoint.md").exists()
    assert "/.agents/" in (repo / ".git" / "info" / "exclude").read_text().splitlines()  # the common dir
    assert git(wt, "status", "--short") == ""
    h = Hook(store_target, repo, session="s2")
    h.prompt("work on main")
    h(payload("Stop", stop_hook_active=False))
    assert (repo / ".agents" / "checkpoint.md").exists()
    assert (repo / ".git" / "info" / "exclude").read_text().count("/.agents/") == 1  # added once
    assert git(repo, "status", "--short") == ""


def test_a_tracked_agents_dir_is_left_alone(store_target, repo):
    (repo / ".agents").mkdir()
    (repo / ".agents" / "decisions.md").write_text("- keep\n")
    git(repo, "add", ".agents")
    git(repo, "commit", "-qm", "track agent notes")
    before = (repo / ".git" / "info" / "exclude").read_text() if (repo / ".git" / "info" / "exclude").exists() else ""
    h = Hook(store_target, repo)
    h.prompt("keep the notes")
    h(payload("Stop", stop_hook_active=False))
    after = (repo / ".git" / "info" / "exclude").read_text() if (repo / ".git" / "info" / "exclude").exists() else ""
    assert after == before
    assert "?? .agents/checkpoint.md" in git(repo, "status", "--short")  # the user sees it, as they chose


def test_a_subfolder_project_excludes_its_own_agents_dir(repo):
    sub = repo / "pkg"
    sub.mkdir()
    assert ST.exclude_agents_dir(str(sub)) == str(repo / ".git" / "info" / "exclude")
    (sub / ".agents").mkdir()
    (sub / ".agents" / "checkpoint.md").write_text("x")
    assert "/pkg/.agents/" in (repo / ".git" / "info" / "exclude").read_text().splitlines()
    assert git(repo, "status", "--short") == ""
    assert ST.exclude_agents_dir(str(sub)) is None  # already there


def test_user_prompt_submit_hook_prints_nothing(store_target, repo):
    p = run_hook("UserPromptSubmit", payload("UserPromptSubmit", cwd=repo, prompt="Refactor the store"),
                 env={"LEDGER_DB": store_target})
    assert p.returncode == 0 and p.stdout == b"" and p.stderr == b""
    conn = W.open_store(str(store_target))
    assert RC.load(conn, "claude-code:s1")["prompts"][0]["text"] == "Refactor the store"


def test_a_subagents_todo_list_and_plan_are_not_the_sessions(store_target, repo):
    hook = Hook(store_target, repo)
    hook.tool("TodoWrite", {"todos": [{"content": "MAIN-TODO", "status": "pending", "activeForm": "m"}]}, {})
    sub = {"agent_id": "a1b2", "agent_type": "general-purpose"}
    hook.tool("TodoWrite", {"todos": [{"content": "SUB-TODO", "status": "pending", "activeForm": "s"}]}, {}, **sub)
    hook.tool("ExitPlanMode", {"plan": "SUB-PLAN"}, {}, **sub)
    hook.tool("TaskCreate", {"subject": "SUB-TASK"}, {"task": {"id": "9"}}, **sub)
    hook(post_write(repo / "by_subagent.md", **sub))  # its edits are real edits of the project
    rec = hook.record()
    assert todos(rec) == [("MAIN-TODO", "pending")] and rec["plan"] is None
    assert [f["path"] for f in rec["files"]] == [str(repo / "by_subagent.md")]
