"""``ledger install codex`` / ``uninstall codex`` through the real command: ledger's hooks
merged into Codex's ``hooks.json`` (project or ``--user``), exactly ours removed, the
trust note, ``ledger doctor`` reading Codex's trust state (never writing it), and
distillation through ``codex exec`` with hooks off for that call."""

from __future__ import annotations

import json
import shlex
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from ledger.harness import codex_install as CI
from ledger.watcher import config as config_mod
from ledger.watcher.llm import complete


@pytest.fixture
def codex_home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "codex-home"
    monkeypatch.setenv("CODEX_HOME", str(home))
    return home


@pytest.fixture
def proj(tmp_path) -> Path:
    p = tmp_path / "proj"
    (p / "sub").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(p)], check=True)
    return p


USER_HOOKS = {"hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/local/bin/guard.sh", "timeout": 5}]}],
    "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
}, "description": "my hooks"}


def ours(path: Path) -> list[tuple[str, str]]:
    data = json.loads(path.read_text())
    return [(ev, h["command"]) for ev, groups in data["hooks"].items() for g in groups for h in g["hooks"]
            if " hook codex " in h["command"]]


def test_project_install_merges_and_uninstall_removes_exactly_ours(cli, proj, codex_home):
    path = proj / ".codex" / "hooks.json"
    path.parent.mkdir()
    path.write_text(json.dumps(USER_HOOKS, indent=4) + "\n")
    rc, out, err = cli("install", "codex", "--dir", proj / "sub", "--no-distill", db=None)
    assert rc == 0, err
    assert sorted(e for e, _ in ours(path)) == sorted(CI.CODEX_EVENTS)
    data = json.loads(path.read_text())
    assert data["description"] == "my hooks" and data["hooks"]["PreToolUse"][0] == USER_HOOKS["hooks"]["PreToolUse"][0]
    assert data["hooks"]["PreToolUse"][1]["matcher"] == "Bash|apply_patch"
    assert data["hooks"]["SessionEnd"][0]["hooks"][0]["timeout"] == 3  # Codex clamps SessionEnd to 3 s
    assert path.read_text().startswith('{\n    "hooks"')  # the user's indentation is kept
    assert f"hooks for SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop, PreCompact, SessionEnd in {path}" in out
    assert CI.TRUST_HINT in out and "/hooks" in out and CI.PROJECT_TRUST_HINT in out
    prompt = Path(next(l for l in out.splitlines() if "Compaction prompt" in l).split(": ", 1)[1].split(";")[0])
    assert prompt.read_text() == CI.COMPACT_PROMPT and f'experimental_compact_prompt_file = "{prompt}"' in out
    assert "/.codex/hooks.json" in (proj / ".git" / "info" / "exclude").read_text()
    # Twice changes nothing.
    before = path.read_text()
    cli("install", "codex", "--dir", proj, "--no-distill", db=None)
    assert path.read_text() == before
    rc, out, _ = cli("uninstall", "codex", "--dir", proj, db=None)
    assert rc == 0 and f"removed 7 ledger hooks from {path}" in out
    assert json.loads(path.read_text()) == USER_HOOKS


def test_install_registers_the_mcp_server_next_to_the_users_and_uninstall_takes_only_ours(cli, proj, codex_home):
    import tomllib

    config = proj / ".codex" / "config.toml"
    config.parent.mkdir()
    mine = '# my servers\n[mcp_servers.docs]\ncommand = "docs-server"\nargs = ["--port", "0"]\n'
    config.write_text(mine)
    rc, out, err = cli("install", "codex", "--dir", proj, "--no-distill", db=None)
    assert rc == 0, err
    assert f"✓ MCP server `ledger mcp` in {config} ([mcp_servers.ledger])" in out
    servers = tomllib.loads(config.read_text())["mcp_servers"]
    assert servers["docs"] == {"command": "docs-server", "args": ["--port", "0"]}
    assert servers["ledger"]["args"] == ["mcp"] and servers["ledger"]["command"].endswith("ledger")
    rc, out, _ = cli("uninstall", "codex", "--dir", proj, db=None)
    assert f"removed ledger's MCP server from {config}" in out
    assert config.read_text().rstrip("\n") == mine.rstrip("\n")  # tomlkit may leave a blank line


