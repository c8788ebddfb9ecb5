"""Small terminal formatting helpers shared by the review TUI, its plain dump and the CLI.

They follow the seed's terminal helpers (docs/originals.md §1.14): a strength bar of ``█`` and
``░`` cells, ages (``4h``, ``12d``, ``7mo``; :func:`age` and :func:`ago`) and a one-line truncation with
``…``. Strength colours are lime above 0.7, amber above 0.4 and red otherwise.

Stdlib only: the CLI imports this module on every human command.
"""

from __future__ import annotations

import math
import unicodedata  # C module, already loaded on the CLI's path (ledger.text imports it)

FULL = "█"
EMPTY = "░"
ELLIPSIS = "…"

LIME = "#b7c14a"
AMBER = "#d9a03c"
RED = "#d6606a"

HOUR_MS = 3_600_000
DAY_MS = 24 * HOUR_MS
MONTH_DAYS = 30.4


def _round_half_up(x: float) -> int:
    # Python's round() is banker's rounding; the seed (JavaScript Math.round) rounds .5 up.
    return math.floor(x + 0.5)


def clamp01(fraction: float) -> float:
    if fraction != fraction:  # NaN
        return 0.0
    return min(1.0, max(0.0, float(fraction)))


def bar(fraction: float, width: int) -> str:
    """``width`` cells: ``round(fraction * width)`` of ``█`` then ``░`` for the rest.
    The fraction is clamped to 0–1, so the result is always exactly ``width`` long."""
    width = max(0, int(width))
    filled = min(width, max(0, _round_half_up(clamp01(fraction) * width)))
    return FULL * filled + EMPTY * (width - filled)


def strength_color(fraction: float) -> str:
    """Lime above 0.7, amber above 0.4, red otherwise (hex colour)."""
    if fraction > 0.7:
        return LIME
    if fraction > 0.4:
        return AMBER
    return RED


def pct(fraction: float) -> int:
    """A 0–1 value as the 0–100 integer people see (:func:`ledger.strength.shown`, the
    integer ``strength:<N`` filters compare)."""
    from .strength import shown

    return shown(fraction)


SECOND_MS = 1000
MINUTE_MS = 60_000
YEAR_DAYS = 365
#: Within this distance of now, either way, an instant is "just now": two processes'
#: clocks (an agent's hook, the web server) may disagree by a few seconds.
JUST_NOW_MS = 10_000


def age(ms_delta: float) -> str:
    """A compact age for table columns: ``now``, ``42s``, ``5m``, ``3h``, ``12d``,
    ``7mo``, ``1y``, ``2.5y``; ``in 5m`` for a future instant.

    ``ms_delta`` is now minus the instant, in milliseconds (negative: the instant is in
    the future, e.g. written by a process whose clock runs ahead). Rules, each unit
    floored so an age never rounds up past what it is: under 10 s either way ``now``;
    seconds under a minute, minutes under an hour, hours under a day, days under 60
    days, then months of 30.4 days (rounded half up, as the seed did) under 365 days,
    then years to one decimal (``1y``, ``1.5y``). The web UI's ``age()`` in
    ``static/js/dom.js`` follows the same rules (``tests/test_ages.py`` runs both).
    """
    ms = float(ms_delta)
    if ms != ms:  # NaN
        return "—"
    if abs(ms) < JUST_NOW_MS:
        return "now"
    text = _span(abs(ms))
    return text if ms > 0 else f"in {text}"


def ago(ms_delta: float) -> str:
    """The age as a phrase for prose: ``just now``, ``42s ago``, ``3h ago``, and for a
    future instant (clock skew) ``in 5m``. Same rules as :func:`age`."""
    text = age(ms_delta)
    if text == "now":
        return "just now"
    if text.startswith("in ") or text == "—":
        return text
    return f"{text} ago"


def _span(ms: float) -> str:
    if ms < MINUTE_MS:
        return f"{int(ms // SECOND_MS)}s"
    if ms < HOUR_MS:
        return f"{int(ms // MINUTE_MS)}m"
    if ms < DAY_MS:
        return f"{int(ms // HOUR_MS)}h"
    days = ms / DAY_MS
    if days < 60:
        return f"{int(days)}d"
    if days < YEAR_DAYS:
        return f"{min(11, _round_half_up(days / MONTH_DAYS))}mo"
    years = math.floor(days / YEAR_DAYS * 10) / 10
    return f"{years:g}y"


def one_line(text: str) -> str:
    """``text`` on one line for a person: every run of whitespace (spaces, tabs,
    newlines, Unicode spaces and line separators) becomes one space, and the control
    characters Python also counts as whitespace (CR, VT, FF, U+001C-U+001F, NEL U+0085)
    are shown as :func:`visible` shows every control character (``␍``, ``␋``, ``�``),
    not as a space: a CR inside a claim is part of what is stored, and a space would hide
    it (docs/cli.md "Control characters")."""
    return " ".join(visible(text or "").split())


