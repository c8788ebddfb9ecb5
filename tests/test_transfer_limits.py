"""Import's checks read their limits and defaults from ``ledger.vocab``, the same
constants the write paths use, never a copy of the number (a copy drifts when the
limit moves). The source is read for literals; the behaviour is checked through the
real ``ledger import`` on both engines."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from ledger import vocab
from ledger.errors import InvalidInput
from ledger.store import transfer, transfer_history
from ledger.store.transfer import _Check

MODULES = (transfer, transfer_history)


def _limit_literals(module) -> list[str]:
    """Every ``limit=<number>`` (a call's keyword or a parameter's default) in ``module``."""
    tree = ast.parse(Path(module.__file__).read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            found += [f"line {k.lineno}: limit={ast.unparse(k.value)}" for k in node.keywords
                      if k.arg == "limit" and isinstance(k.value, (ast.Constant, ast.BinOp))]
        if isinstance(node, ast.FunctionDef):
            args = node.args.args + node.args.kwonlyargs
            defaults = [None] * (len(node.args.args) - len(node.args.defaults)) + node.args.defaults \
                + node.args.kw_defaults
            found += [f"line {d.lineno}: {a.arg}={ast.unparse(d)} default" for a, d in zip(args, defaults)
                      if a.arg == "limit" and isinstance(d, (ast.Constant, ast.BinOp))]
    return found


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_no_length_limit_is_a_literal(module):
    assert _limit_literals(module) == []


def test_the_default_text_limit_is_the_claim_limit():
    """The example: ``_Check.text`` defaulted to the literal 20,000."""
    ok = _Check({"x": "a" * vocab.MAX_TEXT_CHARS}, 1)
    assert ok.text("x") == "a" * vocab.MAX_TEXT_CHARS
    with pytest.raises(InvalidInput, match=f"at most {vocab.MAX_TEXT_CHARS:,}"):
        _Check({"x": "a" * (vocab.MAX_TEXT_CHARS + 1)}, 1).text("x")


def test_the_clock_skew_allowance_is_one_day():
    c = _Check({}, 1)
    import time

    assert abs(c.latest - (int(time.time() * 1000) + vocab.DAY_MS)) < 60_000


def test_store_modules_name_the_vocab_limits():
    """The store's names for its limits are the vocab's values, not copies."""
    from ledger import text
    from ledger.store import ops, store

    assert ops.MAX_AGENT_ID is vocab.MAX_AGENT_ID and store.MAX_CLUSTER_LABEL is vocab.MAX_CLUSTER_LABEL
    assert text._SLUG_MAX == vocab.MAX_AGENT_ID


def _line(**source) -> dict:
    return {"id": "m_x1", "text": "Staging needs the VPN", "kind": "chunk", "origin": "doc", "clusterId": "ops",
            "writer": "claude", "createdAt": 1_700_000_000_000, "lastReadAt": 1_700_000_000_000, "hits": 0,
            "pinned": False, "archived": False, "sourceId": "s_x1", "chunkIndex": 0,
            "source": {"id": "s_x1", "filename": "runbook.md", **source}}


@pytest.mark.parametrize("trust", [0, 0.3, None])
def test_an_imported_source_keeps_its_trust(cli, tmp_path, trust):
    """A trust of 0 is valid (0-1) and was read as "missing" (``or 0.75``); a missing one
    is ``vocab.DEFAULT_SOURCE_TRUST``."""
    f = tmp_path / "in.jsonl"
    f.write_text(json.dumps(_line(trust=trust)) + "\n")
    rc, out, err = cli("import", str(f), "--json")
    assert rc == 0, err
    rc, out, err = cli("sources", "--json")
    assert rc == 0, err
    src = json.loads(out)
    src = src["sources"] if isinstance(src, dict) else src
    want = vocab.DEFAULT_SOURCE_TRUST if trust is None else trust
    assert [s["trust"] for s in src] == [want]


def test_an_imported_cluster_without_a_colour_gets_one_from_the_palette(cli, tmp_path):
    f = tmp_path / "in.jsonl"
    rec = _line()
    rec.update(kind="claim", origin="chat", clusterId="brand-new")
    for k in ("sourceId", "chunkIndex", "source"):
        rec.pop(k)
    f.write_text(json.dumps(rec) + "\n")
    rc, out, err = cli("import", str(f), "--json")
    assert rc == 0, err
    rc, out, err = cli("clusters", "--json")
    assert rc == 0, err
    got = json.loads(out)
    got = got["clusters"] if isinstance(got, dict) else got
    assert next(c for c in got if c["id"] == "brand-new")["color"] in vocab.PALETTE
