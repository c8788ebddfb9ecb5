"""One rule for every yes/no value (``ledger.flags``): 1/true/yes/on and 0/false/no/off,
any case; unset or empty is the default; anything else keeps the default and is
reported. Checked in Python (the hook, the OpenCode session child, doctor, ``ledger
config``) and in the OpenCode plugin under real node.

Found by a fresh-user pass: ``LEDGER_HOOKS_DISABLED=0`` turned every hook off, in
Python and in the plugin, and ``ledger doctor`` said all was well."""

from __future__ import annotations

import json
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest
from fakes.hooks import context_of, pre_read, run_hook
from test_hook_runner import proj, store_with_fact  # noqa: F401  (fixtures: a project and a fact about its data.bin)
from test_opencode_server import read, server  # noqa: F401  (server: the fixture that starts the session child)

from ledger.flags import env_flag, env_flag_problems, parse_flag

NODE = shutil.which("node")
PLUGIN = Path(__file__).resolve().parent.parent / "src" / "ledger" / "harness" / "opencode" / "ledger.js"

#: value -> what LEDGER_HOOKS_DISABLED means with it (None: not a boolean, the default: off).
TABLE = {
    "1": True, "true": True, "TRUE": True, "Yes": True, " on ": True, "yes\n": True,
    "0": False, "false": False, "False": False, "no": False, "OFF": False, " 0 ": False,
    "": False, "   ": False,
    "maybe": None, "2": None, "disabled": None, "y": None, "-1": None, "0.0": None, "nope": None,
}


def test_parse_flag_table():
    for raw, want in TABLE.items():
        if not raw.strip():
            continue  # empty is "not set", the caller's business
        assert parse_flag(raw) is want, raw
    assert parse_flag(True) is True and parse_flag(False) is False
    assert parse_flag(1) is None and parse_flag(None) is None and parse_flag("") is None


def test_env_flag_falls_back_to_the_default_and_reports_only_bad_values():
    for raw, want in TABLE.items():
        env = {"LEDGER_HOOKS_DISABLED": raw}
        assert env_flag("LEDGER_HOOKS_DISABLED", environ=env) is bool(want), raw
        problems = env_flag_problems(env)
        if want is None:
            [(name, value, message)] = problems
            assert name == "LEDGER_HOOKS_DISABLED" and value == raw
            assert repr(raw) in message and "1/true/yes/on or 0/false/no/off" in message and "default, false" in message
        else:
            assert problems == [], raw
    assert env_flag("LEDGER_HOOKS_DISABLED", environ={}) is False
    assert env_flag("X_UNKNOWN", True, environ={"X_UNKNOWN": "bogus"}) is True


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_the_opencode_plugin_reads_the_variable_by_the_same_rule():
    """The plugin under real node: turned off exactly when Python's rule says so, and a
    value that is not a boolean is logged once through OpenCode's log, naming it."""
    code = textwrap.dedent("""
        const { default: LedgerPlugin } = await import(process.argv[1]);
        const table = JSON.parse(process.argv[2]);
        const out = {};
        for (const raw of table) {
          process.env.LEDGER_HOOKS_DISABLED = raw;
          process.env.LEDGER_OPENCODE_DEBUG = raw === "maybe" ? "sometimes" : "0";
          const logs = [];
          const client = { app: { log: async ({ body }) => { logs.push(body.message); } } };
          const hooks = await LedgerPlugin({ client, directory: "/tmp" }, { command: ["/nonexistent/ledger"] });
          const v2 = await LedgerPlugin.setup({ options: { command: ["/nonexistent/ledger"] }, location: { directory: "/tmp" },
            tool: { hook: () => { out[raw + "#v2"] = true; } } });
          out[raw] = { off: Object.keys(hooks).length === 0, logs };
          if (hooks.dispose) await hooks.dispose();
          await v2();
        }
        console.log(JSON.stringify(out));
    """)
    p = subprocess.run([NODE, "--input-type=module", "-e", code, PLUGIN.as_uri(), json.dumps(list(TABLE))],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout.strip().splitlines()[-1])
    for raw, want in TABLE.items():
        assert got[raw]["off"] is bool(want), (raw, got[raw])
        assert got.get(raw + "#v2", False) is not bool(want), raw  # the 2.x entry wires its hooks only when on
        if want is None:
            assert got[raw]["logs"][0] == (f"$LEDGER_HOOKS_DISABLED: '{raw}' is not a boolean (1/true/yes/on or "
                                           "0/false/no/off); using the default, false"), got[raw]
        elif not want:
            assert got[raw]["logs"] == [], (raw, got[raw])
    assert got["maybe"]["logs"][1:] == ["$LEDGER_OPENCODE_DEBUG: 'sometimes' is not a boolean (1/true/yes/on or "
                                        "0/false/no/off); using the default, false"]


