"""Every place that says how to install ledger says the same true thing
(``ledger.install_hint``): README, SKILL.md, the web UI's first-run and Connections
steps, and the CLI's message for a missing dependency."""

from __future__ import annotations

import os
import re
from pathlib import Path

import ledger
from ledger.install_hint import INSTALL_COMMANDS, INSTALL_SENTENCE

SRC = Path(ledger.__file__).resolve().parent
ROOT = SRC.parent.parent
PLACES = {
    "README.md": ROOT / "README.md",
    "SKILL.md": SRC / "SKILL.md",
    "plugin SKILL.md": ROOT / "plugin" / "claude-code" / "skills" / "ledger-memory" / "SKILL.md",
    "web connections.js (first run + Connections)": SRC / "web" / "static" / "js" / "connections.js",
}
# `pip install` followed by anything: each must be one of the true commands.
PIP = re.compile(r"\b(pipx? install|uv tool install|uv pip install)\s+([^\s`'\"),]+(?: [^\s`'\"),]+)?)")


def _norm(text: str) -> str:
    return " ".join(text.split())


def test_every_place_names_all_three_commands_and_nothing_else():
    for name, path in PLACES.items():
        text = _norm(path.read_text(encoding="utf-8"))
        for cmd in INSTALL_COMMANDS:
            assert cmd in text, f"{name} does not say `{cmd}`"
        assert "ledger-memory`" not in text and "install ledger-memory" not in text, name
        for m in PIP.finditer(text):
            said = f"{m.group(1)} {m.group(2).split()[0]}"
            assert any(c.startswith(said) for c in INSTALL_COMMANDS), f"{name} says `{m.group(0)}`"


def test_prose_places_use_the_one_sentence():
    for name in ("README.md", "SKILL.md"):
        text = _norm(PLACES[name].read_text(encoding="utf-8"))
        tail = _norm(INSTALL_SENTENCE[len("Install ledger "):])
        assert tail.rstrip(".") in text.replace("`", "`"), name


def test_connections_says_install_adds_hooks_not_the_skill():
    text = PLACES["web connections.js (first run + Connections)"].read_text(encoding="utf-8")
    assert "the skill" not in text
    assert "adds its hooks" in text


def test_a_missing_dependency_is_one_line_naming_the_reinstall(tmp_path, cli):
    # A shadow package that cannot be imported stands for a partial install.
    for mod in ("starlette", "textual"):
        pkg = tmp_path / "shadow" / mod
        pkg.mkdir(parents=True)
        (pkg / "__init__.py").write_text(f"raise ModuleNotFoundError(\"No module named '{mod}'\", name='{mod}')\n")
    env = {"PYTHONPATH": str(tmp_path / "shadow") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    cli.create_store()  # serve on a missing store would fail first (no-store)
    for argv, mod in ((["serve", "--port", "0"], "starlette"), (["review", "--help"], None)):
        rc, out, err = cli(*argv, env=env, timeout=30)
        if mod is None:
            assert rc == 0 and out.startswith("Usage:"), err  # help needs no heavy import
            continue
        assert rc == 1
        assert "Traceback" not in err
        lines = err.strip().splitlines()
        assert len(lines) == 1, err
        assert f"'{mod}'" in lines[0] and "`ledger serve`" in lines[0]
        for cmd in INSTALL_COMMANDS:
            assert cmd in lines[0]
        assert not out


def test_pyproject_makes_the_web_ui_and_tui_plain_dependencies():
    text = (ROOT / "pyproject.toml").read_text()
    deps = text.split("dependencies = [", 1)[1].split("]", 1)[0]
    for name in ("starlette", "uvicorn", "textual", "click", "rich"):
        assert f'"{name}' in deps, name
