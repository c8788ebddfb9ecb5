"""Tests for the pure query-language parser (ledger.query)."""

from __future__ import annotations

import json
import unicodedata
from datetime import datetime, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.errors import InvalidQuery, QueryTooLong
from ledger.query import (
    KEY_HINTS,
    KEYS,
    MAX_MS,
    MIN_MS,
    WHEN_REASON,
    Query,
    format_query,
    parse,
    parse_when,
)
from ledger.query.parser import MAX_QUERY_CHARS, filter_warnings

DAY = 86_400_000
# 2026-03-15T12:34:56.789Z
NOW = int(datetime(2026, 3, 15, 12, 34, 56, 789000, tzinfo=timezone.utc).timestamp() * 1000)


def utc_ms(*args: int) -> int:
    return int(datetime(*args, tzinfo=timezone.utc).timestamp()) * 1000


# --- free text ---------------------------------------------------------------


def test_terms_are_lowercased_in_order():
    q = parse("  Invoice  NET-45\tPayment invoice ", NOW)
    assert q.terms == ("invoice", "net-45", "payment", "invoice")
    assert q.text == "invoice net-45 payment invoice"
    assert not q.has_filters


def test_unicode_text_is_lowercased():
    q = parse("ÜBER Straße ΣΟΦΙΑ Ærø", NOW)
    assert q.terms == ("über", "straße", "σοφια", "ærø")


def test_unknown_key_and_leading_colon_are_text():
    q = parse("colour:Blue :nope agent http://x.io", NOW)
    assert q.terms == ("colour:blue", ":nope", "agent", "http://x.io")
    assert q == Query(terms=q.terms)


def test_empty_query():
    for text in ("", "   ", "\n\t"):
        q = parse(text, NOW)
        assert q == Query()
        assert q.text == ""
        assert not q.has_filters


# --- filters -----------------------------------------------------------------


def test_every_key_is_extracted():
    q = parse(
        "deploy agent:Claude cluster:Billing type:DOC kind:Claim strength:>70 "
        "asof:2026-01-01 after:2025-06-01 before:2025-12-01 friday",
        NOW,
    )
    assert q == Query(
        terms=("deploy", "friday"),
        agents=("claude",),
        clusters=("billing",),
        types=("doc",),
        kinds=("claim",),
        strength_op=">",
        strength=0.7,
        asof_ms=utc_ms(2026, 1, 1),
        after_ms=utc_ms(2025, 6, 1),
        before_ms=utc_ms(2025, 12, 1),
    )
    assert q.has_filters


def test_keys_are_case_insensitive_and_value_keeps_later_colons():
    q = parse("AGENT:codex Cluster:a:b", NOW)
    assert q.agents == ("codex",)
    assert q.clusters == ("a:b",)
    assert q.terms == ()


def test_repeats_widen_and_deduplicate():
    q = parse("agent:a agent:B agent:b type:chat type:doc kind:claim kind:chunk cluster:x cluster:y", NOW)
    assert q.agents == ("a", "b")
    assert q.types == ("chat", "doc")
    assert q.kinds == ("claim", "chunk")
    assert q.clusters == ("x", "y")


def test_values_are_not_validated():
    q = parse("type:foo kind:bar", NOW)
    assert q.types == ("foo",)
    assert q.kinds == ("bar",)


@pytest.mark.parametrize("key", ["agent", "strength", "asof", "after", "before", "cluster", "type", "kind", "Agent"])
def test_bare_key_is_searched_as_the_word_with_a_warning(key):
    # A bare key used to be dropped (so `agent:` matched everything), then refused; pasted
    # text ("Type: error in build") is searched as typed, and filter_warnings says how
    # to filter (test_query_polish.py).
    q = parse(f"hello {key}:", NOW)
    assert q.terms == ("hello", f"{key.lower()}:") and not q.has_filters
    (w,) = filter_warnings(f"hello {key}:", NOW)
    assert w["kind"] == "empty-filter" and w["key"] == key.lower() and w["values"] == [f"{key}:"]


