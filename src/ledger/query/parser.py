"""The search query language: free text plus ``key:value`` filters.

Pure and stdlib only (layer L0): no SQL, no clock of its own (callers pass ``now_ms``).

Grammar, in short:

* The text is split on whitespace; there is no quoting.
* A token is a filter only if it has a colon at index > 0 and the text before the
  first colon, lowercased, is one of :data:`KEYS`. A ``word:value`` token whose word is
  a near miss of a key (``clster:code``, ``agnet:x``, ``befor:2d``; see
  :func:`near_key`) is an error naming the keys, because it would otherwise match
  nothing in silence. Every other token (``colour:blue``, ``file.py:12``,
  ``http://x``, ``:nope``) is a lowercased free-text term, so pasted text still searches.
* A token that is not ASCII is NFKC-folded first when its folded form is filter-shaped
  (:func:`tokens`): fullwidth keys, colons and values (``ｃｌｕｓｔｅｒ：ｐｒｏｃ``) are filters.
* ``key:`` with nothing after the colon (``Type:`` in pasted "Type: error in build") is
  no filter: it is the free-text word, and :func:`filter_warnings` gives an
  ``empty-filter`` warning with the filter to write instead (it used to be dropped, so
  ``agent:`` matched everything, then refused, so pasted text failed).
* ``agent:``, ``cluster:``, ``type:`` and ``kind:`` values are lowercased and not
  rejected; repeating one of these keys widens it (OR within a key, AND across keys).
  ``type:`` and ``kind:`` have a closed set of values (:data:`CLOSED_VALUES`): any other
  value matches nothing, and :func:`filter_warnings` says so (as the service does for a
  ``cluster:`` naming no cluster of the store).
* ``strength:<N`` / ``strength:>N`` with N a whole number in 0..100 (anything else is
  an error naming what is wrong and the nearest valid bound, :func:`strength_reason`),
  stored as N/100; they compare the
  0-100 integer surfaces show (:func:`ledger.strength.shown`, halves rounded up), so a
  memory shown as 51 is ``strength:>50`` and never ``strength:<51``.
* ``asof:``, ``after:``, ``before:`` take a span (``30m``, ``2h``, ``30d``, ``2w``,
  ``6mo``, ``1y``, measured back from now; ``m`` is minutes, ``mo`` months; ``0d`` is
  now) or an ISO date/datetime (``2026-01-01``, ``2026-01-01T10:30``,
  ``2026-01-01T10:30:15Z``, ``2026-01-01T10:30+01:00``). A date alone is UTC midnight; a
  datetime without an offset is taken as UTC. A date alone followed by a token that is
  a time of day (``asof:2026-12-01 22:49``, as dates are often written) takes that time
  (:func:`when_value`): the time is not searched as a word. Any other word right after
  the filter that was meant as part of its instant (a second time, ``9pm``, ``UTC``, a
  second date) stays a word, and :func:`filter_warnings` says how to write it
  (``time-as-word``, :func:`_time_word`).
* For ``strength``, ``asof``, ``after`` and ``before`` the last occurrence wins;
  :func:`filter_warnings` says so when one is given twice with different values.

All instants are integer milliseconds since the Unix epoch, UTC.
"""

from __future__ import annotations

from ledger import regex
from ledger.errors import InvalidQuery, QueryTooLong
from ledger.frozen import Frozen

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover - keeps `typing` off the CLI start-up path
    from typing import Any

__all__ = [
    "KEYS",
    "KEY_HINTS",
    "MAX_MS",
    "MIN_MS",
    "CLOSED_VALUES",
    "Query",
    "filter_warnings",
    "format_query",
    "check_text",
    "parse",
    "parse_when",
]

#: Every filter key, in the order surfaces should list them.
KEYS: tuple[str, ...] = ("agent", "cluster", "type", "kind", "strength", "asof", "after", "before")

#: One-line hint per key, for autocomplete and help text.
KEY_HINTS: dict[str, str] = {
    "agent": "written or read by that agent, e.g. agent:claude",
    "cluster": "in that topic cluster, e.g. cluster:billing",
    "type": "origin: chat or doc, e.g. type:doc",
    "kind": "claim or chunk, e.g. kind:claim",
    "strength": "trust on a 0-100 scale, e.g. strength:<40 or strength:>70",
    "asof": "what the store knew then, e.g. asof:2026-01-01 or asof:30d",
    "after": "created after, e.g. after:2w or after:2026-01-01",
    "before": "created before, e.g. before:6mo or before:2026-01-01",
}

#: The values a filter key can match, for the keys that have a closed set: ``type:`` is a
#: memory's origin, ``kind:`` its kind (the store's CHECK constraints, m001).
CLOSED_VALUES: dict[str, tuple[str, ...]] = {"type": ("chat", "doc"), "kind": ("claim", "chunk")}

STRENGTH_REASON = "expected strength:<N or strength:>N, N between 0 and 100"
WHEN_REASON = ("expected a date (2026-01-01: midnight UTC), a date and time (2026-01-01T10:30, 2026-01-01T10:30:15Z, "
               "2026-01-01T10:30+01:00, or with a space: 2026-01-01 10:30; UTC unless an offset is given) or a span "
               "back from now (30m, 2h, 30d, 2w, 6mo, 1y; 0d is now)")

#: One valid filter per key, as messages show it (a test parses each and checks it
#: draws no warning).
EXAMPLES: dict[str, str] = {"agent": "agent:claude", "cluster": "cluster:code", "type": "type:doc", "kind": "kind:claim",
                            "strength": "strength:>50", "asof": "asof:2026-01-01", "after": "after:30d",
                            "before": "before:2026-01-01"}


