"""Start-up budget of the agent verbs (issue 14; docs/benchmarks.md "Start-up").

``recall``, ``search``, ``remember`` and ``show`` run as a fresh process per agent call,
so what they import is latency paid on every call. These tests run each verb in a real
subprocess and compare the modules it imported with the budget below; a new import on
this path must be added here on purpose (and measured with ``bench/startup.py``).
They also check that the fast path (argparse) prints exactly what the click app prints.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import is_pg, pg_driver_modules, store_sql

# Every module an agent verb may import beyond the interpreter's own start-up (`python -c
# pass`). The standard library part is what the C module _sqlite3 (functools) and the
# tokeniser (unicodedata) bring with them; not the sqlite3 package, whose dbapi2 imports
# datetime for adapters ledger never uses (ledger.store._sqlite), nor contextlib (the
# store's transactions are small classes). Not argparse
# (with gettext and locale), threading or dataclasses (inspect, ast, dis, tokenize: about 0.9x `python -c pass`):
# docs/benchmarks.md "Start-up". Not re either (with enum, copyreg and its parser: about
# 4 ms): ledger's patterns are built from stored matcher code (ledger.regex), and the
# `_sre` engine is all they need.
STDLIB_BUDGET = frozenset("""
    __future__ _collections _functools _operator _sqlite3 _sre collections collections.abc
    functools itertools keyword math operator reprlib types unicodedata
""".split())
# What --json adds: json, which imports re (and so enum and re's parser) itself.
JSON_EXTRA = frozenset("""
    _json copyreg enum json json.decoder json.encoder json.scanner re re._casefix re._compiler re._constants re._parser
""".split())
LEDGER_BUDGET = frozenset("""
    ledger ledger.cli ledger.cli.fast ledger.cli.hints ledger.cli.render ledger.cli.verbs ledger.clock ledger.errors
    ledger.filekeys ledger.frozen ledger.ids ledger.models ledger.paths ledger.query ledger.query.parser ledger.regex
    ledger._regex_code ledger.service ledger.store ledger.store._sqlite
    ledger.store.connection ledger.store.migrations ledger.store.ops ledger.store.rows
    ledger.store.search ledger.store.sources ledger.store.sqlbits ledger.store.stats ledger.store.store
    ledger.store.textindex ledger.store.watch ledger.strength ledger.termfmt ledger.terms ledger.text ledger.vocab
    ledger.wire
