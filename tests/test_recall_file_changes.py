"""``recall`` and ``show`` say when a fact's file changed or is gone since the fact was
learned (issue 12), in text and in ``--json`` (``fileChanges``)."""

from __future__ import annotations

import json

from conftest import BOTH_ENGINES

ENGINES = BOTH_ENGINES  # the same behaviour on SQLite and PostgreSQL (tests/conftest.py)


def _remember(cli, text: str, *files) -> str:
    args = ["remember", text, "--cluster", "code", "--agent", "alice"]
    for f in files:
        args += ["--file", str(f)]
    rc, out, err = cli(*args, "--json")
    assert rc == 0, err
    return json.loads(out)["memory"]["id"] if "memory" in json.loads(out) else json.loads(out)["id"]


def test_recall_and_show_mark_changed_and_gone_files(cli, tmp_path):
    cfg = tmp_path / "app.cfg"
    cfg.write_text("PORT=8080\n")
    old = tmp_path / "old.py"
    old.write_text("def legacy(): pass\n")
    same = tmp_path / "same.toml"
    same.write_text("[tool]\n")
    a = _remember(cli, "app.cfg sets PORT to 8080", cfg)
    b = _remember(cli, "old.py defines legacy()", old)
    c = _remember(cli, "same.toml has a tool table", same)
    cfg.write_text("PORT=9090\n")
    old.unlink()

    rc, out, err = cli("recall", "PORT legacy tool table", "--agent", "bob")
    assert rc == 0, err
    lines = {l.split()[0]: l for l in out.splitlines()[1:]}
    assert lines[a].endswith("(may be stale: app.cfg changed since this was learned)")
    assert lines[b].endswith("(may be stale: old.py is gone since this was learned)")
    assert "may be stale" not in lines[c]

    rc, out, _ = cli("recall", "PORT legacy tool table", "--agent", "bob", "--json")
    by_id = {m["id"]: m["fileChanges"] for m in json.loads(out)}
    assert by_id[a] == [{"path": str(cfg.resolve()), "state": "changed"}]
    assert by_id[b] == [{"path": str(old.resolve()), "state": "gone"}]
    assert by_id[c] == []

    rc, out, _ = cli("show", a)
    assert f"  file: {cfg.resolve()}" in out and "— changed since this was learned (may be stale)" in out
    rc, out, _ = cli("show", b)
    assert "— gone since this was learned (may be stale)" in out
    rc, out, _ = cli("show", c)
    assert "may be stale" not in out
    rc, out, _ = cli("show", b, "--json")
    assert json.loads(out)["fileChanges"] == [{"path": str(old.resolve()), "state": "gone"}]