@pytest.mark.parametrize("text,needle", [
    ('[mcp_servers.ledger]\ncommand = "something-else"\n', "ledger"),
])
def test_an_mcp_entry_install_cannot_take_is_reported_and_the_hooks_still_go_in(cli, proj, codex_home, text, needle):
    # Another program's "ledger" entry is a decision to respect, not a broken file: the
    # hooks go in without the MCP entry. A config.toml that is not TOML changes nothing
    # at all (tests/test_install_all_or_nothing.py).
    config = proj / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(text)
    rc, out, err = cli("install", "codex", "--dir", proj, "--no-distill", db=None)
    assert rc == 0, err
    line = next(l for l in out.splitlines() if "MCP server not registered" in l)
    assert needle in line and config.read_text() == text
    assert len(ours(proj / ".codex" / "hooks.json")) == 7
    rc, out, _ = cli("uninstall", "codex", "--dir", proj, db=None)
    assert config.read_text() == text and "removed 7 ledger hooks" in out


def test_user_install_goes_to_codex_home_and_a_file_of_only_ours_is_deleted(cli, proj, codex_home):
    rc, out, err = cli("install", "codex", "--user", "--no-distill", "--json", db=None)
    assert rc == 0, err
    r = json.loads(out)
    assert r["path"] == str(codex_home / "hooks.json") and r["trust"]["untrusted"] == 7
    assert r["mcp"]["path"] == str(codex_home / "config.toml")
    rc, out, _ = cli("uninstall", "codex", "--user", db=None)
    assert "deleted" in out and not (codex_home / "hooks.json").exists() and not codex_home.exists()
    rc, out, _ = cli("uninstall", "codex", "--user", db=None)
    assert out.strip() == "no ledger hooks installed for codex for this user (nothing removed)"


@pytest.mark.parametrize("text,needle", [
    ("{not json", "is not valid JSON"),
    ('{"hooks": []}', '"hooks" is not an object'),
    ('{"hooks": {"Stop": {"command": "x"}}}', "hooks.Stop is not a list"),
])
def test_a_malformed_hooks_file_is_refused_and_left_alone(cli, proj, codex_home, text, needle):
    path = proj / ".codex" / "hooks.json"
    path.parent.mkdir()
    path.write_text(text)
    rc, out, err = cli("install", "codex", "--dir", proj, "--no-distill", db=None)
    assert rc != 0 and needle in err and path.read_text() == text



@pytest.mark.parametrize("harness, rel", [("codex", ".codex/hooks.json"), ("claude-code", ".claude/settings.local.json")])
def test_a_hooks_file_that_cannot_be_written_is_named_and_left_alone(cli, proj, codex_home, harness, rel):
    # It said only "Cannot write: Is a directory." (no file, nothing to do) and could
    # leave its temporary file in the user's folder.
    path = proj / rel
    path.parent.mkdir()
    path.write_text('{"hooks": {}}\n')
    blocker = path.parent / f".{path.name}.ledger-tmp"  # filetx.write_text's temporary file
    blocker.mkdir()  # our temporary file's name is taken: the write fails, as on a read-only folder
    rc, out, err = cli("install", harness, "--dir", proj, "--no-distill", db=None)
    assert rc == 1 and f"Cannot write {path}" in err and "nothing was changed" in err, (out, err)
    assert "Traceback" not in err and path.read_text() == '{"hooks": {}}\n'



@pytest.mark.parametrize("harness, rel", [("codex", ".codex/hooks.json"), ("claude-code", ".claude/settings.local.json")])
@pytest.mark.parametrize("what", ["latin-1", "folder"])
def test_a_hooks_file_that_cannot_be_read_is_named_not_a_traceback(cli, proj, codex_home, harness, rel, what):
    # Not UTF-8 was a UnicodeDecodeError traceback; a folder "Cannot write: Is a directory."
    path = proj / rel
    if what == "folder":
        path.mkdir(parents=True)
    else:
        path.parent.mkdir()
        path.write_bytes(b'{"hooks": {}, "note": "caf\xe9"}')
    for verb in ("install", "uninstall"):
        rc, out, err = cli(verb, harness, "--dir", proj, "--no-distill" if verb == "install" else "--project", db=None)
        assert rc == 1 and f"Cannot read {path}" in err and "Traceback" not in err, (verb, out, err)
        assert "run this again" in err and "Nothing was changed" in err
    assert path.is_dir() if what == "folder" else path.read_bytes() == b'{"hooks": {}, "note": "caf\xe9"}'


