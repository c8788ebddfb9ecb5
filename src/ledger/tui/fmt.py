"""Small terminal formatting helpers shared by the review TUI, its plain dump and the CLI.

They follow the seed's terminal helpers (reference §1.14): a strength bar of ``█`` and
``░`` cells, a compact age (``4h``, ``12d``, ``7mo``) and a one-line truncation with
``…``. Strength colours are lime above 0.7, amber above 0.4 and red otherwise.

Stdlib only: the CLI imports this module on every human command.
"""

from __future__ import annotations

import math

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
    """A 0–1 value as the 0–100 integer people see."""
    return _round_half_up(clamp01(fraction) * 100)


def ago(ms_delta: float) -> str:
    """A compact age: hours under a day (at least ``1h``), days under 60 days, then
    months of 30.4 days. Negative deltas (clock skew between processes) count as 0."""
    ms = max(0.0, float(ms_delta))
    days = ms / DAY_MS
    if days < 1:
        return f"{max(1, _round_half_up(ms / HOUR_MS))}h"
    if days < 60:
        return f"{_round_half_up(days)}d"
    return f"{_round_half_up(days / MONTH_DAYS)}mo"


def one_line(text: str) -> str:
    """Collapse every run of whitespace (newlines included) into one space."""
    return " ".join((text or "").split())


def truncate(text: str, width: int) -> str:
    """Collapse whitespace, then cut to ``width - 1`` characters plus ``…`` when the text
    is longer than ``width``."""
    s = one_line(text)
    width = max(0, int(width))
    if len(s) <= width:
        return s
    if width == 0:
        return ""
    return s[: width - 1] + ELLIPSIS
