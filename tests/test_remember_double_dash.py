"""``ledger remember`` with options after ``--`` (fresh-user findings, 2026-12-01).

After ``--`` every word is the fact's text, options too. ``ledger remember -- "--force
is bad" --cluster proc`` said "--cluster is required" although the user typed it, and
``ledger remember --cluster proc -- "--force is bad" --note x`` stored "--force is bad
--note x" in silence. Now the first error says --cluster came after -- and shows the
command with its options first; the second stores the text as asked (a fact may well
mention --note) and warns, on stderr or as a JSON object with --json, naming the options
and the command that would have taken them. Both CLI paths (the fast path, and the click
app it hands other calls to) as real subprocesses on real stores."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import LEDGER_BIN, Cli
from test_cli import fail, ok

CLICK = "import sys; from ledger.cli.app import run; sys.exit(run(sys.argv[1:]))"


@pytest.fixture(params=["fast", "click"])
def cli(request, store_target, tmp_path):
    """``ledger <args> --db <store>`` through the console command (fast path for the
    agent verbs) or straight through the click app."""

    def run(*args, db=store_target):
        argv = [LEDGER_BIN] if request.param == "fast" else [sys.executable, "-c", CLICK]
        tail = ["--db", str(db)] if db is not None else []
        # --db before any --: after it, it would be text too.
        if "--" in args:
            i = args.index("--")
            args = (*args[:i], *tail, *args[i:])
            tail = []
        p = subprocess.run([*argv, *args, *tail], capture_output=True, text=True, timeout=60, cwd=tmp_path,
                           env={**os.environ, "NO_COLOR": "1"})
        return p.returncode, p.stdout, p.stderr

    run.db = str(store_target)
    # The store exists: the first write to a new one also says it created it (stderr).
    Cli(store_target).create_store()
    return run


def _texts(cli) -> list[str]:
    return [h["text"] for h in json.loads(ok(*cli("search", "--json", "--", "--force")))["hits"]]


def test_cluster_after_double_dash_is_named_and_the_fix_shown(cli):
    err = fail(*cli("remember", "--", "--force is bad", "--cluster", "proc"))
    assert "--cluster came after --" in err and "everything after -- is the fact's text" in err, err
    suggested = err.split("Put the options first: ")[1]
    assert suggested.startswith("ledger remember --db ") and suggested.endswith("--cluster proc -- '--force is bad'")
    assert _texts(cli) == []  # nothing stored
    # The suggestion runs as given.
    import shlex

    ok(*cli(*shlex.split(suggested)[1:], db=None))
    assert _texts(cli) == ["--force is bad"]
    # With --json the error is the JSON error; an option without its value shows where it goes.
    rc, out, errout = cli("remember", "--json", "--", "-x is short", "--cluster")
    assert rc == 1 and "--cluster <id> -- '-x is short'" in json.loads(errout)["error"]
    # No --cluster anywhere: the usual message.
    assert "--cluster is required" in fail(*cli("remember", "--", "--force is bad"))


def test_options_after_double_dash_are_stored_as_text_with_a_warning(cli):
    rc, out, err = cli("remember", "--cluster", "proc", "--", "--force is bad", "--note", "x")
    assert rc == 0 and out.startswith("remembered "), err
    assert err.startswith("⚠ --note came after --, so it was stored as text") and err.count("\n") == 1, err
    assert '"--force is bad --note x"' in err and "ledger remember --cluster proc --db " in err
    assert err.endswith("--note x -- '--force is bad'\n")
    assert "forget this one (ledger forget <id>) and remember it again with the options first" in err  # no edit command
    assert _texts(cli) == ["--force is bad --note x"]
    rc, out, err = cli("remember", "--cluster", "proc", "--json", "--", "--force is bad", "--topic=t", "--file", "a.py")
    assert rc == 0 and json.loads(out)["text"] == "--force is bad --topic=t --file a.py"
    (w,) = [json.loads(line) for line in err.splitlines()]
    assert w["kind"] == "options-as-text" and w["options"] == ["--topic", "--file"]
    assert "--topic=t --file a.py -- '--force is bad'" in w["warning"]


@pytest.mark.parametrize("words", [
    ["--force is bad"],  # one word starting with an option-like prefix
    ["use", "--notes", "not", "-n"],  # not remember's options
    ["--", "x"],  # a second -- is text
])
def test_text_after_double_dash_that_is_no_option_stores_quietly(cli, words):
    rc, out, err = cli("remember", "--cluster", "proc", "--", *words)
    assert rc == 0 and out.startswith("remembered ") and err == "", err


def test_the_options_list_matches_the_click_command():
    from ledger.cli.app import remember
    from ledger.cli.verbs import REMEMBER_OPTIONS

    opts = {o: not (p.is_flag or p.count) for p in remember.params if p.param_type_name == "option"
            for o in p.opts if o.startswith("--") and o != "--help"}
    assert opts == REMEMBER_OPTIONS
