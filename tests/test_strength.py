"""Strength (issue 2): the seed's reference values, the formula's edges, days_until, and
proof that the SQL expression used for ranking equals the Python formula."""

from __future__ import annotations

import math
import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger import strength as S
from ledger.clock import DAY_MS
from ledger.store.sqlbits import strength_sql

NOW = 1_768_478_400_000  # 2026-01-15T12:00Z


def claim(hits=0, days=0.0, sources=1, readers=1, pinned=False, now=NOW):
    return S.strength(kind="claim", pinned=pinned, hits=hits, last_read_at=now - int(days * DAY_MS),
                      source_count=sources, reader_count=readers, trust=None, now=now)


# ---------------------------------------------------------------------------- the seed's table


def test_new_claim_is_051():
    st_, f = claim()
    assert st_ == pytest.approx(0.51, abs=1e-12)
    assert (f.used, f.fresh, f.corroborated) == (0.0, 1.0, 0.0)


def test_unread_for_190_days_is_0295():
    st_, f = claim(days=190)
    assert f.fresh == pytest.approx(math.exp(-1), abs=1e-12)
    assert st_ == pytest.approx(0.17 + 0.34 * math.exp(-1), abs=1e-12)
    assert round(st_, 3) == 0.295


def test_unread_forever_is_017():
    assert claim(days=100 * 365)[0] == pytest.approx(0.17, abs=1e-12)


def test_one_retrieval_by_its_writer():
    st_, f = claim(hits=1)
    assert f.used == pytest.approx(math.log(2) / math.log(301), abs=1e-12)
    assert round(f.used, 4) == 0.1215
    assert round(st_, 3) == 0.543


def test_second_agent_adds_a_third_of_corroboration():
    one, _ = claim(hits=1, readers=1)
    two, f = claim(hits=1, readers=2)
    assert f.corroborated == pytest.approx(1 / 3)
    assert two - one == pytest.approx(0.22 / 3, abs=1e-12)
    assert round(two - one, 4) == 0.0733


def test_corroboration_steps_and_ceiling():
    assert claim(sources=1, readers=1)[1].corroborated == 0
    assert claim(sources=2, readers=1)[1].corroborated == pytest.approx(1 / 3)
    assert claim(sources=2, readers=3)[1].corroborated == 1.0
    assert claim(sources=9, readers=9)[1].corroborated == 1.0
    # counts below 1 floor at 1 (the writer is always a reader)
    assert claim(sources=0, readers=0)[1].corroborated == 0


def test_used_saturates_at_300_hits_and_strength_tops_at_099():
    assert claim(hits=300)[1].used == pytest.approx(1.0)
    assert claim(hits=10_000)[1].used == 1.0
    assert 0 < claim(hits=10)[1].used < claim(hits=100)[1].used < 1  # log shape
    assert claim(hits=300, sources=2, readers=3)[0] == S.MAX_STRENGTH == 0.99


def test_weights_sum_to_one_and_fresh_weighs_most():
    assert S.BASE + S.W_USED + S.W_FRESH + S.W_CORROBORATED == pytest.approx(1.0)
    assert S.W_FRESH > S.W_USED > S.W_CORROBORATED


def test_future_read_counts_as_now():
    st_, f = claim(days=-30)
    assert f.fresh == 1.0
    assert st_ == pytest.approx(0.51)


def test_negative_hits_floor_at_zero():
    st_, f = claim(hits=-7)
    assert f.used == 0.0
    assert st_ == pytest.approx(0.51)


def test_read_claim_outlives_unread_one():
    assert claim(hits=5, readers=2, days=300)[0] > claim(days=300)[0]


def test_pinned_is_099_whatever_the_factors():
    assert claim(pinned=True, days=1000)[0] == 0.99
    assert claim(pinned=True, hits=-3, days=10_000)[0] == 0.99


@pytest.mark.parametrize("trust, expected", [(1.0, 0.97), (0.0, 0.15), (0.5, 0.5), (0.86, 0.86), (None, 0.7), (7.0, 0.97)])
def test_chunk_strength_is_clamped_trust(trust, expected):
    st_, f = S.strength(kind="chunk", pinned=False, hits=0, last_read_at=NOW, source_count=1, reader_count=1, trust=trust, now=NOW)
    assert st_ == pytest.approx(expected)
    assert f.fresh == 1.0  # factors are still reported for chunks


