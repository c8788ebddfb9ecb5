"""The search query language (pure, stdlib only). See :mod:`ledger.query.parser`."""

from ledger.query.parser import (
    KEY_HINTS,
    KEYS,
    MAX_MS,
    MIN_MS,
    STRENGTH_REASON,
    WHEN_REASON,
    Query,
    format_query,
    parse,
    parse_when,
)

__all__ = [
    "KEYS",
    "KEY_HINTS",
    "MAX_MS",
    "MIN_MS",
    "STRENGTH_REASON",
    "WHEN_REASON",
    "Query",
    "format_query",
    "parse",
    "parse_when",
]
