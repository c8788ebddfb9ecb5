"""How a fact (a live claim handed back to an agent) is shown: one line per fact with
its id and strength (0-100), whitespace folded. The watcher's injections and the
session-state block after compaction both render facts through :func:`fact_line`, so an
agent sees one format wherever a fact reaches it.

Stdlib only (hook path). A fact is any mapping with the columns of
:func:`ledger.store.watch.facts_for_files` (``id``, ``text``, ``pinned``, ``hits``,
``last_read_at``, ``source_count``, ``reader_count``).
"""

from __future__ import annotations

from . import strength as S


def fact_strength(f, now: int) -> float:
    """Strength (0-1) of a fact row at ``now`` (epoch ms), from :func:`ledger.strength.of_row`."""
    return S.of_row(f, now)[0]


def fact_prefix(f, now: int, *, indent: str = "") -> str:
    """``<indent>- [<id> · <strength 0-100>] ``: what precedes a fact's text (never cut)."""
    return f"{indent}- [{f['id']} · {S.shown(fact_strength(f, now))}] "


def fact_line(f, now: int, *, indent: str = "", suffix: str = "") -> str:
    """``<indent>- [<id> · <strength 0-100>] <text><suffix>``: the text on one line."""
    return fact_prefix(f, now, indent=indent) + " ".join(f["text"].split()) + suffix


def rank_key(f, now: int) -> tuple:
    """Sort key putting pinned facts first, then the strongest, then the newest."""
    return (-int(bool(f["pinned"])), -fact_strength(f, now), -f["seq"])