def test_the_store_is_written_into_the_hook_command(cli, proj, codex_home, store_target):
    db = store_target
    cli("install", "codex", "--dir", proj, "--no-distill", db=db)
    assert all(cmd.startswith(f"LEDGER_DB={shlex.quote(str(db))} ") for _, cmd in ours(proj / ".codex" / "hooks.json"))


# --------------------------------------------------------------------------- trust


def trust(config: Path, hooks: list[dict], *, skip=(), change=(), project: Path | None = None) -> None:
    """Write Codex's trust state the way Codex does when the user trusts hooks in /hooks
    (and ``project`` at its first-run prompt); the test plays the user, ledger itself
    never writes this."""
    lines = [f'[projects."{project}"]\ntrust_level = "trusted"\n'] if project else []
    for h in hooks:
        if h["event"] in skip:
            continue
        value = "sha256:" + "0" * 64 if h["event"] in change else h["hash"]
        lines.append(f'[hooks.state."{h["key"]}"]\ntrusted_hash = "{value}"\n')
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('model = "gpt-5.5"\n\n' + "\n".join(lines))


def test_trust_status_reads_codex_state(proj, codex_home):
    r = CI.install_codex("project", str(proj), command="/opt/ledger/bin/ledger")
    path = Path(r["path"])
    assert r["trust"]["untrusted"] == 7 and r["trust"]["trusted"] == 0
    hooks = CI.our_hooks(path)
    assert hooks[0]["key"] == f"{path}:session_start:0:0" and hooks[0]["hash"].startswith("sha256:")
    trust(codex_home / "config.toml", hooks, skip={"Stop"}, change={"PreCompact"})
    t = CI.trust_status(path)
    assert (t["trusted"], t["untrusted"], t["modified"]) == (5, 1, 1) and t["events_untrusted"] == ["Stop", "PreCompact"]
    before = (codex_home / "config.toml").read_text()
    CI.install_codex("project", str(proj), command="/opt/ledger/bin/ledger")  # the same hooks: still trusted
    assert CI.trust_status(path)["trusted"] == 5
    CI.install_codex("project", str(proj), command="/new/venv/bin/ledger")  # another command: changed
    assert CI.trust_status(path)["modified"] == 6
    assert (codex_home / "config.toml").read_text() == before  # never written by ledger


@pytest.mark.parametrize("projects,expected", [
    ('[projects."ROOT"]\ntrust_level = "trusted"\n', True),
    ('[projects."PARENT"]\ntrust_level = "trusted"\n', True),
    ('[projects."PARENT"]\ntrust_level = "trusted"\n[projects."ROOT"]\ntrust_level = "untrusted"\n', False),
    ('[projects."/elsewhere"]\ntrust_level = "trusted"\n', False),
    ("", False),
    ("[projects\n", None),
])
def test_project_trust_is_read_from_codex_config(proj, codex_home, projects, expected):
    codex_home.mkdir()
    (codex_home / "config.toml").write_text(projects.replace("ROOT", str(proj)).replace("PARENT", str(proj.parent)))
    assert CI.project_trusted(proj) is expected


@pytest.mark.parametrize("handler,matcher,event", [
    ({"type": "command", "command": "a"}, None, "Stop"),
    ({"type": "command", "command": "a", "timeout": 10}, "Bash", "PreToolUse"),
    ({"type": "command", "command": "a", "timeout": 10, "statusMessage": "x"}, None, "SessionStart"),
])
def test_the_trust_hash_depends_on_what_codex_hashes_only(handler, matcher, event):
    h = CI.trust_hash(event, handler, matcher)
    assert h == CI.trust_hash(event, dict(reversed(list(handler.items()))), matcher)  # key order
    assert h != CI.trust_hash(event, {**handler, "command": "b"}, matcher)
    # Stop ignores matchers, so a matcher there changes nothing; PreToolUse's does.
    assert (CI.trust_hash(event, handler, "Other") == h) == (event not in ("PreToolUse", "SessionStart"))


