"""An empty or blank id is a missing one, on every surface (fresh-user defects): the
library says which id is missing with an example and no surface's command; the CLI adds
where it lists them and names the command that was typed (``ledger link "" x`` named
``ledger show``); the web API answers 400 with the field, not "No source ." or a CLI
command. Real store files, the real CLI, the real Starlette app."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from fakes.hooks import LEDGER_BIN

from ledger.errors import InvalidInput
from ledger.service import Ledger

pytest.importorskip("starlette")
from starlette.testclient import TestClient  # noqa: E402

from ledger.web.server import create_app  # noqa: E402

BASE = "http://127.0.0.1:7444"


@pytest.fixture()
def db(store_target):
    p = store_target
    with Ledger.open(p) as led:
        led.remember("The valve timeout is 30 seconds", cluster="code", agent="t")
    return p


def _cli(db, *args):
    return subprocess.run([LEDGER_BIN, *args, "--db", str(db)], capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "NO_COLOR": "1", "HOME": os.environ["LEDGER_HOME"]})


@pytest.mark.parametrize("call,field", [
    (lambda led: led.get(""), "memory"),
    (lambda led: led.link("", "m_x", agent="t"), "memory"),
    (lambda led: led.forget(["  "], agent="t"), "memory"),
    (lambda led: led.source_detail(" "), "source"),
    (lambda led: led.drop_source(""), "source"),
    (lambda led: led.resolve("", "a"), "conflict"),
    (lambda led: led.judge(" ", "unrelated", agent="t"), "candidate"),
])
def test_library_names_the_missing_id_and_no_command(db, call, field):
    with Ledger.open(db) as led, pytest.raises(InvalidInput) as info:
        call(led)
    e = info.value
    assert e.field == field and e.message.startswith(f"Which {field}? The {field} id is empty"), e.message
    assert "ledger " not in e.message and "`" not in e.message


@pytest.mark.parametrize("args,says", [
    (["link", "", "m_abc"], "`ledger link` links two memory ids"),  # the example from the report: it named `ledger show`
    (["link", "m_abc", " "], "`ledger link` links two memory ids"),
    (["show", ""], "`ledger search` lists ids"),
    (["forget", " "], "`ledger search` lists ids"),
])
def test_cli_names_the_command_typed(db, args, says):
    p = _cli(db, *args)
    assert p.returncode == 1 and says in p.stderr and "Traceback" not in p.stderr, p.stderr
    if args[0] != "show":
        assert "ledger show" not in p.stderr
    js = _cli(db, *args, "--json")
    assert json.loads(js.stderr.strip().splitlines()[-1])["kind"] == "invalid-input"


@pytest.mark.parametrize("method,url,body,field", [
    ("GET", "/api/memories/%20", None, "memory"),
    ("PATCH", "/api/memories/%20", {"text": "x y z"}, "memory"),
    ("POST", "/api/review/%20/keep", {}, "memory"),
    ("POST", "/api/memories/bulk", {"op": "pin", "ids": [""]}, "memory"),
    ("GET", "/api/sources/%20", None, "source"),
    ("DELETE", "/api/sources/%20", None, "source"),
    ("POST", "/api/sources/%20/trust", {"trust": 0.5}, "source"),
    ("POST", "/api/conflicts/%20/resolve", {"resolution": "a"}, "conflict"),
])
def test_web_api_answers_400_naming_the_missing_id(db, method, url, body, field):
    with TestClient(create_app(str(db)), base_url=BASE, headers={"origin": BASE}) as c:
        r = c.request(method, url, content=None if body is None else json.dumps(body),
                      headers={"content-type": "application/json"})
    js = r.json()
    assert r.status_code == 400 and js["kind"] == "invalid-input" and js["field"] == field, (r.status_code, js)
    assert js["error"].startswith(f"Which {field}?") and "ledger " not in js["error"], js
