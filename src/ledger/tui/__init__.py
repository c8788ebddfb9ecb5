"""Terminal review for people: ``ledger review``.

- bars, ages and truncation live in :mod:`ledger.termfmt` (stdlib; shared with the CLI).
- ``plain``: the queue as plain text or JSON when stdin is not a terminal (stdlib).
- ``app``: the keyboard-first Textual app. Textual is imported only there, so importing
  this package (or the CLI) never loads it.
"""
