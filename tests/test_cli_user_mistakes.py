"""A user's mistakes on the command line get a message saying what is wrong and what to
do, never "report this as a ledger bug"; no-op commands say nothing was there to do.
Everything runs the real ``ledger`` command in a subprocess."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("content", [b"hello, not a database\n", b"SQLite format 3\x00garbage", b"\x00" * 100])
def test_a_store_that_is_not_sqlite_is_the_users_mistake(cli, tmp_path, content):
    bad = tmp_path / "notsqlite.db"
    bad.write_bytes(content)
    rc, out, err = cli("stats", db=bad)
    assert rc == 1 and "not a usable SQLite file" in err and "--db" in err
    assert "ledger bug" not in err
    assert bad.read_bytes() == content  # nothing lost


@pytest.mark.parametrize("how", ["LEDGER_HOME", "LEDGER_DB", "--db"])
def test_a_regular_file_where_the_store_folder_must_be(cli, tmp_path, how):
    f = tmp_path / "f"
    f.write_text("x")
    env, db = {}, None
    if how == "LEDGER_HOME":
        env["LEDGER_HOME"] = str(f)
    elif how == "LEDGER_DB":
        env["LEDGER_DB"] = str(f / "ledger.db")
    else:
        db = f / "sub" / "ledger.db"
    rc, out, err = cli("stats", db=db, env=env)
    assert rc == 1 and f"{f} is a file, not a folder" in err and "$LEDGER_HOME" in err, err
    assert "ledger bug" not in err
    assert f.read_text() == "x"


def test_a_folder_where_the_store_file_must_be(cli, tmp_path):
    (tmp_path / "adir").mkdir()
    rc, out, err = cli("stats", db=None, env={"LEDGER_DB": str(tmp_path / "adir")})
    assert rc == 1 and "it is a folder, not a store file" in err and "$LEDGER_DB" in err and "ledger bug" not in err
    assert str(tmp_path / "adir" / "ledger.db") in err  # what to give instead


def _remember(cli, text: str) -> str:
    import json

    rc, out, err = cli("remember", text, "--cluster", "proc", "--json")
    assert rc == 0, err
    return json.loads(out)["id"]


def test_forgetting_an_already_forgotten_memory_says_so(cli):
    a, b = _remember(cli, "Staging deploys need VPN access"), _remember(cli, "The API rate limit is 100 per minute")
    rc, out, err = cli("forget", a)
    assert rc == 0 and out.strip() == "forgot 1 — still answerable by asof: queries"
    rc, out, err = cli("forget", a)
    assert rc == 0 and out.strip() == f"{a} was already forgotten; nothing to do for it"
    assert "forgot 0" not in out
    # A mix: one dropped now, one already gone; the same id twice counts once.
    rc, out, err = cli("forget", a, b, b)
    assert rc == 0 and out.splitlines() == ["forgot 1 — still answerable by asof: queries",
                                            f"{a} was already forgotten; nothing to do for it"]
    rc, out, err = cli("forget", a, b, "--json")
    import json

    assert json.loads(out) == {"forgotten": 0, "ids": [a, b], "already_forgotten": [a, b]}


@pytest.mark.parametrize("harness", ["claude-code", "codex", "opencode"])
@pytest.mark.parametrize("scope", ["--project", "--user"])
def test_uninstall_with_nothing_installed_names_no_file(cli, tmp_path, harness, scope):
    proj = tmp_path / "proj"
    proj.mkdir()
    env = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg"), "CODEX_HOME": None}
    rc, out, err = cli("uninstall", harness, scope, "--dir", proj, db=None, env=env)
    where = "here" if scope == "--project" else "for this user"
    assert rc == 0 and out.strip() == f"no ledger hooks installed for {harness} {where} (nothing removed)", err
    assert not (proj / ".claude").exists() and not (proj / ".opencode").exists() and not (proj / ".codex").exists()


@pytest.mark.parametrize("group,subs,typo,near", [
    ("config", "get, list, set", "bogus", None),
    ("config", "get, list, set", "lst", "list"),
    ("sources", "drop, trust", "bogus", None),
    ("checkpoints", "show", "bogus", None),
    ("clusters", "add", "ad", "add"),
])
def test_a_subcommand_typo_names_the_groups_subcommands(cli, group, subs, typo, near):
    rc, out, err = cli(group, typo)
    assert rc == 1
    assert f'Unknown command "{typo}" for `ledger {group}`: it has {subs}.' in err
    assert f"Run `ledger {group} --help`." in err
    assert (f"Did you mean `ledger {group} {near}`?" in err) if near else "Did you mean" not in err
    rc, out, err = cli("bogus")
    assert err.strip() == '✕ Unknown command "bogus". Run `ledger --help`.'


@pytest.mark.parametrize("args,needle", [
    (["watcher.every", "-3"], "watcher.every = -3: must be at least 1. Nothing was changed."),
    (["watcher.every", "--json", "-3"], "watcher.every = -3: must be at least 1."),
    (["watcher.every", "-0"], "watcher.every = -0: must be at least 1."),
    (["every", "abc"], 'Unknown setting "every". Did you mean "watcher.every"?'),
    (["escalate_after", "2"], 'Did you mean "watcher.escalate_after"?'),
    (["llm.bakend", "none"], 'Did you mean "llm.backend"?'),
])
def test_config_set_takes_negative_looking_values_and_suggests_the_key(cli, _isolated_home, args, needle):
    from pathlib import Path

    rc, out, err = cli("config", "set", *args, db=None)
    assert rc == 1 and needle in err, err
    assert "No such option" not in err
    assert not (Path(_isolated_home) / "config.toml").exists()  # nothing written


@pytest.mark.parametrize("args,needle", [
    (["sources", "trust", "s_abc123", "-0.5"], "The trust value must be from 0 to 1, got -0.5."),
    (["sources", "trust", "s_abc123", "-1"], "The trust value must be from 0 to 1, got -1."),
    (["checkpoints", "show", "-1"], "checkpoint id must be a number like 12 (from `ledger checkpoints`), got '-1'"),
])
def test_a_negative_positional_value_is_the_value_not_an_option(cli, args, needle):
    """click read `sources trust s_x -0.5` as the unknown option "-0" ("No such option
    '-0'"), naming neither the value nor its range."""
    cli.create_store()
    rc, out, err = cli(*args)
    assert rc == 1 and needle in err and "No such option" not in err, err


def _details(db, op: str) -> list[str]:
    from ledger.service import Ledger

    led = Ledger.open(db)
    try:
        return [e.detail for e in led.events(200) if e.op == op]
    finally:
        led.close()


def test_the_events_feed_counts_in_the_singular_for_one(cli, store_target, tmp_path):
    """One fact injected, one chunk ingested: "1 fact", "1 chunk" (2 stays plural)."""
    from fakes.hooks import pre_read, run_hook

    proj = tmp_path / "proj"
    proj.mkdir()
    target, two = proj / "model.py", proj / "two.py"
    target.write_text("x = 1\n")
    two.write_text("y = 2\n")
    for text, f in (("model.py holds the model config", target), ("two.py is generated by make gen", two),
                    ("two.py must never be edited by hand", two)):
        rc, _, err = cli("remember", text, "--cluster", "code", "--file", str(f))
        assert rc == 0, err
    for f in (target, two):
        p = run_hook("PreToolUse", pre_read(f, cwd=proj), env={"LEDGER_DB": store_target})
        assert p.returncode == 0 and p.stdout, p.stderr
    injected = _details(store_target, "watcher.inject")
    assert any(" · 1 fact · " in d for d in injected) and any(" · 2 facts · " in d for d in injected), injected
    assert not any("1 facts" in d for d in injected)
    doc = tmp_path / "note.md"
    doc.write_text("# A short note\n\nOne paragraph only.\n")
    rc, out, err = cli("ingest", str(doc), "--cluster", "reading")
    assert rc == 0, err
    assert any(d.endswith("· 1 chunk") for d in _details(store_target, "sources.ingest")), _details(store_target, "sources.ingest")


@pytest.mark.parametrize("args,needle", [
    (["judge", "", "--verdict", "unrelated"], "Which candidate? Give its id, e.g. ledger judge cc_abc123"),
    (["judge", "  ", "--verdict", "conflict"], "Which candidate?"),
    (["resolve", "", "a"], "Which conflict? Give its id, e.g. ledger resolve cf_abc123 a"),
    (["resolve", ""], "Which conflict?"),
    (["sources", "trust", "", "0.5"], "Which source? Give its id"),
    (["sources", "drop", " "], "Which source? Give its id"),
])
def test_an_empty_id_is_asked_for(cli, args, needle):
    rc, out, err = cli(*args)
    assert rc == 1 and needle in err, err
    assert " ." not in err  # never "No open conflict ."


def test_adding_a_cluster_twice_says_it_already_exists(cli):
    import json

    rc, out, err = cli("clusters", "add", "Client work")
    assert rc == 0 and out.strip() == "✓ client-work", err
    for again in (["Client work"], ["client", "WORK"], ["code"]):
        rc, out, err = cli("clusters", "add", *again)
        assert rc == 0 and "already exists; nothing changed" in out and "✓" not in out, (again, out)
    rc, out, _ = cli("clusters", "add", "Client work", "--json")
    assert json.loads(out)["created"] is False and json.loads(out)["label"] == "Client work"
    rc, out, _ = cli("clusters", "add", "Side project", "--json")
    assert json.loads(out)["created"] is True


@pytest.mark.parametrize("name,says", [("   ", "--name is only spaces"), ("", "--name is empty"),
                                       ("x" * 256, "--name must be 1-255 characters (got 256)")])
def test_ingest_name_that_names_nothing_says_so(cli, name, says):
    """Three spaces were "--name must be 1-255 characters (got 3)", the wrong problem."""
    rc, out, err = cli("ingest", "-", "--cluster", "proc", "--name", name, input="The boiler limit is 3 bar.\n")
    assert rc == 1 and says in err and out == "", err