""".split())
# Only remember runs the contradiction proposer.
# (difflib only when a pair of claims lines up: not on this probe's store.)
# Its patterns come from stored matcher code (ledger.regex) too.
REMEMBER_EXTRA = frozenset({"ledger.conflicts", "ledger.conflicts.duplicates", "ledger.conflicts.signals",
                            "ledger.conflicts.values", "ledger.conflicts.wording", "ledger.store.conflicts",
                            "ledger.redact"})  # what is stored is redacted first
# Never on the default (text) output of the four verbs: the regular-expression parser
# and what importing re brings, and json.
NOT_BY_DEFAULT = ("re", "enum", "copyreg", "json", "_json")
NEVER = ("click", "rich", "textual", "starlette", "uvicorn", "httpx", "ledger.web", "ledger.tui", "ledger.harness",
         "ledger.watcher", "ledger.ingest", "ledger.cli.app", "typing", "pathlib", "secrets", "shutil", "hashlib",
         "dataclasses", "inspect", "ast", "dis", "tokenize", "argparse", "gettext", "locale", "threading", "warnings")

PROBE = """
import sys
before = set(sys.modules)
from ledger.cli import main
rc = main(sys.argv[1:])
sys.stderr.write("\\nMODULES " + " ".join(sorted(set(sys.modules) - before)) + "\\n")
sys.exit(rc)
"""


def _imported(args: list[str]) -> tuple[int, str, set[str]]:
    r = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin"})
    line = [x for x in r.stderr.splitlines() if x.startswith("MODULES ")]
    assert line, r.stderr
    return r.returncode, r.stdout, set(line[-1][len("MODULES "):].split())


def _seeded(path) -> tuple[str, str]:
    """(the store, the id of the one memory written into it)."""
    from ledger.service import Ledger

    with Ledger.open(path) as led:
        m = led.remember("CI runs on Python 3.11 with node.js 20", cluster="code", agent="claude").memory
    return str(path), m.id


@pytest.fixture()
def db(store_target):
    return _seeded(store_target)


@pytest.mark.parametrize("verb", [
    ["recall", "python", "ci"],
    ["recall", "python", "note:", "http://example.com"],  # word: tokens that are no filter (no difflib)
    ["recall", "--json", "cluster:code"],
    ["search", "python"],
    ["show", "ID"],
    ["show", "ID", "--json"],
    ["remember", "Deploys need the VPN", "--cluster", "proc"],
])
def test_agent_verbs_stay_inside_the_import_budget(db, verb, engine):
    path, mid = db
    args = [a.replace("ID", mid) for a in verb] + ["--db", path]
    rc, out, mods = _imported(args)
    assert rc == 0 and out.strip(), out
    budget = STDLIB_BUDGET | LEDGER_BUDGET | (REMEMBER_EXTRA if verb[0] == "remember" else frozenset())
    if "--json" in verb:
        budget |= JSON_EXTRA
    elif engine == "sqlite":  # (the PostgreSQL driver imports re and json itself)
        for name in NOT_BY_DEFAULT:
            assert not any(m == name or m.startswith(name + ".") for m in mods), name
    never = NEVER
    if engine == "postgresql":  # the driver and its dialect modules, and nothing else
        driver = pg_driver_modules()
        assert "psycopg" in mods
        budget |= driver | {"ledger.store.pg", "ledger.store.textindex_pg"}
        never = tuple(n for n in NEVER if n not in driver)
    else:
        assert "psycopg" not in mods
    assert sorted(mods - budget) == []
    if verb[0] in ("remember", "show"):  # they parse no query: the parser is imported by searches only
        assert not {"ledger.query", "ledger.query.parser"} & mods
    for name in never:
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
    # How the command line is read: options and words intermixed, `=`, repeats, and what
    # click takes for an option (the fast path leaves those to click). `--` is tested in
    # test_parse_reads_the_command_line_as_click_does: here the --db appended after it
    # would be words, and the command would use the default store.
    ["recall", "--json", "--limit", "2", "--mode", "keyword", "--agent=codex", "python"],
    ["recall", "python", "--limit", "5", "--limit=1"],
    ["recall", "", "python"],
    ["recall", "-5", "degrees"],
    ["recall", "python", "--json=1"],
    ["recall", "python", "--limit"],
    ["recall", "python", "--limit", "two"],
    ["recall", "python", "--lim", "3"],
    ["recall", "python", "-n", "3"],
    ["search", "--sort=strength", "python", "--limit=2"],
    ["search", "python", "--agent", "codex"],
    ["show", "ID", "extra"],
    ["remember", "-v is verbose", "--cluster", "code"],
    ["remember", "--text", "-v", "--cluster", "code"],
    ["remember", "--text=-v", "--cluster", "code", "--json"],
    ["remember", "Two files", "--file", "a.txt", "--file=b.txt", "--cluster", "code", "--note="],
])
def test_fast_path_prints_what_click_prints(new_store, args):
    outs = []
    for code in (CLICK, FAST):  # each on its own store holding the same memory (ids differ)
        path, mid = _seeded(new_store())
        rc, out, err = _run(code, [a.replace("ID", mid) for a in args] + ["--db", str(path)], stdin="Read from stdin\n")
        outs.append((rc, _stable(out), err.replace(str(path), "<db>")))  # a hint may repeat the command line
    assert outs[0] == outs[1]


def test_parse_reads_the_command_line_as_click_does():
    from ledger.cli.fast import parse

    a = parse("recall", ["deploy", "--limit", "3", "--json", "cluster:proc", "--mode=keyword", "--agent", "codex"])
    assert a == {"db": None, "limit": 3, "mode": "keyword", "agent": "codex", "json": True,
                 "query": ["deploy", "cluster:proc"]}
    assert parse("recall", ["a", "--", "--json", "-x", "--limit"])["query"] == ["a", "--json", "-x", "--limit"]
    r = parse("remember", ["-", "--file", "a", "--file=b", "--note=", "--cluster", "code", "--text", "t"])
    assert (r["words"], r["file"], r["note"], r["cluster"], r["text"]) == (["-"], ("a", "b"), "", "code", "t")
    assert parse("show", ["m_1", "--db=x.db"]) == {"db": "x.db", "json": False, "memory_id": "m_1"}
    assert parse("search", [])["query"] == [] and parse("search", [])["limit"] == 25
    for verb, args in [("recall", ["-5"]), ("recall", ["--limit"]), ("recall", ["--limit", "x"]),
                       ("recall", ["--json=1"]), ("recall", ["--lim", "3"]), ("recall", ["--sort", "strength"]),
                       ("remember", ["--text", "-v"]), ("remember", ["-v is verbose"]), ("show", []),
                       ("show", ["a", "b"]), ("search", ["--agent", "x"])]:
        assert parse(verb, args) is None, (verb, args)


def test_a_folder_as_store_is_reported_as_click_does(tmp_path):
    outs = [_run(code, ["recall", "python", "--db", str(tmp_path)]) for code in (CLICK, FAST)]
    assert outs[0] == outs[1] and outs[0][0] != 0 and "is a folder, not a store file" in outs[0][2]


# The console command (main() without arguments) ends with os._exit once its output is
# flushed, leaving the store open: closing would checkpoint the WAL with two fsyncs.
CONSOLE = "import sys; from ledger.cli import main; sys.exit(main())"


def test_the_console_command_prints_the_same_and_loses_nothing(db, new_store):
    path, mid = db
    for args in (["recall", "python"], ["search", "node.js"], ["show", "m_nope", "--json"], ["recall", "python", "--bogus"]):
        outs = []
        for code in (FAST, CONSOLE):  # each on a store of its own: recall counts its read (and leaves a WAL)
            copy, _ = _seeded(new_store())
            rc, out, err = _run(code, args + ["--db", str(copy)])
            outs.append((rc, _stable(out), err.replace(str(copy), "<db>")))
        assert outs[0] == outs[1], args
    rc, out, _ = _run(CONSOLE, ["remember", "The VPN host is vpn2", "--cluster", "proc", "--db", path])
    assert rc == 0 and out.startswith("remembered m_")
    import os

    if not is_pg(path):
        assert os.path.exists(path + "-wal")  # left open: the last writer did not checkpoint
    rc, out, _ = _run(CONSOLE, ["recall", "vpn2", "--db", path, "--json"])
    hits = json.loads(out)
    assert rc == 0 and [h["text"] for h in hits] == ["The VPN host is vpn2"]
    rc, out, _ = _run(CONSOLE, ["show", hits[0]["id"], "--db", path, "--json"])
    assert json.loads(out)["hits"] == 1  # the recall's count was committed
    if not is_pg(path):
        assert store_sql(path, "PRAGMA integrity_check") == [("ok",)]
    rc, _, err = _run(CONSOLE, ["show", "m_nope", "--db", path])
    assert rc == 1 and err.startswith("✕ ")  # errors end the same way, with their status


def _stable(out: str) -> str:
    """Ids and timings of new rows differ between two runs; the rest must not."""
    import re

    out = re.sub(r"\b(m|cc|cf)_[0-9a-z]{14}\b", "<id>", out)
    out = re.sub(r"(?m)^[0-9a-z]{6}(?=  )", "<short id>", out)  # search's table starts with the id's last 6
    out = re.sub(r'"(tookMs|createdAt|lastReadAt|reviewedAt|at|replacedAt)": [0-9.e+-]+', r'"\1": 0', out)
    return re.sub(r"\d+ms", "<ms>", out)


def test_the_console_command_runs_without_the_cycle_collector(db, monkeypatch, capsys):
    """The console command of an agent verb turns the cyclic garbage collector off (a
    short process ending with os._exit); a call the fast path hands to click turns it
    back on, and main(argv) called from Python never touches it."""
    import gc

    import ledger.cli as cli

    path, mid = db
    seen = []

    def end(rc):
        seen.append((rc, gc.isenabled()))
        raise SystemExit(rc)

    monkeypatch.setattr(cli, "_end", end)
    try:
        monkeypatch.setattr(sys, "argv", ["ledger", "show", mid, "--db", path])
        with pytest.raises(SystemExit):
            cli.main()
        assert seen == [(0, False)]
        gc.enable()
        monkeypatch.setattr(sys, "argv", ["ledger", "show", "--help"])
        assert cli.main() == 0 and seen == [(0, False)]
        assert gc.isenabled() and "Usage" in capsys.readouterr().out
        gc.disable()
        assert cli.main(["show", mid, "--db", path]) == 0 and not gc.isenabled()
    finally:
        gc.enable()
