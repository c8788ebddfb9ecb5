"""``ledger install`` and ``ledger uninstall`` change every file they touch or none, for
every harness and MCP client, and say what to fix (harness/filetx.py). A broken file
(invalid JSON or TOML, a folder where a file belongs) anywhere in the set used to stop
the command halfway: ``ledger uninstall codex`` with a broken ``hooks.json`` removed the
MCP entry from ``config.toml``, kept the hooks, and said "Nothing was changed".

Each case: a good install first where the case needs one, then the file is broken, then
the real command runs; every file and folder under the test's homes and project must be
byte for byte as before."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest


@pytest.fixture
def env(tmp_path, monkeypatch, _isolated_home) -> dict:
    """The homes every harness reads, all under ``tmp_path``, and a PATH where every
    harness's client exists (so installs also turn distillation on)."""
    homes = {"HOME": tmp_path / "home", "CODEX_HOME": tmp_path / "codex-home", "GEMINI_CLI_HOME": tmp_path / "gemini-home",
             "XDG_CONFIG_HOME": tmp_path / "xdg"}
    for k, v in homes.items():
        v.mkdir()
        monkeypatch.setenv(k, str(v))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("claude", "codex", "gemini", "opencode"):
        exe = bin_dir / name
        exe.write_text("#!/bin/sh\nexit 0\n")
        exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    proj = tmp_path / "proj"
    proj.mkdir()
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    return {"proj": proj, "ledger_home": Path(_isolated_home), **homes}


def snapshot(*roots: Path) -> dict:
    """Every path under ``roots``: a file's bytes, a link's target, a folder."""
    out = {}
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            for name in dirnames + filenames:
                p = Path(dirpath) / name
                out[str(p)] = ("link", os.readlink(p)) if p.is_symlink() else ("dir",) if p.is_dir() else \
                    ("file", p.read_bytes())
    return out


def _roots(env) -> tuple[Path, ...]:
    return (env["proj"], env["ledger_home"], env["HOME"], env["CODEX_HOME"], env["GEMINI_CLI_HOME"], env["XDG_CONFIG_HOME"])


def _refused(cli, env, args, *needles) -> str:
    before = snapshot(*_roots(env))
    rc, out, err = cli(*args, "--dir", env["proj"], db=None)
    assert rc == 1, (args, out, err)
    assert "Traceback" not in err and "nothing was changed" in err.lower(), err
    for needle in needles:
        assert needle in err, (needle, err)
    after = snapshot(*_roots(env))
    assert after == before, {k: (before.get(k), after.get(k)) for k in set(before) | set(after)
                             if before.get(k) != after.get(k)}
    return err


def _ok(cli, env, *args) -> str:
    rc, out, err = cli(*args, "--dir", env["proj"], db=None)
    assert rc == 0, (args, err)
    return out


def test_uninstall_codex_with_a_broken_hooks_file_changes_nothing(cli, env):
    # The case: the MCP entry went, the hooks stayed.
    _ok(cli, env, "install", "codex")
    hooks = env["proj"] / ".codex" / "hooks.json"
    hooks.write_text(hooks.read_text() + '{"hooks": {\n')
    _refused(cli, env, ("uninstall", "codex"), str(hooks), "is not valid JSON")
    assert "[mcp_servers.ledger]" in (env["proj"] / ".codex" / "config.toml").read_text()


def test_uninstall_codex_with_a_broken_config_toml_changes_nothing(cli, env):
    _ok(cli, env, "install", "codex")
    config = env["proj"] / ".codex" / "config.toml"
    config.write_text(config.read_text() + "[broken\n")
    _refused(cli, env, ("uninstall", "codex"), str(config), "not valid TOML")


def test_install_codex_with_a_broken_config_toml_changes_nothing(cli, env):
    config = env["proj"] / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text("[mcp_servers\nbroken")
    _refused(cli, env, ("install", "codex"), str(config), "not valid TOML")
    assert not (env["proj"] / ".codex" / "hooks.json").exists()


def test_install_codex_whose_second_file_cannot_be_written_takes_back_the_first(cli, env):
    hooks = env["proj"] / ".codex" / "hooks.json"
    hooks.parent.mkdir()
    hooks.write_text('{"hooks": {}}\n')
    (env["proj"] / ".codex" / "config.toml").mkdir()  # a folder where Codex's config file belongs
    _refused(cli, env, ("install", "codex"), "config.toml")
    assert hooks.read_text() == '{"hooks": {}}\n'


