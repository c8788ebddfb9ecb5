"""ledger's own diagnostic log: ``$LEDGER_HOME/hook.log``, one timestamped line per event.

Processes nobody watches (hooks, the distiller, the OpenCode session server) report here
instead of on stdout/stderr, which belong to the harness. Stdlib only (L0, hook path).
"""

from __future__ import annotations

import os
import time

#: Longest message kept on one line (characters); longer ones are cut.
MAX_LINE_CHARS = 2000


def log_path() -> str:
    """Where :func:`log_line` writes: ``$LEDGER_HOME/hook.log``."""
    from .paths import home_dir

    return os.path.join(home_dir(), "hook.log")


def log_line(message: str) -> None:
    """Append one timestamped line (secrets redacted, whitespace folded, at most
    :data:`MAX_LINE_CHARS` characters of message) to :func:`log_path`; never raises."""
    try:
        path = log_path()
        os.makedirs(os.path.dirname(path), exist_ok=True)
        from .redact import clip

        # Messages can quote payload text (an exception about a value): redacted, and
        # written with errors="replace" so a lone surrogate cannot lose the line.
        line = " ".join(clip(str(message), MAX_LINE_CHARS).split())
        with open(path, "a", encoding="utf-8", errors="replace") as fh:
            fh.write(time.strftime("%Y-%m-%dT%H:%M:%S") + " " + line + "\n")
    except Exception:
        pass