def empty_filter_warning(typed: str, key: str, after: str | None) -> dict:
    """The ``empty-filter`` warning of a token that is a filter key and a colon with
    nothing after it (``Type:`` in "Type: error in build", ``before:`` at the end):
    :func:`parse` searches it as the plain word (pasted text is never refused), and the
    warning says how to filter instead. ``typed``: the token as typed; ``after``: the
    token that follows it, if any; when it would be a valid value of ``key``
    (``cluster: proc``) the fix shown is ``key:<it>``, else :data:`EXAMPLES`' filter.
    Shape ``{"kind": "empty-filter", "key", "values": [typed], "warning"}``."""
    fix = EXAMPLES[key]
    if after is not None and _split_filter(after) is None and _valid_value(key, after):
        fix = f"{key}:{after.lower() if key in _MULTI_FIELDS else after}"
    return {"kind": "empty-filter", "key": key, "values": [typed],
            "warning": f'{typed} has nothing after the colon, so it was searched as the word "{key}". To filter with '
                       f"{key}:, write the value right after the colon, with no space: {fix}."}


def _valid_value(key: str, value: str) -> bool:
    """Whether ``key:value`` parses and means something: a closed value of ``type:`` or
    ``kind:``, a strength bound, an instant; any value of ``agent:`` or ``cluster:``."""
    if key in CLOSED_VALUES:
        return value.lower() in CLOSED_VALUES[key]
    if key == "strength":
        m = _STRENGTH_RE.fullmatch(value)
        return m is not None and int(m.group(2)) <= 100
    if key in _WHEN_FIELDS:
        return parse_when(value, 0) is not None
    return True


def strength_reason(value: str) -> str:
    """Why ``strength:<value>`` does not parse, naming what is wrong with this value and
    the nearest valid filter when there is one: a fraction (``>0.5``: strength is shown
    0-100, so ``strength:>50``; ``>50.5``: shown strengths are whole numbers, so
    ``strength:>50``, the same memories), ``>=``/``<=``/``=`` (also ``≥``, ``≤``, ``=>``;
    only strict bounds: ``>=50`` is ``>49``, ``=51`` is ``>50``), a ``%``, no ``<``/``>``,
    a number outside 0..100, or no number. Every reason ends with the rule
    (``expected strength:<N or strength:>N ...``)."""
    rule = "expected strength:<N or strength:>N, N a whole number from 0 to 100"
    v = value.replace("≥", ">=").replace("≤", "<=").replace("=>", ">=").replace("=<", "<=")
    op = v[:2] if v[:2] in (">=", "<=") else v[:1] if v[:1] in ("<", ">", "=") else ""
    rest = v[len(op):]
    num = _number(rest.rstrip("%"))
    if num is None:
        if not rest:
            return f"strength:{value} needs a number after {op}, e.g. {EXAMPLES['strength']}; {rule}"
        return f"{rest} is not a number; {rule}"
    wrong = []
    if "." in rest and 0 < num < 1:
        num *= 100
        wrong.append("strength is on a 0-100 scale, not 0-1")
    elif "." in rest:
        wrong.append("shown strengths are whole numbers")
    if rest.endswith("%"):
        wrong.append("no % sign is needed")
    if num < 0 or num > 100:
        return f"{rest} is outside 0..100; {rule}"
    if op == "":
        return (f"strength:{value} has no < or >; did you mean strength:>{_whole(num, '>')} or "
                f"strength:<{_whole(num, '<')}? {rule}")
    if op == "=":
        # Only one bound: the side that keeps the value and what is nearest to it.
        wrong.append("= is not supported (a query takes one bound, < or >)")
        fix = f"<{_whole(num, '>') + 1}" if num < 50 else f">{_whole(num, '<') - 1}"
    elif len(op) == 2:
        wrong.append(f"{op} is not supported, only the strict {op[0]}")
        fix = f">{_whole(num, '<') - 1}" if op[0] == ">" else f"<{_whole(num, '>') + 1}"
    else:
        fix = f"{op}{_whole(num, op)}"
    if fix in (">-1", "<101"):
        return f"{'; '.join(wrong)}, and strength:{value} holds every memory: leave it out; {rule}"
    return f"{'; '.join(wrong) or 'not a valid bound'}: did you mean strength:{fix}? {rule}"


def _number(text: str) -> float | None:
    """``text`` as a non-negative-or-negative decimal number (digits, one ``.``, an
    optional leading ``-``), or None."""
    body = text[1:] if text.startswith("-") else text
    whole, _, frac = body.partition(".")
    if not (whole or frac) or not (whole.isdigit() or not whole) or not (frac.isdigit() or not frac) or not body.isascii():
        return None
    return float(text)


def _whole(num: float, op: str) -> int:
    """The whole bound that keeps the same shown strengths: shown > 50.5 is shown > 50,
    shown < 50.5 is shown < 51."""
    import math

    return math.floor(num) if op == ">" else math.ceil(num)

_DAY_MS = 86_400_000
# Span units in whole milliseconds (30.4 days = 2_626_560_000 ms exactly), so span
# arithmetic stays in integers.
_SPAN_MS = {"m": 60_000, "h": 3_600_000, "d": _DAY_MS, "w": 7 * _DAY_MS, "mo": 304 * _DAY_MS // 10,
            "y": 365 * _DAY_MS}
_SPAN_RE = regex.compile(r"([0-9]+)(mo|m|h|d|w|y)")
_WORD_KEY_RE = regex.compile(r"[a-z]{3,10}")
_STRENGTH_RE = regex.compile(r"([<>])\s*([0-9]{1,3})")

