"""Control characters in stored or typed text are shown, never acted on, in every
human-readable output of the CLI (fresh-user defect: ``recall``, ``show``, ``search``
and the warnings printed a memory's ESC sequences raw). The stored text and ``--json``
keep it exact. docs/cli.md "Control characters". Real processes on real stores; the
colour case on a real pseudo-terminal."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from conftest import LEDGER_BIN
from ptys import read_while_running

from ledger.termfmt import json_visible, visible, visible_styled

#: What a terminal acts on: SGR colour (the reported example), clear screen, an OSC
#: window title and an OSC 52 clipboard write (BEL-terminated), CR (rewrites the line),
#: backspace, DEL, the one-character C1 CSI, a bidi override and an isolate.
NASTY = {
    "sgr": "\x1b[31mRED\x1b[0m",
    "clear": "\x1b[2J\x1b[H",
    "title": "\x1b]0;owned\x07",
    "clipboard": "\x1b]52;c;ZWNobyBoaQ==\x07",
    "cr": "shown\rhidden",
    "backspace": "ab\x08\x08cd",
    "del": "x\x7fy",
    "c1-csi": "\x9b2J",
    "bidi": "abc\u202edcba\u2066x\u2069",
    "soh": "\x01",
}
ACTING = set(map(chr, [*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F, *range(0x80, 0xA0),
                       *range(0x202A, 0x202F), *range(0x2066, 0x206A)]))


def acted_on(text: str) -> set[str]:
    """The characters of ``text`` a terminal would act on (newline and tab aside)."""
    return set(text) & ACTING


@pytest.mark.parametrize("name", NASTY)
def test_visible_replaces_every_acting_character_and_keeps_the_rest(name):
    s = f"before {NASTY[name]} after\tand\nnext"
    shown = visible(s)
    assert not acted_on(shown) and len(shown) == len(s)
    assert shown.startswith("before ") and shown.endswith(" after\tand\nnext")


def test_visible_shows_escape_sequences_as_readable_text():
    assert visible("escape \x1b[31mRED\x1b[0m test \x01") == "escape ␛[31mRED␛[0m test ␁"
    assert visible("plain text, 中文, émigré, עברית") == "plain text, 中文, émigré, עברית"


def test_visible_styled_keeps_only_colour_sequences():
    styled = "\x1b[1mhead\x1b[0m \x1b[38;2;183;193;74m██\x1b[0m"
    assert visible_styled(styled) == styled
    assert visible_styled("a\x1b[2Jb\x1b]0;t\x07c\x1b") == "a␛[2Jb␛]0;t␇c␛"
    assert visible_styled("\x1b[31") == "␛[31"  # unterminated: not a colour


def test_json_visible_is_the_same_json_value():
    data = {"text": "".join(NASTY.values())}
    text = json.dumps(data, ensure_ascii=False)
    safe = json_visible(text)
    assert not acted_on(safe) and json.loads(safe) == data


def _remember(cli, text: str, *extra: str) -> str:
    # --db before --: the Cli helper appends it, where it would be words of the fact.
    rc, out, err = cli("remember", "--db", str(cli.db), "--cluster", "proc", "--json", *extra, "--", text, db=None)
    assert rc == 0, err
    return json.loads(out)["id"]


def test_stored_text_reaches_no_human_output_raw_and_json_stays_exact(cli):
    """The reported examples (recall, show, search) and the other readers of stored text."""
    text = "escape " + " ".join(NASTY.values()) + " giraffe"
    mid = _remember(cli, text)
    for args in (["recall", "giraffe"], ["search", "giraffe"], ["show", mid], ["review", "--plain"],
                 ["clusters"], ["sources"], ["stats"]):
        rc, out, err = cli(*args)
        assert rc == 0, (args, err)
        assert not acted_on(out + err), (args, out, err)
        if args[0] in ("recall", "search", "show"):
            assert "␛[31mRED␛[0m" in out, (args, out)
    rc, out, _ = cli("show", mid, "--json")
    assert json.loads(out)["text"] == text and not acted_on(out)  # the agent's data, exact
    rc, out, _ = cli("recall", "giraffe", "--json")
    assert json.loads(out)[0]["text"] == text and not acted_on(out)
    rc, out, _ = cli("export")
    assert any(json.loads(line).get("text") == text for line in out.splitlines()) and not acted_on(out)


def test_typed_text_echoed_in_warnings_and_errors_is_shown_not_acted_on(cli):
    cli.create_store()
    # The reported example: the unknown-cluster warning quoted the ESC sequence.
    rc, out, err = cli("search", "cluster:x\x1b[2Jy")
    assert rc == 0 and "No cluster" in err and not acted_on(out + err), err
    for args in (["show", "m_\x1b]0;owned\x07"], ["search", "strength:\x9b2J"], ["recall", "--mode", "\x1b[2J"],
                 ["remember", "--cluster", "no\x1b[2Jsuch", "a fact"]):
        rc, out, err = cli(*args)
        assert err and not acted_on(out + err), (args, err)
        rc, out, err = cli(*args, "--json")
        assert not acted_on(out + err), (args, err)


def test_a_cluster_label_with_controls_is_shown_not_acted_on(cli):
    rc, out, err = cli("clusters", "add", "Evil\x1b]0;t\x07 label")
    assert rc == 0 and not acted_on(out + err), (out, err)
    rc, out, err = cli("clusters")
    assert rc == 0 and "Evil␛]0;t␇ label" in out and not acted_on(out), out


def _on_a_tty(args: list[str], env: dict) -> str:
    master, slave = os.openpty()
    p = subprocess.Popen([LEDGER_BIN, *args], stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, env=env,
                         close_fds=True)
    os.close(slave)
    out = read_while_running(master, p)
    p.wait(timeout=30)
    os.close(master)
    return out.decode("utf-8", "replace")


@pytest.mark.parametrize("verb", ["recall", "search"])
def test_at_a_colour_terminal_only_the_clis_own_colours_go_out(cli, verb):
    """On a terminal the CLI colours its tables; a memory's own sequences are still shown."""
    _remember(cli, "escape \x1b[31mRED\x1b[0m \x1b]0;owned\x07 giraffe")
    # a colour terminal whatever TERM the test runner has (TERM=dumb turns colour off)
    env = {**{k: v for k, v in os.environ.items() if k != "NO_COLOR"}, "TERM": "xterm-256color"}
    out = _on_a_tty([verb, "giraffe", "--db", str(cli.db)], env)
    assert "␛[31mRED␛[0m" in out and "␛]0;owned␇" in out, out
    assert "\x1b[31m" not in out and "\x1b]" not in out and "\x07" not in out, out
    if verb == "search":
        assert "\x1b[1m" in out  # the header is still bold: colour was on


@pytest.mark.parametrize("argv", [["search", "giraffe"], ["recall", "giraffe"], ["stats"], ["show", "{id}"],
                                  ["review", "--plain"]], ids=" ".join)
def test_a_dumb_terminal_gets_no_colour(cli, argv):
    """TERM=dumb (Emacs' shell, some CI consoles) prints escape sequences as text: the
    CLI coloured its tables there as on any terminal. Now none go out; a colour terminal
    still gets them (the test above)."""
    mid = _remember(cli, "The giraffe enclosure opens at nine")
    env = {**{k: v for k, v in os.environ.items() if k != "NO_COLOR"}, "TERM": "dumb"}
    out = _on_a_tty([*(a.format(id=mid) for a in argv), "--db", str(cli.db)], env)
    assert "\x1b" not in out and ("giraffe" in out or argv == ["stats"]), out