def test_keys_and_hints():
    assert KEYS == ("agent", "cluster", "type", "kind", "strength", "asof", "after", "before")
    assert set(KEY_HINTS) == set(KEYS)
    assert all(h and "\n" not in h for h in KEY_HINTS.values())


# --- strength ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("token", "op", "value"),
    [("strength:<40", "<", 0.4), ("strength:>70", ">", 0.7), ("strength:>0", ">", 0.0),
     ("strength:<100", "<", 1.0), ("strength:<007", "<", 0.07)],
)
def test_strength_converts_to_unit_scale(token, op, value):
    q = parse(token, NOW)
    assert q.strength_op == op
    assert q.strength == pytest.approx(value)
    assert q.has_filters


def test_strength_last_occurrence_wins():
    q = parse("strength:<40 strength:>60", NOW)
    assert (q.strength_op, q.strength) == (">", 0.6)


@pytest.mark.parametrize(
    "token",
    ["strength:40", "strength:=40", "strength:>101", "strength:<1000", "strength:>abc",
     "strength:<", "strength:>4.5", "strength:<-1", "Strength:>٤٠"],
)
def test_strength_rejects_bad_values(token):
    with pytest.raises(InvalidQuery) as exc:
        parse(f"hello {token} world", NOW)
    assert exc.value.token == token
    # Each reason says what is wrong with this value (test_query_polish.py), then the rule.
    assert exc.value.reason.endswith("expected strength:<N or strength:>N, N a whole number from 0 to 100")
    assert str(exc.value) == f'Cannot parse "{token}": {exc.value.reason}'


# --- time filters -------------------------------------------------------------


@pytest.mark.parametrize(
    ("span", "ms_back"),
    [("30d", 30 * DAY), ("2w", 14 * DAY), ("1y", 365 * DAY), ("6mo", 6 * 2_626_560_000),
     ("0d", 0), ("1mo", 2_626_560_000), ("30D", 30 * DAY)],
)
def test_spans_are_exact_ms_back_from_now(span, ms_back):
    assert parse_when(span, NOW) == NOW - ms_back
    assert parse(f"after:{span}", NOW).after_ms == NOW - ms_back


def test_six_months_is_six_times_thirty_point_four_days():
    assert parse_when("6mo", NOW) == NOW - int(round(6 * 30.4 * DAY))


def test_huge_span_clamps_to_earliest_instant():
    assert parse_when("99999999y", NOW) == MIN_MS


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-01-01", utc_ms(2026, 1, 1)),
        ("20260101", utc_ms(2026, 1, 1)),
        ("1969-07-20", utc_ms(1969, 7, 20)),
        ("2026-01-01T10:30:00", utc_ms(2026, 1, 1, 10, 30)),  # no offset -> UTC
        ("2026-01-01T10:30:00Z", utc_ms(2026, 1, 1, 10, 30)),
        ("2026-01-01t10:30:00z", utc_ms(2026, 1, 1, 10, 30)),
        ("2026-01-01T10:30:00+02:00", utc_ms(2026, 1, 1, 8, 30)),
        ("2026-01-01T10:30:00.250Z", utc_ms(2026, 1, 1, 10, 30) + 250),
    ],
)
def test_absolute_dates(value, expected):
    assert parse_when(value, NOW) == expected


def test_date_only_is_utc_midnight():
    ms = parse("asof:2026-01-01", NOW).asof_ms
    assert ms == 1_767_225_600_000
    assert ms % DAY == 0


@pytest.mark.parametrize(
    "value", ["", "yesterday", "2026-13-01", "2026-01", "30", "30x", "30s", "d", "-3d", "3.5d",
              "2026-02-30", "٢٠٢٦-01-01", "10000-01-01"],
)
def test_parse_when_rejects(value):
    assert parse_when(value, NOW) is None


@pytest.mark.parametrize("key", ["asof", "after", "before"])
def test_nonsense_date_names_the_token(key):
    token = f"{key}:tuesdayish"
    with pytest.raises(InvalidQuery) as exc:
        parse(f"x {token}", NOW)
    assert exc.value.token == token
    assert exc.value.reason == WHEN_REASON
    assert str(exc.value) == f'Cannot parse "{token}": {WHEN_REASON}'
    assert exc.value.kind == "invalid-query"


