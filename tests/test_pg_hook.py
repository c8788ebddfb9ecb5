"""The hook on a shared PostgreSQL store (issue 20): it imports psycopg only then, it
fails open when the database is out of reach, and an observation made during a network
failure waits in this machine's spool until the database is reachable again.

The network failure is real: the hook reaches PostgreSQL through a TCP relay on
127.0.0.1 that the test cuts (closing its listening socket and every relayed
connection) and restores."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import psycopg
import pytest
from fakes.hooks import LEDGER_BIN, post_bash, pre_bash, pre_read, wait_drained

from ledger.watcher import spool as S


class Relay:
    """A TCP relay from a local port to ``target`` that can be cut and restored."""

    def __init__(self, target: tuple[str, int]):
        self.target = target
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        self.port = probe.getsockname()[1]
        probe.close()
        self._conns: list[socket.socket] = []
        self._srv: socket.socket | None = None

    def up(self) -> None:
        srv = socket.socket()
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind(("127.0.0.1", self.port))
        srv.listen(16)
        self._srv = srv
        threading.Thread(target=self._accept, args=(srv,), daemon=True).start()

    def down(self) -> None:
        if self._srv is not None:
            try:
                self._srv.shutdown(socket.SHUT_RDWR)  # wakes the accept() (close alone would not)
            except OSError:
                pass
            self._srv.close()
            self._srv = None
        for c in self._conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
                c.close()
            except OSError:
                pass
        self._conns.clear()

    def _accept(self, srv: socket.socket) -> None:
        while True:
            try:
                a, _ = srv.accept()
            except OSError:
                return
            b = socket.create_connection(self.target)
            self._conns += [a, b]
            for x, y in ((a, b), (b, a)):
                threading.Thread(target=self._pipe, args=(x, y), daemon=True).start()

    @staticmethod
    def _pipe(x: socket.socket, y: socket.socket) -> None:
        try:
            while data := x.recv(65536):
                y.sendall(data)
        except OSError:
            pass
        finally:
            for s in (x, y):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


@pytest.fixture
def relayed(pg_url):
    m = re.match(r"postgresql://([^@]+)@([^:/]+):(\d+)(/.*)", pg_url)
    assert m, pg_url
    relay = Relay((m.group(2), int(m.group(3))))
    relay.up()
    try:
        yield relay, f"postgresql://{m.group(1)}@127.0.0.1:{relay.port}{m.group(4)}", pg_url
    finally:
        relay.down()


def _hook(payload: dict, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([LEDGER_BIN, "hook", "claude-code", payload["hook_event_name"]], input=json.dumps(payload).encode(),
                          capture_output=True, env={**os.environ, **env}, timeout=60)


def _observations(url: str) -> dict[str, str]:
    with psycopg.connect(url) as c:
        return dict(c.execute("SELECT tool_use_id, output FROM observations ORDER BY id").fetchall())


def _steps(url: str) -> dict[str, int]:
    with psycopg.connect(url) as c:
        return dict(c.execute("SELECT tool_use_id, step FROM observations WHERE session = 'claude-code:s1'").fetchall())


def _wait_gone(spool: str, timeout: float = 60) -> None:
    """Wait until no drain process holds the spool (it exited, drained or not)."""
    deadline = time.monotonic() + timeout
    while S.drainer_running(spool):
        assert time.monotonic() < deadline, "the drain process did not exit"
        time.sleep(0.05)


def test_observations_made_while_the_database_is_unreachable_arrive_once_it_is_back(relayed, tmp_path, monkeypatch):
    relay, url, direct = relayed
    home = tmp_path / "home"
    monkeypatch.setenv("LEDGER_HOME", str(home))  # where this test looks for the spool too
    env = {"LEDGER_DB": url, "LEDGER_HOME": str(home)}
    spool = S.spool_dir(url)
    proj = tmp_path / "proj"
    proj.mkdir()
    p = _hook(pre_read(proj / "a.txt", cwd=proj), env)  # creates the store through the relay
    assert p.returncode == 0 and p.stdout == b""
    p = _hook(post_bash("make test", stdout="ok 1", cwd=proj, tool_use_id="toolu_1"), env)
    assert p.returncode == 0 and p.stdout == b""
    wait_drained(url)  # the hook spooled it; the drain process it started stored it
    assert _observations(direct) == {"toolu_1": "ok 1"}

    relay.down()  # the network to the database fails
    for i in (2, 3, 4):
        p = _hook(post_bash(f"make test {i}", stdout=f"ok {i}", cwd=proj, tool_use_id=f"toolu_{i}"), env)
        assert p.returncode == 0 and p.stdout == b"", p.stderr  # fails open: the agent goes on
    _wait_gone(spool)  # the drain processes tried, and gave up
    p = _hook(pre_read(proj / "a.txt", cwd=proj), env)
    assert p.returncode == 0 and p.stdout == b""
    assert spool.startswith(str(home / "spool")) and S.has_work(spool)
    assert _observations(direct) == {"toolu_1": "ok 1"}  # nothing reached it meanwhile
    log = (home / "hook.log").read_text()
    assert "wait in the spool" in log and "Cannot reach the PostgreSQL store" in log

    relay.up()  # back: the next hook that connects drains the spool first, in order
    p = _hook(pre_read(proj / "a.txt", cwd=proj, session="later"), env)
    assert p.returncode == 0 and p.stdout == b""
    assert not S.has_work(spool)
    assert _observations(direct) == {f"toolu_{i}": f"ok {i}" for i in (1, 2, 3, 4)}
    assert _steps(direct) == {f"toolu_{i}": i for i in (1, 2, 3, 4)}
    with psycopg.connect(direct) as c:
        assert c.execute("SELECT steps FROM watch_sessions WHERE key = 'claude-code:s1'").fetchone()[0] == 4


def test_a_connection_lost_while_draining_loses_nothing_and_doubles_nothing(relayed, tmp_path, monkeypatch):
    """The drain process lingers with its connection open; the network fails under it.
    The next drain finds its connection dead, gives up, and the observations wait; once
    the network is back a later hook's drain process stores each exactly once, in order."""
    relay, url, direct = relayed
    home = tmp_path / "home"
    monkeypatch.setenv("LEDGER_HOME", str(home))
    env = {"LEDGER_DB": url, "LEDGER_HOME": str(home)}
    spool = S.spool_dir(url)
    proj = tmp_path / "proj"
    proj.mkdir()
    assert _hook(pre_read(proj / "a.txt", cwd=proj), env).returncode == 0  # creates the store
    assert _hook(post_bash("make a", stdout="a", cwd=proj, tool_use_id="toolu_a"), env).returncode == 0
    deadline = time.monotonic() + 60
    while _observations(direct) != {"toolu_a": "a"}:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert S.drainer_running(spool)  # stored, and lingering with its connection for more

    relay.down()  # cuts the lingering drain process's connection too
    assert _hook(post_bash("make b", stdout="b", cwd=proj, tool_use_id="toolu_b"), env).returncode == 0
    _wait_gone(spool)
    assert S.has_work(spool) and _observations(direct) == {"toolu_a": "a"}
    assert "wait in the spool" in (home / "hook.log").read_text()

    relay.up()
    assert _hook(post_bash("make c", stdout="c", cwd=proj, tool_use_id="toolu_c"), env).returncode == 0
    wait_drained(url)
    assert _observations(direct) == {"toolu_a": "a", "toolu_b": "b", "toolu_c": "c"}
    assert _steps(direct) == {"toolu_a": 1, "toolu_b": 2, "toolu_c": 3}


