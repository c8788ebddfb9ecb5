"""``ledger __drain``: the detached process that stores spooled observations.

A hook on a store that spools first (a PostgreSQL store, docs/watcher.md "The spool")
appends a finished tool call to this machine's spool and starts this process when none
runs (:func:`ledger.watcher.spool.spawn_drainer`); the store is in ``$LEDGER_DB``. It
holds the spool's ``drainer.lock`` for its whole life, so there is one per store on a
machine, drains the spool (exactly once per observation, oldest first, each with its
session-record note), starts the distillations that became due, and then lingers
:data:`LINGER_S` seconds for more: the tool calls of one agent turn come a few seconds
apart, and one process with one connection takes them all, instead of each paying the
driver's import and a connection. It lets the lock go only while it sees nothing to
drain (under the spool's lock), then exits.

A store out of reach ends it: the observations stay in the spool, one line in
``hook.log`` says how many, and the next hook that spools starts another. Nobody reads
its output. Uses argparse, not click: it starts often and nobody types it.
"""

from __future__ import annotations

import argparse
import os
import time

#: Seconds the drain process waits for more work after its last drain.
LINGER_S = 5.0
POLL_S = 0.05


def main(argv: list[str]) -> int:
    """Drain until idle for :data:`LINGER_S`; returns 0, or 1 when it stopped on an
    error (logged)."""
    ap = argparse.ArgumentParser(prog="ledger __drain", description="Store this machine's spooled observations (started by the hook).")
    ap.add_argument("--db", default=None, help="the store (default: $LEDGER_DB)")
    ap.add_argument("--linger", type=float, default=LINGER_S, help="seconds to wait for more work once idle")
    ap.add_argument("--migrate", action="store_true",
                    help="open the store at once, applying pending schema changes, even with nothing spooled")
    a = ap.parse_args(argv)
    from ..log import log_line
    from ..paths import db_file
    from ..watcher import spool as S

    db = a.db or db_file()
    folder = S.spool_dir(db)
    held = S.hold_drainer(folder)
    if held is None:
        return 0  # another drain process runs; it takes what we were started for
    engine = None
    try:
        from ..errors import StoreUnavailable
        from ..session import record as notes
        from ..watcher import config as config_mod
        from ..watcher.engine import Engine

        cfg = config_mod.load_logged()
        if a.migrate:  # a hook left a large store's schema changes to this process (no time budget)
            try:
                engine = Engine.open(db, cfg, time.time_ns() // 1_000_000, notes=notes)
            except StoreUnavailable as exc:
                log_line(f"drain: could not open the store to apply its schema changes ({exc}); the next hook tries again")
                return 1
        idle_since = time.monotonic()
        busy = 0
        while True:
            if S.has_work(folder):
                now = time.time_ns() // 1_000_000
                try:
                    if engine is None:
                        engine = Engine.open(db, cfg, now, notes=notes)
                    engine.now = now
                    engine.drain_spool(raise_unavailable=True)
                    busy = 0
                except StoreUnavailable as exc:
                    busy += 1
                    if getattr(exc, "reason", "") == "locked" and busy < 3:
                        continue  # another writer held the store past the wait: try again
                    waiting = _count(folder)
                    log_line(f"drain: store unavailable ({exc}); {waiting} observation{'s' if waiting != 1 else ''} "
                             "wait in the spool for the next hook")
                    return 1
                idle_since = time.monotonic()
            elif time.monotonic() - idle_since >= a.linger and S.release_if_idle(folder, held):
                return 0
            time.sleep(POLL_S)
    except Exception as exc:  # noqa: BLE001 - detached: nobody reads stderr, the log is the record
        log_line(f"drain failed: {type(exc).__name__}: {exc}")
        return 1
    finally:
        if engine is not None:
            try:
                engine.close()
            except Exception:  # noqa: BLE001 - a connection already lost
                pass


def _count(folder: str) -> int:
    n = 0
    try:
        for name in os.listdir(folder):
            if name.endswith(".jsonl"):
                with open(os.path.join(folder, name), "rb") as fh:
                    n += sum(1 for line in fh if line.strip())
    except OSError:
        pass
    return n
