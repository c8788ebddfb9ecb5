"""``ledger install <harness>`` turns distillation on through the harness's own client
(issue 12): ``claude -p`` with a cheap model and every hook disabled for that call when
``claude`` is on PATH, OpenCode's own session API for OpenCode; one line says so with the
daily token budget; ``--no-distill`` opts out; a backend the user chose is kept."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from ledger.watcher import config as config_mod
from ledger.watcher.llm import complete

# A stand-in for the `claude` client: checks it is called the way distillation needs
# (print mode, hooks disabled, no tools) and answers a findings array.
FAKE_CLAUDE = """#!{python}
import json, os, sys
args = sys.argv[1:]
prompt = sys.stdin.read()
ok = ("-p" in args and "--model" in args and args[args.index("--model") + 1] == "haiku"
      and json.loads(args[args.index("--settings") + 1]) == {{"disableAllHooks": True}}
      and args[args.index("--tools") + 1] == "" and os.environ.get("LEDGER_HOOKS_DISABLED") == "1")
print(json.dumps([{{"fact": "called correctly" if ok else "called wrongly: " + " ".join(args), "topic": "t",
                   "files": [], "prompt_chars": len(prompt)}}]))
"""


@pytest.fixture
def fake_claude(tmp_path) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "claude"
    exe.write_text(FAKE_CLAUDE.format(python=sys.executable))
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return bin_dir


def _path_with(bin_dir: Path | None) -> str:
    base = "/usr/bin:/bin"
    return f"{bin_dir}:{base}" if bin_dir else base


def test_install_turns_distillation_on_through_claude_when_it_is_on_path(cli, tmp_path, fake_claude, _isolated_home):
    proj = tmp_path / "proj"
    proj.mkdir()
    rc, out, err = cli("install", "claude-code", "--dir", proj, db=None, env={"PATH": _path_with(fake_claude)})
    assert rc == 0, err
    lines = out.splitlines()
    assert next(l for l in lines if "Distillation" in l) == ("  Distillation on: through `claude -p --model haiku` (hooks disabled for that call), "
                        "daily budget 200,000 tokens; `ledger install claude-code --no-distill` turns it off.")
    cfg = config_mod.load(str(Path(_isolated_home) / "config.toml"))
    assert cfg["llm"]["backend"] == "command" and cfg["llm"]["model"] == "haiku"
    # The configured command really runs as the distiller will run it.
    os.environ["PATH"] = _path_with(fake_claude) + ":" + os.environ["PATH"]
    try:
        answer = complete("the trajectory", cfg["llm"])
    finally:
        os.environ["PATH"] = os.environ["PATH"].split(":", 2)[-1]
    assert json.loads(answer.text)[0]["fact"] == "called correctly"
    # Installing again changes nothing in the config.
    before = (Path(_isolated_home) / "config.toml").read_text()
    cli("install", "claude-code", "--dir", proj, db=None, env={"PATH": _path_with(fake_claude)})
    assert (Path(_isolated_home) / "config.toml").read_text() == before


def test_without_claude_on_path_it_says_distillation_is_off(cli, tmp_path, _isolated_home):
    proj = tmp_path / "proj"
    proj.mkdir()
    rc, out, err = cli("install", "claude-code", "--dir", proj, "--json", db=None, env={"PATH": _path_with(None)})
    assert rc == 0, err
    d = json.loads(out)["distill"]
    assert d["enabled"] is False and "not on PATH" in d["reason"]
    assert not (Path(_isolated_home) / "config.toml").exists()


def test_no_distill_opts_out_and_takes_back_only_our_lines(cli, tmp_path, fake_claude, _isolated_home):
    proj = tmp_path / "proj"
    proj.mkdir()
    conf = Path(_isolated_home) / "config.toml"
    conf.write_text('[watcher]\nevery = 7\n\n[llm]\ntimeout = 60\n')
    env = {"PATH": _path_with(fake_claude)}
    cli("install", "claude-code", "--dir", proj, db=None, env=env)
    assert config_mod.load(str(conf))["llm"]["backend"] == "command"
    rc, out, err = cli("install", "claude-code", "--dir", proj, "--no-distill", db=None, env=env)
    assert rc == 0, err
    assert "Distillation off (--no-distill)" in out
    cfg = config_mod.load(str(conf))
    assert cfg["llm"]["backend"] == "none" and cfg["llm"]["timeout"] == 60 and cfg["watcher"]["every"] == 7
    # --no-distill on a fresh install writes nothing at all.
    conf.unlink()
    rc, out, _ = cli("install", "claude-code", "--dir", proj, "--no-distill", db=None, env=env)
    assert "Distillation not turned on" in out and not conf.exists()


@pytest.mark.parametrize("harness", ["claude-code", "opencode"])
def test_a_backend_the_user_chose_is_kept(cli, tmp_path, fake_claude, _isolated_home, harness):
    proj = tmp_path / "proj"
    proj.mkdir()
    conf = Path(_isolated_home) / "config.toml"
    text = '[llm]\nbackend = "openai"\nurl = "http://127.0.0.1:11434/v1"\nmodel = "llama3.1"\n'
    conf.write_text(text)
    rc, out, err = cli("install", harness, "--dir", proj, db=None, env={"PATH": _path_with(fake_claude)})
    assert rc == 0, err
    assert 'Distillation on: your [llm] backend "openai" (daily budget 200,000 tokens).' in out
    assert conf.read_text() == text


@pytest.fixture
def fake_opencode(tmp_path) -> Path:
    bin_dir = tmp_path / "ocbin"
    bin_dir.mkdir()
    exe = bin_dir / "opencode"
    exe.write_text("#!/bin/sh\necho 1.0.0\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return bin_dir


def test_opencode_install_distills_through_opencode_itself(cli, tmp_path, _isolated_home, fake_opencode):
    proj = tmp_path / "proj"
    proj.mkdir()
    rc, out, err = cli("install", "opencode", "--dir", proj, db=None, env={"PATH": _path_with(fake_opencode)})
    assert rc == 0, err
    assert ("  Distillation on: through OpenCode's own session API, daily budget 200,000 tokens; "
            "`ledger install opencode --no-distill` turns it off.") in out.splitlines()
    assert config_mod.load(str(Path(_isolated_home) / "config.toml"))["llm"]["backend"] == "opencode"


def test_opencode_install_without_opencode_on_path_leaves_distillation_off(cli, tmp_path, _isolated_home):
    proj = tmp_path / "proj"
    proj.mkdir()
    rc, out, err = cli("install", "opencode", "--dir", proj, db=None, env={"PATH": _path_with(None)})
    assert rc == 0, err
    assert ("  Distillation off: `opencode` is not on PATH; set [llm] in config.toml to distill. "
            "Injection and checkpoints work without it.") in out.splitlines()
    assert not (Path(_isolated_home) / "config.toml").exists()


def test_installing_opencode_keeps_the_backend_claude_codes_install_set(cli, tmp_path, fake_claude, fake_opencode,
                                                                        _isolated_home):
    """The [llm] section is for every harness: a second harness's install does not move it."""
    proj = tmp_path / "proj"
    proj.mkdir()
    env = {"PATH": f"{fake_claude}:{fake_opencode}:/usr/bin:/bin"}
    conf = Path(_isolated_home) / "config.toml"
    cli("install", "claude-code", "--dir", proj, db=None, env=env)
    before = conf.read_text()
    rc, out, err = cli("install", "opencode", "--dir", proj, db=None, env=env)
    assert rc == 0, err
    assert conf.read_text() == before
    assert 'Distillation on: backend "command" set by `ledger install claude-code`' in out
    # Uninstalling OpenCode leaves Claude Code's backend; uninstalling Claude Code takes it back.
    rc, out, _ = cli("uninstall", "opencode", "--dir", proj, db=None, env=env)
    assert conf.read_text() == before and "Distillation off" not in out
    rc, out, _ = cli("uninstall", "claude-code", "--dir", proj, db=None, env=env)
    assert 'Distillation off: removed the [llm] backend "command"' in out
    assert config_mod.load(str(conf))["llm"]["backend"] == "none"


