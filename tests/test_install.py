"""``ledger install claude-code`` / ``ledger uninstall claude-code``: our hooks merged into
Claude Code's settings (docs/harness-contracts.md §A2) without touching anything of the user's."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest
from conftest import store_exists
from fakes.hooks import LEDGER_BIN, pre_read

from ledger.harness.install import CLAUDE_EVENTS

USER_SETTINGS = {
    "permissions": {"allow": ["Bash(npm test)"], "deny": ["Read(.env)"]},
    "env": {"FOO": "bar"},
    "model": "sonnet",
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/guard.sh", "timeout": 5}]}],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send claude"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "say done"},
                            {"type": "command", "command": "/old/venv/bin/ledger hook claude-code Stop"}]}],
    },
}


def settings(project: Path) -> Path:
    """Where a project install writes: the local file Claude Code keeps out of git."""
    return project / ".claude" / "settings.local.json"


def shared(project: Path) -> Path:
    return project / ".claude" / "settings.json"


def ours(data: dict) -> dict[str, list[str]]:
    """Event -> our handler commands."""
    out = {}
    for event, groups in data.get("hooks", {}).items():
        cmds = [h["command"] for g in groups for h in g.get("hooks", []) if " hook claude-code " in f" {h.get('command')} "]
        if cmds:
            out[event] = cmds
    return out


def theirs(data: dict) -> dict:
    """The settings with our handlers (and groups left empty by removing them) taken out."""
    d = json.loads(json.dumps(data))
    for event in list(d.get("hooks", {})):
        groups = []
        for g in d["hooks"][event]:
            g["hooks"] = [h for h in g["hooks"] if " hook claude-code " not in f" {h.get('command')} "]
            if g["hooks"]:
                groups.append(g)
        if groups:
            d["hooks"][event] = groups
        else:
            del d["hooks"][event]
    return d


def test_install_into_a_fresh_project(cli, project):
    rc, out, err = cli("install", "claude-code", "--dir", project, db=None)
    assert rc == 0, err
    assert "✓ hooks for SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, PostToolUseFailure, Stop, PreCompact, SessionEnd" in out
    assert "UserPromptSubmit" in CLAUDE_EVENTS  # the user's prompts feed the session record
    data = json.loads(settings(project).read_text())
    mine = ours(data)
    assert sorted(mine) == sorted(CLAUDE_EVENTS)
    for event, cmds in mine.items():
        assert len(cmds) == 1
        argv = shlex.split(cmds[0])
        # The test's $LEDGER_HOME is set at install time, so the command carries it.
        assert argv[0].startswith("LEDGER_HOME=/")
        argv = argv[1:]
        assert Path(argv[0]).is_absolute() and Path(argv[0]).name == "ledger" and Path(argv[0]).exists()
        assert argv[1:] == ["hook", "claude-code", event]
    groups = {e: g for e, gs in data["hooks"].items() for g in gs}
    assert groups["PreToolUse"]["matcher"] == "Bash|Read|Grep|Glob|Edit|Write|MultiEdit|NotebookEdit"
    assert groups["PostToolUse"]["matcher"] == "*" and groups["PostToolUseFailure"]["matcher"] == "*"
    assert all(h["timeout"] <= 10 for g in groups.values() for h in g["hooks"])


def test_the_installed_command_runs_as_claude_code_would_run_it(cli, project, tmp_path):
    # Installed with no store variable set: the command carries none, Claude Code's own wins.
    cli("install", "claude-code", "--dir", project, db=None, env={"LEDGER_HOME": None, "HOME": str(tmp_path)})
    cmd = ours(json.loads(settings(project).read_text()))["PreToolUse"][0]
    p = subprocess.run(["bash", "-c", cmd], input=json.dumps(pre_read(project / "x.py", cwd=project)).encode(),
                       capture_output=True, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
                                                 "LEDGER_HOME": str(tmp_path / "lh")})
    assert p.returncode == 0 and p.stdout == b"" and p.stderr == b""
    assert (tmp_path / "lh" / "ledger.db").exists() and not (tmp_path / "lh" / "hook.log").exists()


def test_install_merges_with_the_users_settings_and_hooks(cli, project):
    settings(project).parent.mkdir()
    settings(project).write_text(json.dumps(USER_SETTINGS, indent=4))
    rc, out, err = cli("install", "claude-code", "--dir", project, "--json", db=None)
    assert rc == 0, err
    r = json.loads(out)
    assert r["replaced"] == 1 and r["path"] == str(settings(project))  # the stale /old/venv one
    data = json.loads(settings(project).read_text())
    expected_theirs = json.loads(json.dumps(USER_SETTINGS))
    expected_theirs["hooks"]["Stop"][0]["hooks"].pop()  # our stale handler is gone
    assert theirs(data) == expected_theirs
    assert sorted(ours(data)) == sorted(CLAUDE_EVENTS)
    assert not any("/old/venv" in c for cs in ours(data).values() for c in cs)
    # the user's own groups stay first, ours are appended
    assert data["hooks"]["PreToolUse"][0] == USER_SETTINGS["hooks"]["PreToolUse"][0]


def test_install_twice_gives_the_same_file(cli, project):
    settings(project).parent.mkdir()
    settings(project).write_text(json.dumps(USER_SETTINGS))
    cli("install", "claude-code", "--dir", project, db=None)
    once = settings(project).read_bytes()
    rc, out, _ = cli("install", "claude-code", "--dir", project, db=None)
    assert rc == 0 and "replaced 8 old ones" in out
    assert settings(project).read_bytes() == once


def test_uninstall_removes_exactly_ours(cli, project):
    settings(project).parent.mkdir()
    clean = json.loads(json.dumps(USER_SETTINGS))
    clean["hooks"]["Stop"][0]["hooks"].pop()
    settings(project).write_text(json.dumps(clean))
    cli("install", "claude-code", "--dir", project, db=None)
    rc, out, err = cli("uninstall", "claude-code", "--dir", project, db=None)
    assert rc == 0, err
    assert out.strip() == f"removed 8 ledger hooks from {settings(project)}"
    assert json.loads(settings(project).read_text()) == clean
    rc, out, _ = cli("uninstall", "claude-code", "--dir", project, "--json", db=None)
    r = json.loads(out)
    assert {k: r[k] for k in ("path", "removed", "deleted")} == {"path": str(settings(project)), "removed": 0, "deleted": []}
    assert r["distill"]["removed"] is False


def test_uninstall_of_a_file_with_only_our_hooks_leaves_no_hooks_key(cli, project):
    settings(project).parent.mkdir()
    settings(project).write_text(json.dumps({"model": "opus"}))
    cli("install", "claude-code", "--dir", project, db=None)
    cli("uninstall", "claude-code", "--dir", project, db=None)
    assert json.loads(settings(project).read_text()) == {"model": "opus"}


def test_uninstall_without_a_settings_file_creates_nothing(cli, project):
    rc, out, _ = cli("uninstall", "claude-code", "--dir", project, db=None)
    # A no-op names no file (the settings file does not exist).
    assert rc == 0 and out.strip() == "no ledger hooks installed for claude-code here (nothing removed)"
    assert not (project / ".claude").exists()


@pytest.mark.parametrize("content,needle", [
    ('{"hooks": {"Stop": [}', "is not valid JSON"),
    ("[1, 2, 3]", "does not hold a JSON object"),
    ('{"hooks": ["not", "an", "object"]}', '"hooks" is not an object'),
])
def test_invalid_settings_are_an_error_and_left_unchanged(cli, project, content, needle):
    settings(project).parent.mkdir()
    settings(project).write_text(content)
    rc, out, err = cli("install", "claude-code", "--dir", project, db=None)
    assert rc != 0 and out == ""
    assert needle in err and str(settings(project)) in err and "nothing was changed" in err.lower()
    assert settings(project).read_text() == content
    assert not list(settings(project).parent.glob("*.ledger-tmp"))
    if "valid JSON" in needle or "JSON object" in needle:
        rc, _, err = cli("uninstall", "claude-code", "--dir", project, db=None)
        assert rc != 0 and needle in err and settings(project).read_text() == content


def test_user_scope_writes_under_home(cli, tmp_path, project):
    home = tmp_path / "home"
    home.mkdir()
    rc, out, err = cli("install", "claude-code", "--user", db=None, env={"HOME": str(home)})
    assert rc == 0, err
    path = home / ".claude" / "settings.json"
    assert str(path) in out
    assert sorted(ours(json.loads(path.read_text()))) == sorted(CLAUDE_EVENTS)
    assert not (project / ".claude").exists()
    rc, out, _ = cli("uninstall", "claude-code", "--user", db=None, env={"HOME": str(home)})
    assert "removed 8" in out and not path.exists()  # we created it: nothing of the user's was in it


def test_project_scope_defaults_to_the_current_directory(project):
    p = subprocess.run([LEDGER_BIN, "install", "claude-code"], cwd=project, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert settings(project).exists()


def test_unknown_harness_is_refused(cli, project):
    rc, out, err = cli("install", "vim", "--dir", project, db=None)
    assert rc != 0 and "vim" in err and not (project / ".claude").exists()


# ---------------------------------------------------------------- where, and what is left behind
def git_init(path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(path)], check=True)


def test_from_a_subdirectory_it_writes_into_the_repository_root(cli, project):
    git_init(project)
    sub = project / "src" / "pkg"
    sub.mkdir(parents=True)
    p = subprocess.run([LEDGER_BIN, "install", "claude-code"], cwd=sub, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert settings(project).exists() and not (sub / ".claude").exists() and not (project / "src" / ".claude").exists()
    assert str(settings(project)) in p.stdout
    # --dir pointing into the repository means the same
    rc, out, err = cli("install", "claude-code", "--dir", sub, "--json", db=None)
    assert json.loads(out)["path"] == str(settings(project)) and json.loads(out)["root"] == str(project)
    p = subprocess.run([LEDGER_BIN, "uninstall", "claude-code"], cwd=sub, capture_output=True, text=True)
    assert "removed 8" in p.stdout and not settings(project).exists()


def test_machine_specific_commands_stay_out_of_the_shared_settings(cli, project):
    git_init(project)
    shared(project).parent.mkdir()
    team = {"permissions": {"allow": ["Bash(make test)"]}}
    shared(project).write_text(json.dumps(team, indent=2) + "\n")
    before = shared(project).read_bytes()
    rc, out, err = cli("install", "claude-code", "--dir", project, db=None)
    assert rc == 0, err
    assert shared(project).read_bytes() == before  # the committed file is untouched
    assert str(settings(project)) in out and "stays out of version control" in out
    # git does not see the local file
    st = subprocess.run(["git", "-C", str(project), "status", "--porcelain", "--untracked-files=all"],
                        capture_output=True, text=True).stdout
    assert ".claude/settings.json" in st and "settings.local.json" not in st
    # a second install does not add a second exclude line
    cli("install", "claude-code", "--dir", project, db=None)
    exclude = (project / ".git" / "info" / "exclude").read_text()
    assert exclude.count("/.claude/settings.local.json") == 1


def test_an_older_install_in_the_shared_settings_is_moved_out(cli, project):
    shared(project).parent.mkdir()
    old = json.loads(json.dumps(USER_SETTINGS))
    shared(project).write_text(json.dumps(old, indent=4) + "\n")
    rc, out, err = cli("install", "claude-code", "--dir", project, "--json", db=None)
    r = json.loads(out)
    assert r["moved_from"] == str(shared(project)) and r["replaced"] == 1
    left = json.loads(shared(project).read_text())
    assert ours(left) == {} and theirs(left) == theirs(old)
    assert shared(project).read_text().startswith('{\n    "permissions"')  # the user's 4-space indent kept


def test_install_says_which_store_the_hooks_use(cli, project, tmp_path):
    store = tmp_path / "elsewhere" / "team.db"
    rc, out, err = cli("install", "claude-code", "--dir", project, db=None, env={"LEDGER_DB": str(store)})
    assert rc == 0, err
    assert f"Store: {store}" in out
    rc, out, err = cli("install", "claude-code", "--dir", project, "--json", db=None, env={"LEDGER_DB": None})
    assert json.loads(out)["store"].endswith("ledger.db")


@pytest.mark.parametrize("var,flag", [("LEDGER_DB", False), ("LEDGER_HOME", False), (None, True)])
def test_the_store_chosen_at_install_is_written_into_the_hook_command(cli, project, tmp_path, var, flag, engine,
                                                                       store_target):
    """Claude Code started without the user's shell variables still writes to the store
    ``install`` named (LEDGER_DB, LEDGER_HOME or --db), not ~/.ledger/ledger.db."""
    home = tmp_path / "my home"  # a space: the command is shell-quoted
    if var == "LEDGER_HOME":
        store = home / "ledger.db"  # $LEDGER_HOME names a folder: its store is a file
    elif engine == "postgresql":
        store = store_target  # a URL with ?, % and = in it: shell-quoted too
    else:
        store = home / "team.db"
    env = {"LEDGER_HOME": None, "HOME": str(tmp_path / "h")}
    args = ["install", "claude-code", "--dir", project]
    if var == "LEDGER_DB":
        env["LEDGER_DB"] = str(store)
    elif var == "LEDGER_HOME":
        env["LEDGER_HOME"] = str(home)
    else:
        args += ["--db", str(store)]
    rc, out, err = cli(*args, db=None, env=env)
    assert rc == 0, err
    assert f"  Store: {store} (written into the hook command" in out
    cmd = ours(json.loads(settings(project).read_text()))["PreToolUse"][0]
    p = subprocess.run(["bash", "-c", cmd], input=json.dumps(pre_read(project / "x.py", cwd=project)).encode(),
                       capture_output=True, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "cc")})
    assert p.returncode == 0 and p.stdout == b"", p.stderr
    assert store_exists(store) and not (tmp_path / "cc" / ".ledger" / "ledger.db").exists()
    rc, out, err = cli("doctor", "--dir", project, "--json", db=None, env=env)
    hooks = next(c for c in json.loads(out)["checks"] if c["name"] == "claude-code hooks")
    assert hooks["status"] == "ok", hooks


@pytest.mark.parametrize("text", [
    '{\n\t"model": "opus",\n\t"env": {"A": "1"}\n}\n',
    '{"model": "opus", "env": {"A": "1"}}',
    '{\n    "model": "opus",\n    "env": {\n        "A": "1"\n    }\n}\n',
])
def test_uninstall_keeps_the_users_formatting(cli, project, text):
    settings(project).parent.mkdir()
    settings(project).write_text(text)
    cli("install", "claude-code", "--dir", project, db=None)
    assert len(ours(json.loads(settings(project).read_text()))) == len(CLAUDE_EVENTS)
    rc, out, err = cli("uninstall", "claude-code", "--dir", project, db=None)
    assert rc == 0, err
    assert json.loads(settings(project).read_text()) == json.loads(text)
    again = settings(project).read_text()
    # indentation style and final newline as the user had them
    assert ("\t" in again) == ("\t" in text) and again.endswith("\n") == text.endswith("\n")
    assert ("\n" in again.strip()) == ("\n" in text.strip())
    if "    " in text:
        assert '\n    "model"' in again


def test_uninstall_never_rewrites_a_file_with_nothing_of_ours(cli, project):
    shared(project).parent.mkdir()
    text = '{ "model":"opus" ,\n  "env" : {} }'
    shared(project).write_text(text)
    settings(project).write_text(text)
    rc, out, err = cli("uninstall", "claude-code", "--dir", project, db=None)
    assert rc == 0 and "no ledger hooks installed for claude-code here" in out
    assert shared(project).read_text() == text and settings(project).read_text() == text


def test_uninstall_removes_the_file_and_folder_we_created(cli, project):
    cli("install", "claude-code", "--dir", project, db=None)
    assert settings(project).exists()
    rc, out, err = cli("uninstall", "claude-code", "--dir", project, db=None)
    assert rc == 0 and f"deleted {settings(project)}" in out
    assert not (project / ".claude").exists()
    assert not any(project.iterdir())


def test_the_plugin_layout_registers_the_same_events_as_install():
    """plugin/claude-code/hooks/hooks.json and `ledger install` wire the same events (a
    new event added to one must reach the other)."""
    data = json.loads((Path(__file__).resolve().parent.parent / "plugin" / "claude-code" / "hooks" / "hooks.json").read_text())
    assert sorted(data["hooks"]) == sorted(CLAUDE_EVENTS)
    for event, groups in data["hooks"].items():
        assert [h["command"] for g in groups for h in g["hooks"]] == [f"ledger hook claude-code {event}"]


# ---------------------------------------------------------------- fresh-user defects
# `ledger install claude-code` reformatted the user's settings.local.json (one-line arrays
# spread over lines, spacing and escapes rewritten). Examples of the kind: compact arrays,
# no spaces after colons, \u escapes, a key order json.dumps would keep but spacing it would not.
@pytest.mark.parametrize("text", [
    '{\n  "permissions": {"allow": ["Bash(ls)", "Read"], "deny": []},\n  "model": "sonnet"\n}\n',
    '{\n  "env":{"A":"1","B":"caf\\u00e9"},\n  "z": 1, "a": [1,2,3]\n}',
    '{\n\t"statusLine": {"type": "command", "command": "echo hi"},\n\n\t"model":   "opus"\n}\n',
    '{"model": "opus", "env": {"A": "1"}}\n',
])
def test_install_keeps_every_byte_of_the_users_settings_outside_hooks(cli, project, text):
    settings(project).parent.mkdir()
    settings(project).write_text(text)
    rc, out, err = cli("install", "claude-code", "--dir", project, db=None)
    assert rc == 0, err
    after = settings(project).read_text()
    body = text.rstrip()[:-1].rstrip()  # the user's text up to its last value
    assert after.startswith(body) and after.endswith("}" + ("\n" if text.endswith("\n") else "")), after
    assert len(ours(json.loads(after))) == len(CLAUDE_EVENTS)
    cli("uninstall", "claude-code", "--dir", project, db=None)
    assert settings(project).read_text() == text  # byte for byte


def test_install_with_the_users_hooks_rewrites_only_the_hooks_member(cli, project):
    text = ('{\n  "permissions": {"allow": ["Bash(ls)"]},\n  "hooks": {"Notification": [{"hooks": [{"type": "command", '
            '"command": "notify-send claude"}]}]},\n  "model": "sonnet"\n}\n')
    settings(project).parent.mkdir()
    settings(project).write_text(text)
    cli("install", "claude-code", "--dir", project, db=None)
    after = settings(project).read_text()
    assert after.startswith('{\n  "permissions": {"allow": ["Bash(ls)"]},\n  "hooks": {\n')
    assert after.endswith('\n  },\n  "model": "sonnet"\n}\n')
    assert json.loads(after)["hooks"]["Notification"] == json.loads(text)["hooks"]["Notification"]


def test_install_outside_a_git_checkout_says_where_it_wrote_and_why(cli, project):
    sub = project / "notes"
    sub.mkdir()
    p = subprocess.run([LEDGER_BIN, "install", "claude-code", "--no-distill"], cwd=sub, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert str(sub / ".claude" / "settings.local.json") in p.stdout
    assert f"{sub} is not in a git checkout" in p.stdout and "Start Claude Code here" in p.stdout, p.stdout
    assert "stays out of version control" not in p.stdout  # there is no version control here
    rc, out, err = cli("install", "claude-code", "--dir", sub, "--json", "--no-distill", db=None)
    assert json.loads(out)["git"] is False
    git_init(project)  # the same folder inside a repository: no note, the root is used
    p = subprocess.run([LEDGER_BIN, "install", "claude-code", "--no-distill"], cwd=sub, capture_output=True, text=True)
    assert "not in a git checkout" not in p.stdout and str(settings(project)) in p.stdout


def test_opencode_from_a_subdirectory_goes_to_the_repository_root(project):
    git_init(project)
    sub = project / "src" / "deep"
    sub.mkdir(parents=True)
    p = subprocess.run([LEDGER_BIN, "install", "opencode", "--no-distill", "--json"], cwd=sub, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    plugin = project / ".opencode" / "plugins" / "ledger.js"
    assert json.loads(p.stdout)["path"] == str(plugin) and plugin.exists()
    assert not (sub / ".opencode").exists() and not (project / "src" / ".opencode").exists()
    p = subprocess.run([LEDGER_BIN, "uninstall", "opencode"], cwd=project / "src", capture_output=True, text=True)
    assert p.returncode == 0 and not plugin.exists(), p.stdout + p.stderr


def test_opencode_outside_a_git_checkout_says_so(project):
    p = subprocess.run([LEDGER_BIN, "install", "opencode", "--no-distill"], cwd=project, capture_output=True, text=True)
    assert p.returncode == 0 and f"{project} is not in a git checkout" in p.stdout, p.stdout + p.stderr
    assert (project / ".opencode" / "plugins" / "ledger.js").exists()
