"""Terms as people type them (issue 14; docs/search.md): compounds searched as written,
CJK words found inside sentences, fullwidth text folded, and fuzzy neighbours found
exactly through the vocabulary's trigram index."""

from __future__ import annotations

import random

import pytest

from ledger import terms as T
from ledger.service import Ledger
from ledger.store import textindex


def _texts(led, res):
    return [m.text for m in res.hits]


@pytest.fixture()
def led(store_target, tmp_path):
    with Ledger.open(store_target) as led:
        yield led


# ------------------------------------------------------------------------------ compounds
NOISE = ["cache keys expire hourly", "cookie banner copy", "cron runs at 3am", "the cache warms on boot",
         "cookie consent is stored", "cron jobs are in /etc", "cache misses spike on deploys", "cookies are first-party",
         "cron output goes to mail", "cache size is 2 GB", "cookie names are prefixed", "crontab is per user"]

COMPOUND_CASES = [  # (memory, query as typed); the examples, then our own
    ("We build the engine in C++ 20", "C++"),
    ("The web app runs on node.js 20", "node.js"),
    ("Never use git push --force on main", "--force"),
    ("Pass -v to see every request", "-v"),
    ("Install @scope/pkg from the private registry", "@scope/pkg"),
    ("The billing service is written in C#", "c#"),
    ("Aliases live in ~/.bashrc on every box", "~/.bashrc"),
    ("Set $HOME before running the installer", "$HOME"),
    ("Files are saved as utf-8 without a BOM", "utf-8"),
]


@pytest.mark.parametrize("text,query", COMPOUND_CASES)
def test_a_compound_is_searched_as_written(led, text, query):
    for t in NOISE:
        led.remember(t, cluster="code", agent="a")
    led.remember(text, cluster="code", agent="a")
    res = led.recall(query, agent="a")
    assert _texts(led, res) == [text], query


def test_c_plus_plus_is_not_the_prefix_c(led):
    for t in NOISE:
        led.remember(t, cluster="code", agent="a")
    cpp = led.remember("The renderer is C++ with a small Lua layer", cluster="code", agent="a").memory
    assert [m.id for m in led.recall("C++", agent="a").hits] == [cpp.id]
    assert led.search("C++").total == 1
    assert led.search("c++ renderer", mode="keyword").total == 1


def test_joined_words_also_match_written_apart(led):
    a = led.remember("We pin node.js to the LTS line", cluster="code", agent="a").memory
    b = led.remember("node js upgrades wait for the LTS", cluster="code", agent="a").memory
    order = [m.id for m in led.search("node.js").hits]
    assert order == [a.id, b.id]  # as written ranks first; the phrase finds the other
    assert led.search("node").total == 2


def test_compounds_of_the_text():
    assert T.compounds("Use C++, node.js and --force (see @scope/pkg).") == ["c++", "node.js", "--force", "@scope/pkg"]
    assert T.compounds("It's 3.11 now: e.g. -v.") == ["3.11", "e.g", "-v"]
    assert T.compounds("plain words only, no symbols") == []
    assert T.encode_compound("c++") != T.encode_compound("c") and T.encode_compound("c++").isprintable() is False


# ------------------------------------------------------------------------------ CJK
CJK_CASES = [  # the example, then our own (Chinese 3 characters, Japanese, Korean)
    ("我们在生产环境中使用連接池来管理数据库", "連接"),
    ("我们在生产环境中使用连接池来管理数据库", "数据库"),
    ("明日東京に行きますので会議は延期です", "東京"),
    ("새로운데이터베이스를설치했습니다", "데이터"),
]


@pytest.mark.parametrize("text,query", CJK_CASES)
def test_a_cjk_word_inside_a_sentence_is_found(led, text, query):
    led.remember("我们使用缓存来加速页面", cluster="code", agent="a")
    led.remember(text, cluster="code", agent="a")
    assert _texts(led, led.search(query)) == [text]
    assert _texts(led, led.search(query, mode="keyword")) == [text]


def test_a_cjk_query_is_a_substring_match(led):
    led.remember("使用連接池", cluster="code", agent="a")
    assert led.search("連接池").total == 1
    assert led.search("接連").total == 0  # the same characters in another order are not the word
    # A run of three is also read as its pairs: 池連接 finds it through 連接, below a text holding it whole.
    whole = led.remember("這個池連接了", cluster="code", agent="a").memory
    assert [m.id for m in led.search("池連接").hits][0] == whole.id and led.search("池連接").total == 2


# ------------------------------------------------------------------------------ fullwidth
FULLWIDTH_CASES = [  # memory written fullwidth, query in ASCII; and the other way round
    ("Ｐｙｔｈｏｎ is the scripting language", "python"),
    ("ＡＰＩ keys rotate monthly", "api"),
    ("The runtime is 3.11 everywhere", "３．１１"),
]


@pytest.mark.parametrize("text,query", FULLWIDTH_CASES)
def test_fullwidth_folds_to_ascii(led, text, query):
    led.remember("unrelated note about lunch", cluster="code", agent="a")
    led.remember(text, cluster="code", agent="a")
    assert _texts(led, led.search(query)) == [text]


def test_fold():
    assert T.fold("Ｐｙｔｈｏｎ ＣＬＩ！１２３") == "python cli!123"
    assert T.fold("Ünïcode") == "ünïcode"


