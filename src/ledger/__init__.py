"""ledger: local memory for coding agents.

The public entry point is :class:`ledger.service.Ledger`, the one facade that the CLI,
the web server, the TUI and the harness hooks all call.
"""

__version__ = "0.1.0"
