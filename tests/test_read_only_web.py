"""``ledger serve`` on a store it cannot write says so before anyone clicks.

Issue: on a read-only store the web UI gave no notice; edit, drop, pin, resolve and the
trust slider were all live and failed only once used. Now ``/api/meta`` and
``/api/stats`` carry ``readOnly`` (why, and the notice), the UI shows the notice under
its top bar and disables every write control with a tooltip saying why and what to do,
and every write endpoint answers 403 with ``reason: "read-only"`` and a message saying
the store is read-only and what to do (never a 500; 403 rather than 503: it will not pass
by itself, so it must not be retried).

A real ``ledger serve`` child in a mount namespace where the store's folder is read-only
(tests/readonly.py), driven over HTTP and by Debian's Chromium through Playwright. On
PostgreSQL: ``ledger serve`` as a role granted only ``SELECT``."""

from __future__ import annotations

import hashlib
import os
import re

import httpx
import pytest
from conftest import select_only_role
from liveserve import LiveServe
from readonly import require_ro_mounts, ro_prefix

from ledger.service import Ledger

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run",
        "--disable-sync"]


def _digest(folder) -> dict:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


def _fill(target) -> dict:
    ids = {}
    with Ledger.open(target) as led:
        ids["make"] = led.remember("The build uses make, not ninja", cluster="code", agent="alice").memory.id
        ids["other"] = led.remember("Deploys go out on Tuesdays", cluster="proc", agent="alice").memory.id
        led.remember("CI runs on Python 3.11", cluster="code", agent="alice")
        led.remember("CI runs on Python 3.12", cluster="code", agent="bob")
        cand = led.candidates(5)[0]
        ids["candidate"] = cand.id
        led.judge(cand.id, "conflict", agent="bob")
        ids["conflict"] = led.review_queue(10)["conflicts"][0].id
        led.remember("The staging box is called tern", cluster="projects", agent="carol")
        ids["pending"] = next(m.id for m in led.review_queue(50)["claims"] if "staging" in m.text)
        ids["source"] = led.ingest_chunks("notes.md", ["# Notes\n\nThe build uses make."], cluster="code",
                                          agent="alice").source_id
    return ids


@pytest.fixture()
def ro_store(tmp_path):
    """``(db, ids)``: a filled SQLite store in its own folder (mounted read-only by the
    tests), closed cleanly so no -wal or -shm file is left beside it."""
    require_ro_mounts()
    db = tmp_path / "store" / "ledger.db"
    ids = _fill(db)
    assert not (db.parent / "ledger.db-wal").exists()
    return db, ids


def _writes(srv, ids) -> dict:
    """Every write endpoint of the API, once, as the UI sends it."""
    u, o = srv.url, srv.origin

    def post(path, body):
        return httpx.post(u + path, json=body, headers=o, timeout=30)

    return {
        "add cluster": post("api/clusters", {"label": "ops"}),
        "edit": httpx.patch(u + f"api/memories/{ids['make']}", json={"text": "The build uses ninja"}, headers=o, timeout=30),
        "move": httpx.patch(u + f"api/memories/{ids['make']}", json={"cluster": "proc"}, headers=o, timeout=30),
        **{f"bulk {op}": post("api/memories/bulk", {"op": op, "ids": [ids["make"], ids["other"]]})
           for op in ("pin", "unpin", "archive", "unarchive", "merge", "drop")},
        **{f"review {a}": post(f"api/review/{ids['pending']}/{a}", {"text": "The staging box is tern"} if a == "edit" else {})
           for a in ("keep", "pin", "drop", "edit")},
        "resolve": post(f"api/conflicts/{ids['conflict']}/resolve", {"resolution": "a"}),
        "trust": post(f"api/sources/{ids['source']}/trust", {"trust": 0.9}),
        "drop source": httpx.request("DELETE", u + f"api/sources/{ids['source']}", json={}, headers=o, timeout=30),
    }


