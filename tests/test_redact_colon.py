"""A sentence that names a secret and then a colon after its verb ("the password is:
hunter2", "The API key is: 8f14...") kept the value: the phrase rule wanted the value
right after "is". The colon may follow the verb now; the value is judged as before
(only a credential-like value goes, "The password is: required for login" stays).
Secrets fabricated. Pure checks, then the real CLI's stored text."""

from __future__ import annotations

import json

import pytest
from test_cli import ok

from ledger.redact import redact

SECRET = [
    ("the password is: Hunter2x", "Hunter2x", "password"),
    ("the token is: abc123XYZdef456", "abc123XYZdef456", "token"),
    ("The API key is: 8f14e45fceea167a5a36dedd4bea2543", "8f14e45fceea167a5a36dedd4bea2543", "api-key"),
    ("the secret is : Zx9kQ2vLp7xx", "Zx9kQ2vLp7xx", "secret"),
    ("the password for prod was: 'N3wPassw0rd'", "N3wPassw0rd", "password"),
    ("the access token will be:\tghx_7Hq2mZ9pLw", "ghx_7Hq2mZ9pLw", "token"),
    # a word that says what a value must be is kept; one that only starts with it is not
    ("password: mustang99", "mustang99", "password"),
    ("secret: seeker42", "seeker42", "secret"),
    # a dash between spaces says "is" in notes (the hostile-user pass's second round)
    ("Password — hunter2x9", "hunter2x9", "password"),
    ("the staging password - Hunter2x9", "Hunter2x9", "password"),
    ("password – Tr0ub4dor9 (rotated monthly)", "Tr0ub4dor9", "password"),
    ("api key — 8f14e45fceea167a5a36dedd4bea2543", "8f14e45fceea167a5a36dedd4bea2543", "api-key"),
]


@pytest.mark.parametrize("text, secret, kind", SECRET)
def test_a_colon_after_the_verb_does_not_keep_the_secret(text, secret, kind):
    out = redact(text)
    assert secret not in out and f"[REDACTED:{kind}]" in out, out


@pytest.mark.parametrize("text", [
    "The password is: required for login",
    "the token is: the bearer header",
    "The rule for passwords is: 12 characters",
    "The API key is: optional in dev",
    "password - see the vault",
    "the password - required",
    "token - a JWT from auth.example.com",
    "pages 1-2 cover the password reset",
    "a password-protected zip",
])
def test_a_colon_after_the_verb_keeps_prose(text):
    assert redact(text) == text


def test_remember_stores_the_sentence_without_the_secret(cli):
    text, secret, kind = SECRET[1]
    res = json.loads(ok(*cli("remember", text, "--cluster", "code", "--json")))
    assert secret not in res["text"] and f"[REDACTED:{kind}]" in res["text"] and res["redacted"] == 1, res
