"""Redaction leaves prose alone (fresh-user defect: ``password: is required`` was stored
as ``password: [REDACTED:password] required``, ``token: field``, ``pass: `strength:<0```
and ``--pass: maxlen`` lost their words, and an ingest of docs/search.md replaced "2
secrets" in prose and ate a closing backtick). A ``key: value`` written in a sentence
redacts the value only when it looks like a credential; an unquoted value never takes
the backtick or punctuation that closes it. docs/watcher.md "Redaction". Secrets
fabricated. The true positives are in tests/test_redact_formats.py and
tests/test_watcher_redact.py, unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ledger.redact import redact, redact_counted

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("text", [
    # The reported examples.
    "In database.yml, password: is required for production",
    "The token: field in config.yaml is optional",
    "A filter no memory can pass: `strength:<0` is empty",
    "The CLI flag --pass: maxlen is documented",
    # More of the kind: a key word and a colon in a sentence, an ordinary word or code after it.
    "Note that the secret: value must be set before deploy",
    "Each API key: one per service, rotated monthly",
    "the compounds (each one token: `x` + the hex of its UTF-8)",
    "it names a secret: `password`, `passwd`, `passphrase`",
    'the value must look like a credential: "the password is required", "the api key is in the vault"',
    "We ask for the password: Required on first login",
    "The session token: 8192 characters at most",
    "| `empty-range` | a filter no memory can pass: `strength:<0` or `strength:>100` |",
    "Known placeholder URL (`postgresql://user:password@host:5432/db?sslmode=require`).",
    # A sentence wrapped so that the key starts a line: an English function word is never a secret.
    "In database.yml, the\npassword: is required for production",
    "which\ntoken: the one the CLI prints",
    # A setting line whose value is a word that says what the value must be, not the value.
    "password: must be at least 12 characters",
    "secret: see Vault path kv/prod/db",
    "api_key: required in settings.toml",
    "DB_PASSWORD=required",
    '{"client_secret": "mandatory", "token": "unset"}',
])
def test_prose_keeps_its_words(text):
    assert redact(text) == text


@pytest.mark.parametrize("text, kept", [
    # The closing backtick, comma or period of a code span is not part of the value.
    ("cloud storage connection strings (`AccountKey=`, SAS `sig=`).", "(`AccountKey=`, SAS `sig=`)."),
    ("client flags (`mysql -pS3cret`, `sshpass -p`, `redis-cli -a`)", "`, `sshpass -p`, `redis-cli -a`)"),
    ("run `--password Hunter2x`.", "`."),
    ("see `DB_PASSWORD=hunter2`, then restart", "`, then restart"),
    ("mentions `mysql -p`, about 0.03 s per MB", "`mysql -p`, about 0.03 s per MB"),
    ("claim with `PGPASSWORD=` (patterns compile)", "`PGPASSWORD=` (patterns compile)"),
])
def test_redaction_never_swallows_the_punctuation_around_a_value(text, kept):
    out = redact(text)
    assert kept in out, out
    assert out.count("`") == text.count("`")


@pytest.mark.parametrize("text, secret", [
    # In a sentence, a value that looks like a credential still goes.
    ("connect failed with password: Hunter2x", "Hunter2x"),
    ("the bot token: xq9Zr8Ws7Vt6 was rotated", "xq9Zr8Ws7Vt6"),
    ("the password: `Hunter2!` works", "Hunter2!"),
    ("she said the password: 'S3cret pass' is old", "S3cret pass"),
    ("login with pass: 482913 today", "482913"),
    # Inline code and settings are config, not prose: any literal goes.
    ("Set `password: hunter` in the config", "hunter"),
    ("{user: bob, password: hunter}", "hunter"),
    ("const c = { user: 'bob', password: 'hunter' }", "hunter"),
    ("  - password: hunter", "hunter"),
    ("# password: hunter", "hunter"),
    ("db:\n  password: hunter\n", "hunter"),
    ("then PGPASSWORD=hunter psql", "hunter"),
    # A backtick inside a value is part of it.
    ("export DB_PASSWORD=abc`def", "abc`def"),
])
def test_credentials_in_sentences_and_settings_still_go(text, secret):
    out = redact(text)
    assert secret not in out and "[REDACTED:" in out, out
    assert redact(out) == out


@pytest.mark.parametrize("doc", ["docs/search.md", "docs/cli.md", "docs/watcher.md", "docs/benchmarks.md",
                                 "docs/postgres.md", "README.md"])
def test_the_projects_own_docs_keep_their_markdown(doc):
    """The reported ingest: our docs hold no secrets. What redaction still replaces in
    them is a placeholder in a credential-file example (``password P``, ``-pX``,
    ``first_pass: done``: docs/watcher.md "Known limits"), never a closing backtick."""
    text = (ROOT / doc).read_text()
    out, n = redact_counted(text)
    for before, after in zip(text.split("\n"), out.split("\n")):
        assert before.count("`") == after.count("`"), (before, after)
    assert n <= (4 if doc == "docs/watcher.md" else 0), [a for a in out.split("\n") if "[REDACTED:" in a]


def test_remember_stores_prose_as_typed_and_warns_of_nothing(cli):
    """The reported CLI examples, through a real ``ledger remember`` on both engines."""
    for text in ("In database.yml, password: is required for production",
                 "The token: field in config.yaml is optional",
                 "A filter no memory can pass: `strength:<0` is empty",
                 "The CLI flag --pass: maxlen is documented"):
        rc, out, err = cli("remember", "--db", str(cli.db), "--cluster", "code", "--json", "--", text, db=None)
        assert rc == 0, err
        assert json.loads(out)["text"] == text and json.loads(out)["redacted"] == 0
        assert "redacted" not in err
    rc, out, err = cli("remember", "--db", str(cli.db), "--cluster", "code", "--json", "--",
                       "connect failed with password: Hunter2x", db=None)
    assert rc == 0 and "Hunter2x" not in out and json.loads(out)["redacted"] == 1


def test_ingest_of_the_search_doc_replaces_nothing(cli, tmp_path):
    doc = tmp_path / "search.md"
    doc.write_text((ROOT / "docs/search.md").read_text())
    rc, out, err = cli("ingest", str(doc), "--cluster", "code")
    assert rc == 0, err
    assert "secret" not in err, err
