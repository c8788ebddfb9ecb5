"""Runs the OpenCode plugin's JavaScript tests (``node --test tests/js/``) from pytest, so
the one test command covers them; the real-child test there uses this venv's ledger."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import LEDGER_BIN
from test_opencode_server import console_command_serves

ROOT = Path(__file__).resolve().parent.parent
NODE = shutil.which("node")


def _node_major() -> int:
    out = subprocess.run([NODE, "--version"], capture_output=True, text=True).stdout.strip().lstrip("v")
    return int(out.split(".")[0] or 0)


@pytest.mark.skipif(NODE is None, reason="node is not installed (the OpenCode plugin tests need node >= 18)")
def test_plugin_javascript(tmp_path):
    if _node_major() < 18:
        pytest.skip("node's test runner needs node >= 18")
    if console_command_serves():
        bin_ = LEDGER_BIN
    else:  # until `ledger __serve-session` is wired: the same server through the module
        bin_ = str(tmp_path / "ledger")
        Path(bin_).write_text(
            "#!/bin/sh\n"
            f'if [ "$1" = "__serve-session" ]; then shift; exec "{sys.executable}" -m ledger.harness.session_server "$@"; fi\n'
            f'exec "{LEDGER_BIN}" "$@"\n'
        )
        os.chmod(bin_, 0o755)
    env = dict(os.environ, LEDGER_TEST_BIN=bin_)
    env.pop("LEDGER_DB", None)
    p = subprocess.run([NODE, "--test", "tests/js/opencode_plugin.test.mjs"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    tail = "\n".join((p.stdout + p.stderr).splitlines()[-60:])
    assert p.returncode == 0, tail
    assert "# fail 0" in p.stdout and "# skipped 0" in p.stdout, tail
