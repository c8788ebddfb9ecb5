"""Query-language findings of a fresh-user pass (2026-12-01), each kept as an example of
its kind with more of our own:

* a filter key followed by a colon and nothing else (``Type: error in build``, pasted
  text) was refused; it is the plain word, with an ``empty-filter`` warning;
* the example values messages give must parse and be valid (``type:claim`` was not);
* fullwidth (IME) keys, colons and values were not folded (``ｃｌｕｓｔｅｒ:proc``,
  ``cluster：proc``, ``strength:>５０``);
* ``strength:>0.5``, ``>=50``, ``=51`` got one generic message; now each says what is
  wrong with it and the nearest valid filter;
* stopwords alone (``what is the``) matched nearly the whole store, strengthened
  arbitrary memories and said nothing: ``stopwords-only``, and the recall is not counted;
* ``cluster:proc,code`` and ``cluster:"home & devices"`` got "No cluster" and no hint:
  ``list-value`` and ``quoted-value``.

The library tests run on both engines (real SQLite files, the shared PostgreSQL)."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from conftest import BOTH_ENGINES, LEDGER_BIN

from ledger.errors import InvalidQuery
from ledger.query import CLOSED_VALUES, KEY_HINTS, KEYS, filter_warnings, parse
from ledger.query.parser import EXAMPLES, empty_filter_warning

ENGINES = BOTH_ENGINES
NOW = 1_790_000_000_000  # 2026-09-21, epoch ms UTC


def kinds(text: str) -> list[str]:
    return [w["kind"] for w in filter_warnings(text, NOW)]


# ------------------------------------------------------------------ examples are valid
def test_every_example_a_message_shows_parses_and_draws_no_warning():
    assert set(EXAMPLES) == set(KEYS)
    shown = list(EXAMPLES.values())
    for hint in KEY_HINTS.values():  # "e.g. type:doc" and "e.g. strength:<40 or strength:>70"
        shown += [w.rstrip(",") for w in hint.split("e.g. ", 1)[1].split() if ":" in w]
    assert "type:doc" in shown and len(shown) > len(EXAMPLES)
    for example in shown:
        q = parse(example, NOW)
        assert q.has_filters and not q.terms, example
        assert filter_warnings(example, NOW) == [], example
    for key, values in CLOSED_VALUES.items():
        assert EXAMPLES[key].split(":", 1)[1] in values


# ------------------------------------------------------------------ key: with no value
@pytest.mark.parametrize(("text", "terms", "key", "fix"), [
    ("Type: error in build", ("type:", "error", "in", "build"), "type", "type:doc"),
    ("what to run before: deploy", ("what", "to", "run", "before:", "deploy"), "before", "before:2026-01-01"),
    ("note for agent: claude prefers tabs", ("note", "for", "agent:", "claude", "prefers", "tabs"), "agent",
     "agent:claude"),
    ("cluster: proc", ("cluster:", "proc"), "cluster", "cluster:proc"),  # the next word is the value meant
    ("type: doc", ("type:", "doc"), "type", "type:doc"),
    ("kind: memo", ("kind:", "memo"), "kind", "kind:claim"),  # memo is no kind: the example instead
    ("after: 2w", ("after:", "2w"), "after", "after:2w"),
    ("STRENGTH: >40", ("strength:", ">40"), "strength", "strength:>40"),
    ("deploy asof:", ("deploy", "asof:"), "asof", "asof:2026-01-01"),  # at the end
    ("agent: cluster:proc", ("agent:",), "agent", "agent:claude"),  # the next token is a filter itself
])
def test_a_key_with_nothing_after_the_colon_is_the_word(text, terms, key, fix):
    q = parse(text, NOW)
    assert q.terms == terms
    w = [w for w in filter_warnings(text, NOW) if w["kind"] == "empty-filter"]
    assert len(w) == 1 and w[0]["key"] == key
    assert w[0]["warning"].endswith(f"with no space: {fix}.") and f'searched as the word "{key}"' in w[0]["warning"]
    parse(fix, NOW)  # the fix shown parses


def test_the_empty_filter_word_is_found_in_a_store(ledger):
    ledger.remember("Type errors in the build come from mypy", cluster="code", agent="a")
    res = ledger.search("Type: errors in build")
    assert res.total == 1 and [w["kind"] for w in res.warnings()] == ["empty-filter"]
    assert empty_filter_warning("Type:", "type", None)["values"] == ["Type:"]


# ------------------------------------------------------------------ fullwidth
@pytest.mark.parametrize(("text", "field", "value"), [
    ("ｃｌｕｓｔｅｒ:proc deploy", "clusters", ("proc",)),
    ("cluster：proc deploy", "clusters", ("proc",)),  # fullwidth colon
    ("ＣＬＵＳＴＥＲ：ＰＲＯＣ deploy", "clusters", ("proc",)),
    ("cluster:ｐｒｏｃ deploy", "clusters", ("proc",)),
    ("ａｇｅｎｔ:ｃｏｄｅｘ deploy", "agents", ("codex",)),
    ("ｔｙｐｅ:ｄｏｃ deploy", "types", ("doc",)),
    ("ｓｔｒｅｎｇｔｈ:>50 deploy", "strength", 0.5),
    ("strength:>５０ deploy", "strength", 0.5),
    ("strength:＞５０ deploy", "strength", 0.5),
    ("ａｆｔｅｒ:２０２６-01-01 deploy", "after_ms", parse("after:2026-01-01", NOW).after_ms),
])
def test_fullwidth_filters_are_folded(text, field, value):
    q = parse(text, NOW)
    assert getattr(q, field) == value and q.terms == ("deploy",)
    assert filter_warnings(text, NOW) == []


def test_fullwidth_errors_and_text_keep_what_was_typed():
    with pytest.raises(InvalidQuery) as exc:
        parse("ｓｔｒｅｎｇｔｈ:>１５０", NOW)
    assert exc.value.token == "ｓｔｒｅｎｇｔｈ:>１５０" and exc.value.reason.startswith("150 is outside 0..100")
    with pytest.raises(InvalidQuery, match="did you mean cluster:"):
        parse("ｃｌｓｔｅｒ:proc", NOW)  # a near-miss key, fullwidth
    # Free text that is no filter is left to the word index (which folds it itself).
    assert parse("Ｐｙｔｈｏｎ ｆｉｌｅ.ｐｙ:12", NOW).terms == ("ｐｙｔｈｏｎ", "ｆｉｌｅ.ｐｙ:12")
    assert kinds("ｔｙｐｅ：") == ["empty-filter"]


def test_a_fullwidth_cluster_value_gets_the_cluster(ledger):
    ledger.remember("Deploys go out on Tuesdays", cluster="proc", agent="a")
    for text in ("cluster:ｐｒｏｃ deploys", "ｃｌｕｓｔｅｒ：ｐｒｏｃ deploys", "cluster:ｐｒｏｃｅｄｕｒｅｓ deploys"):
        res = ledger.search(text)
        assert res.total == 1 and all(w["kind"] == "cluster-label" for w in res.warnings()), text
    res = ledger.search("cluster:ｐｒｃｏ deploys")  # a typo, fullwidth: the suggestion names proc
    assert res.warnings()[0]["suggest"] == {"prco": "proc"}


# ------------------------------------------------------------------ strength
@pytest.mark.parametrize(("value", "wrong", "fix"), [
    (">0.5", "0-100 scale, not 0-1", "strength:>50"),
    ("<0.25", "0-100 scale, not 0-1", "strength:<25"),
    (">50.5", "whole numbers", "strength:>50"),
    ("<50.5", "whole numbers", "strength:<51"),
    (">=50", ">= is not supported", "strength:>49"),
    ("<=50", "<= is not supported", "strength:<51"),
    ("≥50", ">= is not supported", "strength:>49"),
    ("=>50", ">= is not supported", "strength:>49"),
    ("=51", "= is not supported", "strength:>50"),
    ("=10", "= is not supported", "strength:<11"),
    (">50%", "no % sign", "strength:>50"),
    ("50", "has no < or >", "strength:>50 or strength:<50"),
])
def test_a_bad_strength_says_what_is_wrong_and_the_nearest_filter(value, wrong, fix):
    with pytest.raises(InvalidQuery) as exc:
        parse(f"deploy strength:{value}", NOW)
    reason = exc.value.reason
    assert wrong in reason and f"did you mean {fix}?" in reason, reason
    for suggested in fix.split(" or "):
        parse(suggested, NOW)


@pytest.mark.parametrize(("value", "says"), [
    (">101", "101 is outside 0..100"), (">-1", "-1 is outside 0..100"), (">abc", "abc is not a number"),
    (">", "needs a number after >"), ("<=100", "holds every memory"), (">=0", "holds every memory"),
])
def test_a_strength_with_no_near_filter_says_why(value, says):
    with pytest.raises(InvalidQuery) as exc:
        parse(f"strength:{value}", NOW)
    assert says in exc.value.reason and "did you mean" not in exc.value.reason


def test_the_suggested_strength_keeps_the_same_memories(ledger, clock):
    """>=N is >N-1, <=N is <N+1 and >50.5 is >50 on the shown integers: the memories
    the suggestion finds are those the user's bound describes."""
    ledger.remember("Deploys go out on Tuesdays", cluster="proc", agent="a")  # shown as 51
    shown = ledger.search("deploys").hits[0].strength
    n = int(shown * 100 + 0.5)
    cases = {f">={n}": True, f">={n + 1}": False, f"<={n}": True, f"<={n - 1}": False, f">{n - 0.5}": True,
             f"<{n + 0.5}": True, f">{n + 0.5}": False}
    for bound, holds in cases.items():
        with pytest.raises(InvalidQuery) as exc:
            parse(f"strength:{bound}", NOW)
        fix = exc.value.reason.split("did you mean ")[1].split("?")[0]
        assert (ledger.search(f"deploys {fix}").total == 1) is holds, (bound, fix)


