"""Fresh-user defects of the PostgreSQL team setup (issue 20), through real ``ledger``
processes: a store URL stays a URL wherever a store location is written down (hooks of
every harness, MCP client entries), doctor works on a PostgreSQL store, an unknown URL
scheme is refused instead of becoming a folder, and a password is never printed."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import Cli
from fakes.hooks import pre_read


def _files_text(root: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in root.rglob("*") if p.is_file())


@pytest.mark.parametrize("how", ["env", "flag"])
@pytest.mark.parametrize("harness", ["claude-code", "codex"])
def test_install_writes_the_store_url_as_a_url(pg_url, project, tmp_path, harness, how):
    cli = Cli(pg_url)
    env = {"HOME": str(tmp_path / "h"), "CODEX_HOME": str(tmp_path / "h" / ".codex")}
    args = ["install", harness, "--dir", project, "--no-distill"]
    if how == "env":
        env["LEDGER_DB"] = pg_url
    else:
        args += ["--db", pg_url]
    rc, out, err = cli(*args, db=None, env=env, input="")
    assert rc == 0, err
    written = _files_text(project) + _files_text(tmp_path / "h") if (tmp_path / "h").exists() else _files_text(project)
    assert pg_url in written, written
    assert "postgresql:/ledger" not in written and str(project) + "/postgresql" not in written
    assert not any(p.name.startswith("postgres") for p in project.rglob("*"))


def test_the_claude_code_hook_reaches_the_shared_store(pg_url, project, tmp_path):
    cli = Cli(pg_url)
    rc, out, err = cli("install", "claude-code", "--dir", project, "--no-distill", db=None, env={"LEDGER_DB": pg_url})
    assert rc == 0, err
    data = json.loads((project / ".claude" / "settings.local.json").read_text())
    cmd = data["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    assert pg_url in cmd
    p = subprocess.run(["bash", "-c", cmd], input=json.dumps(pre_read(project / "x.py", cwd=project)).encode(),
                       capture_output=True, cwd=project,
                       env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "cc"), "LEDGER_HOME": str(tmp_path / "lh")})
    assert p.returncode == 0, p.stderr
    assert not (project / "postgresql:").exists() and not (tmp_path / "cc" / ".ledger" / "ledger.db").exists()
    log = tmp_path / "lh" / "hook.log"
    assert not log.exists() or "Unavailable" not in log.read_text(), log.read_text()
    rc, out, err = cli("stats", "--json")  # the hook opened (and migrated) the shared store
    assert rc == 0, err


def test_mcp_print_keeps_the_store_url(pg_url, project, tmp_path):
    rc, out, err = Cli(pg_url)("install", "mcp", "--client", "cursor", "--print", "--dir", project, db=None,
                               env={"LEDGER_DB": pg_url})
    assert rc == 0, err
    assert pg_url in out and "postgresql:/ledger" not in out


def test_doctor_checks_a_postgresql_store(pg_url, project, tmp_path):
    cli = Cli(pg_url)
    rc, out, err = cli("doctor", "--dir", project, "--json")
    assert "Traceback" not in err, err
    store = next(c for c in json.loads(out)["checks"] if c["name"] == "store")
    assert store["status"] == "ok" and "first use" in store["detail"], store
    assert cli("stats")[0] == 0
    rc, out, err = cli("doctor", "--dir", project, "--json")
    store = next(c for c in json.loads(out)["checks"] if c["name"] == "store")
    assert store["status"] == "ok" and "migrations current" in store["detail"], store


def test_doctor_names_an_unreachable_postgresql_store(project):
    cli = Cli("postgresql://nobody:secret@127.0.0.1:1/none")
    rc, out, err = cli("doctor", "--dir", project, "--json")
    assert "Traceback" not in err, err
    store = next(c for c in json.loads(out)["checks"] if c["name"] == "store")
    assert store["status"] == "fail" and "secret" not in out, store


@pytest.mark.parametrize("target", ["mysql://x@y/z", "https://example.com/db", "file:///tmp/x.db"])
@pytest.mark.parametrize("how", ["env", "flag"])
def test_an_unknown_url_scheme_is_refused_and_creates_nothing(tmp_path, target, how):
    env = {"LEDGER_HOME": str(tmp_path / "home")}
    if how == "env":
        env["LEDGER_DB"] = target
    rc, out, err = _run(tmp_path, target, how, env)
    assert rc != 0 and "Traceback" not in err, err
    assert "postgresql://" in err and target.split("://")[0] in err, err
    assert sorted(os.listdir(tmp_path)) == [], os.listdir(tmp_path)


def _run(cwd: Path, target: str, how: str, env: dict):
    from fakes.hooks import LEDGER_BIN

    argv = [LEDGER_BIN, "stats"] + (["--db", target] if how == "flag" else [])
    full = {k: v for k, v in os.environ.items() if k != "LEDGER_DB"}
    full.update(env)
    p = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, env=full, timeout=30)
    return p.returncode, p.stdout, p.stderr


def test_install_with_an_unknown_scheme_writes_nothing(project, tmp_path):
    rc, out, err = Cli("x")("install", "claude-code", "--dir", project, "--db", "mysql://x@y/z", db=None)
    assert rc != 0 and "mysql://" in err
    assert list(project.iterdir()) == []


def test_config_never_prints_the_password(tmp_path):
    home = tmp_path / "home"
    url = "postgresql://team:s3cret@127.0.0.1:5432/ledger"
    env = {"LEDGER_HOME": str(home), "LEDGER_DB": None}
    cli = Cli(url)
    assert cli("config", "set", "store.db", url, db=None, env=env)[0] == 0
    for argv in (["config", "list"], ["config", "list", "--json"], ["config", "get", "store.db"],
                 ["config", "get", "store.db", "--json"], ["config", "set", "store.db", url]):
        rc, out, err = cli(*argv, db=None, env=env)
        assert rc == 0, err
        assert "s3cret" not in out + err and "team:***@127.0.0.1" in out, (argv, out)
    rc, out, err = cli("config", "list", db=None, env={"LEDGER_HOME": str(home), "LEDGER_DB": url})
    assert "s3cret" not in out + err and "team:***@" in out
    assert "s3cret" in (home / "config.toml").read_text()  # the file keeps it: hooks need it


def test_a_schema_of_another_program_is_a_setup_error_not_a_bug(pg_url):
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as c:
        c.execute("CREATE TABLE invoices (id int)")
    rc, out, err = Cli(pg_url)("stats")
    assert rc != 0 and "another program's tables" in err, err
    assert "report" not in err.lower() and "bug" not in err.lower(), err


@pytest.mark.parametrize("target,shown", [("postgresql://team:s3cret@127.0.0.1:1/db", "team:***@127.0.0.1"),
                                          ("mysql://x@y/z", "mysql://")])
def test_help_names_the_store_without_its_password_and_survives_a_bad_one(tmp_path, target, shown):
    rc, out, err = _help(tmp_path, target)
    assert rc == 0 and "Traceback" not in err, err
    assert "Store: " in out and shown in out and "s3cret" not in out
    assert sorted(os.listdir(tmp_path)) == []


def _help(cwd: Path, target: str):
    from fakes.hooks import LEDGER_BIN

    env = {**os.environ, "LEDGER_DB": target, "LEDGER_HOME": str(cwd / "h")}
    p = subprocess.run([LEDGER_BIN, "--help"], capture_output=True, text=True, cwd=cwd, env=env, timeout=30)
    return p.returncode, p.stdout, p.stderr


def test_opencode_install_says_its_plugin_takes_the_store_from_opencodes_environment(pg_url, project, tmp_path):
    rc, out, err = Cli(pg_url)("install", "opencode", "--dir", project, "--no-distill", db=None,
                               env={"LEDGER_DB": pg_url, "HOME": str(tmp_path / "h")})
    assert rc == 0, err
    assert "only when OpenCode starts with LEDGER_DB set" in out and "ledger config set store.db" in out


def test_config_set_refuses_a_store_ledger_cannot_open(tmp_path):
    home = tmp_path / "home"
    rc, out, err = Cli("x")("config", "set", "store.db", "mysql://team:pw@db/ledger", db=None,
                            env={"LEDGER_HOME": str(home), "LEDGER_DB": None})
    assert rc != 0 and "mysql://" in err and "postgresql://" in err and "pw@" not in err, err
    assert not (home / "config.toml").exists()
