"""Layering (DESIGN.md "Architecture"): only ``ledger/store/`` touches sqlite3; the CLI
module loads no heavy library; every subcommand's ``--help`` works."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import ledger


SRC = Path(ledger.__file__).resolve().parent
HEAVY = ("textual", "starlette", "uvicorn", "rich")


def _sqlite_imports(path: Path) -> list[int]:
    """Line numbers where ``path`` imports sqlite3 (statements, ``__import__`` or
    ``importlib.import_module`` with a literal name)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            if any(a.name == "sqlite3" or a.name.startswith("sqlite3.") for a in node.names):
                lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            if node.level == 0 and (mod == "sqlite3" or mod.startswith("sqlite3.") or mod == "_sqlite3"):
                lines.append(node.lineno)
        elif isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            if name in ("__import__", "import_module") and node.args:
                a = node.args[0]
                if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.split(".")[0] in ("sqlite3", "_sqlite3"):
                    lines.append(node.lineno)
    return lines


def test_walker_sees_imports():
    # the walker itself must be able to find what it looks for
    src = "import os\nimport sqlite3\nfrom sqlite3 import Row\nx = __import__('sqlite3')\nimport importlib\nimportlib.import_module('sqlite3.dbapi2')\n"
    p = Path(__file__).with_name("_walker_probe.py")
    try:
        p.write_text(src)
        assert _sqlite_imports(p) == [2, 3, 4, 6]
    finally:
        p.unlink()


def test_only_the_store_imports_sqlite3():
    offenders, store_users = [], []
    files = sorted(SRC.rglob("*.py"))
    assert len(files) > 20
    for f in files:
        rel = f.relative_to(SRC.parent).as_posix()  # ledger/...
        found = _sqlite_imports(f)
        if not found:
            continue
        if rel.startswith("ledger/store/"):
            store_users.append(rel)
        else:
            offenders += [f"{rel}:{n}" for n in found]
    assert offenders == [], f"sqlite3 imported outside ledger/store/: {offenders}"
    assert "ledger/store/store.py" in store_users


_PROBE = r"""
import io, json, sys, contextlib
heavy = %r
def loaded():
    return sorted({m.split(".")[0] for m in sys.modules} & set(heavy))
import ledger.cli.app as app
after_import = loaded()
import click
paths = []
def walk(cmd, path):
    if isinstance(cmd, click.Group):
        for name, sub in sorted(cmd.commands.items()):
            paths.append(path + [name])
            walk(sub, path + [name])
walk(app.cli, [])
results = {}
for p in paths:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = app.run(p + ["--help"])
    results[" ".join(p)] = [rc, buf.getvalue()]
print(json.dumps({"after_import": after_import, "after_help": loaded(), "help": results}))
"""


def test_cli_module_loads_no_heavy_library_and_every_help_works(tmp_path):
    p = subprocess.run([sys.executable, "-c", _PROBE % (HEAVY,)], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["after_import"] == [], f"import ledger.cli.app loaded {r['after_import']}"
    helps = r["help"]
    for verb in ("recall", "remember", "forget", "link", "clusters", "clusters add", "conflicts", "judge", "ingest",
                 "search", "review", "resolve", "sources", "sources trust", "sources drop", "stats", "export", "show", "serve"):
        assert verb in helps, verb
    for path, (rc, out) in helps.items():
        assert rc == 0, (path, out)
        assert out.startswith(f"Usage: ledger {path} "), (path, out[:200])
        assert "--help" in out
    assert r["after_help"] == [], f"--help loaded {r['after_help']}"
    assert not any(tmp_path.iterdir())  # help touched no store


def test_help_through_the_installed_command(cli):
    for argv in (["recall", "--help"], ["clusters", "add", "--help"], ["sources", "drop", "-h"]):
        rc, out, err = cli(*argv, db=None)
        assert rc == 0, err
        assert out.startswith("Usage: ledger " + " ".join(argv[:-1]))
