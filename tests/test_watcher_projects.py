"""Issue 12, "projects and worktrees", through the real hook subprocess: a session's
project is the folder the harness was started in (Claude Code: $CLAUDE_PROJECT_DIR, else
the session's first cwd); nothing crosses between sibling project folders under one
parent repository; linked worktrees of one repository share facts about the same
repository-relative path (docs/watcher.md)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from fakes.hooks import context_of, payload, pre_read, run_hook

from ledger.filekeys import file_key
from ledger.service import Ledger


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True,
                          env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
                               "GIT_COMMITTER_EMAIL": "t@x", "HOME": str(cwd), "PATH": "/usr/bin:/bin"}).stdout


def remember(home: Path, text: str, path: Path) -> str:
    with Ledger.open(home / "ledger.db") as led:
        return led.remember(text, cluster="code", agent="alice", files=[file_key(path)]).memory.id


@pytest.fixture
def dotfiles(tmp_path) -> Path:
    """A home directory under git (dotfiles) holding two project folders without their
    own .git: the common case of sibling projects under one parent repository."""
    root = tmp_path / "homedir"
    for name in ("projA", "projB"):
        (root / name).mkdir(parents=True)
        (root / name / "config.yml").write_text(f"name: {name}\nport: 80\n")
    (root / ".bashrc").write_text("alias ll='ls -l'\n")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-qm", "dotfiles")
    return root


def session_start(home: Path, proj: Path, env_project: bool = True, session: str = "s") -> str:
    env = {"LEDGER_HOME": home, "CLAUDE_PROJECT_DIR": proj if env_project else None}
    r = run_hook("SessionStart", payload("SessionStart", session=session, cwd=proj, source="compact"), env=env)
    assert r.returncode == 0, r
    return context_of(r.stdout.decode())


@pytest.mark.parametrize("env_project", [True, False])
def test_a_fact_keyed_to_one_sibling_project_stays_out_of_the_other(dotfiles, tmp_path, env_project):
    home = tmp_path / "home"
    remember(home, "projA/config.yml sets port 80 for the projA service", dotfiles / "projA" / "config.yml")
    remember(home, "projB/config.yml names the projB service", dotfiles / "projB" / "config.yml")
    remember(home, ".bashrc defines the ll alias", dotfiles / ".bashrc")
    b = session_start(home, dotfiles / "projB", env_project, session="sb")
    a = session_start(home, dotfiles / "projA", env_project, session="sa")
    assert "projB service" in b and "projA service" not in b and "ll alias" not in b
    assert "projA service" in a and "projB service" not in a and "ll alias" not in a


@pytest.mark.parametrize("env_project", [True, False])
def test_stop_writes_the_checkpoint_into_the_project_folder_not_the_parent_repository(dotfiles, tmp_path, env_project):
    home = tmp_path / "home"
    proj = dotfiles / "projB"
    env = {"LEDGER_HOME": home, "CLAUDE_PROJECT_DIR": proj if env_project else None}
    # The session starts in projB, then the agent cd's into a subfolder: still projB.
    (proj / "sub").mkdir()
    assert run_hook("SessionStart", payload("SessionStart", cwd=proj, source="startup"), env=env).returncode == 0
    # something to hand over: a session that recorded nothing writes no checkpoint
    assert run_hook("UserPromptSubmit", payload("UserPromptSubmit", cwd=proj / "sub", prompt="tidy projB"),
                    env=env).returncode == 0
    r = run_hook("Stop", payload("Stop", cwd=proj / "sub", stop_hook_active=False), env=env)
    assert r.returncode == 0 and r.stdout == b""
    assert (proj / ".agents" / "checkpoint.md").exists()
    assert not (dotfiles / ".agents").exists()
    assert not (proj / "sub" / ".agents").exists()
    assert not (dotfiles / "projA" / ".agents").exists()
    md = (proj / ".agents" / "checkpoint.md").read_text()
    assert "## Branch" in md


def test_claude_project_dir_wins_over_the_live_cwd(dotfiles, tmp_path):
    home = tmp_path / "home"
    proj = dotfiles / "projA"
    remember(home, "projA/config.yml sets port 80 for the projA service", proj / "config.yml")
    # First event of the session already from a subfolder; the harness says the project.
    (proj / "deep" / "er").mkdir(parents=True)
    env = {"LEDGER_HOME": home, "CLAUDE_PROJECT_DIR": proj}
    r = run_hook("SessionStart", payload("SessionStart", cwd=proj / "deep" / "er", source="compact"), env=env)
    assert "projA service" in context_of(r.stdout.decode())


@pytest.fixture
def repo_and_worktree(tmp_path) -> tuple[Path, Path]:
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "app.py").write_text("def main():\n    return 1\n")
    (repo / "README.md").write_text("# app\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "init")
    wt = tmp_path / "feature-wt"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(wt))
    return repo, wt


def test_a_fact_learned_in_the_main_checkout_is_handed_back_in_a_linked_worktree(repo_and_worktree, tmp_path):
    repo, wt = repo_and_worktree
    home = tmp_path / "home"
    remember(home, "src/app.py main() returns 1 and is the CLI entry point", repo / "src" / "app.py")
    r = run_hook("PreToolUse", pre_read(wt / "src" / "app.py", cwd=wt), env={"LEDGER_HOME": home})
    ctx = context_of(r.stdout.decode())
    assert "main() returns 1" in ctx and "may be stale" not in ctx
    # SessionStart after compaction in the worktree lists it too.
    assert "main() returns 1" in session_start(home, wt)


def test_a_fact_learned_in_a_worktree_reaches_the_main_checkout_and_says_when_it_differs(repo_and_worktree, tmp_path):
    repo, wt = repo_and_worktree
    home = tmp_path / "home"
    remember(home, "README.md is the one-line project title", wt / "README.md")
    r = run_hook("PreToolUse", pre_read(repo / "README.md", cwd=repo), env={"LEDGER_HOME": home})
    assert "one-line project title" in context_of(r.stdout.decode())
    # The main checkout's copy changes: the fact is handed back marked, not asserted.
    (repo / "README.md").write_text("# app\n\nmore text\n")
    r = run_hook("PreToolUse", pre_read(repo / "README.md", cwd=repo, session="s2"), env={"LEDGER_HOME": home})
    ctx = context_of(r.stdout.decode())
    assert "one-line project title" in ctx and "may be stale" in ctx


def test_other_repositories_and_other_paths_share_nothing(repo_and_worktree, tmp_path):
    repo, wt = repo_and_worktree
    home = tmp_path / "home"
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True, capture_output=True)
    remember(home, "src/app.py main() returns 1", repo / "src" / "app.py")
    # A clone is another repository (its own .git), not a worktree of this one.
    r = run_hook("PreToolUse", pre_read(clone / "src" / "app.py", cwd=clone), env={"LEDGER_HOME": home})
    assert context_of(r.stdout.decode()) == ""
    # Another path in the worktree is not the same file.
    r = run_hook("PreToolUse", pre_read(wt / "README.md", cwd=wt), env={"LEDGER_HOME": home})
    assert context_of(r.stdout.decode()) == ""


def test_worktree_aliases_unit(repo_and_worktree, tmp_path):
    from ledger.watcher.worktrees import aliases

    repo, wt = repo_and_worktree
    assert aliases(str(wt / "src" / "app.py")) == [str((repo / "src" / "app.py").resolve())]
    assert aliases(str(repo / "src" / "app.py")) == [str((wt / "src" / "app.py").resolve())]
    assert aliases(str(repo)) == [str(wt.resolve())]
    assert aliases(str(tmp_path / "nowhere" / "x.py")) == []
    # A repository without linked worktrees: nothing.
    solo = tmp_path / "solo"
    solo.mkdir()
    git(solo, "init", "-q")
    assert aliases(str(solo / "a.py")) == []
    # A removed worktree is not an alias any more.
    git(repo, "worktree", "remove", "--force", str(wt))
    assert aliases(str(repo / "src" / "app.py")) == []
    json.dumps(aliases(str(repo)))  # plain strings


# A project root that cannot be trusted narrows what is handed back, never widens it.


def _session_start_at(db, proj: Path, session: str) -> str:
    r = run_hook("SessionStart", payload("SessionStart", session=session, cwd=proj, source="compact"),
                 env={"LEDGER_DB": db, "CLAUDE_PROJECT_DIR": proj})
    assert r.returncode == 0, r
    return context_of(r.stdout.decode())


@pytest.mark.parametrize("corrupt", [
    "/etc",  # the tester's: its parent, "/", became a worktree of the repository
    "/",
    "{other}/.git",  # another repository's .git folder
    "{stray}/.git",  # a .git file that does not point back at this entry
])
def test_a_corrupt_worktree_gitdir_never_widens_the_project(repo_and_worktree, tmp_path, store_target, corrupt):
    repo, wt = repo_and_worktree
    other = tmp_path / "other-project"
    (other / "lib").mkdir(parents=True)
    (other / "lib" / "x.py").write_text("X = 1\n")
    git(other, "init", "-q")
    stray = tmp_path / "stray"
    stray.mkdir()
    (stray / ".git").write_text("gitdir: /nowhere/.git/worktrees/stray\n")
    with Ledger.open(store_target) as led:
        led.remember("lib/x.py sets X to 1 in the other project", cluster="code", agent="alice",
                     files=[file_key(other / "lib" / "x.py")])
        led.remember("src/app.py main() returns 1", cluster="code", agent="alice", files=[file_key(repo / "src" / "app.py")])
    (admin,) = (repo / ".git" / "worktrees").iterdir()
    (admin / "gitdir").write_text(corrupt.format(other=other, stray=stray) + "\n")
    ctx = _session_start_at(store_target, repo, "c1")
    assert "main() returns 1" in ctx  # the project's own facts
    assert "other project" not in ctx and "is gone" not in ctx
    from ledger.watcher.worktrees import aliases

    assert aliases(str(repo / "src" / "app.py")) == []  # the broken link shares nothing


def test_a_session_started_at_the_filesystem_root_lists_no_facts(store_target, tmp_path):
    (tmp_path / "p").mkdir()
    with Ledger.open(store_target) as led:
        led.remember("p/a.py defines main", cluster="code", agent="alice", files=[file_key(tmp_path / "p" / "a.py")])
    assert _session_start_at(store_target, Path("/"), "root") == ""
    assert "defines main" in _session_start_at(store_target, tmp_path / "p", "p")


def test_a_worktree_with_a_relative_gitdir_link_still_shares(repo_and_worktree):
    from ledger.watcher.worktrees import aliases

    repo, wt = repo_and_worktree
    (admin,) = (repo / ".git" / "worktrees").iterdir()
    # git >= 2.48 may write both links relative (worktree.useRelativePaths)
    (admin / "gitdir").write_text(str(Path("..") / ".." / ".." / ".." / wt.name / ".git") + "\n")
    (wt / ".git").write_text(f"gitdir: ../{repo.name}/.git/worktrees/{admin.name}\n")
    assert aliases(str(repo / "src" / "app.py")) == [str((wt / "src" / "app.py").resolve())]
