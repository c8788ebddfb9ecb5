"""SQLite's ``:memory:`` as the store (docs/cli.md "A store that does not exist"): every
ledger command and every hook is its own process, so a store in memory took each write,
printed "remembered m_..." with exit 0, and lost it when the process ended. It is refused
wherever a user can name a store (``--db``, ``$LEDGER_DB``, ``store.db`` in the config,
``ledger config set``, ``ledger install``, ``ledger mcp``), saying what to give instead;
a hook stays silent, exits 0 and logs the same sentence. Real processes."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from conftest import LEDGER_BIN

VERBS = [
    ("remember", "Staging needs the VPN", "--cluster", "proc"),
    ("recall", "staging"),
    ("search", "staging"),
    ("show", "m_abc123"),
    ("stats",),
    ("export",),
    ("ingest", "--text", "Staging needs the VPN", "--cluster", "proc"),
    ("clusters", "add", "Client work"),
]


def _run(argv, env_extra=None, stdin=b"", cwd=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("LEDGER_DB")}
    env.update(env_extra or {})
    return subprocess.run([LEDGER_BIN, *argv], input=stdin, capture_output=True, env=env, timeout=60, cwd=cwd)


def _refused(p, where: str) -> str:
    err = p.stderr.decode()
    assert p.returncode == 1 and p.stdout == b"" and "Traceback" not in err, (p.stdout, err)
    assert ":memory:" in err and "every write would be lost" in err and "Give a store file" in err, err
    assert where in err, err
    return err


@pytest.mark.parametrize("verb", VERBS, ids=" ".join)
def test_db_option_refuses_memory(tmp_path, verb):
    _refused(_run([*verb, "--db", ":memory:"], cwd=tmp_path), "--db")
    assert os.listdir(tmp_path) == []  # no file named :memory: either


@pytest.mark.parametrize("verb", VERBS, ids=" ".join)
def test_variable_refuses_memory(tmp_path, verb):
    _refused(_run(list(verb), {"LEDGER_DB": ":memory:"}, cwd=tmp_path), "$LEDGER_DB")


def test_json_error_has_a_kind(tmp_path):
    p = _run(["remember", "Staging needs the VPN", "--cluster", "proc", "--json"], {"LEDGER_DB": ":memory:"})
    err = json.loads(p.stderr.decode().strip())
    assert p.returncode == 1 and err["kind"] == "invalid-input" and ":memory:" in err["error"], err


def test_config_file_and_config_set_refuse_memory(tmp_path):
    home = os.environ["LEDGER_HOME"]
    p = _run(["config", "set", "store.db", ":memory:"])
    _refused(p, "store.db")
    assert not os.path.exists(os.path.join(home, "config.toml")) or ":memory:" not in open(os.path.join(home, "config.toml")).read()
    with open(os.path.join(home, "config.toml"), "w") as fh:  # written by hand
        fh.write('[store]\ndb = ":memory:"\n')
    _refused(_run(["remember", "Staging needs the VPN", "--cluster", "proc"]), "store.db")


def test_install_refuses_memory(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    p = _run(["install", "claude-code", "--db", ":memory:", "--no-distill"], cwd=tmp_path)
    _refused(p, "--db")
    assert not (tmp_path / ".claude").exists()


def test_hook_logs_and_stays_silent(tmp_path):
    payload = {"session_id": "s1", "hook_event_name": "PostToolUse", "cwd": str(tmp_path), "tool_name": "Bash",
               "tool_input": {"command": "ls"}, "tool_response": {"stdout": "a.py"}}
    p = _run(["hook", "claude-code", "PostToolUse"], {"LEDGER_DB": ":memory:"}, stdin=json.dumps(payload).encode())
    assert p.returncode == 0 and p.stdout == b"" and p.stderr == b"", p
    log = open(os.path.join(os.environ["LEDGER_HOME"], "hook.log")).read()
    assert "$LEDGER_DB is :memory:" in log, log


def test_mcp_tool_call_says_so(tmp_path):
    msgs = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "cursor", "version": "1"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
             "params": {"name": "remember", "arguments": {"claim": "Staging needs the VPN", "cluster": "proc"}}}]
    p = _run(["mcp", "--db", ":memory:"], stdin="".join(json.dumps(m) + "\n" for m in msgs).encode())
    answers = {d["id"]: d for d in map(json.loads, p.stdout.decode().splitlines()) if "id" in d}
    res = answers[2]["result"]
    assert res["isError"] and "every write would be lost" in res["content"][0]["text"], res


def test_a_missing_store_still_reads_as_empty(tmp_path):
    """The in-memory stand-in a read of a missing store opens is ledger's own, not refused."""
    p = _run(["recall", "staging", "--db", str(tmp_path / "none.db")])
    assert p.returncode == 0 and b"No store at" in p.stderr, p
