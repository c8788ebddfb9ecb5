"""The ``ledger`` command.

``main()`` routes ``ledger hook ...`` to the stdlib-only hook runner *before* importing
click, so a harness hook pays only for Python's start-up. Every other command goes
through the click app in :mod:`ledger.cli.app`.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    _ensure_std_streams()
    if args and args[0] == "hook":
        from ..harness.runner import hook_main

        return hook_main(args[1:], fast_exit=True)
    if args and args[0] == "__serve-session":
        # Internal: the long-lived child process of the OpenCode plugin (JSON lines).
        from ..harness.runner import session_server_main

        return session_server_main(args[1:])
    from .app import run

    return run(args)


def _ensure_std_streams() -> None:
    """A harness or script may start us with stdin/stdout/stderr closed (``<&-``):
    Python then sets them to None. Give them /dev/null so nothing crashes on them."""
    import os

    for name, mode in (("stdin", "r"), ("stdout", "w"), ("stderr", "w")):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, mode))