# ------------------------------------------------------------------ stopwords only
@pytest.mark.parametrize("text", ["what is the", "What is it?", "how do i", "the cluster:proc"])
def test_stopwords_alone_warn(text):
    from ledger.service import _text_notes

    (w,) = _text_notes(parse(text, NOW))
    assert w["kind"] == "stopwords-only" and "Add a word that names the topic" in w["warning"]


@pytest.mark.parametrize("text", ["what is the deploy", "the*", "what is 3.11", "what is c++", "what is 部署", "deploy"])
def test_a_word_about_something_is_not_stopwords_only(text):
    from ledger.service import _text_notes

    assert _text_notes(parse(text, NOW)) == ()


def test_a_stopwords_recall_warns_and_counts_nothing(ledger):
    ids = [ledger.remember(t, cluster="proc", agent="a").memory.id
           for t in ("The deploy is on Tuesdays", "What the VPN is for", "It is the staging box")]
    res = ledger.recall("what is the", agent="codex")
    # SQLite searches the stopwords as typed and finds nearly everything; PostgreSQL's
    # text search drops them and finds nothing. Either way: said, and nothing counted.
    assert [w["kind"] for w in res.warnings()] == ["stopwords-only"]
    assert res.total == len(res.hits) and (res.total >= 2 if ledger.store.engine == "sqlite" else res.total == 0)
    assert bool(res.not_counted) == bool(res.hits) and "stopword" in (res.not_counted or "stopword")
    assert [ledger.get(i).hits for i in ids] == [0, 0, 0]
    # A recall about something still counts.
    res = ledger.recall("what is the deploy", agent="codex")
    assert res.warnings() == [] and not res.not_counted and ledger.get(ids[0]).hits == 1


