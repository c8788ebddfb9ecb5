"""First-run behaviour through the real ``ledger`` command (issue: install and first run):
help on every command, JSON errors with ``--json``, ``serve`` ready when it says so."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import urllib.request

import pytest
from conftest import LEDGER_BIN, Cli


def _command_paths() -> list[list[str]]:
    import click

    from ledger.cli.app import cli

    out: list[list[str]] = []

    def walk(cmd, path):
        if isinstance(cmd, click.Group):
            for name, sub in sorted(cmd.commands.items()):
                out.append(path + [name])
                walk(sub, path + [name])

    walk(cli, [])
    return out


def test_every_command_prints_help_through_the_installed_command(cli):
    paths = _command_paths()
    assert ["hook"] in paths and ["install"] in paths and ["clusters", "add"] in paths
    for path in [[]] + paths:
        for flag in ("--help", "-h"):
            rc, out, err = cli(*path, flag, db=None)
            assert rc == 0, (path, err)
            assert out.startswith("Usage: ledger " + " ".join(path)), (path, out[:100])
            assert len(out.splitlines()) >= 4, (path, out)  # a description, not just a usage line


@pytest.mark.parametrize("argv", [["hook", "--help"], ["hook", "claude-code", "--help"], ["hook", "-h"]])
def test_hook_help_is_help_not_a_silent_hook(cli, argv):
    rc, out, err = cli(*argv, db=None)
    assert rc == 0 and out.startswith("Usage: ledger hook"), (out, err)
    assert "claude-code" in out and "stdin" in out


def test_a_real_hook_call_still_prints_nothing(cli, tmp_path):
    payload = {"hook_event_name": "PostToolUse", "session_id": "s1", "cwd": str(tmp_path), "tool_name": "Bash",
               "tool_input": {"command": "ls"}, "tool_response": {"stdout": "", "stderr": ""}}
    rc, out, err = cli("hook", "claude-code", "PostToolUse", input=json.dumps(payload), db=None)
    assert rc == 0 and out == ""


@pytest.mark.parametrize("argv, kind", [
    (["show", "m_doesnotexist"], "unknown-memory"),
    (["resolve", "cf_nope", "a"], "unknown-conflict"),
    (["recall", "x", "--limit", "0"], "usage"),
    (["remember", "a fact"], "invalid-input"),
    (["search", "strength:>>7"], "invalid-query"),
    (["sources", "trust", "s_nope", "0.5"], "unknown-source"),
])
def test_json_errors_are_json_on_stderr_with_the_same_exit_status(cli, argv, kind):
    rc_plain, out_plain, err_plain = cli(*argv)
    rc, out, err = cli(*argv, "--json")
    assert rc == rc_plain == 1
    assert out == out_plain == ""
    assert err_plain.startswith("✕ ")
    obj = json.loads(err)
    assert set(obj) >= {"error", "kind"}
    assert obj["kind"] == kind, obj
    assert obj["error"] == err_plain[2:].strip()


def test_unknown_command_with_json(cli):
    rc, out, err = cli("recal", "--json", db=None)
    assert rc == 1 and json.loads(err)["kind"] == "usage"


def test_serve_accepts_requests_as_soon_as_it_prints_the_url(store_target):
    Cli(store_target).create_store()  # serve --db <a missing store> is refused (test_store_files.py)
    for attempt in range(3):
        with subprocess.Popen([LEDGER_BIN, "serve", "--port", "0", "--db", str(store_target)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) as proc:
            try:
                line = proc.stdout.readline()
                m = re.match(r"● LEDGER running   (http://127\.0\.0\.1:(\d+)/)$", line.rstrip("\n"))
                assert m, (line, proc.stderr.read() if proc.poll() is not None else "")
                url = m.group(1)
                # No retry loop: every request right after the line must be answered.
                for _ in range(4):
                    with urllib.request.urlopen(url + "health", timeout=5) as r:
                        assert json.load(r)["ok"] is True
                assert "0 memories" in proc.stdout.readline()
            finally:
                proc.terminate()
                proc.communicate(timeout=10)


def test_serve_busy_port_with_json_is_a_json_error(store_target):
    Cli(store_target).create_store()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        p = subprocess.run([LEDGER_BIN, "serve", "--port", str(port), "--db", str(store_target), "--json"],
                           capture_output=True, text=True, timeout=30)
    assert p.returncode == 1
    obj = json.loads(p.stderr)
    assert obj["kind"] == "port-unavailable" and str(port) in obj["error"]


# ---------------------------------------------------------------- query typos, spans
@pytest.mark.parametrize("query, nearest", [("clster:code", "cluster"), ("agnet:claude", "agent"),
                                            ("strenght:>40", "strength"), ("befor:2d deploy", "before")])
def test_a_filter_typo_is_refused_with_the_keys_and_the_nearest(cli, query, nearest):
    for verb in ("search", "recall", "export"):
        rc, out, err = cli(verb, *query.split())
        assert rc == 1 and out == "", (verb, out)
        assert f"did you mean {nearest}:?" in err
        assert "agent: cluster: type: kind: strength: asof: after: before:" in err


def test_text_with_colons_still_searches(cli):
    cli("remember", "colour:blue is set in theme.css line 12", "--cluster", "code")
    for q in ("colour:blue", "theme.css:12", "http://localhost:7444"):
        rc, out, err = cli("search", q)
        assert rc == 0 and err == "", (q, err)


def test_an_unknown_cluster_warns_naming_the_known_ones(cli):
    cli("remember", "Deploys need the VPN", "--cluster", "proc")
    rc, out, err = cli("search", "deploy", "cluster:prco")
    assert rc == 0
    assert err.startswith("⚠ ") and '"prco"' in err and "proc" in err and "code" in err
    rc, out, err = cli("recall", "deploy", "cluster:nope", "--json")
    assert rc == 0 and json.loads(out) == []
    w = json.loads(err)
    assert w["kind"] == "unknown-cluster" and "proc" in w["known"]
    rc, out, err = cli("search", "deploy", "cluster:proc")
    assert rc == 0 and err == "" and "Deploys need the VPN" in out


def test_hour_and_minute_spans(cli):
    cli("remember", "The release branch is cut on Mondays", "--cluster", "proc")
    def hits(q):
        rc, out, err = cli("search", *q.split(), "--json")
        assert rc == 0, err
        return json.loads(out)["total"]
    assert hits("release after:1h") == 1
    assert hits("release after:30m") == 1
    assert hits("release before:2m") == 0
    assert hits("release asof:5m") == 0      # it did not exist five minutes ago
    assert hits("release before:1h") == 0
    rc, out, err = cli("search", "asof:5x")
    assert rc == 1 and "30m, 2h" in err


# ---------------------------------------------------------------- plurals
def test_stats_and_counts_use_singular_for_one(cli, tmp_path):
    cli("remember", "The only fact", "--cluster", "code", "--agent", "claude")
    proj = tmp_path / "proj"
    proj.mkdir()
    # A session with a task: one that recorded nothing writes no checkpoint (docs/session-state.md).
    prompt = {"hook_event_name": "UserPromptSubmit", "session_id": "s-one", "cwd": str(proj), "transcript_path": "",
              "prompt": "Make the release notes list every migration"}
    stop = {"hook_event_name": "Stop", "session_id": "s-one", "cwd": str(proj), "transcript_path": "",
            "stop_hook_active": False}
    for event, payload in (("UserPromptSubmit", prompt), ("Stop", stop)):
        rc, out, err = cli("hook", "claude-code", event, input=json.dumps(payload), db=None,
                           env={"LEDGER_DB": str(cli.db)})
        assert rc == 0
    rc, out, err = cli("stats")
    assert rc == 0, err
    assert "1  memory " in out and "1 claim ·" in out and "1  agent " in out
    assert "1 checkpoint" in out and "1 checkpoints" not in out, out
    for wrong in ("1 memories", "1 claims", "1 agents", "1 sources", "1 tool calls", "1 calls"):
        assert wrong not in out, (wrong, out)
