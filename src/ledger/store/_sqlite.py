"""The SQLite driver, as every ``ledger.store`` module imports it.

``import sqlite3`` runs ``sqlite3/dbapi2.py``, which imports ``datetime`` (and
``collections.abc``) to register the default date and timestamp adapters; that is
about 1.5 ms of every ``ledger recall`` process, roughly a tenth of ``python -c pass``
(docs/benchmarks.md "Driver import"). Ledger stores times as integers (ms since the
epoch, :mod:`ledger.clock`) and never hands SQLite a ``date``, so those adapters are
never used. Every name the store uses (``connect``, ``Connection``, ``Row``, the error
classes) is defined by the C module ``_sqlite3``, which ``sqlite3`` re-exports as the
same objects: ``_sqlite3.Row is sqlite3.Row``, and an error raised through one is
caught as the other. Where ``_sqlite3`` is missing (another Python implementation),
the package is imported instead.
"""

try:
    import _sqlite3 as sqlite3
except ImportError:  # pragma: no cover - CPython always has it
    import sqlite3  # type: ignore[no-redef]

__all__ = ["sqlite3"]