@pytest.mark.parametrize("harness", ["claude-code", "opencode"])
def test_uninstall_takes_back_only_the_backend_its_install_set_and_still_ours(cli, tmp_path, fake_claude,
                                                                             fake_opencode, _isolated_home, harness):
    proj = tmp_path / "proj"
    proj.mkdir()
    env = {"PATH": f"{fake_claude}:{fake_opencode}:/usr/bin:/bin"}
    conf = Path(_isolated_home) / "config.toml"
    cli("install", harness, "--dir", proj, db=None, env=env)
    assert config_mod.load(str(conf))["llm"]["backend"] != "none"
    rc, out, _ = cli("uninstall", harness, "--dir", proj, db=None, env=env)
    assert "Distillation off: removed" in out and config_mod.load(str(conf))["llm"]["backend"] == "none"
    # The user edited ledger's line: it is theirs now, and uninstall keeps it.
    cli("install", harness, "--dir", proj, db=None, env=env)
    edited = conf.read_text().replace('backend = "', 'backend = "openai" # was "', 1)
    edited = edited.replace('# was "command"', "").replace('# was "opencode"', "")
    conf.write_text(edited)
    rc, out, _ = cli("uninstall", harness, "--dir", proj, db=None, env=env)
    assert conf.read_text() == edited and "Distillation off" not in out
