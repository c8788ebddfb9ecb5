"""Reading what a subprocess writes to a pseudo-terminal (the progress bars draw only
on a terminal): shared by the tests that interrupt or watch a long command."""

from __future__ import annotations

import os


def read_chunk(master: int) -> bytes:
    """The next bytes the terminal's other end wrote; ``b""`` once it is closed (Linux
    reports a closed pty as EIO, an OSError)."""
    try:
        return os.read(master, 4096)
    except OSError:
        return b""


def read_to_end(master: int) -> bytes:
    """Everything written until the other end closes; then closes ``master``."""
    seen = b""
    while chunk := read_chunk(master):
        seen += chunk
    os.close(master)
    return seen
