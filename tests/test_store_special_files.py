"""A store path that is a named pipe, a device or a socket (docs/cli.md "A store that
does not exist"): SQLite cannot keep a store there. Opening a FIFO read-only blocked
until a writer came, so `ledger doctor --db fifo` hung for good; `--db /dev/null` was a
"disk I/O error" naming no cause. Each is refused at once, saying what the path is and
what to give; a hook exits 0, silent, and logs it. Real processes, real FIFOs and devices."""

from __future__ import annotations

import json
import os
import socket
import subprocess

import pytest
from conftest import LEDGER_BIN

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")


def _special(tmp_path, kind: str) -> tuple[str, str]:
    if kind == "fifo":
        p = tmp_path / "ledger.db"
        os.mkfifo(p)
        return str(p), "a named pipe (FIFO)"
    if kind == "socket":
        p = tmp_path / "s.db"
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(p))
        return str(p), "a socket"
    return "/dev/null", "a device"


def _run(argv, db, stdin=b""):
    env = dict(os.environ, NO_COLOR="1", LEDGER_DB=db)
    return subprocess.run([LEDGER_BIN, *argv], input=stdin, capture_output=True, env=env, timeout=30)


@pytest.mark.parametrize("kind", ["fifo", "socket", "device"])
@pytest.mark.parametrize("argv", [["recall", "staging"], ["remember", "Staging needs the VPN", "--cluster", "proc"],
                                  ["stats"], ["export"]], ids=" ".join)
def test_refused_at_once_saying_what_it_is(tmp_path, kind, argv):
    db, what = _special(tmp_path, kind)
    p = _run(argv, db)
    err = p.stderr.decode()
    assert p.returncode == 1 and p.stdout == b"" and "Traceback" not in err, err
    assert f"it is {what}, not a file" in err and "Give a store file" in err, err


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_doctor_names_it_and_does_not_hang(tmp_path, kind):
    db, what = _special(tmp_path, kind)
    p = _run(["doctor", "--json"], db)  # the timeout of 30 s: a FIFO opened read-only blocked forever
    store = {c["name"]: c for c in json.loads(p.stdout)["checks"]}["store"]
    assert p.returncode == 1 and store["status"] == "fail" and what in store["detail"], store


def test_hook_on_a_fifo_store_exits_0_and_logs(tmp_path):
    db, _ = _special(tmp_path, "fifo")
    payload = {"session_id": "s1", "hook_event_name": "PostToolUse", "cwd": str(tmp_path), "tool_name": "Bash",
               "tool_input": {"command": "ls"}, "tool_response": {"stdout": "a.py"}}
    p = _run(["hook", "claude-code", "PostToolUse"], db, json.dumps(payload).encode())
    assert p.returncode == 0 and p.stdout == b"" and p.stderr == b"", p
    assert "named pipe" in open(os.path.join(os.environ["LEDGER_HOME"], "hook.log")).read()
