"""Redaction of the secret formats a fresh-user pass found stored verbatim (findings 3
and 4 of 2026-12-01): key names that mean a secret (``*_PASS``, ``pass``, ``passwd``,
``pwd``, ``*_AUTH``, ``auth``, session ids, ``*_DSN``) in env, YAML, JSON and INI form;
credential files (.netrc, Docker config.json, .pgpass, .git-credentials, Cookie
headers, a Sentry DSN); secrets said in words. Each kind is tested both ways: the
secret goes, ordinary words that look alike stay.

The secrets are fabricated (no real credentials).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.redact import redact, redact_counted

#: The tester's Bash output (finding 3), verbatim.
FINDING_3 = (
    'DB_PASS=DbPass7\nsmtp_pass: SmtpPw6\nexport DB_PASS="my secret pass"\n'
    '{"pass": "PassOnly1", "auth": "AuthOnly3"}\n'
    "machine api.heroku.com login me password NetrcPw0rd77\n"
    '{"auths":{"ghcr.io":{"auth":"Ym9iOmdocF9zZWNyZXR0b2tlbjEyMw=="}}}\n'
    "Cookie: sessionid=8f14e45fceea167a5a36dedd4bea2543\n"
    "SENTRY_DSN=https://abc123def456@o1.ingest.sentry.io/1\n"
    "MY_SERVICE_AUTH=Zx9Yw8Vu7Ts6\n"
)
FINDING_3_SECRETS = ("DbPass7", "SmtpPw6", "my secret pass", "PassOnly1", "AuthOnly3", "NetrcPw0rd77",
                     "Ym9iOmdocF9zZWNyZXR0b2tlbjEyMw==", "8f14e45fceea167a5a36dedd4bea2543", "abc123def456",
                     "Zx9Yw8Vu7Ts6")


def test_finding_3_output_keeps_no_secret_and_every_key_name() -> None:
    out = redact(FINDING_3)
    for secret in FINDING_3_SECRETS:
        assert secret not in out, secret
    for kept in ("DB_PASS=", "smtp_pass: ", '"pass": ', '"auth": ', "machine api.heroku.com login me password ",
                 '"auths":{"ghcr.io":', "Cookie: sessionid=", "@o1.ingest.sentry.io/1", "MY_SERVICE_AUTH="):
        assert kept in out, kept
    assert redact(out) == out


@pytest.mark.parametrize(
    "text, secret, kind",
    [
        # key names: *_PASS, pass, passwd, pwd, *_AUTH, auth, session ids, in every syntax
        ("REDIS_PASS=r3disPw", "r3disPw", "password"),
        ("export MAIL_PASS='quoted pass phrase'", "quoted pass phrase", "password"),
        ("mail:\n  smtp_pass: Sm7pSecret\n", "Sm7pSecret", "password"),
        ('{"outer": {"inner": [{"pass": "Nested9Pw"}]}}', "Nested9Pw", "password"),
        ("[database]\npass = IniPw0rd\n", "IniPw0rd", "password"),
        ('[server]\npasswd = "T0mlPasswd"\n', "T0mlPasswd", "password"),
        ("db.pwd=Pr0pPwd", "Pr0pPwd", "password"),
        ("pwd: Sekr3tPwd", "Sekr3tPwd", "password"),
        ("KAFKA_AUTH=kAfKa_9auth", "kAfKa_9auth", "auth"),
        ("BASIC_AUTH=admin:Adm1nPw", "admin:Adm1nPw", "auth"),
        ('{"registry": {"auth": "dXNlcjpwYXNzd29yZDEyMw=="}}', "dXNlcjpwYXNzd29yZDEyMw==", "auth"),
        ("auth = Au7hValueXyz", "Au7hValueXyz", "auth"),
        ("PHPSESSID=9a8b7c6d5e4f3a2b1c0d", "9a8b7c6d5e4f3a2b1c0d", "session-id"),
        ('{"JSESSIONID": "q1w2e3r4t5y6u7i8"}', "q1w2e3r4t5y6u7i8", "session-id"),
        ("ASP.NET_SessionId=a1b2c3d4e5f6g7h8", "a1b2c3d4e5f6g7h8", "session-id"),
        ("session_cookie: s3ss10nC00kie", "s3ss10nC00kie", "session-id"),
        # DSNs: a key in the URL's user part, a password in it
        ("sentry_dsn: 'https://0123456789abcdef0123456789abcdef@o42.ingest.sentry.io/7'",
         "0123456789abcdef0123456789abcdef", "url-key"),
        ('Sentry.init({dsn: "https://pubKey12@sentry.example.com/3"})', "pubKey12", "url-key"),
        ("see https://a1b2c3d4e5f6a7b8c9d0@sentry.io/99 for errors", "a1b2c3d4e5f6a7b8c9d0", "url-key"),
        ("DATABASE_DSN=postgres://app:DsnPw0rd@db:5432/app", "DsnPw0rd", "url-password"),
        # credential files
        ("machine github.com\n  login bob\n  password Gh9NetrcPw\n", "Gh9NetrcPw", "password"),
        ("machine a.example login u password p4ss machine b.example login v password q5ss", "q5ss", "password"),
        ("default login anon password An0nPw", "An0nPw", "password"),
        ("FAILED test_upload - ValueError: bad netrc line 'machine h login u password NetLine9'", "NetLine9",
         "password"),
        ("db.example.com:5432:shop:shopper:PgPassw0rd\n", "PgPassw0rd", "password"),
        ("*:*:*:postgres:Star5Pass", "Star5Pass", "password"),
        ("https://bob:ghs_notAfixedFormat123@github.com\n", "ghs_notAfixedFormat123", "url-password"),
        ("Cookie: theme=dark; sessionid=abcdef0123456789; csrftoken=Zz9Yy8Xx7Ww6", "abcdef0123456789", "cookie"),
        ("Set-Cookie: __Host-sid=Q2hhbmdlTWUxMjM0; Path=/; Secure; HttpOnly", "Q2hhbmdlTWUxMjM0", "cookie"),
        ('{"headers": {"cookie": "_app_session=SeSsIoN0123456789"}}', "SeSsIoN0123456789", "cookie"),
        ("curl --cookie 'connect.sid=s%3AabcDEF123456' https://x", "s%3AabcDEF123456", "cookie"),
        # said in words
        ("Password for staging is Hunter2Staging!", "Hunter2Staging!", "password"),
        ("the api key is Ab12Cd34Ef56.", "Ab12Cd34Ef56", "api-key"),
        ("FYI the password was changed to N3wPassw0rd yesterday", "N3wPassw0rd", "password"),
        ("The prod DB password is 'c0rrect horse'", "c0rrect horse", "password"),
        ("access token for the CI: ciT0ken987654", "ciT0ken987654", "token"),
        ("The secret is `S3cretSauce`", "S3cretSauce", "secret"),
        ("token: abc123xyz", "abc123xyz", "token"),
    ],
)
def test_each_format_is_redacted(text: str, secret: str, kind: str) -> None:
    out = redact(text)
    assert secret not in out
    assert f"[REDACTED:{kind}]" in out
    assert redact(out) == out


@pytest.mark.parametrize(
    "text",
    [
        # look-alike key names
        "pass_rate=0.9\npassing: 12\npassed: true\nbypass=abc123XYZ\ncompass: north\npassive: yes",
        "author: Jane Doe\nauthor_email=jane@example.com\noauth_url=https://login.example.com/oauth",
        "oauth: enabled\noauth2=Token9Flow",
        "auth: true\nauth: required\nREQUIRE_AUTH=false\nSMTP_AUTH=login\nauth: basic\nauth=oauth2",
        '{"pass": 12, "fail": 0, "pass": "skipped"}',
        '{"pass": 0.95}',
        "PWD=/home/me/project\nOLDPWD=/tmp\npwd: ~/src",
        "session: 3\nsession_id: 5\nsession_length=30m",
        # a harness's own session ids (Gemini transcripts, hook payloads) are not secrets
        '{"sessionId":"g1","kind":"main"}\n{"session_id": "5b3e9c1a-0d2f-4e8b-9a7c-1f2e3d4c5b6a"}',
        # URLs with a user part that is a name, not a key
        "ssh://git@github.com/org/repo.git and https://first.last@example.com/x",
        "https://deploy-bot@ci.example.com/job/1",
        # cookies that carry no session
        "Cookie: lang=en; theme=dark",
        "cookie = request.cookies.get('sid')",
        "Set-Cookie: id=short; Path=/",
        # prose that names a secret without stating one
        "the password is required",
        "Password for staging is stored in 1Password",
        "the api key is in the vault",
        "max token is 100000 and the token limit is 8192",
        "the secret is out",
        "token = get_token()",
        "password reset emails go out daily",
        "The default password policy is strict",
        # lines shaped like .pgpass and .netrc that are not
        "a.c:12:5: error: expected ';'",
        "10:20:30:40:50",
        "src/app.py:12:url=http://x:80/y",
        "enter your password then the machine reboots",
    ],
)
def test_look_alikes_are_untouched(text: str) -> None:
    assert redact(text) == text


def test_redact_counted_counts_new_markers_only() -> None:
    out, n = redact_counted(FINDING_3)
    assert n == len(FINDING_3_SECRETS) and out == redact(FINDING_3)
    assert redact_counted(out) == (out, 0)
    assert redact_counted("nothing to see") == ("nothing to see", 0)
    assert redact_counted("") == ("", 0)


FRAGMENTS = [
    "pass", "PASS", "_pass", "auth", "_AUTH", "passwd", "pwd", "sessionid", "dsn", "DSN", "Cookie: ",
    "Set-Cookie: ", "--cookie ", "machine ", "login ", "password ", "default ", " is ", " for ", " was set to ",
    "token", "api key", "https://", "@", ":", ";", "=", ": ", '"', "'", "`", " ", "\n", "/", "*", "5432",
    "Ab12Cd34Ef56", "abcdef0123456789", "[REDACTED:cookie]", "[REDACTED:url-key]", "!", ".", "$", "%3A",
]
secretish = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=6), max_size=30).map("".join)


@settings(max_examples=600, deadline=None)
@given(secretish)
def test_new_formats_never_raise_and_are_idempotent(text: str) -> None:
    once = redact(text)
    assert isinstance(once, str)
    assert redact(once) == once


def _whole_text(text: str, rx, repl, wanted) -> str:
    """What redact did before it ran its line-local patterns line by line: the
    pattern over the whole text."""
    return rx.sub(repl, text)


@settings(max_examples=600, deadline=None)
@given(st.lists(secretish, min_size=1, max_size=8), st.sampled_from(["\n", "\r\n", "\n\n", " \n\t"]))
def test_line_by_line_redaction_equals_the_whole_text_pass(parts: list[str], sep: str) -> None:
    """The assignment, flag, sentence and .pgpass patterns run only on the lines that
    hold one of their trigger words (redact._by_line, 2x faster on code and prose):
    exact only because none of them can match across a line break. Checked against
    running each over the whole text, on generated secret-ish lines and on the tester's
    output, so a pattern that starts to span lines fails here."""
    import ledger.redact as R

    text = sep.join(parts)
    fast = redact(text)
    original = R._by_line
    try:
        R._by_line = _whole_text
        slow = redact(text)
    finally:
        R._by_line = original
    assert fast == slow


def test_line_by_line_redaction_on_multi_line_examples(monkeypatch) -> None:
    import ledger.redact as R

    texts = [FINDING_3, FINDING_3.replace("\n", "\r\n"), "x = 1\n" * 50 + FINDING_3 + "y = 2\n" * 50,
             "password for the staging db\nis Hunter2Staging!\nmysql -u root -pS3cret\n--token\nabc123XYZ\n",
             "db.example.com:5432:app:alice:Pg!pass99\nDEFAULT_PASSWORD = 'Xy7#qq99'\n"]
    fast = [redact(t) for t in texts]
    monkeypatch.setattr(R, "_by_line", _whole_text)
    assert fast == [redact(t) for t in texts]
    assert all(s not in fast[0] for s in FINDING_3_SECRETS)


@pytest.mark.parametrize("text, secrets, kept", [
    # JSON text inside a JSON string (an MCP result, a log line's "body"): the quotes are
    # \" and line breaks are the two characters \n (found checking nested hook payloads).
    ('{"text": "{\\"password\\": \\"hunter2x\\"}"}', ["hunter2x"], '{\\"password\\": \\"[REDACTED:password]\\"}'),
    ('{"env": "password: abc123\\nPASSWORD = Pl4inPassw0rd\\nB=2"}', ["abc123", "Pl4inPassw0rd"],
     "\\nPASSWORD = [REDACTED:password]\\nB=2"),
    ('"log": "POST /login body={\\"user\\":\\"bob\\",\\"api_key\\":\\"Zx9Yw8Vu7Ts6\\"}"', ["Zx9Yw8Vu7Ts6"],
     '\\"user\\":\\"bob\\",\\"api_key\\":\\"[REDACTED:api-key]\\"'),
    ('"A=1\\r\\nDB_PASS=DbPass7\\tx\\r\\nTOKEN=abcdefghij123"', ["DbPass7", "abcdefghij123"], "\\tx\\r\\nTOKEN="),
])
def test_escaped_json_text_loses_every_secret(text: str, secrets: list[str], kept: str) -> None:
    out = redact(text)
    assert not any(s in out for s in secrets), out
    assert kept in out
    assert redact(out) == out