#: Earliest / latest instant a query can name (0001-01-01 .. 9999-12-31T23:59:59.999Z),
#: the range :mod:`datetime` can represent, so every parsed instant can be formatted.
#: Written out rather than computed: :mod:`datetime` is imported only by the functions
#: that read or write a date (start-up budget, docs/benchmarks.md "Start-up"); a test
#: checks these against :mod:`datetime`.
MIN_MS: int = -62_135_596_800_000
MAX_MS: int = 253_402_300_799_999

_MULTI_FIELDS = {"agent": "agents", "cluster": "clusters", "type": "types", "kind": "kinds"}
_WHEN_FIELDS = {"asof": "asof_ms", "after": "after_ms", "before": "before_ms"}


class Query(Frozen):
    """A parsed query.

    ``terms`` are the lowercased free-text tokens in input order (duplicates kept).
    ``agents``/``clusters``/``types``/``kinds`` are lowercased, de-duplicated values in
    first-seen order; an empty tuple means "no filter". ``strength`` is N/100 for
    ``strength:<N``/``strength:>N`` (0-1 scale); the store compares the shown integer
    (:func:`ledger.strength.shown`) strictly with N by ``strength_op`` (``'<'`` or
    ``'>'``); both are None when absent. ``asof_ms``/``after_ms``/``before_ms`` are epoch milliseconds, UTC.
    Immutable, with value equality (:class:`ledger.frozen.Frozen`).
    """

    __slots__ = ("terms", "agents", "clusters", "types", "kinds", "strength_op", "strength", "asof_ms", "after_ms",
                 "before_ms")

    def __init__(
        self,
        terms: tuple[str, ...] = (),
        agents: tuple[str, ...] = (),
        clusters: tuple[str, ...] = (),
        types: tuple[str, ...] = (),
        kinds: tuple[str, ...] = (),
        strength_op: str | None = None,
        strength: float | None = None,
        asof_ms: int | None = None,
        after_ms: int | None = None,
        before_ms: int | None = None,
    ) -> None:
        s = object.__setattr__
        s(self, "terms", terms)
        s(self, "agents", agents)
        s(self, "clusters", clusters)
        s(self, "types", types)
        s(self, "kinds", kinds)
        s(self, "strength_op", strength_op)
        s(self, "strength", strength)
        s(self, "asof_ms", asof_ms)
        s(self, "after_ms", after_ms)
        s(self, "before_ms", before_ms)

    @property
    def text(self) -> str:
        """The free-text part: ``terms`` joined by single spaces ('' if none)."""
        return " ".join(self.terms)

    @property
    def has_filters(self) -> bool:
        """True if any ``key:value`` filter is set (free text does not count)."""
        return bool(
            self.agents
            or self.clusters
            or self.types
            or self.kinds
            or self.strength is not None
            or self.asof_ms is not None
            or self.after_ms is not None
            or self.before_ms is not None
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly dict: every field (tuples as lists, strength 0-1, instants as
        epoch ms UTC or None) plus ``text``."""
        return {
            "text": self.text,
            "terms": list(self.terms),
            "agents": list(self.agents),
            "clusters": list(self.clusters),
            "types": list(self.types),
            "kinds": list(self.kinds),
            "strength_op": self.strength_op,
            "strength": self.strength,
            "asof_ms": self.asof_ms,
            "after_ms": self.after_ms,
            "before_ms": self.before_ms,
        }


def near_key(word: str) -> str | None:
    """The filter key ``word`` is a likely typo of, or None.

    ``word`` (lowercased, 3-10 letters) is a near miss when it is not a key and
    :func:`difflib.get_close_matches` rates a key at 0.75 or more (one dropped, added
    or swapped letter in a key of 4+ letters: ``clster``, ``agnet``, ``strenght``,
    ``befor``). Plain words that merely look like keys (``colour``, ``note``, ``http``)
    stay free text.
    """
    if word in KEYS or not _WORD_KEY_RE.fullmatch(word):
        return None
    # difflib imports re (about 4 ms of an agent verb's start-up), and words before a
    # colon are common in queries ("http://...", "note: ..."). Its ratio is 2*M/T with M
    # matched characters, never more than the characters the two words share as
    # multisets (its own quick_ratio bound): when no key reaches the cutoff even so,
    # difflib cannot find one either.
    if not any(2.0 * _shared(word, k) / (len(word) + len(k)) >= _NEAR for k in KEYS):
        return None
    import difflib

    match = difflib.get_close_matches(word, KEYS, n=1, cutoff=_NEAR)
    return match[0] if match else None


_NEAR = 0.75  # near_key's cutoff for difflib's ratio


def _shared(a: str, b: str) -> int:
    """How many characters ``a`` and ``b`` have in common, counted as multisets."""
    left: dict[str, int] = {}
    for c in b:
        left[c] = left.get(c, 0) + 1
    n = 0
    for c in a:
        if left.get(c, 0) > 0:
            left[c] -= 1
            n += 1
    return n


def unknown_key_reason(word: str, nearest: str) -> str:
    """The message for a near-miss key: the suggestion, then every key."""
    return f"unknown filter {word}:; did you mean {nearest}:? Filters: " + " ".join(f"{k}:" for k in KEYS)


def tokens(text: str) -> list[str]:
    """The whitespace-split tokens of ``text`` as :func:`parse` reads them: a token that
    is not ASCII is NFKC-folded when its folded form is filter-shaped (its text before
    the first colon, lowercased, is a key or a near miss of one, :func:`near_key`), so
    fullwidth keys, colons and values typed with an input method (``ｃｌｕｓｔｅｒ:proc``,
    ``cluster：proc``, ``strength:>５０``) are the filters they look like, as free text is
    folded by the word index. Other tokens are kept as typed (free text is folded later,
    :func:`ledger.terms.fold`); a folded form holding whitespace is not taken."""
    out = text.split()
    for i, token in enumerate(out):
        if token.isascii():
            continue
        import unicodedata

        f = unicodedata.normalize("NFKC", token)
        j = f.find(":")
        if j > 0 and len(f.split()) == 1 and (f[:j].lower() in KEYS or near_key(f[:j].lower())):
            out[i] = f
    return out


def _split_filter(token: str) -> tuple[str, str] | None:
    """``(key, value)`` if ``token`` is filter-shaped (value may be ''), else None."""
    i = token.find(":")
    if i <= 0:
        return None
    key = token[:i].lower()
    if key not in KEYS:
        return None
    return key, token[i + 1 :]


def is_date(value: str) -> bool:
    """Whether ``value`` is a date alone, ``YYYY-MM-DD`` in ASCII digits."""
    return len(value) == 10 and value[4] == value[7] == "-" and (value[:4] + value[5:7] + value[8:]).isdigit() \
        and value.isascii()


def is_time(token: str) -> bool:
    """Whether ``token`` is a time of day as people write one after a date: ``H:MM`` or
    ``HH:MM``, optionally ``:SS`` and a fraction (``.`` or ``,``), then optionally ``Z`` or
    an offset ``+HH``, ``+HHMM``, ``+HH:MM`` (or ``-``). Whether it is a valid time is
    :func:`parse_when`'s to say."""
    t = token.lower()
    if not t.isascii():
        return False
    if t.endswith("z"):
        t = t[:-1]
    else:
        cut = max(t.rfind("+"), t.rfind("-"))
        if cut > 0:
            t, off = t[:cut], t[cut + 1:]
            if not (off.isdigit() and len(off) in (2, 4) or len(off) == 5 and off[2] == ":" and (off[:2] + off[3:]).isdigit()):
                return False
    parts = t.split(":")
    if len(parts) not in (2, 3) or not (parts[0].isdigit() and len(parts[0]) in (1, 2)) or not (parts[1].isdigit() and len(parts[1]) == 2):
        return False
    if len(parts) == 3:
        sec, _, frac = parts[2].replace(",", ".").partition(".")
        if not (sec.isdigit() and len(sec) == 2 and (frac.isdigit() or not frac and "." not in parts[2].replace(",", "."))):
            return False
    return True


def when_value(toks: list[str], i: int) -> tuple[str, int]:
    """The value of the ``asof:``/``after:``/``before:`` filter ``toks[i]`` and how many
    tokens it takes: a date alone followed by a time of day (:func:`is_time`) is that
    instant, written with a space (``asof:2026-12-01 22:49``: 2 tokens, value
    ``2026-12-01 22:49``, which :func:`parse_when` reads; also ``T22:49`` and a time
    typed fullwidth, ``００:０５``, folded); otherwise the token's own value (1 token)."""
    value = toks[i].split(":", 1)[1]
    if is_date(value) and i + 1 < len(toks):
        t = _folded(toks[i + 1])
        t = t[1:] if t[:1] in "Tt" and is_time(t[1:]) else t  # "2026-12-01 T22:49": the ISO T, spaced
        if is_time(t):
            return f"{value} {t}", 2
    return value, 1


def _folded(token: str) -> str:
    """``token`` NFKC-folded when it is not ASCII: a time typed with an input method
    (``００:０５``, ``００：０５``) is the time it looks like, as the filter before it is
    (:func:`tokens`). ASCII tokens come back as they are."""
    if token.isascii():
        return token
    import unicodedata

    return unicodedata.normalize("NFKC", token)


#: A word people put between a date and its time ("asof:2026-12-01 at 5pm").
_AT_WORDS = ("at", "@")

#: Words that name UTC, which people write after a time: a query's times are UTC already.
_UTC_WORDS = ("utc", "gmt", "z")


def _time_word(token: str) -> str | None:
    """What kind of leftover of an instant ``token`` is, when it stands right after an
    ``asof:``/``after:``/``before:`` filter it could not join (:func:`filter_warnings`'
    ``time-as-word``): ``"time"`` (``22:49``, ``T22:49``, fullwidth too), ``"ampm"``
    (``9pm``, ``9:30am``, ``12:00PM``), ``"zone"`` (``UTC``, ``GMT``, ``Z``, ``+01:00``)
    or ``"date"`` (``2026-12-05``, ``2026-12-05T10:00``); None for any other word."""
    t = _folded(token).lower()
    if is_time(t) or (t[:1] == "t" and is_time(t[1:])):
        return "time"
    for suffix in ("am", "pm", "a.m.", "p.m."):
        if t.endswith(suffix) and t != suffix:
            hm = t[: -len(suffix)]
            h, _, m = hm.partition(":")
            if h.isdigit() and len(h) <= 2 and (not m or m.isdigit() and len(m) == 2) and hm.isascii():
                return "ampm"
    if t in _UTC_WORDS or (t[:1] in "+-" and len(t) > 1 and is_time("00:00" + t)):
        return "zone"
    if is_date(t[:10]) and (len(t) == 10 or parse_when(t, 0) is not None):
        return "date"
    return None


def parse_when(value: str, now_ms: int) -> int | None:
    """Resolve an ``asof:``/``after:``/``before:`` value to epoch milliseconds, UTC.

    ``value`` is either a span ``<N>m|h|d|w|mo|y`` (a minute, an hour, or 1, 7, 30.4
    or 365 days per unit, case-insensitive) counted back from ``now_ms`` (epoch ms UTC), clamped to
    :data:`MIN_MS`; or anything :meth:`datetime.fromisoformat` accepts, optionally with
    a trailing ``Z``. A date alone is UTC midnight; a datetime without an offset is
    taken as UTC; sub-millisecond digits are floored. A date and a time of day may be
    separated by a space, the hour written with one digit (``2026-12-01 9:30``,
    :func:`when_value`). Returns None if the value is neither, or names an instant
    outside :data:`MIN_MS`..:data:`MAX_MS`.
    """
    m = _SPAN_RE.fullmatch(value.lower())
    if m:
        back = int(m.group(1)) * _SPAN_MS[m.group(2)]
        return max(MIN_MS, now_ms - back)
    if not value or not value.isascii():
        return None
    date, space, time = value.partition(" ")
    if space:
        if not (is_date(date) and is_time(time)):
            return None
        value = f"{date}T{'0' if time[1] == ':' else ''}{time}"
    iso = value.upper()
    if iso.endswith("Z"):
        iso = iso[:-1] + "+00:00"
    from datetime import datetime, timedelta, timezone

    try:
        dt = datetime.fromisoformat(iso)
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=timezone.utc)
        ms = (dt - datetime(1970, 1, 1, tzinfo=timezone.utc)) // timedelta(milliseconds=1)
    except (ValueError, OverflowError):
        return None
    return ms if MIN_MS <= ms <= MAX_MS else None


