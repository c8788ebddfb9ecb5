"""The duplicate check and the proposer answer as their plain tests do.

``remember`` compares a new claim with up to 200 peers, so ``is_near_duplicate``,
``suspect`` and ``propose`` rule most peers out with substring tests of the new claim's
(cached) tokens and probes against the peer's text, before cutting the peer's own tokens
or reading its values (docs/benchmarks.md, "remember at 100k (tenth session)"). Those
gates are bounds, never answers: here the gated functions are compared, on generated
pairs of near and far texts, with the same rules written plainly (no gate), and the
bounds themselves are checked. A gate that ruled out a pair the plain rules would keep
fails here. No timing.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.conflicts.duplicates import (
    _raw_overlap,
    _shared_at_most,
    _token_set,
    _unread_change,
    _width_folded,
    changed_value,
    is_near_duplicate,
    meaning_signal,
    normal,
    propose,
    same_sequence,
    swapped_words,
)
from ledger.conflicts.signals import (
    _NEGATION_COVER,
    _NEGATION_SHARE,
    COVER_FLOOR,
    SHARE_FLOOR,
    Suspicion,
    _blocked_either,
    _cover_share,
    _probes,
    _score,
    _signals,
    overlap,
    signals,
    subject_differs,
    suspect,
)
from ledger.conflicts.values import haystack, may_share, read

# Words of claims, with what the gates must not trip on: versions glued to names (the
# haystack sets them apart), upper case, non-ASCII letters whose case folding or NFC
# changes them, CJK glued to numbers, fullwidth forms, typographic apostrophes, U+0345,
# operators, lists, words of meaning.
_WORDS = [
    "the", "auth", "billing", "service", "port", "listens", "on", "8080", "9090", "is", "was", "not", "enabled",
    "disabled", "for", "with", "to", "from", "must", "may", "all", "some", "retries", "3", "5", "90s", "2 GB",
    "src/app.py", "lib/app.py", "python3.11", "node18", "v2", "Python", "PORT", "Carol", "Dave", "reports",
    "ruff,", "black,", "mypy", "and", "or", ">=", "<=", "can't", "isn't", "Friday", "09:30", "4pm", "May",
    "staging", "production", "the", "cache", "uses", "used", "tabs", "spaces", "eu-west-1", "snake_case",
    "café", "cafe\u0301", "Straße", "STRASSE", "ﬁle", "İstanbul", "ΣΟΦΟΣ", "\u0345abc", "it’s", "Ben's",
    "服务端口是8080", "ポートは9090です", "缓存大小是512MB", "ＰＯＲＴ", "８０８０", "30秒", "1分钟", "MyApp.Users",
    "`make test`", "create_users.exs", "(not", "net-30)", "done.", "Now",
]

_word = st.sampled_from(_WORDS)


@st.composite
def _pairs(draw) -> tuple[str, str]:
    """A text and an edit of it (a word replaced, added, dropped, two swapped, a case
    changed), or two unrelated texts."""
    base = draw(st.lists(_word, min_size=1, max_size=14))
    if draw(st.integers(0, 5)) == 0:
        other = draw(st.lists(_word, min_size=1, max_size=14))
    else:
        other = list(base)
        for _ in range(draw(st.integers(0, 3))):
            i = draw(st.integers(0, len(other) - 1)) if other else 0
            op = draw(st.sampled_from(["replace", "insert", "drop", "swap", "case"]))
            if op == "replace" and other:
                other[i] = draw(_word)
            elif op == "insert":
                other.insert(i, draw(_word))
            elif op == "drop" and len(other) > 1:
                del other[i]
            elif op == "swap" and other:
                j = draw(st.integers(0, len(other) - 1))
                other[i], other[j] = other[j], other[i]
            elif op == "case" and other:
                other[i] = other[i].upper() if draw(st.booleans()) else other[i].lower()
    glue = draw(st.sampled_from([" ", " ", " ", "", ", "]))
    return glue.join(base), glue.join(other)


_texts = st.one_of(_pairs(), st.tuples(st.text(max_size=60), st.text(max_size=60)))


# ------------------------------------------------------------------ the rules written plainly


def _plain_near_duplicate(a: str, b: str) -> bool:
    a, b = _width_folded(a), _width_folded(b)
    if normal(a) == normal(b):
        return True
    return _raw_overlap(a, b) >= 0.5 and same_sequence(a, b) and not signals(a, b)


def _plain_suspect(a: str, b: str) -> Suspicion | None:
    va, vb = read(a), read(b)
    if not va.words:
        return None
    cover, share = _cover_share(va.words, vb.words)
    if cover < COVER_FLOOR or share < SHARE_FLOOR:
        return None
    fired = _signals(va, vb)
    if not fired:
        return None
    if _blocked_either(va, vb) and not (fired == ["negation on one side"] and cover >= _NEGATION_COVER
                                        and share >= _NEGATION_SHARE):
        return None
    ov = (cover + share) / 2
    return Suspicion(overlap=round(ov, 4), signals=tuple(fired), score=_score(ov, len(fired)))


def _one(a: str, b: str, signal: str) -> Suspicion:
    ov = overlap(a, b)
    return Suspicion(overlap=round(ov, 4), signals=(signal,), score=_score(ov, 1))


def _plain_propose(a: str, b: str) -> Suspicion | None:
    a, b = _width_folded(a), _width_folded(b)
    s = _plain_suspect(a, b)
    if s is not None:
        return s
    changed = meaning_signal(a, b)
    if changed is not None:
        return _one(a, b, changed)
    if _raw_overlap(a, b) >= 0.5 and swapped_words(a, b):
        return _one(a, b, "swapped words")
    if not changed_value(a, b) or subject_differs(a, b) or not _unread_change(a, b):
        return None
    return _one(a, b, "changed value")


def _answer(s: Suspicion | None) -> tuple | None:
    return None if s is None else (s.overlap, s.signals, s.score)


# ------------------------------------------------------------------ the comparisons


@settings(max_examples=600, deadline=None)
@given(_texts)
def test_the_gated_checks_answer_as_the_plain_rules(pair):
    a, b = pair
    for x, y in ((a, b), (b, a)):
        assert is_near_duplicate(x, y) is _plain_near_duplicate(x, y), (x, y)
        assert _answer(suspect(x, y)) == _answer(_plain_suspect(x, y)), (x, y)
        assert _answer(propose(x, y)) == _answer(_plain_propose(x, y)), (x, y)


@settings(max_examples=600, deadline=None)
@given(_texts)
def test_the_shared_token_bound_is_never_below_the_shared_tokens(pair):
    a, b = (_width_folded(t) for t in pair)
    for x, y in ((a, b), (b, a)):
        assert _shared_at_most(_token_set(x), y) >= len(_token_set(x) & _token_set(y)), (x, y)


@settings(max_examples=600, deadline=None)
@given(_texts)
def test_a_probe_the_peer_may_share_is_in_its_text_lower_cased(pair):
    # suspect() counts the new claim's probes found in the peer lower-cased (ASCII) or
    # in its haystack before the stricter may_share count: each probe may_share passes
    # must be found there.
    a, b = (_width_folded(t) for t in pair)
    for x, y in ((a, b), (b, a)):
        hay = haystack(y)
        low = y.lower() if y.isascii() else hay
        for w, p in _probes(x):
            if may_share(hay, w, p):
                assert p in low, (x, y, w, p)


def test_the_examples_the_gates_were_built_for():
    # the new claim shares a word or two with most peers: ruled out, as before
    assert not is_near_duplicate("The auth service listens on port 8080", "The deploy job runs on Fridays")
    assert propose("The auth service listens on port 8080", "Port forwarding is done by the proxy") is None
    # a version glued to its name in the peer: the bound must still see "python"
    assert propose("The build uses python 3.11", "The build uses python3.12") is not None
    assert _shared_at_most(_token_set("The build uses python 3.11"), "The build uses python3.12") >= 3
    # non-ASCII peers are normalised before the substring tests (NFC: "cafe" + U+0301 is "café")
    assert is_near_duplicate("The café opens at 9", "The cafe\u0301 opens at 9")
    assert propose("The café opens at 9", "The cafe\u0301 opens at 10") is not None
    # a peer holding just a quarter of the new claim's frame words is still read (the floor)
    assert suspect("auth service listens port 8080", "port 9090") is not None
    # a non-ASCII peer is searched in its haystack (case folded: the probe of "straße" is "strass")
    assert suspect("Straße 8080", "Straße 9090") is not None
    # one word of meaning, one list changed: still proposed
    assert propose("The billing service works for the EU region", "The billing service works with the EU region")
    assert propose("We lint with ruff, black, mypy", "We lint with ruff, black, flake8")