def test_doctor_says_whether_codex_trusts_ledgers_hooks(cli, proj, codex_home, tmp_path):
    env = {"HOME": str(tmp_path)}
    rc, out, err = cli("doctor", "--dir", proj, "--json", env=env)
    checks = {c["name"]: c for c in json.loads(out)["checks"]}
    assert checks["codex hooks"]["status"] == "skip"
    cli("install", "codex", "--dir", proj, "--no-distill", db=None, env=env)
    rc, out, err = cli("doctor", "--dir", proj, "--json", env=env)
    c = {c["name"]: c for c in json.loads(out)["checks"]}["codex hooks"]
    assert c["status"] == "warn" and "does not trust this project" in c["detail"] and "--trust" in c["fix"]
    (codex_home / "config.toml").parent.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(f'[projects."{tmp_path}"]\ntrust_level = "trusted"\n')  # a folder above
    c = {c["name"]: c for c in json.loads(cli("doctor", "--dir", proj, "--json", env=env)[1])["checks"]}["codex hooks"]
    assert c["status"] == "warn" and "7 of 7 hooks not trusted yet" in c["detail"] and "/hooks" in c["fix"]
    trust(codex_home / "config.toml", CI.our_hooks(proj / ".codex" / "hooks.json"), skip={"PreToolUse"}, project=proj)
    c = {c["name"]: c for c in json.loads(cli("doctor", "--dir", proj, "--json", env=env)[1])["checks"]}["codex hooks"]
    assert c["status"] == "warn" and "1 of 7" in c["detail"] and "PreToolUse" in c["detail"]
    trust(codex_home / "config.toml", CI.our_hooks(proj / ".codex" / "hooks.json"), project=proj)
    rc, text, _ = cli("doctor", "--dir", proj, env=env)
    assert "✓ codex hooks" in text and "trusted" in text



def test_doctor_does_not_send_a_codex_user_to_claude_code_and_flags_hooks_that_run_twice(cli, proj, codex_home, tmp_path):
    # A Codex-only user was told "! claude-code hooks not installed  fix: ledger install
    # claude-code"; and hooks in both the project's and the user's hooks.json (Codex runs
    # every file's) passed as fine.
    env = {"HOME": str(tmp_path)}
    checks = {c["name"]: c for c in json.loads(cli("doctor", "--dir", proj, "--json", env=env)[1])["checks"]}
    assert checks["claude-code hooks"]["status"] == "warn"  # nothing installed at all: still says what to do
    cli("install", "codex", "--dir", proj, "--no-distill", db=None, env=env)
    rc, out, _ = cli("doctor", "--dir", proj, "--json", env=env)
    checks = {c["name"]: c for c in json.loads(out)["checks"]}
    assert checks["claude-code hooks"]["status"] == "skip" and "if you use Claude Code" in checks["claude-code hooks"]["detail"]
    assert "ledger uninstall codex && ledger install codex --user" in checks["codex hooks"]["fix"]
    cli("install", "codex", "--user", "--no-distill", db=None, env=env)
    trust(codex_home / "config.toml", CI.our_hooks(proj / ".codex" / "hooks.json")
          + CI.our_hooks(codex_home / "hooks.json"), project=proj)
    rc, text, _ = cli("doctor", "--dir", proj, env=env)
    assert "! codex hooks" in text and "every hook runs twice" in text and "ledger uninstall codex --user" in text, text
    cli("uninstall", "codex", "--user", db=None, env=env)
    trust(codex_home / "config.toml", CI.our_hooks(proj / ".codex" / "hooks.json"), project=proj)
    rc, text, _ = cli("doctor", "--dir", proj, env=env)
    assert "✓ codex hooks" in text and "twice" not in text and "claude-code hooks" in text