#: The longest query text, in characters: the longest claim (``service.MAX_TEXT_CHARS``).
#: A longer query cannot be looking for one memory, and its cost grows with its length
#: (a 10 MB query pasted through MCP, where no command line limits it, took 18 s).
MAX_QUERY_CHARS = 20_000


def check_text(text: str) -> None:
    """Raise :class:`~ledger.errors.QueryTooLong` if ``text`` is longer than
    :data:`MAX_QUERY_CHARS`, :class:`~ledger.errors.InvalidQuery` if it holds a NUL or an unpaired surrogate. The last two would
    otherwise reach SQLite and fail there with a misleading message ("unterminated
    string" from FTS5 for a NUL, an encoding traceback for a surrogate)."""
    if len(text) > MAX_QUERY_CHARS:
        raise QueryTooLong(len(text), MAX_QUERY_CHARS)
    nul = text.find("\x00")
    if nul >= 0:
        raise InvalidQuery(_shown_token(text, nul), f"the query contains a NUL character at position {nul}; remove it")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidQuery(
            _shown_token(text, exc.start),
            f"the query is not valid UTF-8 at position {exc.start} (undecodable bytes?); re-type it or re-encode it as UTF-8",
        ) from None


def _shown_token(text: str, pos: int) -> str:
    """The whitespace-delimited token around ``pos``, printable: an undecodable byte as
    ``\\xff``, a NUL as ``\\x00``, another lone surrogate as ``\\ud800`` (so the error
    message itself can be printed and stored)."""
    start = text.rfind(" ", 0, pos) + 1
    end = text.find(" ", pos)
    return "".join(_printable(ch) for ch in text[start : end if end >= 0 else len(text)][:80])