def _refused_as_read_only(name: str, r: httpx.Response) -> None:
    assert r.status_code == 403, (name, r.status_code, r.text[:400])
    body = r.json()
    assert body["kind"] == "store-unavailable" and body["reason"] == "read-only", (name, body)
    assert "read-only" in body["error"] and "internal error" not in body["error"], (name, body)


@pytest.mark.sqlite_only  # a read-only mount of the store's folder: a SQLite file
def test_the_api_says_read_only_and_refuses_every_write_with_403(ro_store):
    db, ids = ro_store
    before = _digest(db.parent)
    with LiveServe(db, prefix=ro_prefix(db.parent)) as srv:
        meta = httpx.get(srv.url + "api/meta", timeout=30).json()
        stats = httpx.get(srv.url + "api/stats", timeout=30).json()
        writes = _writes(srv, ids)
        export = httpx.post(srv.url + "api/memories/bulk", json={"op": "export", "ids": [ids["make"]]}, headers=srv.origin,
                            timeout=30)
    ro = meta["readOnly"]
    assert "read-only file system" in ro["why"], ro
    assert "turned off" in ro["message"] and "restart ledger serve" in ro["message"], ro
    assert stats["readOnly"] == ro and stats["memories"] >= 4
    for name, r in writes.items():
        _refused_as_read_only(name, r)
        assert "make the store file and its folder writable" in r.json()["error"], (name, r.json())
        assert r.json()["error"].endswith("Then restart ledger serve."), (name, r.json())
    assert export.status_code == 200 and ids["make"] in export.text  # export of a selection is a read
    assert _digest(db.parent) == before


def test_a_writable_store_says_nothing_about_read_only(tmp_path, store_target):
    with Ledger.open(store_target) as led:
        led.remember("The build uses make", cluster="code", agent="alice")
    with LiveServe(store_target) as srv:
        assert httpx.get(srv.url + "api/meta", timeout=30).json()["readOnly"] is None
        assert httpx.get(srv.url + "api/stats", timeout=30).json()["readOnly"] is None


# ------------------------------------------------------------------ PostgreSQL
@pytest.fixture()
def pg_reader(engine, store_target, pg_server):
    """The store URL for a login role that may only read its schema, dropped after."""
    if engine != "postgresql":
        pytest.skip("a PostgreSQL role; the SQLite cases mount the store read-only")
    ids = _fill(store_target)
    with select_only_role(pg_server, store_target) as (url, schema, role):
        yield url, ids, schema, role


def test_a_read_only_role_is_refused_with_403_not_500(engine, pg_reader):
    url, ids, _schema, role = pg_reader
    with LiveServe(url) as srv:
        assert httpx.get(srv.url + "api/stats", timeout=30).json()["memories"] >= 4
        meta = httpx.get(srv.url + "api/meta", timeout=30).json()
        writes = _writes(srv, ids)
    assert srv.banner["readOnly"] == meta["readOnly"]["why"] == f"the database role {role} may not write the store's tables"
    assert "GRANT" in meta["readOnly"]["message"] and "reload this page" in meta["readOnly"]["message"]
    for name, r in writes.items():
        _refused_as_read_only(name, r)
        assert "GRANT INSERT, UPDATE, DELETE" in r.json()["error"], (name, r.json())


