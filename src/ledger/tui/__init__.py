"""Terminal review for people: ``ledger review``.

- ``fmt``: bars, ages and truncation (stdlib; the CLI reuses them).
- ``plain``: the queue as plain text or JSON when stdin is not a terminal (stdlib).
- ``app``: the keyboard-first Textual app. Textual is imported only there, so importing
  this package (or the CLI) never loads it.
"""
