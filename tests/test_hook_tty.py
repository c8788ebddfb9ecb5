"""``ledger hook`` typed at a terminal prints its usage instead of waiting silently for a
payload (fresh-user defect); run by a harness (payload piped into stdin) it stays silent.
Real processes on a real pseudo-terminal."""

from __future__ import annotations

import os
import subprocess
import time

import pytest
from conftest import store_exists
from fakes.hooks import LEDGER_BIN
from ptys import read_while_running


def _on_a_tty(args: list[str], tmp_path, db) -> tuple[int, str]:
    master, slave = os.openpty()
    env = {**os.environ, "LEDGER_HOME": str(tmp_path / "home"), "LEDGER_DB": str(db), "NO_COLOR": "1"}
    p = subprocess.Popen([LEDGER_BIN, "hook", *args], stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True)
    os.close(slave)
    deadline = time.monotonic() + 30
    out = read_while_running(master, p, timeout=30)
    try:
        p.wait(timeout=max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        os.close(master)
        pytest.fail(f"ledger hook {' '.join(args)} waited at a terminal; printed {out!r}")
    os.close(master)
    return p.returncode, out.decode("utf-8", "replace")


# The reported example (no arguments) and more of its kind: a harness named, an event too.
@pytest.mark.parametrize("args", [[], ["claude-code"], ["claude-code", "PreToolUse"], ["opencode"]])
def test_at_a_terminal_it_prints_usage(tmp_path, store_target, args):
    rc, out = _on_a_tty(args, tmp_path, store_target)
    assert rc == 0 and "Usage: ledger hook" in out and "echo '{" in out, out
    assert not store_exists(store_target)  # nothing was run


@pytest.mark.parametrize("args", [[], ["claude-code"], ["claude-code", "PreToolUse"]])
def test_from_a_harness_it_stays_silent(tmp_path, store_target, args):
    env = {**os.environ, "LEDGER_HOME": str(tmp_path / "home"), "LEDGER_DB": str(store_target)}
    p = subprocess.run([LEDGER_BIN, "hook", *args], input=b"{}", capture_output=True, env=env, timeout=30)
    assert (p.returncode, p.stdout, p.stderr) == (0, b"", b"")
