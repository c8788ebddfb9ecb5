"""A fresh user's findings on the CLI (2026-12-01), each kept as a case of its kind and
run through the real ``ledger`` command in a subprocess on a real store (SQLite and
PostgreSQL): filters agree with what is shown, pasted help examples survive a shell,
queries and facts that start with ``-`` get a hint, and errors say what to do."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import time
from pathlib import Path

import pytest
from conftest import LEDGER_BIN
from test_cli import fail, ok


def _hits(out: str) -> list[dict]:
    return json.loads(out)["hits"]


# ------------------------------------------------------ 1: strength: compares what is shown
def test_strength_filter_agrees_with_the_strength_shown(cli):
    """Claims just remembered are shown as 51 (0.17 + 0.34 x fresh, a hair under 0.51):
    ``strength:<51`` found them all and ``strength:>50`` too."""
    for text in ("Staging deploys need the VPN up", "The API rate limit is 100 per minute",
                 "Jenkins builds run on the old runner"):
        ok(*cli("remember", text, "--cluster", "proc"))
    rc, out, err = cli("search", "", "--json")
    shown = [h["strength"] for h in _hits(ok(rc, out, err))]
    assert len(shown) == 3 and all(round(s * 100) == 51 for s in shown)
    table = ok(*cli("search", "")).splitlines()[1:]
    assert len(table) == 3 and all(line.split()[2] == "51" for line in table), table
    for query, n in [("strength:<51", 0), ("strength:>50", 3), ("strength:<52", 3), ("strength:>51", 0),
                     ("runner strength:>50", 1), ("runner strength:<51", 0)]:
        assert len(_hits(ok(*cli("search", query, "--json")))) == n, query
    assert "nothing remembered" in ok(*cli("recall", "deploys strength:<51"))
    assert "VPN" in ok(*cli("recall", "deploys strength:>50"))


# ------------------------------------------- 2: examples survive being pasted into a shell
ROOT = Path(__file__).resolve().parent.parent
SHELL_DOCS = [ROOT / "README.md", ROOT / "src" / "ledger" / "SKILL.md", ROOT / "docs" / "search.md"]


def _example_lines(cli) -> list[str]:
    """Every command line with a strength: filter that we hand out: the commands' help,
    and the bash blocks and inline commands of README, SKILL.md and docs/search.md."""
    lines = []
    for args in (["--help"], ["recall", "--help"], ["search", "--help"], ["export", "--help"]):
        rc, out, err = cli(*args, db=None)
        lines += [ln.strip() for ln in out.splitlines() if "strength:" in ln and ln.strip().startswith("ledger ")]
    for doc in SHELL_DOCS:
        text = doc.read_text()
        lines += [ln.split("#")[0].strip() for ln in text.splitlines() if ln.startswith("ledger ") and "strength:" in ln]
        lines += [m for m in re.findall(r"`(ledger [^`]*strength:[^`]*)`", text)]
    return lines


def test_every_strength_example_survives_a_shell(cli, tmp_path):
    """Run each example through bash with a stand-in ``ledger`` that prints its
    arguments: the filter must arrive whole, and no file may appear (``>40`` unquoted
    is a redirection)."""
    lines = _example_lines(cli)
    assert any("recall deploy" in ln for ln in lines), lines  # the help's example is among them
    fake = tmp_path / "bin" / "ledger"
    fake.parent.mkdir()
    fake.write_text('#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done\n')
    fake.chmod(0o755)
    work = tmp_path / "cwd"
    work.mkdir()
    for line in lines:
        p = subprocess.run(["bash", "-c", line], cwd=work, capture_output=True, text=True,
                           env={**os.environ, "PATH": f"{fake.parent}:{os.environ['PATH']}"})
        assert p.returncode == 0, (line, p.stderr)
        assert re.search(r"^strength:[<>][0-9]+$", p.stdout, re.M), (line, p.stdout)
        assert list(work.iterdir()) == [], line


def test_filter_lists_quote_strength(cli):
    """The filter lists (``ledger --help``'s epilog, README's table, SKILL.md) write the
    strength filters quoted, and say why."""
    rc, out, err = cli("--help", db=None)
    line = next(ln for ln in out.splitlines() if "strength:<40" in ln)
    assert "'strength:<40'" in line and "'strength:>70'" in line and "shell" in line
    for doc in SHELL_DOCS[:2]:
        text = doc.read_text()
        found = list(re.finditer(r"strength:[<>][0-9]", text))
        assert found and all(text[m.start() - 1] == "'" for m in found), doc


@pytest.mark.parametrize("typed,eaten", [("deploy strength:>40", "40"), ("cluster:proc strength:>5", "5")])
def test_an_unquoted_strength_filter_says_to_quote_it(cli, tmp_path, typed, eaten):
    """Typed into a real shell unquoted, ``>40`` becomes a redirection and ledger gets
    ``strength:``: searched as the word like any key without a value (pasted text is
    never refused, tests/test_query_polish.py), and the warning says what the shell did
    and to quote the filter."""
    ok(*cli("remember", "Staging deploys need the VPN up", "--cluster", "proc"))
    work = tmp_path / "cwd"
    work.mkdir()
    p = subprocess.run(["bash", "-c", f"{shlex.quote(LEDGER_BIN)} recall {typed} --db {shlex.quote(str(cli.db))}"],
                       cwd=work, capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"})
    assert p.returncode == 0 and (work / eaten).exists()  # what the shell did
    assert p.stderr.startswith("⚠ strength: has nothing after the colon") and "quote the filter" in p.stderr
    assert "'strength:>40'" in p.stderr and "shell" in p.stderr
    for verb in ("search", "recall", "export"):
        rc, out, err = cli(verb, "deploy", "strength:")
        assert rc == 0 and "shell took >N or <N" in err, (verb, err)
    # the other keys' empty values keep their own message
    rc, out, err = cli("recall", "cluster:")
    assert rc == 0 and "shell" not in err and "cluster: has nothing after the colon" in err


# ------------------------------------------------ 3: text that starts with "-" gets a hint
@pytest.mark.parametrize("args,suggested", [
    (["recall", "-v"], "ledger recall -- -v"),
    (["recall", "what", "does", "-v", "do", "--limit", "3"], "ledger recall --limit 3 -- what does -v do"),
    (["search", "--force", "push"], "ledger search -- --force push"),
    (["export", "-rf"], "ledger export -- -rf"),
])
def test_a_query_starting_with_a_dash_suggests_double_dash(cli, args, suggested):
    ok(*cli("remember", "--cluster", "code", "--text", "-v makes pytest verbose"))
    err = fail(*cli(*args, db=None))
    assert "No such option" in err and f"put -- before the words (after the options): {suggested}" in err, err
    # the suggestion works as given (with the test's store, before the --)
    given = suggested.split()[1:]
    rc, out, err = cli(given[0], "--db", cli.db, *given[1:], db=None)
    assert rc == 0, err


def test_a_fact_starting_with_a_dash_suggests_text_and_double_dash(cli):
    fact = "--force is dangerous on main"
    err = fail(*cli("remember", fact, "--cluster", "proc", db=None))
    assert f"No such option '{fact}'." in err
    assert f"ledger remember --cluster proc -- '{fact}'" in err and f"ledger remember --text '{fact}' --cluster proc" in err
    ok(*cli("remember", "--text", fact, "--cluster", "proc"))  # both suggestions store it
    ok(*cli("remember", "--cluster", "proc", "--db", cli.db, "--", "-v is verbose", db=None))
    texts = [h["text"] for h in _hits(ok(*cli("search", "--json", "--db", cli.db, "--", "--force", db=None)))]
    assert texts == [fact]
    rc, out, err = cli("remember", "-n", "--cluster", "proc", "--json", db=None)  # --json: the hint is in the JSON error
    assert rc == 1 and "ledger remember --cluster proc --json -- -n" in json.loads(err)["error"]


def test_a_near_miss_of_an_option_keeps_did_you_mean(cli):
    err = fail(*cli("search", "deploy", "--limt", "3"))
    assert "Did you mean '--limit'?" in err and "put --" not in err
    assert "put --" not in fail(*cli("forget", "-x"))  # ids never start with -: no hint


# ------------------------------------------------------- 4: asof: recalls strengthen nothing
def _now_iso() -> str:
    from datetime import datetime, timezone

    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _show(cli, mid: str) -> dict:
    return json.loads(ok(*cli("show", mid, "--json")))


def test_an_asof_recall_counts_no_read(cli):
    """The user's case: ``recall jenkins asof:...`` on a dropped memory took its hits
    from 0 to 1 and its strength from 51 to 54. A recall into the past counts nothing,
    for dropped and live memories alike, and says so; a plain recall still counts."""
    dropped = json.loads(ok(*cli("remember", "We deploy with Jenkins", "--cluster", "proc", "--json")))["id"]
    live = json.loads(ok(*cli("remember", "Jenkins agents run on the old rack", "--cluster", "proc", "--json")))["id"]
    then = _now_iso()
    time.sleep(0.01)
    ok(*cli("forget", dropped))
    before = {m: _show(cli, m) for m in (dropped, live)}
    rc, out, err = cli("recall", "jenkins", f"asof:{then}")
    assert rc == 0 and dropped in out and live in out
    assert "not counted as a retrieval" in err and "asof:" in err
    assert "The same recall without asof: reads the store as it is now and counts the read" in err
    rc, out, err = cli("recall", "jenkins", f"asof:{then}", "--json")
    assert {h["id"] for h in json.loads(out)} == {dropped, live}
    assert any(json.loads(ln).get("kind") == "not-counted" for ln in err.splitlines() if ln.startswith("{"))
    for m in (dropped, live):
        after = _show(cli, m)
        assert (after["hits"], after["strength"], after["readers"]) == (before[m]["hits"], before[m]["strength"],
                                                                         before[m]["readers"]), m
    rc, out, err = cli("recall", "jenkins", "--agent", "codex")  # now: only the live one, counted
    assert live in out and dropped not in out and "not counted" not in err
    assert _show(cli, live)["hits"] == before[live]["hits"] + 1 and "codex" in _show(cli, live)["readers"]
    assert _show(cli, dropped)["hits"] == 0
    rc, out, err = cli("recall", "nothing-like-this", f"asof:{then}")
    assert rc == 0 and "not counted" not in err  # no hits: nothing to warn about


# ------------------------------------------------------------- 5: errors say what to do
def test_a_folder_as_the_store_says_to_name_the_file(cli, tmp_path):
    folder = tmp_path / "somedir"
    folder.mkdir()
    for verb in (["recall", "x"], ["search", "x"], ["stats"], ["remember", "a fact", "--cluster", "proc"]):
        err = fail(*cli(*verb, db=folder))
        assert f"{folder} is a folder, not a store file" in err and f"--db {folder / 'ledger.db'}" in err, err
        err = fail(*cli(*verb, db=None, env={"LEDGER_DB": str(folder)}))
        assert "it is a folder, not a store file" in err and "$LEDGER_DB" in err and str(folder / "ledger.db") in err, err
        assert "permissions" not in err
    assert list(folder.iterdir()) == []  # nothing written into it
    ok(*cli("remember", "a fact", "--cluster", "proc", db=folder / "ledger.db"))  # the suggestion works
    assert "1  memory " in ok(*cli("stats", db=folder / "ledger.db"))


@pytest.mark.parametrize("args,usage,example", [
    (["show"], "Usage: ledger show MEMORY_ID", "e.g. ledger show m_"),
    (["link", "m_abc"], "Usage: ledger link A B", "e.g. ledger link m_abc123 m_def456"),
    (["judge"], "Usage: ledger judge CANDIDATE", "e.g. ledger judge cc_"),
    (["resolve"], "Usage: ledger resolve CONFLICT [OUTCOME]", "e.g. ledger resolve cf_"),
    (["sources", "trust"], "Usage: ledger sources trust SOURCE_ID VALUE", None),
])
def test_a_missing_argument_shows_usage_and_an_example(cli, args, usage, example):
    for json_flag in ([], ["--json"]):
        rc, out, err = cli(*args, *json_flag)
        assert rc == 1
        msg = json.loads(err)["error"] if json_flag else err
        assert "Missing argument" in msg and usage in msg and f"Run `ledger {' '.join(args[:2] if args[0] == 'sources' else args[:1])} --help`" in msg
        if example:
            assert example in msg
    if args == ["show"]:
        assert "`ledger search` lists memory ids" in err


@pytest.mark.parametrize("args", [["recall", "x", "--limit", "abc"], ["search", "x", "--limit", "abc"],
                                  ["recall", "x", "--limit", "0"], ["search", "x", "--limit=99999"],
                                  ["conflicts", "--limit", "lots"]])
def test_a_bad_number_says_which_numbers(cli, args):
    err = fail(*cli(*args))
    assert "expected a whole number from 1 to" in err and "e.g. --limit " in err and "integer range" not in err, err


@pytest.mark.parametrize("order", [
    ["--json", "recall", "deploy"],
    ["--json", "--db", "DB", "recall", "deploy"],
    ["--db", "DB", "--json", "recall", "deploy"],
    ["--db=DB", "--json", "search", "deploy"],
    ["--json", "recall", "deploy", "--limit", "1"],
])
def test_json_before_the_command_like_db(cli, order):
    ok(*cli("remember", "Staging deploys need the VPN up", "--cluster", "proc"))
    args = [str(cli.db) if a == "DB" else a.replace("=DB", f"={cli.db}") for a in order]
    rc, out, err = cli(*args, db=None if "DB" in order or "--db=DB" in order else True)
    data = json.loads(ok(rc, out, err))
    hits = data if isinstance(data, list) else data["hits"]
    assert [h["text"] for h in hits] == ["Staging deploys need the VPN up"]
    rc, out, err = cli("--json", "show", "m_nope")  # errors too come as JSON
    assert rc == 1 and json.loads(err)["kind"] == "unknown-memory"


# ------------------------------------------------ 6: README's search paragraph holds true
def test_readme_search_paragraph_says_what_the_modes_do(cli):
    """README said "widened by trigram fuzzy matching" and "--mode keyword|fuzzy narrows
    the match"; fuzzy widens. What it says now, run: a prefix and a typo are found in
    the default mode, neither with --mode keyword, and every mode it names exists."""
    from ledger.vocab import MODES

    readme = (ROOT / "README.md").read_text()
    para = readme[readme.index("Ranking is exact at any store size"):].split("\n\n")[0]
    assert "trigram" not in para and "narrows" not in para
    assert {m for m in MODES if f"--mode {m}" in para} == set(MODES)
    ok(*cli("remember", "Staging deploys need the VPN up", "--cluster", "proc"))
    ok(*cli("remember", "The invoice terms for acme are net 30", "--cluster", "proc"))
    for query, text in [("stag", "Staging"), ("invoce", "invoice")]:  # a prefix, a typo
        assert text in ok(*cli("search", query)) and text in ok(*cli("search", query, "--mode", "fuzzy"))
        assert text not in ok(*cli("search", query, "--mode", "keyword"))
    assert "invoice" in ok(*cli("search", "terms", "--mode", "keyword"))
    # the quick start keeps its two commands
    assert "./scripts/demo     # set up .venv" in readme and "./scripts/test     # set up .venv" in readme


# ------------------------------------------ 7: wide characters keep the columns in line
def _columns(text: str) -> int:
    import unicodedata

    return sum(0 if unicodedata.combining(c) or unicodedata.category(c) in ("Mn", "Me", "Cf")
               else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


WIDE = ["我们使用連接池 for the database pool", "東京に行きます next week for the offsite meeting with the whole team and more",
        "데이터베이스 백업은 매일 밤 실행됩니다", "Plain ascii fact about deploys", "Café naïve ｆｕｌｌｗｉｄｔｈ text 👍 emoji",
        "東" * 60]


def test_search_table_columns_line_up_with_cjk_text(cli):
    """The user's case: rows with Chinese, Japanese or Korean text pushed the cluster
    column right (a wide character takes two columns, ljust counted one)."""
    for i, text in enumerate(WIDE):
        ok(*cli("remember", text, "--cluster", "proc" if i % 2 else "code"))
    ok(*cli("clusters", "add", "数据库 团队"))
    ok(*cli("remember", "連接池 is sized at 20", "--cluster", "数据库-团队"))
    rows = ok(*cli("search", "")).splitlines()[1:]
    assert len(rows) == len(WIDE) + 1
    cluster_at, age_at = set(), set()
    for row in rows:
        label = next(lb for lb in ("codebases", "procedures", "数据库 团队") if lb in row)
        cluster_at.add(_columns(row[: row.index(label)]))
        age_at.add(_columns(row[: row.rindex(" ") + 1]))
    assert len(cluster_at) == 1 and len(age_at) == 1, rows  # one column each, whatever the text
    rows = ok(*cli("clusters")).splitlines()
    counts = {_columns(r) - len(r.split()[-1]) for r in rows}
    assert len(counts) == 1, rows


def test_clusters_columns_line_up_whatever_the_id_and_label(cli):
    """The issue's case: a cluster id of 14 characters or more ran into its label (the
    id column was 14 wide whatever the ids), and a label of 20 or more into the count.
    Ours besides: CJK and fullwidth labels and ids (two columns a character), a label
    longer than the column shows (cut with …, whole in --json), a tab in a label."""
    labels = ["infrastructure and deployment pipelines", "数据库连接池配置", "ｆｕｌｌｗｉｄｔｈ notes",
              "a label that goes on and on and on, far past what a column shows", "tabbed\tlabel"]
    for label in labels:
        ok(*cli("clusters", "add", label))
    ok(*cli("remember", "Pipelines deploy from main", "--cluster", "infrastructure-and-deployment-pipelines"))
    ok(*cli("remember", "連接池 is sized at 20", "--cluster", "数据库连接池配置"))
    rows = ok(*cli("clusters")).splitlines()
    assert len(rows) == 10 + len(labels)
    by_id = {c["id"]: c for c in json.loads(ok(*cli("clusters", "--json")))}
    label_at, count_at = set(), set()
    for row in rows:
        cid = row.split()[0]
        shown = row[len(cid):].strip().rsplit(" ", 1)[0].strip()  # the label as shown
        assert row.endswith(f" {by_id[cid]['count']}"), row
        label_at.add(_columns(row[: row.index(shown, len(cid))]))
        count_at.add(_columns(row.rstrip("0123456789")))
        full = " ".join(by_id[cid]["label"].split())
        assert shown == full or (shown.endswith("…") and full.startswith(shown[:-1]) and _columns(shown) <= 40), row
    assert len(label_at) == 1 and len(count_at) == 1, rows
    # The default clusters keep the look they had.
    assert any(r.startswith("prefs ") and "preferences " in r for r in rows)
    assert by_id["infrastructure-and-deployment-pipelines"]["count"] == 1


@pytest.mark.parametrize("args,expected", [
    (["show", "m_a", "m_b"], ["Got unexpected extra argument (m_b).", "Usage: ledger show MEMORY_ID", "e.g. ledger show m_",
                              "in quotes, as one argument", "Run `ledger show --help`."]),
    (["link", "a", "b", "c"], ["Usage: ledger link A B", "e.g. ledger link m_abc123 m_def456"]),
    (["recall", "x", "--limit"], ["Option '--limit' requires an argument, e.g. --limit 10.", "Run `ledger recall --help`."]),
    (["search", "x", "--mode"], ["e.g. --mode hybrid."]),
    (["remember", "a fact", "--cluster"], ["Option '--cluster' requires an argument. Run `ledger remember --help`."]),
])
def test_other_usage_errors_say_what_to_do(cli, args, expected):
    err = fail(*cli(*args, db=None))
    for part in expected:
        assert part in err, (part, err)
    assert "Sentinel" not in err


@pytest.mark.parametrize("flag", ["--db", "--json"])
def test_a_global_option_without_a_command_says_it_goes_with_one(cli, flag):
    err = fail(*cli(flag, db=None))
    assert f"{flag} goes with a command, before or after it: ledger {flag}" in err and "recall deploy" in err