def _printable(ch: str) -> str:
    o = ord(ch)
    if o == 0:
        return "\\x00"
    if 0xDC80 <= o <= 0xDCFF:  # surrogateescape's stand-in for the byte o - 0xDC00
        return f"\\x{o - 0xDC00:02x}"
    if 0xD800 <= o <= 0xDFFF:
        return f"\\u{o:04x}"
    return ch


def parse(text: str, now_ms: int) -> Query:
    """Parse query ``text`` into a :class:`Query`.

    ``now_ms`` (epoch milliseconds, UTC) anchors spans such as ``30d``. Raises
    :class:`~ledger.errors.InvalidQuery` naming the first bad token for a malformed
    ``strength:``, ``asof:``, ``after:`` or ``before:`` value, for a filter key with
    no value (``agent:``), for a near-miss key
    (:func:`near_key`), and for text no store can hold: a NUL character or an unpaired
    surrogate (what Python makes of undecodable bytes on a command line, or of
    ``"\\ud800"`` in JSON). Nothing else is an error.
    """
    check_text(text)
    terms: list[str] = []
    multi: dict[str, list[str]] = {field: [] for field in _MULTI_FIELDS.values()}
    single: dict[str, Any] = {}
    typed = text.split()
    toks = tokens(text)
    skip = 0
    for i, (raw, token) in enumerate(zip(typed, toks)):
        if skip:  # the time of day of the date before it (when_value)
            skip -= 1
            continue
        split = _split_filter(token)
        if split is None:
            i = token.find(":")
            if i > 0 and i < len(token) - 1:
                nearest = near_key(token[:i].lower())
                if nearest:
                    raise InvalidQuery(raw, unknown_key_reason(token[:i].lower(), nearest))
            terms.append(raw.lower())
            continue
        key, value = split
        if not value:
            # "Type: error in build": pasted text, not a filter. Searched as the word
            # (the token itself: the colon is no part of any word), with an
            # empty-filter warning (filter_warnings) saying how to filter.
            terms.append(token.lower())
            continue
        if key in _MULTI_FIELDS:
            values = multi[_MULTI_FIELDS[key]]
            value = value.lower()
            if value not in values:
                values.append(value)
        elif key == "strength":
            m = _STRENGTH_RE.fullmatch(value)
            if m is None or int(m.group(2)) > 100:
                raise InvalidQuery(raw, strength_reason(value))
            single["strength_op"] = m.group(1)
            single["strength"] = int(m.group(2)) / 100
        else:
            value, n = when_value(toks, i)
            skip = n - 1
            ms = parse_when(value, now_ms)
            if ms is None:
                raise InvalidQuery(" ".join(typed[i:i + n]), WHEN_REASON)
            single[_WHEN_FIELDS[key]] = ms
    return Query(
        terms=tuple(terms),
        **{field: tuple(values) for field, values in multi.items()},
        **single,
    )