# ------------------------------------------------------------------ one value per filter
@pytest.mark.parametrize(("text", "fix"), [
    ("cluster:proc,code", "cluster:proc cluster:code"),
    ("agent:claude,codex deploy", "agent:claude agent:codex"),
    ("type:chat,doc", "type:chat type:doc"),
    ("KIND:Claim,Chunk", "kind:claim kind:chunk"),
    ("cluster:code, proc deploy", "cluster:code cluster:proc"),  # a list typed with a space after the comma
    ("cluster:code, proc, home", "cluster:code cluster:proc cluster:home"),
    # commas of other scripts (issue: only the ASCII comma was a list): fullwidth, ideographic,
    # their halfwidth and small forms, and ours, the Arabic comma
    ("cluster:code，prefs", "cluster:code cluster:prefs"),
    ("cluster:code、prefs", "cluster:code cluster:prefs"),
    ("ｃｌｕｓｔｅｒ：code、prefs", "cluster:code cluster:prefs"),
    ("cluster:code､prefs﹑home", "cluster:code cluster:prefs cluster:home"),
    ("cluster:code、 prefs deploy", "cluster:code cluster:prefs"),
    ("agent:claude،codex deploy", "agent:claude agent:codex"),
    ("kind:claim、chunk", "kind:claim kind:chunk"),
])
def test_a_comma_list_says_to_repeat_the_key(text, fix):
    (w,) = filter_warnings(text, NOW)  # no unknown-value besides: this one says what to write
    assert w["kind"] == "list-value" and w["warning"].endswith(f"repeat the key: {fix}.")
    assert filter_warnings(fix, NOW) == []


