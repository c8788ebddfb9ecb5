"""A distiller killed by ``kill -9`` during its LLM call leaves no LLM child running
(issue 12): the command backend's child gets PR_SET_PDEATHSIG on Linux."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest
from fakes.hooks import post_bash, run_hook

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux-only")

SLOW_LLM = """import os, sys, time
open(sys.argv[1], "w").write(str(os.getpid()))
time.sleep(120)
print("[]")
"""


def _state(pid: int) -> str | None:
    """The /proc state letter of ``pid`` (None when gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None


def _ppid(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _wait(fn, timeout=15.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = fn()
        if v:
            return v
        time.sleep(0.05)
    return fn()


def test_killing_the_distiller_kills_its_llm_child(tmp_path, _isolated_home, store_target):
    script = tmp_path / "slow_llm.py"
    script.write_text(SLOW_LLM)
    pid_file = tmp_path / "llm.pid"
    env = {"LEDGER_DB": store_target, "LEDGER_DISTILL_EVERY": "1", "LEDGER_LLM_BACKEND": "command",
           "LEDGER_LLM_COMMAND": f"{sys.executable} {script} {pid_file}", "LEDGER_LLM_TIMEOUT": "300"}
    r = run_hook("PostToolUse", post_bash("make", stdout="ok", cwd=tmp_path), env=env)
    assert r.returncode == 0
    assert _wait(lambda: pid_file.exists() and pid_file.read_text().strip()), "the LLM command never started"
    child = int(pid_file.read_text())
    distiller = _ppid(child)
    cmd = Path(f"/proc/{distiller}/cmdline").read_text()
    assert "ledger.watcher.distill" in cmd or "__distill" in cmd, cmd
    os.kill(distiller, signal.SIGKILL)
    gone = _wait(lambda: _state(child) in (None, "Z"), timeout=10)
    if not gone:
        os.kill(child, signal.SIGKILL)  # do not leave it behind if the test fails
    assert gone, f"LLM child {child} still running ({_state(child)}) after its distiller was killed"