# ------------------------------------------------------------------ the UI
@pytest.fixture(scope="module")
def browser():
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} not found: apt-get install -y chromium")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.mark.sqlite_only  # a read-only mount of the store's folder: a SQLite file
def test_the_ui_shows_a_notice_and_turns_write_controls_off(ro_store, browser):
    from playwright.sync_api import expect

    db, ids = ro_store
    before = _digest(db.parent)
    with LiveServe(db, prefix=ro_prefix(db.parent)) as srv:
        ctx = browser.new_context(viewport={"width": 1440, "height": 900})
        page = ctx.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        requests = []
        page.on("request", lambda r: requests.append(r.method) if "/api/" in r.url else None)
        page.goto(srv.url + "#/review")
        notice = page.locator("#ro-notice")
        expect(page.locator("body.ready")).to_have_count(1)
        assert not errors, errors
        expect(notice).to_be_visible()
        expect(notice).to_contain_text("READ-ONLY")
        expect(notice).to_contain_text("read-only file system")
        expect(notice).to_contain_text("restart ledger serve")
        # Review: the claim's buttons are off, with the reason as their tooltip.
        card = page.locator(".card", has_text="staging box").first
        expect(card).to_be_visible()
        keep = card.get_by_role("button", name=re.compile("KEEP"))
        expect(keep).to_be_disabled()
        assert "read-only" in keep.get_attribute("title") and "restart ledger serve" in keep.get_attribute("title")
        # The keyboard shortcut is refused too, with the reason, and sends nothing.
        page.locator("body").press("a")
        expect(page.locator(".toast-error", has_text="read-only").last).to_be_visible()
        # Conflicts lane.
        page.locator("body").press("Tab")
        expect(page.locator(".card-conflict").get_by_role("button", name=re.compile("KEEP A")).first).to_be_disabled()
        # Browse: the inspector's PIN, EDIT, ARCHIVE, DROP and cluster select; the
        # selection bar's writes; EXPORT stays on.
        page.goto(srv.url + "#/browse")
        page.locator("#q").fill("build make")
        page.locator("#q").press("Enter")
        row = page.locator("tr", has_text="make, not ninja").first
        expect(row).to_be_visible()
        row.click()
        insp = page.locator("#inspector")
        expect(insp).to_be_visible()
        for name in ("PIN", "EDIT", "ARCHIVE", "DROP"):
            expect(insp.get_by_role("button", name=name, exact=True)).to_be_disabled()
        expect(insp.locator("select.sel")).to_be_disabled()
        # Sources: the trust slider and DROP.
        page.goto(srv.url + "#/sources")
        expect(page.locator("input.trust").first).to_be_disabled()
        expect(page.locator(".source .btn-danger").first).to_be_disabled()
        ctx.close()
    assert not errors, errors
    assert set(requests) <= {"GET"}, requests  # no write was even sent
    assert _digest(db.parent) == before


def test_the_ui_turns_writes_off_after_a_change_refused_as_read_only(engine, pg_reader, pg_server, browser):
    """PostgreSQL: a role whose write rights are taken away while the page is open is
    found out by its next write; the UI then shows the same notice and turns the write
    controls off."""
    import psycopg
    from playwright.sync_api import expect

    url, ids, schema, role = pg_reader

    def rights(verb: str) -> None:
        with psycopg.connect(pg_server, autocommit=True) as c:
            to = "TO" if verb == "GRANT" else "FROM"
            c.execute(f"{verb} INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {schema} {to} {role}")

    rights("GRANT")
    with LiveServe(url) as srv:
        ctx = browser.new_context(viewport={"width": 1440, "height": 900})
        page = ctx.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(srv.url + "#/review")
        card = page.locator(".card", has_text="staging box").first
        keep = card.get_by_role("button", name=re.compile("KEEP"))
        expect(keep).to_be_enabled()  # the role may write when the page loads
        expect(page.locator("#ro-notice")).to_be_hidden()
        rights("REVOKE")
        keep.click()
        expect(page.locator(".toast-error", has_text="read-only for this database role").last).to_be_visible()
        notice = page.locator("#ro-notice")
        expect(notice).to_be_visible()
        expect(notice).to_contain_text("GRANT")
        expect(page.locator(".card").first.get_by_role("button", name=re.compile("KEEP")).first).to_be_disabled()
        ctx.close()
    assert not errors, errors


def test_write_refusal_names_a_read_only_connection(engine, store_target):
    """``Store.write_refusal`` finds a PostgreSQL connection opened read-only without
    writing (a writable store: None on both engines)."""
    with Ledger.open(store_target) as led:
        led.remember("The build uses make", cluster="code", agent="alice")
        assert led.store.write_refusal() is None
    if engine == "postgresql":
        with Ledger.open(store_target, readonly=True) as led:
            assert led.store.write_refusal() == "the connection was opened read-only"
