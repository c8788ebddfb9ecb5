"""Reading a claim's values and frame: the first half of the contradiction proposer.

Pure and stdlib only, like :mod:`ledger.conflicts.signals`, which compares what this
module reads. :func:`read` takes one text and returns its :class:`Values`: quantities
with units, dates, clock times, weekdays, months, paths, states from :data:`STATE_AXES`,
choices from :data:`CHOICE_AXES`, whether it is negated, what it says was replaced, and
its *frame* (content words, stemmed, with a placeholder where each value stood). The
rules and the lexicons are written up in ``docs/contradictions.md``.
"""

from __future__ import annotations

import math
import unicodedata
from functools import lru_cache

from ledger.frozen import Frozen
from ledger.regex import ASCII, IGNORECASE, escape
from ledger.regex import compile as _compile
from ledger.terms import set_apart_cjk, split_versions

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover - annotations only: `re` stays off remember's start-up
    import re

__all__ = [
    "CHOICE_AXES",
    "STATE_AXES",
    "STOPWORDS",
    "Quantity",
    "Values",
    "cjk_apart",
    "normalise",
    "quantity",
    "read",
    "haystack",
    "probe",
    "at_word_start",
    "may_share",
    "same_quantity",
    "stems",
]

#: The seed's stopword set, verbatim. The reference prose says "45" but lists 44 words,
#: and the seed's source has the same 44. Most are already dropped by the length rule.
STOPWORDS: frozenset[str] = frozenset(
    """
    a an and any are as at be been but by for from has have he her his i if in is it
    its me my of on or she that the their them they this to was were when which with
    you your
    """.split()
)

# ---------------------------------------------------------------------------
# Lexicons (small and reviewed; docs/contradictions.md lists them with the reasons)
# ---------------------------------------------------------------------------

#: Opposite states: axis -> (words for the positive state, words for the negative one).
#: A negation in front flips a state ("not allowed" is forbidden).
STATE_AXES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "enablement": (("enabled", "on", "active"), ("disabled", "off", "inactive")),
    "permission": (("allowed", "permitted"), ("forbidden", "prohibited", "disallowed", "blocked", "banned")),
    "openness": (("open",), ("closed",)),
    "necessity": (("required", "mandatory", "compulsory"), ("optional",)),
    "visibility": (("public",), ("private",)),
    "writability": (("writable", "read-write"), ("read-only", "readonly")),
    "health": (("working", "healthy"), ("broken", "unhealthy")),
    "automation": (("automatic", "automated", "automatically"), ("manual", "manually")),
    "synchrony": (("synchronous", "synchronously", "sync"), ("asynchronous", "asynchronously", "async")),
    "consent": (("opt-in",), ("opt-out",)),
    "lock": (("locked",), ("unlocked",)),
    "connectivity": (("online",), ("offline",)),
}

#: Words of STATE_AXES that are states only right after a verb like "is" / "turned"
#: ("debug logging is on", "turned off"), since they are common words otherwise
#: ("runs on Linux", "kick off", "open the file", "working on it", "sync the repo").
_STATE_NEEDS_COPULA = frozenset({"on", "off", "open", "working", "active", "sync", "async"})

#: Exclusive choices: axis -> its values, each a regex over the lowercased text. One
#: attribute takes one of them; two claims naming different ones disagree.
CHOICE_AXES: dict[str, dict[str, str]] = {
    "byte order": {"little-endian": r"little[-\s]?endian", "big-endian": r"big[-\s]?endian"},
    "indentation": {"tabs": r"tabs", "spaces": r"spaces"},
    "identifier case": {
        "snake_case": r"snake[_\s-]?case", "camelCase": r"camel[_\s-]?case",
        "kebab-case": r"kebab[_\s-]?case", "PascalCase": r"pascal[_\s-]?case",
    },
    "time zone": {"utc": r"utc|gmt", "local time": r"local\s?time"},
    "frequency": {"hourly": r"hourly", "daily": r"daily", "weekly": r"weekly",
                  "monthly": r"monthly", "yearly": r"yearly|annually"},
    "line endings": {"lf": r"lf", "crlf": r"crlf"},
    "quote style": {"single quotes": r"single[-\s]quotes?", "double quotes": r"double[-\s]quotes?"},
    "sort order": {"ascending": r"ascending", "descending": r"descending"},
}

@lru_cache(maxsize=16384)  # pure; read, the tokens and the haystack of one text all ask
def normalise(text: str) -> str:
    """``text`` as every reader of the proposer sees it: NFC (a decomposed "é" stays one
    letter), and each CJK run set apart from the Latin words and digits glued to it
    (:func:`ledger.terms.set_apart_cjk`, as the word index reads it). Chinese and Japanese
    glue numbers, units and versions to their words ("服务端口是8080", "ポートは8080です",
    "缓存大小是512MB"); without the spaces the number patterns, which want a word break on
    each side, saw no number there, so a changed port raised no candidate. Then a
    version glued to its name is set apart from it (:func:`ledger.terms.split_versions`:
    "python3.11" reads "python 3.11", "v2" "v 2"; not "s3", "h264", "log4j"), so a
    version bump is a divergent number of that name in any script."""
    return split_versions(cjk_apart(text))


