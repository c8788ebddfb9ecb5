"""``ledger __distill --db PATH --session KEY --owner OWNER``: the detached distiller.

Started by :func:`ledger.watcher.engine.spawn_distiller` once a session's lease was
taken. Nobody reads its output: everything it has to say goes to ``hook.log``. It lives
at the surface layer because it opens the service facade (the watcher below may not;
see docs/architecture.md) and hands it to :func:`ledger.watcher.distill.distill_session`.
Uses argparse, not click: it starts often and nobody types it.
"""

from __future__ import annotations

import argparse
import json


def main(argv: list[str]) -> int:
    """Distill one session; returns 0, or 1 when it failed (the reason is logged)."""
    ap = argparse.ArgumentParser(prog="ledger __distill", description="Distill one watcher session (started by the hook).")
    ap.add_argument("--db", required=True)
    ap.add_argument("--session", required=True)
    ap.add_argument("--owner", required=True)
    a = ap.parse_args(argv)
    from ..log import log_line
    from ..service import Ledger
    from ..watcher import config as config_mod
    from ..watcher.distill import distill_session

    try:
        cfg = config_mod.load_logged()
        import time

        from ..session import record as notes
        from ..watcher.engine import drain_spool

        # Spooled observations (a locked store, or a store that spools first) belong to
        # the trajectory too.
        drain_spool(a.db, cfg, time.time_ns() // 1_000_000, notes=notes)
        with Ledger.open(a.db) as led:
            r = distill_session(led, a.session, a.owner, cfg, log=log_line)
        log_line(f"distill {a.session}: {json.dumps(r)}")
        return 0
    except Exception as exc:  # detached: nobody reads stderr, the log is the record
        log_line(f"distill {a.session} failed: {type(exc).__name__}: {exc}")
        return 1
