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


def read_while_running(master: int, proc, timeout: float = 30) -> bytes:
    """What ``proc`` (a Popen whose terminal is ``master``'s other end) writes until it
    closes the terminal or exits, or ``timeout`` seconds pass (the caller then finds it
    still running). ``master`` stays open."""
    import select
    import time

    out = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r, _, _ = select.select([master], [], [], 0.2)
        if r:
            chunk = read_chunk(master)
            if not chunk:
                break
            out += chunk
        elif proc.poll() is not None:
            break
    return out
