"""One "machine" of the PostgreSQL load test (tests/test_pg_load.py): 4 writer and 2
reader threads, each on its own connection (its own ``Ledger``), against one shared
store. Prints one JSON line per thread when it is done:

    {"thread": "m1-w0", "ops": 300, "errors": [...], "written": {id: created_at},
     "dropped": {id: dropped_at}, "hits": {id: n}, "updates": {id: n}, "asof": [[T, [ids]], ...]}

Writers remember new claims, recall (a counted read: hits + 1 on what is returned),
drop some of their own claims and edit the shared "hot" claims (text history rows);
readers search, and record what ``asof:T`` answers for instants 20 s in the past.

    python pg_load_worker.py <url> <machine> <writer_ops> <reader_ops> <hot ids comma-separated>
"""

from __future__ import annotations

import json
import random
import sys
import threading
import time
from datetime import datetime, timezone


def iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def writer(url: str, name: str, n: int, hot: list[str], out: dict) -> None:
    from ledger.errors import LedgerError
    from ledger.service import Ledger

    rnd = random.Random(name)
    led = Ledger.open(url)
    mine: list[str] = []
    try:
        for i in range(n):
            r = rnd.random()
            try:
                if r < 0.55 or not mine:
                    m = led.remember(f"load fact {name} {i}: gauge {name.replace('-', '')}x{i} reads {rnd.randint(1, 999)} units",
                                     cluster=rnd.choice(["code", "proc"]), agent=name).memory
                    out["written"][m.id] = m.created_at
                    mine.append(m.id)
                elif r < 0.80:
                    res = led.recall(f"gauge {rnd.choice(['units', 'reads', name.split('-')[0]])}", agent=name, limit=5)
                    if res.not_counted:  # the write lock was busy past the recall's short wait: not a loss
                        out["not_counted"] = out.get("not_counted", 0) + 1
                    else:
                        for h in res.hits:
                            out["hits"][h.id] = out["hits"].get(h.id, 0) + 1
                elif r < 0.90:
                    mid = mine.pop(rnd.randrange(len(mine)))
                    if led.forget([mid], agent=name):
                        out["dropped"][mid] = led.get(mid).deleted_at
                else:
                    mid = rnd.choice(hot)
                    led.update(mid, text=f"hot value set by {name} at step {i}", by=name)
                    out["updates"][mid] = out["updates"].get(mid, 0) + 1
            except LedgerError as exc:
                out["errors"].append(f"{exc.kind}: {exc}")
            out["ops"] += 1
    finally:
        led.close()


def reader(url: str, name: str, n: int, out: dict) -> None:
    from ledger.errors import LedgerError
    from ledger.service import Ledger

    rnd = random.Random(name)
    led = Ledger.open(url)
    try:
        for i in range(n):
            try:
                if i % 6 == 0:
                    # An instant 20 s back: a write is stamped before it waits for the write
                    # lock (at most 10 s, then it fails), so every write stamped before it
                    # has committed or failed by now, and the answer is final.
                    t = int(time.time() * 1000) - 20_000
                    res = led.search(f"load asof:{iso(t)} kind:claim", limit=100000)
                    out["asof"].append([t, sorted(h.id for h in res.hits), res.total])
                else:
                    led.search(rnd.choice(["gauge", "units", "hot value", "load fact"]), limit=10)
            except LedgerError as exc:
                out["errors"].append(f"{exc.kind}: {exc}")
            out["ops"] += 1
    finally:
        led.close()


def main(url: str, machine: str, writer_ops: int, reader_ops: int, hot: str) -> None:
    hot_ids = hot.split(",")
    results = []
    threads = []
    for kind, count in (("w", 4), ("r", 2)):
        for t in range(count):
            name = f"{machine}-{kind}{t}"
            out = {"thread": name, "ops": 0, "errors": [], "written": {}, "dropped": {}, "hits": {}, "updates": {}, "asof": []}
            results.append(out)
            target = (lambda u=url, nm=name, o=out: writer(u, nm, writer_ops, hot_ids, o)) if kind == "w" else \
                (lambda u=url, nm=name, o=out: reader(u, nm, reader_ops, o))

            def run(fn=target, o=out):
                try:
                    fn()
                except BaseException as exc:  # noqa: BLE001 - reported, the test fails on it
                    o["errors"].append(f"crash: {type(exc).__name__}: {exc}")

            threads.append(threading.Thread(target=run))
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for out in results:
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