def filter_warnings(text: str, now_ms: int | None = None) -> list[dict]:
    """What a query's filters mean that the user may not expect, although it parses:
    one dict per problem, in :data:`KEYS` order, never raising (text :func:`parse`
    refuses gives what it can).

    * ``{"kind": "unknown-value", "key": "kind", "values": ["bogus"], "valid": ["claim",
      "chunk"], "warning": ...}``: a ``type:``/``kind:`` value outside
      :data:`CLOSED_VALUES`; it matches nothing.
    * ``{"kind": "repeated-filter", "key": "asof", "values": ["1h", "2h"], "used": "2h",
      "warning": ...}``: ``strength``/``asof``/``after``/``before`` given more than
      once with different values; only the last is used.
    * ``{"kind": "empty-range", "key": "strength", "values": ["<0"], "warning": ...}``:
      ``strength:<0`` or ``strength:>100`` (no shown strength is below 0 or above 100);
      with ``now_ms`` also ``after:`` at or past ``before:`` (``key`` ``"after"``,
      ``values`` both as typed) or ``after:`` now (``after:0d``) or in the future
      (``values`` the after alone).
      It matches nothing.
    * ``{"kind": "future-asof", "key": "asof", "values": ["2099-01-01"], "used": "now",
      "warning": ...}`` (only with ``now_ms``): ``asof:`` later than ``now_ms``; the
      store knows nothing past now, so it reads as now.
    * ``{"kind": "time-as-word", "key", "values": [filter, word as typed], "warning"}``:
      a word meant as part of the filter's instant that it could not take
      (:func:`_time_word`: a time after a span or a full instant, ``asof:2d 22:49``;
      ``9pm``; ``UTC``; a second date), searched as a word; after a date alone a time
      of day is the filter's time (:func:`when_value`).
    * ``{"kind": "empty-filter", "key", "values": [token as typed], "warning"}``: a key
      with nothing after the colon, searched as the word (:func:`empty_filter_warning`).
    * ``{"kind": "list-value", "key", "values", "split", "warning"}``: ``cluster:a,b``;
      a filter takes one value, repeating the key widens it.
    * ``{"kind": "quoted-value", "key", "values", "phrase", "warning"}``:
      ``cluster:"home & devices"``; quotes group nothing (how to name it instead).
      Neither of the last two gets an ``unknown-value`` besides (:func:`has_own_warning`).

    ``now_ms`` (epoch ms UTC) resolves spans as :func:`parse` does; without it the
    checks that need a clock are skipped. For keys where the last occurrence wins, only
    the last value is checked. The message names no surface (callers add their command)."""
    seen: dict[str, list[str]] = {}
    out: list[dict] = []
    toks = tokens(text)
    typed = text.split()
    for i, token in enumerate(toks):
        split = _split_filter(token)
        if split is None:
            continue
        key, value = split
        if not value:
            out.append(empty_filter_warning(typed[i], key, toks[i + 1] if i + 1 < len(toks) else None))
            continue
        if key in _MULTI_FIELDS:
            out.extend(_one_value_warnings(key, value, toks[i + 1 :]))
        elif key in _WHEN_FIELDS:
            value, n = when_value(toks, i)
            j = i + n + (i + n + 1 < len(toks) and toks[i + n].lower() in _AT_WORDS)  # "asof:1d at 5pm"
            if j < len(toks) and _time_word(toks[j]):
                out.append(_time_as_word(key, value, " ".join(typed[i:i + n]), " ".join(typed[i + n:j + 1]), now_ms))
        value = value.lower() if key in _MULTI_FIELDS else value
        if value not in seen.setdefault(key, []) or key not in _MULTI_FIELDS:
            seen[key].append(value)
    for key in KEYS:
        values = seen.get(key) or []
        if key in CLOSED_VALUES:
            bad = [v for v in values if v not in CLOSED_VALUES[key] and not has_own_warning(v)]
            if bad:
                valid = CLOSED_VALUES[key]
                named = " and ".join(f"{key}:{v}" for v in bad)
                what = f"is not a {key}, so it matches" if len(bad) == 1 else f"are not {key}s, so they match"
                out.append({"kind": "unknown-value", "key": key, "values": bad, "valid": list(valid),
                            "warning": f"{named} {what} nothing. Valid: {', '.join(f'{key}:{v}' for v in valid)}."})
        elif key not in _MULTI_FIELDS and len(set(values)) > 1:
            shown = " ".join(f"{key}:{v}" for v in values)
            out.append({"kind": "repeated-filter", "key": key, "values": values, "used": values[-1],
                        "warning": f"{key}: given {len(values)} times ({shown}); only the last, "
                                   f"{key}:{values[-1]}, is used. Give it once."})
    out.extend(_never_warnings({k: v[-1] for k, v in seen.items() if k not in _MULTI_FIELDS}, now_ms))
    return out


