"""The review TUI (issue 5): keys against a real store file, refresh under concurrent
writers, the plain dump, JSON and the formatting helpers.

App tests drive ``ReviewApp`` with Textual's pilot and check the database afterwards
through a *fresh* ``Ledger`` (a separate connection, as another process would see it).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from rich.console import Console

from ledger.clock import FixedClock, system_clock
from ledger.service import Ledger
from ledger.termfmt import age, bar, pct, strength_color, truncate
from ledger.tui.plain import plain_dump, queue_json

HOUR = 3_600_000
DAY = 24 * HOUR
SIZE = (110, 36)


# ---------------------------------------------------------------------- fixtures
@pytest.fixture
def store(store_target):
    """A store with three pending claims from two agents and one open conflict
    (a candidate proposed by the store, judged a conflict by an agent).

    Queue order (newest first): prefs, pytest, ci. Returns a dict of ids and the path.
    """
    path = store_target
    clock = FixedClock(system_clock() - 2 * DAY)
    with Ledger.open(path, clock=clock) as led:
        a = led.remember("Renews every 12 months", cluster="money", agent="claude", note="invoice.pdf").memory
        clock.advance(ms=60_000)
        w = led.remember("Renews every 24 months", cluster="money", agent="codex")
        assert w.proposed, "the store should propose the pair"
        cf = led.judge(w.proposed[0], "conflict", agent="codex", kind="value drift", detector=0.9, note="one is stale")
        clock.advance(ms=60_000)
        ci = led.remember("CI runs on Python 3.11", cluster="code", agent="claude", note="ci.yml").memory
        clock.advance(ms=60_000)
        py = led.remember("Tests run with pytest -q from the repo root", cluster="code", agent="codex").memory
        clock.advance(ms=60_000)
        pref = led.remember("The user prefers metric units", cluster="prefs", agent="claude").memory
    return {"path": path, "a": a.id, "b": w.memory.id, "conflict": cf, "ci": ci.id, "pytest": py.id, "prefs": pref.id}


async def until(pilot, condition, timeout: float = 5.0) -> None:
    """Pause the app until ``condition()`` holds (checked every 50 ms), at most
    ``timeout`` seconds; the caller's asserts then say what did not happen."""
    for _ in range(int(timeout / 0.05)):
        if condition():
            return
        await pilot.pause(0.05)


def fresh(path) -> Ledger:
    return Ledger.open(path)


def app_for(path, **kw):
    from ledger.tui.app import ReviewApp

    led = Ledger.open(path)
    kw.setdefault("refresh_seconds", 0)  # no timer unless a test asks for one
    return ReviewApp(led, **kw), led


def shown(app, selector: str) -> str:
    """The text a Static shows (rendered through Rich, so tables work too)."""
    content = app.query_one(selector).content
    console = Console(width=SIZE[0], record=True, file=open("/dev/null", "w"), color_system=None)
    console.print(content)
    return console.export_text()


