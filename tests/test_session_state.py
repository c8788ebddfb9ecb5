"""Session state (docs/originals.md §3) on real git repositories: the
checkpoint written at Stop/SessionEnd, its history in the store, the Session State
block printed before compaction and re-injected after it with the project's facts."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import BOTH_ENGINES, T0
from fakes.gitrepo import git, make_repo
from fakes.hooks import handle, payload, post_edit, post_read, post_write, run_hook

from ledger.filekeys import file_key
from ledger.session import state as ST
from ledger.store import watch as W

ENGINES = BOTH_ENGINES  # the same behaviour on SQLite and PostgreSQL (tests/conftest.py)

MIN = 60_000


pytestmark = pytest.mark.usefixtures("session_env")  # tests/conftest.py


@pytest.fixture
def repo(tmp_path) -> Path:
    r = make_repo(tmp_path / "repo", {"src/a.py": "A = 1\n", "README.md": "# repo\n"})
    git(r, "checkout", "-q", "-b", "feature/ckpt")
    return r


TASK = "ship the checkpoint feature"


class Hook:
    """One session's hook events in process. Unless ``task`` is None the session first
    gets the user's prompt ``task``: a session that recorded nothing writes no
    checkpoint (docs/watcher.md "Session state")."""

    def __init__(self, db, cwd, session="s1", task: str | None = TASK):
        self.db, self.cwd, self.session, self.now, self.task = db, cwd, session, T0 + MIN, task

    def __call__(self, p: dict) -> str:
        if self.task is not None:
            task, self.task = self.task, None
            self(payload("UserPromptSubmit", prompt=task))
        self.now += MIN
        p = {**p, "session_id": self.session, "cwd": str(self.cwd)}
        return handle(p, db=self.db, now=self.now)

    def stop(self, active: bool = False) -> str:
        return self(payload("Stop", stop_hook_active=active, last_assistant_message="done"))


def checkpoint_rows(db) -> list[dict]:
    conn = W.open_store(str(db))
    try:
        return W.checkpoints(conn, limit=1000)
    finally:
        conn.close()


def test_stop_writes_the_checkpoint_in_the_seed_format(store_target, repo):
    hook = Hook(store_target, repo)
    (repo / "src" / "a.py").write_text("A = 2\nB = 3\n")
    hook(post_edit(repo / "src" / "a.py"))
    hook(post_write(repo / "notes.txt", "hello"))
    (repo / "notes.txt").write_text("hello\n")
    hook(post_read(repo / "README.md", "# repo"))  # a read is not a change
    hook(post_edit(repo / "src" / "a.py"))  # listed once
    (repo / ".agents").mkdir()
    (repo / ".agents" / "tasks.md").write_text("- [ ] HITL: ship checkpoints\n- [x] AFK: write tests\n")
    assert hook.stop() == ""  # nothing for the model
    md = (repo / ".agents" / "checkpoint.md").read_text()
    sections = re.findall(r"^## (.+)$", md, re.M)
    # no prompt, plan, todo list or command recorded: those sections are left out
    assert sections == ["Current Task", "Branch", "Files Changed This Session", "Git Status", "Git Diff Summary",
                        "Active Task List"]
    assert re.match(r"# Checkpoint — \d{4}-\d\d-\d\d \d\d:\d\d UTC\n", md)
    assert "## Branch\nfeature/ckpt\n" in md
    assert "## Files Changed This Session\n- src/a.py\n- notes.txt\n\n" in md
    status = md.split("## Git Status\n")[1].split("\n\n")[0]
    assert status.startswith("```\n") and " M src/a.py" in status and "?? notes.txt" in status
    assert ".agents" not in status  # ledger's folder is kept out of git status
    assert "/.agents/" in (repo / ".git" / "info" / "exclude").read_text().splitlines()
    diff = md.split("## Git Diff Summary\n")[1].split("\n\n")[0]
    assert "src/a.py" in diff and "1 file changed" in diff
    assert "## Active Task List\n- [ ] HITL: ship checkpoints\n- [x] AFK: write tests\n" in md
    assert md.rstrip().splitlines()[-2:] == ["---", md.rstrip().splitlines()[-1]]
    assert re.search(r"^_Written by ledger on Stop at \d{4}-\d\d-\d\d \d\d:\d\d UTC for session claude-code:s1_$", md, re.M)
    (row,) = checkpoint_rows(store_target)
    assert row["content"] == md and row["branch"] == "feature/ckpt" and row["event"] == "Stop"
    assert row["project"] == str(repo) and row["session"] == "claude-code:s1"


def test_loop_state_task_and_iteration(store_target, repo, tmp_path, monkeypatch):
    ls = tmp_path / "loop.json"
    ls.write_text(json.dumps({"task": "migrate the store", "iter": 3}))
    monkeypatch.setenv("LEDGER_LOOP_STATE", str(ls))
    Hook(store_target, repo, task=None).stop()  # the loop's task is something to hand over
    md = (repo / ".agents" / "checkpoint.md").read_text()
    assert "## Current Task\nmigrate the store\nLoop iteration: 3\n" in md
    ls.write_text("{broken")
    Hook(store_target, repo, session="s2", task=None).stop()  # nothing to hand over: the file stays
    assert (repo / ".agents" / "checkpoint.md").read_text() == md
    Hook(store_target, repo, session="s3").stop()
    md = (repo / ".agents" / "checkpoint.md").read_text()
    assert "## Current Task\n> ship the checkpoint feature\n" in md and "Loop iteration" not in md


def test_a_clean_repo_says_clean_and_no_uncommitted_changes(store_target, repo):
    git(repo, "checkout", "-q", "main")
    (repo / ".git" / "info" / "exclude").write_text(".agents/\n")
    Hook(store_target, repo).stop()
    md = (repo / ".agents" / "checkpoint.md").read_text()
    assert "## Branch\nmain\n" in md
    assert "## Git Status\nclean\n" in md
    # empty sections are left out, not filled with placeholders
    assert "## Git Diff Summary" not in md and "## Files Changed This Session" not in md
    assert "## Active Task List" not in md and "_" not in md.split("---")[0].replace("_Written", "")


def test_stop_with_stop_hook_active_writes_nothing(store_target, repo):
    hook = Hook(store_target, repo)
    assert hook.stop(active=True) == ""
    assert not (repo / ".agents").exists()
    assert checkpoint_rows(store_target) == []


def test_checkpoints_are_idempotent_and_kept_as_history(store_target, repo, cli):
    hook = Hook(store_target, repo)
    hook.stop()
    hook.stop()  # nothing changed but the time
    hook.stop()
    assert len(checkpoint_rows(store_target)) == 1
    (repo / "src" / "a.py").write_text("A = 42\n")
    hook(post_edit(repo / "src" / "a.py"))
    hook.stop()
    assert len(checkpoint_rows(store_target)) == 2
    hook(payload("SessionEnd", reason="prompt_input_exit"))  # nothing new: no new row
    assert len(checkpoint_rows(store_target)) == 2
    git(repo, "commit", "-qam", "answer")
    hook(payload("SessionEnd", reason="prompt_input_exit"))
    rows = checkpoint_rows(store_target)
    assert len(rows) == 3 and rows[0]["event"] == "SessionEnd"
    assert "_Written by ledger on SessionEnd" in (repo / ".agents" / "checkpoint.md").read_text()
    # another session in the same project keeps its own history
    Hook(store_target, repo, session="other").stop()
    assert len(checkpoint_rows(store_target)) == 4

    rc, out, err = cli("checkpoints")
    assert rc == 0, err
    lines = out.strip().splitlines()
    assert len(lines) == 4  # newest first
    assert all(str(repo) in l and "feature/ckpt" in l for l in lines)
    assert "SessionEnd" in lines[0] and "[claude-code:s1]" in lines[0] and "[claude-code:other]" in out
    rc, out, _ = cli("checkpoints", "--json", "--session", "s1")
    rows = json.loads(out)
    assert [r["event"] for r in rows] == ["SessionEnd", "Stop", "Stop"]
    rc, out, _ = cli("checkpoints", "--full", "--limit", "1", "--project", str(repo))
    assert "# Checkpoint — " in out and "## Git Status\nclean" in out


def test_outside_git_and_without_agents_dir(store_target, tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    hook = Hook(store_target, plain)
    hook(post_write(plain / "x.txt"))
    hook.stop()
    md = (plain / ".agents" / "checkpoint.md").read_text()
    assert "## Branch" not in md and "## Git Status" not in md and "## Git Diff Summary" not in md
    assert "## Files Changed This Session\n- x.txt\n" in md


def test_a_session_that_moves_into_a_subdirectory_checkpoints_the_folder_it_started_in(store_target, repo):
    # The project is where the session started (its first cwd; Claude Code also says it
    # in $CLAUDE_PROJECT_DIR), not wherever the agent cd'd to (docs/watcher.md).
    hook = Hook(store_target, repo)
    hook(post_read(repo / "README.md", "# repo"))
    hook.cwd = repo / "src"
    hook.stop()
    assert (repo / ".agents" / "checkpoint.md").exists()
    assert not (repo / "src" / ".agents").exists()


def test_a_session_started_in_a_subfolder_of_a_repository_checkpoints_that_folder(store_target, repo):
    # A harness started in repo/src has repo/src as its project (Claude Code keys its
    # projects by that folder); the parent repository's .agents/ is not touched.
    Hook(store_target, repo / "src").stop()
    assert (repo / "src" / ".agents" / "checkpoint.md").exists()
    assert not (repo / ".agents").exists()
    md = (repo / "src" / ".agents" / "checkpoint.md").read_text()
    assert "_not a git repo_" not in md  # git still answers from the subfolder


def test_a_read_only_project_still_keeps_the_checkpoint_in_the_store(store_target, repo):
    (repo / ".agents").write_text("a file where the folder should be")
    Hook(store_target, repo).stop()
    assert len(checkpoint_rows(store_target)) == 1
    assert (repo / ".agents").read_text().startswith("a file")


# ---------------------------------------------------------------- compaction


def write_state(repo: Path, tasks="- [ ] finish the parser\n", decisions="- Use SQLite WAL, not a server.\n"):
    a = repo / ".agents"
    a.mkdir(exist_ok=True)
    if tasks is not None:
        (a / "tasks.md").write_text(tasks)
    if decisions is not None:
        (a / "decisions.md").write_text(decisions)


def test_pre_compact_prints_the_session_state_block_as_plain_text(store_target, repo):
    write_state(repo)
    Hook(store_target, repo, session="earlier").stop()  # s1 resumes from another session's hand-off
    p = run_hook("PreCompact", payload("PreCompact", session="s1", cwd=repo, trigger="auto", custom_instructions=""),
                 env={"LEDGER_DB": store_target})
    assert p.returncode == 0 and p.stderr == b""
    out = p.stdout.decode()
    assert not out.lstrip().startswith("{")  # plain text: merged into the compaction instructions
    assert out.startswith("## Session State (auto-injected by ledger")
    assert re.findall(r"^### (.+)$", out, re.M) == ["Active Tasks", "Last Checkpoint", "Project Decisions"]
    assert "- [ ] finish the parser" in out and "Use SQLite WAL" in out
    assert "# Checkpoint — " in out and "feature/ckpt" in out


def test_pre_compact_with_nothing_recorded_prints_nothing(store_target, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert Hook(store_target, empty, task=None)(payload("PreCompact", trigger="manual")) == ""
    assert Hook(store_target, empty, task=None)(payload("SessionStart", source="compact")) == ""


@pytest.mark.parametrize("source", ["compact", "resume"])
def test_session_start_after_compaction_or_resume_injects_state_and_facts(ledger, store_target, repo, source):
    write_state(repo)
    ledger.remember("src/a.py defines A; the tests expect A == 42", cluster="code", agent="a", files=[file_key(repo / "src" / "a.py")])
    ledger.remember("Some unrelated fact about another project", cluster="code", agent="a",
                    files=[file_key(repo.parent / "elsewhere.py")])
    out = Hook(store_target, repo)(payload("SessionStart", source=source))
    h = json.loads(out)["hookSpecificOutput"]
    assert h["hookEventName"] == "SessionStart"
    ctx = h["additionalContext"]
    assert ctx.startswith("## Session State") and "finish the parser" in ctx and "Use SQLite WAL" in ctx
    assert "## Known facts about this project (from ledger)" in ctx and "A == 42" in ctx
    assert "unrelated fact" not in ctx


@pytest.mark.parametrize("source", ["startup", "clear", None])
def test_session_start_otherwise_injects_nothing(store_target, repo, source):
    write_state(repo)
    p = payload("SessionStart") if source is None else payload("SessionStart", source=source)
    assert Hook(store_target, repo)(p) == ""


def test_compaction_context_is_bounded_with_visible_notes(ledger, store_target, repo):
    write_state(repo, tasks="- [ ] task " + "x" * 60 + "\n" * 1 + ("- [ ] another long task line with words\n" * 2000),
                decisions="- decision\n" * 3000)
    for i in range(40):
        ledger.remember(f"src/a.py fact number {i}: " + "detail " * 20, cluster="code", agent="a",
                        files=[file_key(repo / "src" / "a.py")])
    out = Hook(store_target, repo)(payload("SessionStart", source="compact"))
    ctx = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert len(ctx) < 10_000  # Claude Code's cap for one string (A4)
    # each section is bounded, with a visible note of what was cut
    assert len(re.findall(r"… \(\d+ more characters\)", ctx)) == 2
    facts = ctx.split("## Known facts about this project (from ledger)")[1]
    assert len(facts) <= ST.FACTS_CAP + 100
    assert re.search(r"_\(\+\d+ more left out; `ledger recall` finds them\)_", facts)
    pre = Hook(store_target, repo)(payload("PreCompact", trigger="auto"))
    assert len(pre) <= ST.BLOCK_CAP


def test_a_huge_tasks_file_is_read_bounded(store_target, repo):
    a = repo / ".agents"
    a.mkdir()
    (a / "tasks.md").write_bytes(b"- [ ] t\n" * 2_000_000)  # 16 MB
    text, note = ST.read_bounded(str(a / "tasks.md"))
    assert len(text.encode()) <= ST.READ_CAP and note == f"_… tasks.md cut at {ST.READ_CAP} bytes_"
    Hook(store_target, repo).stop()
    md = (a / "checkpoint.md").read_text()
    assert len(md) < ST.READ_CAP + 2_000 and f"_… tasks.md cut at {ST.READ_CAP} bytes_" in md
    out = Hook(store_target, repo)(payload("PreCompact", trigger="auto"))
    assert len(out) <= ST.BLOCK_CAP


def test_an_unreadable_state_file_is_reported_in_one_line(store_target, repo):
    a = repo / ".agents"
    a.mkdir()
    (a / "decisions.md").mkdir()  # unreadable as a file, even for root
    (a / "tasks.md").write_text("- [ ] real task\n")
    out = Hook(store_target, repo)(payload("PreCompact", trigger="auto"))
    notes = [l for l in out.splitlines() if "unreadable" in l]
    assert notes == ["_decisions.md unreadable: Is a directory_"]
    assert "real task" in out and "_No " not in out
    (a / "tasks.md").unlink()
    (a / "tasks.md").mkdir()
    Hook(store_target, repo).stop()
    md = (a / "checkpoint.md").read_text()
    assert [l for l in md.splitlines() if "unreadable" in l] == ["_tasks.md unreadable: Is a directory_"]


def test_session_end_writes_a_checkpoint_and_forces_a_distillation(store_target, repo):
    spawned = []
    from fakes.hooks import cfg_with, post_bash

    cfg = cfg_with(every=100, llm_backend="command")
    now = T0 + MIN
    handle({**post_bash("ls", stdout="x"), "cwd": str(repo)}, db=store_target, now=now, cfg=cfg, spawn=lambda k, o: spawned.append(k))
    assert spawned == []  # 1 step < every
    handle(payload("SessionEnd", cwd=repo, reason="other"), db=store_target, now=now + 1, cfg=cfg,
           spawn=lambda k, o: spawned.append(k))
    assert spawned == ["claude-code:s1"]
    assert checkpoint_rows(store_target)[0]["event"] == "SessionEnd"


def test_a_tracked_checkpoint_file_does_not_make_every_stop_a_new_checkpoint(store_target, repo):
    hook = Hook(store_target, repo)
    hook.stop()
    git(repo, "add", "-f", ".agents")  # ledger excluded it; the user tracks it anyway
    git(repo, "commit", "-qm", "track the agent state")
    hook.stop()  # the status changed (committed): one new checkpoint
    n = len(checkpoint_rows(store_target))
    for _ in range(3):
        hook.stop()  # rewriting the tracked checkpoint.md must not count as a change
    assert len(checkpoint_rows(store_target)) == n
    md = (repo / ".agents" / "checkpoint.md").read_text()
    assert "checkpoint.md" not in md.split("## Git Status")[1]
