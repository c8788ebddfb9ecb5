"""What people see is what is stored: control characters, bidirectional overrides
included, are shown as the same visible stand-ins in the web UI as in the CLI
(``termfmt.visible``) and the review TUI.

Found by a fresh-user pass: ``Production DB port is \\u202e0806\\u202c and staging is
5432`` read "Production DB port is 6080" on the web review card."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from ledger.termfmt import BIDI_CONTROLS, json_visible, visible

NODE = shutil.which("node")
JS = Path(__file__).resolve().parent.parent / "src" / "ledger" / "web" / "static" / "js"
CHROMIUM = "/usr/bin/chromium"

CLAIM = "Production DB port is \u202e0806\u202c and staging is 5432"
SHOWN = "Production DB port is \ufffd0806\ufffd and staging is 5432"
#: One of each bidi control, and an escape sequence, in one claim.
MIXED = "a\u202ab\u202bc\u202dd\u2066e\u2067f\u2068g\u2069h\u200ei\u200fj\u061ck \x1b[31mred\x1b[0m"


def test_every_bidi_control_is_shown_as_a_stand_in_by_the_cli_rule():
    for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C):
        assert c in BIDI_CONTROLS
        assert visible(f"x{chr(c)}y") == "x\ufffdy"
        assert json_visible(json.dumps(chr(c), ensure_ascii=False)) == json.dumps(chr(c))
    assert visible(CLAIM) == SHOWN
    assert visible("\u200b\u00ad") == "\u200b\u00ad"  # ZWSP and soft hyphen reorder nothing: not controls


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_the_web_ui_shows_every_character_as_the_cli_does():
    text = "".join(chr(c) for c in range(0x10000) if not 0xD800 <= c <= 0xDFFF)
    code = textwrap.dedent("""
        import { visible } from '@JS@/dom.js';
        import fs from 'node:fs';
        const text = JSON.parse(fs.readFileSync(0, 'utf8'));
        console.log(JSON.stringify(visible(text)));
    """).replace("@JS@", JS.as_uri())
    p = subprocess.run([NODE, "--input-type=module", "-e", code], input=json.dumps(text), capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout)
    want = visible(text)
    assert len(got) == len(want)
    diff = [(hex(ord(a)), b, c) for a, b, c in zip(text, got, want) if b != c]
    assert diff == []


def test_the_cli_shows_the_claim_as_stored_order(cli):
    rc, out, err = cli("remember", CLAIM, "--cluster", "code", "--json")
    mid = json.loads(out)["id"]
    rc, out, err = cli("show", mid)
    assert rc == 0 and SHOWN in out and "\u202e" not in out
    rc, out, err = cli("show", mid, "--json")
    assert json.loads(out)["text"] == CLAIM  # --json keeps the text exact
    rc, out, err = cli("review", "--plain")
    assert "\u202e" not in out and "\ufffd0806\ufffd" in out


# ---------------------------------------------------------------- the browser
needs_browser = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} not found: apt-get install -y chromium")


@needs_browser
def test_review_browse_and_inspector_show_bidi_controls_visibly(store_target):
    pytest.importorskip("playwright")
    pytest.importorskip("starlette")
    from playwright.sync_api import expect, sync_playwright
    from test_web_e2e import ARGS, Server

    from ledger.service import Ledger

    with Ledger.open(store_target) as led:
        mid = led.remember(CLAIM, cluster="code", agent="claude").memory.id
        mixed = led.remember(MIXED, cluster="code", agent="claude").memory.id
    srv = Server(store_target)
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(srv.url + "#/review")
            card = page.locator(f'.card[data-id="{mid}"] .card-text')
            expect(card).to_have_text(SHOWN)
            marks = card.locator("span.ctl")
            assert [marks.nth(i).get_attribute("title") for i in range(marks.count())] == ["U+202E", "U+202C"]
            expect(page.locator(f'.card[data-id="{mixed}"] .card-text')).to_have_text(visible(MIXED))
            body = page.evaluate("document.body.textContent")
            assert not any(chr(c) in body for c in BIDI_CONTROLS) and "\x1b" not in body

            page.goto(srv.url + "#/browse")
            row = page.locator(f'tbody tr[data-id="{mid}"]')
            expect(row.locator(".cell-text")).to_have_text(SHOWN)
            row.click()
            expect(page.locator("#inspector .insp-text")).to_have_text(SHOWN)
            # Editing starts from the stored text, so saving rewrites nothing.
            page.locator("#inspector .insp-text").dblclick()
            ta = page.locator("#inspector textarea.edit")
            if ta.count():
                assert ta.input_value() == CLAIM
            assert errors == []
            browser.close()
    finally:
        srv.stop()
    with Ledger.open(store_target) as led:
        assert led.get(mid).text == CLAIM


def test_the_review_tui_card_shows_the_stand_ins(store_target):
    pytest.importorskip("textual")
    from ledger.service import Ledger
    from ledger.tui.app import claim_card

    with Ledger.open(store_target) as led:
        mid = led.remember(CLAIM, cluster="code", agent="claude").memory.id
        m = led.get(mid)
    plain = claim_card(m, m.created_at).plain
    assert SHOWN in plain and "\u202e" not in plain


#: A chunk with each kind of character the screens show by a stand-in (CR, NEL, a bidi
#: override) and the whitespace a one-line row lays out as a space (newline, tab, runs).
CHUNK = "one\rtwo\x85three \u202e0806\u202c\nline two\tend  \x1b[31mred"


@needs_browser
def test_the_sources_screen_shows_a_chunk_as_the_other_screens_do(store_target):
    """The example: the Sources screen collapsed ``\\s+`` to a space before the text
    reached h(), so a CR (and VT, FF) in a chunk read as a space there and as ``␍``
    everywhere else. Now the row shows what the CLI's one-line rule shows
    (``termfmt.one_line``): stand-ins for the controls, one space for a line break."""
    pytest.importorskip("playwright")
    pytest.importorskip("starlette")
    from playwright.sync_api import expect, sync_playwright
    from test_web_e2e import ARGS, Server

    from ledger.service import Ledger
    from ledger.termfmt import one_line

    with Ledger.open(store_target) as led:
        res = led.ingest_chunks("notes\u200f.md", [CHUNK, "second chunk\rwith a CR"], cluster="code", agent="claude")
        sid = res.source_id
    srv = Server(store_target)
    try:
        # The API sends the text exact (JSON escapes CR and NEL); only the page shows stand-ins.
        detail = srv.api(f"/api/sources/{sid}", params={"preview": 10})
        assert [c["text"] for c in detail["chunkPreview"]] == [CHUNK, "second chunk\rwith a CR"]
        assert srv.api("/api/sources")["sources"][0]["filename"] == "notes\u200f.md"
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(srv.url + "#/sources")
            row = page.locator(f'.source[data-id="{sid}"]')
            expect(row.locator(".fname")).to_have_text("notes\ufffd.md")
            row.locator(".expander").click()
            chunks = row.locator(".chunk-text")
            expect(chunks).to_have_count(2)
            assert chunks.nth(0).inner_text() == one_line(CHUNK)
            assert chunks.nth(1).inner_text() == "second chunk␍with a CR"
            titles = [t.get_attribute("title") for t in chunks.nth(0).locator("span.ctl").all()]
            assert titles == ["U+000D", "U+0085", "U+202E", "U+202C", "U+001B"]
            # The inspector, opened from the row, shows the same stand-ins.
            chunks.nth(1).click()
            expect(page.locator("#inspector .insp-text")).to_have_text("second chunk␍with a CR")
            body = page.evaluate("document.body.textContent")
            assert not any(chr(c) in body for c in BIDI_CONTROLS) and "\r" not in body and "\x85" not in body
            assert errors == []
            browser.close()
    finally:
        srv.stop()


def test_no_screen_collapses_stored_text_itself():
    """The kind of the Sources bug: a screen's own whitespace collapse runs before h()
    and turns CR, VT and FF into spaces. One-line rows leave layout to CSS."""
    hits = [f"{f.name}:{n}" for f in sorted(JS.glob("*.js")) for n, line in enumerate(f.read_text().splitlines(), 1)
            if ".replace(/\\s+/g" in line]
    assert hits == []