def cjk_apart(text: str) -> str:
    """:func:`normalise` without the versions set apart: NFC, CJK runs set apart, and a
    CJK unit of time right after a number set apart from the text after it."""
    if text.isascii():
        return text
    text = set_apart_cjk(unicodedata.normalize("NFC", text))
    return _CJK_UNIT_GLUED.sub(_spaced_unit, text) if any(c.isdigit() for c in text) else text


def _spaced_unit(m: re.Match[str]) -> str:
    return " " + m.group(1) + " "


# ---------------------------------------------------------------------------
# Dates, clock times, weekdays, months (issue 3's fixes, unchanged)
# ---------------------------------------------------------------------------

_DATE = _compile(r"\b\d{4}-\d{2}-\d{2}\b", ASCII)

# Clock times. The seed's pattern is \b\d{1,2}:\d{2}\b. Differs from the seed: digit
# guards instead of \b (so "123:456" is still not a time), an optional ":ss" (so
# "16:00:30" leaves no stray number 30 behind), an optional am/pm suffix, and bare
# "4pm" / "4 p.m." (which the seed saw as nothing at all: "4pm" has no word break).
_CLOCK = _compile(
    r"(?<![\d:])(\d{1,2}):(\d{2})(?::\d{2}(?:\.\d+)?)?(?![\d:])"
    r"(?:\s?([ap])\.?m\b\.?)?",
    ASCII | IGNORECASE,
)
_BARE_MERIDIEM = _compile(r"\b(\d{1,2})\s?([ap])\.?m\b\.?", ASCII | IGNORECASE)


def _clock_value(hour: int, minute: int, meridiem: str | None) -> str | None:
    """Canonical ``HH:MM``, or None when the digits are not a time of day. A meridiem
    on a 24-hour reading ("16:00 pm") is ignored; callers pass none for bare hours
    outside 1..12 ("16pm" is not a time)."""
    if meridiem and 1 <= hour <= 12:
        hour = hour % 12 + (12 if meridiem.lower() == "p" else 0)
    if hour > 24 or minute > 59:
        return None  # "99:99" is not a time; its digits stay numbers
    return f"{hour:02d}:{minute:02d}"


# Whole words: runs of word characters. '_' stays inside a word so that identifiers
# such as ``sat_solver`` or ``release_may`` are not weekdays or months.
_WORD = _compile(r"\w+")

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
_DAY_OR_YEAR = _compile(r"\d{1,4}(?:st|nd|rd|th)?", IGNORECASE)
_SENTENCE_END = _compile(r"[.!?:;]\s*$|^\s*$")


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


# ---------------------------------------------------------------------------
# Quantities
# ---------------------------------------------------------------------------

# Units of time, in seconds. A month is 30 days and a year 365 (only used to compare
# durations; calendar months are month names, not quantities). "m" is minutes: in claims
# about software a glued "30m" is a duration far more often than a length.
_TIME_UNITS: dict[str, float] = {}
for _names, _secs in (
    (("ms", "msec", "msecs", "millisecond", "milliseconds"), 0.001),
    (("s", "sec", "secs", "second", "seconds"), 1.0),
    (("m", "min", "mins", "minute", "minutes"), 60.0),
    (("h", "hr", "hrs", "hour", "hours"), 3600.0),
    (("d", "day", "days"), 86400.0),
    (("w", "wk", "wks", "week", "weeks"), 604800.0),
    (("month", "months"), 30 * 86400.0),
    (("y", "yr", "yrs", "year", "years"), 365 * 86400.0),
    # Chinese and Japanese, written right after the number ("30秒", "2小时", "3日" is a
    # date, not here). "分" alone is also a fraction or a cent in Chinese: left out.
    (("毫秒",), 0.001),
    (("秒", "秒钟", "秒鐘"), 1.0),
    (("分钟", "分鐘"), 60.0),
    (("小时", "小時", "時間"), 3600.0),
    (("天",), 86400.0),
    (("周", "週間"), 604800.0),
    (("个月", "ヶ月", "か月", "カ月"), 30 * 86400.0),
):
    for _n in _names:
        _TIME_UNITS[_n] = _secs