@pytest.mark.parametrize("harness", ["claude-code", "codex", "opencode", "gemini"])
def test_install_with_broken_ledger_settings_changes_nothing(cli, env, harness):
    # Distillation's lines went into a config.toml ledger cannot read, and the install
    # said distillation was on.
    settings = env["ledger_home"] / "config.toml"
    settings.write_text('[llm\nbackend = "command"\n')
    _refused(cli, env, ("install", harness), str(settings), "not valid TOML", "--no-distill")
    # --no-distill does not need the file: the install completes.
    _ok(cli, env, "install", harness, "--no-distill")


def test_claude_code_install_and_uninstall_with_a_broken_settings_file(cli, env):
    settings = env["proj"] / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": {"Stop": [}')
    _refused(cli, env, ("install", "claude-code"), str(settings), "not valid JSON")
    _refused(cli, env, ("uninstall", "claude-code"), str(settings), "not valid JSON")


def test_gemini_with_a_broken_extension_manifest_says_whose_it_cannot_tell(cli, env):
    _ok(cli, env, "install", "gemini")
    manifest = env["GEMINI_CLI_HOME"] / ".gemini" / "extensions" / "ledger" / "gemini-extension.json"
    manifest.write_text("{broken")
    # It said "no ledger hooks installed for gemini here (nothing removed)".
    for verb in ("uninstall", "install"):
        _refused(cli, env, (verb, "gemini"), str(manifest), "not valid JSON", "cannot tell whether")


@pytest.mark.parametrize("client, rel", [("cursor", ".cursor/mcp.json"), ("vscode", ".vscode/mcp.json"),
                                         ("claude-code", ".mcp.json"), ("gemini", ".gemini/settings.json"),
                                         ("codex", ".codex/config.toml")])
def test_mcp_clients_with_a_broken_file_change_nothing(cli, env, client, rel):
    _ok(cli, env, "install", "mcp", "--client", client, "--project")
    path = env["proj"] / rel
    path.write_text(path.read_text() + "\n}}} broken [\n")
    for verb in ("install", "uninstall"):
        _refused(cli, env, (verb, "mcp", "--client", client, "--project"), str(path))


def test_a_complete_uninstall_still_completes(cli, env):
    # All or nothing must not turn a working uninstall into a refusal.
    for harness in ("claude-code", "codex", "opencode", "gemini"):
        _ok(cli, env, "install", harness)
    for harness in ("claude-code", "codex", "opencode", "gemini"):
        out = _ok(cli, env, "uninstall", harness)
        assert "removed" in out, out
    assert not (env["proj"] / ".codex" / "config.toml").exists()
    assert not (env["GEMINI_CLI_HOME"] / ".gemini" / "extensions" / "ledger").exists()
    assert "[llm]" not in (env["ledger_home"] / "config.toml").read_text()


def test_undo_restores_files_and_folders_without_copying_a_users_folder(tmp_path):
    # Removing a hooks file may leave its folder empty (~/.codex, ~/.claude): only the
    # folder's existence is kept for undoing, never a copy of what the user has in it.
    from ledger.harness import filetx

    home = tmp_path / "codex-home"
    (home / "sessions").mkdir(parents=True)
    (home / "sessions" / "rollout.jsonl").write_text("x" * 10_000)
    hooks = home / "hooks.json"
    hooks.write_text('{"hooks": {}}\n')
    hooks.chmod(0o600)
    new = tmp_path / "new" / "deep" / "file.json"
    ours = tmp_path / "ext"
    (ours / "hooks").mkdir(parents=True)
    (ours / "hooks" / "hooks.json").write_text("{}")
    with pytest.raises(RuntimeError):
        with filetx.all_or_nothing() as journal:
            filetx.save_folder(home)
            filetx.save(hooks)
            hooks.unlink()
            filetx.save(new)
            new.parent.mkdir(parents=True)
            new.write_text("x")
            filetx.save(ours)  # a folder ledger wrote is kept whole, and put back whole
            shutil.rmtree(ours)
            assert [s[0] for s in journal._saved.values()] == ["folder", "file", "missing", "dir"]
            raise RuntimeError("a later step failed")
    assert hooks.read_text() == '{"hooks": {}}\n' and stat.S_IMODE(hooks.stat().st_mode) == 0o600
    assert not (tmp_path / "new").exists() and (home / "sessions" / "rollout.jsonl").stat().st_size == 10_000
    assert (ours / "hooks" / "hooks.json").read_text() == "{}"
    filetx.save(hooks)  # outside a block: nothing kept, nothing raised


@pytest.mark.parametrize("verb", ["install", "uninstall"])
def test_ledger_settings_that_are_a_folder_are_named(cli, env, verb):
    # "Cannot write: Is a directory." named no file.
    if verb == "uninstall":
        _ok(cli, env, "install", "claude-code")
    settings = env["ledger_home"] / "config.toml"
    if settings.exists():
        settings.unlink()
    settings.mkdir()
    _refused(cli, env, (verb, "claude-code"), f"Cannot use {settings} (ledger's settings)")
