"""``ledger serve`` beyond 127.0.0.1: the printed URL always works, the Host check stays
on with an explicit allow-list, and peers that are not loopback need the printed token
(issue: a wildcard bind used to switch the Host check off, and ``--host 127.0.0.2``
answered 403 on its own URL)."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
import warnings
from pathlib import Path

import httpx
import pytest

pytest.importorskip("starlette")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient  # noqa: E402

from ledger.service import Ledger  # noqa: E402
from ledger.web import security  # noqa: E402
from ledger.web.server import create_app  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient` is deprecated")

LEDGER = str(Path(sys.executable).with_name("ledger"))
TOKEN = "t0ken-for-tests-0123456789abcdefghijklmnopq"
REMOTE_PEER = ("192.0.2.77", 40000)  # TEST-NET-1: never loopback


@pytest.fixture()
def db(store_target):
    path = store_target
    with Ledger.open(path) as led:
        led.remember("The VPN gateway is vpn.example.org", cluster="proc", agent="claude")
    return path


def _primary_ip() -> str | None:
    """A non-loopback IPv4 address of this machine, if it has one."""
    try:
        out = subprocess.run(["hostname", "-I"], capture_output=True, text=True, timeout=5).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return None
    return next((a for a in out if "." in a and not a.startswith("127.")), None)


class Server:
    """A real ``ledger serve`` child: its banner lines and its port."""

    def __init__(self, db: Path, *args: str):
        self.proc = subprocess.Popen([LEDGER, "serve", "--db", str(db), "--port", "0", *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines = [self.proc.stdout.readline().rstrip("\n")]
        m = re.match(r"● LEDGER running   (http://\S+:(\d+)/)$", self.lines[0])
        assert m, (self.lines, self.proc.stderr.read() if self.proc.poll() is not None else "")
        self.url, self.port = m.group(1), int(m.group(2))
        self.lines.append(self.proc.stdout.readline().rstrip("\n"))
        self.lines.append(self.proc.stdout.readline().rstrip("\n"))
        if "⚠" in self.lines[-1]:
            for _ in range(3):
                self.lines.append(self.proc.stdout.readline().rstrip("\n"))
        self._wait()

    def _wait(self) -> None:
        for _ in range(100):
            try:
                with socket.create_connection(("127.0.0.1" if "0.0.0.0" in self.url else re.sub(r"^http://\[?|\]?:\d+/$", "", self.url), self.port), 1):
                    return
            except OSError:
                time.sleep(0.05)

    @property
    def token(self) -> str:
        line = next(x for x in self.lines if "Access token" in x)
        return line.rsplit(" ", 1)[1]

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.communicate(timeout=10)


@pytest.mark.parametrize("host", ["127.0.0.2", "127.0.0.53", "localhost", "::1"])
def test_the_printed_url_is_accepted_for_every_loopback_bind(db, host):
    if host == "::1" and not socket.has_ipv6:
        pytest.skip("no IPv6 on this machine")
    try:
        srv = Server(db, "--host", host)
    except AssertionError:
        if host == "::1":
            pytest.skip("cannot bind ::1 here")
        raise
    try:
        r = httpx.get(srv.url + "health", timeout=5)
        assert r.status_code == 200, (srv.url, r.text)
        assert r.json()["memories"] == 1
        assert "Bound to loopback" in srv.lines[2]
        # Another name for the same address is still refused: the Host check is on.
        assert httpx.get(srv.url + "health", headers={"host": f"rebind.example:{srv.port}"}).status_code == 403
    finally:
        srv.stop()


def test_wildcard_bind_keeps_the_host_check_and_needs_the_token(db):
    ip = _primary_ip()
    srv = Server(db, "--host", "0.0.0.0", "--allow-remote", "--allow-host", "box.lan", "--allow-host", "ledger.internal")
    try:
        banner = "\n".join(srv.lines)
        assert "every memory, source and conflict" in banner and "unencrypted" in banner
        assert "box.lan" in banner and "ledger.internal" in banner and "--allow-host" in banner
        token = srv.token
        assert len(token) >= 40
        # Loopback peers need no token; the allow-listed names are served.
        assert httpx.get(f"http://127.0.0.1:{srv.port}/health").status_code == 200
        assert httpx.get(f"http://127.0.0.1:{srv.port}/health", headers={"host": f"box.lan:{srv.port}"}).status_code == 200
        # A name nobody allowed: refused even with the token (DNS rebinding).
        r = httpx.get(f"http://127.0.0.1:{srv.port}/health", headers={"host": f"evil.example:{srv.port}",
                                                                      "authorization": f"Bearer {token}"})
        assert r.status_code == 403 and r.json()["kind"] == "forbidden-host"
        if ip is None:
            pytest.skip("this machine has no non-loopback address to test remote peers from")
        remote = f"http://{ip}:{srv.port}"
        r = httpx.get(remote + "/api/stats")
        assert r.status_code == 401 and r.json()["kind"] == "token-required"
        assert httpx.get(remote + "/api/stats", headers={"authorization": "Bearer wrong"}).status_code == 401
        assert httpx.get(remote + "/api/stats", headers={"authorization": f"Bearer {token}"}).status_code == 200
        # The one-time ?token= sets a cookie and leaves the address bar.
        r = httpx.get(remote + f"/?token={token}&view=review", follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"] == "/?view=review"
        cookie = r.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and token not in cookie
        with httpx.Client(base_url=remote, cookies=r.cookies) as browser:
            assert browser.get("/api/stats").status_code == 200
            # Origin rules still hold for a cookie-carrying write from another site.
            assert browser.post("/api/clusters", json={"label": "x"}, headers={"origin": "http://evil.example"}).status_code == 403
            assert browser.post("/api/clusters", json={"label": "Remote"}, headers={"origin": remote}).status_code == 200
        # CSP is on the token-refusal answers too.
        assert "frame-ancestors 'none'" in httpx.get(remote + "/").headers["content-security-policy"]
    finally:
        srv.stop()


def test_allow_host_refuses_what_is_not_a_name(db):
    out = subprocess.run([LEDGER, "serve", "--db", str(db), "--port", "0", "--allow-host", "http://box.lan:80"],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode != 0 and "--allow-host takes a bare host name" in out.stderr and "Traceback" not in out.stderr


def test_token_guard_in_process(db):
    """The same rules through the ASGI app, with a remote peer address."""
    app = create_app(str(db), ip_literals=True, token=TOKEN, extra_hosts=("box.lan",))
    with TestClient(app, base_url="http://box.lan", client=REMOTE_PEER, follow_redirects=False) as c:
        assert c.get("/health").status_code == 401
        assert c.get("/health", headers={"authorization": "Bearer " + TOKEN[:-1]}).status_code == 401
        assert c.get("/health", headers={"authorization": "bearer " + TOKEN}).status_code == 200
        assert c.get("/health", headers={"cookie": "ledger_session=forged"}).status_code == 401
        r = c.get("/health?token=" + TOKEN)
        assert r.status_code == 303 and r.headers["location"] == "/health"
        c.cookies.clear()
        assert c.get("/health", headers={"cookie": f"ledger_session={security.session_cookie_value(TOKEN)}"}).status_code == 200
        # A path that looks like a scheme-relative URL never redirects off-site.
        c.cookies.clear()
        r = c.get("http://box.lan//evil.example/x?token=" + TOKEN)
        assert r.status_code == 303, (r.request.url, r.text)
        assert r.headers["location"].startswith("/") and not r.headers["location"].startswith("//")
    with TestClient(app, base_url="http://127.0.0.1", client=("127.0.0.1", 5000)) as local:
        assert local.get("/health").status_code == 200  # loopback peers need no token


def test_remote_bind_without_the_flag_still_refused(db):
    out = subprocess.run([LEDGER, "serve", "--db", str(db), "--port", "0", "--host", "0.0.0.0"],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode != 0 and "--allow-remote" in out.stderr


@pytest.mark.parametrize("args,has_token", [([], False), (["--host", "127.0.0.2"], False),
                                             (["--host", "0.0.0.0", "--allow-remote"], True)])
def test_serve_json_prints_one_json_line_once_listening(db, args, has_token):
    import json

    proc = subprocess.Popen([LEDGER, "serve", "--db", str(db), "--port", "0", "--json", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stdout.readline()
        line = json.loads(first)  # no banner before it
        assert set(line) == {"url", "store", "memories", "pending"} | ({"token"} if has_token else set())
        assert line["store"] == str(db) and line["memories"] == 1
        url = line["url"].replace("0.0.0.0", "127.0.0.1")
        r = httpx.get(url + "health", timeout=5)  # listening when the line is out
        assert r.status_code == 200
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=10)
    assert "LEDGER running" not in first + out