@pytest.mark.parametrize("raw,on", [("0", True), ("false", True), ("no", True), ("Off", True), ("", True),
                                    ("1", False), ("TRUE", False), ("yes", False), ("on", False),
                                    ("maybe", True)])
def test_the_hook_reads_the_variable_by_the_rule(raw, on, store_with_fact, proj, _isolated_home):  # noqa: F811
    p = run_hook("PreToolUse", pre_read(proj / "data.bin", cwd=proj),
                 env={"LEDGER_DB": store_with_fact, "LEDGER_HOOKS_DISABLED": raw})
    assert p.returncode == 0 and p.stderr == b""
    assert ("little-endian" in context_of(p.stdout.decode())) is on, (raw, p.stdout)
    log = Path(_isolated_home) / "hook.log"
    lines = log.read_text().splitlines() if log.exists() else []
    if raw == "maybe":
        assert len(lines) == 1 and "config ignored: $LEDGER_HOOKS_DISABLED: 'maybe' is not a boolean" in lines[0], lines
        run_hook("PreToolUse", pre_read(proj / "data.bin", cwd=proj),
                 env={"LEDGER_DB": store_with_fact, "LEDGER_HOOKS_DISABLED": raw})
        assert len(log.read_text().splitlines()) == 1, "logged once, not on every hook call"
    else:
        assert lines == []


@pytest.mark.parametrize("raw,on", [("0", True), ("no", True), ("maybe", True), ("1", False), ("Yes", False)])
def test_the_opencode_child_reads_the_variable_by_the_rule(raw, on, store_with_fact, proj, server):  # noqa: F811
    s = server(LEDGER_HOOKS_DISABLED=raw)  # on store_target, which store_with_fact wrote the fact into
    answer = s.event(read(proj, "data.bin"))
    assert answer["error"] is None
    assert ("little-endian" in (answer["append"] or "")) is on, (raw, answer)


def test_config_names_a_bad_variable_and_exits_1(cli):
    rc, out, err = cli("config", "list", db=None, env={"LEDGER_HOOKS_DISABLED": "maybe"})
    assert rc == 1
    assert "$LEDGER_HOOKS_DISABLED: 'maybe' is not a boolean (1/true/yes/on or 0/false/no/off)" in out + err
    rc, out, err = cli("config", "list", "--json", db=None, env={"LEDGER_HOOKS_DISABLED": "maybe"})
    problems = json.loads(out)["problems"]
    assert [(p["key"], p["value"], p["where"]) for p in problems] == [("LEDGER_HOOKS_DISABLED", "maybe", "$LEDGER_HOOKS_DISABLED")]
    rc, out, err = cli("config", "list", db=None, env={"LEDGER_HOOKS_DISABLED": "0"})
    assert rc == 0, out + err
    # a config.toml boolean and its variable follow the same rule
    rc, out, err = cli("config", "set", "watcher.deny_on_escalation", "ON", db=None)
    assert rc == 0, err
    rc, out, err = cli("config", "get", "watcher.deny_on_escalation", db=None)
    assert out.strip() == "true"
    rc, out, err = cli("config", "list", db=None, env={"LEDGER_DENY_ON_ESCALATION": "sure"})
    assert rc == 1 and "LEDGER_DENY_ON_ESCALATION" in out + err and "1/true/yes/on or 0/false/no/off" in out + err
