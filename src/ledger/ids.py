"""Time-sortable prefixed ids: ``<prefix>_<base36 epoch ms><6 base36 chars>``.

Format from the seed (docs/originals.md §1.2): the same length and alphabet as before, so old
and new ids sort together. The six-character tail is no longer left to luck: it is
``(process salt + per-process counter) mod 36**6``. Within one process, ids drawn in
the same millisecond differ by construction (the counter advances on every call, and
would have to wrap 2.1 billion times inside one millisecond to repeat); a random salt
drawn once per process keeps two processes writing in the same millisecond apart,
which the store's UNIQUE constraint backs up. A 100,000-chunk ingest whose chunks all
share one timestamp therefore always gets 100,000 distinct ids.

Ids sort by creation time as long as the base36 timestamp keeps its width (it does
until the year 5188). Stdlib only (L0).
"""

from __future__ import annotations

import _thread
import itertools
import os

PREFIXES = {"claim": "m", "chunk": "c", "source": "s", "candidate": "cc", "conflict": "cf"}
_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"
_TAIL_LEN = 6
_TAIL_SPACE = 36**_TAIL_LEN  # 2,176,782,336 distinct tails per millisecond


def base36(n: int) -> str:
    """Non-negative integer to lowercase base36."""
    if n < 0:
        raise ValueError("base36 needs a non-negative integer")
    out = []
    while True:
        n, r = divmod(n, 36)
        out.append(_ALPHABET[r])
        if n == 0:
            return "".join(reversed(out))


class _Tail:
    """Per-process tail source: a random salt plus a counter (thread-safe: itertools.count
    under a lock, since several web worker threads draw ids)."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.salt = int.from_bytes(os.urandom(8), "big") % _TAIL_SPACE  # not `secrets`: ~5 ms of import per CLI start
        self.counter = itertools.count()
        self.lock = _thread.allocate_lock()  # threading.Lock itself; `threading` costs ~1 ms per CLI start

    def next(self) -> str:
        with self.lock:
            n = next(self.counter)
        return base36((self.salt + n) % _TAIL_SPACE).rjust(_TAIL_LEN, "0")


_tail = _Tail()


def _reseed_after_fork() -> None:
    # A forked child must not replay its parent's salt and counter.
    global _tail
    _tail = _Tail()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reseed_after_fork)


def new_id(prefix: str, now_ms: int) -> str:
    """A new id such as ``m_mg1x2k3l9a8b7c`` for ``prefix="m"`` at ``now_ms`` (epoch ms).

    Unique within this process by construction (see the module docstring); across
    processes the random per-process salt makes a clash a 1-in-2-billion event per pair
    of ids drawn in the same millisecond."""
    return f"{prefix}_{base36(now_ms)}{_tail.next()}"