def char_width(ch: str) -> int:
    """Terminal columns one character takes: 2 for East Asian Wide and Fullwidth
    characters (``unicodedata.east_asian_width`` W or F: Han, kana, Hangul, fullwidth
    forms, most emoji), 0 for combining marks and invisible format characters (Mn, Me,
    Cf: accents written apart, zero-width joiners, variation selectors), 1 otherwise.
    Ambiguous characters (A: ``…``, ``°``, Greek) count 1, as in Western terminals."""
    if ch < "\u0300":  # ASCII and Latin-1: one column (a fast path for the common text)
        return 1
    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def text_width(text: str) -> int:
    """Terminal columns ``text`` takes on one line (:func:`char_width` summed)."""
    if text.isascii():
        return len(text)
    return sum(char_width(ch) for ch in text)


def truncate(text: str, width: int) -> str:
    """Collapse whitespace, then cut to at most ``width`` terminal columns
    (:func:`text_width`: a CJK character takes two): the text as it is when it fits,
    else as many whole characters as fit in ``width - 1`` columns plus ``…``. The
    result may be one column short of ``width`` (a wide character that does not fit);
    :func:`fit` pads it."""
    s = one_line(text)
    width = max(0, int(width))
    if text_width(s) <= width:
        return s
    if width == 0:
        return ""
    if s.isascii():
        return s[: width - 1] + ELLIPSIS
    used, end = 0, 0
    for i, ch in enumerate(s):
        w = char_width(ch)
        if used + w > width - 1:
            break
        used += w
        end = i + 1
    return s[:end] + ELLIPSIS


def pad(text: str, width: int) -> str:
    """``text`` followed by spaces up to ``width`` terminal columns (``str.ljust``
    counts characters, so a CJK text came out too wide and pushed the next column)."""
    return text + " " * max(0, width - text_width(text))


def fit(text: str, width: int) -> str:
    """Exactly ``width`` terminal columns: :func:`truncate` then :func:`pad`."""
    return pad(truncate(text, width), width)


# Characters a terminal acts on instead of showing (docs/cli.md "Control characters"):
# C0 controls but tab and newline (ESC starts the escape sequences that recolour,
# clear the screen, set the window title or write the clipboard; CR rewrites the line),
# DEL, the C1 controls (U+0080-U+009F: U+009B is a one-character CSI to some terminals)
# and the bidirectional controls (embeddings, overrides and isolates U+202A-U+202E,
# U+2066-U+2069, and the marks LRM U+200E, RLM U+200F, ALM U+061C: they reorder how the
# text around them is drawn, so "port \u202e0806\u202c" reads "port 6080").
# C0 and DEL become their Unicode control pictures (ESC shows as ␛, so an escape
# sequence stays readable as text: ␛[31m); the others become U+FFFD. Stored text is
# never changed: only what is printed for a person (--json keeps the text exact).
_VISIBLE = {c: 0x2400 + c for c in range(0x20) if c not in (0x09, 0x0A)}
_VISIBLE[0x7F] = 0x2421
#: The bidirectional controls; the web UI's visible() (static/js/dom.js) has the same list.
BIDI_CONTROLS = (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C)
_VISIBLE.update({c: 0xFFFD for c in (*range(0x80, 0xA0), *BIDI_CONTROLS)})
#: The same characters as JSON ``\\u`` escapes, for JSON written with ``ensure_ascii=False``
#: (:func:`json_visible`): C0 controls are escaped by ``json`` already, C1 and bidi
#: controls were written raw.
_JSON_ESCAPES = {c: f"\\u{c:04x}" for c in (0x7F, *range(0x80, 0xA0), *BIDI_CONTROLS)}
_SGR_BODY = frozenset("0123456789;")


def visible(text: str) -> str:
    """``text`` safe to print to a terminal: every control character a terminal would act
    on (C0 but tab and newline, DEL, C1, bidi overrides and isolates) replaced by a
    visible stand-in (``\\x1b`` → ``␛``, ``\\x01`` → ``␁``, C1 and bidi → ``�``). Same
    length in characters; text without such characters comes back as is."""
    return text.translate(_VISIBLE)


def visible_styled(text: str) -> str:
    """:func:`visible` for text coloured by the CLI (click's styles): SGR sequences
    (``ESC [ digits;... m``, colour and weight only) are kept, every other control
    character is replaced. Stored text is made :func:`visible` before it is styled
    (:mod:`ledger.cli.render`), so an SGR sequence left here is the CLI's own."""
    if "\x1b" not in text:
        return visible(text)
    parts = text.split("\x1b")
    out = [visible(parts[0])]
    for part in parts[1:]:
        end = 1
        if part.startswith("["):
            while end < len(part) and part[end] in _SGR_BODY:
                end += 1
            if end < len(part) and part[end] == "m":
                out.append("\x1b" + part[: end + 1] + visible(part[end + 1:]))
                continue
        out.append("␛" + visible(part))
    return "".join(out)


def json_visible(text: str) -> str:
    """JSON text written with ``ensure_ascii=False`` with DEL, C1 and bidi controls
    written as ``\\uXXXX`` escapes (``json`` escapes C0 itself): the same JSON value,
    nothing for a terminal to act on. Only valid for JSON text (outside strings JSON
    is ASCII, so every such character is inside a string)."""
    return text.translate(_JSON_ESCAPES)
