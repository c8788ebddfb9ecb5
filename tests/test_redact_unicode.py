"""Secrets written with Unicode look-alikes are redacted as their ASCII spelling is
(review of 2026-12-02: ``password：hunter2secret``, with a FULLWIDTH COLON, was stored
as typed while ``password: hunter2secret`` was not). The kind: fullwidth letters and
separators, the small and vertical colon forms, Unicode spaces, invisible characters
inside a key (zero-width space and joiners, soft hyphen, BOM), Cyrillic and Greek
letters drawn like Latin ones, typographic quotes and dashes. Matched on the folded view
(``ledger.redact.fold``), cut in the original: everything but the secret is stored as
written. docs/watcher.md "Redaction". The secrets are fabricated."""

from __future__ import annotations

import json
import random

import pytest
from conftest import spool_settled, store_sql
from fakes.hooks import payload, run_hook
from hypothesis import given, settings
from hypothesis import strategies as st
from test_redact_formats import FRAGMENTS

from ledger.redact import clip_value, fold, redact, redact_counted

ZWSP, ZWJ, SHY, BOM, NBSP, IDEO = "\u200b", "\u200d", "\u00ad", "\ufeff", "\u00a0", "\u3000"


def fullwidth(s: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in s)


@pytest.mark.parametrize("text, secret, kind, kept", [
    # The review's example and its ASCII twin.
    ("password：hunter2secret", "hunter2secret", "password", "password："),
    ("password: hunter2secret", "hunter2secret", "password", "password: "),
    # Fullwidth letters in the key, fullwidth separators.
    (fullwidth("password") + "=hunter2secret", "hunter2secret", "password", fullwidth("password") + "="),
    (fullwidth("API_KEY") + "=Zx9Yw8Vu7Ts6", "Zx9Yw8Vu7Ts6", "api-key", fullwidth("API_KEY") + "="),
    ("DB_PASSWORD＝hunter2secret", "hunter2secret", "password", "DB_PASSWORD＝"),
    (fullwidth("export GITHUB_TOKEN=") + "abcdefghij123", "abcdefghij123", "token", fullwidth("GITHUB_TOKEN=")),
    # The small and vertical colon forms, and the ratio sign that looks like a colon.
    ("secret︓S3cr3tValue", "S3cr3tValue", "secret", "secret︓"),
    ("secret﹕S3cr3tValue", "S3cr3tValue", "secret", "secret﹕"),
    ("api_key∶Ab12Cd34Ef56", "Ab12Cd34Ef56", "api-key", "api_key∶"),
    # Unicode spaces around the separator.
    (f"password{NBSP}={NBSP}hunter2secret", "hunter2secret", "password", f"password{NBSP}={NBSP}"),
    (f"token{IDEO}：{IDEO}Abc123xyz tail", "Abc123xyz", "token", f"token{IDEO}：{IDEO}"),
    ("client_secret\u2009=\u202fabcdef123456", "abcdef123456", "secret", "client_secret\u2009=\u202f"),
    # Invisible characters inside the key, around the separator and inside the value.
    (f"pass{ZWSP}word=hunter2secret", "hunter2secret", "password", f"pass{ZWSP}word="),
    (f"DB_PASS{SHY}WORD = 's3cr3t!xyz'", "s3cr3t!xyz", "password", f"DB_PASS{SHY}WORD = '"),
    (f"{BOM}api{ZWJ}_key{ZWSP}={ZWSP}Ab12{ZWSP}Cd34Ef56", "Cd34Ef56", "api-key", f"{BOM}api{ZWJ}_key{ZWSP}={ZWSP}"),
    # Cyrillic and Greek letters drawn like Latin ones.
    ("p\u0430ssword=hunter2secret", "hunter2secret", "password", "p\u0430ssword="),
    ("\u0455\u0435\u0441r\u0435t: S3cr3tValue", "S3cr3tValue", "secret", "\u0455\u0435\u0441r\u0435t: "),
    ("t\u03bfken = Abc123xyz", "Abc123xyz", "token", "t\u03bfken = "),
    # Typographic quotes and dashes an editor made of ASCII ones.
    ("password=\u201chunter 2 secret\u201d", "hunter 2 secret", "password", "password=\u201c"),
    ("vault login \u2014token Hunter2secret -x", "Hunter2secret", "token", "vault login \u2014token "),
    # JSON with a look-alike key, and a secret said in words.
    ('{"' + fullwidth("token") + '": "abc123secret"}', "abc123secret", "token", '{"' + fullwidth("token") + '": "'),
    ('{"db": {"pass\u200bword"：\u3000"correct horse 9"}}', "correct horse 9", "password", '"pass\u200bword"：'),
    ("the " + fullwidth("password") + " is Hunter2Staging!", "Hunter2Staging", "password", fullwidth("password")),
    # Other patterns see the folded view too.
    ("Authorization：Bearer abc.DEF-123_456xyz", "abc.DEF-123_456xyz", "bearer-token", "Authorization：Bearer "),
    ("machine h login u password\u00a0NetrcPw0rd77", "NetrcPw0rd77", "password", "password\u00a0"),
])
def test_look_alike_spellings_are_redacted_in_the_original(text, secret, kind, kept):
    out = redact(text)
    assert secret not in out and secret not in fold(out)
    assert f"[REDACTED:{kind}]" in out
    assert kept in out, "the key and separator are kept as written"
    assert redact(out) == out


