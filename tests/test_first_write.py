"""The first write into a store that does not exist runs once and creates the store whole
or not at all (docs/cli.md "A write that creates the store", docs/store.md "A missing
store"), through real files and real ``ledger`` processes:

- its work runs once (it ran twice: first on an empty store in memory, then for real,
  so that a failure left no file; ``import`` skipped that and left an empty store file
  when interrupted);
- a failure of any kind (a refused claim, an error halfway, Ctrl-C or SIGTERM in the
  middle of an import) leaves no store file, no ``-wal``/``-shm``, no temporary file and
  no folder behind; an interrupted import into a store that exists leaves it as it was;
- first writers racing to create the same store make exactly one, and lose nothing.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import subprocess
import time

import pytest
from conftest import LEDGER_BIN
from ptys import read_chunk, read_to_end
from test_cli import fail, ok

from ledger.cli import verbs
from ledger.service import Ledger
from ledger.store.newstore import MARK


def _files(root) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")) if root.exists() else []


def _texts(led) -> list[str]:
    """The text of every memory in the store (an export's memory lines)."""
    return [r["text"] for r in map(json.loads, led.export_lines("")) if "record" not in r]


def _bulk(path, n: int, *, last: str | None = None):
    """An export file of ``n`` claims (``last``: a line put at the end instead of the
    last claim)."""
    lines = [json.dumps({"id": f"m_bulk{i:06d}", "text": f"bulk fact number {i} about deploy {i % 97}",
                         "kind": "claim", "origin": "chat", "clusterId": "code", "writer": "bulk",
                         "createdAt": 1_700_000_000_000 + i, "lastReadAt": 1_700_000_000_000 + i, "hits": 0})
             for i in range(n)]
    if last is not None:
        lines[-1] = last
    path.write_text("\n".join(lines) + "\n")
    return path


# ------------------------------------------------------------------ once
@pytest.mark.sqlite_only  # store files on disk
def test_a_first_write_runs_its_work_once(tmp_path):
    """The example: a first write did its work twice (in memory, then for real)."""
    target = tmp_path / "new" / "sub" / "ledger.db"
    runs = []

    def work(led):
        runs.append(str(led.path))
        return led.remember("Staging needs VPN", cluster="proc", agent="a").memory.id

    mid, created = verbs.write(str(target), work)
    assert created and len(runs) == 1, runs
    assert _files(tmp_path / "new") == ["sub", "sub/ledger.db"]
    with Ledger.open(target) as led:
        assert led.get(mid).text == "Staging needs VPN"
    # an import into a new store, the same (it was the one write that skipped the first run)
    records = [(1, {"id": "m_one", "text": "Deploys go out on Tuesdays", "kind": "claim", "origin": "chat",
                    "clusterId": "proc", "writer": "a", "createdAt": 1_700_000_000_000,
                    "lastReadAt": 1_700_000_000_000, "hits": 0})]
    imports = []
    other = tmp_path / "other.db"
    r, created = verbs.write(str(other), lambda led: imports.append(1) or led.import_records(records))
    assert created and imports == [1] and r["imported"] == 1
    assert _files(tmp_path) == sorted(["new", "new/sub", "new/sub/ledger.db", "other.db"])


@pytest.mark.sqlite_only
def test_a_first_write_failing_halfway_leaves_nothing(tmp_path):
    """An error after the write began (a memory written, then a failure): no file, no
    temporary file, no side file, no folder."""
    target = tmp_path / "x" / "y" / "ledger.db"
    for boom in (RuntimeError("disk gremlin"), KeyboardInterrupt()):
        def work(led, boom=boom):
            led.remember("Staging needs VPN", cluster="proc", agent="a")
            raise boom

        with pytest.raises(type(boom)):
            verbs.write(str(target), work)
        assert not (tmp_path / "x").exists(), _files(tmp_path)
    # a folder that was there stays; only what the write made goes
    (tmp_path / "kept").mkdir()

    def fails(led):
        raise RuntimeError("x")

    with pytest.raises(RuntimeError):
        verbs.write(str(tmp_path / "kept" / "ledger.db"), fails)
    assert _files(tmp_path) == ["kept"]


@pytest.mark.sqlite_only
def test_a_store_created_meanwhile_gets_the_write(tmp_path):
    """Another process creates the store while this first write builds its own: the link
    finds the name taken, this build is dropped, and the write runs again on that store
    (``again()`` first), so both writes are there and there is one store."""
    target = tmp_path / "s" / "ledger.db"
    runs, cleared = [], []

    def work(led):
        runs.append(1)
        if len(runs) == 1:  # "another process" wins the race
            with Ledger.open(target) as other:
                other.remember("Deploys go out on Tuesdays", cluster="proc", agent="other")
        return led.remember("Staging needs VPN", cluster="proc", agent="me").memory.id

    mid, created = verbs.write(str(target), work, again=lambda: cleared.append(1))
    assert not created and len(runs) == 2 and cleared == [1]
    assert set(_files(tmp_path / "s")) <= {"ledger.db", "ledger.db-wal", "ledger.db-shm"}, _files(tmp_path)
    with Ledger.open(target) as led:
        assert led.get(mid).text == "Staging needs VPN"
        assert sorted(_texts(led)) == ["Deploys go out on Tuesdays",
                                                                               "Staging needs VPN"]


# ------------------------------------------------------------------ refused
@pytest.mark.sqlite_only  # store files on disk
def test_a_refused_claim_creates_no_store(cli, tmp_path):
    """Refused inside the store, after it was opened: too long for a claim."""
    target = tmp_path / "x" / "ledger.db"
    err = fail(*cli("remember", "-", "--cluster", "proc", db=target, input="word " * 5000))
    assert "Created" not in err and not (tmp_path / "x").exists(), _files(tmp_path)
    err = fail(*cli("ingest", "-", "--cluster", "nope", db=target, input="# Doc\n\nStaging needs VPN.\n"))
    assert "Created" not in err and not (tmp_path / "x").exists(), _files(tmp_path)


@pytest.mark.sqlite_only
def test_a_bad_record_late_in_a_big_file_creates_nothing(cli, tmp_path):
    f = _bulk(tmp_path / "bulk.jsonl", 3000, last='{"id": "m_x", "text": 7}')
    target = tmp_path / "x" / "ledger.db"
    err = fail(*cli("import", str(f), db=target))
    assert "line 3000" in err and "Nothing was imported" in err, err
    assert not (tmp_path / "x").exists(), _files(tmp_path)


# ------------------------------------------------------------------ interrupted
def _import_on_a_tty(f, target):
    """``ledger import f --db target`` with stderr on a pseudo-terminal, so its progress
    bar shows how far it got: ``(process, master fd)``."""
    master, slave = pty.openpty()
    p = subprocess.Popen([LEDGER_BIN, "import", str(f), "--db", str(target)], stdout=subprocess.PIPE,
                         stderr=slave, stdin=subprocess.DEVNULL, env=dict(os.environ, NO_COLOR="1", TERM="xterm"))
    os.close(slave)
    return p, master


def _read_until_progress(master, deadline: float = 60) -> str:
    """Read the terminal until the bar shows records written (``N/total`` with
    0 < N < total): the import is then inside its transaction."""
    seen, end = "", time.monotonic() + deadline
    while time.monotonic() < end:
        r, _, _ = select.select([master], [], [], 0.5)
        if not r:
            continue
        chunk = read_chunk(master)
        if not chunk:
            break
        seen += chunk.decode("utf-8", "replace")
        for done, total in re.findall(r"(\d+)/(\d+)", seen):
            if 0 < int(done) < int(total):
                return seen
    raise AssertionError(f"no progress seen: {seen!r}")


def _drain(master) -> str:
    return read_to_end(master).decode("utf-8", "replace")


def _interrupt(p, master, sig) -> tuple[int, str]:
    _read_until_progress(master)
    p.send_signal(sig)
    rest = _drain(master)
    return p.wait(timeout=60), rest


#: An import this long takes a few seconds: long enough to be stopped part way.
BULK = 20_000


@pytest.mark.sqlite_only  # store files on disk
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_first_import_leaves_no_file(tmp_path, sig):
    """The example: `ledger import` into a new store, interrupted after it opened the
    store, left an empty store file (and its -wal and -shm) behind."""
    f = _bulk(tmp_path / "bulk.jsonl", BULK)
    target = tmp_path / "new" / "sub" / "ledger.db"
    p, master = _import_on_a_tty(f, target)
    rc, said = _interrupt(p, master, sig)
    if sig == signal.SIGINT:
        assert rc == 130 and "Import interrupted: nothing from" in said, (rc, said)
    else:
        assert rc == -signal.SIGTERM, rc  # ended by the signal, as before, after cleaning up
    assert _files(tmp_path) == ["bulk.jsonl"], _files(tmp_path)
    # and the same import, run again, creates the store
    p = subprocess.run([LEDGER_BIN, "import", str(f), "--db", str(target)], capture_output=True, text=True,
                       timeout=120, stdin=subprocess.DEVNULL)
    assert p.returncode == 0 and f"imported {BULK} memories" in p.stdout, p.stderr
    assert sorted(os.listdir(target.parent)) == ["ledger.db"]


def test_an_interrupted_import_into_a_store_that_exists_changes_nothing(cli, tmp_path, new_store):
    """Both engines: the import is one transaction; killed part way, the store keeps
    exactly what it had (on SQLite the store file's bytes too)."""
    target = new_store("kept")
    ok(*cli("remember", "Staging needs VPN", "--cluster", "proc", db=target))
    before = ok(*cli("export", db=target))
    f = _bulk(tmp_path / "bulk.jsonl", BULK)
    sqlite = not isinstance(target, str)
    if sqlite:
        with Ledger.open(target):
            pass  # closed: the WAL checkpointed into the file, whose bytes are then compared
        raw = target.read_bytes()
    for sig in (signal.SIGINT, signal.SIGTERM):
        p, master = _import_on_a_tty(f, target)
        rc, said = _interrupt(p, master, sig)
        assert rc == (130 if sig == signal.SIGINT else -signal.SIGTERM), (rc, said)
        assert ok(*cli("export", db=target)) == before
        if sqlite:
            assert target.read_bytes() == raw
            assert not [n for n in os.listdir(target.parent) if MARK in n]


# ------------------------------------------------------------------ racing
@pytest.mark.sqlite_only  # store files on disk
def test_first_writers_racing_make_one_store_and_lose_nothing(tmp_path):
    """Several processes make the first write to the same store at once (remember and
    ingest): each succeeds, exactly one says it created the store, and every write is in it."""
    for round_ in range(3):
        target = tmp_path / f"r{round_}" / "deep" / "ledger.db"
        cmds = [[LEDGER_BIN, "remember", f"Fact {i} of round {round_}: staging needs VPN {i}", "--cluster", "proc",
                 "--db", str(target)] for i in range(3)]
        cmds.append([LEDGER_BIN, "ingest", "--text", f"Runbook of round {round_}: rollbacks use the previous tag.",
                     "--cluster", "proc", "--db", str(target)])
        procs = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  stdin=subprocess.DEVNULL) for c in cmds]
        results = [(p.wait(timeout=120), p.stdout.read(), p.stderr.read()) for p in procs]
        for p in procs:
            p.stdout.close()
            p.stderr.close()
        assert all(rc == 0 for rc, _, _ in results), results
        assert sum("Created a new store" in err for _, _, err in results) == 1, results
        assert {n for n in os.listdir(target.parent)} <= {"ledger.db", "ledger.db-wal", "ledger.db-shm"}
        with Ledger.open(target) as led:
            texts = _texts(led)
        assert sorted(t.split(":")[0] for t in texts) == [*(f"Fact {i} of round {round_}" for i in range(3)),
                                                         f"Runbook of round {round_}"], texts


# ------------------------------------------------------------------ killed outright
@pytest.mark.sqlite_only
def test_a_first_write_killed_outright_is_swept_by_the_next(tmp_path):
    """SIGKILL cannot be caught: the temporary store stays, hidden beside the target,
    and never takes the store's name; the next first write there removes it."""
    f = _bulk(tmp_path / "bulk.jsonl", BULK)
    target = tmp_path / "k" / "ledger.db"
    p, master = _import_on_a_tty(f, target)
    rc, _ = _interrupt(p, master, signal.SIGKILL)
    assert rc == -signal.SIGKILL
    left = os.listdir(target.parent)
    assert "ledger.db" not in left and any(MARK in n for n in left), left
    rc, out, err = _run_remember(target)
    assert rc == 0 and "Created a new store" in err, err
    assert sorted(os.listdir(target.parent)) == ["ledger.db"], os.listdir(target.parent)


def _run_remember(target):
    p = subprocess.run([LEDGER_BIN, "remember", "Staging needs VPN", "--cluster", "proc", "--db", str(target)],
                       capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout, p.stderr