def test_a_finished_tool_call_neither_imports_psycopg_nor_connects(pg_url, tmp_path, monkeypatch):
    """On a PostgreSQL store a PostToolUse, and a PreToolUse that cannot touch a file
    with facts, answer without the driver: the observation is spooled and the drain
    process is asked for."""
    proj = tmp_path / "proj"
    proj.mkdir()
    code = (
        "import json, sys\n"
        "from ledger.harness.runner import handle_payload\n"
        "asked = []\n"
        "for p in json.loads(sys.stdin.read()):\n"
        "    out = handle_payload('claude-code', json.dumps(p).encode(), None, db=sys.argv[1], drainer=asked.append)\n"
        "    assert out == '', out\n"
        "print(json.dumps({'psycopg': 'psycopg' in sys.modules, 'asked': len(asked)}))\n"
    )
    payloads = [pre_bash("ls -la", cwd=proj), post_bash("ls -la", stdout="x", cwd=proj, tool_use_id="toolu_1"),
                pre_bash("make", cwd=proj), post_bash("make", stdout="ok", cwd=proj, tool_use_id="toolu_2")]
    monkeypatch.setenv("LEDGER_HOME", str(tmp_path / "home"))
    p = subprocess.run([sys.executable, "-c", code, pg_url], input=json.dumps(payloads).encode(), capture_output=True,
                       env=dict(os.environ), timeout=60)
    assert p.returncode == 0, p.stderr.decode()
    assert json.loads(p.stdout) == {"psycopg": False, "asked": 2}
    lines = (Path(S.spool_dir(pg_url)) / S.PENDING).read_text().splitlines()
    assert [json.loads(x)["tool_use_id"] for x in lines] == ["toolu_1", "toolu_2"]


def test_the_spool_of_a_url_never_holds_its_password(tmp_path, monkeypatch):
    monkeypatch.setenv("LEDGER_HOME", str(tmp_path))
    a = S.spool_dir("postgresql://team:one@db.lan/ledger")
    assert a == S.spool_dir("postgresql://team:two@db.lan/ledger")  # one spool per store, whatever the password
    assert a != S.spool_dir("postgresql://team@db.lan/other") and "one" not in a
