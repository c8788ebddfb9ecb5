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
    assert rc == 1 and "Check the path" in err and "ledger bug" not in err
