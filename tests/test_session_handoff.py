"""Several sessions in one project and ``.agents/checkpoint.md`` (docs/watcher.md
"Session state"): a session that recorded nothing never replaces another session's
hand-off, an empty checkpoint is never written nor injected, a failed write is one
hook.log line. Real ``ledger hook claude-code`` processes on a real store."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import BOTH_ENGINES
from fakes.gitrepo import make_repo
from fakes.hooks import payload, run_hook

ENGINES = BOTH_ENGINES


pytestmark = pytest.mark.usefixtures("session_env")  # tests/conftest.py


@pytest.fixture
def repo(tmp_path) -> Path:
    return make_repo(tmp_path / "proj", {"config.py": "PORT = 8080\n"})


def hook(db, event: str, cwd, session: str, **fields) -> str:
    p = run_hook(event, payload(event, session=session, cwd=cwd, **fields), env={"LEDGER_DB": db})
    assert p.returncode == 0 and p.stderr == b"", p.stderr
    return p.stdout.decode()


def hook_log() -> str:
    path = Path(os.environ["LEDGER_HOME"]) / "hook.log"
    return path.read_text() if path.exists() else ""


def test_a_session_with_nothing_recorded_leaves_another_sessions_checkpoint(store_target, repo, cli):
    hook(store_target, "UserPromptSubmit", repo, "sessS", prompt="Move the server to port 9090 in config.py")
    hook(store_target, "Stop", repo, "sessS")
    ckpt = repo / ".agents" / "checkpoint.md"
    useful = ckpt.read_text()
    assert "Move the server to port 9090" in useful and "for session claude-code:sessS_" in useful

    hook(store_target, "Stop", repo, "emptysess")  # the finding's repro
    hook(store_target, "SessionEnd", repo, "emptysess", reason="logout")
    assert ckpt.read_text() == useful
    rc, out, err = cli("checkpoints", "--json", "--session", "emptysess")
    assert rc == 0 and out.strip() == "[]", err  # no empty row either

    # a new session resumes from the useful hand-off, before compaction and after it
    pre = hook(store_target, "PreCompact", repo, "newsess", trigger="manual")
    assert "### Last Checkpoint" in pre and "Move the server to port 9090" in pre
    post = hook(store_target, "SessionStart", repo, "newsess2", source="resume")
    assert "Move the server to port 9090" in post

    # a second session with something to hand over is the latest: it replaces the file,
    # and the first session's checkpoints stay in the store
    hook(store_target, "UserPromptSubmit", repo, "sessT", prompt="Write the release notes")
    hook(store_target, "Stop", repo, "sessT")
    text = ckpt.read_text()
    assert "Write the release notes" in text and "for session claude-code:sessT_" in text
    rc, out, _ = cli("checkpoints", "--full", "--session", "sessS")
    assert "Move the server to port 9090" in out


def test_an_empty_checkpoint_is_never_injected(store_target, repo):
    # A checkpoint with git state only (as ledger wrote before this fix) is no hand-off.
    (repo / ".agents").mkdir()
    (repo / ".agents" / "checkpoint.md").write_text(
        "# Checkpoint — 2026-12-01 13:00 UTC\n\n## Branch\nmain\n\n## Git Status\nclean\n\n---\n"
        "_Written by ledger on Stop at 2026-12-01 13:00 UTC_\n")
    assert hook(store_target, "PreCompact", repo, "new", trigger="manual") == ""
    assert hook(store_target, "SessionStart", repo, "new2", source="compact") == ""
    # a header and footer only: the same
    (repo / ".agents" / "checkpoint.md").write_text(
        "# Checkpoint — 2026-12-01 13:00 UTC\n\n---\n_Written by ledger on Stop at 2026-12-01 13:00 UTC_\n")
    assert hook(store_target, "PreCompact", repo, "new3", trigger="auto") == ""
    # a checkpoint the agent wrote itself is its hand-off, shown as is
    (repo / ".agents" / "checkpoint.md").write_text("Next: bump PORT and rerun the tests\n")
    assert "Next: bump PORT" in hook(store_target, "PreCompact", repo, "new4", trigger="auto")


def test_a_stop_outside_git_with_nothing_recorded_leaves_no_agents_folder(store_target, tmp_path, cli):
    plain = tmp_path / "plain"
    plain.mkdir()
    hook(store_target, "Stop", plain, "x")
    hook(store_target, "SessionEnd", plain, "x", reason="other")
    assert os.listdir(plain) == []
    # with something recorded the checkpoint is written there (no git sections)
    hook(store_target, "UserPromptSubmit", plain, "y", prompt="tidy the notes folder")
    hook(store_target, "Stop", plain, "y")
    md = (plain / ".agents" / "checkpoint.md").read_text()
    assert "tidy the notes folder" in md and "## Branch" not in md


def test_agents_as_a_file_is_a_hook_log_line_and_the_store_keeps_the_checkpoint(store_target, repo, cli):
    (repo / ".agents").write_text("not a folder")
    hook(store_target, "UserPromptSubmit", repo, "s", prompt="fix the port")
    assert hook(store_target, "Stop", repo, "s") == ""  # silent for the harness
    assert (repo / ".agents").read_text() == "not a folder"
    lines = [l for l in hook_log().splitlines() if "checkpoint not written" in l]
    assert len(lines) == 1, hook_log()
    assert f"{repo}/.agents/checkpoint.md" in lines[0] and ".agents is a file, not a folder" in lines[0]
    assert "kept in the store (ledger checkpoints)" in lines[0]
    rc, out, _ = cli("checkpoints", "--full", "--session", "s")
    assert "fix the port" in out
    # no temporary file or folder is left anywhere in the project
    assert sorted(p.name for p in repo.iterdir()) == [".agents", ".git", "config.py"]


def test_a_checkpoint_path_that_cannot_be_replaced_is_a_hook_log_line(store_target, repo):
    # Root ignores permissions, so "unwritable" is made with a folder where the file goes.
    (repo / ".agents" / "checkpoint.md").mkdir(parents=True)
    hook(store_target, "UserPromptSubmit", repo, "s", prompt="fix the port")
    assert hook(store_target, "Stop", repo, "s") == ""
    (line,) = [l for l in hook_log().splitlines() if "checkpoint not written" in l]
    assert f"Stop: checkpoint not written to {repo}/.agents/checkpoint.md: Is a directory" in line
    assert sorted(p.name for p in (repo / ".agents").iterdir()) == ["checkpoint.md"]  # no temporary file left
