"""``ledger install gemini`` (the Gemini CLI extension) and the ``gemini`` LLM backend,
as real ``ledger`` subprocesses in a throwaway HOME (docs/harness-contracts.md §D1, §D2,
§D9)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest
from fakes.hooks import LEDGER_BIN

# ------------------------------------------------------------------ install


def run_ledger(*args, home, ledger_home, env=None):
    full = {**os.environ, "HOME": str(home), "LEDGER_HOME": str(ledger_home), "PATH": "/usr/bin:/bin", **(env or {})}
    full.pop("GEMINI_CLI_HOME", None)
    full.pop("LEDGER_DB", None)
    return subprocess.run([LEDGER_BIN, *args], env=full, capture_output=True, text=True, timeout=60)


def test_install_writes_the_extension_and_uninstall_removes_exactly_it(tmp_path):
    home, lh = tmp_path / "home", tmp_path / "lh"
    home.mkdir()
    other = home / ".gemini" / "extensions" / "someone-else"
    other.mkdir(parents=True)
    (other / "gemini-extension.json").write_text('{"name": "someone-else", "version": "1"}')
    p = run_ledger("install", "gemini", "--user", "--json", home=home, ledger_home=lh)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    ext = home / ".gemini" / "extensions" / "ledger"
    manifest = json.loads((ext / "gemini-extension.json").read_text())
    assert manifest["name"] == "ledger" and manifest["mcpServers"]["ledger"]["args"] == ["mcp"]
    assert {s["envVar"] for s in manifest["settings"]} == {"LEDGER_HOME", "LEDGER_DB"}
    assert not any(w in s["envVar"] for s in manifest["settings"] for w in ("KEY", "TOKEN", "AUTH"))
    hooks = json.loads((ext / "hooks" / "hooks.json").read_text())["hooks"]
    assert list(hooks) == ["SessionStart", "BeforeAgent", "AfterTool", "AfterAgent", "PreCompress", "SessionEnd"]
    for event, groups in hooks.items():
        h = groups[0]["hooks"][0]
        assert h["command"].endswith(f"ledger hook gemini {event}") and os.path.isabs(h["command"].split()[0])
        assert h["timeout"] == 10_000  # milliseconds
    assert (ext / ".env").read_text() == f'LEDGER_HOME="{lh}"\n'
    assert r["distill"]["reason"] == "`gemini` is not on PATH; set [llm] in config.toml to distill"
    again = run_ledger("install", "gemini", "--json", home=home, ledger_home=lh)  # project scope: same folder, a note
    assert again.returncode == 0 and json.loads(again.stdout)["replaced"] is True
    assert "gemini extensions enable ledger --scope workspace" in run_ledger("install", "gemini", home=home, ledger_home=lh).stdout
    p = run_ledger("uninstall", "gemini", "--user", home=home, ledger_home=lh)
    assert p.returncode == 0 and "removed 1 ledger extension" in p.stdout
    assert not ext.exists() and other.is_dir()
    assert "nothing removed" in run_ledger("uninstall", "gemini", "--user", home=home, ledger_home=lh).stdout


def test_link_install_uses_geminis_link_record_and_a_folder_not_ours_is_left_alone(tmp_path, store_target):
    home, lh = tmp_path / "home", tmp_path / "lh"
    p = run_ledger("install", "gemini", "--user", "--link", "--db", str(store_target), home=home, ledger_home=lh)
    assert p.returncode == 0, p.stderr
    ext = home / ".gemini" / "extensions" / "ledger"
    rec = json.loads((ext / ".gemini-extension-install.json").read_text())
    assert rec == {"source": str(lh / "gemini-extension"), "type": "link"}
    assert (lh / "gemini-extension" / "hooks" / "hooks.json").is_file()
    assert f'LEDGER_DB="{store_target}"' in (ext / ".env").read_text()
    assert run_ledger("uninstall", "gemini", "--user", home=home, ledger_home=lh).returncode == 0
    assert not ext.exists() and not (lh / "gemini-extension").exists()
    ext.mkdir(parents=True)
    (ext / "gemini-extension.json").write_text('{"name": "ledger", "version": "0.1", "description": "a user\'s own"}')
    p = run_ledger("install", "gemini", "--user", home=home, ledger_home=lh)
    assert p.returncode != 0 and "is not ledger's extension" in p.stderr
    assert "own" in (ext / "gemini-extension.json").read_text()
    out = run_ledger("uninstall", "gemini", "--user", home=home, ledger_home=lh).stdout
    assert "nothing removed" in out and f"left alone: {ext} is another program's extension" in out, out
    assert ext.is_dir()


# ------------------------------------------------------------------ the gemini LLM backend


FAKE_GEMINI = """#!{python}
import json, os, sys
prompt = sys.stdin.read()
open({out!r}, "w").write(json.dumps({{"argv": sys.argv[1:], "stdin": prompt, "hooks_off": os.environ.get("LEDGER_HOOKS_DISABLED")}}))
if "--fail" in sys.argv:
    print(json.dumps({{"error": {{"type": "Error", "message": "quota exhausted", "code": 1}}}}))
    sys.exit(1)
print(json.dumps({{"session_id": "x", "response": "[]", "stats": {{"models": {{"gemini-2.5-flash": {{"tokens": {{"prompt": 120, "candidates": 3}}}}}}}}}}))
"""


def test_gemini_backend_runs_gemini_p_without_extensions(tmp_path):
    from ledger.watcher.llm import SYSTEM, LLMError, complete

    out = tmp_path / "call.json"
    exe = tmp_path / "gemini"
    exe.write_text(FAKE_GEMINI.format(python=sys.executable, out=str(out)))
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    c = complete("trajectory ✓", {"backend": "gemini", "command": str(exe), "model": "gemini-2.5-flash"})
    assert (c.text, c.prompt_tokens, c.completion_tokens) == ("[]", 120, 3)
    call = json.loads(out.read_text())
    assert call["argv"] == ["-e", "none", "-o", "json", "-p", SYSTEM, "-m", "gemini-2.5-flash"]
    assert call["stdin"] == "trajectory ✓" and call["hooks_off"] == "1"
    with pytest.raises(LLMError, match="exited 1: quota exhausted"):
        complete("p", {"backend": "gemini", "command": f"{exe} --fail"})
    with pytest.raises(LLMError, match="not found on PATH"):
        complete("p", {"backend": "gemini", "command": str(tmp_path / "no-gemini")})


def test_install_turns_gemini_distillation_on_when_gemini_is_on_path(tmp_path):
    home, lh, bin_dir = tmp_path / "home", tmp_path / "lh", tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gemini").write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / "gemini").chmod(0o755)
    p = run_ledger("install", "gemini", "--user", home=home, ledger_home=lh, env={"PATH": f"{bin_dir}:/usr/bin:/bin"})
    assert p.returncode == 0 and "`gemini -p`" in p.stdout
    assert 'backend = "gemini"' in (lh / "config.toml").read_text()
    run_ledger("uninstall", "gemini", "--user", home=home, ledger_home=lh, env={"PATH": f"{bin_dir}:/usr/bin:/bin"})
    assert "gemini" not in (lh / "config.toml").read_text()
