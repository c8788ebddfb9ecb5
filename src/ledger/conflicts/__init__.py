"""Conflict pipeline. :mod:`ledger.conflicts.signals` is the pure lexical proposer
(stdlib only); the store-backed parts (peers, candidates, judging, resolving) build on it.
"""

from ledger.conflicts.signals import (
    CHOICE_AXES,
    COVER_FLOOR,
    HEAD_TOKENS,
    OVERLAP_FLOOR,
    SHARE_FLOOR,
    SIGNAL_NAMES,
    STATE_AXES,
    STOPWORDS,
    Quantity,
    Suspicion,
    alignment,
    content_tokens,
    overlap,
    pair_key,
    quantity,
    query_terms,
    signals,
    suspect,
)

__all__ = [
    "CHOICE_AXES",
    "COVER_FLOOR",
    "HEAD_TOKENS",
    "OVERLAP_FLOOR",
    "SHARE_FLOOR",
    "SIGNAL_NAMES",
    "STATE_AXES",
    "STOPWORDS",
    "Quantity",
    "Suspicion",
    "alignment",
    "content_tokens",
    "overlap",
    "pair_key",
    "quantity",
    "query_terms",
    "signals",
    "suspect",
]