def test_only_the_secret_changes():
    """Nothing is normalised: look-alikes and invisible characters outside the secret are
    stored as typed, one inside it goes with it."""
    key = fullwidth("password")
    text = f"x{ZWSP} 注意 {key}＝hun{ZWSP}ter2x\u3000ｔａｉｌ {SHY}end\npass{ZWSP}word: 'Tr0ub{SHY}4dor' ok"
    assert redact(text) == (f"x{ZWSP} 注意 {key}＝[REDACTED:password]\u3000ｔａｉｌ {SHY}end\n"
                            f"pass{ZWSP}word: '[REDACTED:password]' ok")
    assert redact_counted(text) == (redact(text), 2)


@pytest.mark.parametrize("text", [
    # CJK prose writes a fullwidth colon after any label and runs on without a space.
    "Token：用于认证的字符串，放在请求头里",
    "token：见下文",
    "密码：请向管理员索取",
    "Password：は必須です",
    # Typographic apostrophes and dashes in English prose.
    "it\u2019s the password\u2014really, the token\u2019s scope is read-only",
    "The password \u2014 not the token \u2014 is what expired",
    "the old\u2014password reset flow",
    "\u201cThe password is required\u201d, said the docs",
    # Russian and Greek words for the same things: no Latin look-alike spelling.
    "пароль: обязателен, токен: см. ниже, секрет: нет",
    "ТОКЕН: смотрите документацию",
    "Ο κωδικός: απαιτείται",
    # Fullwidth prose that is not a setting.
    "ｔｈｅ ｐａｓｓｗｏｒｄ ｉｓ ｒｅｑｕｉｒｅｄ",
    "In database.yml, password： is required",
    "max_tokens＝4096, ｂｙｐａｓｓ＝true, author：me",
])
def test_prose_with_unicode_keeps_its_words(text):
    assert redact(text) == text


_LOOK = {"a": "\u0430", "e": "\u0435", "o": "\u043e", "p": "\u0440", "c": "\u0441", "x": "\u0445", "y": "\u0443",
         "A": "\u0391", "E": "\u0395", "O": "\u039f", "P": "\u03a1", "T": "\u03a4", "K": "\u039a"}
_INVISIBLE = (ZWSP, ZWJ, SHY, BOM, "\u200c", "\u2060")
_SPACES = (NBSP, IDEO, "\u2009", "\u202f", "\u2007")


def disguise(text: str, seed: int) -> str:
    """``text`` with random characters written as look-alikes and invisible characters
    put in between: what fold() turns back into ``text``."""
    rnd = random.Random(seed)
    out = []
    for c in text:
        r = rnd.random()
        if c == " " and r < 0.5:
            c = rnd.choice(_SPACES)
        elif "!" <= c <= "~" and r < 0.25:
            c = fullwidth(c)
        elif c in _LOOK and r < 0.4:
            c = _LOOK[c]
        out.append(c)
        if rnd.random() < 0.1:
            out.append(rnd.choice(_INVISIBLE))
    return "".join(out)


