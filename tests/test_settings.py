"""Typed settings (ledger.watcher.config) and ``ledger config list|get|set``.

The kind of bug: a value of the wrong type or out of range in config.toml or an
environment variable. It must never change meaning silently (``"false"`` is false) nor
fail every hook (``every = "abc"``): that one setting keeps its default, the hook logs
one line, and ``ledger config`` names the problem.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import spool_settled, store_sql
from fakes.hooks import context_of, post_bash, pre_read, run_hook

from ledger.filekeys import file_key
from ledger.service import Ledger
from ledger.watcher import config as C
from ledger.watcher.llm import BACKENDS

# ---------------------------------------------------------------------------- the table


def test_every_setting_has_a_default_of_its_type_help_and_a_unique_key():
    assert len(C.BY_KEY) == len(C.SETTINGS)
    types = {"int": int, "float": float, "bool": bool, "str": str}
    for s in C.SETTINGS:
        assert type(s.default) is types[s.type], s.key
        assert s.coerce(s.default) == s.default, s.key
        assert s.help and s.section in C.SECTIONS
    envs = [s.env for s in C.SETTINGS if s.env]
    assert len(envs) == len(set(envs))


@pytest.mark.parametrize("key, raw, expected", [
    ("watcher.deny_on_escalation", "false", False),  # the example: a string "false" is false
    ("watcher.deny_on_escalation", "No", False),
    ("watcher.enabled", "on", True),
    ("watcher.enabled", True, True),
    ("watcher.every", "20", 20),
    ("watcher.every", 20.0, 20),
    ("llm.timeout", "2.5", 2.5),
    ("llm.backend", "OpenAI", "openai"),
    ("llm.daily_token_budget", 0, 0),
])
def test_values_are_read_as_their_type(key, raw, expected):
    got = C.BY_KEY[key].coerce(raw)
    assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize("key, raw, says", [
    ("watcher.every", "abc", "expected an integer"),  # the example
    ("watcher.every", True, "not a boolean"),
    ("watcher.every", 2.5, "expected an integer"),
    ("watcher.every", 0, "at least 1"),
    ("watcher.escalate_after", 0, "at least 1"),
    ("watcher.deny_on_escalation", "maybe", "expected true or false"),
    ("watcher.deny_on_escalation", 1, "expected true or false"),
    ("llm.timeout", "fast", "expected a number"),
    ("llm.timeout", float("nan"), "finite"),
    ("llm.backend", "gpt", "expected one of none, command"),
    ("llm.model", 4, "expected a string"),
    # the writer id of distilled findings follows every agent id's rule (docs/cli.md "Agent ids"):
    # "a b" stored findings no agent: filter could name, "" findings with no writer
    ("watcher.agent", "a b", "has a space"),
    ("watcher.agent", "a,b", "use a-b"),
    ("watcher.agent", "", "is empty"),
    ("watcher.agent", "x\x1by", "control character"),
])
def test_bad_values_are_refused_with_what_was_expected(key, raw, says):
    with pytest.raises(ValueError) as e:
        C.BY_KEY[key].coerce(raw)
    assert says in str(e.value)


def test_the_watcher_agent_is_stored_in_its_normal_form():
    assert C.BY_KEY["watcher.agent"].coerce("Claude-Watcher") == "claude-watcher"


def test_config_set_refuses_a_watcher_agent_no_filter_could_name(cli, _isolated_home):
    rc, out, err = cli("config", "set", "watcher.agent", "night shift", db=None)
    assert rc == 1 and "has a space" in err and "use night-shift" in err and "Nothing was changed" in err, err
    assert not (Path(_isolated_home) / "config.toml").exists()


def test_the_backend_choices_are_the_llm_registry():
    assert C.BY_KEY["llm.backend"].valid_choices() == tuple(BACKENDS)


# ---------------------------------------------------------------------------- loading


def _write(tmp_path: Path, text: str) -> str:
    p = tmp_path / "config.toml"
    p.write_text(text)
    return str(p)


def test_a_bad_value_falls_back_alone_and_is_named(tmp_path):
    path = _write(tmp_path, '[watcher]\nevery = "abc"\ndeny_on_escalation = "false"\nescalate_after = 2\n'
                            '[llm]\nbackend = "gpt"\ntimeout = 30\n')
    loaded = C.load_checked(path, environ={})
    w, llm = loaded.values["watcher"], loaded.values["llm"]
    assert w["every"] == 15 and w["deny_on_escalation"] is False and w["escalate_after"] == 2
    assert llm["backend"] == "none" and llm["timeout"] == 30.0
    assert [p.key for p in loaded.problems] == ["watcher.every", "llm.backend"]
    assert str(loaded.problems[0]) == f'{path}: watcher.every = "abc": expected an integer; using the default 15'
    assert loaded.origin["watcher.escalate_after"] == path and loaded.origin["watcher.every"] == "default"


def test_environment_overrides_the_file_and_a_bad_one_keeps_the_file_value(tmp_path):
    path = _write(tmp_path, "[watcher]\nevery = 7\nescalate_after = 3\n")
    loaded = C.load_checked(path, environ={"LEDGER_DISTILL_EVERY": "often", "LEDGER_ESCALATE_AFTER": "9",
                                           "LEDGER_DENY_ON_ESCALATION": "yes"})
    w = loaded.values["watcher"]
    assert w["every"] == 7 and w["escalate_after"] == 9 and w["deny_on_escalation"] is True
    assert loaded.origin["watcher.escalate_after"] == "$LEDGER_ESCALATE_AFTER"
    assert [str(p) for p in loaded.problems] == [
        '$LEDGER_DISTILL_EVERY: watcher.every = "often": expected an integer; using the default 15']


def test_unknown_keys_sections_and_an_unreadable_file_are_reported(tmp_path):
    path = _write(tmp_path, "[watcher]\nevry = 3\n[wacher]\nevery = 2\n")
    msgs = [str(p) for p in C.load_checked(path, environ={}).problems]
    assert any("unknown setting watcher.evry ignored (known: enabled, every," in m for m in msgs)
    assert any("unknown section [wacher] ignored" in m for m in msgs)
    path = _write(tmp_path, "[watcher\nevery = = 3\n")
    loaded = C.load_checked(path, environ={"LEDGER_ESCALATE_AFTER": "3"})
    assert loaded.values["watcher"]["escalate_after"] == 3  # valid overrides still apply
    assert len(loaded.problems) == 1 and "every setting from the file is ignored" in str(loaded.problems[0])


def test_load_raises_without_an_errors_list_and_collects_with_one(tmp_path):
    path = _write(tmp_path, '[watcher]\nmax_facts = "many"\n')
    with pytest.raises(ValueError, match="watcher.max_facts"):
        C.load(path)
    errors: list[str] = []
    assert C.load(path, errors=errors)["watcher"]["max_facts"] == 8
    assert len(errors) == 1


# ---------------------------------------------------------------------------- the hook


@pytest.fixture
def store_with_fact(tmp_path, store_target):
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "data.bin").write_bytes(b"\x00\x01binary")
    db = store_target
    with Ledger.open(db) as led:
        led.remember("data.bin is a little-endian uint16 array", cluster="code", agent="alice",
                     files=[file_key(proj / "data.bin")])
    return db, proj


def test_a_bad_value_costs_the_hook_one_log_line_not_every_call(store_with_fact, _isolated_home):
    db, proj = store_with_fact
    home = Path(_isolated_home)
    (home / "config.toml").write_text('[watcher]\nevery = "abc"\nescalate_after = 2\ndeny_on_escalation = "false"\n'
                                      '[llm]\nbackend = "command"\ncommand = "true"\n')
    for i in range(3):  # PostToolUse used to fail on every call (int("abc") in the engine)
        p = run_hook("PostToolUse", post_bash(f"ls {i}", stdout="x", cwd=proj), env={"LEDGER_DB": db})
        assert p.returncode == 0 and p.stdout == b"" and p.stderr == b""
    lines = (home / "hook.log").read_text().splitlines()
    # Logged once for this version of the file, not once per hook call.
    assert len(lines) == 1 and 'config ignored' in lines[0] and 'watcher.every = "abc"' in lines[0], lines
    # An edit that is still bad is logged again (once); a new bad value from the
    # environment too.
    (home / "config.toml").write_text('[watcher]\nevery = "xyz"\nescalate_after = 2\ndeny_on_escalation = "false"\n'
                                      '[llm]\nbackend = "command"\ncommand = "true"\n')
    for i in range(2):
        run_hook("PostToolUse", post_bash(f"ls again {i}", stdout="x", cwd=proj), env={"LEDGER_DB": db})
    run_hook("PostToolUse", post_bash("ls env", stdout="x", cwd=proj), env={"LEDGER_DB": db, "LEDGER_ESCALATE_AFTER": "q"})
    lines = (home / "hook.log").read_text().splitlines()
    assert len(lines) == 4 and 'watcher.every = "xyz"' in lines[1], lines
    assert any("LEDGER_ESCALATE_AFTER" in x for x in lines[2:]), lines
    # the steps were observed: the bad setting did not stop the engine
    spool_settled(db)
    assert store_sql(db, "SELECT steps FROM watch_sessions") == [(6,)]
    # escalate_after = 2 applies (the second injecting step escalates); deny_on_escalation = "false" does not deny
    run_hook("PreToolUse", pre_read(proj / "data.bin", cwd=proj), env={"LEDGER_DB": db})
    run_hook("PostToolUse", post_bash("ls", stdout="x", cwd=proj), env={"LEDGER_DB": db})
    p = run_hook("PreToolUse", pre_read(proj / "data.bin", cwd=proj), env={"LEDGER_DB": db})
    out = json.loads(p.stdout)
    assert "LEDGER ESCALATION" in context_of(p.stdout.decode())
    assert "permissionDecision" not in out["hookSpecificOutput"]


# ---------------------------------------------------------------------------- the CLI


def _ok(rc, out, err):
    assert rc == 0, err
    return out


def test_config_list_shows_every_setting_and_exits_1_naming_a_bad_value(cli, _isolated_home):
    out = _ok(*cli("config", "list", db=None))
    assert all(s.key in out for s in C.SETTINGS) and "not created yet" in out
    data = json.loads(_ok(*cli("config", "--json", db=None)))
    assert [r["key"] for r in data["settings"]] == [s.key for s in C.SETTINGS] and data["problems"] == []
    (Path(_isolated_home) / "config.toml").write_text('[watcher]\nevery = "abc"\n')
    rc, out, err = cli("config", "list", db=None)
    assert rc == 1 and 'watcher.every = "abc": expected an integer; using the default 15' in err
    rc, out, err = cli("config", "list", "--json", db=None)
    assert rc == 1 and json.loads(out)["problems"][0]["key"] == "watcher.every"


def test_config_get(cli, _isolated_home):
    assert _ok(*cli("config", "get", "watcher.every", db=None)) == "15\n"
    assert json.loads(_ok(*cli("config", "get", "llm.backend", "--json", db=None)))["value"] == "none"
    rc, out, err = cli("config", "get", "watcher.evry", db=None)
    assert rc == 1 and 'Unknown setting "watcher.evry". Did you mean "watcher.every"?' in err
    (Path(_isolated_home) / "config.toml").write_text('[watcher]\nmax_facts = true\n')
    rc, out, err = cli("config", "get", "watcher.max_facts", db=None)
    assert rc == 1 and out == "8\n" and "not a boolean" in err
    assert _ok(*cli("config", "get", "watcher.every", db=None)) == "15\n"  # other settings are fine


def test_config_set_validates_first_and_keeps_the_rest_of_the_file(cli, _isolated_home):
    conf = Path(_isolated_home) / "config.toml"
    original = '# mine\n[watcher]\nevery = 9   # keep this comment\n\n[llm]\nmodel = "m1"\n'
    conf.write_text(original)
    for bad, says in ((("watcher.every", "abc"), "expected an integer"), (("watcher.every", "0"), "at least 1"),
                      (("llm.backend", "gpt"), "expected one of"), (("watcher.nope", "1"), "Unknown setting")):
        rc, out, err = cli("config", "set", *bad, db=None)
        assert rc == 1 and says in err, (bad, err)
        assert conf.read_text() == original  # nothing written
    r = json.loads(_ok(*cli("config", "set", "watcher.deny_on_escalation", "yes", "--json", db=None)))
    assert r["value"] is True and r["overriddenBy"] is None
    _ok(*cli("config", "set", "llm.backend", "Command", db=None))
    _ok(*cli("config", "set", "watcher.every", "20", db=None))
    text = conf.read_text()
    assert text.startswith("# mine\n[watcher]\nevery = 20   # keep this comment\n")
    assert 'model = "m1"' in text and 'backend = "command"' in text and "deny_on_escalation = true" in text
    loaded = C.load_checked(str(conf), environ={})
    assert loaded.problems == [] and loaded.values["watcher"]["every"] == 20


def test_config_set_creates_the_file_warns_about_an_override_and_refuses_a_broken_file(cli, _isolated_home):
    conf = Path(_isolated_home) / "config.toml"
    rc, out, err = cli("config", "set", "watcher.every", "3", db=None, env={"LEDGER_DISTILL_EVERY": "5"})
    assert rc == 0 and "$LEDGER_DISTILL_EVERY is set and overrides it" in err
    assert conf.read_text() == "[watcher]\nevery = 3\n"
    conf.write_text("[watcher\nevery = = 3\n")
    rc, out, err = cli("config", "set", "watcher.every", "4", db=None)
    assert rc == 1 and "is not valid TOML" in err and "Nothing was changed" in err
    assert conf.read_text() == "[watcher\nevery = = 3\n"
