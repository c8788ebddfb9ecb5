"""Issue 12: an observation sent while another process holds the store's write lock
longer than the hook waits is kept in the spool and drained later; with locks and
``kill -9`` at random points, every observation sent arrives exactly once."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import WriteLock, spool_settled, store_sql
from fakes.hooks import LEDGER_BIN, post_bash, pre_read

from ledger.watcher import spool as S


def _send(payload: dict, env: dict, kill_after: float | None) -> bool:
    """One delivery through the real hook; True when it ran to the end (not killed)."""
    full = {**os.environ, **{k: str(v) for k, v in env.items()}}
    p = subprocess.Popen([LEDGER_BIN, "hook", "claude-code", payload["hook_event_name"]], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=full)
    p.stdin.write(json.dumps(payload).encode())
    p.stdin.close()
    if kill_after is not None:
        try:
            p.wait(kill_after)
        except subprocess.TimeoutExpired:
            p.send_signal(signal.SIGKILL)
            p.wait()
            p.stdout.close(), p.stderr.close()
            return False
    out = p.stdout.read()
    p.stdout.close(), p.stderr.close()
    assert p.wait() == 0 and out == b""
    return True


def _locker(db: Path, stop: threading.Event, rng: random.Random) -> None:
    """Hold the write lock for random spells, some longer than the hook's 2 s wait."""
    while not stop.is_set():
        with WriteLock(db):
            stop.wait(rng.uniform(0.3, 3.0))
        stop.wait(rng.uniform(0.0, 0.6))


# Kills hooks while they wait on SQLite's write lock. On PostgreSQL a finished call goes
# to the spool without waiting, so nothing is mid-wait to kill: its drain, cut short and
# redone, is tests/test_watcher_spool_first.py's and tests/test_pg_hook.py's.
@pytest.mark.sqlite_only
@pytest.mark.parametrize("seed", [1, 2])
def test_every_observation_arrives_exactly_once_under_random_locks_and_kills(tmp_path, store_target, seed):
    rng = random.Random(seed)
    db = store_target
    env = {"LEDGER_DB": db, "LEDGER_HOME": os.environ["LEDGER_HOME"]}  # where a PostgreSQL store's spool is
    proj = tmp_path / "proj"
    proj.mkdir()
    assert _send(pre_read(proj / "a.txt", cwd=proj), env, None)  # creates the store
    payloads = [post_bash(f"step {i}", stdout=f"out {i}", cwd=proj, tool_use_id=f"toolu_{seed}_{i:03d}")
                for i in range(27)]
    random_phase, certain_phase = payloads[:24], payloads[24:]
    stop = threading.Event()
    locker = threading.Thread(target=_locker, args=(db, stop, rng), daemon=True)
    locker.start()
    kills = 0

    def deliver(p: dict) -> None:
        nonlocal kills
        # Like a harness that retries a hook it had to kill: deliver until one run ends.
        # Half the kills come early (start-up or the write itself), half late (waiting on
        # the lock), so some land however fast the hook runs on this machine.
        while not _send(p, env, rng.choice((rng.uniform(0.005, 0.06), rng.uniform(0.05, 1.5)))
                        if rng.random() < 0.3 else None):
            kills += 1

    try:
        with ThreadPoolExecutor(3) as pool:
            list(pool.map(deliver, random_phase))
    finally:
        stop.set()
        locker.join()
    # Random kills may all miss on a fast machine (the run ends first). These cannot: the
    # test holds the write lock, so each hook is still inside its 2 s wait when killed.
    with WriteLock(db):
        for p in certain_phase:
            assert not _send(p, env, 0.8), "the hook ended while the store was locked for longer than its wait"
            kills += 1
    for p in certain_phase:
        assert _send(p, env, None)
    spool = S.spool_dir(str(db))
    assert kills >= len(certain_phase)
    # The next hook drains what is left.
    assert _send(pre_read(proj / "a.txt", cwd=proj, session="later"), env, None)
    assert not S.has_work(spool), os.listdir(spool)
    spool_settled(db)
    rows = store_sql(db, "SELECT tool_use_id, output FROM observations WHERE session = 'claude-code:s1'")
    [(steps,)] = store_sql(db, "SELECT steps FROM watch_sessions WHERE key = 'claude-code:s1'")
    sent = {p["tool_use_id"]: f"out {i}" for i, p in enumerate(payloads)}
    assert len(rows) == len(sent) == steps
    assert dict(rows) == sent


def test_a_drain_killed_halfway_is_redone_without_duplicates(tmp_path):
    folder = str(tmp_path / "db.spool")
    for i in range(5):
        S.append(folder, {"tool_use_id": f"t{i}", "n": i})
    S.append(folder, {"n": 99})  # no id: the spool gives it one
    stored: dict[str, dict] = {}

    def crash_after_two(record):
        if len(stored) == 2:
            raise RuntimeError("killed")
        stored[record["tool_use_id"]] = record

    with pytest.raises(RuntimeError):
        S.drain(folder, crash_after_two)
    # The half-drained file belongs to a live process (us): claim it as its owner died.
    [left] = [n for n in os.listdir(folder) if n.startswith("draining-")]
    os.rename(os.path.join(folder, left), os.path.join(folder, "draining-999999999-dead.jsonl"))
    S.append(folder, {"tool_use_id": "t5", "n": 5})

    def insert(record):
        stored.setdefault(record["tool_use_id"], record)  # idempotent per id, like the store

    S.drain(folder, insert)
    assert sorted(k for k in stored if not k.startswith("spool-")) == [f"t{i}" for i in range(6)]
    assert len([k for k in stored if k.startswith("spool-")]) == 1
    assert not S.has_work(folder)


def test_an_unreadable_line_is_logged_and_skipped(tmp_path):
    folder = str(tmp_path / "db.spool")
    S.append(folder, {"tool_use_id": "a"})
    with open(os.path.join(folder, S.PENDING), "ab") as fh:
        fh.write(b'{"tool_use_id": "cut-of\n')
    S.append(folder, {"tool_use_id": "b"})
    got, logs = [], []
    S.drain(folder, lambda r: got.append(r["tool_use_id"]), log=logs.append)
    assert got == ["a", "b"] and len(logs) == 1 and "unreadable" in logs[0]
