"""Injection under real conditions (issue 12): marks and ids are never truncated, only
fact text is; the block stays within its character budget."""

from __future__ import annotations

import re

import pytest
from conftest import T0

from ledger.watcher.engine import ESCALATED, GENTLE, GONE_MARK, STALE_MARK, render_facts


def _fact(i: int, text: str, path: str, **kw) -> dict:
    base = {"id": f"m{i:04d}", "seq": i, "text": text, "pinned": 0, "hits": 0, "last_read_at": T0,
            "source_count": 1, "reader_count": 1, "path": path, "size": None, "mtime_ms": None, "sha256": None}
    base.update(kw)
    return base


@pytest.fixture
def changed(tmp_path):
    p = tmp_path / "app.cfg"
    p.write_text("PORT=9090\n")
    return str(p)


def _stale(i, text, path):  # recorded with another size and hash: the file changed since
    return _fact(i, text, path, size=3, mtime_ms=1, sha256="0" * 64)


@pytest.mark.parametrize("level", [GENTLE, ESCALATED])
def test_a_1225_char_fact_about_a_changed_file_keeps_its_id_and_stale_mark(changed, level):
    text = ("app.cfg " + "sets many things " * 80)[:1225]
    assert len(text) == 1225
    out, ids = render_facts([_stale(1, text, changed)], level=level, times=5, steps=3, now=T0)
    assert ids == ["m0001"]
    assert len(out) <= 1200
    line = next(l for l in out.splitlines() if l.startswith("  - ["))
    assert line.startswith("  - [m0001 · ") and line.endswith("…" + STALE_MARK)


def test_a_fact_about_a_deleted_file_says_it_is_gone(tmp_path):
    gone = str(tmp_path / "deleted.py")
    out, _ = render_facts([_fact(1, "deleted.py defines main()", gone, size=10, sha256="1" * 64)],
                          level=GENTLE, times=1, steps=0, now=T0)
    assert out.endswith("deleted.py defines main()" + GONE_MARK)


def test_later_long_facts_are_cut_not_dropped_and_the_note_always_fits(changed, tmp_path):
    ok = tmp_path / "ok.txt"
    ok.write_text("x")
    facts = [_fact(i, f"fact {i}: " + "word " * 60, str(ok)) for i in range(1, 4)]
    facts.append(_stale(4, "fact 4: " + "long " * 300, changed))
    facts += [_fact(i, f"fact {i}: short", str(ok)) for i in range(5, 12)]
    out, ids = render_facts(facts, level=GENTLE, times=1, steps=0, now=T0, max_chars=1200)
    assert len(out) <= 1200
    shown = re.findall(r"^  - \[(m\d{4}) · \d+\] ", out, re.M)
    assert shown == ids and 1 <= len(ids) < len(facts)
    assert out.splitlines()[-1] == f"  (+{len(facts) - len(ids)} more facts left out; `ledger recall` with the file's name lists them)"
    for line in out.splitlines():
        if line.startswith("  - [m0004"):
            assert line.endswith(STALE_MARK)


def test_a_tiny_budget_never_cuts_a_mark(changed):
    out, ids = render_facts([_stale(1, "x " * 500, changed)], level=GENTLE, times=1, steps=0, now=T0, max_chars=200)
    assert len(out) <= 200
    if ids:
        assert out.splitlines()[1].endswith(STALE_MARK)
    else:
        assert out == ""  # not a header with no fact under it