# A CJK unit right after a number, set apart from the CJK text after it by normalise()
# ("30秒です" reads "30 秒 です"), longest names first.
_CJK_UNITS = "|".join(sorted((u for u in _TIME_UNITS if not u.isascii()), key=len, reverse=True))
_CJK_UNIT_GLUED = _compile(rf"(?<=\d) ?({_CJK_UNITS})")
_CJK_UNIT_NEXT = _compile(rf"\s?({_CJK_UNITS})(?!\w)")

# Units of size, in bytes. Decision (docs/contradictions.md): binary multiples for every
# prefix, so "2 GB" == "2048 MB" as the issue asks; the decimal reading ("1 TB" ==
# "1000 GB") is covered by the comparison tolerance below, which is wider than the 2.4 %
# gap between KiB and kB (7.4 % at TB, hence the wider band for sizes).
_SIZE_UNITS: dict[str, float] = {}
for _names, _bytes in (
    (("b", "byte", "bytes"), 1.0),
    (("kb", "kib", "kilobyte", "kilobytes"), 1024.0),
    (("mb", "mib", "megabyte", "megabytes"), 1024.0**2),
    (("gb", "gib", "gigabyte", "gigabytes"), 1024.0**3),
    (("tb", "tib", "terabyte", "terabytes"), 1024.0**4),
):
    for _n in _names:
        _SIZE_UNITS[_n] = _bytes

def is_unit(word: str) -> bool:
    """Whether ``word`` (casefolded) names a unit of time or size (``ms``, ``s``, ``kb``,
    ``hours``) or a meridiem (``am``, ``pm``): after a number it belongs to that number's
    quantity, which the signals read and compare."""
    return word in _TIME_UNITS or word in _SIZE_UNITS or word in ("am", "pm")


# Two magnitudes of one dimension are the same value when within this relative distance.
_TIME_TOLERANCE = 0.01
_SIZE_TOLERANCE = 0.1  # binary vs decimal prefixes: 1 TB vs 1000 GB differ by 9.95 %

_ORDINAL = frozenset({"st", "nd", "rd", "th"})
_NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split()) if i >= 1}

# A number: digits (thousands separators allowed) not glued to a letter, dot or digit in
# front (so "v2", "python3", "3.11.2"'s tail are not read twice), then "%", a glued suffix
# of up to 3 letters ending the word, or a word boundary (so "2x4" and "0A0" are tokens,
# not numbers). Seed-compatible in what counts as a number; ours in what follows.
_NUMBER = _compile(
    r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?:(%)|([a-zA-Z]{1,3})\b|\b)"
    r"|\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\b",
    IGNORECASE,
)
_NEXT_WORD = _compile(r"\s?([A-Za-z][A-Za-z-]*)(?![\w'’])")  # a whole word: not "x" of "x86_64"


class Quantity(Frozen):
    """A number read off a claim. ``dim`` is ``"time"`` (``value`` in seconds),
    ``"size"`` (bytes), ``"%"``, ``"ordinal"``, ``"day of month"``, a counted noun
    (stemmed: ``"thread"``), or ``""`` for a bare number; ``value`` is a float for time
    and size, else the digits as written (``"3.11"`` is not ``"3.110"``). ``of``: for a
    bare number, the name written right before it, which it belongs to (``"cmake"`` in
    "CMake 3.28", ``"node"`` in "node.js 20", ``"port"`` in "port 8080"; :func:`owner`),
    else ``""``. Immutable and hashable (:class:`ledger.frozen.Frozen`; equality and
    hash written out, as sets of quantities are compared for every pair the proposer
    checks)."""

    __slots__ = ("dim", "value", "of")

    def __init__(self, dim: str, value: float | str, of: str = "") -> None:
        object.__setattr__(self, "dim", dim)
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "of", of)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not Quantity:
            return NotImplemented
        return self.dim == other.dim and self.value == other.value and self.of == other.of  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((self.dim, self.value, self.of))


def quantity(number: str, unit: str = "") -> Quantity:
    """The :class:`Quantity` for digits and a unit word as written (``"90", "s"``).

    >>> quantity("2", "GB") == quantity("2048", "MB")
    True
    >>> quantity("90", "s") == quantity("1.5", "minutes")
    True
    """
    u = unit.lower()
    digits = number.replace(",", "")
    if u in _TIME_UNITS:
        return Quantity("time", float(digits) * _TIME_UNITS[u])
    if u in _SIZE_UNITS:
        return Quantity("size", float(digits) * _SIZE_UNITS[u])
    if u in _ORDINAL:
        return Quantity("ordinal", digits)
    if u == "k":
        return Quantity("", f"{float(digits) * 1000:g}")
    return Quantity(_stem(u) if u and u != "%" else u, digits)


def same_owner(x: Quantity, y: Quantity) -> bool:
    """Whether two quantities may be values of one thing: bare numbers named for two
    different things ("CMake 3.28", "node.js 20") are not; a number named for nothing
    ("is 30") may be anything's."""
    return not x.of or not y.of or x.of == y.of