# ---------------------------------------------------------------------- claims lane
@pytest.mark.asyncio
async def test_opens_on_claims_with_header_and_card(store):
    app, led = app_for(store["path"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.lane == "claims"
        assert [m.id for m in app.claims] == [store["prefs"], store["pytest"], store["ci"]]
        assert "What your agents learned" in shown(app, "#title")
        lanes = shown(app, "#lanes")
        assert "CLAIMS 3" in lanes and "CONFLICTS 1" in lanes
        assert "1 of 3   tab switches lane" in shown(app, "#pos")
        card = shown(app, "#card")
        assert "claude" in card and "preferences" in card and "The user prefers metric units" in card
        assert "████░░░░  51" in card  # 8-cell bar and 0-100 strength of a new claim
        assert "1d" in card  # age: 2 days minus a few minutes, floored (tests/test_ages.py)
    led.close()


@pytest.mark.asyncio
async def test_text_with_markup_characters_is_shown_verbatim(store_target, tmp_path):
    path = store_target
    text = "Config keys look like [tool.pytest] and [/bold] in pyproject"
    with Ledger.open(path) as led:
        led.remember(text, cluster="code", agent="claude", note="[red]not markup[/red]")
    app, led = app_for(path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        card = shown(app, "#card")
        assert text in card and "[red]not markup[/red]" in card
    led.close()


@pytest.mark.asyncio
@pytest.mark.parametrize("key", ["a", "p", "d"])
async def test_claim_keys_change_the_store(store, key):
    app, led = app_for(store["path"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.current_id() == store["prefs"]
        await pilot.press(key)
        await pilot.pause()
        # The acted-on claim left the lane; the cursor is on the next one.
        assert app.current_id() == store["pytest"]
        assert len(app.claims) == 2
        assert app.errors == []
    led.close()
    with fresh(store["path"]) as check:
        m = check.get(store["prefs"])
        if key == "a":
            assert m.reviewed_at is not None and not m.pinned and m.deleted_at is None
        elif key == "p":
            assert m.reviewed_at is not None and m.pinned and m.strength == pytest.approx(0.99)
        else:
            assert m.deleted_at is not None
        # Nothing else was touched.
        assert check.get(store["pytest"]).reviewed_at is None
        assert store["prefs"] not in [c.id for c in check.review_queue()["claims"]]


@pytest.mark.asyncio
async def test_edit_escape_cancels_without_change(store):
    app, led = app_for(store["path"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("e")
        assert app.editing == store["prefs"]
        assert app.query_one("#edit").value == "The user prefers metric units"
        # Keys typed while editing go into the input, not to the app's bindings.
        await pilot.press("end", "space", "d", "a", "q", "tab", "j")
        assert app.query_one("#edit").value == "The user prefers metric units daqj"
        assert app.lane == "claims" and app.is_running
        await pilot.press("escape")
        await pilot.pause()
        assert app.editing is None
        assert app.current_id() == store["prefs"]
        assert app.query_one("#edit").display is False
    led.close()
    with fresh(store["path"]) as check:
        m = check.get(store["prefs"])
        assert m.text == "The user prefers metric units"
        assert m.reviewed_at is None and m.deleted_at is None


@pytest.mark.asyncio
async def test_edit_enter_commits_new_text(store):
    app, led = app_for(store["path"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("j", "e")
        assert app.editing == store["pytest"]
        await pilot.press("end", "space", "v", "i", "a", "space", "u", "v")
        await pilot.press("enter")
        await pilot.pause()
        assert app.editing is None
        assert app.errors == []
        assert store["pytest"] not in [m.id for m in app.claims]
    led.close()
    with fresh(store["path"]) as check:
        m = check.get(store["pytest"])
        assert m.text == "Tests run with pytest -q from the repo root via uv"
        assert m.reviewed_at is not None
        assert check.search("uv", kind="claim").total == 1  # re-indexed


@pytest.mark.asyncio
async def test_edit_with_empty_text_cancels(store):
    app, led = app_for(store["path"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("e")
        app.query_one("#edit").value = "   "
        await pilot.press("enter")
        await pilot.pause()
        assert app.editing is None and app.errors == []
        assert app.current_id() == store["prefs"]
    led.close()
    with fresh(store["path"]) as check:
        assert check.get(store["prefs"]).reviewed_at is None


# ---------------------------------------------------------------------- navigation
@pytest.mark.asyncio
async def test_tab_switches_lane_and_jk_move(store):
    app, led = app_for(store["path"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("k")
        assert app.index == 0  # clamped at the top
        await pilot.press("j")
        assert app.current_id() == store["pytest"]
        assert "2 of 3" in shown(app, "#pos")
        await pilot.press("down")
        assert app.current_id() == store["ci"]
        await pilot.press("j")
        assert app.current_id() == store["ci"]  # clamped at the bottom
        await pilot.press("up")
        assert app.current_id() == store["pytest"]
        await pilot.press("tab")
        assert app.lane == "conflicts" and app.index == 0
        assert app.current_id() == store["conflict"]
        assert "1 of 1" in shown(app, "#pos")
        card = shown(app, "#card")
        assert "▲ value drift" in card and "finances" in card and "detector 90" in card
        assert "Renews every 12 months" in card and "Renews every 24 months" in card
        assert "███░░░  51" in card  # 6-cell bars on both sides
        assert "one is stale" in card
        # Claim keys do nothing in the conflicts lane, conflict keys nothing in claims.
        await pilot.press("a", "d", "p", "e")
        assert app.editing is None
        await pilot.press("tab")
        assert app.lane == "claims" and app.index == 0
        await pilot.press("1", "2", "b", "m", "n")
    led.close()
    with fresh(store["path"]) as check:
        assert check.conflict(store["conflict"]).status == "open"
        assert check.review_queue()["claimCount"] == 3


# ---------------------------------------------------------------------- conflicts lane
@pytest.mark.asyncio
@pytest.mark.parametrize("key", ["1", "2", "b", "m", "n"])
async def test_conflict_keys_resolve(store, key):
    app, led = app_for(store["path"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("tab")
        assert app.lane == "conflicts"
        await pilot.press(key)
        await pilot.pause()
        assert app.errors == []
        assert app.conflicts == []
        assert app.lane == "claims"  # the lane ran empty: switched to the other one
    led.close()
    with fresh(store["path"]) as check:
        c = check.conflict(store["conflict"])
        a, b = check.get(store["a"]), check.get(store["b"])
        if key == "1":
            assert (c.status, c.resolution) == ("resolved", "a")
            assert a.deleted_at is None and a.reviewed_at is not None and b.deleted_at is not None
        elif key == "2":
            assert (c.status, c.resolution) == ("resolved", "b")
            assert b.deleted_at is None and b.reviewed_at is not None and a.deleted_at is not None
        elif key == "b":
            assert (c.status, c.resolution) == ("resolved", "both")
            assert a.reviewed_at and b.reviewed_at and not a.deleted_at and not b.deleted_at
            assert store["b"] in [m.id for m in check.related(store["a"])]
        elif key == "m":
            assert (c.status, c.resolution) == ("resolved", "merge")
            assert a.text == "Renews every 24 months" and a.deleted_at is None and b.deleted_at is not None
        else:
            assert c.status == "dismissed"
            assert a.reviewed_at and b.reviewed_at and not a.deleted_at and not b.deleted_at


# ---------------------------------------------------------------------- empty lanes
@pytest.mark.asyncio
async def test_empty_queue_shows_queue_clear(store_target, tmp_path):
    path = store_target
    with Ledger.open(path) as led:
        m = led.remember("Kept already", cluster="code", agent="claude").memory
        led.review(m.id, "keep")
    app, led = app_for(path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.current() is None
        assert app.query_one("#clear").display is True
        assert app.query_one("#body").display is False
        text = shown(app, "#clear")
        assert "QUEUE CLEAR" in text
        assert "Your agents are writing straight through. 1 memory on this machine." in text
        await pilot.press("j", "tab", "a", "1")  # nothing to act on: no crash
        assert app.errors == [] and app.is_running
        await pilot.press("q")
    assert app.return_code == 0
    led.close()


@pytest.mark.asyncio
async def test_working_through_everything_reaches_queue_clear(store):
    app, led = app_for(store["path"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("a", "p", "d")
        await pilot.pause()
        # The claims lane ran empty: the app moved to conflicts by itself.
        assert app.lane == "conflicts"
        await pilot.press("b")
        await pilot.pause()
        assert app.current() is None
        text = shown(app, "#clear")
        assert "QUEUE CLEAR" in text and "4 memories on this machine" in text
    led.close()


@pytest.mark.asyncio
async def test_starts_on_conflicts_when_no_claims(store):
    with fresh(store["path"]) as other:
        for mid in (store["prefs"], store["pytest"], store["ci"]):
            other.review(mid, "keep")
    app, led = app_for(store["path"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.lane == "conflicts" and app.current_id() == store["conflict"]
        await pilot.press("tab")  # nothing in the other lane: stay
        assert app.lane == "conflicts"
        assert "no claims waiting" in app.last_status
    led.close()


# ---------------------------------------------------------------------- other processes
@pytest.mark.asyncio
async def test_concurrent_drop_shows_error_and_refreshes(store):
    app, led = app_for(store["path"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.current_id() == store["prefs"]
        with fresh(store["path"]) as other:
            other.forget([store["prefs"]], agent="codex")
        await pilot.press("a")
        await pilot.pause()
        assert app.is_running
        assert len(app.errors) == 1 and store["prefs"] in app.errors[0]
        assert "dropped" in app.errors[0]
        assert store["prefs"] not in [m.id for m in app.claims]
        assert app.current_id() == store["pytest"]
        # The next key works normally.
        await pilot.press("a")
        await pilot.pause()
        assert len(app.errors) == 1
    led.close()
    with fresh(store["path"]) as check:
        m = check.get(store["prefs"])
        assert m.deleted_at is not None and m.reviewed_at is None  # not "kept" after the drop
        assert check.get(store["pytest"]).reviewed_at is not None


@pytest.mark.asyncio
@pytest.mark.parametrize("key", ["d", "e"])
async def test_concurrent_drop_then_drop_or_edit(store, key):
    app, led = app_for(store["path"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        if key == "e":
            await pilot.press("e")
        with fresh(store["path"]) as other:
            other.forget([store["prefs"]], agent="codex")
        if key == "e":
            await pilot.press("end", "x", "enter")
        else:
            await pilot.press("d")
        await pilot.pause()
        assert app.is_running and len(app.errors) == 1
        assert app.current_id() == store["pytest"]
    led.close()
    with fresh(store["path"]) as check:
        assert check.get(store["prefs"]).text == "The user prefers metric units"


@pytest.mark.asyncio
async def test_concurrent_resolve_shows_error(store):
    app, led = app_for(store["path"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("tab")
        with fresh(store["path"]) as other:
            other.resolve(store["conflict"], "dismiss")
        await pilot.press("1")
        await pilot.pause()
        assert app.is_running and len(app.errors) == 1
        assert app.lane == "claims"  # conflicts lane is empty now
    led.close()
    with fresh(store["path"]) as check:
        assert check.conflict(store["conflict"]).status == "dismissed"
        assert check.get(store["b"]).deleted_at is None


@pytest.mark.asyncio
async def test_periodic_refresh_keeps_cursor_on_same_item(store):
    app, led = app_for(store["path"], refresh_seconds=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("j")
        assert app.current_id() == store["pytest"] and app.index == 1
        with fresh(store["path"]) as other:
            new = other.remember("Docs live under docs/ as markdown", cluster="code", agent="codex").memory
        # Wait for a refresh (every 0.05 s; a loaded machine may need longer than 0.3 s).
        await until(pilot, lambda: app.claims and app.claims[0].id == new.id)
        # The new claim arrived at the top; the cursor stayed on the same claim.
        assert [m.id for m in app.claims][0] == new.id
        assert app.current_id() == store["pytest"] and app.index == 2
        assert "CLAIMS 4" in shown(app, "#lanes")
        assert "3 of 4" in shown(app, "#pos")
        # The selected claim is kept by another process: same index, clamped.
        with fresh(store["path"]) as other:
            other.review(store["pytest"], "keep")
        await until(pilot, lambda: store["pytest"] not in [m.id for m in app.claims])
        assert app.index == 2 and app.current_id() == store["ci"]
        with fresh(store["path"]) as other:
            other.review(store["ci"], "keep")
        await until(pilot, lambda: store["ci"] not in [m.id for m in app.claims])
        assert app.index == 1 and app.current_id() == store["prefs"]
    led.close()


@pytest.mark.asyncio
async def test_refresh_while_editing_keeps_the_edit(store):
    app, led = app_for(store["path"], refresh_seconds=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("j", "e", "end", "!")
        with fresh(store["path"]) as other:
            other.remember("Another new claim", cluster="code", agent="codex")
        await pilot.pause(0.3)
        assert app.editing == store["pytest"]
        assert app.query_one("#edit").value.endswith("root!")
        await pilot.press("enter")
        await pilot.pause()
        assert app.errors == []
    led.close()
    with fresh(store["path"]) as check:
        assert check.get(store["pytest"]).text.endswith("root!")


@pytest.mark.asyncio
async def test_q_quits_with_zero(store):
    app, led = app_for(store["path"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0
    led.close()


def test_run_reports_an_unopenable_store(tmp_path, capsys):
    from ledger.tui.app import run

    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    assert run(str(blocker / "ledger.db")) == 1
    assert capsys.readouterr().err.startswith("✕ ")


def test_tui_package_does_not_import_textual():
    code = "import sys, ledger.tui, ledger.tui.plain; print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ---------------------------------------------------------------------- plain dump and JSON
def test_plain_dump_exact(store):
    clock = FixedClock(system_clock())
    with Ledger.open(store["path"], clock=clock) as led:
        led.remember("word " * 40, cluster="code", agent="claude-code")
        queue = led.review_queue()
        now = clock()
        created = led.conflict(store["conflict"]).created_at
    text = plain_dump(queue, now)
    lines = text.splitlines()
    assert lines[0] == "Review queue  4 claims · 1 conflict"
    assert lines[1] == ""
    assert lines[2] == f"{queue['claims'][0].id[-6:]}  ███░░░  claude-code  " + truncate("word " * 40, 78)
    assert lines[2].endswith("…") and len(truncate("word " * 40, 78)) == 78
    assert lines[3] == f"{store['prefs'][-6:]}  ███░░░  claude   The user prefers metric units"
    assert lines[4] == f"{store['pytest'][-6:]}  ███░░░  codex    Tests run with pytest -q from the repo root"
    assert lines[5] == f"{store['ci'][-6:]}  ███░░░  claude   CI runs on Python 3.11"
    assert lines[6] == ""
    cf_id = queue["conflicts"][0].id
    assert lines[7] == f"▲ {'value drift':<22} {age(now - created):<6} {cf_id}"
    assert lines[7] == f"▲ value drift            1d     {cf_id}"  # the id, for `ledger resolve`
    assert lines[8] == "  A  Renews every 12 months"
    assert lines[9] == "  B  Renews every 24 months"
    assert text.endswith("\n") and len(lines) == 10


def test_plain_dump_caps_at_twenty_and_truncates_sides(store_target, tmp_path):
    clock = FixedClock(system_clock())
    with Ledger.open(store_target, clock=clock) as led:
        for i in range(25):
            led.remember(f"Fact number {i} about topic {i}", cluster="reading", agent="a")
        m1 = led.remember("The deploy window is " + "very " * 20 + "long on Friday", cluster="proc", agent="a").memory
        m2 = led.remember("The deploy window is " + "very " * 20 + "long on Monday", cluster="proc", agent="b")
        assert m2.proposed
        led.judge(m2.proposed[0], "conflict", agent="b")
        queue = led.review_queue()
        text = plain_dump(queue, clock())
    lines = text.splitlines()
    assert lines[0] == "Review queue  25 claims · 1 conflict"
    end = next(i for i, ln in enumerate(lines) if ln.startswith(("▲", "Waiting")))
    claim_lines = [ln for ln in lines[2:end] if ln and not ln.startswith("… ")]
    assert len(claim_lines) == 20
    assert "… 5 more claims not shown: ledger review --plain --limit 25 shows them all" in lines[2:end]
    # the 25 "Fact number N" claims propose candidates among themselves; those listed
    # for a person are capped at twenty too
    assert 1 <= sum(ln.startswith("? ") for ln in lines) <= 20
    a_line = next(ln for ln in lines if ln.startswith("  A  "))
    assert len(a_line) == 5 + 76 and a_line.endswith("…")
    assert m1.id  # the older side is A
    assert plain_dump({"claims": [], "conflicts": [], "claimCount": 0, "conflictCount": 0}, 0) == "Review queue  0 claims · 0 conflicts\n"


def test_queue_json(store):
    with fresh(store["path"]) as led:
        queue = led.review_queue()
    data = queue_json(queue)
    assert data["claimCount"] == 3 and data["conflictCount"] == 1
    assert [c["id"] for c in data["claims"]] == [store["prefs"], store["pytest"], store["ci"]]
    assert data["conflicts"][0]["id"] == store["conflict"]
    assert data["conflicts"][0]["a"]["text"] == "Renews every 12 months"
    assert json.loads(json.dumps(data)) == data


# ---------------------------------------------------------------------- fmt
def test_bar():
    assert bar(0.51, 8) == "████░░░░"
    assert bar(0.51, 6) == "███░░░"
    assert bar(0.99, 6) == "██████"
    assert bar(0.0, 6) == "░░░░░░"
    assert bar(0.17, 8) == "█░░░░░░░"
    assert bar(1.7, 4) == "████" and bar(-1, 4) == "░░░░"
    assert bar(0.0625, 8) == "█░░░░░░░"  # .5 rounds up, as the seed's Math.round
    assert all(len(bar(f / 100, 8)) == 8 for f in range(101))


def test_strength_colour_and_pct():
    assert strength_color(0.71) == "#b7c14a"
    assert strength_color(0.7) == "#d9a03c" == strength_color(0.41)
    assert strength_color(0.4) == strength_color(0.1) == "#d6606a"
    assert pct(0.51) == 51 and pct(0.9949) == 99 and pct(0.995) == 100 and pct(2) == 100


def test_age_compact_column():
    # The full boundary table is in tests/test_ages.py (Python and the web UI side by side).
    assert age(0) == "now"
    assert age(-5 * HOUR) == "in 5h"
    assert age(4 * HOUR) == "4h"
    assert age(23 * HOUR) == "23h"
    assert age(DAY) == "1d"
    assert age(12 * DAY) == "12d"
    assert age(59 * DAY) == "59d"
    assert age(60 * DAY) == "2mo"
    assert age(7 * 30.4 * DAY) == "7mo"
    assert age(400 * DAY) == "1y"


def test_truncate():
    assert truncate("short", 10) == "short"
    assert truncate("exactly10!", 10) == "exactly10!"
    assert truncate("eleven chars", 10) == "eleven ch…"
    assert truncate("  a\n\tb   c ", 10) == "a b c"
    assert truncate("abc", 0) == ""
    assert len(truncate("x" * 200, 78)) == 78


def _columns(text: str) -> int:
    """Terminal columns, computed here apart from termfmt: wide/fullwidth 2, marks 0."""
    import unicodedata

    return sum(0 if unicodedata.combining(c) or unicodedata.category(c) in ("Mn", "Me", "Cf")
               else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


@pytest.mark.parametrize("text", ["我们使用連接池 for the pool", "東京に行きます" * 20, "데이터베이스 백업은 매일 밤", "ｆｕｌｌｗｉｄｔｈ" * 9,
                                  "Café naïve e\u0301 👍🏽 x" * 6, "a東b京c" * 30, "plain ascii " * 10, "", "東"])
@pytest.mark.parametrize("width", [0, 1, 2, 3, 7, 16, 70])
def test_truncate_and_fit_count_terminal_columns(text, width):
    from ledger.termfmt import fit, pad, text_width

    assert text_width(text) == _columns(text)
    t = truncate(text, width)
    assert _columns(t) <= width
    if _columns(text) <= width:
        assert t == text
    elif width:  # cut: whole characters, then …, at most one column short (a wide one that did not fit)
        assert t.endswith("…") and text.startswith(t[:-1]) and _columns(t) >= width - 1
    assert _columns(fit(text, width)) == width
    assert _columns(pad(t, width)) == max(width, _columns(t))


# ---------------------------------------------------------------------- waiting candidates (issue 15)
@pytest.mark.asyncio
@pytest.mark.parametrize("key, outcome, status", [("2", "b", "resolved"), ("n", "dismiss", "dismissed")])
async def test_a_waiting_candidate_is_resolved_from_the_conflicts_lane(store_target, tmp_path, key, outcome, status):
    path = store_target
    with Ledger.open(path) as led:
        led.remember("Office opens at 08:00", cluster="home", agent="claude")
        w = led.remember("Office opens at 09:00", cluster="home", agent="codex")
        (cc,) = w.proposed
        led.review(w.memory.id, "keep")  # the claims lane holds only the older claim
    app, led = app_for(path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("tab")
        assert app.lane == "conflicts" and app.current_id() == cc
        assert app.conflict_count == 1
        card = app.query_one("#card")
        assert card.border_title == "candidate"
        await pilot.press(key)
        await pilot.pause()
        assert app.errors == []
        assert app.conflicts == [] and app.conflict_count == 0
    led.close()
    with fresh(path) as check:
        assert check.candidates() == []
        (c,) = check.conflicts(status=status)
        assert c.resolution == outcome and "human" in c.note
        gone = [m for m in (c.a, c.b) if check.get(m.id).deleted_at is not None]
        assert [m.id for m in gone] == ([c.a.id] if outcome == "b" else [])


# ---------------------------------------------------------------------- stored text shown as stored
#: Texts a claim may hold that a terminal or Rich/Textual would act on or hide: control
#: characters (CR, NEL, VT, FF, BEL, backspace), an ANSI escape, and Rich markup.
ODD_TEXT = ("one\rtwo\x85three \x1b[31mred\x1b[0m \x0bvt\x0cff\x07bel\x08bs [bold]x[/bold] "
            "[link=https://example.com]click[/link] [@click=app.quit]quit[/] :smile:")
ODD_SHOWN = ("one␍two�three ␛[31mred␛[0m ␋vt␌ff␇bel␈bs [bold]x[/bold] [link=https://example.com]click[/link] "
             "[@click=app.quit]quit[/] :smile:")


@pytest.mark.asyncio
async def test_control_characters_escapes_and_markup_are_shown_literally(store_target):
    """The claim card, a conflict's sides and its note show what is stored: every control
    character as the CLI shows it, escapes as text, markup as typed, and nothing acted on
    (a [@click=app.quit] link must not quit)."""
    with Ledger.open(store_target) as led:
        m = led.remember(ODD_TEXT, cluster="code", agent="claude", note="[red]prov\r[/red]").memory
        a = led.remember("The deploy window is 12 months " + ODD_TEXT, cluster="money", agent="claude").memory
        w = led.remember("The deploy window is 24 months " + ODD_TEXT, cluster="money", agent="codex")
        led.judge(w.proposed[0], "conflict", agent="codex", kind="value drift", detector=0.9,
                  note="see \x1b]0;title\x07 [i]x[/i]")
    app, led = app_for(store_target)
    async with app.run_test(size=(200, 40)) as pilot:
        await pilot.pause()
        assert app.current_id() == m.id
        card = shown(app, "#card")
        assert ODD_SHOWN in " ".join(card.split("\n")).replace("  ", " ") or ODD_SHOWN in card, card
        assert "[red]prov␍[/red]" in card
        await pilot.press("tab")
        await pilot.pause()
        card = " ".join(shown(app, "#card").split())
        assert "see ␛]0;title␇ [i]x[/i]" in card, card
        assert card.count("[link=https://example.com]click[/link]") == 2, card
        assert app.is_running
    led.close()
    with fresh(store_target) as led2:  # shown, never changed
        assert led2.get(m.id).text == ODD_TEXT and led2.get(a.id).text.endswith(ODD_TEXT)


def test_plain_dump_shows_control_characters(store_target):
    with Ledger.open(store_target) as led:
        led.remember(ODD_TEXT, cluster="code", agent="claude")
        queue = led.review_queue(20)
        out = plain_dump(queue, led.clock())
    line = next(ln for ln in out.splitlines() if "one" in ln)
    assert line.endswith(truncate(ODD_SHOWN, 78)) and "one␍two�three" in line, line


def test_review_plain_and_show_print_what_is_stored(db_file):
    """Through the command: CR and NEL (and the other controls str.split() takes for
    spaces) are shown as their pictures, not collapsed into spaces."""
    from conftest import Cli

    cli = Cli(db_file)
    rc, out, err = cli("remember", "--cluster", "code", "--json", "--text", ODD_TEXT)
    assert rc == 0, err
    mid = json.loads(out)["id"]
    rc, out, err = cli("show", mid)
    assert rc == 0 and ODD_SHOWN in out, out
    rc, out, err = cli("review", "--plain")
    assert rc == 0 and "one␍two�three ␛[31mred" in out, out
    rc, out, err = cli("search", "one")
    assert rc == 0 and "one␍two�three" in out, out


HEBREW_RLM = "הפריסה ל\u200fStaging דורשת VPN\u200f"  # the example: RLM marks in a Hebrew claim
ARABIC_MARKS = "المنفذ \u200e8080\u200e مفتوح \u061c(للاختبار)"  # LRM and ALM
HIDDEN_TEXTS = [HEBREW_RLM, ARABIC_MARKS, "line one\nline two", "cr\rinside", "esc \x1b[31mred", "tab\there",
                "nel\x85x", "port \u202e0806\u202c open", "iso \u2067abc\u2069 end"]


async def _edit(store_target, text, *keys, paste: str | None = None):
    """Remember ``text``, open it in the edit box, press ``keys`` (and paste ``paste``),
    Enter; returns (the stored text before, the box's value when opened, the stored
    text after, the app's errors)."""
    from textual import events

    with Ledger.open(store_target) as led:
        m = led.remember(text, cluster="code", agent="claude").memory
    app, led = app_for(store_target)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("e")
        await pilot.pause()
        assert app.editing == m.id, app.last_status
        box = app.query_one("#edit")
        opened = box.value
        await pilot.press(*keys)
        if paste is not None:
            box.post_message(events.Paste(paste))
            await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        errors = list(app.errors)
    led.close()
    with fresh(store_target) as led2:
        after = led2.get(m.id)
        assert after.reviewed_at is not None
        return m.text, opened, after.text, errors


@pytest.mark.asyncio
@pytest.mark.parametrize("text", HIDDEN_TEXTS)
async def test_editing_keeps_the_hidden_characters_not_touched(store_target, text):
    """The box shows a hidden character by its stand-in (the card's rule: a bidi mark is
    never acted on by the terminal) and saves the character itself: appending a word
    to a Hebrew claim with RLM marks keeps the marks (they were refused, web UI only)."""
    from ledger.tui.app import box_shown

    before, opened, after, errors = await _edit(store_target, text, "end", "space", "o", "k")
    assert errors == []
    assert opened == box_shown(before) and len(opened) == len(before)
    assert not any(c in opened for c in "\u200e\u200f\u061c\u202e\u2067\r\n\t\x1b\x85")
    assert after == before + " ok"


@pytest.mark.asyncio
async def test_deleting_a_stand_in_deletes_that_character_only(store_target):
    """Two marks side by side: Backspace between them removes the first, and only it."""
    text = "a\u200f\u200eb"
    before, opened, after, errors = await _edit(store_target, text, "home", "right", "right", "backspace")
    assert opened == "a��b" and after == "a\u200eb" and errors == []


@pytest.mark.asyncio
async def test_typing_among_stand_ins_keeps_both_sides(store_target):
    before, opened, after, errors = await _edit(store_target, HEBREW_RLM, "home", *["right"] * 8, "x", "y")
    assert after == HEBREW_RLM[:8] + "xy" + HEBREW_RLM[8:] and after.count("\u200f") == 2


@pytest.mark.asyncio
async def test_a_stand_in_typed_over_its_own_mark_is_the_symbol(store_target):
    """Select the RLM's stand-in and paste ``�`` over it: the box looks the same, but
    what was put there is the symbol, so the symbol is stored (the documented rule)."""
    before, opened, after, errors = await _edit(store_target, "a\u200fb", "home", "right", "shift+right", paste="�")
    assert opened == "a�b" and after == "a�b" and errors == []


@pytest.mark.asyncio
async def test_a_pasted_mark_is_stored_and_shown_by_its_stand_in(store_target):
    before, opened, after, errors = await _edit(store_target, "plain words", "end", paste=" x\u200fy")
    assert after == "plain words x\u200fy" and errors == []


@pytest.mark.asyncio
@pytest.mark.parametrize("text", ["👩\u200d💻 writes the deploy script", "می\u200cخواهم تست را اجرا کنم",
                                  "👨\u200d👩\u200d👧 family \u200cnon-joiner",
                                  "zero\u200bwidth space, word\u2060joiner, soft\u00adhyphen"])
async def test_zwj_and_zwnj_are_in_the_box_as_they_are(store_target, text):
    """ZWJ (emoji sequences) and ZWNJ (Persian) are how those texts are written, not
    controls to guard against: no stand-in, and an edit keeps them. So are ZWSP, the
    word joiner and the soft hyphen (they reorder nothing; termfmt.visible leaves them)."""
    before, opened, after, errors = await _edit(store_target, text, "end", "space", "o", "k")
    assert opened == before and after == before + " ok" and errors == []


def test_a_value_set_outside_the_keys_still_keeps_untouched_marks():
    """If the box's value is set directly (not through Input.replace), the characters
    that line up with unchanged stand-ins are taken back from the stored text."""
    from ledger.tui.app import box_shown, box_text

    shown = box_shown(HEBREW_RLM)
    assert box_text(HEBREW_RLM, shown) == HEBREW_RLM
    assert box_text(HEBREW_RLM, "x" + shown + "!") == "x" + HEBREW_RLM + "!"
    assert box_text(HEBREW_RLM, shown.replace("Staging", "Prod")) == HEBREW_RLM.replace("Staging", "Prod")
    assert box_text("a\rb", "   ") == "   "
