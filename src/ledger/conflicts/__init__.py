"""Conflict pipeline. :mod:`ledger.conflicts.signals` is the pure lexical proposer
(stdlib only); the store-backed parts (peers, candidates, judging, resolving) build on it.
"""

from ledger.conflicts.signals import (
    HEAD_TOKENS,
    OVERLAP_FLOOR,
    SIGNAL_NAMES,
    STOPWORDS,
    Suspicion,
    content_tokens,
    overlap,
    pair_key,
    query_terms,
    signals,
    suspect,
)

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