def same_quantity(x: Quantity, y: Quantity) -> bool:
    if x.dim != y.dim:
        return False
    if isinstance(x.value, float) and isinstance(y.value, float):
        tol = _SIZE_TOLERANCE if x.dim == "size" else _TIME_TOLERANCE
        return math.isclose(x.value, y.value, rel_tol=tol)
    return x.value == y.value


# ---------------------------------------------------------------------------
# Frames: content words, lightly stemmed, with placeholders where values stood
# ---------------------------------------------------------------------------

# Ours: words that carry no subject or attribute, on top of the seed's stopwords. The
# verbs of change say that a value changed, not what it belongs to ("uses npm" vs
# "switched to pnpm" must not read as two subjects).
_FRAME_STOPWORDS = STOPWORDS | frozenset(
    """
    am do does did had being get gets got can could will would should shall may might
    must we our ours us you yours they also just still again now currently only then
    there here so very too really every each all some any other another about after
    before into onto over under until since via per than these those such what who how
    where why not no never anymore longer lol oh yeah hey hi
    moved changed switched migrated replaced became become raised lowered increased
    decreased reduced bumped upgraded downgraded shifted renamed updated
    """.split()
) - {"us"}  # "us" stays: "the US store" vs "the EU store"

# A value may be followed by a word that names what it counts ("8 threads"); these
# words never do.
_NOT_A_UNIT = _FRAME_STOPWORDS | frozenset(
    "and or to of in on at by for is are was were per plus times time more less".split()
)


@lru_cache(maxsize=65536)
def _frame_word(part: str) -> str | None:
    """The stem a word adds to a frame, or None for stopwords, negations and stems
    shorter than two letters."""
    stem = _stem(part)
    if len(stem) >= 2 and part.lower() not in _FRAME_STOPWORDS and not _NEGATION.fullmatch(part):
        return stem
    return None


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    """A light English stemmer, enough to align "expires"/"expire", "capped"/"cap",
    "requests"/"request"; not a linguistic one. Lowercases; drops a possessive."""
    w = word.lower().replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    w = w.strip("'")
    if len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 4 and w.endswith("ing"):
        w = w[:-3]
    elif len(w) > 4 and w.endswith("ied"):
        w = w[:-3] + "y"
    elif len(w) > 3 and w.endswith("ed"):
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "ls":
        w = w[:-1]  # capp -> cap, runn -> run
    if len(w) > 2 and w.endswith("e"):
        w = w[:-1]  # expire / expir(ed) / expire(s) meet at "expir"; use/using/used at "us"
    return w


# Paths and file names. A slash-separated run counts when it looks like a place in a
# file tree: rooted ("/var/lib", "~/.app", "./x"), ending in "/" ("dist/"), ending in a
# file name with an extension, or following a place word ("from static/errors"). Plain
# "Tue/Thu" or "and/or" stay words. Bare file names need a known extension or a leading
# dot (".nvmrc").
_PATH_EXT = (r"(?:py|pyi|js|mjs|cjs|ts|tsx|jsx|json|jsonl|toml|yaml|yml|md|rst|txt|sh|"
             r"bash|db|sqlite|sql|cfg|ini|conf|rs|go|rb|java|kt|c|h|cc|cpp|hpp|cs|css|scss|"
             r"html|lock|env|csv|log|xml|proto|tf|lua|php|swift|vue|svelte|ipynb)")
_PATH = _compile(
    r"(?<![\w/~.:-])("
    r"(?:~|\.{1,2})?/[\w.@-]+(?:/[\w.@-]*)*"              # rooted
    r"|[\w.@-]+(?:/[\w.@-]+)*/(?=[\s,;:)]|$)"              # ends with a slash
    rf"|[\w.@-]+(?:/[\w.@-]+)+\.{_PATH_EXT}\b"             # ends in a file name
    r"|[a-z_][\w.@-]*(?:/[\w.@-]+)+"                       # lowercase tree (cue needed)
    rf"|[\w-]+(?:\.[\w-]+)*\.{_PATH_EXT}\b"                # bare file name
    r"|\.[a-z][\w-]{2,}(?:rc|ignore|config|env)?\b"        # dotfile
    r")",
)
_PLACE_CUES = frozenset("in at from under into to inside within lives live moved is are".split())
# The patterns read() and its helpers used to pass to re.findall / re.sub as strings,
# compiled here once (:mod:`ledger.regex`): the same expressions.
_ENDS_IN_EXT = _compile(rf"\.{_PATH_EXT}$")  # a file name's extension ends the path
_DIGITS_AND_DOTS = _compile(r"[\d./-]+")  # "1/2", "3.5": not paths
_TOKEN = _compile(r"[\w'’-]+")  # a word, apostrophes and hyphens inside it
_PART_BREAK = _compile(r"[-_]")  # where a word splits into frame words
_LEFTOVER_DIGITS = _compile(r"(?<![\w.])\d[\d.,:]*(?!\w)")  # digits no value took ("1:1")

