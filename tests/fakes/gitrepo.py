"""Real git repositories for tests: a fixed identity, no user or system git config,
and a helper that makes a committed repository from a dict of files."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

#: An identity and an empty config, so commits work on a machine with no git user and a
#: developer's own ~/.gitconfig (hooks, templates, signing) cannot change what tests see.
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def git(repo: Path, *args: str) -> str:
    """Run ``git -C repo args...`` with :data:`GIT_ENV`; its stdout. Raises
    ``subprocess.CalledProcessError`` when git fails."""
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV}).stdout


def make_repo(path: Path, files: dict[str, str | bytes], branch: str = "main") -> Path:
    """A repository at ``path`` holding ``files`` (relative path -> text, or bytes), all
    committed on ``branch`` as one commit "init"."""
    for rel, text in files.items():
        f = path / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(text) if isinstance(text, bytes) else f.write_text(text)
    git(path, "init", "-q", "-b", branch)
    git(path, "add", ".")
    git(path, "commit", "-q", "-m", "init")
    return path
