"""Environment variables whose bytes are not UTF-8 (issue 21, bad input): the CLI says
which variable and what to set, with no traceback; a hook stays silent and exits 0
(the agent goes on) and logs one line naming the variable. Real processes, real bytes
in the environment."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from conftest import store_exists
from fakes.hooks import LEDGER_BIN, pre_read


def _bad(tmp_path) -> bytes:
    return os.fsencode(tmp_path) + b"/ledger-\xff-\xfe"


def _env(tmp_path, name: str, value: bytes | None = None) -> dict:
    value = _bad(tmp_path) if value is None else value
    env = {k: v for k, v in os.environb.items() if not k.startswith(b"LEDGER_")}
    env[b"LEDGER_HOME"] = os.fsencode(tmp_path / "home")
    env[b"NO_COLOR"] = b"1"
    env[name.encode()] = value
    return env


def _run(argv: list[str], env: dict, stdin: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run([LEDGER_BIN, *argv], input=stdin, capture_output=True, env=env, timeout=60)


# The example from the issue (LEDGER_AGENT failed inside SQLite with a traceback) and
# more of the same kind: a path variable, the home folder, a setting.
@pytest.mark.parametrize("name", ["LEDGER_AGENT", "LEDGER_DB", "LEDGER_HOME", "LEDGER_LLM_MODEL", "CLAUDE_PROJECT_DIR"])
@pytest.mark.parametrize("argv", [["remember", "The boiler limit is 3 bar", "--cluster", "code"], ["stats"],
                                  ["sources", "list"]])
def test_cli_names_the_variable_and_writes_nothing(tmp_path, store_target, name, argv):
    env = _env(tmp_path, name)
    if name != "LEDGER_DB":
        env[b"LEDGER_DB"] = os.fsencode(str(store_target))
    p = _run(argv, env)
    err = p.stderr.decode("utf-8")
    assert p.returncode == 1 and "Traceback" not in err, err
    assert f"${name} is not valid UTF-8" in err and "0xFF" in err and "\\xff" in err, err
    assert p.stdout == b""
    assert sorted(os.listdir(tmp_path)) == [] and not store_exists(store_target)  # no store, no folder under the bad name


def test_cli_json_error_names_the_variable(tmp_path):
    p = _run(["recall", "boiler", "--json"], _env(tmp_path, "LEDGER_AGENT", b"claude\xc3"))
    err = json.loads(p.stderr.decode().strip().splitlines()[-1])
    assert p.returncode == 1 and err["kind"] == "invalid-input" and "$LEDGER_AGENT" in err["error"], err


def test_help_still_works(tmp_path):
    p = _run(["--help"], _env(tmp_path, "LEDGER_AGENT"))
    assert p.returncode == 0 and b"For agents" in p.stdout, p.stderr


@pytest.mark.parametrize("name", ["LEDGER_AGENT", "LEDGER_DB", "LEDGER_HOME", "LEDGER_WATCHER"])
def test_hook_stays_silent_and_says_why_in_its_log(tmp_path, store_target, name):
    env = _env(tmp_path, name)
    if name != "LEDGER_DB":
        env[b"LEDGER_DB"] = os.fsencode(str(store_target))
    payload = json.dumps(pre_read(tmp_path / "a.py", cwd=tmp_path, session="env")).encode()
    p = _run(["hook", "claude-code", "PreToolUse"], env, payload)
    assert (p.returncode, p.stdout, p.stderr) == (0, b"", b"")
    home = _bad(tmp_path) if name == "LEDGER_HOME" else os.fsencode(tmp_path / "home")
    with open(home + b"/hook.log", encoding="utf-8") as fh:  # the log follows $LEDGER_HOME, whatever its bytes
        log = fh.read()
    assert f"${name} is not valid UTF-8" in log, log
    assert not store_exists(store_target)