# History: "moved from X to Y", "switched from X to Y": X is no longer asserted.
_HISTORY = _compile(
    r"\b(?:moved|changed|switched|went|raised|lowered|increased|decreased|reduced|bumped|"
    r"upgraded|downgraded|migrated|shifted|renamed|replaced)\b[^.;]{0,40}?\bfrom\s+(.+?)\s+to\s+"
    r"([^\s,;]+?)[.,;]?(?=\s|$)",
    IGNORECASE,
)

# Seed negation list, matched as words on the raw text, case-insensitively. We also
# accept the typographic apostrophe (don’t) and any whitespace inside the phrases.
# Differs from the seed: "switched" is history, not a negation (it also introduced
# false alarms: "switched from npm to pnpm" vs "uses pnpm"); "anymore" is one.
_NEGATION = _compile(
    r"\b(?:never|not|no\s+longer|isn['’]t|aren['’]t|wasn['’]t|doesn['’]t|don['’]t|didn['’]t"
    r"|cannot|can['’]t|won['’]t|avoid|avoids|avoided|stopped|dropped|without"
    r"|instead\s+of|rather\s+than|anymore)\b",
    IGNORECASE,
)

# What may stand right before a state word for it to be a state ("is on", "turned off").
_COPULA = frozenset(
    "is are was were be been being stays stay stayed remains remain remained turned "
    "switched set kept keep get gets got become becomes went goes go left".split()
)
_STATE_SKIP = frozenset("now still always currently again also already usually by default "
                        "permanently temporarily fully".split())
_MODAL = frozenset("can could may might".split())

_STATE_WORDS: dict[str, tuple[str, bool]] = {
    w: (axis, positive)
    for axis, (pos, neg) in STATE_AXES.items()
    for positive, words in ((True, pos), (False, neg))
    for w in words
}
_STATE_RE = _compile(
    r"(?<![\w-])(" + "|".join(sorted(map(escape, _STATE_WORDS), key=len, reverse=True)) + r")(?![\w-])",
    IGNORECASE,
)
# All choices in one pattern (one scan per text); the group name says which one matched.
_CHOICE_GROUPS = {
    f"c{i}": (axis, value)
    for i, (axis, value) in enumerate((a, v) for a, values in CHOICE_AXES.items() for v in values)
}
_CHOICE_RE = _compile(
    r"(?<![\w-])(?:"
    + "|".join(
        rf"(?P<c{i}>{pattern})"
        for i, pattern in enumerate(p for values in CHOICE_AXES.values() for p in values.values())
    )
    + r")(?![\w-])",
    IGNORECASE,
)


class Values(Frozen):
    """What :func:`read` found in one text. Every set holds canonical values: dates
    ``YYYY-MM-DD``, times ``HH:MM``, full lowercase weekday and month names, paths as
    written, states as ``(axis, positive)``, choices as ``(axis, value)``. ``frame`` is
    the text's content-word stems with ``#kind`` placeholders in text order, ``words``
    the same stems as a set, ``replaced`` one ``(X stems, Y stems)`` per "from X to Y".
    Immutable (:class:`ledger.frozen.Frozen`)."""

    __slots__ = (
        "quantities", "dates", "times", "weekdays", "months", "paths", "states", "choices", "negated", "frame",
        "replaced", "words",
    )

    def __init__(
        self,
        quantities: frozenset[Quantity],
        dates: frozenset[str],
        times: frozenset[str],
        weekdays: frozenset[str],
        months: frozenset[str],
        paths: frozenset[str],
        states: frozenset[tuple[str, bool]],
        choices: frozenset[tuple[str, str]],
        negated: bool,
        frame: tuple[str, ...],  # content-word stems and "#kind" placeholders, in text order
        replaced: tuple[tuple[frozenset[str], frozenset[str]], ...],  # ("from X to Y" stems)
        words: frozenset[str],  # the frame's words without placeholders
    ) -> None:
        s = object.__setattr__
        s(self, "quantities", quantities)
        s(self, "dates", dates)
        s(self, "times", times)
        s(self, "weekdays", weekdays)
        s(self, "months", months)
        s(self, "paths", paths)
        s(self, "states", states)
        s(self, "choices", choices)
        s(self, "negated", negated)
        s(self, "frame", frame)
        s(self, "replaced", replaced)
        s(self, "words", words)


