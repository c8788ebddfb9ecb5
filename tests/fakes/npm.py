"""Installing a pinned harness from the npm registry for the end-to-end tests.

One place for the cache folder rules (gitignored, reused across runs) and for the
skip-with-a-reason policy when npm or the registry cannot be had.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Callable

import pytest


def npm_install(cache: Path, folder: Path, package: str, version: str, find: Callable[[], Path | None],
                timeout: float = 600) -> Path:
    """``find()`` the installed binary, installing ``package@version`` into ``folder``
    first if needed; skips the calling test module with the reason when that fails."""
    cache.mkdir(parents=True, exist_ok=True)
    if not (cache / ".gitignore").exists():
        (cache / ".gitignore").write_text("*\n")
    exe = find()
    if exe is not None:
        return exe
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip(f"npm is not installed: cannot fetch {package} for the end-to-end test")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "package.json").write_text(json.dumps({"private": True, "dependencies": {package: version}}))
    try:
        p = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--loglevel=error"], cwd=folder,
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.skip(f"npm install {package}@{version} timed out (registry unreachable?)")
    exe = find()
    if p.returncode != 0 or exe is None:
        pytest.skip(f"npm could not install {package}@{version} (registry unavailable?): {(p.stderr or p.stdout).strip()[-500:]}")
    return exe