def test_a_trailing_comma_alone_says_to_drop_it():
    (w,) = filter_warnings("cluster:code,", NOW)
    assert w["kind"] == "list-value" and w["warning"].endswith("Write cluster:code.")
    (w,) = filter_warnings("cluster:code、", NOW)
    assert w["kind"] == "list-value" and w["warning"].endswith("Write cluster:code.")


def test_an_ideographic_comma_list_in_a_store_says_only_list_value(ledger):
    """No "No cluster "code、prefs"" besides: the list-value warning says what to write."""
    ledger.remember("Tabs, not spaces", cluster="prefs", agent="a")
    for text in ("cluster:code、prefs tabs", "cluster:code，prefs tabs"):
        res = ledger.search(text)
        assert [w["kind"] for w in res.warnings()] == ["list-value"], (text, res.warnings())
        assert res.warnings()[0]["split"] == ["code", "prefs"]
    assert ledger.search("cluster:code cluster:prefs tabs").total == 1  # the fix works


@pytest.mark.parametrize("text", ["how do i", "what is the", "is it the"])
def test_the_stopwords_warning_quotes_only_what_was_typed(text):
    from ledger.service import _text_notes

    (w,) = _text_notes(parse(text, NOW))
    assert f'every word of "{text}" is a stopword, so' in w["warning"]  # no fixed list of words not typed


def test_a_quoted_label_says_how_to_name_it(ledger):
    ledger.add_cluster("home & devices")
    ledger.remember("The router is in the hall", cluster="home-devices", agent="a")
    res = ledger.search('cluster:"home & devices" router')
    (w,) = res.warnings()  # and no "No cluster ""home"" besides
    assert w["kind"] == "quoted-value" and w["phrase"] == "home & devices"
    assert "cluster:home-devices" in w["warning"] and '""home' not in w["warning"]
    assert ledger.search("cluster:home-devices router").total == 1  # the fix works
    (w,) = ledger.search('cluster:"proc" router').warnings()
    assert w["kind"] == "quoted-value" and w["warning"].endswith("Write it without them: cluster:proc.")
    (w,) = ledger.search("cluster:proc,code").warnings()
    assert w["kind"] == "list-value"


# ------------------------------------------------------------------ the CLI says it too
def test_the_cli_prints_the_new_warnings(tmp_path):
    db = str(tmp_path / "s.db")
    env = {**os.environ, "NO_COLOR": "1", "LEDGER_DB": db}

    def run(*args):
        p = subprocess.run([LEDGER_BIN, *args], capture_output=True, text=True, timeout=60, env=env)
        return p.returncode, p.stdout, p.stderr

    run("remember", "Type errors in the build come from mypy", "--cluster", "code")
    rc, out, err = run("search", "Type: error in build")
    assert rc == 0 and "Type errors" in out and err.startswith("⚠ Type: has nothing after the colon"), err
    rc, out, err = run("recall", "what is the", "--json")
    assert rc == 0 and [json.loads(line)["kind"] for line in err.splitlines()] == ["stopwords-only", "not-counted"]
    rc, out, err = run("search", "strength:>0.5")
    assert rc == 1 and "did you mean strength:>50?" in err
    rc, out, err = run("search", "ｃｌｕｓｔｅｒ：ｃｏｄｅ mypy")
    assert rc == 0 and "Type errors" in out and err == ""