# ------------------------------------------------------------------------------ fuzzy
def _levenshtein(a: str, b: str) -> int:
    """The full table, no cap: the reference for :func:`ledger.terms.edit_distance`."""
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def test_edit_distance_is_levenshtein_up_to_the_cap():
    """The banded and cap-1 shortcuts give the full table's distance whenever it is
    within the cap, and cap + 1 otherwise: random words, near copies and edge cases."""
    rnd = random.Random(14)
    pairs = [("", ""), ("", "a"), ("a", ""), ("ab", "ba"), ("abc", "acb"), ("abcd", "abdc"), ("aaaa", "aaa"),
             ("deploy", "deplo"), ("deploy", "eploy"), ("deploy", "deplyo"), ("café", "cafe"), ("kitten", "sitting")]
    for _ in range(3000):
        a = "".join(rnd.choice("abcde") for _ in range(rnd.randint(0, 10)))
        b = list(a)
        for _ in range(rnd.randint(0, 4)):
            op = rnd.randrange(3)
            k = rnd.randint(0, len(b))
            if op == 0:
                b.insert(k, rnd.choice("abcdef"))
            elif b and op == 1:
                del b[min(k, len(b) - 1)]
            elif b:
                b[min(k, len(b) - 1)] = rnd.choice("abcdef")
        pairs.append((a, "".join(b)))
    for a, b in pairs:
        d = _levenshtein(a, b)
        for cap in range(0, 5):
            assert T.edit_distance(a, b, cap) == (d if d <= cap else cap + 1), (a, b, cap, d)


def test_edit_distance():
    assert T.edit_distance("kitten", "sitting", 5) == 3
    assert T.edit_distance("deploy", "deploy", 1) == 0
    assert T.edit_distance("teh", "the", 2) == 2  # a swap is two edits (neighbours through terms.swaps)


def test_swaps_are_the_words_one_adjacent_swap_away():
    assert T.swaps("deplyo") == {"edplyo", "dpelyo", "delpyo", "depylo", "deploy"}
    assert T.swaps("teh") == set()  # under 4 letters: no fuzzy neighbours at all
    assert T.swaps("book") == {"obok", "boko"}  # the two o's swapped are the same word
    assert "deploy" not in T.swaps("deploy")
    assert T.edit_distance("abc", "abcdef", 2) == 3  # capped
    assert T.max_edits("cat") == 0 and T.max_edits("cats") == 1 and T.max_edits("deployment") == 2


def test_neighbours_through_the_index_equal_a_scan_of_the_vocabulary(led):
    rnd = random.Random(14)
    letters = "etaoinshrdlucmfwyp"
    words = sorted({"".join(rnd.choice(letters) for _ in range(rnd.randint(3, 11))) for _ in range(3000)} | {"aaaa", "aaab", "banana"})
    for i in range(0, len(words), 20):
        led.remember(" ".join(words[i : i + 20]), cluster="code", agent="a")
    from ledger.store import textindex_pg
    from ledger.store.connection import connect

    conn = connect(led.path)  # a reader of its own: the store's connection is private
    vocab = [r[0] for r in conn.execute("SELECT term FROM vocab")]
    # each engine's own lookup (SQLite: a trigram table; PostgreSQL: pg_trgm), one oracle
    look = ((lambda w: textindex_pg.neighbours_of(conn, [w])[w]) if getattr(conn, "is_postgres", False)
            else (lambda w: textindex.neighbours(conn, w)))
    assert set(vocab) == {w for w in words if len(w) >= 3}
    probes = ["aaaa", "aaa", "banan"] + [w for w in rnd.sample(words, 60)]
    for w in list(probes):
        for _ in range(2):  # typos of real words: 1-2 random edits
            x = list(w)
            i = rnd.randrange(len(x))
            op = rnd.choice("sidt")
            if op == "t" and i + 1 < len(x):  # a swap of adjacent letters (terms.swaps)
                x[i], x[i + 1] = x[i + 1], x[i]
            elif op == "s":
                x[i] = rnd.choice(letters)
            elif op == "i":
                x.insert(i, rnd.choice(letters))
            elif len(x) > 3:
                del x[i]
            probes.append("".join(x))
    found = 0
    for p in probes:
        got = look(p)
        assert got == textindex.neighbours_brute(vocab, p), p
        found += bool(got)
    conn.close()
    assert found > len(probes) // 3  # the probes really have neighbours


def test_split_query():
    qt = T.split_query(["what", "is", "C++", "node.js?", "連接池", "Ｐｙｔｈｏｎ"], frozenset({"what", "is"}))
    assert qt.words == ("python",)
    assert qt.compounds == ("c++", "node.js")
    assert qt.phrases == ("node js",)
    assert qt.cjk == ("連接池",)
    assert T.split_query(["what", "is"], frozenset({"what", "is"})).words == ("what", "is")  # nothing else left


def test_symbol_runs_keep_emoji_and_non_ascii_symbols_only():
    assert T.symbol_runs("deploy is 🔥 broken") == ["🔥"]
    assert T.symbol_runs("LGTM 👍🏽✅ ok") == ["👍✅"]  # skin tone dropped, a run stays one phrase
    assert T.symbol_runs("a → b ≥ 3 € 30°C") == ["→", "≥", "€", "°"]
    assert T.symbol_runs("ascii + $ = ^ | < > ~") == []  # ASCII symbols are words' and compounds' business
    assert T.symbol_runs("™ ① ﬁ") == []  # NFKC folds these to letters and digits (found as words)
    assert T.symbol_runs("👨‍👩‍👧 family") == ["👨👩👧"]  # zero-width joiners dropped
    q = T.split_query(["🔥"], frozenset({"is"}))
    assert q.symbols == ("🔥",) and bool(q)
    assert T.side_text("deploy is 🔥") == T.encode_symbol("🔥")
    assert T.encode_symbol("🔥") != T.encode_compound("1f525")
