"""Start-up budget of the agent verbs (issue 14; docs/benchmarks.md "Start-up").

``recall``, ``search``, ``remember`` and ``show`` run as a fresh process per agent call,
so what they import is latency paid on every call. These tests run each verb in a real
subprocess and compare the modules it imported with the budget below; a new import on
this path must be added here on purpose (and measured with ``bench/startup.py``).
They also check that the fast path (argparse) prints exactly what the click app prints.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

# Every module an agent verb may import beyond the interpreter's own start-up (and json,
# which the probe below imports first, with re and enum). The standard library part is
# what argparse, sqlite3 (with datetime) and the tokeniser (unicodedata) bring with them.
# No dataclasses: it imports inspect, ast, dis and tokenize, about 0.9x a bare
# `python -c pass` (the models are ledger.frozen values instead).
STDLIB_BUDGET = frozenset("""
    __future__ _datetime _locale _sqlite3 _weakrefset argparse collections.abc contextlib datetime errno gettext
    locale math sqlite3 sqlite3.dbapi2 threading unicodedata warnings
""".split())
LEDGER_BUDGET = frozenset("""
    ledger ledger.cli ledger.cli.fast ledger.cli.render ledger.cli.verbs ledger.clock ledger.errors ledger.filekeys
    ledger.frozen ledger.ids ledger.models ledger.paths ledger.query ledger.query.parser ledger.service ledger.store
    ledger.store.conflicts ledger.store.connection ledger.store.migrations ledger.store.ops ledger.store.rows
    ledger.store.search ledger.store.sources ledger.store.sqlbits ledger.store.stats ledger.store.store
    ledger.store.textindex ledger.store.watch ledger.strength ledger.termfmt ledger.terms ledger.text ledger.vocab
    ledger.wire
""".split())
# Only remember runs the contradiction proposer.
REMEMBER_EXTRA = frozenset({"ledger.conflicts", "ledger.conflicts.duplicates", "ledger.conflicts.signals", "ledger.conflicts.values", "difflib", "heapq", "_heapq"})
NEVER = ("click", "rich", "textual", "starlette", "uvicorn", "httpx", "ledger.web", "ledger.tui", "ledger.harness",
         "ledger.watcher", "ledger.ingest", "ledger.cli.app", "typing", "pathlib", "secrets", "shutil", "hashlib",
         "dataclasses", "inspect", "ast", "dis", "tokenize")

PROBE = """
import json, sys
before = set(sys.modules)
from ledger.cli import main
rc = main(sys.argv[1:])
sys.stderr.write("\\nMODULES " + json.dumps(sorted(set(sys.modules) - before)) + "\\n")
sys.exit(rc)
"""


def _imported(args: list[str]) -> tuple[int, str, set[str]]:
    r = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin"})
    line = [x for x in r.stderr.splitlines() if x.startswith("MODULES ")]
    assert line, r.stderr
    return r.returncode, r.stdout, set(json.loads(line[-1][len("MODULES "):]))


@pytest.fixture()
def db(tmp_path):
    from ledger.service import Ledger

    path = tmp_path / "ledger.db"
    with Ledger.open(path) as led:
        m = led.remember("CI runs on Python 3.11 with node.js 20", cluster="code", agent="claude").memory
    return str(path), m.id


@pytest.mark.parametrize("verb", [
    ["recall", "python", "ci"],
    ["recall", "--json", "cluster:code"],
    ["search", "python"],
    ["show", "ID"],
    ["show", "ID", "--json"],
    ["remember", "Deploys need the VPN", "--cluster", "proc"],
])
def test_agent_verbs_stay_inside_the_import_budget(db, verb):
    path, mid = db
    args = [a.replace("ID", mid) for a in verb] + ["--db", path]
    rc, out, mods = _imported(args)
    assert rc == 0 and out.strip(), out
    budget = STDLIB_BUDGET | LEDGER_BUDGET | (REMEMBER_EXTRA if verb[0] == "remember" else frozenset())
    assert sorted(mods - budget) == []
    for name in NEVER:
        assert not any(m == name or m.startswith(name + ".") for m in mods), name


def test_version_imports_almost_nothing():
    rc, out, mods = _imported(["--version"])
    assert rc == 0 and out.startswith("ledger, version ")
    assert {m for m in mods if m.startswith("ledger")} <= {"ledger", "ledger.cli"}
    assert "argparse" not in mods and "click" not in mods


def test_version_matches_the_package_metadata():
    from importlib.metadata import version

    import ledger

    assert ledger.__version__ == version("ledger-memory")


CLICK = "import sys; from ledger.cli.app import run; sys.exit(run(sys.argv[1:]))"
FAST = "import sys; from ledger.cli import main; sys.exit(main(sys.argv[1:]))"


def _run(code: str, args: list[str], stdin: str = "") -> tuple[int, str, str]:
    r = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, input=stdin,
                       env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin", "LEDGER_AGENT": "probe"})
    return r.returncode, r.stdout, r.stderr


@pytest.mark.parametrize("args", [
    ["recall", "python"],
    ["recall", "python", "--json", "--limit", "3"],
    ["recall", "--mode", "keyword", "python", "cluster:code"],
    ["recall", "--limit=2", "node.js", "--agent", "codex"],
    ["recall"],  # nothing to recall: the same ✕ error
    ["recall", "python", "--limit", "0"],  # out of range: declined, click reports it
    ["recall", "python", "--mode", "bogus"],
    ["recall", "python", "--bogus"],
    ["recall", "--help"],
    ["search", "python", "--sort", "strength", "--json"],
    ["search", "python", "--sort", "nope"],
    ["show", "ID"],
    ["show", "ID", "--json"],
    ["show", "m_nope"],
    ["show", "m_nope", "--json"],  # errors as JSON objects with --json
    ["recall", "python", "cluster:nope"],  # unknown cluster: the same warning on stderr
    ["search", "python", "cluster:nope", "--json"],
    ["show"],
    ["remember", "The staging VPN is vpn2", "--cluster", "proc", "--note", "from ops"],
    ["remember", "--text", "Uses uv for envs", "--cluster", "code", "--json", "--topic", "tooling:uv"],
    ["remember", "-", "--cluster", "code"],
    ["remember", "no cluster given"],
    ["remember", "x", "--text", "y", "--cluster", "code"],
    ["remember", "x", "--cluster", "nope"],
])
def test_fast_path_prints_what_click_prints(tmp_path, db, args):
    path, mid = db
    args = [a.replace("ID", mid) for a in args]
    outs = []
    for code in (CLICK, FAST):
        copy = tmp_path / f"copy-{len(outs)}.db"
        shutil.copyfile(path, copy)
        rc, out, err = _run(code, args + ["--db", str(copy)], stdin="Read from stdin\n")
        outs.append((rc, _stable(out), err))
    assert outs[0] == outs[1]


def _stable(out: str) -> str:
    """Ids and timings of new rows differ between two runs; the rest must not."""
    import re

    out = re.sub(r"\b(m|cc|cf)_[0-9a-z]{14}\b", "<id>", out)
    out = re.sub(r'"(tookMs|createdAt|lastReadAt|reviewedAt)": [0-9.e+-]+', r'"\1": 0', out)
    return re.sub(r"\d+ms", "<ms>", out)
