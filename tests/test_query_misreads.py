"""Nothing a query holds is quietly misread (docs/search.md "Instants", "Terms").

A word the user meant as part of an ``asof:``/``after:``/``before:`` filter but that the
filter could not take (a second time, a time after a span, ``9pm``, ``UTC``, a second
date) is searched as a word *with* a ``time-as-word`` warning that says how to write it,
with the date the user wrote; a time typed fullwidth is the filter's time. A CJK run
whose pairs are not all searched one by one says so (``too-many-terms``). Checked in the
parser, in the service on both engines, and through the real ``ledger`` command.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest
from conftest import T0, Cli

from ledger import terms as T
from ledger.clock import FixedClock
from ledger.query import parse
from ledger.query.parser import filter_warnings
from ledger.service import Ledger

NOW = int(datetime(2026, 12, 2, 12, 0, tzinfo=timezone.utc).timestamp() * 1000)


def _ms(*args) -> int:
    return int(datetime(*args, tzinfo=timezone.utc).timestamp() * 1000)


def _time_words(query: str, now: int = NOW) -> list[dict]:
    return [w for w in filter_warnings(query, now) if w["kind"] == "time-as-word"]


# ------------------------------------------------------------------ the review's examples
@pytest.mark.parametrize("key", ["asof", "after", "before"])
def test_a_second_time_is_a_word_with_a_warning_naming_the_date_typed(key):
    q = parse(f"{key}:2026-12-02 00:04 00:05", NOW)
    assert q.terms == ("00:05",) and getattr(q, f"{key}_ms") == _ms(2026, 12, 2, 0, 4)
    (w,) = _time_words(f"{key}:2026-12-02 00:04 00:05")
    assert w["values"] == [f"{key}:2026-12-02 00:04", "00:05"]
    assert f"{key}:2026-12-02T00:05" in w["warning"] and "2026-12-01" not in w["warning"]
    assert parse(f"{key}:2026-12-02T00:05", NOW).terms == ()


@pytest.mark.parametrize("time", ["００:０５", "００：０５", "０:０５", "T00:05", "t00:05", "Ｔ００:０５"])
@pytest.mark.parametrize("key", ["asof", "after", "before"])
def test_a_fullwidth_or_t_time_after_a_date_is_the_filters_time(key, time):
    q = parse(f"deploy {key}:2026-12-02 {time} runbook", NOW)
    assert q.terms == ("deploy", "runbook") and getattr(q, f"{key}_ms") == _ms(2026, 12, 2, 0, 5)
    assert _time_words(f"deploy {key}:2026-12-02 {time}") == []


def test_the_example_date_is_the_one_written_or_the_spans():
    (w,) = _time_words("before:2026-11-20T08:00 22:49")
    assert "before:2026-11-20T22:49" in w["warning"] and "2026-12-01" not in w["warning"]
    (w,) = _time_words("asof:2d 22:49")  # two days before NOW
    assert "asof:2026-11-30T22:49" in w["warning"] and "not after a span" in w["warning"]
    (w,) = filter_warnings("asof:2d 22:49")  # no clock: a placeholder, never a made-up date
    assert "asof:YYYY-MM-DDT22:49" in w["warning"]


# ------------------------------------------------------------------ the kind: other leftovers
@pytest.mark.parametrize("query, word, fix", [
    ("after:2026-12-01 9pm", "9pm", "after:2026-12-01T21:00"),
    ("after:2026-12-01 9:30pm", "9:30pm", "after:2026-12-01T21:30"),
    ("before:2026-12-01 12:15am", "12:15am", "before:2026-12-01T00:15"),
    ("asof:2026-12-01 12PM", "12PM", "asof:2026-12-01T12:00"),
    ("asof:2026-12-01 22:49 UTC", "UTC", "asof:2026-12-01T22:49Z"),
    ("asof:2026-12-01 22:49 GMT", "GMT", "drop GMT"),
    ("asof:2026-12-01 22:49 +01:00", "+01:00", "asof:2026-12-01T22:49+01:00"),
    ("after:2026-11-01 2026-11-20", "2026-11-20", "after:2026-11-01 before:2026-11-20"),
    ("before:2026-11-20 2026-11-01", "2026-11-01", "before:2026-11-20 after:2026-11-01"),
    ("asof:2026-11-01 2026-11-20", "2026-11-20", "asof:2026-11-20 alone"),
    ("asof:2026-11-01 at 17:00", "at 17:00", "asof:2026-11-01 17:00"),
    ("asof:1d at 5pm", "at 5pm", "asof:2026-12-01T17:00"),
])
def test_a_word_meant_as_part_of_the_instant_warns_how_to_write_it(query, word, fix):
    q = parse(query, NOW)
    assert q.terms[-1] == word.split()[-1].lower()  # searched as a word, as before
    (w,) = _time_words(query)
    assert w["values"][1] == word and fix in w["warning"] and "searched as a word" in w["warning"], w["warning"]
    if "T" in fix and " " not in fix:  # the fix given parses, and leaves no word behind
        assert parse(fix, NOW).terms == ()


@pytest.mark.parametrize("query", ["asof:2026-12-01 deploy", "after:2w at the office", "before:2026-12-01 22:49",
                                   "deploy asof:2026-12-01T10:00 runbook", "asof:2026-12-01 z9", "after:1d pm"])
def test_ordinary_words_after_a_filter_draw_no_warning(query):
    assert _time_words(query) == []


# ------------------------------------------------------------------ CJK runs past the pair cap
def _long_run(n: int) -> str:
    """A run of ``n`` distinct Han characters: n - 1 distinct pairs."""
    return "".join(chr(0x4E00 + 7 * i) for i in range(n))


def test_the_pair_cap_is_known_to_the_split():
    assert T.cjk_cut(_long_run(T.MAX_CJK_BIGRAMS + 1)) is None  # 64 pairs: all searched
    run = _long_run(T.MAX_CJK_BIGRAMS + 2)
    assert T.cjk_cut(run) == run[T.MAX_CJK_BIGRAMS - 1:T.MAX_CJK_BIGRAMS + 1]
    assert T.cjk_cut("数据" * 100) is None  # 200 characters, 2 distinct pairs


@pytest.fixture()
def cjk_store(store_target):
    run = _long_run(80)
    with Ledger.open(store_target, clock=FixedClock(T0)) as led:
        led.remember(f"前半 {run[:4]} notes", cluster="proc", agent="claude")
        led.remember(f"後半 {run[-4:]} notes", cluster="proc", agent="claude")
    return store_target, run


def test_a_long_cjk_run_says_what_it_left_out(cjk_store):
    store, run = cjk_store
    with Ledger.open(store, clock=FixedClock(T0)) as led:
        res = led.search(run)
        texts = " ".join(m.text for m in res.hits)
        assert run[:4] in texts and run[-4:] not in texts  # the tail is not searched alone...
        (w,) = [w for w in res.warnings() if w["kind"] == "too-many-terms"]  # ...and the answer says so
        assert w["searched"] == T.MAX_CJK_BIGRAMS and w["last"] == T.cjk_cut(run) and w["runs"] == [run]
        assert "Put spaces between the words" in w["warning"]
        # Written with spaces, both halves are terms of their own and both are found.
        res = led.search(f"{run[:4]} {run[-4:]}")
        assert len(res.hits) == 2 and res.warnings() == []


def test_the_cli_shows_the_cjk_warning(cjk_store):
    store, run = cjk_store
    rc, out, err = Cli(store)("search", "--json", run)
    assert rc == 0, err
    assert [w["kind"] for w in json.loads(out)["warnings"]] == ["too-many-terms"]
    rc, out, err = Cli(store)("recall", run)
    assert rc == 0 and "character pairs" in err, err


# ------------------------------------------------------------------ through the command
def test_the_cli_warns_for_the_review_examples(db_file):
    cli = Cli(db_file)
    assert cli("remember", "--cluster", "proc", "deploy runbook at 00:05")[0] == 0
    rc, out, err = cli("search", "--json", "deploy asof:2026-12-02 00:04 00:05")
    assert rc == 0, err
    (w,) = [w for w in json.loads(out)["warnings"] if w["kind"] == "time-as-word"]
    assert "asof:2026-12-02T00:05" in w["warning"]
    rc, out, err = cli("search", "--json", "deploy before:2099-12-02 ００:０５")
    assert rc == 0, err
    body = json.loads(out)
    assert body["total"] == 1 and not [w for w in body["warnings"] if w["kind"] == "time-as-word"]
    rc, out, err = cli("search", "deploy after:2020-01-01 9pm")
    assert rc == 0 and "after:2020-01-01T21:00" in err, err
