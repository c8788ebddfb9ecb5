"""Every ``ledger ...`` command in the README runs without a traceback (and ``serve``
answers), through the installed command. ``scripts/check-plain-install`` runs the same
check against a fresh, plain ``pip install .``."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from conftest import LEDGER_BIN

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("readme_commands", ROOT / "scripts" / "readme_commands.py")
rc_mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rc_mod)


def test_the_readme_lists_the_commands_we_expect():
    cmds = rc_mod.readme_commands()
    for needle in ("ledger recall", "ledger remember", "ledger serve", "ledger review", "ledger install claude-code",
                   "ledger doctor", "ledger export", "ledger stats"):
        assert any(c.startswith(needle) for c in cmds), needle
    assert 'ledger remember "Staging deploys need the VPN up" --cluster proc --note "runbook §3"' in cmds


def test_comment_stripping_keeps_quoted_hashes():
    assert rc_mod._strip_comment('ledger remember "a # b" --cluster x   # note') == 'ledger remember "a # b" --cluster x'


def test_every_readme_command_runs_without_a_traceback():
    results = rc_mod.run_all(LEDGER_BIN)
    bad = [r for r in results if r["traceback"] or r["timeout"]]
    assert not bad, bad
    serve = [r for r in results if r["command"].startswith("ledger serve")]
    assert serve and all(r["rc"] == 0 for r in serve), serve
    assert len(results) >= 20


def test_the_readme_installs_extras_from_the_clone_not_from_pypi():
    """The README is read in a clone: an extra is installed from it (``'.[postgres]'``),
    never as ``ledger-memory[...]`` from PyPI (issue 20); the quick start stays two commands."""
    for doc in (ROOT / "README.md", ROOT / "docs" / "postgres.md"):
        text = doc.read_text()
        assert "ledger-memory[" not in text, doc
    readme = (ROOT / "README.md").read_text()
    assert "pip install '.[postgres]'" in readme
    quick = readme.split("## Quick start", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    assert [line.split("#")[0].strip() for line in quick.strip().splitlines()] == ["./scripts/demo", "./scripts/test"]
