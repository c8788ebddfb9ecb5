"""The search query language (pure, stdlib only). See :mod:`ledger.query.parser`."""

from ledger.query.parser import (
    CLOSED_VALUES,
    KEY_HINTS,
    KEYS,
    MAX_MS,
    MIN_MS,
    STRENGTH_REASON,
    WHEN_REASON,
    Query,
    filter_warnings,
    format_query,
    parse,
    parse_when,
)

__all__ = [
    "CLOSED_VALUES",
    "KEYS",
    "KEY_HINTS",
    "MAX_MS",
    "MIN_MS",
    "STRENGTH_REASON",
    "WHEN_REASON",
    "Query",
    "filter_warnings",
    "format_query",
    "parse",
    "parse_when",
]
