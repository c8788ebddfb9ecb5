"""All SQL of ledger lives in this package (docs/architecture.md, layer L1).

Names are imported lazily (PEP 562) so the hook path can import
``ledger.store.watch`` without pulling in the full store and its dataclasses.
"""

from __future__ import annotations

__all__ = ["PALETTE", "SEED_CLUSTERS", "SORTS", "Store", "atomic", "connect"]


def __getattr__(name: str):
    if name in ("atomic", "connect"):
        from . import connection

        return getattr(connection, name)
    if name in __all__:
        from . import store

        return getattr(store, name)
    raise AttributeError(f"module 'ledger.store' has no attribute {name!r}")
