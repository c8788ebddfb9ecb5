"""`ledger install mcp --client X`: each of the seven clients gets our server in its own
format, next to the user's other entries, and `uninstall` takes exactly ours away.

Real files in a private HOME; the CLI runs as a real subprocess.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import tomlkit
from conftest import LEDGER_BIN

from ledger.errors import InvalidInput
from ledger.harness import mcp_clients as mc

JSON_CLIENTS = ("claude-desktop", "cursor", "vscode", "zed", "claude-code", "gemini")
KEY = {"claude-desktop": "mcpServers", "cursor": "mcpServers", "vscode": "servers", "zed": "context_servers",
       "claude-code": "mcpServers", "gemini": "mcpServers", "codex": "mcp_servers"}


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(h / ".config"))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.delenv("APPDATA", raising=False)
    return h


@pytest.fixture
def project(tmp_path) -> Path:
    p = tmp_path / "proj"
    (p / ".git").mkdir(parents=True)
    return p


def scopes(client: str) -> tuple[str, ...]:
    return ("user",) if client == "claude-desktop" else ("user", "project")


def load(path: Path, client: str) -> dict:
    text = path.read_text()
    return tomlkit.parse(text).unwrap() if client == "codex" else json.loads(text)


def ours(doc: dict, client: str) -> dict:
    return doc[KEY[client]]["ledger"]


def test_every_client_has_its_documented_file(home, project):
    expect = {
        ("claude-desktop", "user"): home / ".config/Claude/claude_desktop_config.json",
        ("cursor", "user"): home / ".cursor/mcp.json",
        ("cursor", "project"): project / ".cursor/mcp.json",
        ("vscode", "user"): home / ".config/Code/User/mcp.json",
        ("vscode", "project"): project / ".vscode/mcp.json",
        ("zed", "user"): home / ".config/zed/settings.json",
        ("zed", "project"): project / ".zed/settings.json",
        ("claude-code", "user"): home / ".claude.json",
        ("claude-code", "project"): project / ".mcp.json",
        ("codex", "user"): home / ".codex/config.toml",
        ("codex", "project"): project / ".codex/config.toml",
        ("gemini", "user"): home / ".gemini/settings.json",
        ("gemini", "project"): project / ".gemini/settings.json",
    }
    for (client, scope), path in expect.items():
        assert mc.config_path(client, scope, project) == path, (client, scope)
    assert {c for c, _ in expect} == set(mc.CLIENTS)


def test_codex_home_is_honoured(home, project, monkeypatch, tmp_path):
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "ch"))
    assert mc.config_path("codex", "user") == tmp_path / "ch" / "config.toml"


def test_claude_desktop_has_no_project_scope(home, project):
    assert mc.default_scope("claude-desktop") == "user"
    with pytest.raises(InvalidInput, match="no project configuration"):
        mc.install("claude-desktop", "project", project)


@pytest.mark.parametrize("client", mc.CLIENTS)
def test_install_into_nothing_writes_the_clients_format(home, project, client):
    for scope in scopes(client):
        r = mc.install(client, scope, project, env={"LEDGER_DB": "/data/l.db"})
        assert r["changed"] and r["created"] and r["backup"] is None
        doc = load(Path(r["path"]), client)
        assert list(doc) == [KEY[client]]
        e = ours(doc, client)
        assert Path(e["command"]).name == "ledger" and Path(e["command"]).is_absolute()
        assert e["args"] == ["mcp"]
        assert e["env"] == {"LEDGER_DB": "/data/l.db"}
        # VS Code's schema requires the transport type; nobody else has one.
        assert (e.get("type") == "stdio") == (client == "vscode")


@pytest.mark.parametrize("client", JSON_CLIENTS)
def test_json_merge_keeps_the_users_entries_order_and_indent_and_uninstall_restores(home, project, client):
    for scope in scopes(client):
        path = mc.config_path(client, scope, project)
        path.parent.mkdir(parents=True, exist_ok=True)
        theirs = {"theme": "dark", KEY[client]: {"github": {"command": "npx", "args": ["-y", "gh-mcp"]},
                                                  "db": {"command": "/usr/bin/dbmcp", "env": {"X": "1"}}},
                  "zzz": [1, 2]}
        original = json.dumps(theirs, indent=4) + "\n"
        path.write_text(original)
        r = mc.install(client, scope, project)
        assert r["changed"] and not r["created"]
        text = path.read_text()
        doc = json.loads(text)
        assert list(doc) == ["theme", KEY[client], "zzz"]
        assert list(doc[KEY[client]]) == ["github", "db", "ledger"]
        assert doc[KEY[client]]["github"] == theirs[KEY[client]]["github"]
        assert text.startswith('{\n    "theme"')  # four spaces, as the user had
        # A second install changes nothing, not even the bytes.
        assert mc.install(client, scope, project)["changed"] is False
        assert path.read_text() == text
        u = mc.uninstall(client, scope, project)
        assert u["removed"] == 1 and u["deleted"] == []
        assert path.read_text() == original


def test_codex_merge_keeps_comments_and_other_servers(home, project):
    path = home / ".codex" / "config.toml"
    path.parent.mkdir()
    original = ('# my codex settings\nmodel = "gpt-5"  # the default\n\n'
                '[mcp_servers.docs]\ncommand = "npx"\nargs = ["-y", "docs-mcp"]\n\n'
                '[profiles.fast]\nmodel = "mini"\n')
    path.write_text(original)
    r = mc.install("codex", "user", None, env={"LEDGER_HOME": "/x"})
    text = path.read_text()
    assert text.startswith(original.split("[profiles")[0].rstrip("\n"))
    assert "# my codex settings" in text and "# the default" in text
    doc = tomlkit.parse(text).unwrap()
    assert doc["mcp_servers"]["docs"] == {"command": "npx", "args": ["-y", "docs-mcp"]}
    assert doc["mcp_servers"]["ledger"] == r["entry"]
    assert doc["profiles"] == {"fast": {"model": "mini"}}
    assert mc.install("codex", "user", None, env={"LEDGER_HOME": "/x"})["changed"] is False
    assert mc.uninstall("codex", "user", None)["removed"] == 1
    after = tomlkit.parse(path.read_text()).unwrap()
    assert "ledger" not in after["mcp_servers"] and after["mcp_servers"]["docs"]
    assert "# my codex settings" in path.read_text()


@pytest.mark.parametrize("client", mc.CLIENTS)
def test_uninstall_of_a_file_holding_only_ours_deletes_it(home, project, client):
    scope = scopes(client)[-1]
    r = mc.install(client, scope, project)
    u = mc.uninstall(client, scope, project)
    assert u == {**u, "removed": 1, "deleted": [r["path"]]}
    assert not Path(r["path"]).exists()
    # And again: nothing there, nothing removed, nothing created.
    assert mc.uninstall(client, scope, project)["removed"] == 0
    assert not Path(r["path"]).exists()


@pytest.mark.parametrize("client", mc.CLIENTS)
def test_a_users_own_ledger_entry_is_never_overwritten_or_removed(home, project, client):
    scope = scopes(client)[0]
    path = mc.config_path(client, scope, project)
    path.parent.mkdir(parents=True, exist_ok=True)
    foreign = {"command": "python", "args": ["my_ledger_server.py"]}
    if client == "codex":
        path.write_text('[mcp_servers.ledger]\ncommand = "python"\nargs = ["my_ledger_server.py"]\n')
    else:
        path.write_text(json.dumps({KEY[client]: {"ledger": foreign}}))
    before = path.read_text()
    with pytest.raises(InvalidInput, match="not ledger's"):
        mc.install(client, scope, project)
    u = mc.uninstall(client, scope, project)
    assert u["removed"] == 0 and "kept" in u
    assert path.read_text() == before


def test_an_older_install_from_another_venv_is_ours_and_updated(home, project):
    path = project / ".cursor" / "mcp.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"mcpServers": {"ledger": {"command": "/old/venv/bin/ledger", "args": ["mcp"]}}}))
    r = mc.install("cursor", "project", project)
    assert r["changed"] and json.loads(path.read_text())["mcpServers"]["ledger"]["command"] != "/old/venv/bin/ledger"


ZED_SETTINGS = """// Zed settings
//
// For information on how to configure Zed, see the Zed
// documentation: https://zed.dev/docs/configuring-zed
{
  "ui_font_size": 16, // big
  "buffer_font_family": "Iosevka",
  /* servers */ "KEY": {
    "other": {"command": "x", "args": ["a,}"],},
  },
}
"""


@pytest.mark.parametrize("client", ("zed", "vscode", "gemini"))
def test_commented_json_is_edited_in_place_and_uninstall_gives_back_every_byte(home, project, client):
    path = mc.config_path(client, "project", project)
    path.parent.mkdir(parents=True)
    original = ZED_SETTINGS.replace("KEY", KEY[client])
    path.write_text(original)
    r = mc.install(client, "project", project)
    assert r["backup"] is None
    text = path.read_text()
    # Every line of the user's file is still there, comments included, in order.
    assert [line for line in text.splitlines() if line in original.splitlines()] == original.splitlines()
    doc, _ = mc._strip_jsonc(text)
    doc = json.loads(doc)
    assert doc["ui_font_size"] == 16 and doc[KEY[client]]["other"] == {"command": "x", "args": ["a,}"]}
    assert doc[KEY[client]]["ledger"]["args"] == ["mcp"]
    assert mc.install(client, "project", project)["changed"] is False
    assert mc.uninstall(client, "project", project)["removed"] == 1
    assert path.read_text() == original


def test_zeds_default_settings_without_context_servers_get_them_and_lose_them(home):
    path = home / ".config" / "zed" / "settings.json"
    path.parent.mkdir(parents=True)
    original = '// Zed settings\n//\n// See the docs.\n{\n  "theme": "One Dark", // dark\n  "vim_mode": true\n}\n'
    path.write_text(original)
    mc.install("zed", "user", None, env={"LEDGER_DB": "/d.db"})
    text = path.read_text()
    assert text.startswith('// Zed settings\n//\n// See the docs.\n{\n  "theme": "One Dark", // dark\n  "vim_mode": true,\n')
    assert json.loads(mc._strip_jsonc(text)[0])["context_servers"]["ledger"]["env"] == {"LEDGER_DB": "/d.db"}
    mc.uninstall("zed", "user", None)
    assert path.read_text() == original


def test_hand_formatted_json_keeps_its_layout(home, project):
    path = project / ".cursor" / "mcp.json"
    path.parent.mkdir()
    original = '{\n  "mcpServers": {\n    "gh": { "command": "npx", "args": ["-y", "gh-mcp"] }\n  }\n}\n'
    path.write_text(original)
    mc.install("cursor", "project", project)
    assert '    "gh": { "command": "npx", "args": ["-y", "gh-mcp"] },\n    "ledger": {' in path.read_text()
    mc.uninstall("cursor", "project", project)
    assert path.read_text() == original


def test_a_one_line_file_is_rewritten_compact(home, project):
    path = project / ".cursor" / "mcp.json"
    path.parent.mkdir()
    path.write_text('{"mcpServers": {"gh": {"command": "npx"}}}')
    mc.install("cursor", "project", project)
    assert "\n" not in path.read_text()
    mc.uninstall("cursor", "project", project)
    assert json.loads(path.read_text()) == {"mcpServers": {"gh": {"command": "npx"}}}


@pytest.mark.parametrize("content", ['{"mcpServers": ', "[1, 2]", '{"mcpServers": []}'])
def test_a_file_that_does_not_parse_is_an_error_and_left_unchanged(home, project, content):
    path = project / ".cursor" / "mcp.json"
    path.parent.mkdir()
    path.write_text(content)
    with pytest.raises(InvalidInput, match="nothing was changed"):
        mc.install("cursor", "project", project)
    assert path.read_text() == content


def test_broken_toml_is_an_error_and_left_unchanged(home):
    path = home / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text("model = = 1\n")
    with pytest.raises(InvalidInput, match="not valid TOML"):
        mc.install("codex", "user", None)
    assert path.read_text() == "model = = 1\n"


@pytest.mark.parametrize("client", mc.CLIENTS)
def test_the_snippet_is_what_install_writes(home, project, client):
    snippet = mc.config_snippet(client, {"LEDGER_DB": "/d.db"})
    parsed = tomlkit.parse(snippet).unwrap() if client == "codex" else json.loads(snippet)
    r = mc.install(client, mc.default_scope(client), project, env={"LEDGER_DB": "/d.db"})
    assert parsed == load(Path(r["path"]), client)


def test_unknown_client_is_refused():
    with pytest.raises(InvalidInput, match="Known: claude-desktop"):
        mc.config_snippet("notepad")


# ----------------------------------------------------------------------------- the CLI
def run(*args, home: Path, cwd: Path | None = None):
    import os
    import subprocess

    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "NO_COLOR": "1"}
    env.pop("CODEX_HOME", None)
    return subprocess.run([LEDGER_BIN, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=60)


def test_cli_install_and_uninstall_with_json(home, project, store_target):
    db = store_target
    p = run("install", "mcp", "--client", "vscode", "--dir", str(project), "--db", str(db), "--json", home=home)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["path"] == str(project / ".vscode" / "mcp.json") and r["entry"]["env"]["LEDGER_DB"] == str(db)
    assert r["store"] == str(db)
    assert json.loads((project / ".vscode/mcp.json").read_text())["servers"]["ledger"]["type"] == "stdio"
    p = run("uninstall", "mcp", "--client", "vscode", "--dir", str(project), "--json", home=home)
    assert json.loads(p.stdout)["removed"] == 1
    assert not (project / ".vscode" / "mcp.json").exists()


def test_cli_print_writes_nothing(home, project):
    p = run("install", "mcp", "--client", "codex", "--print", home=home, cwd=project)
    assert p.returncode == 0, p.stderr
    assert tomlkit.parse(p.stdout).unwrap()["mcp_servers"]["ledger"]["args"] == ["mcp"]
    p = run("install", "mcp", "--client", "zed", "--print", "--json", home=home, cwd=project)
    out = json.loads(p.stdout)
    assert out["format"] == "json" and json.loads(out["snippet"])["context_servers"]["ledger"]
    assert not (project / ".codex").exists() and not (home / ".codex").exists() and not (project / ".zed").exists()


def test_cli_user_scope_and_default_scope_for_desktop(home, project):
    p = run("install", "mcp", "--client", "claude-desktop", home=home, cwd=project)
    assert p.returncode == 0, p.stderr
    assert (home / ".config/Claude/claude_desktop_config.json").is_file()
    p = run("install", "mcp", "--client", "gemini", "--user", home=home, cwd=project)
    assert p.returncode == 0 and (home / ".gemini/settings.json").is_file()
    assert not (project / ".gemini").exists()


@pytest.mark.parametrize("args, needle", [
    (("install", "mcp"), "Which MCP client?"),
    (("uninstall", "mcp"), "Which MCP client?"),
    (("install", "claude-code", "--client", "cursor"), "--client goes with `ledger install mcp`"),
    (("install", "opencode", "--print"), "--print goes with `ledger install mcp`"),
    (("install", "mcp", "--client", "claude-desktop", "--project"), "no project configuration"),
    (("install", "claude-desktop"), "Try: ledger install mcp --client claude-desktop"),
    (("uninstall", "cursor"), "Try: ledger uninstall mcp --client cursor"),
    (("install", "zed", "--user"), "Try: ledger install mcp --client zed"),
])
def test_cli_mistakes_are_clear_errors(home, project, args, needle):
    p = run(*args, home=home, cwd=project)
    assert p.returncode != 0 and needle in p.stderr, p.stderr
    assert not (project / ".claude").exists() and not (project / ".opencode").exists()


def test_a_file_with_a_byte_order_mark_keeps_it(home, project):
    path = project / ".vscode" / "mcp.json"
    path.parent.mkdir()
    original = '\ufeff{\n  "servers": {\n    "gh": {"type": "stdio", "command": "npx"}\n  }\n}\n'
    path.write_text(original, encoding="utf-8")
    mc.install("vscode", "project", project)
    assert path.read_text(encoding="utf-8").startswith("\ufeff{")
    mc.uninstall("vscode", "project", project)
    assert path.read_text(encoding="utf-8") == original


# ----------------------------------------------------------------------------- files as users leave them
def cli_install(client: str, project: Path, home: Path, *extra: str):
    return run("install", "mcp", "--client", client, "--dir", str(project), *extra, home=home)


def cli_uninstall(client: str, project: Path, home: Path, *extra: str):
    return run("uninstall", "mcp", "--client", client, "--dir", str(project), *extra, home=home)


def jsonc(path: Path) -> dict:
    return json.loads(mc._strip_jsonc(path.read_text(encoding="utf-8"))[0].lstrip("\ufeff"))


@pytest.mark.parametrize("client, original", [
    ("cursor", '{"mcpServers": null}'),
    ("zed", '// Zed settings\n{\n  "context_servers": null, // none yet\n  "theme": "One Dark"\n}\n'),
    ("gemini", '{\n  "theme": "GitHub",\n  "mcpServers": null\n}\n'),
])
def test_a_null_servers_key_counts_as_no_servers_yet(home, project, client, original):
    # It was a TypeError traceback: the null was kept and then indexed.
    path = mc.config_path(client, "project", project)
    path.parent.mkdir(parents=True)
    path.write_text(original)
    p = cli_install(client, project, home)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    doc = jsonc(path)
    assert doc[KEY[client]]["ledger"]["args"] == ["mcp"]
    assert {k: v for k, v in doc.items() if k != KEY[client]} == \
        {k: v for k, v in json.loads(mc._strip_jsonc(original)[0]).items() if k != KEY[client]}
    if "//" in original:
        assert "// none yet" in path.read_text() and "// Zed settings" in path.read_text()
    p = cli_uninstall(client, project, home)
    assert p.returncode == 0 and "removed the ledger MCP server" in p.stdout, p.stderr


@pytest.mark.parametrize("client, original", [
    ("zed", '// Zed settings\n{\n  "theme": "One Dark",\n  "context_servers": {\n    // add servers here\n  }\n}\n'),
    ("vscode", '{\n  "servers": { /* none yet */ },\n  "inputs": []\n}\n'),
    ("gemini", '{\n  "mcpServers": {\n    /* github: {"command": "npx"} */\n  }\n}\n'),
])
def test_uninstall_keeps_the_users_commented_empty_servers_object(home, project, client, original):
    # Uninstall took the (now empty) servers object away with the comment in it.
    path = mc.config_path(client, "project", project)
    path.parent.mkdir(parents=True)
    path.write_text(original)
    assert cli_install(client, project, home).returncode == 0
    assert jsonc(path)[KEY[client]]["ledger"]
    p = cli_uninstall(client, project, home)
    assert p.returncode == 0, p.stderr
    comment = original[original.index("/", original.index(KEY[client])):original.rindex("/") + 1]
    assert comment in path.read_text() and jsonc(path) == json.loads(mc._strip_jsonc(original)[0])
    if client != "vscode":  # a comment on its own line: the file comes back byte for byte
        assert path.read_text() == original


@pytest.mark.parametrize("client, original", [
    ("cursor", '\ufeff{\n  "mcpServers": {\n    "gh": {"command": "npx"}\n  }\n}\n'),
    ("claude-code", '\ufeff{"mcpServers": {"gh": {"command": "npx"}}}'),
    ("vscode", '\ufeff// mine\n{\n  "servers": {"gh": {"type": "stdio", "command": "npx"}}\n}\n'),
])
def test_a_file_with_a_byte_order_mark_is_merged_and_keeps_it(home, project, client, original):
    # Windows editors write a UTF-8 BOM; it was refused as "not valid JSON".
    path = mc.config_path(client, "project", project)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(original, encoding="utf-8")
    p = cli_install(client, project, home)
    assert p.returncode == 0, p.stderr
    assert path.read_text(encoding="utf-8").startswith("\ufeff")
    assert jsonc(path)[KEY[client]]["ledger"]["args"] == ["mcp"]
    assert cli_uninstall(client, project, home).returncode == 0
    assert jsonc(path) == json.loads(mc._strip_jsonc(original)[0].lstrip("\ufeff"))


def _immutable(path: Path) -> bool:
    import shutil
    import subprocess

    return bool(shutil.which("chattr")) and subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode == 0


def _mutable(path: Path) -> None:
    import subprocess

    subprocess.run(["chattr", "-i", str(path)], capture_output=True)


def test_a_file_that_cannot_be_written_is_named_and_no_temporary_file_is_left(home, project):
    # It said only "Cannot write: Operation not permitted." and left .mcp.json.ledger-tmp behind.
    path = project / ".cursor" / "mcp.json"
    path.parent.mkdir()
    original = '{\n  "mcpServers": {\n    "gh": {"command": "npx"}\n  }\n}\n'
    path.write_text(original)
    if not _immutable(path):
        pytest.skip("chattr +i is not available here (needs root and a file system with attributes)")
    try:
        p = cli_install("cursor", project, home)
    finally:
        _mutable(path)
    assert p.returncode == 1 and str(path) in p.stderr and "nothing was changed" in p.stderr, p.stderr
    assert "Traceback" not in p.stderr
    assert path.read_text() == original and sorted(x.name for x in path.parent.iterdir()) == ["mcp.json"]


def test_a_folder_that_cannot_take_our_temporary_file_is_a_clear_error(home, project):
    # The same kind without chattr: the temporary file's name is taken by a folder.
    path = project / ".vscode" / "mcp.json"
    path.parent.mkdir()
    path.write_text('{\n  "servers": {}\n}\n')
    (path.parent / ".mcp.json.ledger-tmp").mkdir()
    p = cli_install("vscode", project, home)
    assert p.returncode == 1 and f"Cannot write {path}" in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert path.read_text() == '{\n  "servers": {}\n}\n'


def test_codex_install_with_an_unwritable_config_toml_changes_nothing(home, project):
    # It installed the hooks and skipped the MCP entry: half an install. Now all of it
    # or nothing (harness/filetx.py), with the file to fix named.
    cfg = project / ".codex" / "config.toml"
    cfg.parent.mkdir()
    cfg.write_text('model = "o3"\n')
    if not _immutable(cfg):
        pytest.skip("chattr +i is not available here (needs root and a file system with attributes)")
    try:
        p = run("install", "codex", "--dir", str(project), "--no-distill", home=home)
    finally:
        _mutable(cfg)
    assert p.returncode == 1, p.stdout
    assert f"Cannot write {cfg}" in p.stderr and "nothing was changed" in p.stderr, p.stderr
    assert not (project / ".codex" / "hooks.json").exists() and cfg.read_text() == 'model = "o3"\n'
    assert not (project / ".codex" / ".config.toml.ledger-tmp").exists()


@pytest.mark.parametrize("client", ("cursor", "vscode", "zed", "gemini"))
def test_uninstall_takes_away_the_folder_install_made_and_nothing_above_it(home, project, client):
    assert cli_install(client, project, home).returncode == 0
    folder = mc.config_path(client, "project", project).parent
    assert folder.is_dir() and folder != project
    assert cli_uninstall(client, project, home).returncode == 0
    assert not folder.exists() and project.is_dir()


def test_uninstall_never_removes_the_project_folder_itself(home, tmp_path):
    plain = tmp_path / "plain"  # no git: the folder is the project root, and .mcp.json sits in it
    plain.mkdir()
    assert cli_install("claude-code", plain, home).returncode == 0
    assert sorted(x.name for x in plain.iterdir()) == [".mcp.json"]
    assert cli_uninstall("claude-code", plain, home).returncode == 0
    assert plain.is_dir() and not list(plain.iterdir())


def test_json_that_is_not_an_object_says_what_to_do(home, project):
    path = project / ".cursor" / "mcp.json"
    path.parent.mkdir()
    path.write_text('"mcpServers"')
    p = cli_install("cursor", project, home)
    assert p.returncode == 1 and "nothing was changed" in p.stderr and "--print" in p.stderr, p.stderr



@pytest.mark.parametrize("client, text", [("cursor", '{"mcpServers": {'), ("codex", "[mcp_servers\n"),
                                          ("zed", '"just a string"')])
def test_uninstall_from_a_broken_file_says_what_to_do_for_an_uninstall(home, project, client, text):
    # It said "paste the snippet from --print by hand", which is install's way out.
    path = mc.config_path(client, "project", project)
    path.parent.mkdir(parents=True)
    path.write_text(text)
    p = cli_uninstall(client, project, home)
    assert p.returncode == 1 and "nothing was changed" in p.stderr and 'take the "ledger" entry out by hand' in p.stderr
    assert "--print" not in p.stderr and path.read_text() == text
    p = cli_install(client, project, home)
    assert p.returncode == 1 and "--print" in p.stderr
