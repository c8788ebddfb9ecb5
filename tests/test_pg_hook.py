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
import threading

import psycopg
import pytest
from fakes.hooks import LEDGER_BIN, post_bash, pre_read

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


def test_observations_made_while_the_database_is_unreachable_arrive_once_it_is_back(relayed, tmp_path, monkeypatch):
    relay, url, direct = relayed
    home = tmp_path / "home"
    monkeypatch.setenv("LEDGER_HOME", str(home))  # where this test looks for the spool too
    env = {"LEDGER_DB": url, "LEDGER_HOME": str(home)}
    proj = tmp_path / "proj"
    proj.mkdir()
    p = _hook(pre_read(proj / "a.txt", cwd=proj), env)  # creates the store through the relay
    assert p.returncode == 0 and p.stdout == b""
    p = _hook(post_bash("make test", stdout="ok 1", cwd=proj, tool_use_id="toolu_1"), env)
    assert p.returncode == 0 and p.stdout == b""
    assert _observations(direct) == {"toolu_1": "ok 1"}

    relay.down()  # the network to the database fails
    for i in (2, 3, 4):
        p = _hook(post_bash(f"make test {i}", stdout=f"ok {i}", cwd=proj, tool_use_id=f"toolu_{i}"), env)
        assert p.returncode == 0 and p.stdout == b"", p.stderr  # fails open: the agent goes on
    p = _hook(pre_read(proj / "a.txt", cwd=proj), env)
    assert p.returncode == 0 and p.stdout == b""
    spool = S.spool_dir(url)
    assert spool.startswith(str(home / "spool")) and S.has_work(spool)
    assert _observations(direct) == {"toolu_1": "ok 1"}  # nothing reached it meanwhile
    assert "spooled" in (home / "hook.log").read_text()

    relay.up()  # back: the next hook drains the spool first
    p = _hook(pre_read(proj / "a.txt", cwd=proj, session="later"), env)
    assert p.returncode == 0 and p.stdout == b""
    assert not S.has_work(spool)
    assert _observations(direct) == {f"toolu_{i}": f"ok {i}" for i in (1, 2, 3, 4)}
    with psycopg.connect(direct) as c:
        assert c.execute("SELECT steps FROM watch_sessions WHERE key = 'claude-code:s1'").fetchone()[0] == 4


def test_the_spool_of_a_url_never_holds_its_password(tmp_path, monkeypatch):
    monkeypatch.setenv("LEDGER_HOME", str(tmp_path))
    a = S.spool_dir("postgresql://team:one@db.lan/ledger")
    assert a == S.spool_dir("postgresql://team:two@db.lan/ledger")  # one spool per store, whatever the password
    assert a != S.spool_dir("postgresql://team@db.lan/other") and "one" not in a