def _time_as_word(key: str, value: str, filter_typed: str, word_typed: str, now_ms: int | None) -> dict:
    """The ``time-as-word`` warning: a word right after an ``asof:``/``after:``/``before:``
    filter that the user meant as part of its instant but that the filter could not take
    (:func:`_time_word`), so it was searched as a word. ``value``: the filter's value as
    read (a date and time joined by a space when :func:`when_value` took a time);
    ``filter_typed``: the filter's tokens as typed; ``word_typed``: the word as typed.
    The message says how to write what was meant, with the date the user wrote (or,
    after a span, the date the span reaches back to when ``now_ms`` is given)."""
    at = word_typed.split()
    word = _folded(at[-1])  # "at 5pm": the time is the last word
    kind = _time_word(word)
    date, _, has_time = value.replace("T", " ", 1).replace("t", " ", 1).partition(" ")
    if not is_date(date):  # a span: the date it reaches back to, else a date to replace
        ms = parse_when(value, now_ms) if now_ms is not None else None
        date = _format_ms(ms - ms % _DAY_MS) if ms is not None else "YYYY-MM-DD"
    head = f"{word_typed} after {filter_typed} was searched as a word"
    if kind == "ampm":
        low = word.lower().replace(".", "")
        h, _, m = low[:-2].partition(":")
        hour = int(h) % 12 + (12 if low.endswith("pm") else 0)
        fix = f"{hour:02d}:{m or '00'}"
        why = f"times are written on the 24-hour clock: {key}:{date}T{fix} (or {key}:{date} {fix})"
    elif kind == "zone":
        hm = has_time.rstrip("Zz") or "00:00"
        if word.lower() in _UTC_WORDS:
            why = f"a query's times are UTC already (an offset says otherwise): drop {word_typed}, or write {key}:{date}T{hm}Z"
        else:
            why = f"an offset is written right after the time: {key}:{date}T{hm}{word}"
    elif kind == "date":
        if key == "asof":
            why = (f"asof: takes one instant, and {filter_typed} was used. To read the store as it was at {word}, "
                   f"write asof:{word} alone")
        else:
            other = "before" if key == "after" else "after"
            why = f"a filter takes one instant; for a range give both ends: {key}:{value.split()[0]} {other}:{word}"
            if parse_when(value.split()[0], 0) is None:  # a span: the range in its own words
                why = f"a filter takes one instant; for a range give both ends: {key}:{value} {other}:{word}"
    else:
        t = word[1:] if word[:1] in "tT" else word
        if is_date(value):  # "asof:2026-12-01 at 17:00": a word between the date and its time
            why = (f"a time of day joins a date only right after it, with no word between: {key}:{date} {t} "
                   f"(or {key}:{date}T{t})")
        elif has_time:
            why = (f"{filter_typed} has its time already, and a filter takes one time of day. Write the instant you "
                   f"mean whole ({key}:{date}T{t}) or drop {word_typed}")
        else:
            why = (f"a time of day is taken only after a date alone ({key}:{date} {t}), not after a span. Write the "
                   f"instant whole ({key}:{date}T{t}) or drop {word_typed}")
    return {"kind": "time-as-word", "key": key, "values": [filter_typed, word_typed],
            "warning": f"{head}: {why}."}


#: Quote characters a value may start with: quoting does not group words in a query.
_QUOTES = {'"': '"', "'": "'", "“": "”", "‘": "’", "«": "»", "「": "」"}


#: What reads as a comma between list items, after the NFKC folding of :func:`tokens`
#: (fullwidth ``，`` and small ``﹐`` are ``,`` by then, halfwidth ``､`` and small ``﹑``
#: are ``、``): the ASCII comma, the ideographic comma ``、`` that Chinese and Japanese
#: lists use, and the Arabic comma ``،``. Each is one value's list of ``list-value``.
LIST_COMMAS = ",、،"
_AS_COMMA = str.maketrans({c: "," for c in LIST_COMMAS[1:]})


def _commas(text: str) -> str:
    """``text`` with every :data:`LIST_COMMAS` written as ``,``."""
    return text.translate(_AS_COMMA)


def has_own_warning(value: str) -> bool:
    """Whether a value of a filter that takes names (``cluster:``, ``agent:``, ``type:``,
    ``kind:``) gets a ``quoted-value`` or ``list-value`` warning of its own
    (:func:`filter_warnings`), which says what the value should be: then no
    ``unknown-value``/``unknown-cluster`` warning says it again."""
    value = _commas(value)
    return value[:1] in _QUOTES or value.endswith(",") or ("," in value and len([p for p in value.split(",") if p]) >= 2)


def _one_value_warnings(key: str, value: str, following: list[str]) -> list[dict]:
    """``list-value`` for ``cluster:proc,code`` (a filter takes one value; repeating the
    key widens it), ``quoted-value`` for ``cluster:"home & devices"`` (the query splits
    on whitespace, so the value is ``"home`` and the rest are words): see
    :func:`filter_warnings`. ``following``: the tokens after this one."""
    close = _QUOTES.get(value[0])
    if close is not None:
        words = [value[1:]]
        for t in following:
            if words[-1].endswith(close) and (len(words) > 1 or len(words[0]) > 0):
                break
            words.append(t)
        phrase = " ".join(words)
        phrase = phrase[: -len(close)] if phrase.endswith(close) else phrase
        if len(words) == 1:
            return [{"kind": "quoted-value", "key": key, "values": [value], "phrase": phrase,
                     "warning": f"{key}:{value}: quotes are not part of the query language, so the quote marks are "
                                f"part of the value and it matches no {key}. Write it without them: "
                                f"{key}:{phrase.lower()}."}]
        from ledger.text import slugify

        slug = slugify(phrase) or "<id>"
        how = (f"name a cluster by its id or by its label's slug: cluster:{slug} (for a label "
               f'"{phrase}"); the list of clusters shows both') if key == "cluster" else f"write the value without spaces: {key}:{slug}"
        return [{"kind": "quoted-value", "key": key, "values": [value], "phrase": phrase,
                 "warning": f"{key}:{value[0]}{phrase}{close}: quotes do not group words in a query (it splits on spaces), "
                            f"so {key}:{value.split()[0]} matches no {key} and the other words are searched as text. "
                            f"To filter on a name with spaces, {how}."}]
    listed = _commas(value)  # cluster:code、proc is a list as much as cluster:code,proc
    parts = [p for p in listed.split(",") if p]
    typed = value
    if listed.endswith(","):  # a list typed with spaces, "cluster:code, proc": its next words are the rest
        for t in following:
            parts += [p for p in _commas(t).split(",") if p]
            typed += " " + t
            if not _commas(t).endswith(","):
                break
    if "," in listed and (len(parts) >= 2 or listed.endswith(",")):
        many = " ".join(f"{key}:{p.lower()}" for p in parts)
        return [{"kind": "list-value", "key": key, "values": [value], "split": [p.lower() for p in parts],
                 "warning": f'{key}:{typed} is one value, "{value.lower()}"'
                            + (" (the words after it are searched as text)" if typed != value else "")
                            + ": a filter takes one value, and commas do not separate them. "
                            + (f"To match any of them, repeat the key: {many}." if len(parts) >= 2 else f"Write {many}.")}]
    return []


