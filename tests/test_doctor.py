"""``ledger doctor`` through the real command: what it finds on a good installation and
on each kind of broken one, in words and with ``--json``."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from conftest import store_exists, store_sql
from fakes.llm_server import ModelServer


def doctor(cli, project, *extra, env=None):
    """(rc, {check name: check}, stdout of the plain run)."""
    rc, out, err = cli("doctor", "--dir", project, "--json", *extra, env=env)
    assert "Traceback" not in err, err
    report = json.loads(out)
    rc2, text, _ = cli("doctor", "--dir", project, *extra, env=env)
    assert rc2 == rc
    assert report["ok"] == (rc == 0)
    return rc, {c["name"]: c for c in report["checks"]}, text


def test_a_good_installation(cli, project, tmp_path):
    rc, out, err = cli("install", "claude-code", "--dir", project, db=None, env={"HOME": str(tmp_path)})
    assert rc == 0, err
    cli.create_store()  # a read verb would not create it
    rc, checks, text = doctor(cli, project, env={"HOME": str(tmp_path)})
    assert rc == 0
    assert checks["ledger"]["status"] == "ok"
    assert checks["claude-code hooks"]["status"] == "ok" and "settings.local.json" in checks["claude-code hooks"]["detail"]
    assert checks["store"]["status"] == "ok" and "migrations current" in checks["store"]["detail"]
    assert checks["claude-code round trip"]["status"] == "ok" and "hook round trip" not in checks
    assert checks["llm backend"]["status"] == "warn" and "[llm]" in checks["llm backend"]["fix"]
    assert checks["opencode plugin"]["status"] == "skip" and checks["gemini extension"]["status"] == "skip"
    assert "✓ claude-code round trip" in text and "fix: set [llm]" in text


def test_nothing_installed_says_to_install(cli, project, tmp_path):
    rc, checks, text = doctor(cli, project, env={"HOME": str(tmp_path)})
    assert rc == 0  # warnings only
    assert checks["claude-code hooks"]["status"] == "warn"
    assert checks["claude-code hooks"]["fix"] == "ledger install claude-code"
    assert "fix: ledger install claude-code" in text


def test_hooks_pointing_at_a_gone_virtualenv_fail(cli, project, tmp_path):
    settings = project / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": "/old/venv/bin/ledger hook claude-code Stop"}]}]}}))
    rc, checks, text = doctor(cli, project, env={"HOME": str(tmp_path)})
    assert rc == 1
    c = checks["claude-code hooks"]
    assert c["status"] == "fail" and "/old/venv/bin/ledger" in c["detail"] and "ledger install claude-code" in c["fix"]
    assert "✕ claude-code hooks" in text


def test_hooks_in_two_files_run_twice(cli, project, tmp_path):
    cli("install", "claude-code", "--dir", project, db=None, env={"HOME": str(tmp_path)})
    cli("install", "claude-code", "--user", db=None, env={"HOME": str(tmp_path)})
    rc, checks, _ = doctor(cli, project, env={"HOME": str(tmp_path)})
    assert checks["claude-code hooks"]["status"] == "warn" and "twice" in checks["claude-code hooks"]["detail"]


@pytest.mark.sqlite_only  # a file that is not a SQLite database
def test_a_store_that_is_not_a_database_fails(cli, project, tmp_path):
    cli.db.parent.mkdir(parents=True, exist_ok=True)
    cli.db.write_bytes(b"this is not sqlite" * 100)
    rc, checks, _ = doctor(cli, project, env={"HOME": str(tmp_path)})
    assert rc == 1 and checks["store"]["status"] == "fail" and str(cli.db) in checks["store"]["detail"]
    # Not a permissions problem: the fix says how to restore or salvage it.
    assert ".recover" in checks["store"]["fix"] and "permissions" not in checks["store"]["fix"], checks["store"]
    assert cli.db.read_bytes() == b"this is not sqlite" * 100


@pytest.mark.sqlite_only  # a store file cut in half
def test_a_truncated_store_says_how_to_salvage_it(cli, project, tmp_path):
    from ledger.service import Ledger

    with Ledger.open(cli.db) as led:
        for i in range(200):
            led.remember(f"Fact {i} about host-{i} and its deploy window", cluster="proc", agent="t")
    size = cli.db.stat().st_size
    with open(cli.db, "r+b") as fh:
        fh.truncate(size // 2)
    rc, checks, _ = doctor(cli, project, env={"HOME": str(tmp_path)})
    assert rc == 1 and checks["store"]["status"] == "fail", checks["store"]
    assert ".recover" in checks["store"]["fix"] and "permissions" not in checks["store"]["fix"], checks["store"]


def test_pending_migrations_are_named_and_the_file_is_left_alone(cli, project, tmp_path):
    cli.create_store()  # a read verb would not
    [(last,)] = store_sql(cli.db, "SELECT name FROM _migrations ORDER BY name DESC LIMIT 1")
    store_sql(cli.db, "DELETE FROM _migrations WHERE name = ?", (last,))
    rc, checks, _ = doctor(cli, project, env={"HOME": str(tmp_path)})
    assert checks["store"]["status"] == "warn" and last in checks["store"]["detail"]
    assert store_sql(cli.db, "SELECT count(*) FROM _migrations WHERE name = ?", (last,)) == [(0,)]


def test_a_new_store_is_not_created_by_doctor(cli, project, tmp_path):
    rc, checks, _ = doctor(cli, project, env={"HOME": str(tmp_path)})
    assert checks["store"]["status"] == "ok" and "created on first use" in checks["store"]["detail"]
    assert not store_exists(cli.db)


def test_llm_backend_reachable_or_not(cli, project, tmp_path):
    with ModelServer() as srv:
        env = {"HOME": str(tmp_path), "LEDGER_LLM_BACKEND": "openai", "LEDGER_LLM_URL": srv.url + "/v1"}
        rc, checks, _ = doctor(cli, project, env=env)
        assert checks["llm backend"]["status"] == "ok" and srv.url in checks["llm backend"]["detail"]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    env = {"HOME": str(tmp_path), "LEDGER_LLM_BACKEND": "openai", "LEDGER_LLM_URL": f"http://127.0.0.1:{closed}/v1"}
    rc, checks, _ = doctor(cli, project, env=env)
    assert rc == 1 and checks["llm backend"]["status"] == "fail" and "cannot reach" in checks["llm backend"]["detail"]
    env = {"HOME": str(tmp_path), "LEDGER_LLM_BACKEND": "command", "LEDGER_LLM_COMMAND": "no-such-llm-cli -p"}
    rc, checks, _ = doctor(cli, project, env=env)
    assert rc == 1 and "no-such-llm-cli" in checks["llm backend"]["detail"]
    # the deterministic distiller needs no LLM at all
    rc, checks, _ = doctor(cli, project, env={"HOME": str(tmp_path), "LEDGER_LLM_BACKEND": "fallback"})
    assert checks["llm backend"]["status"] == "ok" and "no LLM" in checks["llm backend"]["detail"]


def test_hooks_disabled_in_the_environment_is_a_warning(cli, project, tmp_path):
    cli("install", "claude-code", "--dir", project, db=None, env={"HOME": str(tmp_path)})
    rc, checks, _ = doctor(cli, project, env={"HOME": str(tmp_path), "LEDGER_HOOKS_DISABLED": "1"})
    assert checks["claude-code hooks"]["status"] == "warn" and "LEDGER_HOOKS_DISABLED" in checks["claude-code hooks"]["fix"]
    assert checks["claude-code round trip"]["status"] == "ok"  # the pipeline itself works


def test_hooks_disabled_follows_the_boolean_rule(cli, project, tmp_path):
    # LEDGER_HOOKS_DISABLED=0 used to turn every hook off while doctor said all was well.
    cli("install", "claude-code", "--dir", project, db=None, env={"HOME": str(tmp_path)})
    rc, checks, text = doctor(cli, project, env={"HOME": str(tmp_path), "LEDGER_HOOKS_DISABLED": "0"})
    assert checks["claude-code hooks"]["status"] == "ok" and checks["settings"]["status"] == "ok"
    rc, checks, text = doctor(cli, project, env={"HOME": str(tmp_path), "LEDGER_HOOKS_DISABLED": "Yes"})
    hooks = checks["claude-code hooks"]
    assert hooks["status"] == "warn" and "LEDGER_HOOKS_DISABLED=Yes here turns every hook into a no-op" in hooks["detail"]
    rc, checks, text = doctor(cli, project, env={"HOME": str(tmp_path), "LEDGER_HOOKS_DISABLED": "maybe"})
    assert rc == 1 and checks["claude-code hooks"]["status"] == "ok"  # not a boolean: the hooks stay on
    assert checks["settings"]["status"] == "fail"
    assert "$LEDGER_HOOKS_DISABLED: 'maybe' is not a boolean" in checks["settings"]["detail"]


def test_a_bad_setting_fails_the_settings_check_by_name(cli, project, tmp_path, _isolated_home):
    rc, checks, _ = doctor(cli, project, env={"HOME": str(tmp_path)})
    assert checks["settings"]["status"] == "ok"
    (Path(_isolated_home) / "config.toml").write_text('[watcher]\nevery = "abc"\n[llm]\nbackend = "gpt"\n')
    rc, checks, text = doctor(cli, project, env={"HOME": str(tmp_path), "LEDGER_ESCALATE_AFTER": "0"})
    assert rc == 1 and checks["settings"]["status"] == "fail"
    detail = checks["settings"]["detail"]
    assert 'watcher.every = "abc": expected an integer; using the default 15' in detail
    assert 'llm.backend = "gpt": expected one of' in detail
    assert '$LEDGER_ESCALATE_AFTER: watcher.escalate_after = "0": must be at least 1' in detail
    assert "ledger config" in checks["settings"]["fix"]
    assert checks["llm backend"]["status"] == "warn"  # the default backend (none) applies meanwhile


# ---------------------------------------------------------------- every harness, its own path
# Doctor's round trip sent a Claude Code payload through `ledger hook claude-code` whatever
# was installed, and it did not look at Gemini CLI's install at all.

#: Where each harness keeps the command ledger wrote (relative to the test's tmp_path).
CONFIG_OF = {"claude-code": "project/.claude/settings.local.json", "codex": "project/.codex/hooks.json",
             "gemini": "gemini-home/.gemini/extensions/ledger/hooks/hooks.json",
             "opencode": "project/.opencode/plugins/ledger.js"}
INSTALL_CHECK = {"claude-code": "claude-code hooks", "codex": "codex hooks", "gemini": "gemini extension",
                 "opencode": "opencode plugin"}


def _harness_env(tmp_path) -> dict:
    for d in ("codex-home", "gemini-home", "xdg"):
        (tmp_path / d).mkdir(exist_ok=True)
    return {"HOME": str(tmp_path), "CODEX_HOME": str(tmp_path / "codex-home"),
            "GEMINI_CLI_HOME": str(tmp_path / "gemini-home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}


@pytest.mark.parametrize("harness", ["claude-code", "codex", "gemini", "opencode"])
def test_each_installed_harness_is_checked_through_its_own_path(cli, project, tmp_path, harness):
    env = _harness_env(tmp_path)
    rc, out, err = cli("install", harness, "--dir", project, "--no-distill", db=None, env=env)
    assert rc == 0, err
    rc, checks, text = doctor(cli, project, env=env)
    trip = checks[f"{harness} round trip"]
    assert trip["status"] == "ok", trip
    assert ("__serve-session opencode" if harness == "opencode" else f"hook {harness} ") in trip["detail"], trip
    assert [n for n in checks if n.endswith("round trip")] == [f"{harness} round trip"]  # no Claude Code payload
    assert checks[INSTALL_CHECK[harness]]["status"] in ("ok", "warn")  # Codex: "trust this project" is a warning
    if harness != "claude-code":
        assert checks["claude-code hooks"]["status"] == "skip"


@pytest.mark.parametrize("harness", ["claude-code", "codex", "gemini", "opencode"])
def test_a_command_that_answers_but_records_nothing_fails_that_harness_round_trip(cli, project, tmp_path, harness):
    # A ledger that answers --version but whose hook does nothing (an old or broken
    # install) passes every check that only starts it; the round trip through that
    # harness's own command and payload is what catches it.
    env = _harness_env(tmp_path)
    rc, out, err = cli("install", harness, "--dir", project, "--no-distill", db=None, env=env)
    assert rc == 0, err
    shim = tmp_path / "bin" / "ledger"
    shim.parent.mkdir()
    shim.write_text('#!/bin/sh\nif [ "$1" = --version ]; then echo "ledger, version 0.0.1"; fi\nexit 0\n')
    shim.chmod(0o755)
    config = tmp_path / CONFIG_OF[harness]
    from conftest import LEDGER_BIN

    text = config.read_text()
    assert LEDGER_BIN in text
    config.write_text(text.replace(LEDGER_BIN, str(shim)))
    rc, checks, _ = doctor(cli, project, env=env)
    trip = checks[f"{harness} round trip"]
    assert rc == 1 and trip["status"] == "fail" and "recorded no observation" in trip["detail"], trip


def test_a_gemini_extension_that_cannot_load_or_run_fails_with_the_fix(cli, project, tmp_path):
    env = _harness_env(tmp_path)
    assert cli("install", "gemini", "--no-distill", db=None, env=env)[0] == 0
    ext = tmp_path / "gemini-home" / ".gemini" / "extensions" / "ledger"
    hooks = ext / "hooks" / "hooks.json"
    from conftest import LEDGER_BIN

    hooks.write_text(hooks.read_text().replace(LEDGER_BIN, "/old/venv/bin/ledger"))
    rc, checks, text = doctor(cli, project, env=env)
    g = checks["gemini extension"]
    assert rc == 1 and g["status"] == "fail" and "/old/venv/bin/ledger" in g["detail"] and "ledger install gemini" in g["fix"]
    (ext / "gemini-extension.json").write_text("{not json")
    rc, checks, text = doctor(cli, project, env=env)
    g = checks["gemini extension"]
    assert g["status"] == "fail" and "not valid JSON" in g["detail"] and "ledger install gemini" in g["fix"], g
