"""Time-sortable prefixed ids: ``<prefix>_<base36 epoch ms><6 random base36 chars>``.

Format from the seed (reference §1.2). Ids sort by creation time as long as the base36
timestamp keeps its width (it does until the year 5188). Stdlib only (L0).
"""

from __future__ import annotations

import secrets

PREFIXES = {"claim": "m", "chunk": "c", "source": "s", "candidate": "cc", "conflict": "cf"}
_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"


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


def new_id(prefix: str, now_ms: int) -> str:
    """A new id such as ``m_mg1x2k3l9a8b7c`` for ``prefix="m"`` at ``now_ms`` (epoch ms).
    The random tail uses ``secrets`` without modulo bias."""
    tail = "".join(secrets.choice(_ALPHABET) for _ in range(6))
    return f"{prefix}_{base36(now_ms)}{tail}"