def test_time_keys_fill_separate_fields_and_last_wins():
    q = parse("asof:2026-01-01 after:30d before:1w asof:2025-01-01", NOW)
    assert q.asof_ms == utc_ms(2025, 1, 1)
    assert q.after_ms == NOW - 30 * DAY
    assert q.before_ms == NOW - 7 * DAY


# --- to_dict / format_query -----------------------------------------------------


def test_to_dict_is_json_friendly():
    q = parse("Foo agent:a strength:<40 asof:2026-01-01", NOW)
    d = q.to_dict()
    assert json.loads(json.dumps(d)) == d
    assert d["text"] == "foo"
    assert d["terms"] == ["foo"]
    assert d["agents"] == ["a"]
    assert d["strength_op"] == "<" and d["strength"] == 0.4
    assert d["asof_ms"] == utc_ms(2026, 1, 1)
    assert d["after_ms"] is None and d["before_ms"] is None


def test_format_query_is_canonical():
    q = parse("before:2026-01-01T10:00:00.5Z Foo strength:>7 agent:B after:2026-01-01T10:00Z bar", NOW)
    assert format_query(q) == (
        "foo bar agent:b strength:>7 after:2026-01-01T10:00:00Z before:2026-01-01T10:00:00.500Z"
    )
    assert format_query(Query()) == ""


def test_format_query_round_trips_spans_as_absolute_instants():
    q = parse("asof:6mo after:2w", NOW)
    assert parse(format_query(q), NOW + 12345) == q


# --- properties -----------------------------------------------------------------


def _is_filter_shaped(token: str) -> bool:
    folded = unicodedata.normalize("NFKC", token)  # fullwidth keys are keys (parser.tokens)
    return any(i > 0 and t[:i].lower() in KEYS for t in (token, folded) for i in [t.find(":")])


def _parsed_value(s: str) -> bool:
    """A value parse can give back: it folds a value with NFKC and lower case (unless
    the folded token would hold whitespace, then it keeps it as typed)."""
    f = unicodedata.normalize("NFKC", s)
    return f.lower() == s or len(f.split()) != 1 or f != f.strip()


_word = st.text(st.characters(codec="utf-8", blacklist_characters="\x00"), min_size=1, max_size=12).map(str.lower).filter(
    lambda s: s == s.lower() and len(s.split()) == 1 and s.split()[0] == s
)
_term = _word.filter(lambda s: not _is_filter_shaped(s))
_values = st.lists(_word.filter(_parsed_value), max_size=3, unique=True).map(tuple)
_ms = st.one_of(st.none(), st.integers(MIN_MS, MAX_MS))


@st.composite
def queries(draw) -> Query:
    has_strength = draw(st.booleans())
    return Query(
        terms=tuple(draw(st.lists(_term, max_size=5))),
        agents=draw(_values),
        clusters=draw(_values),
        types=draw(_values),
        kinds=draw(_values),
        strength_op=draw(st.sampled_from("<>")) if has_strength else None,
        strength=draw(st.integers(0, 100)) / 100 if has_strength else None,
        asof_ms=draw(_ms),
        after_ms=draw(_ms),
        before_ms=draw(_ms),
    )


@settings(max_examples=300)
@given(q=queries(), now=st.integers(0, 4_102_444_800_000))
def test_format_then_parse_round_trips(q, now):
    assert parse(format_query(q), now) == q


_query_alphabet = st.sampled_from(list(" \t:<>-.Z0123456789dwmoyT+") + [f"{k}:" for k in KEYS])


@settings(max_examples=300)
@given(
    text=st.one_of(st.text(), st.lists(_query_alphabet, max_size=30).map("".join)),
    now=st.integers(0, 4_102_444_800_000),
)
def test_parse_only_ever_raises_invalid_query(text, now):
    try:
        q = parse(text, now)
    except InvalidQuery as exc:
        if len(text) > MAX_QUERY_CHARS:
            assert isinstance(exc, QueryTooLong) and exc.length == len(text) and exc.limit == MAX_QUERY_CHARS
            return
        if "\x00" in text:  # no store can hold a NUL: refused by name
            assert "NUL" in exc.reason
            return
        assert exc.token in text.split()
        assert (exc.reason == WHEN_REASON or exc.reason.startswith("unknown filter ")
                or exc.reason.endswith("expected strength:<N or strength:>N, N a whole number from 0 to 100"))
    else:
        assert isinstance(q, Query)
        assert parse(format_query(q), now) == q