class _Reader:
    """Reads one text: collects value spans (masking them so no digit is read twice)
    and what they stand for."""

    def __init__(self, text: str):
        self.text = text
        self.lower = text.lower()
        self.mask = list(text)
        self._masked: str | None = text  # the joined mask, rebuilt after a take
        self.spans: list[tuple[int, int, str]] = []  # (start, end, placeholder)
        found = list(_HISTORY.finditer(text))
        self.history = [m.span(1) for m in found]
        # The words of each "from X to Y": X was replaced by Y (see Values.replaced).
        self.replaced = tuple((stems(m.group(1)), stems(m.group(2))) for m in found)

    def masked(self) -> str:
        if self._masked is None:
            self._masked = "".join(self.mask)
        return self._masked

    def is_history(self, start: int) -> bool:
        return any(a <= start < b for a, b in self.history)

    def take(self, start: int, end: int, placeholder: str) -> None:
        self.mask[start:end] = " " * (end - start)
        self._masked = None
        self.spans.append((start, end, placeholder))

    def prev_words(self, start: int, n: int = 4) -> list[str]:
        return [w.lower() for w in _TOKEN.findall(self.masked()[:start])[-n:]]


def _read_paths(r: _Reader) -> set[str]:
    out = set()
    for m in _PATH.finditer(r.masked()):
        raw = m.group(1)
        last = raw.rstrip("/").rsplit("/", 1)[-1]
        if "/" in raw and not (raw[0] in "/~." or raw.endswith("/") or _ENDS_IN_EXT.search(last)):
            prev = r.prev_words(m.start(), 1)
            if not prev or prev[0] not in _PLACE_CUES:
                continue
        if _DATE.fullmatch(raw) or _DIGITS_AND_DOTS.fullmatch(raw):
            continue  # "1/2", "3.5" are not paths
        if not r.is_history(m.start()):
            out.add(raw.rstrip("/").removeprefix("./") or "/")
        r.take(m.start(), m.end(), "#path")
    return out


def _read_dates_and_times(r: _Reader) -> tuple[set[str], set[str]]:
    dates, times = set(), set()
    for m in _DATE.finditer(r.masked()):
        if not r.is_history(m.start()):
            dates.add(m.group(0))
        r.take(m.start(), m.end(), "#date")
    for pattern, bare in ((_CLOCK, False), (_BARE_MERIDIEM, True)):
        for m in pattern.finditer(r.masked()):
            hour = int(m.group(1))
            if bare:
                value = _clock_value(hour, 0, m.group(2)) if 1 <= hour <= 12 else None
            else:
                value = _clock_value(hour, int(m.group(2)), m.group(3))
            if value is not None:
                if not r.is_history(m.start()):
                    times.add(value)
                r.take(m.start(), m.end(), "#clock")
    return dates, times


def _read_choices(r: _Reader) -> set[tuple[str, str]]:
    out = set()
    for m in _CHOICE_RE.finditer(r.masked()):
        axis, value = _CHOICE_GROUPS[m.lastgroup]
        if not r.is_history(m.start()):
            out.add((axis, value))
        r.take(m.start(), m.end(), f"#c:{axis}")
    return out


def _read_states(r: _Reader) -> tuple[set[tuple[str, bool]], set[int]]:
    """States and the start offsets of the negations they consumed."""
    out: set[tuple[str, bool]] = set()
    consumed: set[int] = set()
    for m in _STATE_RE.finditer(r.masked()):
        word = m.group(1).lower()
        axis, positive = _STATE_WORDS[word]
        # The words in front as written: a state just taken must still count as the
        # word before ("enabled on the repo": this "on" follows "enabled", not "is").
        before = r.text[: m.start()]
        found = list(_TOKEN.finditer(before))[-6:]
        prev = [w.group(0).lower() for w in found]
        # Walk back over adverbs and negations to the verb in front.
        negs: list[int] = []
        i = len(prev) - 1
        while i >= 0:
            w = prev[i]
            if w in _STATE_SKIP:
                i -= 1
            elif w in ("not", "never", "longer", "no") or w.endswith(("n't", "n’t")):
                negs.append(found[i].start())
                i -= 1
            else:
                break
        verb = prev[i] if i >= 0 else ""
        if verb in ("be", "been") and i > 0 and prev[i - 1] in _MODAL:
            continue  # "can be enabled": a possibility, not a state
        if word in _STATE_NEEDS_COPULA and verb not in _COPULA:
            continue
        if r.is_history(m.start()):
            r.take(m.start(), m.end(), f"#s:{axis}")
            continue
        if negs:
            positive = not positive
            consumed.update(negs)
        out.add((axis, positive))
        r.take(m.start(), m.end(), f"#s:{axis}")
    return out, consumed


