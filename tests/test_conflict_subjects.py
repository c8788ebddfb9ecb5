"""Claims about different subjects are never conflict candidates (docs/contradictions.md,
"Subjects"): two files, two commands, two named things hold their own values. Pure rules
first, then ``remember`` on both engines, then the watcher through real hook processes
with the no-LLM distiller (the tester's Ecto migrations and pytest targets)."""

from __future__ import annotations

import time

import pytest
from conftest import BOTH_ENGINES, spool_settled, store_sql
from fakes.hooks import post_bash, post_read, run_hook

from ledger.conflicts.duplicates import propose
from ledger.conflicts.subjects import different_subjects, head_name, same_name
from ledger.filekeys import file_key

ENGINES = BOTH_ENGINES


@pytest.mark.parametrize("text,name", [
    ("`pytest -q  tests/unit` works (exit 0): 12 passed", "`pytest -q tests/unit`"),
    ("priv/repo/migrations/create_users.exs (10 lines, 175 bytes) top-level: def change (4)",
     "priv/repo/migrations/create_users.exs"),
    ("The migration create_users.exs adds a name column", "create_users.exs"),
    ("In ./src/app.py, PORT is 8080", "src/app.py"),
    ("MyApp.Users has 3 functions", "myapp.users"),
    ("Running `make test` takes 90s", "`make test`"),
    ("users.exs has 10 lines", "users.exs"),
    # no name at the head: the name further on is the value
    ("The entry point is src/app/main.py", None),
    ("The config lives in src/app.py", None),
    ("Uses src/app.py as the entry point", None),
    ("Alice owns the billing service", None),
    ("Port: app.cfg", None),
    ("", None),
    ("`", None),
])
def test_the_head_name_is_the_name_a_claim_opens_with(text, name):
    assert head_name(text) == name


def test_a_path_and_its_tail_name_one_file_but_commands_must_match_whole():
    assert same_name("create_users.exs", "priv/repo/migrations/create_users.exs")
    assert not same_name("users.exs", "priv/create_users.exs")
    assert not same_name("`pytest -q`", "`pytest -q tests`")


# (a, b, proposed?) — the kind: different subjects never; one subject with two values yes.
PAIRS = [
    ("`pytest -q tests/unit` works (exit 0): 12 passed in 0.3s.",
     "`pytest -q tests/integration` works (exit 0): 40 passed in 2.1s.", False),
    ("`pytest -q tests/unit` works (exit 0): 12 passed in 0.3s.",
     "`pytest -q tests/unit` works (exit 0): 14 passed in 0.3s.", True),
    ("`make test` takes 90s", "`make lint` takes 20s", False),
    ("`make test` takes 90s", "`make test` takes 20s", True),
    ("users.exs has 10 lines", "users.exs has 12 lines", True),
    ("users.exs has 10 lines", "posts.exs has 12 lines", False),
    ("app.cfg sets PORT to 8080", "web.cfg sets PORT to 9090", False),
    ("app.cfg sets PORT to 8080", "app.cfg sets PORT to 9090", True),
    ("src/app.py defines 3 routes", "src/api.py defines 5 routes", False),
    ("MyApp.Users has 3 functions", "MyApp.Posts has 5 functions", False),
    ("The migration create_users.exs adds a name column", "The migration create_posts.exs adds a name column", False),
    ("The users table migration adds name", "The posts table migration adds name", False),
    # a name that is the value, not the subject, still makes a candidate
    ("The entry point is src/app/main.py", "The entry point is lib/app/main.py", True),
    ("app.cfg points the entry point at src/app/main.py", "app.cfg points the entry point at lib/app/main.py", True),
]


@pytest.mark.parametrize("a,b,proposed", PAIRS)
def test_pairs_about_different_subjects_are_not_suspected(a, b, proposed):
    suspected = propose(a, b) is not None and not different_subjects(a, b)
    assert suspected is proposed
    assert different_subjects(a, b) == different_subjects(b, a)


def test_file_keys_tell_subjects_apart_when_both_claims_have_them():
    a, b = "The migration has 3 columns", "The migration has 5 columns"
    assert different_subjects(a, b, ["/p/users.exs"], ["/p/posts.exs"])
    assert not different_subjects(a, b, ["/p/users.exs"], ["/p/users.exs", "/p/x.exs"])
    assert not different_subjects(a, b, ["/p/users.exs"], [])  # nothing tells them apart


# ---------------------------------------------------------------- remember, both engines


def _remember(led, text, *paths, agent="alice"):
    return led.remember(text, cluster="code", agent=agent, files=[file_key(str(p)) for p in paths])


@pytest.mark.parametrize("a,b,proposed", [p for p in PAIRS if p[0].startswith(("The users", "users.exs", "`pytest"))])
def test_remember_proposes_only_claims_about_one_subject(ledger, a, b, proposed):
    _remember(ledger, a)
    res = _remember(ledger, b, agent="bob")
    assert bool(res.proposed) is proposed
    assert ledger.candidate_count() == int(proposed)


