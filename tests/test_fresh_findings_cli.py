"""Fresh-user findings 8 and 9 (2026-12-01), through the real CLI on a real store:
queries that matched nothing in silence now warn (a ``kind:``/``type:`` value outside its
closed set, a filter given twice), ``remember --file <folder>`` is refused, and four
messages that misled say what is wrong and what to do."""

from __future__ import annotations

import json
import os

import pytest
from test_cli import fail, ok

from ledger.query import CLOSED_VALUES, filter_warnings
from ledger.service import Ledger


@pytest.fixture
def fact(cli):
    ok(*cli("remember", "The server port is 9090", "--cluster", "code"))


def warnings_of(err: str) -> list[dict]:
    return [json.loads(line) for line in err.splitlines() if line.startswith("{")]


# ---------------------------------------------------------------- finding 9: quiet queries
@pytest.mark.parametrize("verb", ["search", "recall", "export"])
@pytest.mark.parametrize("query,key,bad", [
    ("kind:bogus", "kind", ["bogus"]),
    ("port type:bogus", "type", ["bogus"]),
    ("port kind:claim kind:Nope type:doc type:x", "kind", ["nope"]),  # one bad value among good ones
])
def test_a_value_outside_a_closed_set_warns_with_the_valid_values(cli, fact, verb, query, key, bad):
    rc, out, err = cli(verb, query)
    assert rc == 0, err
    line = next(l for l in err.splitlines() if l.startswith(f"⚠ {key}:"))
    assert f"{key}:{bad[0]} is not a {key}, so it matches nothing." in line
    assert "Valid: " + ", ".join(f"{key}:{v}" for v in CLOSED_VALUES[key]) + "." in line
    if verb == "export":
        return
    rc, out, err = cli(verb, query, "--json")
    assert rc == 0, err
    (w,) = [w for w in warnings_of(err) if w.get("key") == key]
    assert w["kind"] == "unknown-value" and w["values"] == bad and w["valid"] == list(CLOSED_VALUES[key])


def test_valid_values_and_the_cluster_warning_stay_as_they_were(cli, fact):
    rc, out, err = cli("search", "port kind:claim type:chat")
    assert rc == 0 and err == "" and "9090" in out
    rc, out, err = cli("search", "port cluster:nonexistent kind:bogus", "--json")
    kinds = [w["kind"] for w in warnings_of(err)]
    assert kinds == ["unknown-cluster", "unknown-value"]


@pytest.mark.parametrize("query,key", [("asof:1h asof:2h", "asof"), ("port strength:>10 strength:<5", "strength"),
                                       ("after:2d after:2026-01-01 port", "after")])
def test_a_filter_given_twice_says_only_the_last_is_used(cli, fact, query, key):
    rc, out, err = cli("search", query)
    assert rc == 0
    used = query.split(f"{key}:")[-1].split()[0]
    assert f"⚠ {key}: given 2 times" in err and f"only the last, {key}:{used}, is used. Give it once." in err
    rc, out, err = cli("search", query, "--json")
    # (an asof: of 1h or 2h on a store begun a moment ago also warns early-asof)
    (w,) = [x for x in warnings_of(err) if x["kind"] != "early-asof"]
    assert w["kind"] == "repeated-filter" and w["key"] == key and w["used"] == used
    # the same value twice changes nothing: no warning
    rc, out, err = cli("search", f"port {key}:{used} {key}:{used}")
    assert rc == 0 and (err == "" if key != "asof" else "given 2 times" not in err and "first memory" in err)


def test_the_library_and_web_shape_carry_the_filter_warnings(store_target):
    with Ledger.open(store_target) as led:
        led.remember("Deploys need the VPN", cluster="proc", agent="t")
        res = led.search("deploys kind:claims")
        assert [w["kind"] for w in res.warnings()] == ["unknown-value"]
        assert res.to_dict()["warnings"] == res.warnings()
        assert [w for w in led.query_warnings("asof:1h asof:3h") if w["kind"] != "early-asof"] == \
            filter_warnings("asof:1h asof:3h")
        assert led.search("deploys kind:claim").warnings() == []


def test_remember_refuses_a_folder_as_the_file(cli, tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    msg = fail(*cli("remember", "The port is 9090", "--cluster", "code", "--file", str(proj)))
    assert msg == (f"{proj} is a folder; a fact is keyed to a file. Name a file in it instead, "
                   "or leave the file out.")
    msg = fail(*cli("remember", "The port is 9090", "--cluster", "code", "--file", f"{proj}/", "--json"))
    assert msg.startswith(f"{proj}/ is a folder ({proj}); a fact is keyed to a file.")
    assert json.loads(ok(*cli("search", "port", "--json")))["total"] == 0  # nothing was written
    # a file inside it is fine
    (proj / "config.py").write_text("PORT = 9090\n")
    ok(*cli("remember", "The port is 9090", "--cluster", "code", "--file", str(proj / "config.py")))


# ---------------------------------------------------------------- finding 8: messages
def test_a_symlink_loop_says_so_and_does_not_suggest_cat(cli, tmp_path):
    os.symlink(tmp_path / "loop2", tmp_path / "loop1")
    os.symlink(tmp_path / "loop1", tmp_path / "loop2")
    msg = fail(*cli("ingest", str(tmp_path / "loop1"), "--cluster", "code"))
    assert "symbolic link that leads back to itself (a link loop)" in msg and "ls -l" in msg
    assert "cat " not in msg


def test_a_binary_file_without_extension_is_binary_content(cli, tmp_path):
    blob = tmp_path / "bin"
    blob.write_bytes(bytes(range(256)) * 4)
    msg = fail(*cli("ingest", str(blob), "--cluster", "code"))
    assert msg.startswith(f"Cannot read {blob}: binary content (NUL byte at offset 0).")
    assert ".unknown" not in msg


@pytest.mark.parametrize("value,hint", [("5", " Did you mean 0.05 (5%)?"), ("70", " Did you mean 0.7 (70%)?"),
                                        ("500", "")])
def test_sources_trust_names_the_value_not_a_flag(cli, value, hint):
    sid = json.loads(ok(*cli("ingest", "--text", "Backups run nightly", "--cluster", "proc", "--json")))["sourceId"]
    msg = fail(*cli("sources", "trust", sid, value))
    assert msg == f"The trust value must be from 0 to 1, got {float(value):g}.{hint} e.g. ledger sources trust {sid} 0.5"
    assert "--trust" not in msg
    ok(*cli("sources", "trust", sid, "0.5"))


def test_import_of_a_memory_record_line_says_to_drop_the_field(cli, tmp_path):
    f = tmp_path / "in.jsonl"
    f.write_text(json.dumps({"record": "memory", "id": "m_1", "text": "x"}) + "\n")
    msg = fail(*cli("import", str(f)))
    assert msg.startswith('line 1: "record": "memory" is not a record kind: a memory line has no "record" field')
    assert "reads memories and" not in msg and "Nothing was imported." in msg
    f.write_text(json.dumps({"record": "teleport"}) + "\n")
    msg = fail(*cli("import", str(f)))
    assert "unknown record 'teleport'. A memory line has no \"record\" field; a history line has one of: " in msg
