"""Lexical contradiction proposer: the pure part (stdlib only, no I/O, no sqlite3).

Two claims are *suspected* of contradicting each other when they talk about the same
thing (enough token overlap) and differ on a value that can be read off the text
(a number, a date, a clock time, a weekday, a month) or one of them is negated. The
proposer only ranks candidates; an agent judges them and a person resolves them.

Every constant and rule comes from the seed implementation (``conflicts.ts::suspect``,
described in ``reference/original-implementations.md`` section 1.9.1) unless a comment
says "ours" or "differs from the seed". The deliberate differences (DESIGN.md,
"Where we deliberately differ"; issue 3) are:

* months and weekdays are matched as whole words and normalised to a canonical full
  name before comparing: ``market``/``decide``/``mayor`` are not months, ``Wednesday``
  and ``Saturday`` are weekdays, ``fri`` == ``friday``, ``sept`` == ``september``;
* digits that belong to an ISO date or a clock time are not also "numbers", so
  ``16:00`` vs ``09:30`` is one signal (divergent times), not two.

Further small decisions of ours, documented where they are made:

* the modal verb ``may`` is only a month when the context says so (``May 3``,
  ``in May``, ``May`` capitalised mid-sentence); otherwise "may fail" would be a month;
* clock times are normalised to ``HH:MM`` (``9:30`` == ``09:30``) and ``4pm`` /
  ``4:30 pm`` are clock times too (``4pm`` == ``16:00``);
* ``pair_key`` refuses to pair an id with itself.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

__all__ = [
    "HEAD_TOKENS",
    "OVERLAP_FLOOR",
    "SIGNAL_NAMES",
    "STOPWORDS",
    "Suspicion",
    "content_tokens",
    "overlap",
    "pair_key",
    "query_terms",
    "signals",
    "suspect",
]

# ---------------------------------------------------------------------------
# Constants (all from the seed, conflicts.ts)
# ---------------------------------------------------------------------------

#: The seed's stopword set, verbatim. The reference prose says "45" but lists 44 words,
#: and the seed's source has the same 44. Most are already dropped by the length rule.
STOPWORDS: frozenset[str] = frozenset(
    """
    a an and any are as at be been but by for from has have he her his i if in is it
    its me my of on or she that the their them they this to was were when which with
    you your
    """.split()
)

#: Seed ``OVERLAP_FLOOR``: pairs whose overlap is below this are never proposed.
OVERLAP_FLOOR = 0.18

#: Seed: the "subject" of a claim is its first 3 content tokens (``headOverlap``).
HEAD_TOKENS = 3

#: Signal names, in the fixed order :func:`signals` reports them.
SIGNAL_NAMES: tuple[str, ...] = (
    "divergent numbers",
    "divergent dates",
    "divergent times",
    "divergent weekdays",
    "divergent months",
    "negation on one side",
)

# Seed score weights: score = overlap*0.6 + min(1, signals/3)*0.4, rounded to 4 places.
_OVERLAP_WEIGHT = 0.6
_SIGNAL_WEIGHT = 0.4
_SIGNALS_FOR_FULL_WEIGHT = 3

# ---------------------------------------------------------------------------
# Tokenising and overlap
# ---------------------------------------------------------------------------

# Seed: replace every character that is not a letter, digit, whitespace or '-' by a
# space. Python's \w also admits '_', which is not a letter, hence the alternative.
_NON_TOKEN = re.compile(r"[^\w\s-]|_")
_ALL_DIGITS = re.compile(r"\d+")


def _normalise(text: str) -> str:
    # NFC so that a decomposed "é" (e + combining accent) stays one letter; ours.
    return unicodedata.normalize("NFC", text)


@lru_cache(maxsize=8192)
def _tokens(text: str) -> tuple[str, ...]:
    cleaned = _NON_TOKEN.sub(" ", _normalise(text).lower())
    return tuple(
        tok
        for tok in cleaned.split()
        if len(tok) > 2 and tok not in STOPWORDS and not _ALL_DIGITS.fullmatch(tok)
    )


def content_tokens(text: str) -> list[str]:
    """The seed tokeniser: lowercase, non-token characters to spaces, split on
    whitespace, keep tokens longer than 2 characters that are neither stopwords nor
    all digits. Order and duplicates are kept (the head is the first 3 of this list).

    >>> content_tokens("Invoice renews every 12 months, net-45 (not net-30)!")
    ['invoice', 'renews', 'every', 'months', 'net-45', 'not', 'net-30']
    """
    return list(_tokens(text))


def _jaccard(a: set[str], b: set[str]) -> float:
    # Seed: a Jaccard with an empty set is 0 (even two empty sets).
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def overlap(a: str, b: str) -> float:
    """``max(body, head)``: body is the Jaccard of the two content-token sets, head the
    Jaccard of the sets of the first :data:`HEAD_TOKENS` content tokens. In [0, 1],
    symmetric, unrounded."""
    ta, tb = _tokens(a), _tokens(b)
    body = _jaccard(set(ta), set(tb))
    head = _jaccard(set(ta[:HEAD_TOKENS]), set(tb[:HEAD_TOKENS]))
    return max(body, head)


# ---------------------------------------------------------------------------
# Value extraction (one function per signal, each returns a set of canonical values)
# ---------------------------------------------------------------------------

# The digit patterns are ASCII, like the seed's JavaScript regexes.
# Differs from the seed: a short unit glued to the number counts with it ("30s",
# "100ms", "4GB", "10k", "2x", "5%"), ordinals count as their number ("3rd" = "3"), and
# the number words one to twelve count as digits. The seed saw none of these.
_NUMBER = re.compile(r"\b(\d+(?:[.,]\d+)?)(%|[a-z]{1,3}\b|\b)", re.ASCII | re.IGNORECASE)
_ORDINAL = frozenset({"st", "nd", "rd", "th"})
_NUMBER_WORDS = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split()) if i >= 1}
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b", re.ASCII)

# Clock times. The seed's pattern is \b\d{1,2}:\d{2}\b. Differs from the seed: digit
# guards instead of \b (so "123:456" is still not a time), an optional ":ss" (so
# "16:00:30" leaves no stray number 30 behind), an optional am/pm suffix, and bare
# "4pm" / "4 p.m." (which the seed saw as nothing at all: "4pm" has no word break).
_CLOCK = re.compile(
    r"(?<![\d:])(\d{1,2}):(\d{2})(?::\d{2}(?:\.\d+)?)?(?![\d:])"
    r"(?:\s?([ap])\.?m\b\.?)?",
    re.ASCII | re.IGNORECASE,
)
_BARE_MERIDIEM = re.compile(r"\b(\d{1,2})\s?([ap])\.?m\b\.?", re.ASCII | re.IGNORECASE)


def _clock_value(hour: int, minute: int, meridiem: str | None) -> str | None:
    """Canonical ``HH:MM``, or None when the digits are not a time of day. A meridiem
    on a 24-hour reading ("16:00 pm") is ignored; callers pass none for bare hours
    outside 1..12 ("16pm" is not a time)."""
    if meridiem and 1 <= hour <= 12:
        hour = hour % 12 + (12 if meridiem.lower() == "p" else 0)
    if hour > 24 or minute > 59:
        return None  # "99:99" is not a time; its digits stay numbers
    return f"{hour:02d}:{minute:02d}"


def _times_and_mask(text: str) -> tuple[set[str], str]:
    """Clock times as canonical ``HH:MM``, and the text with every date and time
    blanked out (same length), ready for the numbers pattern."""
    chars = list(text)
    times: set[str] = set()

    def blank(m: re.Match[str]) -> None:
        chars[m.start() : m.end()] = " " * (m.end() - m.start())

    for m in _DATE.finditer(text):
        blank(m)
    masked = "".join(chars)
    for m in _CLOCK.finditer(masked):
        value = _clock_value(int(m.group(1)), int(m.group(2)), m.group(3))
        if value is not None:
            times.add(value)
            blank(m)
    masked = "".join(chars)
    for m in _BARE_MERIDIEM.finditer(masked):
        hour = int(m.group(1))
        value = _clock_value(hour, 0, m.group(2)) if 1 <= hour <= 12 else None
        if value is not None:
            times.add(value)
            blank(m)
    return times, "".join(chars)


def _dates(text: str) -> set[str]:
    return {m.group(0) for m in _DATE.finditer(text)}


def _numbers(masked: str) -> set[str]:
    out = set()
    for m in _NUMBER.finditer(masked):
        unit = m.group(2).lower()
        out.add(m.group(1) if unit in _ORDINAL else m.group(1) + unit)
    for w in _WORD.finditer(masked.lower()):
        if w.group(0) in _NUMBER_WORDS:
            out.add(_NUMBER_WORDS[w.group(0)])
    return out


# Whole words: runs of word characters. '_' stays inside a word so that identifiers
# such as ``sat_solver`` or ``release_may`` are not weekdays or months.
_WORD = re.compile(r"\w+")

_WEEKDAY_FORMS: dict[str, tuple[str, ...]] = {
    # Seed forms (mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun, optionally +day/+days)
    # plus the full names the seed missed (wednesday, saturday) and "weds".
    "monday": ("mon", "mondays"),
    "tuesday": ("tue", "tues", "tuesdays"),
    "wednesday": ("wed", "weds", "wednesdays"),
    "thursday": ("thu", "thur", "thurs", "thursdays"),
    "friday": ("fri", "fridays"),
    "saturday": ("sat", "saturdays"),
    "sunday": ("sun", "sundays"),
}
_WEEKDAYS: dict[str, str] = {
    form: day for day, forms in _WEEKDAY_FORMS.items() for form in (day, *forms)
}

_MONTH_FORMS: dict[str, tuple[str, ...]] = {
    # Seed prefixes (jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec), but only the
    # abbreviation itself or the full name counts: "market" is not March.
    "january": ("jan",),
    "february": ("feb",),
    "march": ("mar",),
    "april": ("apr",),
    "may": (),
    "june": ("jun",),
    "july": ("jul",),
    "august": ("aug",),
    "september": ("sep", "sept"),
    "october": ("oct",),
    "november": ("nov",),
    "december": ("dec",),
}
_MONTHS: dict[str, str] = {
    form: month for month, forms in _MONTH_FORMS.items() for form in (month, *forms)
}

# Words after which a lowercase "may" is the month ("in may", "by may", "mid-may").
_MAY_MONTH_CUES = frozenset(
    "in since until till by before after from through during early late mid end of".split()
)
_DAY_OR_YEAR = re.compile(r"\d{1,4}(?:st|nd|rd|th)?", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?:;]\s*$|^\s*$")


def _is_month_may(text: str, words: list[re.Match[str]], i: int) -> bool:
    """Is the i-th word (some casing of "may") the month rather than the modal verb?

    Ours (the seed counted every "may"): a month when next to a day or year
    ("May 3", "3rd May", "May 2026"), after a time preposition ("in may",
    "end of May", "mid-May"), or capitalised when not opening a sentence
    ("ship the May release"). "It may fail" and "May be flaky" are not months.
    """
    prev = words[i - 1].group(0) if i > 0 else ""
    nxt = words[i + 1].group(0) if i + 1 < len(words) else ""
    if _DAY_OR_YEAR.fullmatch(prev) or _DAY_OR_YEAR.fullmatch(nxt):
        return True
    if prev.lower() in _MAY_MONTH_CUES:
        return True
    word = words[i]
    if word.group(0)[0] == "M":
        return not _SENTENCE_END.search(text[: word.start()])
    return False


def _calendar_words(text: str) -> tuple[set[str], set[str]]:
    """(weekdays, months), each normalised to the canonical full lowercase name."""
    words = list(_WORD.finditer(text))
    weekdays: set[str] = set()
    months: set[str] = set()
    for i, m in enumerate(words):
        w = m.group(0).lower()
        if w in _WEEKDAYS:
            weekdays.add(_WEEKDAYS[w])
        elif w in _MONTHS:
            if w == "may" and not _is_month_may(text, words, i):
                continue
            months.add(_MONTHS[w])
    return weekdays, months


# Seed negation list, matched as words on the raw text, case-insensitively. We also
# accept the typographic apostrophe (don’t) and any whitespace inside the phrases.
_NEGATION = re.compile(
    r"\b(?:never|not|no\s+longer|isn['’]t|doesn['’]t|don['’]t|cannot|can['’]t|won['’]t"
    r"|avoid|avoids|avoided|stopped|dropped|without|instead\s+of|rather\s+than"
    r"|switched)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class _Values:
    numbers: frozenset[str]
    dates: frozenset[str]
    times: frozenset[str]
    weekdays: frozenset[str]
    months: frozenset[str]
    negated: bool


# Cached because the store compares one new claim with many peers (pure, so safe).
@lru_cache(maxsize=8192)
def _values(text: str) -> _Values:
    text = _normalise(text)
    times, masked = _times_and_mask(text)
    weekdays, months = _calendar_words(text)
    return _Values(
        numbers=frozenset(_numbers(masked)),
        dates=frozenset(_dates(text)),
        times=frozenset(times),
        weekdays=frozenset(weekdays),
        months=frozenset(months),
        negated=_NEGATION.search(text) is not None,
    )


def _diverge(a: frozenset[str], b: frozenset[str]) -> bool:
    # Seed: both sides must have values, and the sets must differ. Differs from the
    # seed: each side must also hold a value the other lacks. A side that only adds
    # values ("7 days" vs "7 days for events and 30 for audit logs", "3.11" vs "3.11 and
    # 3.12") is a refinement far more often than a contradiction.
    return bool(a) and bool(b) and bool(a - b) and bool(b - a)


def _signals(va: _Values, vb: _Values) -> list[str]:
    fired = (
        _diverge(va.numbers, vb.numbers),
        _diverge(va.dates, vb.dates),
        _diverge(va.times, vb.times),
        _diverge(va.weekdays, vb.weekdays),
        _diverge(va.months, vb.months),
        va.negated != vb.negated,
    )
    return [name for name, on in zip(SIGNAL_NAMES, fired) if on]


def signals(a: str, b: str) -> list[str]:
    """Names of the signals that fire between two texts, in :data:`SIGNAL_NAMES` order.

    A value signal fires when both texts have at least one value of that kind and the
    two sets differ; negation fires when exactly one text is negated. Symmetric.

    >>> signals("Weekly review runs Friday 16:00", "Weekly review runs Thursday 09:30")
    ['divergent times', 'divergent weekdays']
    """
    return _signals(_values(a), _values(b))


# ---------------------------------------------------------------------------
# The proposer
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Suspicion:
    """Why a pair of claims is proposed as a conflict candidate.

    ``overlap`` is rounded to 4 places for display; ``score`` (seed formula, computed
    from the unrounded overlap) is ``round(overlap*0.6 + min(1, len(signals)/3)*0.4, 4)``
    and is used for ranking only.
    """

    overlap: float
    signals: tuple[str, ...]
    score: float


def _score(ov: float, n_signals: int) -> float:
    share = min(1.0, n_signals / _SIGNALS_FOR_FULL_WEIGHT)
    return round(ov * _OVERLAP_WEIGHT + share * _SIGNAL_WEIGHT, 4)


def suspect(a: str, b: str) -> Suspicion | None:
    """A :class:`Suspicion` when the texts overlap by at least :data:`OVERLAP_FLOOR`
    and at least one signal fires, else ``None``. Symmetric: ``suspect(a, b) ==
    suspect(b, a)``. Identical texts never fire a signal, so are never proposed.

    >>> suspect("Invoice renews every 12 months", "Invoice renews every 24 months")
    Suspicion(overlap=1.0, signals=('divergent numbers',), score=0.7333)
    """
    ov = overlap(a, b)
    if ov < OVERLAP_FLOOR:
        return None  # the floor gates before any signal is computed
    fired = signals(a, b)
    if not fired:
        return None
    return Suspicion(overlap=round(ov, 4), signals=tuple(fired), score=_score(ov, len(fired)))


def pair_key(a_id: str, b_id: str) -> tuple[str, str]:
    """The stored order of a candidate pair: ids sorted lexicographically (``a < b``).

    Raises ``ValueError`` for an id paired with itself (ours: the seed never compared a
    memory with itself, and a key ``(x, x)`` would be a bug upstream).
    """
    if a_id == b_id:
        raise ValueError(f"cannot pair memory {a_id!r} with itself")
    return (a_id, b_id) if a_id < b_id else (b_id, a_id)


def query_terms(text: str, limit: int = 12) -> list[str]:
    """Distinct content tokens to find peers with through the full-text index (ours:
    the seed scanned the 500 most recently read claims instead).

    The head (the first :data:`HEAD_TOKENS` distinct content tokens) comes first,
    because a shared subject alone can clear the overlap floor; then the remaining
    tokens, longest first (ties in text order), longer words being rarer. At most
    ``limit`` terms. Terms are lowercase and may contain ``-`` or non-ASCII letters,
    so the store must quote each one as an FTS5 string before OR-ing them.

    >>> query_terms("Deploy the billing service with make deploy-prod on Fridays", 5)
    ['deploy', 'billing', 'service', 'deploy-prod', 'fridays']
    """
    if limit <= 0:
        return []
    distinct = list(dict.fromkeys(content_tokens(text)))
    head, rest = distinct[:HEAD_TOKENS], distinct[HEAD_TOKENS:]
    rest.sort(key=len, reverse=True)  # stable: ties keep text order
    return (head + rest)[:limit]