def test_remember_compares_claims_keyed_to_files_only_when_they_share_one(ledger, tmp_path):
    users, posts = tmp_path / "create_users.exs", tmp_path / "create_posts.exs"
    users.write_text("x\n")
    posts.write_text("y\n")
    _remember(ledger, "The migration has 3 columns", users)
    assert not _remember(ledger, "The migration has 5 columns", posts, agent="bob").proposed
    # the same file: the same subject, two values
    assert _remember(ledger, "The migration has 4 columns", users, agent="carol").proposed
    # a claim keyed to no file is compared by its words alone
    assert _remember(ledger, "The migration has 6 columns", agent="dave").proposed


def test_editing_a_claim_reruns_the_proposer_with_its_subject(ledger):
    a = _remember(ledger, "users.exs has 10 lines").memory
    b = _remember(ledger, "posts.exs has 10 lines", agent="bob").memory
    ledger.update(b.id, text="posts.exs has 12 lines")
    assert ledger.candidate_count() == 0
    ledger.update(b.id, text="users.exs has 12 lines")
    assert {c.a.id for c in ledger.candidates()} | {c.b.id for c in ledger.candidates()} == {a.id, b.id}


# ---------------------------------------------------------------- the watcher, real hooks

MIGRATION = """defmodule MyApp.Repo.Migrations.Create{T} do
  use Ecto.Migration

  def change do
    create table(:{t}) do
      add :name, :string
      timestamps()
    end
  end
end
"""


def _watcher_claims(db):
    return store_sql(db, "SELECT text FROM memories WHERE writer = 'watcher' AND deleted_at IS NULL")


def _wait_claims(db, n, timeout=60):
    deadline = time.monotonic() + timeout
    rows = []
    while time.monotonic() < deadline:
        spool_settled(db)
        rows = _watcher_claims(db)
        if len(rows) >= n:
            return rows
        time.sleep(0.2)
    raise AssertionError(f"{len(rows)} of {n} watcher claims after {timeout}s: {rows}")


def test_outlines_of_same_shaped_files_and_test_targets_are_no_conflicts(tmp_path, store_target):
    proj = tmp_path / "proj"
    mig = proj / "priv" / "repo" / "migrations"
    mig.mkdir(parents=True)
    env = {"LEDGER_DB": store_target, "LEDGER_LLM_BACKEND": "fallback", "LEDGER_DISTILL_EVERY": "2"}
    tables = ["users", "posts", "comments", "tags", "likes", "teams"]
    for i in range(0, len(tables), 2):  # two reads per distillation, each batch stored before the next
        for t in tables[i:i + 2]:
            f = mig / f"create_{t}.exs"
            f.write_text(MIGRATION.replace("{T}", t.capitalize()).replace("{t}", t))
            assert run_hook("PostToolUse", post_read(f, f.read_text(), cwd=proj), env=env).returncode == 0
        _wait_claims(store_target, i + 2)
    for target, summary in (("tests/unit", "12 passed in 0.3s"), ("tests/integration", "40 passed in 2.1s")):
        assert run_hook("PostToolUse", post_bash(f"pytest -q {target}", stdout=summary, cwd=proj), env=env).returncode == 0
    texts = [t for (t,) in _wait_claims(store_target, len(tables) + 2)]
    assert any(t.startswith("`pytest -q tests/integration` works") for t in texts)
    assert store_sql(store_target, "SELECT count(*) FROM conflict_candidates") == [(0,)]
    # the same migration read again after it changed: one subject, two outlines, a candidate
    users = mig / "create_users.exs"
    users.write_text(users.read_text().replace("      timestamps()\n", "      add :email, :string\n      timestamps()\n"))
    assert run_hook("PostToolUse", post_read(users, users.read_text(), cwd=proj), env=env).returncode == 0
    assert run_hook("PostToolUse", post_bash("git status", stdout="", cwd=proj), env=env).returncode == 0
    _wait_claims(store_target, len(tables) + 3)
    rows = store_sql(store_target, """SELECT a.text, b.text FROM conflict_candidates c
                                      JOIN memories a ON a.id = c.a JOIN memories b ON b.id = c.b""")
    assert len(rows) == 1 and all("create_users.exs" in t for t in rows[0]), rows


def test_twenty_outlines_of_same_shaped_files_make_no_candidate_but_a_changed_one_does(ledger, tmp_path):
    from ledger.watcher.fallback import outline_fact

    names = [f"t{i:02d}" for i in range(20)]
    for n in names:
        f = tmp_path / f"create_{n}.exs"
        f.write_text(MIGRATION.replace("{T}", n.capitalize()).replace("{t}", n))
        fact = outline_fact(str(f), f.read_text(), f"priv/repo/migrations/create_{n}.exs")
        _remember(ledger, fact, f, agent="watcher")
    assert ledger.candidate_count() == 0  # was 190
    f = tmp_path / "create_t07.exs"
    f.write_text(f.read_text() + "\ndefmodule Extra do\nend\n")
    res = _remember(ledger, outline_fact(str(f), f.read_text(), "priv/repo/migrations/create_t07.exs"), f, agent="watcher")
    assert len(res.proposed) == 1 and ledger.candidate_count() == 1