def test_a_query_longer_than_the_longest_claim_is_refused_by_its_length():
    from ledger.service import MAX_TEXT_CHARS

    assert MAX_QUERY_CHARS == MAX_TEXT_CHARS  # a query may be as long as a claim, no longer
    assert parse("deploy " * (MAX_QUERY_CHARS // 7), 0).terms
    for text in ("a" * (MAX_QUERY_CHARS + 1), "deploy steps " * 100_000, "cluster:proc " * 5_000):
        with pytest.raises(QueryTooLong) as exc:
            parse(text, 0)
        # Said as what it is (not "Cannot parse <token>"): the length, the limit, what to do.
        msg = exc.value.message
        assert msg.startswith(f"The query is too long: {len(text):,} characters, and the limit is 20,000."), msg
        assert "Search for the few words that matter" in msg and "Cannot parse" not in msg and len(msg) < 200
        assert exc.value.kind == "invalid-query" and exc.value.fields() == {
            "field": "query", "length": len(text), "limit": MAX_QUERY_CHARS}


def test_the_instant_range_is_what_datetime_can_represent():
    # MIN_MS / MAX_MS are written out so the parser imports datetime only when it reads
    # or writes a date (start-up budget); they must stay the ends of datetime's range.
    epoch = datetime(1970, 1, 1, tzinfo=timezone.utc)
    one_ms = datetime(1970, 1, 1, 0, 0, 0, 1000, tzinfo=timezone.utc) - epoch
    assert MIN_MS == (datetime(1, 1, 1, tzinfo=timezone.utc) - epoch) // one_ms
    assert MAX_MS == (datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=timezone.utc) - epoch) // one_ms
    assert parse_when("0001-01-01", NOW) == MIN_MS and parse_when("9999-12-31T23:59:59.999Z", NOW) == MAX_MS


def test_a_query_is_an_immutable_value():
    q = parse("deploy cluster:code", NOW)
    assert q == parse("deploy cluster:code", NOW) and hash(q) == hash(parse("deploy cluster:code", NOW))
    assert q != parse("deploy cluster:prefs", NOW)
    assert q.replace(terms=("x",)).terms == ("x",) and q.terms == ("deploy",)
    with pytest.raises(AttributeError):
        q.terms = ()  # type: ignore[misc]
    assert repr(Query(terms=("a",))).startswith("Query(terms=('a',), agents=(), ")


# --- near-miss keys without difflib --------------------------------------------


def _difflib_near_key(word: str) -> str | None:
    """near_key as it was: difflib on every filter-shaped word."""
    import difflib
    import re

    from ledger.query.parser import KEYS

    if word in KEYS or not re.fullmatch(r"[a-z]{3,10}", word):
        return None
    m = difflib.get_close_matches(word, KEYS, n=1, cutoff=0.75)
    return m[0] if m else None


def _near_misses() -> list[str]:
    """Every key with one letter dropped, doubled, swapped with its neighbour or
    replaced, and a few words that only look like keys."""
    out = ["colour", "note", "http", "https", "error", "since", "until", "todo", "fixme", "typo", "kinds", "aftr"]
    for k in KEYS:
        for i in range(len(k)):
            out += [k[:i] + k[i + 1:], k[:i] + k[i] + k[i:], k[:i] + "x" + k[i + 1:], k[:i] + "e" + k[i:]]
            if i + 1 < len(k):
                out.append(k[:i] + k[i + 1] + k[i] + k[i + 2:])
    return out


def test_near_key_is_what_difflib_finds_on_near_misses():
    from ledger.query.parser import near_key

    words = _near_misses()
    assert sum(near_key(w) is not None for w in words) > 100  # the test sees matches, not only misses
    for w in words:
        assert near_key(w) == _difflib_near_key(w), w


@settings(max_examples=800, deadline=None)
@given(st.text(alphabet="abcdefghiklnorstuy", min_size=1, max_size=12))
def test_near_key_is_what_difflib_finds(word):
    from ledger.query.parser import near_key

    assert near_key(word) == _difflib_near_key(word)


def test_near_key_leaves_difflib_alone_for_ordinary_words():
    import subprocess
    import sys

    code = ("import sys; from ledger.query.parser import near_key; "
            "r = [near_key(w) for w in ('http', 'error', 'note', 'since', 'colour')]; "
            "print(r, 'difflib' in sys.modules, 're' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["[None,", "None,", "None,", "None,", "None]", "False", "False"]


# ------------------------------------------------- filters that can never match
def test_filter_warnings_for_filters_that_can_never_match():
    from ledger.query import filter_warnings, parse

    now = parse("after:2026-06-01", 0).after_ms
    kinds = lambda text, n=now: [(w["kind"], w["key"], w["values"]) for w in filter_warnings(text, n)]  # noqa: E731
    assert kinds("strength:<0") == [("empty-range", "strength", ["<0"])]
    assert kinds("x strength:>100") == [("empty-range", "strength", [">100"])]
    assert kinds("strength:<1 strength:>99 strength:>0 strength:<100") == [("repeated-filter", "strength",
                                                                            ["<1", ">99", ">0", "<100"])]
    # The last occurrence is the one used, so the one checked.
    assert kinds("strength:<0 strength:<5")[1:] == []
    assert kinds("strength:<5 strength:<0")[1:] == [("empty-range", "strength", ["<0"])]
    assert kinds("after:1w before:2w") == [("empty-range", "after", ["1w", "2w"])]
    assert kinds("after:2026-01-02 before:2026-01-01") == [("empty-range", "after", ["2026-01-02", "2026-01-01"])]
    assert kinds("after:2026-01-01 before:2026-01-01")[0][0] == "empty-range"
    assert kinds("after:2w before:1w") == [] and kinds("before:2099-01-01") == []
    assert kinds("after:2027-01-01") == [("empty-range", "after", ["2027-01-01"])]
    assert kinds("asof:2099-01-01") == [("future-asof", "asof", ["2099-01-01"])]
    assert kinds("asof:2026-05-01") == [] and kinds("asof:1d") == []
    # Without a clock only the strength check runs.
    assert kinds("asof:2099-01-01 after:1w before:2w", None) == []
    assert kinds("strength:>100", None)[0][0] == "empty-range"
    (w,) = filter_warnings("asof:2099-01-01", now)
    assert w["used"] == "now" and "read as now" in w["warning"] and "ledger" not in w["warning"]


# --------------------------------------------- dates and times as people type them
def test_the_date_error_names_every_form_and_each_of_its_examples_parses():
    """Fresh-user finding: the error named only 2026-01-01 and spans, never the instants
    with a time, Z or an offset that parse_when accepts. Every example the message gives
    parses, and every accepted shape has an example in it."""
    import re

    shown = re.findall(r"[0-9]+(?:mo|m|h|d|w|y)\b|[0-9][0-9T:+.Z -]*[0-9Z]", WHEN_REASON)
    examples = [x for x in shown if not x.isdigit()]
    assert {"2026-01-01", "2026-01-01T10:30", "2026-01-01T10:30:15Z", "2026-01-01T10:30+01:00", "2026-01-01 10:30",
            "30m", "2h", "30d", "2w", "6mo", "1y", "0d"} <= set(examples), examples
    for x in examples:
        assert parse_when(x, NOW) is not None, x
        key_value = "asof:" + x
        assert parse(key_value, NOW).terms == (), key_value


@pytest.mark.parametrize("key, field", [("asof", "asof_ms"), ("after", "after_ms"), ("before", "before_ms")])
@pytest.mark.parametrize("time, want", [
    ("22:49", (22, 49, 0, 0)), ("9:30", (9, 30, 0, 0)), ("22:49:05", (22, 49, 5, 0)), ("22:49:05.250", (22, 49, 5, 250)),
    ("22:49Z", (22, 49, 0, 0)), ("22:49z", (22, 49, 0, 0)), ("23:49+01:00", (22, 49, 0, 0)), ("21:49-0100", (22, 49, 0, 0)),
])
def test_a_time_after_a_date_is_the_filters_time_not_a_word(key, field, time, want):
    """Fresh-user finding: search "asof:2026-12-01 22:49" dropped the time and searched
    the word 22:49. A date alone followed by a time of day is that instant (as dates are
    often written, with a space); the words around it stay words."""
    q = parse(f"deploy {key}:2026-12-01 {time} runbook", NOW)
    h, m, sec, ms = want
    assert getattr(q, field) == int(datetime(2026, 12, 1, h, m, sec, tzinfo=timezone.utc).timestamp()) * 1000 + ms
    assert q.terms == ("deploy", "runbook")
    assert parse(format_query(q), NOW) == q
    assert [w for w in filter_warnings(f"deploy {key}:2026-12-01 {time}", NOW) if w["kind"] == "time-as-word"] == []


def test_a_bad_time_after_a_date_is_an_error_naming_both():
    with pytest.raises(InvalidQuery) as exc:
        parse("deploy asof:2026-12-01 25:99", NOW)
    assert exc.value.token == "asof:2026-12-01 25:99" and exc.value.reason == WHEN_REASON


@pytest.mark.parametrize("query", ["asof:30d 22:49", "after:2w 10:00", "before:2026-12-01T08:00 22:49"])
def test_a_time_the_filter_cannot_take_is_a_word_with_a_warning(query):
    """After a span or an instant with its own time, a time of day cannot be the filter's:
    it is searched as a word, and a warning says so and how to write the instant."""
    first, time = query.split()
    assert parse(query, NOW).terms == (time,)
    (w,) = [w for w in filter_warnings(query, NOW) if w["kind"] == "time-as-word"]
    assert w["values"] == [first, time] and "searched as a word" in w["warning"]
    key, value = first.split(":", 1)
    # The example names the date the user wrote, or the day the span reaches back to.
    ms = parse_when(value, NOW)
    date = datetime.fromtimestamp(ms // 1000, timezone.utc).date().isoformat()
    assert f"{key}:{date}T{time}" in w["warning"]
    assert parse(f"{key}:{date}T{time}", NOW).terms == ()


@pytest.mark.parametrize("token", ["22:49", "9:30", "22:49:05", "22:49:05,5", "22:49Z", "22:49+01", "22:49+0100",
                                   "22:49-01:00"])
def test_is_time_takes_times_of_day(token):
    from ledger.query.parser import is_time

    assert is_time(token)


@pytest.mark.parametrize("token", ["22", "22:4", "224:49", "22:49:5", "22:49pm", "a:bc", "file.py:12", "22:49+1",
                                   "22:49:05.", "http://x", "２２:４９"])
def test_is_time_leaves_other_words(token):
    from ledger.query.parser import is_time

    assert not is_time(token)


@pytest.mark.parametrize("span", ["0d", "0h", "0m", "0w", "0mo", "0y"])
def test_after_a_span_of_zero_is_now_not_the_future(span):
    """Fresh-user finding: after:0d was called "in the future". A span counts back from
    now, so 0d is now: after:0d matches nothing (nothing was created after now), and the
    warning says it is now and how to ask for today's memories."""
    assert parse(f"after:{span}", NOW).after_ms == NOW
    (w,) = filter_warnings(f"after:{span}", NOW)
    assert w["kind"] == "empty-range" and w["values"] == [span]
    assert "is now" in w["warning"] and "future" not in w["warning"]
    today = datetime.fromtimestamp(NOW // 1000, tz=timezone.utc).date().isoformat()
    assert f"after:{today}" in w["warning"] and "after:1d" in w["warning"]
    assert filter_warnings("after:1d", NOW) == [] and filter_warnings(f"asof:{span}", NOW) == []
    assert "future" in filter_warnings("after:2099-01-01", NOW)[0]["warning"]