secretish = st.lists(st.sampled_from(FRAGMENTS) | st.text(alphabet=st.characters(max_codepoint=126), max_size=6),
                     max_size=20).map("".join)


@settings(max_examples=500, deadline=None)
@given(secretish, st.integers(0, 2**32))
def test_a_disguised_text_loses_what_its_ascii_spelling_loses(text, seed):
    """Exact, for every pattern: the folded view of the redacted disguise is the
    redacted ASCII text (the same matches, cut at the same places in the original)."""
    d = disguise(text, seed)
    assert fold(d) == text
    out = redact(d)
    assert fold(out) == redact(text)
    assert redact(out) == out


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_any_text_never_raises_and_is_idempotent(text):
    out = redact(text)
    assert isinstance(out, str) and redact(out) == out


def test_a_secret_under_a_key_of_a_structured_value():
    """A hook's tool input and response arrive as JSON objects: the key of a string names
    it as it does in JSON text, whatever the key's spelling."""
    value = {"request": {"options": [{"env": {fullwidth("token"): "Abc123secret", "DB_PASSWORD": "hunter2x",
                                              f"pass{ZWSP}word": 'a"b c9', "max_tokens": "4096xyz",
                                              "auth": "required", "note": "password：hunter2secret"}}]}}
    env = clip_value(value)["request"]["options"][0]["env"]
    assert env == {fullwidth("token"): "[REDACTED:token]", "DB_PASSWORD": "[REDACTED:password]",
                   f"pass{ZWSP}word": "[REDACTED:password]", "max_tokens": "4096xyz", "auth": "required",
                   "note": "password：[REDACTED:password]"}


def test_no_disguised_secret_reaches_the_store_through_the_hook(tmp_path, store_target):
    """A real ``ledger hook claude-code PostToolUse`` process: the secrets nested in the
    tool's input (as JSON objects and as text) and in its output (JSON text inside an
    MCP result) are stored redacted, SQLite and PostgreSQL."""
    secrets = ["Hunter2Secret99", "Zx9Yw8Vu7Ts6", "Abc123tokenXyz", "S3cr3tValue42", "Pl4inPassw0rd"]
    text = (f"password：{secrets[0]}\n{fullwidth('API_KEY')}＝{secrets[1]}\n"
            f"pass{ZWSP}word{NBSP}={NBSP}{secrets[4]}")
    home, db = tmp_path / "home", store_target
    p = payload("PostToolUse", cwd=tmp_path, tool_name="mcp__cfg__set", tool_use_id="toolu_u",
                tool_input={"config": {fullwidth("token"): secrets[2], "nested": [{"text": text}]}},
                tool_response=[{"type": "text", "text": json.dumps(
                    {"result": {"s\u0435cret": secrets[3], "env": text}}, ensure_ascii=False)}])
    r = run_hook("PostToolUse", p, env={"LEDGER_HOME": home, "LEDGER_DB": db})
    assert r.returncode == 0 and r.stdout == b"", r
    spool_settled(db, home)
    [(inp, out)] = store_sql(db, "SELECT input, output FROM observations")
    stored = inp + out
    for s in secrets:
        assert s not in stored, (s, stored)
    assert fullwidth("token") in inp and "password：[REDACTED:password]" in inp
    assert "[REDACTED:secret]" in out
    log = (home / "hook.log").read_text() if (home / "hook.log").exists() else ""
    assert not any(s in log for s in secrets)


def test_remember_stores_a_disguised_secret_redacted(cli):
    out, err = cli("remember", f"staging db: {fullwidth('PGPASSWORD')}＝filesecret99 and pass{ZWSP}word：Tr0ub4dor9",
                   "--cluster", "code", "--json")[1:]
    d = json.loads(out)
    assert d["redacted"] == 2 and "filesecret99" not in d["text"] and "Tr0ub4dor9" not in d["text"]
    assert d["text"] == (f"staging db: {fullwidth('PGPASSWORD')}＝[REDACTED:password] and "
                         f"pass{ZWSP}word：[REDACTED:password]")
