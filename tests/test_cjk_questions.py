"""Chinese, Japanese and Korean questions written without spaces (docs/search.md "Terms",
"A longer CJK run is read as several words"): a query run of four or more characters is
searched as the whole run and as each of its character pairs, so a natural question
finds the memory that answers it; since issue 14's user pass a run of three characters
too (``池多大``, "how big is the pool"), while a run of two characters stays a word that
must stand in the text as typed. Both engines, real stores, and the CLI."""

from __future__ import annotations

import json

import pytest
from conftest import BOTH_ENGINES

from ledger import terms as T

ENGINES = BOTH_ENGINES

POOL = "数据库连接池的大小是20"
MEMORIES = [
    POOL,
    "缓存的过期时间是一小时",  # shares no pair with the pool question
    "データベース接続プールは20です",
    "設定ファイルはconfig.yamlにあります",
    "데이터베이스연결풀크기는20입니다",
    "我们的数据很多",  # shares one pair (数据) with the pool question
]


@pytest.fixture()
def led(ledger):
    for t in MEMORIES:
        ledger.remember(t, cluster="code", agent="a")
    return ledger


def _texts(led, query, **kw):
    return [m.text for m in led.search(query, limit=20, **kw).hits]


def test_query_phrases_of_short_and_long_runs():
    assert T.cjk_query_phrases("連接") == [["連接"]]
    assert T.cjk_query_phrases("連接池") == [["連接", "接池"], ["連接"], ["接池"]]
    assert T.cjk_query_phrases("哈哈哈") == [["哈哈", "哈哈"], ["哈哈"]]
    assert T.cjk_query_phrases("池") == [["池"]]
    assert T.cjk_query_phrases("数据库连接池多大") == [
        ["数据", "据库", "库连", "连接", "接池", "池多", "多大"],
        ["数据"], ["据库"], ["库连"], ["连接"], ["接池"], ["池多"], ["多大"]]
    assert T.cjk_query_phrases("哈哈哈哈") == [["哈哈", "哈哈", "哈哈"], ["哈哈"]]  # each pair once
    long = "".join(chr(0x4E00 + i) for i in range(200))
    phrases = T.cjk_query_phrases(long)
    assert len(phrases) == 1 + T.MAX_CJK_BIGRAMS and len(phrases[0]) == 199


# The user's example first (a Chinese question), then our own: Japanese, Korean, a
# question that adds words around the stored phrase.
@pytest.mark.parametrize(("question", "answer"), [
    ("数据库连接池多大", POOL),
    ("数据库连接池的大小是多少", POOL),
    ("データベースの接続プールの大きさ", "データベース接続プールは20です"),
    ("데이터베이스연결풀크기", "데이터베이스연결풀크기는20입니다"),
    ("设定文件在哪里的数据库连接池", POOL),
])
def test_a_question_written_without_spaces_finds_its_answer_first(led, question, answer):
    got = _texts(led, question)
    assert got and got[0] == answer, got
    assert "缓存的过期时间是一小时" not in got  # no pair in common: not found


def test_the_whole_run_ranks_above_texts_sharing_some_pairs(led):
    led.remember("问题是连接池多大", cluster="code", agent="a")  # holds the question's run whole
    got = _texts(led, "连接池多大")
    assert got[0] == "问题是连接池多大" and POOL in got


def test_more_shared_pairs_rank_higher(led):
    got = _texts(led, "数据库连接池多大")
    assert got.index(POOL) < got.index("我们的数据很多")


@pytest.mark.parametrize("mode", ["keyword", "hybrid", "fuzzy"])
def test_every_mode_reads_long_runs_alike(led, mode):
    assert _texts(led, "数据库连接池多大", mode=mode)[0] == POOL


def test_a_three_character_question_is_read_as_words(led):
    """The user's case: 池多大 ("how big is the pool") was one phrase and found nothing
    where the five-character 连接池多大 worked. Now the whole run ranks first and each of
    its pairs finds the rest (多大: "how big")."""
    size = led.remember("连接池设成多大合适", cluster="code", agent="a").memory.text  # holds 多大, not 池多大
    whole = led.remember("这个池多大", cluster="code", agent="a").memory.text
    for mode in ("hybrid", "keyword", "fuzzy"):
        got = _texts(led, "池多大", mode=mode)
        assert got[:2] == [whole, size], (mode, got)
        assert POOL not in got  # shares no pair with it
    # A three-character word still ranks the text that holds it whole first, and a text
    # sharing one of its pairs is found below it.
    got = _texts(led, "数据库")
    assert got[0] == POOL and "我们的数据很多" in got


def test_a_run_of_two_stays_a_word(led):
    assert POOL in _texts(led, "连接")
    assert POOL not in _texts(led, "連接")  # traditional 連 is another character: NFKC does not fold it to 连
    assert _texts(led, "接池") == [POOL]
    assert _texts(led, "接连") == []  # the same characters in another order are not the word


def test_cli_answers_a_chinese_question(cli):
    for text in (POOL, "缓存的过期时间是一小时"):
        rc, out, err = cli("remember", text, "--cluster", "code")
        assert rc == 0, err
    rc, out, err = cli("recall", "数据库连接池多大", "--json")
    assert rc == 0, err
    assert [m["text"] for m in json.loads(out)] == [POOL]
    rc, out, err = cli("recall", "数据库连接池多大")  # the text output an agent reads
    assert rc == 0 and POOL in out and "缓存" not in out, out
