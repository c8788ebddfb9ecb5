"""``recall``, ``search`` and ``export`` with their own options after ``--`` (fresh-user
findings, 2026-12-01).

``--`` is how a user searches for ``--force`` (and click's "No such option" hint tells
them to add it), but everything after it is words: ``ledger search -- --force --limit 1
--mode keyword`` searched for "limit", "1", "mode" and "keyword" in silence. The query is
still searched as typed (the user may mean the word ``--limit``), and an
``options-as-text`` warning names the options and shows the command with them first, as
``remember`` does (tests/test_remember_double_dash.py). Both CLI paths (the fast path
and the click app), as real subprocesses on a real store, print the same."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

import pytest
from conftest import LEDGER_BIN
from test_cli import ok

CLICK = "import sys; from ledger.cli.app import run; sys.exit(run(sys.argv[1:]))"


@pytest.fixture
def db(tmp_path):
    path = str(tmp_path / "s.db")
    for text in ("use --force only with care", "node deploy steps: run make deploy"):
        subprocess.run([LEDGER_BIN, "remember", text, "--cluster", "proc", "--db", path], check=True,
                       capture_output=True)
    return path


def run(path: str, args: list[str], via: str = "fast") -> tuple[int, str, str]:
    argv = [LEDGER_BIN] if via == "fast" else [sys.executable, "-c", CLICK]
    p = subprocess.run([*argv, *args], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "NO_COLOR": "1", "LEDGER_DB": path})
    return p.returncode, p.stdout, p.stderr


def test_search_options_after_double_dash_are_searched_and_named(db):
    rc, out, err = run(db, ["search", "--", "--force", "--limit", "1", "--mode", "keyword"])
    assert rc == 0
    assert err.startswith("⚠ --limit, --mode came after --, so they were searched as words of the query: "
                          '"--force --limit 1 --mode keyword"'), err
    assert err.count("\n") == 1 and err.endswith("put the options first: ledger search --limit 1 --mode keyword -- --force\n")
    # The suggestion runs as given and asks what the user meant.
    line = shlex.split(err.split("options first: ")[1])
    hits = json.loads(ok(*run(db, [line[1], "--json", *line[2:]])))["hits"]
    assert [h["text"] for h in hits] == ["use --force only with care"]


@pytest.mark.parametrize("via", ["fast", "click"])
def test_both_paths_warn_alike_and_json_carries_it(db, via):
    rc, out, err = run(db, ["search", "--json", "--sort", "strength", "--", "deploy", "--limit=3", "--json"], via)
    assert rc == 0
    (w,) = [json.loads(line) for line in err.splitlines()]
    assert w["kind"] == "options-as-text" and w["options"] == ["--limit", "--json"]
    assert w["warning"].endswith("ledger search --sort strength --limit=3 --json deploy")  # --json once
    body = json.loads(out)
    assert body["warnings"] == [w]


@pytest.mark.parametrize("args", [
    ["recall", "--", "deploy", "--limit", "1"],
    ["recall", "--agent", "codex", "--", "deploy", "--mode"],  # an option without its value
    ["recall", "--json", "--", "deploy", "--db"],
    ["search", "--", "--force", "--sort"],
    ["search", "--", "--force", "--forcefully", "-n", "--limits"],  # no option of search: quiet
    ["search", "deploy", "--", "--agent", "x"],  # recall's option, not search's: quiet
])
def test_fast_path_and_click_print_the_same(db, args):
    fast, click = run(db, args, "fast"), run(db, args, "click")
    assert fast[0] == click[0] == 0 and fast[2] == click[2]
    assert ("⚠" in fast[2] or '"kind": "options-as-text"' in fast[2]) == (args[-1] not in ("--limits", "x"))


def test_recall_names_the_option_and_its_missing_value(db):
    err = run(db, ["recall", "--agent", "codex", "--", "deploy", "--mode"])[2]
    assert "--mode came after --" in err and err.endswith("ledger recall --agent codex --mode <value> deploy\n"), err


def test_an_option_given_before_and_after_double_dash_is_shown_once(db):
    rc, out, err = run(db, ["search", "--limit", "5", "--", "deploy", "--limit", "1"])
    assert rc == 0 and err.endswith("put the options first: ledger search --limit 1 deploy\n"), err


def test_export_warns_too(db):
    rc, out, err = run(db, ["export", "--", "deploy", "--db", "other.db"], "click")
    assert rc == 0 and len(out.splitlines()) == 1  # searched as typed: the deploy memory
    assert err.startswith("⚠ --db came after --, so it was searched as words of the query") and \
        err.endswith("put the options first: ledger export --db other.db deploy\n"), err


def test_option_lists_match_the_click_commands():
    from ledger.cli import app
    from ledger.cli.verbs import QUERY_OPTIONS

    for verb, opts in QUERY_OPTIONS.items():
        cmd = getattr(app, verb)
        assert opts == {o: not (p.is_flag or p.count) for p in cmd.params if p.param_type_name == "option"
                        for o in p.opts if o.startswith("--") and o != "--help"}, verb
