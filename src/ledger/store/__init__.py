"""All SQL of ledger lives in this package (DESIGN.md, layer L1)."""

from .connection import atomic, connect
from .store import FUZZY_FLOOR, PALETTE, SEED_CLUSTERS, SORTS, Store

__all__ = ["FUZZY_FLOOR", "PALETTE", "SEED_CLUSTERS", "SORTS", "Store", "atomic", "connect"]