def test_chunk_strength_ignores_time_hits_and_pins():
    base = S.strength(kind="chunk", pinned=False, hits=0, last_read_at=NOW, source_count=1, reader_count=1, trust=0.6, now=NOW)[0]
    later = S.strength(kind="chunk", pinned=True, hits=500, last_read_at=NOW, source_count=5, reader_count=5, trust=0.6,
                       now=NOW + 2000 * DAY_MS)[0]
    assert base == later == 0.6


# ---------------------------------------------------------------------------- days_until


def test_new_claim_falls_to_040_after_743_days():
    f = claim()[1]
    d = S.days_until(f, 0.40)
    assert round(d, 1) == 74.3
    assert claim(days=d)[0] == pytest.approx(0.40, abs=1e-9)


def test_days_until_edges():
    f = claim()[1]
    assert S.days_until(f, 0.60) == 0.0  # already below 0.60
    held = claim(hits=300, sources=2, readers=3)[1]
    assert S.days_until(held, 0.40) == math.inf  # used + corroboration hold it above 0.40
    assert S.days_until(f, 0.40, elapsed_days=70) == pytest.approx(S.days_until(f, 0.40) - 70)
    assert S.days_until(f, 0.40, elapsed_days=1000) == 0.0


@settings(max_examples=200, deadline=None)
@given(hits=st.integers(0, 400), readers=st.integers(1, 5), target=st.floats(0.18, 0.9))
def test_days_until_round_trips_through_the_formula(hits, readers, target):
    f = claim(hits=hits, readers=readers)[1]
    d = S.days_until(f, target)
    if 0 < d < math.inf:
        assert claim(hits=hits, readers=readers, days=d)[0] == pytest.approx(target, abs=1e-9)
    elif d == 0:
        assert claim(hits=hits, readers=readers)[0] <= target + 1e-12
    else:
        assert claim(hits=hits, readers=readers, days=1e6)[0] >= target - 1e-12


# ---------------------------------------------------------------------------- SQL == Python

_conn = sqlite3.connect(":memory:")
_conn.execute("CREATE TABLE m (kind TEXT, pinned INTEGER, hits INTEGER, last_read_at INTEGER, source_count INTEGER, reader_count INTEGER, source_id INTEGER)")
_conn.execute("CREATE TABLE s (id INTEGER PRIMARY KEY, trust REAL)")
_SQL = f"SELECT {strength_sql()} FROM m LEFT JOIN s ON s.id = m.source_id"


def _sql_strength(kind, pinned, hits, last_read_at, source_count, reader_count, trust, now):
    c = _conn
    c.execute("DELETE FROM m")
    c.execute("DELETE FROM s")
    sid = None
    if kind == "chunk" and trust is not None:
        c.execute("INSERT INTO s (id, trust) VALUES (1, ?)", (trust,))
        sid = 1
    c.execute("INSERT INTO m VALUES (?, ?, ?, ?, ?, ?, ?)", (kind, int(pinned), hits, last_read_at, source_count, reader_count, sid))
    return c.execute(_SQL, {"now": now}).fetchone()[0]


@settings(max_examples=400, deadline=None)
@given(
    kind=st.sampled_from(["claim", "claim", "chunk"]),
    pinned=st.booleans(),
    hits=st.integers(-10, 10**7),
    age_ms=st.integers(-400 * DAY_MS, 20_000 * DAY_MS),
    source_count=st.integers(-2, 12),
    reader_count=st.integers(0, 12),
    trust=st.one_of(st.none(), st.floats(-0.5, 1.5, allow_nan=False)),
    now=st.integers(0, 4_000_000_000_000),
)
def test_sql_strength_equals_python(kind, pinned, hits, age_ms, source_count, reader_count, trust, now):
    last = now - age_ms
    py, _ = S.strength(kind=kind, pinned=pinned, hits=hits, last_read_at=last, source_count=source_count,
                       reader_count=reader_count, trust=trust, now=now)
    sql = _sql_strength(kind, pinned, hits, last, source_count, reader_count, trust, now)
    assert sql == pytest.approx(py, abs=1e-9)


