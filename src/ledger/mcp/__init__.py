"""``ledger mcp``: the store as a Model Context Protocol server over stdio (docs/mcp.md).

Importing this package imports nothing; :mod:`ledger.mcp.server` pulls in the ``mcp``
SDK (pydantic, anyio, starlette), so only the ``ledger mcp`` command imports it.
"""