def _never_warnings(last: dict[str, str], now_ms: int | None) -> list[dict]:
    """The ``empty-range`` and ``future-asof`` warnings of :func:`filter_warnings`, from
    the value each single-valued key ends with (``last``, as typed)."""
    out: list[dict] = []
    m = _STRENGTH_RE.fullmatch(last.get("strength", ""))
    if m and (m.group(1), int(m.group(2))) in (("<", 0), (">", 100)):
        given = f"strength:{last['strength']}"
        why = "below 0" if m.group(1) == "<" else "above 100"
        out.append({"kind": "empty-range", "key": "strength", "values": [last["strength"]],
                    "warning": f"{given} matches nothing: strength runs from 0 to 100, and no memory is {why}. "
                               f"Try strength:{'<1' if m.group(1) == '<' else '>99'}."})
    if now_ms is None:
        return out
    when = {k: parse_when(last[k], now_ms) for k in _WHEN_FIELDS if k in last}
    asof, after, before = when.get("asof"), when.get("after"), when.get("before")
    if asof is not None and asof > now_ms:
        out.append({"kind": "future-asof", "key": "asof", "values": [last["asof"]], "used": "now",
                    "warning": f"asof:{last['asof']} is in the future; the store knows nothing past now, so it is "
                               f"read as now: the same memories as without asof:. Drop asof: to read the store as "
                               f"it is, or give a past instant to see what it held then (asof:2w, "
                               f"asof:2026-01-01)."})
    if after is not None and before is not None and after >= before:
        out.append({"kind": "empty-range", "key": "after", "values": [last["after"], last["before"]],
                    "warning": f"after:{last['after']} before:{last['before']} matches nothing: after: is "
                               f"{'the same instant as' if after == before else 'later than'} before:, so no "
                               f"memory was created in between. Did you mean after:{last['before']} before:{last['after']}?"})
    elif after is not None and after == now_ms:
        # after:0d, after:0h: a span counts back from now, so a span of 0 is now itself.
        today = _format_ms(now_ms - now_ms % _DAY_MS)
        out.append({"kind": "empty-range", "key": "after", "values": [last["after"]],
                    "warning": f"after:{last['after']} is now (a span counts back from now), so it matches nothing: "
                               f"no memory was created after now. For today's memories give today's date "
                               f"(after:{today}, from midnight UTC) or a span (after:1d, the last 24 hours)."})
    elif after is not None and after > now_ms:
        out.append({"kind": "empty-range", "key": "after", "values": [last["after"]],
                    "warning": f"after:{last['after']} is in the future, so it matches nothing: no memory "
                               f"was created after it yet. Give a past date or span (after:2w)."})
    return out


def format_instant(ms: int) -> str:
    """Epoch ms UTC as a query value ``asof:``/``after:``/``before:`` takes back:
    ``2026-01-01`` at UTC midnight, else ``2026-01-01T10:00:00Z`` (``.mmm`` when there are
    milliseconds); :func:`parse_when` reads it as ``ms`` exactly."""
    return _format_ms(ms)


def _format_ms(ms: int) -> str:
    """Epoch ms UTC -> ``2026-01-01`` at UTC midnight, else ``2026-01-01T10:00:00Z``
    (with ``.mmm`` when there are milliseconds)."""
    from datetime import datetime, timedelta, timezone

    dt = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(milliseconds=ms)
    if ms % _DAY_MS == 0:
        return dt.date().isoformat()
    spec = "milliseconds" if ms % 1000 else "seconds"
    return dt.replace(tzinfo=None).isoformat(timespec=spec) + "Z"


def format_query(q: Query) -> str:
    """Canonical query text for ``q``: terms first, then filters in :data:`KEYS` order.

    Instants are written as absolute UTC dates/instants (never spans) and strength as
    ``strength:<N`` with N = round(strength*100), so ``parse(format_query(q), now)``
    == ``q`` for any ``q`` that :func:`parse` can produce.
    """
    parts = list(q.terms)
    for key, field in _MULTI_FIELDS.items():
        parts.extend(f"{key}:{v}" for v in getattr(q, field))
    if q.strength_op is not None and q.strength is not None:
        parts.append(f"strength:{q.strength_op}{round(q.strength * 100)}")
    for key, field in _WHEN_FIELDS.items():
        ms = getattr(q, field)
        if ms is not None:
            parts.append(f"{key}:{_format_ms(ms)}")
    return " ".join(parts)