def _read_quantities(r: _Reader) -> set[Quantity]:
    out = set()
    for m in _NUMBER.finditer(r.masked()):
        start, end = m.span()
        word = m.group(4)
        if word:  # a number word
            digits, glued = str(_NUMBER_WORDS[word.lower()]), ""
        else:
            digits, glued = m.group(1), m.group(2) or m.group(3) or ""
        unit = glued
        if not unit:
            nxt = _NEXT_WORD.match(r.masked(), end)
            if nxt:
                w = nxt.group(1)
                if w.lower() in _TIME_UNITS or w.lower() in _SIZE_UNITS:
                    unit, end = w, nxt.end()
                elif w.lower() in _MONTHS:
                    unit = "day of month"  # "14 June": the month stays a month value
                elif w.lower() not in _NOT_A_UNIT and w.lower() not in _WEEKDAYS:
                    unit, end = w, nxt.end()
            elif (cjk := _CJK_UNIT_NEXT.match(r.masked(), end)) is not None:
                unit, end = cjk.group(1), cjk.end()
            elif word:
                continue  # a bare number word ("one of", "on two") is too vague
        q = Quantity("day of month", digits) if unit == "day of month" else quantity(digits, unit)
        if q.dim == "":
            name = owner(r.text, start)
            if name:
                q = Quantity("", q.value, name)
        if not r.is_history(m.start()):
            out.add(q)
        r.take(start, end, f"#n:{q.dim}")
    return out


#: Words between a name and its number that name no thing themselves ("CMake version
#: 3.28", "Python v 3"): the owner is the word before them.
_VERSION_WORDS = frozenset({"version", "ver", "v", "release", "rev", "revision"})

#: Characters of a name written before a number ("node.js", "c++", "c#", "gpt-4o").
_NAME_CHARS = frozenset("._+#-")


def owner(text: str, start: int) -> str:
    """The name a bare number at ``start`` of ``text`` belongs to: the word written
    right before it, apart (spaces, and one ``:`` or ``=``, between: "eu-west-1" is one
    value, named for nothing), lowercased, cut at its
    first ``.`` or ``-`` ("node.js" -> ``"node"``, so "Node 20" and "node.js 20" name one
    thing); the word before that when it is "version", "v", "release" ...; ``""`` when
    that word is a stopword, starts with no letter, or there is none ("is 30", "at 5").
    Plain string scanning: no pattern (remember's start-up budget).

    >>> owner("The C++ build uses CMake 3.28", 25), owner("port: 8080", 6), owner("it is 30", 6)
    ('cmake', 'port', '')
    """
    for _ in range(2):
        j = start
        if j > 0 and not (text[j - 1].isspace() or text[j - 1] in ":="):
            return ""  # glued: part of one value ("eu-west-1"), not a number of a named thing
        while j > 0 and text[j - 1].isspace():
            j -= 1
        if j > 0 and text[j - 1] in ":=":
            j -= 1
            while j > 0 and text[j - 1].isspace():
                j -= 1
        k = j
        while k > 0 and (text[k - 1].isalnum() or text[k - 1] in _NAME_CHARS):
            k -= 1
        word = text[k:j].lower().strip("._-")
        if not word or not word[0].isalpha():
            return ""
        for cut in ".-":
            word = word.split(cut, 1)[0]
        if word in _VERSION_WORDS:
            start = k
            continue
        return "" if word in _NOT_A_UNIT or word in _MONTHS or word in _WEEKDAYS else word
    return ""


def _read_calendar(r: _Reader) -> tuple[set[str], set[str]]:
    # Context ("3rd May", "in may") is read off the text as written; words inside a
    # value already taken ("sat" in a path) are not calendar words.
    text = r.text
    masked = r.masked()
    words = list(_WORD.finditer(text))
    weekdays: set[str] = set()
    months: set[str] = set()
    for i, m in enumerate(words):
        if masked[m.start()] != text[m.start()]:
            continue
        w = m.group(0).lower()
        if w in _WEEKDAYS:
            if not r.is_history(m.start()):
                weekdays.add(_WEEKDAYS[w])
            r.take(m.start(), m.end(), "#wd")
        elif w in _MONTHS:
            if w == "may" and not _is_month_may(text, words, i):
                continue
            if not r.is_history(m.start()):
                months.add(_MONTHS[w])
            r.take(m.start(), m.end(), "#mon")
    return weekdays, months


