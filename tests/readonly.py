"""Run a real process with a file or folder mounted read-only for it alone, as a store on
a read-only mount (or a read-only file) looks to ledger: every write fails with EROFS,
whoever runs the test, root included (root ignores chmod, not a read-only mount).

``ro_prefix(path)`` is an argv prefix: ``subprocess.run([*ro_prefix(folder), "ledger",
"stats"])`` runs ``ledger stats`` in a private mount namespace (``unshare -m``, with
``-r`` when not root) where ``path`` is bind-mounted read-only. Tests that need it call
:func:`require_ro_mounts` first, which skips them where namespaces are not allowed."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile

import pytest

_SCRIPT = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'


def ro_prefix(path: str | os.PathLike) -> tuple[str, ...]:
    """The argv prefix that runs the rest of the command with ``path`` read-only."""
    user_ns = () if os.geteuid() == 0 else ("-r",)
    return ("unshare", *user_ns, "-m", "sh", "-c", _SCRIPT, "sh", os.fspath(path))


@functools.cache
def _works() -> str:
    if not shutil.which("unshare") or not hasattr(os, "geteuid"):
        return "no unshare(1) here"
    probe_dir = tempfile.mkdtemp(prefix="ledger-ro-probe-")
    p = subprocess.run([*ro_prefix(probe_dir), "sh", "-c", f'! touch "{probe_dir}/x" 2>/dev/null'],
                       capture_output=True, text=True, timeout=30)
    shutil.rmtree(probe_dir, ignore_errors=True)
    return "" if p.returncode == 0 else f"cannot mount read-only in a namespace here: {p.stderr.strip()[:200]}"


def require_ro_mounts() -> None:
    """Skip the calling test where a private read-only mount cannot be made."""
    why = _works()
    if why:
        pytest.skip(why)
