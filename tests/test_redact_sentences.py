"""A password said in a sentence in another language loses its value (session 10: "das
Passwort ist hunter2", "le mot de passe est hunter2", "la contraseña es hunter2", "密码是
hunter2", "パスワードは hunter2" were stored as given; only "word: value" was read). The
kind: each language's word for "password" followed by its own "is" (ist/lautet, est, es,
é, is, är, jest/to, это/—, 是/为, は/が, 는/은), optionally with "for X" between, and
the value when it looks like a credential. Also checked: the words are matched in any
case (lowercase, capitalised, upper case) and the rule for their values does not depend
on it. docs/watcher.md "Redaction". The secrets are fabricated."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.redact import fold, redact


@pytest.mark.parametrize("text, secret", [
    ("das Passwort ist hunter2", "hunter2"),
    ("Das Passwort für den Server ist Hunter2x!", "Hunter2x"),
    ("Passwort lautet \"hunter2 x\"", "hunter2 x"),
    ("das Kennwort war Geh31m!", "Geh31m!"),
    ("le mot de passe est hunter2", "hunter2"),
    ("le mot de passe du serveur est hunter2", "hunter2"),
    ("la contraseña es hunter2", "hunter2"),
    ("La contraseña de la base de datos es hunter2.", "hunter2"),
    ("a senha é hunter2", "hunter2"),
    ("A senha do banco é hunter2", "hunter2"),
    ("het wachtwoord is hunter2", "hunter2"),
    ("lösenordet är hunter2", "hunter2"),
    ("hasło to hunter2", "hunter2"),
    ("Hasło jest hunter2", "hunter2"),
    ("пароль — hunter2", "hunter2"),
    ("пароль это hunter2", "hunter2"),
    ("пароль - це hunter2", "hunter2"),
    ("密码是 hunter2", "hunter2"),
    ("密码是hunter2", "hunter2"),
    ("密码为 hunter2", "hunter2"),
    ("服务器的密码是hunter2。", "hunter2"),
    ("密碼是 hunter2", "hunter2"),
    ("パスワードは hunter2", "hunter2"),
    ("パスワードは「hunter2」です", "hunter2"),
    ("비밀번호는 hunter2", "hunter2"),
    ("비밀번호는 hunter2입니다", "hunter2"),
])
def test_a_password_said_in_a_sentence(text, secret):
    out = redact(text)
    assert secret not in out and "[REDACTED:password]" in out, out
    assert redact(out) == out


@pytest.mark.parametrize("text", [
    "das Passwort ist falsch",
    "das Passwort ist zu kurz",
    "Das Passwort ist 12 Zeichen lang",
    "le mot de passe est obligatoire",
    "le mot de passe est le même que hier",
    "la contraseña es incorrecta",
    "la contraseña es de 8 caracteres",
    "a senha é obrigatória",
    "het wachtwoord is verlopen",
    "пароль это секрет",
    "密码是必填的",
    "密码为空",
    "パスワードは8文字以上です",
    "パスワードが違います",
    "비밀번호는 필수입니다",
])
def test_a_sentence_about_a_password_keeps_its_words(text):
    assert redact(text) == text


WORDS = ["passwort", "kennwort", "contraseña", "senha", "mot de passe", "пароль", "hasło", "wachtwoord", "lösenord",
         "şifre"]


@pytest.mark.parametrize("word", WORDS)
@pytest.mark.parametrize("case", [str.lower, str.capitalize, str.upper, str.title])
@pytest.mark.parametrize("sep", [": ", "=", " = ", "："])
def test_the_words_count_in_any_case(word, case, sep):
    """Lowercase, capitalised and upper-case spellings lose the same: a value that looks
    like a credential goes, a one-letter value stays (the rule is the value's, not the
    word's)."""
    w = case(word)
    assert redact(f"{w}{sep}Hunter2x") == f"{w}{sep}[REDACTED:password]"
    assert redact(f"{w}{sep}x") == f"{w}{sep}x"


SENTENCES = ["das Passwort ist {}", "Das Passwort für staging ist {}", "le mot de passe est {}",
             "la contraseña es {}", "a senha é {}", "het wachtwoord is {}", "hasło to {}", "пароль это {}",
             "密码是{}", "密码为 {}", "パスワードは {}", "パスワードは「{}」です", "비밀번호는 {}", "contraseña: {}",
             "Passwort={}", "パスワード：{}"]
secret_values = st.text("abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789!@#", min_size=6,
                        max_size=23).map(lambda s: s + "7")


@settings(max_examples=100, deadline=None)
@given(secret_values, st.sampled_from(SENTENCES), st.sampled_from(["", ".", "。", " bitte ändern"]))
def test_a_credential_in_any_foreign_sentence_never_survives(v, sentence, after):
    text = sentence.format(v) + after
    out = redact(text)
    assert v not in out, (text, out)
    assert redact(out) == out
    assert fold(redact(fold(text))) == fold(out)