# Cached because the store compares one new claim with many peers (pure, so safe).
@lru_cache(maxsize=8192)
def read(text: str) -> Values:
    """The :class:`Values` of one claim text (cached: pure)."""
    r = _Reader(normalise(text))
    paths = _read_paths(r)
    dates, times = _read_dates_and_times(r)
    choices = _read_choices(r)
    states, consumed = _read_states(r)
    quantities = _read_quantities(r)
    weekdays, months = _read_calendar(r)
    negated = any(m.start() not in consumed for m in _NEGATION.finditer(r.text))
    rest = _LEFTOVER_DIGITS.sub(" ", r.masked())  # digits left over (e.g. "1:1")
    items = [(s, p) for s, _, p in r.spans]
    for m in _TOKEN.finditer(rest):
        for part in _PART_BREAK.split(m.group(0)):
            stem = _frame_word(part)
            if stem:
                items.append((m.start(), stem))
    items.sort(key=lambda x: x[0])
    return Values(
        quantities=frozenset(quantities),
        dates=frozenset(dates),
        times=frozenset(times),
        weekdays=frozenset(weekdays),
        months=frozenset(months),
        paths=frozenset(paths),
        states=frozenset(states),
        choices=frozenset(choices),
        negated=negated,
        frame=tuple(p for _, p in items),
        replaced=r.replaced,
        words=frozenset(p for _, p in items if not p.startswith("#")),
    )


@lru_cache(maxsize=16384)
def haystack(text: str) -> str:
    """The text as the frame's stems are cut from it: NFC, casefolded, typographic
    apostrophes straightened, and a lone U+0345 (a combining mark, so never inside a
    word, whose case fold is the letter iota) made a space. Every frame word ``w`` of
    :func:`read` starts a word in it: ``at_word_start(haystack(text), probe(w))``. So
    the proposer can rule a peer out by substring tests before reading its values."""
    return normalise(text).replace("\u0345", " ").casefold().replace("’", "'")


def probe(word: str) -> str:
    """What the haystack of a text holds at the start of a word for each of the text's
    frame words ``word`` (:func:`at_word_start`): the word casefolded, less a final "y".

    Why that holds: a frame word is the :func:`_stem` of a *part* (a run of word
    characters and apostrophes between other characters, ``-``, ``_`` or a value taken
    out). The stem only drops letters at the end of the part (and apostrophes at either
    end), except that "ies"/"ied" end in "y": so the word less a final "y" is a prefix of
    the part as written. Lower-casing then case folding is case folding, character by
    character."""
    w = word.casefold()
    return w[:-1] if w.endswith("y") else w


def _word_start(hay: str, i: int) -> bool:
    # Only the "m" of a clock time's am/pm ends a value right before a letter: those
    # patterns find word boundaries in ASCII, so "4pmédeploy" loses "4pm" and leaves
    # "édeploy" (or "4pmﬁle", whose "ﬁ" case folds to "fi").
    return i == 0 or not hay[i - 1].isalpha() or hay[i - 1] == "m"


def at_word_start(hay: str, part: str) -> bool:
    """Whether ``part`` occurs in ``hay`` at its start or right after a character that is
    no letter (``str.isalpha``) or is an ``m``. A part of a text never follows another
    letter: what precedes it is a space or punctuation, ``-``, ``_``, an apostrophe, or
    the end of a value taken out, and every value ends with a digit, ``%``, ``.``, a whole
    word or the ``m`` of "am"/"pm"; a lone U+0345 is the one character that is no letter
    and case folds to one (:func:`haystack` makes it a space).
    ``tests/test_signals_kinds.py`` checks this on generated texts."""
    i = hay.find(part)
    while i >= 0 and not _word_start(hay, i):
        i = hay.find(part, i + 1)
    return i >= 0


def may_share(hay: str, word: str, part: str) -> bool:
    """Whether the frame word ``word`` (``part`` = its :func:`probe`) can be a frame word
    of the text whose :func:`haystack` is ``hay``: :func:`at_word_start`, and the run of
    word characters and apostrophes starting there stems to ``word``, or cannot be judged
    that way (it or ``word`` holds a digit, an apostrophe or a character outside ASCII:
    case folding "Straße" gives the ASCII run "strasse", whose stem is no "straß"). A stricter
    test than :func:`at_word_start` alone, as exact: a frame word is the stem of a part,
    and a part ends where the run ends unless a value taken out starts right after it,
    which happens only at a digit or after an apostrophe (clock times such as
    ``abc10:30`` and values after ``'``), so a run of ASCII letters alone is the whole
    part; for an ASCII word, case folding its part is lower-casing it, which :func:`_stem`
    does first."""
    i = hay.find(part)
    n = len(hay)
    while i >= 0:
        if _word_start(hay, i):
            j = i + len(part)
            while j < n and (hay[j].isalnum() or hay[j] == "'"):
                j += 1
            run = hay[i:j]
            if not (run.isascii() and run.isalpha() and word.isascii()) or _stem(run) == word:
                return True
        i = hay.find(part, i + 1)
    return False


def stems(text: str) -> frozenset[str]:
    """Stems of the content words of a short phrase (values' digits dropped)."""
    return frozenset(
        _stem(p) for w in _TOKEN.findall(text) for p in _PART_BREAK.split(w)
        if p and p.lower() not in _FRAME_STOPWORDS and not p.isdigit() and len(_stem(p)) >= 2
    )
