"""The clock. Pure code takes ``now`` (epoch ms) as an argument; the service owns a
clock so tests can move time. Stdlib only (L0)."""

from __future__ import annotations

import time

from .vocab import DAY_MS

TYPE_CHECKING = False
if TYPE_CHECKING:  # keep `typing` off the hook path
    from typing import Callable

    Clock = Callable[[], int]
else:
    Clock = object


def system_clock() -> int:
    """Current time in epoch milliseconds (UTC)."""
    return time.time_ns() // 1_000_000


class FixedClock:
    """A settable clock for tests and replays: ``clock()`` returns ``now``;
    ``advance(days=…, ms=…)`` moves it forward."""

    def __init__(self, now: int):
        self.now = int(now)

    def __call__(self) -> int:
        return self.now

    def advance(self, *, days: float = 0, ms: int = 0) -> int:
        self.now += int(days * DAY_MS) + int(ms)
        return self.now


def local_midnight_ms(now_ms: int) -> int:
    """Epoch ms of the start of the local calendar day containing ``now_ms`` (what
    "today" means for ``stats`` and the LLM daily token budget)."""
    lt = time.localtime(now_ms / 1000)
    return int(time.mktime((lt.tm_year, lt.tm_mon, lt.tm_mday, 0, 0, 0, 0, 0, -1)) * 1000)