def test_install_mcp_for_codex_names_project_trust_only_for_a_project(tmp_path):
    import os

    from conftest import LEDGER_BIN

    env = {**os.environ, "HOME": str(tmp_path / "home"), "CODEX_HOME": str(tmp_path / "codex-home"), "NO_COLOR": "1"}
    (tmp_path / "proj" / ".git").mkdir(parents=True)
    user = subprocess.run([LEDGER_BIN, "install", "mcp", "--client", "codex", "--user"],
                          capture_output=True, text=True, env=env, cwd=tmp_path / "proj", timeout=60)
    project = subprocess.run([LEDGER_BIN, "install", "mcp", "--client", "codex"],
                             capture_output=True, text=True, env=env, cwd=tmp_path / "proj", timeout=60)
    assert user.returncode == 0 and project.returncode == 0, (user.stderr, project.stderr)
    assert "trust" not in user.stdout, user.stdout
    assert "only once you trust the project" in project.stdout, project.stdout


# --------------------------------------------------------------------------- distillation


FAKE_CODEX = """#!{python}
import json, os, sys
args = sys.argv[1:]
prompt = sys.stdin.read()
ok = (args[:1] == ["exec"] and "--disable" in args and args[args.index("--disable") + 1] == "hooks"
      and "--ephemeral" in args and args[-1] == "-" and os.environ.get("LEDGER_HOOKS_DISABLED") == "1"
      and "Respond only with a JSON array" in prompt and "OBSERVATIONS" in prompt)
sys.stderr.write("OpenAI Codex (progress goes to stderr)\\n")
print(json.dumps([{{"fact": "called correctly" if ok else "called wrongly: " + " ".join(args), "topic": "t", "files": []}}]))
"""


@pytest.fixture
def fake_codex(tmp_path) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "codex"
    exe.write_text(FAKE_CODEX.format(python=sys.executable))
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return bin_dir


def test_install_turns_distillation_on_through_codex_exec(cli, proj, codex_home, fake_codex, _isolated_home, monkeypatch):
    env = {"PATH": f"{fake_codex}:/usr/bin:/bin"}
    rc, out, err = cli("install", "codex", "--dir", proj, db=None, env=env)
    assert rc == 0, err
    assert ("  Distillation on: through `codex exec` (hooks disabled for that call), daily budget 200,000 tokens; "
            "`ledger install codex --no-distill` turns it off.") in out.splitlines()
    cfg = config_mod.load(str(Path(_isolated_home) / "config.toml"))
    assert cfg["llm"]["backend"] == "codex"
    monkeypatch.setenv("PATH", env["PATH"])
    c = complete("OBSERVATIONS: cat notes.txt -> 42", cfg["llm"])
    assert json.loads(c.text)[0]["fact"] == "called correctly"
    rc, out, _ = cli("uninstall", "codex", "--dir", proj, db=None, env=env)
    assert 'Distillation off: removed the [llm] backend "codex"' in out
    assert config_mod.load(str(Path(_isolated_home) / "config.toml"))["llm"]["backend"] == "none"


def test_without_codex_on_path_distillation_stays_off(cli, proj, codex_home):
    rc, out, err = cli("install", "codex", "--dir", proj, db=None, env={"PATH": "/usr/bin:/bin"})
    assert rc == 0 and "Distillation off: `codex` is not on PATH" in out


def test_the_codex_backend_takes_a_model_and_reports_a_failing_codex(tmp_path, monkeypatch):
    from ledger.watcher.llm import LLMError, codex_argv

    assert codex_argv({"model": "gpt-5.5"})[:3] == ["codex", "-m", "gpt-5.5"]
    assert codex_argv({"command": "/opt/codex --profile fast"})[:3] == ["/opt/codex", "--profile", "fast"]
    bad = tmp_path / "codex"
    bad.write_text("#!/bin/sh\necho 'not logged in' >&2\nexit 1\n")
    bad.chmod(0o755)
    with pytest.raises(LLMError, match="exited 1: not logged in"):
        complete("p", {"backend": "codex", "command": str(bad)})
    with pytest.raises(LLMError, match="not found on PATH"):
        complete("p", {"backend": "codex", "command": str(tmp_path / "missing")})
