"""The supervision web UI: ``ledger serve``.

:mod:`ledger.web.server` builds the Starlette app (JSON API plus the static vanilla-JS
front end in ``static/``) and runs it with uvicorn. Starlette and uvicorn are imported
only by that module, so importing :mod:`ledger.web` itself stays stdlib-only; the CLI
imports :mod:`ledger.web.server` inside the ``serve`` command.
"""