def test_sql_strength_reference_points():
    # The same table through SQLite, so a formula slip in either place shows here too.
    assert _sql_strength("claim", False, 0, NOW, 1, 1, None, NOW) == pytest.approx(0.51)
    assert _sql_strength("claim", False, 0, NOW - 190 * DAY_MS, 1, 1, None, NOW) == pytest.approx(0.17 + 0.34 / math.e)
    assert _sql_strength("claim", True, 0, NOW - 1000 * DAY_MS, 1, 1, None, NOW) == 0.99
    assert _sql_strength("chunk", True, 0, NOW, 1, 1, 0.99, NOW) == 0.97
    assert _sql_strength("chunk", False, 0, NOW, 1, 1, None, NOW) == pytest.approx(0.7)


# ---------------------------------------------------------------------------- through the store


def test_strength_through_the_store_as_time_moves(ledger, clock):
    m = ledger.remember("Staging deploys need the VPN", cluster="proc", agent="alice").memory
    assert m.strength == pytest.approx(0.51)
    clock.advance(days=190)
    assert ledger.get(m.id).strength == pytest.approx(0.17 + 0.34 / math.e)
    clock.advance(days=50_000)
    assert ledger.get(m.id).strength == pytest.approx(0.17, abs=1e-9)
    # one counted read by its writer revives it: fresh resets, used = ln2/ln301
    hit = ledger.recall("staging vpn", agent="alice").hits
    assert [h.id for h in hit] == [m.id]
    assert round(ledger.get(m.id).strength, 3) == 0.543
    # a second agent's read: corroborated 1/3, hits 2
    ledger.recall("staging vpn", agent="bob")
    got = ledger.get(m.id)
    assert got.factors.corroborated == pytest.approx(1 / 3)
    assert got.strength == pytest.approx(0.17 + 0.27 * math.log(3) / math.log(301) + 0.34 + 0.22 / 3)


def test_pinned_claim_holds_099_after_1000_days(ledger, clock):
    m = ledger.remember("Prefers metric units", cluster="prefs", agent="alice").memory
    other = ledger.remember("Prefers dark mode", cluster="prefs", agent="alice").memory
    ledger.review(m.id, "pin")
    clock.advance(days=1000)
    assert ledger.get(m.id).strength == 0.99
    assert ledger.get(other.id).strength < 0.2


def test_chunks_do_not_decay_and_follow_trust(ledger, clock):
    from ledger.ingest import source_from_text

    res = ledger.ingest(source_from_text("Runbook: restart the queue worker first.", "runbook.md"), cluster="proc", agent="a", trust=0.86)
    chunk = ledger.search("kind:chunk").hits[0]
    assert chunk.strength == pytest.approx(0.86)
    clock.advance(days=2000)
    assert ledger.get(chunk.id).strength == pytest.approx(0.86)
    ledger.set_trust(res.source_id, 0.3)
    assert ledger.get(chunk.id).strength == pytest.approx(0.3)


@given(st.floats(min_value=0.0, max_value=1.0, allow_nan=False))
@settings(max_examples=3000)
def test_the_wire_value_shows_the_same_integer_as_the_exact_one(x):
    """JSON carries 4 decimals; the browser, MCP clients and --json readers show
    round-half-up of x 100 again. Double rounding must not move the shown integer."""
    w = S.wire(x)
    assert S.shown(w) == S.shown(x) and abs(w - x) <= 1e-4 + 1e-12
    assert math.floor(w * 100 + 0.5) == S.shown(x)  # JavaScript's Math.round(w * 100)
    assert round(w, 4) == w


@pytest.mark.parametrize("x,expect", [(0.29497, 0.2949), (0.29503, 0.295), (0.5099, 0.5099), (0.00499, 0.0049),
                                      (0.004951, 0.0049), (0.12345, 0.1235), (1.0, 1.0), (0.0, 0.0)])
def test_wire_cuts_toward_the_exact_value_only_at_a_display_boundary(x, expect):
    assert S.wire(x) == expect


def test_a_memory_shown_as_29_is_29_in_every_json(tmp_path):
    """The fresh user's case: strength 0.29497... was shown 29 by the CLI but sent as 0.295
    (30 in the web UI); every wire shape now carries a value that shows as 29."""
    from ledger import wire

    class M:  # the attributes memory_compact reads
        id, text, cluster_id, strength = "m_x", "t", "code", 0.294971
    assert wire.memory_compact(M())["strength"] == 0.2949
    assert S.shown(wire.memory_compact(M())["strength"]) == S.shown(M.strength) == 29
