"""Secret redaction and size bounding for text that leaves the process or is stored.

docs/design.md (watcher): trajectories sent to the LLM are bounded and secrets are redacted
before anything leaves the process or is stored. Tool outputs are the main source: env
dumps, config files, ``curl -H 'Authorization: ...'``, ``.env`` reads, git remotes.

:func:`redact` replaces each secret with ``[REDACTED:<kind>]`` and leaves everything
else byte-for-byte alone. Kinds:

==================  =========================================================
private-key         PEM/OpenSSH/PGP ``-----BEGIN ... PRIVATE KEY...-----`` blocks
                    (a block cut off before its END line is redacted to its end)
aws-access-key      ``AKIA...``/``ASIA...`` access key ids
github-token        ``ghp_ gho_ ghu_ ghs_ ghr_`` tokens and ``github_pat_`` tokens
gitlab-token        ``glpat-...``
anthropic-key       ``sk-ant-...``
openai-key          ``sk-...``, ``sk-proj-...`` (must contain a digit; 20+ chars)
stripe-key          ``sk_live_`` / ``rk_live_`` / ``sk_test_``...
google-api-key      ``AIza...``
slack-token         ``xoxb- xoxp- xoxa- xoxr- xoxs- xoxo-``; slack-webhook URLs
npm-token, huggingface-token   ``npm_...``, ``hf_...``
jwt                 three base64url segments starting ``eyJ``
bearer-token        the credential after ``Authorization:`` (scheme kept) or ``Bearer``
url-password        the password in ``scheme://user:password@host`` (user kept)
password, secret,   the value of ``password=``, ``secret:``, ``"token": "..."``,
token, api-key      ``API_KEY=...``, ``--password=...``, ``DB_PWD=``,
                    ``SIGNING_KEY=`` and similar assignments in env/shell/ini/yaml/
                    json/CLI styles (``.env`` lines); the key name is kept
password (CLI)      client flags not spelled "password": ``mysql -pSECRET``,
                    ``sshpass -p``, ``redis-cli -a``, ``docker login -p``,
                    ``curl -u user:SECRET``
cloud-storage-key   ``AccountKey=`` / ``SharedAccessKey=`` in connection strings,
                    ``sig=`` of a SAS URL
auth                the value of an ``auth``/``*_AUTH`` key (Docker ``auths.*.auth``) when it
                    looks like a credential (not ``auth: required`` or a method name)
session-id          ``PHPSESSID=``, ``JSESSIONID=``, ``ASP.NET_SessionId=``, ``session_cookie:``
cookie              values of ``Cookie:`` (all) and ``Set-Cookie:`` (the first), 8+ chars
url-key             a key as a URL's user part: ``https://KEY@o1.ingest.sentry.io/1``
                    (any user part under a ``*_DSN``/``dsn`` key, else 16+ alnum with digits)
password (files)    ``.netrc`` ``machine H login U password P``, ``.pgpass`` lines
                    ``host:port:db:user:P``
in words            "Password for staging is X", "the api key is X", "token was set to
                    X": the value, when it looks like a credential
more token formats  Stripe ``whsec_``, Square ``sq0atp-``, Braintree
                    ``access_token$production$``, Discord bot tokens and webhooks,
                    Telegram bot tokens, SendGrid ``SG.``, PyPI ``pypi-``,
                    DigitalOcean ``dop_v1_``
==================  =========================================================

:func:`clip_value` applies :func:`clip` to every string at every depth of a JSON-like
value (tool inputs and responses) and bounds item counts, depth and total size.

Assignments need the secret word at the *end* of the key (``DB_PASSWORD``,
``access_token``, ``OPENAI_API_KEY``), so ``max_tokens: 5``, ``tokenizer=...`` and
``PASSWORD_FILE=/run/x`` stay; the short words ``pass``, ``pwd`` and ``auth`` must be a
whole word of the key (``DB_PASS``, not ``bypass``, ``compass``, ``author``, ``oauth``).
Values that are clearly not literals stay too: empty,
``true/false/null``, short numbers, ``$VAR``/``${VAR}``/``<placeholder>``/``***``, and
unquoted code expressions (``token = get_token()``, ``secret = settings.SECRET``).

A secret written with Unicode look-alikes (``password：x``, ``ｔｏｋｅｎ=x``, a zero-width
space, a combining accent, a ligature or a Cyrillic letter in the key) is matched on the
text's folded view (:func:`fold`) and cut out of the original, which keeps its own
characters elsewhere. "Password" in a few other languages before a separator
(``密码：x``, ``Passwort=x``, ``пароль: x``) counts when the value looks like a credential.

Structure names values too: a string is judged by the nearest secret-named key above it
at any depth (``{"password": ["x"]}``, ``{"credentials": [{"value": "x"}]}``), and a
name/value pair (``{"name": "API_KEY", "value": "x"}``, ``["password", "x"]``, YAML
``name:``/``value:`` lines) as that key and value, in JSON values (:func:`clip_value`),
JSON text, code literals (Python's repr and kwargs, JavaScript object literals, Ruby
hashes) and YAML blocks (``api_keys:`` then ``- x`` lines) alike. Inside a secret block
a key whose last word names who/where/which/when (``username``, ``region``) keeps its
value; any other key is a label whose value goes only when it looks like a credential.
"Password" said in a sentence in another language ("das Passwort ist x", "密码是x")
counts as it does before a separator.

Properties (tested with Hypothesis): never raises; idempotent
(``redact(redact(t)) == redact(t)``); a disguised text loses exactly what its ASCII
spelling loses (``fold(redact(d)) == redact(fold(d))``).

:func:`bound` keeps the head and tail of a long text around a
``… [N chars cut] …`` marker. :func:`clip` is ``bound(redact(text))`` made cheap for
huge texts (it only redacts what it keeps, plus a safety margin).

Stdlib only. The patterns are :class:`ledger.regex.Lazy`: compiled on first use (from
the stored matcher code, without ``re``'s parser), so importing this module compiles
nothing, a text without any trigger word never compiles the pattern at all, and
``ledger remember`` (which redacts every claim) does not import ``re``.
"""

from __future__ import annotations

from ledger.regex import ASCII, IGNORECASE, Lazy
from ledger.text import LATIN_LOOKALIKES, QUERY_STOPWORDS

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover - annotations only: `re` stays off remember's start-up
    import re

_A = ASCII
_AI = ASCII | IGNORECASE


def _tag(kind: str) -> str:
    return f"[REDACTED:{kind}]"


# Values we never treat as secrets (placeholders, references, already redacted, the
# indicator of a YAML block scalar).
_NOT_SECRET = Lazy(r"""(?ix)
    (?: \[REDACTED | \$ | %[A-Za-z_(] | < | \{\{ | \*{3,} | x{6,}$ | \.\.\.$
        | [|>][-+]?[0-9]?[-+]?$ )   # a YAML block scalar's | or >: its lines are the value
    | (?: true | false | null | none | nil | yes | no | undefined | \d{1,5}
        | str | string | bytes | int | bool | any | text | optional | secretstr
        | required | mandatory | must | see | needed | unset | empty | missing )$  # "password: must be 12+ chars"
    """, _A)
# Unquoted values that are code, not literals: settings.SECRET, os.environ[...], f(x).
_CODE_EXPR = Lazy(r"^[A-Za-z_]+[0-9]*(?:\.[A-Za-z_]+[0-9]*)+$|[(\[{]", _A)
_METAVAR = Lazy(r"[A-Z][A-Z_]*$|[a-z]+$", _A)

# ---------------------------------------------------------------- standalone patterns
# (kind, trigger substrings (any; case-sensitive), pattern source). Distinctive prefixes
# (ghp_, sk-ant-, AKIA, xoxb-...) match even when glued to other text: over-redacting a
# blob is cheaper than leaking a key. Generic ones (sk-, eyJ) need a word boundary.

_TOKENS: list[tuple[str, tuple[str, ...], str]] = [
    ("private-key", ("PRIVATE KEY",),
     r"(?s)-----BEGIN[ A-Z0-9]*PRIVATE KEY[ A-Z]*-----"
     r"(?:.*?-----END[ A-Z0-9]*PRIVATE KEY[ A-Z]*-----|[A-Za-z0-9+/=\s:,.\\-]*)"),
    ("aws-access-key",
     ("AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AIPA", "ANPA", "ANVA", "AROA",
      "APKA", "ASCA"),
     r"(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA|ASCA)[A-Z0-9]{16}"),
    ("github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
     r"gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{22,255}"),
    ("gitlab-token", ("glpat-",), r"glpat-[A-Za-z0-9_-]{20,}"),
    ("anthropic-key", ("sk-ant-",), r"sk-ant-[A-Za-z0-9_-]{20,}"),
    ("openai-key", ("sk-",),
     r"(?<![A-Za-z0-9_-])sk-(?:proj-|svcacct-|admin-)?(?=[A-Za-z0-9_-]*[0-9])"
     r"[A-Za-z0-9_-]{20,}"),
    ("stripe-key", ("_live_", "_test_"),
     r"(?<![A-Za-z0-9_])(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("google-api-key", ("AIza",), r"AIza[A-Za-z0-9_-]{35}"),
    ("slack-webhook", ("hooks.slack.com",),
     r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_+-]+"),
    ("slack-token", ("xox",), r"xox[abposre]-[A-Za-z0-9-]{10,}"),
    ("npm-token", ("npm_",), r"npm_[A-Za-z0-9]{36,}"),
    ("huggingface-token", ("hf_",), r"(?<![A-Za-z0-9_])hf_[A-Za-z]{30,}(?![A-Za-z0-9])"),
    ("jwt", ("eyJ",),
     r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),
    ("stripe-webhook-secret", ("whsec_",), r"whsec_[A-Za-z0-9]{24,}"),
    ("square-token", ("sq0",), r"sq0(?:atp|csp)-[A-Za-z0-9_-]{22,}"),
    ("braintree-token", ("$production$", "$sandbox$"),
     r"access_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-f0-9]{32}"),
    ("discord-webhook", ("discord",),
     r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_-]+"),
    ("discord-token", (".",),
     r"(?<![A-Za-z0-9_-])[MN][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}(?![A-Za-z0-9_-])"),
    ("telegram-bot-token", (":AA",), r"(?<![0-9])[0-9]{8,10}:AA[A-Za-z0-9_-]{33}"),
    ("sendgrid-key", ("SG.",), r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}"),
    ("pypi-token", ("pypi-",), r"pypi-AgE[A-Za-z0-9_-]{50,}"),
    ("digitalocean-token", ("_v1_",), r"do[opr]_v1_[a-f0-9]{64}"),
]
_TOKEN_RX = [(kind, triggers, Lazy(src, _A)) for kind, triggers, src in _TOKENS]

# Authorization header value (scheme kept), in header, JSON or CLI style. The atomic
# group stops "Bearer $TOKEN" from backtracking into redacting the word "Bearer".
_AUTH_HEADER = Lazy(
    r"(?P<head>\b(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?"
    r"(?>(?P<scheme>(?:bearer|basic|token|bot|digest|apikey)\s+)?))"
    r"(?P<val>[A-Za-z0-9._~+/=:-]{6,})",
    _AI,
)
_BEARER = Lazy(
    r"(?P<head>\bbearer\s+)(?P<val>(?=[A-Za-z0-9._~+/=-]*[0-9])[A-Za-z0-9._~+/=-]{16,})",
    _AI,
)
# scheme://user:password@host
_URL_CREDS = Lazy(
    r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@\"'<>]*:)(?P<val>[^\s/@\"'<>]+)(?=@)",
    _A,
)

# A key in a URL's user part with no password: Sentry's DSN https://KEY@o1.ingest.sentry.io/1.
# Under a *_DSN / dsn setting any user part is the key; elsewhere _sub_url_key insists
# on a key-looking one.
_URL_USER_KEY = Lazy(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<val>[A-Za-z0-9_~.%!$&*+-]+)(?=@)", _AI)
# The same under a DSN setting (run only when "dsn" occurs: the optional key in front
# would be tried at every position of every text).
_DSN_USER_KEY = Lazy(
    r"(?P<head>\b[A-Za-z0-9_.-]*dsn[\"']?[ \t]*(?::=|=>|:|=)[ \t]*[\"']?"
    r"[A-Za-z][A-Za-z0-9+.-]*://)(?P<val>[A-Za-z0-9_~.%!$&*+-]+)(?=@)",
    _AI,
)

# Cookie: a=b; c=d / Set-Cookie: id=...; Path=/ (header, JSON or --cookie flag): the
# value runs to the end of the line or a closing quote; _sub_cookie treats the pairs.
_COOKIE = Lazy(
    r"(?P<head>(?:\b(?:set-)?cookie[\"']?[ \t]*[:=]|--cookie[ \t=])[ \t]*[\"']?)"
    r"(?P<val>[^\n\"']*=[^\n\"']*)",
    _AI,
)

# .netrc: "machine HOST login USER password SECRET" on one line (a failing test's error
# line quotes it so), or "password SECRET" alone on a line of a file that names a
# machine. Netrc passwords may be any word, so the context must be netrc's own.
_NETRC_INLINE = Lazy(
    r"(?P<head>\b(?:machine[ \t]+\S+|default[ \t]+login[ \t]+\S+)"
    r"(?:[ \t]+(?:login|account|port|protocol)[ \t]+\S+)*[ \t]+password[ \t]+)(?P<val>[^\s`]+(?:`+(?![\s.,;:!?)\]}]|$)[^\s`]+)*)",
    _A,
)
_NETRC_LINE = Lazy(r"(?m)(?P<head>^[ \t]*password[ \t]+)(?P<val>\S+)(?=[ \t]*$)", _A)

# .pgpass: host:port:database:user:password, a whole line; the host has a letter, a
# dot or is '*' (so "10:20:30:40:50" is not one) and the fields hold no spaces or
# slashes (so compiler and grep lines "a.c:12:5: error" are not either).
_PGPASS = Lazy(
    r"(?m)(?P<head>^[ \t]*(?=[^:\n]*[A-Za-z.*])[A-Za-z0-9._*-]+:(?:[0-9]{1,5}|\*):[A-Za-z0-9._*$-]+:"
    r"[A-Za-z0-9._*@$-]+:)(?P<val>\S+)(?=[ \t]*$)",
    _A,
)

# A secret said in words: "Password for staging is Hunter2Staging!", "the api key is
# X", "token was set to X", "Password — X" (a dash between spaces says "is" in notes).
# Only the value after such a phrase, and only when it looks like a credential
# (_credential_like): "the password is required", "password - see the vault" stay.
_PHRASE = Lazy(
    r"(?P<head>\b(?P<word>passwords?|passphrase|passcode|passwd"
    r"|api[ _-]?key|secret(?:[ _-]key)?|(?:access[ _-]|auth[ _-]|api[ _-]|bearer[ _-])?token|credentials?)"
    r"(?:(?P<prep>[ \t]+(?:for|of|to|on|at|in)[ \t]+(?:the[ \t]+)?[A-Za-z0-9_.@/-]{1,40})[ \t]*[:=]"
    r"|(?:[ \t]+(?:for|of|to|on|at|in)[ \t]+(?:the[ \t]+)?[A-Za-z0-9_.@/:-]{1,40})?"
    r"[ \t]+(?:(?:(?:is[ \t]+now|has[ \t]+been|was)[ \t]+)?(?:set|changed|reset)[ \t]+to"
    r"|is|was|are|would[ \t]+be|should[ \t]+be|will[ \t]+be|\u2014|\u2013|-)(?:[ \t]*:)?)[ \t]+)"  # "is: x", "— x" too
    r"(?P<val>\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|`[^`\n]{1,200}`|[^\s\"'`]+)",
    _AI,
)
_PHRASE_TRIGGERS = ("pass", "secret", "token", "api key", "api-key", "api_key", "credential")

# Cloud storage connection strings (Azure: AccountKey=...; SharedAccessKey=...) and the
# signature of a SAS URL (?sig=...): the value runs to the next ';', quote or space.
_CONN_STRING = Lazy(
    r"(?P<head>\b(?:AccountKey|SharedAccessKey|SharedAccessSignature|SharedSecretValue)\s*=\s*)"
    r"(?P<val>[^;\"'\s`]+(?:`+(?![\s.,;:!?)\]}]|$)[^;\"'\s`]+)*)",
    _A,
)
_SAS_SIG = Lazy(r"(?P<head>[?&]sig=)(?P<val>[A-Za-z0-9%+/=]{16,})", _A)

# Passwords glued to or following a client's own flag, where the flag is not spelled
# "password": mysql -pSECRET, sshpass -p SECRET, redis-cli -a SECRET, docker login -p
# SECRET, curl -u user:SECRET. (kind, triggers, pattern with head/val groups).
_CLI_VAL = r"(?P<val>\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'|;&<>`]+(?:`+(?![\s.,;:!?)\]}]|$)[^\s\"'|;&<>`]+)*)"
_CLI: list[tuple[str, tuple[str, ...], str]] = [
    ("password", ("mysql", "mariadb"),
     r"(?P<head>\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlsh|mariadb|mariadb-dump)\b"
     r"[^\n|;&]*?[ \t]-p)" + _CLI_VAL),
    ("password", ("sshpass",), r"(?P<head>\bsshpass\b[^\n|;&]*?[ \t]-p[ \t]*)" + _CLI_VAL),
    ("password", ("redis-cli",), r"(?P<head>\bredis-cli\b[^\n|;&]*?[ \t]-a[ \t]*)" + _CLI_VAL),
    ("password", ("login",), r"(?P<head>\b(?:docker|podman|helm\s+registry)\s+login\b[^\n|;&]*?[ \t]-p[ \t]+)" + _CLI_VAL),
    ("password", ("curl",),
     r"(?P<head>\bcurl\b[^\n|;&]*?[ \t](?:-u|--user)[ \t=]*[\"']?[^:\s\"'|;&]+:)(?P<val>[^\s\"'|;&@`]+(?:`+(?![\s.,;:!?)\]}]|$)[^\s\"'|;&@`]+)*)"),
]
_CLI_RX = [(kind, triggers, Lazy(src, _A)) for kind, triggers, src in _CLI]

# ---------------------------------------------------------------- assignments

# The secret word must end the key name: DB_PASSWORD, access_token, OPENAI_API_KEY.
_KEY = (
    r"(?P<key>(?<![A-Za-z0-9_.-])[A-Za-z0-9_.-]*?"
    r"(?P<word>passw(?:or)?d|passphrase|secret(?:[_.-]?key(?:[_.-]?base)?)?"
    r"|secret[_.-]?access[_.-]?key|access[_.-]?key|private[_.-]?key"
    r"|(?:account|shared[_.-]?access|signing|encryption|master|client|app|session|webhook)[_.-]?key"
    r"|(?<=[_.-])pwd|token|api[_.-]?key|apikey|auth[_.-]?key|credentials?"
    # Short words that mean a secret only as a whole word of the key: DB_PASS, pass,
    # pwd, MY_SERVICE_AUTH, auth; never bypass, compass, passive, author, oauth.
    r"|(?:(?<=[_.-])|(?<![A-Za-z0-9_.-]))(?:pass|pwd|auth)"
    # Session cookies' names: PHPSESSID, JSESSIONID, ASP.NET_SessionId, session_cookie.
    # Not a bare sessionId/session_id: harnesses name their (non-secret) sessions so;
    # Django's sessionid cookie is caught in its Cookie header.
    r"|session[_.-]?cookie|(?:php|j|asp\.net_)sess(?:ion)?id))"
)
# Text that is a JSON string's content (an MCP result, a log line's "body"), escaped
# once more: the key and value quotes are \" and a line break is the two characters \n.
# An unquoted value stops at such an escape (\n \r \t \"), or it would run into the
# next line's key and leave that line's secret (password: a1\nTOKEN = x, escaped).
# Written unrolled (a plain character class, then each lone backslash): an alternation
# repeated per character made the pattern 1.4x slower on every line it runs on.
_PLAIN, _LONE_BS = r"[^\s,;\"'}\]&)`\\]", r"\\(?![nrt\"])"
_UNQUOTED = rf"(?:{_PLAIN}|{_LONE_BS}){_PLAIN}*(?:{_LONE_BS}{_PLAIN}*)*"
# A quoted key may close a subscript: os.environ["DB_PASSWORD"] = "x", $_ENV['TOKEN'] = ...
# "==" compares (if token == 'abc'), it does not assign.
_ASSIGN = Lazy(
    r"(?P<head>" + _KEY + r"(?P<kq>\\?[\"']\]?|)[ \t]*(?P<sep>:=|=>|:|=(?!=))[ \t]*)"
    r"(?P<val>\\\"(?:[^\"\\\n]|\\[^\"\n])*\\\"|\"[^\"\n]*\"|'[^'\n]*'|`[^`\s](?:[^`\n]*[^`\s])?`"
    r"|" + _UNQUOTED + r"(?:`+(?![\s.,;:!?)\]}]|$)" + _UNQUOTED + r")*)",
    _AI,
)
_ASSIGN_TRIGGERS = ("pass", "secret", "token", "key", "credential", "pwd", "auth", "sessid", "sessionid",
                    "session_cookie", "session-cookie", "session.cookie")
# --password VALUE / --token VALUE on a command line.
_FLAG = Lazy(
    r"(?P<head>(?<![A-Za-z0-9_-])--?(?:[A-Za-z0-9-]*-)?"
    r"(?P<word>password|passwd|passphrase|secret|token|api-key|apikey)[ \t]+)"
    r"(?P<val>\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'<>|&;`-][^\s\"'`]*(?:`+(?![\s.,;:!?)\]}]|$)[^\s\"'`]+)*)",
    _AI,
)
_FLAG_TRIGGERS = ("pass", "secret", "token", "api-key", "apikey")


def _kind_of(word: str) -> str:
    w = word.lower()
    if w.startswith("pass") or w == "pwd":
        return "password"
    if w.endswith("token"):
        return "token"
    if "api" in w:
        return "api-key"
    if w == "auth":
        return "auth"
    if "sess" in w and not w.endswith("key"):
        return "session-id"
    return "secret"


_SYMBOLS = frozenset("!@#$%^&*+=?~/_:")
_NUMBER = Lazy(r"[0-9]+(?:[.,][0-9]+)*%?$", _A)
# What an "auth:" setting names when it names a method, not a credential.
_AUTH_METHODS = frozenset({
    "oauth", "oauth1", "oauth2", "xoauth2", "oidc", "saml", "saml2", "ldap", "ldaps", "ntlm", "kerberos", "kerberos5",
    "krb5", "gssapi", "sspi", "scram-sha-256", "scram-sha-1", "cram-md5", "digest-md5", "md5", "sha256", "plain",
    "login", "basic", "bearer", "digest", "jwt", "mtls", "x509", "cert", "anonymous", "aws_iam", "aws-iam", "iam",
    "api_key", "apikey", "password", "trust", "reject", "peer", "ident", "radius", "pam",
})


def _credential_like(value: str, *, digits_only: bool = True) -> bool:
    """Whether a value a weak key word (``auth``, a bare ``pass``) or a sentence names
    looks like a credential rather than a word: 6+ characters and a digit, a symbol,
    or mixed case beyond a capital first letter. ``required``, ``Enabled``, ``basic``,
    ``0.95`` are not; ``AuthOnly3``, ``Hunter2Staging!``, base64 ``Ym9iOmdo...==`` are.
    ``digits_only``: whether a value of digits alone counts (a PIN does; a count said
    of a "token" does not)."""
    if len(value) < 6 or " " in value.strip():
        return False
    if _NUMBER.get().match(value):
        return digits_only and value.isdigit()
    if any(c.isdigit() for c in value) or any(c in _SYMBOLS for c in value):
        return True
    rest = value[1:]
    return any(c.isupper() for c in rest) and any(c.islower() for c in value)


def _not_secret(value: str) -> bool:
    """Placeholders, references, types, booleans, short numbers, an English function
    word (``password: is required`` in a wrapped sentence, ``token: the one``): never
    a secret, whatever the context."""
    if value.isalpha() and value.lower() in QUERY_STOPWORDS:
        return True
    return _NOT_SECRET.get().match(value) is not None


def _secret_value(raw: str) -> tuple[str, str] | None:
    """``(quote, value)`` if ``raw`` (maybe quoted: ``"``, ``'`` or a backtick) is a
    literal secret, else None. The quotes are kept around the marker."""
    if raw[:2] == '\\"' and raw[-2:] == '\\"' and len(raw) >= 4:  # escaped JSON: \"value\"
        q = raw[:2]
    else:
        q = raw[:1] if raw[:1] in ("'", '"', "`") and raw[-1:] == raw[:1] and len(raw) >= 2 else ""
    value = raw[len(q):len(raw) - len(q)] if q else raw
    if not value.strip() or _not_secret(value):
        return None
    if not q and _CODE_EXPR.get().search(value):
        return None
    return q, value


#: Characters of a backticked value that make it code, not a secret, in a sentence:
#: "a filter no memory can pass: `strength:<0`", "the token: `x + 1`".
_CODE_MARKS = frozenset(":<>=() ")
#: Text before a key on its line that makes the line a config line, not a sentence:
#: indentation, list and quote markers, comment leaders.
_LINE_LEAD = frozenset(" \t-*#>/;")


def _in_prose(m: re.Match[str]) -> bool:
    """Whether the ``key: value`` matched by :data:`_ASSIGN` is written in a sentence
    ("In database.yml, password: is required"), not as a setting. A setting is a key at
    the start of its line (after indentation, ``-``, ``#``, ``//``, ``>``), inside an
    inline mapping or list (``{user: bob, password: x}``), right after a backtick
    (inline code: ``` `password: x` ```), or quoted (``"password": ...``, JSON). Only the
    bare ``:`` separator can be prose: ``=``, ``:=`` and ``=>`` are code wherever they
    are. The same answer whether redact runs on the whole text or line by line."""
    if m.group("sep") != ":" or m.group("kq"):
        return False
    s, start = m.string, m.start("key")
    before = s[s.rfind("\n", 0, start) + 1:start].rstrip(" \t")
    if not before or all(c in _LINE_LEAD for c in before):
        return False
    last = before[-1]
    if last in "{[`" or (last == "," and ("{" in before or "[" in before)):
        return False
    return True


def _prose_secret(q: str, value: str, word: str) -> bool:
    """Whether ``value``, the value of a ``key: value`` written in a sentence
    (:func:`_in_prose`), is a secret: it must look like a credential
    (:func:`_credential_like`; a phrase in quotes is judged without its spaces, as
    :func:`_sub_phrase` does), so "password: is required", "token: field", "--pass:
    maxlen" stay. Backticked code (``` `strength:<0` ```, anything with ``:<>=()`` or a
    space) stays too. A count said of a token (``token: 8192``) is not a PIN."""
    if q == "`" and any(c in _CODE_MARKS for c in value):
        return False
    pw = word.startswith("pass") or word == "pwd"
    return _credential_like(value.replace(" ", "") if q in ("'", '"') else value, digits_only=pw)


def _sub_assign(m: re.Match[str]) -> str:
    parts = _secret_value(m.group("val"))
    if parts is None:
        return m.group(0)
    q, value = parts
    # headers["x-api-key"] = key: after a subscript, an unquoted value is a variable.
    if not q and m.group("kq").endswith("]"):
        return m.group(0)
    word = m.group("word").lower()
    bare = m.group("key").lower() == word
    if _in_prose(m) and not _prose_secret(q, value, word):
        return m.group(0)
    # Weak words: "auth: required", "pass: skipped", "auth=oauth2" are settings, not
    # secrets; an auth value or a lone "pass" key must look like a credential.
    if (word == "auth" or (word == "pass" and bare)) and (
            not _credential_like(value.replace(" ", "") if q else value) or value.lower() in _AUTH_METHODS):
        return m.group(0)
    # PWD=/home/me in every env dump is the working directory, not a password.
    if word == "pwd" and bare and value[:1] in ("/", "~", "."):
        return m.group(0)
    return m.group("head") + q + _tag(_kind_of(word)) + q


def _sub_flag(m: re.Match[str]) -> str:
    parts = _secret_value(m.group("val"))
    # Trigger: help text ("--token TEXT") or prose ("--token flag"). Outcome: kept; a
    # real secret passed this way has digits or mixed case.
    if parts is None or (not parts[0] and _METAVAR.get().match(parts[1])):
        return m.group(0)
    q = parts[0]
    return m.group("head") + q + _tag(_kind_of(m.group("word"))) + q


def _sub_auth(m: re.Match[str]) -> str:
    val = m.group("val")
    if _not_secret(val):
        return m.group(0)
    # Without a scheme word, insist on a credential-looking value (prose says
    # "authorization: required").
    if (
        "scheme" in m.re.groupindex
        and not m.group("scheme")
        and (len(val) < 12 or not any(c.isdigit() for c in val))
    ):
        return m.group(0)
    return m.group("head") + _tag("bearer-token")


def _sub_value(kind: str):
    def sub(m: re.Match[str]) -> str:
        parts = _secret_value(m.group("val"))
        if parts is None:
            return m.group(0)
        return m.group("head") + parts[0] + _tag(kind) + parts[0]

    return sub


#: A URL's password that only names what goes there, as documentation writes it:
#: ``postgresql://user:password@host/db``.
_URL_PLACEHOLDERS = frozenset({"password", "passwd", "pass", "pwd", "pw", "secret"})


def _sub_url(m: re.Match[str]) -> str:
    # "https://[REDACTED:url-key]@host": the user part was a key already redacted; its
    # marker's colon is not a user:password separator.
    val = m.group("val")
    if _not_secret(val) or m.group("head").endswith("[REDACTED:") or val.lower() in _URL_PLACEHOLDERS:
        return m.group(0)
    return m.group("head") + _tag("url-password")


def _sub_url_key(m: re.Match[str]) -> str:
    val = m.group("val")
    if _not_secret(val):
        return m.group(0)
    # Outside a DSN setting, only a user part that reads as a key (Sentry's 32 hex
    # digits, a token) is one: https://git@host, https://first.last@host stay.
    if "dsn" not in m.group("head").lower() and not (
        len(val) >= 16 and any(c.isdigit() for c in val) and any(c.isalpha() for c in val)
    ):
        return m.group(0)
    return m.group("head") + _tag("url-key")


_COOKIE_ATTRS = frozenset({"path", "domain", "expires", "max-age", "samesite", "secure", "httponly", "priority",
                           "partitioned", "version", "comment"})


def _sub_cookie(m: re.Match[str]) -> str:
    """Every ``name=value`` of a ``Cookie:`` header (the first one only of a
    ``Set-Cookie:``, whose others are attributes) with its value redacted; names kept.
    Values shorter than 8 characters (``lang=en``) stay: session ids are long."""
    head, val = m.group("head"), m.group("val")
    pairs = val.split(";")
    only_first = "set" in head.lower()
    out = []
    for i, pair in enumerate(pairs):
        name, eq, value = pair.partition("=")
        v = value.strip()
        if (eq and name.strip() and name.strip().lower() not in _COOKIE_ATTRS and (i == 0 or not only_first)
                and len(v) >= 8 and not _not_secret(v)):
            lead = value[: len(value) - len(value.lstrip())]
            trail = value[len(value.rstrip()):]
            pair = name + eq + lead + _tag("cookie") + trail
        out.append(pair)
    return head + ";".join(out)


def _sub_phrase(m: re.Match[str]) -> str:
    raw = m.group("val")
    q = raw[:1] if raw[:1] in ("'", '"', "`") and raw[-1:] == raw[:1] and len(raw) >= 2 else ""
    value = raw[1:-1] if q else raw
    tail = ""
    if not q:  # sentence punctuation after the value is not part of it ("is X." / "is X),")
        stripped = value.rstrip(".,;:)]}\"'")
        tail, value = value[len(stripped):], stripped
    word = m.group("word").lower()
    pw = word.startswith("pass")
    if not value or _not_secret(value) or not _credential_like(value.replace(" ", "") if q else value,
                                                                digits_only=pw) or (
            not q and _CODE_EXPR.get().search(value)):
        return m.group(0)
    kind = "password" if pw else _kind_of(word.replace(" ", "_"))
    return m.group("head") + q + _tag(kind) + q + tail


# ---------------------------------------------------------------- structure
# A value is named by the nearest secret-named key above it, whatever the nesting:
# {"password": ["x"]}, {"auth": {"tokens": ["x"]}}, {"credentials": [{"value": "x"}]}.
# A name/value pair names its value by its name: {"name": "API_KEY", "value": "x"}
# (Kubernetes, GitHub Actions and ECS env lists, HAR headers), ["password", "x"], and
# Kubernetes' YAML "- name: API_KEY / value: x". Judged for JSON-like values
# (clip_value) and for JSON text (redact) alike, always as the pair "key": "value"
# written as JSON text would be (:func:`_under_key`).

#: A key whose name ends in a secret word (as an assignment's key must), or its plural:
#: ``tokens``, ``api_keys``, ``passwords`` (a plural asks a credential-looking value:
#: a tokenizer's ``"tokens": ["the", "cat"]`` stays).
_SECRET_KEY = Lazy(r"^" + _KEY + r"(?P<plural>s?)$", _AI)
#: A plural key that counts tokens (or keys) rather than holding them.
_COUNT_OF = Lazy(r"(?:max|min|num|n|total|input|output|prompt|completion|cached|reasoning|used|remaining"
                 r"|cache[_.-]?(?:read|creation)(?:[_.-]?input)?)[_.-]?[A-Za-z_.-]*s$", _AI)
#: The last word of a key (``API_KEY`` → ``KEY``, ``expiresAt`` → ``At``).
_LAST_WORD = Lazy(r"(?:[A-Z]?[a-z]+|[A-Z]+|[0-9]+)$", _A)
#: Last words of a key that say what a value under a secret-named key is when it is not
#: the secret: who, where, what kind, when. They end the secret key's reach:
#: {"credentials": {"username": "bob", "password": "x"}} keeps bob.
_PLAIN_WORDS = frozenset({
    "user", "username", "login", "email", "mail", "name", "type", "kind", "scheme", "method", "host",
    "account", "profile", "namespace", "project", "tenant", "org", "organization", "owner", "role", "zone",
    "location", "bucket", "arn",
    "hostname", "url", "uri", "endpoint", "domain", "region", "id", "scope", "scopes", "path", "file",
    "filename", "description", "label", "title", "comment", "hint", "issuer", "audience", "port", "at", "in",
    "expiry", "expires", "expiration", "ttl", "format", "algorithm", "alg", "provider", "version",
    "enabled", "mode", "status", "count", "length",
})
#: Field names of a name/value pair object (compared lowercased, without ``_``/``-``).
_NAME_FIELDS = frozenset({"name", "key", "parametername", "parameterkey", "variable", "envname"})
_VALUE_FIELDS = frozenset({"value", "parametervalue", "secretvalue", "secretstring"})


def _ctx_below(key: str, ctx: tuple[str, bool] | None) -> tuple[str, bool] | None:
    """What names the values under ``key``, given ``ctx`` above it: ``(key to judge
    them by, strict)`` or None. A secret-named key is the new context (its singular,
    strict, for a plural); a key whose last word is in :data:`_PLAIN_WORDS` ends the
    context above; a value field (``value``, ``SecretString``) passes it on as it is;
    any other key is a label (``prod``, ``openai``, ``github.com``, ``bucket_arn``) and
    passes it on strict: what a label holds in a secret block is the secret when it
    looks like one ({"api_keys": {"openai": "zX9y..."}}), an identifier or a setting
    when it does not ({"credentials": {"profile": "default"}} keeps default)."""
    f = fold(key)
    if any(t in f.lower() for t in _ASSIGN_TRIGGERS):
        m = _SECRET_KEY.get().match(f)
        if m and not m.group("plural"):
            # A weak word (py_pass = ["-c", "pass"], auth: [...]) asks what is under
            # it to look like a credential, as its own value must.
            return f, m.group("word").lower() in ("pass", "pwd", "auth")
        if m and not _COUNT_OF.get().match(f):
            return f[:-1], True
        if m:  # max_tokens, input_tokens: a number of tokens
            return None
    elif ctx is None:
        return None
    last = _LAST_WORD.get().search(f)
    if last and last.group().lower() in _PLAIN_WORDS:
        return None
    if ctx is None or ctx[1] or _field(key) in _VALUE_FIELDS:
        return ctx
    return ctx[0], True


def _judge(key: str | None, value: str, ctx: tuple[str, bool] | None) -> str:
    """``value`` (a string already redacted on its own) as the value of ``key`` (its
    own key or its pair's name; None in a list) under the context ``ctx``."""
    out = _under_key(key, value) if key else value
    if out != value:
        return out
    c = _ctx_below(key, ctx) if key else ctx
    if c is None or (key is not None and c[0] == key and not c[1]):
        return out
    return _under_key(c[0], value, strict=c[1])


def _field(key: object) -> str:
    return key.lower().replace("_", "").replace("-", "") if isinstance(key, str) else ""


def _pair_name(d: dict) -> tuple[object, str] | None:
    """``(value field, name)`` of a name/value pair object (``{"name": "API_KEY",
    "value": ...}``, ``{"Key": ..., "Value": ...}``, CloudFormation's
    ``ParameterKey``/``ParameterValue``), else None."""
    if len(d) > 8:
        return None
    name = vfield = None
    for k, v in d.items():
        f = _field(k)
        if f in _NAME_FIELDS and isinstance(v, str):
            name = v
        elif f in _VALUE_FIELDS:
            vfield = k
    return (vfield, name) if name is not None and vfield is not None else None


# Text: where a secret-named key opens a list or an object, the strings inside are
# judged by the walk above (:class:`_JsonWalk`); pairs anywhere by their own patterns.
# Each in two forms. The plain form reads JSON and the literals of the languages agents
# print and write: Python's repr and code ({'password': ['x']}, dict(tokens=['x']),
# [('password', 'x')]), JavaScript object literals ({ apiKeys: ['x'] }), Ruby hashes
# ({"tokens" => ["x"]}): strings in double or single quotes, keys quoted or bare, ':',
# '=' or '=>' after a key, '(' ')' as brackets. The escaped form reads JSON kept inside
# a JSON string (quotes \", line breaks \n).
_STR = r'"(?:[^"\\\n]|\\.)*"|' + r"'(?:[^'\\\n]|\\.)*'"
_SEP = r"(?::(?!:)|=>|=(?![=>]))"
_ESC_STR = r'\\"(?:[^"\\\n]|\\[^"\n])*\\"'
_ESC_WS = r"(?:\s|\\[nrt])"
#: Where a list or object opens after a key's separator; the key is read backwards from
#: there (_KEY_BEFORE): a pattern that starts with the key would be tried at every word.
_OPEN_AT = (Lazy(_SEP + r"[ \t]*(?P<o>[\[{])", _A), Lazy(r'\\"[ \t]*:[ \t]*(?P<o>[\[{])', _A))
_KEY_BEFORE = (
    Lazy(r'(?:"(?P<k>[^"\\\n]{1,100})"|' + r"'(?P<k2>[^'\\\n]{1,100})'"
         r"|(?<![\w$.-])(?P<k3>[A-Za-z_$][\w$.-]{0,99}))[ \t]*$", _A),
    Lazy(r'\\"(?P<k>[^"\\\n]{1,100})$', _A),
)
_JSON_TOKEN = (
    Lazy(rf"(?P<s>{_STR})(?P<c>[ \t]*{_SEP})?|(?<![\w$.-])(?P<b>[A-Za-z_$][\w$-]{{0,99}})[ \t]*{_SEP}"
         r"|(?P<o>[\[{(])|(?P<e>[\]})])", _A),
    Lazy(rf"(?P<s>{_ESC_STR})(?P<c>{_ESC_WS}*:)?|(?P<b>(?!x)x)|(?P<o>[\[{{]{{1}})|(?P<e>[\]}}]{{1}})", _A),
)
_NAME_RX = r"(?:name|Name|NAME|key|Key|KEY|ParameterKey|ParameterName|variable)"
_VALUE_RX = r"(?:value|Value|VALUE|ParameterValue|SecretValue|SecretString)"
# A pair's first field name, quoted or bare after the bracket or comma before it (matched,
# not looked behind at: the pattern then starts with a few characters the engine jumps
# between, not with every blank).
_KQ = r"(?:[{(,]\s*[\"']?|[\"'])"
_JSON_PAIR = (
    Lazy(rf"{_KQ}(?:{_NAME_RX}[\"']?\s*{_SEP}\s*(?P<nq>[\"'])(?P<name>[^\"'\\\n]{{1,100}})(?P=nq)\s*,\s*"
         rf"[\"']?{_VALUE_RX}[\"']?\s*{_SEP}\s*(?P<val>{_STR})"
         rf"|{_VALUE_RX}[\"']?\s*{_SEP}\s*(?P<val2>{_STR})\s*,\s*"
         rf"[\"']?{_NAME_RX}[\"']?\s*{_SEP}\s*(?P<nq2>[\"'])(?P<name2>[^\"'\\\n]{{1,100}})(?P=nq2))", _A),
    Lazy(rf'\\"{_NAME_RX}\\"{_ESC_WS}*:{_ESC_WS}*\\"(?P<name>[^\"\\\n]{{1,100}})\\"{_ESC_WS}*,{_ESC_WS}*'
         rf'\\"{_VALUE_RX}\\"{_ESC_WS}*:{_ESC_WS}*(?P<val>{_ESC_STR})'
         rf'|\\"{_VALUE_RX}\\"{_ESC_WS}*:{_ESC_WS}*(?P<val2>{_ESC_STR}){_ESC_WS}*,{_ESC_WS}*'
         rf'\\"{_NAME_RX}\\"{_ESC_WS}*:{_ESC_WS}*\\"(?P<name2>[^\"\\\n]{{1,100}})\\"', _A),
)
# A two-item list, tuple or call whose first item names the second: ["password", "x"],
# ('password', 'x'), os.environ.setdefault("DB_PASSWORD", "x"), env.put("TOKEN", "x").
_LIST_PAIR = (
    Lazy(rf"[\[(]\s*(?P<nq>[\"'])(?P<name>[^\"'\\\n]{{1,100}})(?P=nq)\s*,\s*(?P<val>{_STR})\s*[\])]", _A),
    Lazy(rf'\[{_ESC_WS}*\\"(?P<name>[^\"\\\n]{{1,100}})\\"{_ESC_WS}*,{_ESC_WS}*(?P<val>{_ESC_STR}){_ESC_WS}*\]', _A),
)
# Kubernetes and compose YAML: "- name: API_KEY" then "  value: x" on the next line.
_YAML_PAIR = Lazy(
    r"(?m)^(?P<i>[ \t]*)(?P<d>-[ \t]+)?name:[ \t]*(?P<nq>[\"']?)(?P<name>[A-Za-z0-9_.-]{1,100})(?P=nq)[ \t]*\r?\n"
    r"(?P=i)(?(d)[ \t]+|)value:[ \t]*(?P<val>\"[^\"\n]*\"|'[^'\n]*'|[^\s#\"'][^\n]*?)[ \t]*\r?$",
    _A,
)
#: How far a walk reads into a list or object opened by a secret-named key.
_WALK_LIMIT = 65_536


def _json_text(raw: str, esc: bool) -> str | None:
    """The string a JSON string literal's content ``raw`` holds (``esc``: escaped once
    more), or None when it does not decode. Without a backslash it is itself (no
    ``json``, and with it ``re``, imported on ``remember``'s path)."""
    if "\\" not in raw and '"' not in raw:
        return raw
    import json

    try:
        out = json.loads('"' + raw + '"')
        return json.loads('"' + out + '"') if esc else out
    except ValueError:
        return None


def _json_lit(value: str, esc: bool) -> str:
    if value.isprintable() and "\\" not in value and '"' not in value:
        return value
    import json

    out = json.dumps(value, ensure_ascii=False)[1:-1]
    return json.dumps(out, ensure_ascii=False)[1:-1] if esc else out


def _lit_text(lit: str, esc: bool) -> str | None:
    """What a string literal ``lit`` (quotes included) holds: a JSON string decoded, a
    single-quoted one (Python, JavaScript) as written (its escapes differ from JSON's;
    a secret is judged with them, and only what is cut changes)."""
    q = 2 if esc else 1
    return lit[1:-1] if lit[:1] == "'" else _json_text(lit[q:-q], esc)


def _judged_literal(lit: str, key: str | None, ctx, esc: bool) -> str:
    """A string literal ``lit`` (quotes included) judged as a value of ``key`` under
    ``ctx``: the literal with its content replaced, or ``lit``."""
    value = _lit_text(lit, esc)
    if value is None:
        return lit
    new = _judge(key, value, ctx)
    if new == value:
        return lit
    if lit[:1] == "'":
        return "'" + new + "'"
    q = 2 if esc else 1
    return lit[:q] + _json_lit(new, esc) + lit[-q:]


class _JsonWalk:
    """The strings of the lists and objects a secret-named key opens in JSON text, judged
    by the nearest secret-named key above each (``repl`` for :data:`_JSON_TOKEN` run on
    each such region: a region starts with its bracket; ``roots`` maps the region's
    text to the context its key gives)."""

    def __init__(self, roots: dict[int, tuple[str, bool]], esc: bool) -> None:
        self.roots, self.esc = roots, esc
        self.stack: list[list] = []  # [is an object, context, key, pair name, pair value field]

    def __call__(self, m: re.Match[str]) -> str:
        if m.start() == 0:
            self.stack = []
        top = self.stack[-1] if self.stack else None
        if m.group("o"):
            if top is None:
                ctx = self.roots.get(id(m.string))
            else:
                ctx = _ctx_below(top[2], top[1]) if top[0] and top[2] else top[1]
            # dict( opens keyword arguments: an object, as { does.
            obj = m.group("o") == "{" or (m.group("o") == "(" and m.string[max(0, m.start() - 4):m.start()] == "dict")
            self.stack.append([obj, ctx, None, None])
            return m.group(0)
        if m.group("e"):
            if self.stack:
                self.stack.pop()
            return m.group(0)
        if top is None:
            return m.group(0)
        if m.group("b"):  # a bare key: {apiKey: ...}, dict(token=...)
            top[2] = m.group("b")
            return m.group(0)
        lit = m.group("s")
        if m.group("c"):  # a key
            top[2] = _lit_text(lit, self.esc)
            return m.group(0)
        key = top[2] if top[0] else None
        f = _field(key)
        if f in _NAME_FIELDS:  # the name of a name/value pair: its value comes next
            top[3] = _lit_text(lit, self.esc)
        elif f in _VALUE_FIELDS and top[3]:
            key = top[3]
        top[2] = None
        return _judged_literal(lit, key, top[1], self.esc)


def _structure(out: str, lowered: str, sub, chunks) -> str:
    """Values named by structure in JSON (and YAML) text: the pairs, then the regions
    opened by a secret-named key (:class:`_JsonWalk`)."""
    for esc in (False, True):
        if ('\\"' not in out) if esc else ('"' not in out and "'" not in out):
            continue
        if "value" in lowered:
            # Only around the lines that name a value field: the pattern has no literal
            # to jump to, and code holds few such lines.
            out = chunks(out, _near(out, _VALUE_WORDS), _JSON_PAIR[esc].get(), _sub_pair(esc))
        if "[" in out or (not esc and "(" in out):
            out = sub(_LIST_PAIR[esc].get(), _sub_pair(esc), out)
        if "[" in out or "{" in out:
            out = _walk_regions(out, esc, chunks)
    if "name:" in out and "value:" in out:
        out = sub(_YAML_PAIR.get(), _sub_yaml_pair, out)
    return out


_VALUE_WORDS = ("value", "Value", "VALUE", "SecretString")


def _near(text: str, words: tuple[str, ...], reach: int = 3) -> list[tuple[int, str]]:
    """``(offset, piece)`` of ``text`` around each line holding one of ``words``: from
    ``reach`` lines above it to ``reach`` lines below, overlapping pieces merged, in
    order. A name/value pair, even pretty-printed over lines, lies inside the piece
    around its value field."""
    spans = []
    for w in words:
        i = text.find(w)
        while i >= 0:
            s = text.rfind("\n", 0, i) + 1
            for _ in range(reach):
                if s == 0:
                    break
                s = text.rfind("\n", 0, s - 1) + 1
            e = text.find("\n", i)
            e = len(text) if e < 0 else e
            for _ in range(reach):
                if e >= len(text):
                    break
                n = text.find("\n", e + 1)
                e = len(text) if n < 0 else n
            spans.append((s, e))
            i = text.find(w, e)
    spans.sort()
    out: list[tuple[int, int]] = []
    for s, e in spans:
        if out and s <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return [(s, text[s:e]) for s, e in out]


def _sub_pair(esc: bool):
    def sub(m: re.Match[str]) -> str:
        g = "val" if m.group("val") is not None else "val2"
        name = _json_text(m.group("name") or m.group("name2"), esc)
        # A name holds no blank: ("Password manager of choice is 1Password", "...") is
        # two sentences, not a key and its value.
        if not name or " " in name.strip():
            return m.group(0)
        a, b = m.start(g) - m.start(), m.end(g) - m.start()
        whole = m.group(0)
        # A call's two arguments are a pair less surely than a list's two items
        # (s.replace("password", "secret"), t("token", "Jeton")): the value must look
        # like a credential (define('DB_PASSWORD', 'wp9Secret') goes).
        if whole[:1] == "(":
            value = _lit_text(whole[a:b], esc)
            if not value or not _credential_like(value.replace(" ", "")):
                return whole
        return whole[:a] + _judged_literal(whole[a:b], name, None, esc) + whole[b:]

    return sub


def _sub_yaml_pair(m: re.Match[str]) -> str:
    raw = m.group("val")
    q = raw[:1] if raw[:1] in "\"'" and len(raw) >= 2 and raw[-1:] == raw[:1] else ""
    value = raw[1:-1] if q else raw
    new = _judge(m.group("name"), value, None)
    if new == value:
        return m.group(0)
    a, b = m.start("val") - m.start(), m.end("val") - m.start()
    return m.group(0)[:a] + q + new + q + m.group(0)[b:]


def _walk_regions(text: str, esc: bool, chunks) -> str:
    """Find the lists and objects opened by a secret-named key (each up to its closing
    bracket, or :data:`_WALK_LIMIT` characters) and walk them."""
    opener, before, token = _OPEN_AT[esc].get(), _KEY_BEFORE[esc].get(), _JSON_TOKEN[esc].get()
    regions: list[tuple[int, str]] = []
    roots: dict[int, tuple[str, bool]] = {}
    end = 0
    for m in opener.finditer(text):
        start = m.start("o")
        if start < end:
            continue  # inside a region already: the walk there sees it
        near = text[max(0, m.start() - 102):m.start()].lower()
        if not any(t in near for t in _ASSIGN_TRIGGERS):
            continue
        k = before.search(text, max(0, m.start() - 102), m.start())
        if k is None:
            continue
        ctx = _ctx_below(k.group("k") or k.group(k.lastindex or 1), None)  # None at once without a trigger word
        if ctx is None:
            continue
        depth, stop = 0, min(len(text), start + _WALK_LIMIT)
        for t in token.finditer(text, start, stop):
            if t.group("o"):
                depth += 1
            elif t.group("e"):
                depth -= 1
                if depth == 0:
                    stop = t.end()
                    break
        region = text[start:stop]
        regions.append((start, region))
        roots[id(region)] = ctx
        end = stop
    if not regions:
        return text
    return chunks(text, regions, token, _JsonWalk(roots, esc))


def _plain_chunks(text: str, chunks, rx: re.Pattern[str], repl) -> str:
    """``rx.sub(repl, ...)`` on the given ``(offset, chunk)`` pieces of ``text`` only
    (in order, not overlapping)."""
    out, prev = [], 0
    for off, chunk in chunks:
        out += (text[prev:off], rx.sub(repl, chunk))
        prev = off + len(chunk)
    out.append(text[prev:])
    return "".join(out)


# ---------------------------------------------------------------- YAML blocks
# A secret-named key with nothing after its colon opens a YAML block: the lines below
# it, indented deeper (or at its own column when they are list items: YAML's compact
# "key:\n- x"), are its list items, mappings and block scalars, to any depth:
#   api_keys:            passwords:         credentials:        private_key: |
#     - sk-...             - "hunter2"        region: us-east-1     <key lines>
# Each value in it is judged as a JSON value at the same place would be (_judge with the
# context _ctx_below gives): list items by the key above, a key's value by its key under
# that context (a plain word keeps it, a label asks a credential-looking value). A key
# followed by a flow list (api_keys: [a, b]) is judged item by item.

#: A colon that ends a line, or is followed by only a block scalar's | or >, a flow list
#: or a comment: where a block may open. The scan starts at the colon (a literal the
#: engine jumps to); the line is then read from its start (_YAML_OPEN) and its key
#: checked by _ctx_below.
_YAML_COLON = Lazy(r"(?m):[ \t]*(?:[|>][-+0-9]*|\[(?!REDACTED:)[^\n]*\])?[ \t]*(?:#[^\n]*)?\r?$", _A)
_YAML_KEY_RX = r"(?P<q>[\"']?)(?P<k>[A-Za-z0-9_$@./-]{1,100})(?P=q)[ \t]*:"
_YAML_OPEN = Lazy(r"(?m)[ \t]*(?:-[ \t]+)*" + _YAML_KEY_RX + r"[ \t]*(?:[|>][-+0-9]*|(?P<flow>\[(?!REDACTED:)[^\n]*\]))?"
                  r"[ \t]*(?:#[^\n]*)?\r?$", _A)
#: The key at the start of a block's line (after its indentation and list dashes).
_YAML_KEY = Lazy(_YAML_KEY_RX + r"(?=[ \t]|\r?$)", _A)
#: The items of a flow list: a marker, quoted, or plain up to the next comma or bracket.
_YAML_FLOW_ITEM = Lazy(r"\[REDACTED:[^\]\n]*\]|\"[^\"\n]*\"|'[^'\n]*'|[^\s,\[\]\"'][^,\[\]]*?(?=[ \t]*[,\]])", _A)
_YAML_LINE = Lazy(r"(?m)^[^\n]*", _A)


def _yaml_blocks(text: str, chunks) -> str:
    """Find the YAML blocks opened by a secret-named key (each to its last line indented
    under the key, at most :data:`_WALK_LIMIT` characters) and walk them line by line
    (:class:`_YamlWalk`)."""
    regions: list[tuple[int, str]] = []
    end = 0
    opener = _YAML_OPEN.get()
    for c in _YAML_COLON.get().finditer(text):
        start = text.rfind("\n", 0, c.start()) + 1
        if start < end:
            continue
        m = opener.match(text, start)
        if m is None or m.end() != c.end() or _ctx_below(m.group("k"), None) is None:
            continue
        col = m.start("q") - start
        stop = m.end()
        pos, limit = m.end() + 1, min(len(text), start + _WALK_LIMIT)
        while pos < limit:
            nl = text.find("\n", pos)
            nl = len(text) if nl < 0 else nl
            line = text[pos:nl]
            body = line.lstrip(" \t")
            if body.strip() and not body.startswith("#"):
                c = len(line) - len(body)
                if c < col or (c == col and not (body[:1] == "-" and body[1:2] in (" ", "\t", "\r", ""))):
                    break
                stop = nl
            pos = nl + 1
        if stop == m.end() and m.group("flow") is None:
            continue
        regions.append((start, text[start:stop]))
        end = stop
    if not regions:
        return text
    return chunks(text, regions, _YAML_LINE.get(), _YamlWalk())


class _YamlWalk:
    """The values of a YAML block, judged line by line (``repl`` for :data:`_YAML_LINE`
    run on each block, which starts with the line of its key): a stack of ``[column of
    the key, context below it, block scalar]``."""

    def __init__(self) -> None:
        self.stack: list[tuple[int, tuple[str, bool] | None, bool]] = []

    def __call__(self, m: re.Match[str]) -> str:
        line = m.group()
        if m.start() == 0:
            self.stack = []
        body = line.lstrip(" \t")
        if not body.strip() or body.startswith("#"):
            return line
        c = len(line) - len(body)
        item = body[:1] == "-" and body[1:2] in (" ", "\t", "\r", "")
        while self.stack and not (c > self.stack[-1][0] or (c == self.stack[-1][0] and item)):
            self.stack.pop()
        ctx = self.stack[-1][1] if self.stack else None
        if self.stack and self.stack[-1][2]:  # a line of a block scalar: all of it is the value
            return line[:c] + _judge(None, body.rstrip("\r"), ctx) + line[len(line.rstrip("\r")):]
        pos = c
        while pos < len(line) and line[pos] == "-" and line[pos + 1:pos + 2] in (" ", "\t", "\r", ""):
            pos += 1
            while pos < len(line) and line[pos] in " \t":
                pos += 1
        k = _YAML_KEY.get().match(line, pos)
        key = k.group("k").rstrip(" \t") if k else None
        vs = k.end() if k else pos
        while vs < len(line) and line[vs] in " \t":
            vs += 1
        rest = line[vs:].rstrip("\r")
        if key is not None and (not rest or rest[0] in "|>" or rest[0] == "#"):
            # A key that opens a block of its own (or a block scalar: | or >).
            below = _ctx_below(key, ctx)
            self.stack.append((k.start("k"), below, bool(rest) and rest[0] in "|>"))
            return line
        if not rest:
            return line
        if rest[0] == "[" and rest.rstrip().endswith("]") and not rest.startswith("[REDACTED:"):
            below = _ctx_below(key, ctx) if key is not None else ctx
            return line[:vs] + _yaml_flow(rest, key, below) + line[vs + len(rest):]
        if rest[0] in "\"'":
            close = rest.find(rest[0], 1)
            if close < 0:
                return line
            value, a, b = rest[1:close], vs + 1, vs + close
        else:
            hash_at = rest.find(" #")
            value = (rest if hash_at < 0 else rest[:hash_at]).rstrip(" \t")
            a, b = vs, vs + len(value)
        if key is None and ctx is None:
            return line
        # Unquoted code is not a literal (a Python dict's "password":\n get_password()).
        if rest[0] not in "\"'" and _CODE_EXPR.get().search(value):
            return line
        new = _judge(key, value, ctx) if value else value
        return line if new == value else line[:a] + new + line[b:]


def _yaml_flow(flow: str, key: str | None, ctx: tuple[str, bool] | None) -> str:
    """A flow list ``[a, "b", 'c']`` with each item judged by ``ctx`` (the context below
    ``key``)."""
    if ctx is None:
        return flow

    def one(m: re.Match[str]) -> str:
        raw = m.group()
        q = raw[0] if raw[0] in "\"'" else ""
        value = raw[1:-1] if q else raw
        new = _judge(None, value, ctx) if value else value
        return raw if new == value else q + new + q

    return _YAML_FLOW_ITEM.get().sub(one, flow)


# ---------------------------------------------------------------- other languages
# "Password" in a few languages agents and their users write in, followed by a
# separator: 密码：x, パスワード: x, 비밀번호=x, contraseña: x, Passwort=x, mot de passe : x,
# пароль: x; or said in a sentence, by the language's own "is": das Passwort (für den
# Server) ist x, le mot de passe est x, la contraseña es x, a senha é x, het wachtwoord
# is x, lösenordet är x, hasło to x, пароль — x, пароль это x, 密码是x, 密码为x,
# パスワードは x, 비밀번호는 x. Matched on the folded view, so written here folded
# (contrasena, пapoль with Latin a, p, o; é is e, ä is a: see fold()). The value must look
# like a credential (6+ characters with a digit, a symbol or inner capitals), whatever
# the separator: these words head labels in ordinary prose ("密码：请向管理员索取",
# "Passwort: mindestens 8 Zeichen", "das Passwort ist falsch").
_FOREIGN = Lazy(
    r"(?P<head>(?P<word>(?<![^\W\d_])(?:contrasena|senha|passwort|kennwort|mot[ \t]+de[ \t]+passe|пapoль|hasło"
    r"|wachtwoord|losenord(?:et)?|sifre(?:niz|n|m)?)(?![^\W\d_])|密码|密碼|口令|密钥|密鑰|パスワード|暗証番号|トークン|비밀번호|패스워드)"
    r"(?:[ \t]*(?::=|=>|:|=)[ \t]*"
    # A sentence: an optional "for/of X" of up to four words, then "is".
    r"|(?:[ \t]+(?:fur|von|des|pour|de|du|para|del|da|do|voor|van|for|till|dla|для|oт|вiд)"
    r"(?:[ \t]+[^\s:=\"'`]{1,30}){1,4}?)?"
    r"[ \t]+(?:-[ \t]+)?(?:ist|lautet|war|lautete|est|etait|es|era|e|is|was|ar|var|jest|to|je|este|этo|эto|цe|-)[ \t]+"
    r"|(?:是|为|為|は|が|は、|는|은|가|이|란)[ \t]*)"
    r")"
    r"(?P<val>\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|`[^`\n]{1,200}`|「[^」\n]{1,200}」|(?:(?![\"'`,;\\])[!-~])+)",
    IGNORECASE,
)
_FOREIGN_TRIGGERS = ("密码", "密碼", "口令", "密钥", "密鑰", "パスワード", "暗証番号", "トークン", "비밀번호", "패스워드",
                     "contrasena", "senha", "passwort", "kennwort", "de passe", "пapoль", "hasło", "wachtwoord",
                     "losenord", "sifre")
_FOREIGN_KIND = {"密钥": "secret", "密鑰": "secret", "トークン": "token"}
_QUOTES = {"'": "'", '"': '"', "`": "`", "「": "」"}


def _sub_foreign(m: re.Match[str]) -> str:
    raw = m.group("val")
    q = raw[:1] if raw[:1] in _QUOTES and raw[-1:] == _QUOTES[raw[:1]] and len(raw) >= 2 else ""
    value = raw[1:-1] if q else raw
    tail = ""
    if not q:  # sentence punctuation after the value is not part of it
        stripped = value.rstrip(".,;:!?)]}")
        tail, value = value[len(stripped):], stripped
    kind = _FOREIGN_KIND.get(m.group("word"), "password")
    if (not value or _not_secret(value) or (not q and _CODE_EXPR.get().search(value))
            or not _credential_like(value.replace(" ", "") if q else value, digits_only=kind == "password")):
        return m.group(0)
    return m.group("head") + q + _tag(kind) + _QUOTES.get(q, "") + tail


# ---------------------------------------------------------------- Unicode look-alikes
# The patterns read ASCII: key words, ':' '=' separators, blanks, quotes. A person or a
# tool can write the same secret with other characters that read the same:
# ``password：x`` (FULLWIDTH COLON, CJK input methods), ``ｐａｓｓｗｏｒｄ=x`` (fullwidth
# letters), a no-break or ideographic space around the separator (copied from a web
# page), ``pass\u200bword=x`` (a zero-width space or a soft hyphen inside the key),
# ``pаssword=x`` (a Cyrillic а), ``“hunter2”`` (typographic quotes), ``—password x`` (a
# dash an editor made of ``--``). redact() matches such a text on its *folded view*:
# every such character replaced by the ASCII one it stands for, invisible ones left
# out; the cuts are then made in the original text (_Folded), so nothing but secrets
# changes in what is stored.

#: Letters of other scripts drawn like Latin ones (Cyrillic, Greek), which NFKC leaves
#: alone. Only whole look-alikes: no Russian or Greek word folds to an ASCII trigger word
#: (``пароль``, ``токен``, ``секрет`` keep letters with no Latin twin).
_LOOKALIKES = {
    # Cyrillic and Greek letters drawn like Latin ones (:data:`ledger.text.LATIN_LOOKALIKES`).
    **{ord(pair[0]): pair[1] for pair in LATIN_LOOKALIKES},
    # Typographic quotes and primes, dashes and minus, colon look-alikes NFKC keeps
    # (RATIO, MODIFIER LETTER COLON, RAISED COLON), line and paragraph separators.
    **dict.fromkeys(map(ord, "\u2018\u2019\u201a\u201b\u2032"), "'"),
    **dict.fromkeys(map(ord, "\u201c\u201d\u201e\u201f\u2033"), '"'),
    **dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"), "-"),
    **dict.fromkeys(map(ord, "\u2236\ua789\u02f8"), ":"),
    **dict.fromkeys(map(ord, "\u0085\u2028\u2029"), "\n"),
    # Invisible: COMBINING GRAPHEME JOINER, variation selectors (format characters, Cf,
    # are left out by category: soft hyphen, zero-width space/joiners, BOM, bidi marks).
    **dict.fromkeys((0x034F, *range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)), None),
}


class _FoldTable(dict):
    """``str.translate`` table of :func:`fold`, filled on first sight of each character
    (no table of all of Unicode is built: a hook process sees a few dozen)."""

    def __missing__(self, cp: int) -> str | None:
        c = chr(cp)
        if cp < 128:
            out: str | None = c
        elif cp in _LOOKALIKES:
            out = _LOOKALIKES[cp]
        else:
            import unicodedata

            cat = unicodedata.category(c)
            if cat in ("Cf", "Mn"):
                # Format characters (soft hyphen, zero-width space and joiners, BOM, bidi
                # controls) and combining marks (pa\u0301ssword): nothing to read.
                out = None
            elif cat == "Zs":  # no-break, ideographic, thin, en/em... spaces
                out = " "
            else:
                # Fullwidth forms, small and vertical forms (﹕ ︓), math letters: NFKC
                # gives one ASCII character; ligatures and squared units (ﬁ, ㎩ "Pa")
                # and … give several. An accented Latin letter (á, ñ, ö) is its base
                # letter: NFKD without the combining marks.
                n = unicodedata.normalize("NFKC", c)
                if not n.isascii():
                    n = "".join(x for x in unicodedata.normalize("NFKD", c) if not unicodedata.combining(x))
                out = n if n and n.isascii() else c
        self[cp] = out
        return out


_FOLD = _FoldTable()
_NON_ASCII = Lazy(r"[^\x00-\x7f]+")


def _reads_ascii(value: str) -> bool:
    """Whether ``value`` is ASCII text, written perhaps in fullwidth or compatibility
    forms (NFKC gives ASCII: ``ｐａｓｓ``), with look-alike letters of other scripts
    (:data:`_LOOKALIKES`) and invisible format characters (soft hyphen, zero-width
    space). Accented letters and combining marks are not."""
    if value.isascii():
        return True
    import unicodedata

    for c in value:
        if c.isascii() or ord(c) in _LOOKALIKES or unicodedata.category(c) == "Cf":
            continue
        n = unicodedata.normalize("NFKC", c)
        if not (n and n.isascii()):
            return False
    return True


def fold(text: str) -> str:
    """The folded view redact() matches on: ``text`` with each character that stands
    for an ASCII one (its NFKC form when that is one ASCII character: fullwidth letters,
    digits and punctuation, ``︓ ﹕``; any Unicode space; a Cyrillic or Greek look-alike
    letter; typographic quotes and dashes; ``∶``) replaced by it, and invisible format
    characters (soft hyphen, zero-width space and joiners, BOM, bidi controls, variation
    selectors) left out. ASCII text is returned as it is."""
    return text if text.isascii() else text.translate(_FOLD)


class _Folded:
    """redact() of a text whose folded view differs from it: every pattern runs on the
    view (as :func:`_pipeline` on ASCII text), and each replacement is also made in the
    original at the place the matched characters came from, so the original keeps its
    look-alikes and invisible characters everywhere but in the secrets cut out.

    Folding maps a character to one (most), to none (invisible ones, combining marks) or
    to several (``ﬁ``, ``㎩``, ``…``). Positions are mapped through breakpoints: from view
    index ``_vb[k]`` on, the original index is ``_ob[k]`` plus the distance (none at all
    while nothing but one-to-one characters occur, the usual case). A view index inside
    a character that folded to several maps to that character (``_inner``): a cut that
    starts or ends inside one takes the whole character, the only case in which the
    original loses more than its ASCII spelling would. After a pattern replaced
    something, the view is folded again from the new original.
    """

    __slots__ = ("orig", "_view", "_vb", "_ob", "_inner", "_off")

    def __init__(self, orig: str) -> None:
        self._reset(orig)
        self._off = 0

    @classmethod
    def of(cls, text: str) -> _Folded | None:
        """The folded view of ``text``, or None when nothing in it folds."""
        self = cls(text)
        return None if self._view is text else self

    def _reset(self, text: str) -> None:
        """Fold ``text`` and record where view and original stop moving together. Only
        the runs of non-ASCII characters are looked at (one scan in C finds them; a
        translate of the whole text would look every ASCII character up too): most texts
        hold a few (a dash, an arrow, a name), a CJK text holds long ones."""
        self.orig, self._vb, self._ob, self._inner = text, [], [], {}
        pieces, prev, shift = [], 0, 0  # shift: view index minus original index
        for m in _NON_ASCII.get().finditer(text):
            run = m.group()
            f = run.translate(_FOLD)
            if f == run:
                continue
            start = m.start()
            if len(f) != len(run):
                o, v = start, start + shift
                for c in run:
                    t = _FOLD[ord(c)]
                    n = 1 if t is c else len(t or "")
                    if n > 1:
                        for i in range(1, n):
                            self._inner[v + i] = o
                    v, o = v + n, o + 1
                    if n != 1:
                        self._vb.append(v)
                        self._ob.append(o)
                shift = v - o
            pieces += (text[prev:start], f)
            prev = m.end()
        if pieces:
            pieces.append(text[prev:])
            self._view = "".join(pieces)
        else:
            self._view = text

    def redact(self) -> str:
        """The original with the secrets found in its folded view cut out."""
        _pipeline(self._view, self.sub, self.by_line, self.assign, self.chunks)
        return self.orig

    def _orig_at(self, j: int, end: bool = False) -> int:
        """The original's index of the view's character ``j`` (``len(view)``: the end);
        inside a character that folded to several, that character (``end``: after it)."""
        if j in self._inner:
            return self._inner[j] + end
        if not self._vb:
            return j
        from bisect import bisect_right

        k = bisect_right(self._vb, j) - 1
        return j if k < 0 else self._ob[k] + j - self._vb[k]

    def sub(self, rx: re.Pattern[str], repl, text: str) -> str:
        return self._apply(text, ((0, text),), rx, repl)

    def chunks(self, text: str, chunks, rx: re.Pattern[str], repl) -> str:
        """``rx`` with ``repl`` over the given ``(offset, chunk)`` pieces of the view only."""
        return self._apply(text, chunks, rx, repl)

    def by_line(self, text: str, rx: re.Pattern[str], repl, wanted) -> str:
        """:func:`_by_line` on the view: the same lines, the same matches."""
        chunks, off = [], 0
        for line in text.split("\n"):
            if line and wanted(line, line.lower()):
                chunks.append((off, line))
            off += len(line) + 1
        return self._apply(text, chunks, rx, repl)

    def assign(self, m: re.Match[str]) -> str:
        """:func:`_sub_assign`, stricter after a colon that is not ASCII in the original
        when the value is not ASCII either. CJK prose writes ``：`` after any label and
        runs on without a space ("Token：用于认证的字符串"): such a value must look like a
        credential (:func:`_prose_secret`), as a ``key: value`` in a sentence must.
        ``password：hunter2`` is judged as ``password: hunter2``, and so is a value
        written in fullwidth letters or with invisible characters (``ｐ\xadass``: it is
        ASCII text in another width, :func:`_reads_ascii`); a value whose view is ASCII
        only because its accents were folded (``café``) is not ASCII."""
        out = _sub_assign(m)
        if out == m.group(0) or m.group("sep") != ":":
            return out
        off = self._off
        if _reads_ascii(self.orig[self._orig_at(off + m.start("val")):self._orig_at(off + m.end("val"), True)]):
            return out
        if self.orig[self._orig_at(off + m.start("sep"))] == ":":
            return out
        parts = _secret_value(m.group("val"))
        if parts is None or not _prose_secret(parts[0], parts[1], m.group("word").lower()):
            return m.group(0)
        return out

    def _apply(self, text: str, chunks, rx: re.Pattern[str], repl) -> str:
        """Run ``rx`` over each ``(offset, chunk)`` of the view ``text``, replace as
        ``repl`` says in the original; the new view."""
        edits: list[tuple[int, int, str]] = []
        for off, chunk in chunks:
            self._off = off
            for m in rx.finditer(chunk):
                new = repl if isinstance(repl, str) else repl(m)
                old = m.group(0)
                if new == old:
                    continue
                # Narrow the replacement to what differs (the value, not the key and
                # quotes the callback hands back), so the original keeps its own
                # characters there. A Cookie header with several values is one span
                # from the first value to the last (the names between come from the view).
                n, i, j = min(len(old), len(new)), 0, 0
                while i < n and old[i] == new[i]:
                    i += 1
                while j < n - i and old[-1 - j] == new[-1 - j]:
                    j += 1
                s = off + m.start()
                edits.append((s + i, s + len(old) - j, new[i:len(new) - j]))
        if not edits:
            return text
        view, orig, vb, ob, inner = [], [], [], [], {}
        vprev = oprev = k = dv = do = 0  # dv, do: how far the edits so far moved view, original
        widened = False
        keys = sorted(self._inner)
        ki = 0
        for s, e, rep in edits:
            os_ = max(oprev, self._orig_at(s))
            oe = max(os_, self._orig_at(e, True)) if e > s else os_
            widened = widened or s in self._inner or e in self._inner
            view += (text[vprev:s], rep)
            orig += (self.orig[oprev:os_], rep)
            # Breakpoints and inner positions before the cut move with the edits so far,
            # those inside it go; the cut itself moves together in both texts.
            while k < len(self._vb) and self._vb[k] <= s:
                vb.append(self._vb[k] + dv)
                ob.append(self._ob[k] + do)
                k += 1
            while k < len(self._vb) and self._vb[k] < e:
                k += 1
            while ki < len(keys) and keys[ki] < s:
                inner[keys[ki] + dv] = self._inner[keys[ki]] + do
                ki += 1
            while ki < len(keys) and keys[ki] < e:
                ki += 1
            vb += (s + dv, s + dv + len(rep))
            ob += (os_ + do, os_ + do + len(rep))
            dv += len(rep) - (e - s)
            do += len(rep) - (oe - os_)
            vprev, oprev = e, oe
        view.append(text[vprev:])
        orig.append(self.orig[oprev:])
        if widened:  # the view kept what the original lost: fold it again
            self._reset("".join(orig))
            return self._view
        for i in range(k, len(self._vb)):
            vb.append(self._vb[i] + dv)
            ob.append(self._ob[i] + do)
        for key in keys[ki:]:
            inner[key + dv] = self._inner[key] + do
        self.orig, self._view, self._vb, self._ob, self._inner = "".join(orig), "".join(view), vb, ob, inner
        return self._view


def redact(text: str) -> str:
    """``text`` with every recognised secret replaced by ``[REDACTED:<kind>]``.

    Order matters: specific token formats first (so ``OPENAI_API_KEY=sk-...`` reports
    ``openai-key``), then headers and URLs, then generic assignments. Each pattern runs
    only when one of its trigger substrings occurs, so ordinary output costs a few
    substring scans. Never raises.

    A text with Unicode look-alikes of what the patterns read (``password：x``,
    ``ｔｏｋｅｎ=x``, ``pass\\u200bword=x``: :func:`fold`) is matched on its folded
    view and cut in the original (:class:`_Folded`): what is kept is the user's text as
    written, only the secrets change.
    """
    if not text or not isinstance(text, str):
        return text
    if not text.isascii():
        folded = _Folded.of(text)
        if folded is not None:
            return folded.redact()
    return _pipeline(text, _plain_sub, _by_line, _sub_assign, _plain_chunks)


def _plain_sub(rx: re.Pattern[str], repl, text: str) -> str:
    return rx.sub(repl, text)


def _pipeline(out: str, sub, by_line, assign, chunks) -> str:
    """Every pattern over ``out`` in order. ``sub(rx, repl, text)``, ``by_line(text,
    rx, repl, wanted)`` and ``chunks(text, pieces, rx, repl)`` apply one pattern
    (:func:`_plain_sub`, :func:`_by_line` and :func:`_plain_chunks`, or a
    :class:`_Folded`'s, which also cut the original); ``assign`` replaces an assignment
    match (:func:`_sub_assign`, or the folded view's stricter one)."""
    for kind, triggers, rx in _TOKEN_RX:
        if any(t in out for t in triggers):
            out = sub(rx.get(), _tag(kind), out)
    if "=" in out:
        if "Shared" in out or "AccountKey" in out:
            out = sub(_CONN_STRING.get(), _sub_value("cloud-storage-key"), out)
        if "sig=" in out:
            out = sub(_SAS_SIG.get(), _sub_value("cloud-storage-key"), out)
    for kind, triggers, rx in _CLI_RX:
        if any(t in out for t in triggers):
            out = sub(rx.get(), _sub_value(kind), out)
    lowered = out.lower()
    if "authorization" in lowered:
        out = sub(_AUTH_HEADER.get(), _sub_auth, out)
    if "bearer" in lowered:
        out = sub(_BEARER.get(), _sub_auth, out)
    if "://" in out and "@" in out:
        out = sub(_URL_CREDS.get(), _sub_url, out)
        if "dsn" in lowered:
            out = sub(_DSN_USER_KEY.get(), _sub_url_key, out)
        out = sub(_URL_USER_KEY.get(), _sub_url_key, out)
    if "cookie" in lowered:
        out = sub(_COOKIE.get(), _sub_cookie, out)
    if "password" in lowered:
        if "machine" in lowered or "default" in lowered:
            out = sub(_NETRC_INLINE.get(), _sub_value("password"), out)
        if "machine" in lowered:
            out = sub(_NETRC_LINE.get(), _sub_value("password"), out)
    if out.count(":") >= 4:
        out = by_line(out, _PGPASS.get(), _sub_value("password"), lambda line, low: line.count(":") >= 4)
    if any(t in lowered for t in _ASSIGN_TRIGGERS):
        out = by_line(out, _ASSIGN.get(), assign,
                      lambda line, low: ("=" in line or ":" in line) and any(t in low for t in _ASSIGN_TRIGGERS))
    if any(t in lowered for t in _ASSIGN_TRIGGERS) and ("[" in out or "{" in out or "(" in out or "value" in lowered):
        out = _structure(out, lowered, sub, chunks)
    if any(t in lowered for t in _ASSIGN_TRIGGERS) and _YAML_OPENS(out):
        out = _yaml_blocks(out, chunks)
    if any(t in lowered for t in _FOREIGN_TRIGGERS):
        out = by_line(out, _FOREIGN.get(), _sub_foreign, lambda line, low: any(t in low for t in _FOREIGN_TRIGGERS))
    if "-" in out and any(t in lowered for t in _FLAG_TRIGGERS):
        out = by_line(out, _FLAG.get(), _sub_flag, lambda line, low: "-" in line and any(t in low for t in _FLAG_TRIGGERS))
    if any(t in lowered for t in _PHRASE_TRIGGERS):
        out = by_line(out, _PHRASE.get(), _sub_phrase, lambda line, low: any(t in low for t in _PHRASE_TRIGGERS))
    return out


def _YAML_OPENS(text: str) -> bool:
    """Whether ``text`` may hold a line that opens a YAML block (:func:`_yaml_blocks`):
    a colon that ends a line, or one before a flow list, block scalar or comment."""
    return (":\n" in text or ":\r" in text or text.endswith(":") or ": [" in text or ": |" in text
            or ": >" in text or ": #" in text or ":  " in text)


def _by_line(text: str, rx: re.Pattern[str], repl, wanted) -> str:
    """``rx.sub(repl, text)``, run only on the lines ``wanted(line, line.lower())``
    accepts. Exact for the patterns it is used with: none of them can match across a
    line break (no ``\n`` in any of their classes, ``[ \t]`` for blanks, and at a
    line's start a lookbehind or ``\b`` sees a break as it sees the text's start), and
    ``wanted`` only skips lines holding none of the pattern's trigger words or
    operators. On ordinary code and prose most lines hold none, and the pattern's
    attempt at every position of them was most of redaction's time (bench/redact.py)."""
    if "\n" not in text:
        return rx.sub(repl, text) if wanted(text, text.lower()) else text
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line and wanted(line, line.lower()):
            lines[i] = rx.sub(repl, line)
    return "\n".join(lines)


def redact_counted(text: str) -> tuple[str, int]:
    """``(redact(text), n)``: ``n`` is how many secrets were replaced (markers added;
    markers already in ``text`` are not counted again), so a writer can tell the user
    that something was redacted before it was stored. Never raises."""
    out = redact(text)
    if out is text or out == text or not isinstance(out, str):
        return out, 0
    return out, max(0, out.count("[REDACTED:") - text.count("[REDACTED:"))


# ---------------------------------------------------------------- bounding

_MARK = "\n… [{n} chars cut] …\n"


def bound(text: str, max_chars: int) -> str:
    """``text`` if it fits in ``max_chars`` characters, else its head and tail around a
    ``… [N chars cut] …`` marker; the result never exceeds ``max_chars`` characters.

    The head gets about 60 % of the room (headers, the command's first lines), the tail
    the rest (the end of a log is where errors and summaries are). ``max_chars`` smaller
    than the marker yields a plain cut.
    """
    if max_chars <= 0:
        return ""
    if len(text) <= max_chars:
        return text
    marker_len = len(_MARK.format(n=len(text)))  # upper bound: N < len(text)
    room = max_chars - marker_len
    if room < 2:
        return text[:max_chars]
    head = room * 3 // 5
    tail = room - head
    cut = len(text) - head - tail
    return text[:head] + _MARK.format(n=cut) + (text[-tail:] if tail else "")


# A private key is the largest secret we know (RSA 8192 PEM ~6.4k chars).
_MARGIN = 8192


def clip(text: str, max_chars: int) -> str:
    """``bound(redact(text), max_chars)``, without redacting megabytes it will drop.

    For texts much longer than ``max_chars``, only the head and tail windows (with a
    safety margin wider than any secret) are redacted. ``N`` in the marker then counts
    characters of the original text.
    """
    if len(text) <= 2 * (max_chars + _MARGIN):
        return bound(redact(text), max_chars)
    window = max_chars + _MARGIN
    head = redact(text[:window])
    tail = redact(text[-window:])
    middle = len(text) - 2 * window
    # Stitch with a placeholder of the right size so bound() reports a true count.
    marker_len = len(_MARK.format(n=len(text)))
    room = max_chars - marker_len
    if room < 2:
        return head[:max_chars]
    h = room * 3 // 5
    t = room - h
    cut = (len(head) - h) + middle + (len(tail) - t)
    return head[:h] + _MARK.format(n=cut) + (tail[-t:] if t else "")


# ---------------------------------------------------------------- structured values

#: Default caps for a structured value (a tool's input or response) that is stored:
#: each string, each container's item count, nesting depth and the whole JSON text.
STRING_CAP = 4_000
ITEMS_CAP = 200
DEPTH_CAP = 12
TOTAL_CAP = 16_000


def clip_value(value: object, *, per_string: int = STRING_CAP, total: int = TOTAL_CAP,
               max_items: int = ITEMS_CAP, max_depth: int = DEPTH_CAP) -> object:
    """A copy of a JSON-like ``value`` with every string at every depth (dict keys too)
    redacted and bounded, safe to store, log or send.

    - each string: :func:`clip` to ``per_string`` characters (keys to 200), then judged
      as the value of its key, of its pair's name (``{"name": "API_KEY", "value": ...}``,
      ``["password", ...]``) and of the nearest secret-named key above it
      (``{"password": [...]}``): :func:`_judge`;
    - each list/dict: at most ``max_items`` entries, then one ``"… [N more items]"``
      entry (key ``"…"`` in a dict);
    - deeper than ``max_depth``: the sub-value becomes ``"[nested too deep]"``;
    - the whole, as compact JSON, within about ``total`` characters: when it is longer
      the per-string cap is halved until it fits (down to 64), and if even that does not
      fit, the result is ``{"[truncated]": <clip of the JSON text>}``.

    Numbers, booleans and ``None`` pass unchanged; other objects become their ``str``.
    Never raises.
    """
    import json

    cap = max(64, per_string)
    while True:
        out = _clip_walk(value, cap, max_items, max_depth, 0)
        try:
            text = json.dumps(out, ensure_ascii=False, separators=(",", ":"))
        except (TypeError, ValueError):  # pragma: no cover - _clip_walk yields JSON types
            text = str(out)
        if len(text) <= total:
            return out
        if cap <= 64:
            return {"[truncated]": clip(text, max(total - 20, 0))}
        cap = max(64, cap // 2)


def _clip_walk(v: object, cap: int, max_items: int, max_depth: int, depth: int,
               ctx: tuple[str, bool] | None = None, key: str | None = None) -> object:
    """``v`` clipped; a string judged as the value of ``key`` (its own key, or its
    pair's name) under ``ctx``, the nearest secret-named key above it (:func:`_judge`)."""
    if isinstance(v, str):
        out = clip(v, cap)
        return _judge(key, out, ctx) if (key or ctx) and out else out
    if v is None or isinstance(v, (bool, int, float)):
        return v
    if depth >= max_depth:
        return "[nested too deep]"
    below = _ctx_below(key, ctx) if key else ctx
    if isinstance(v, dict):
        pair = _pair_name(v)
        out: dict[str, object] = {}
        for i, (k, item) in enumerate(v.items()):
            if i >= max_items:
                out["…"] = f"… [{len(v) - max_items} more items]"
                break
            ck = clip(k if isinstance(k, str) else str(k), 200)
            name = pair[1] if pair and k == pair[0] else ck
            out[ck] = _clip_walk(item, cap, max_items, max_depth, depth + 1, below, name)
        return out
    if isinstance(v, (list, tuple)):
        items = list(v)[:max_items]
        # ["password", "x"]: a two-item list whose first item names the second.
        name = items[0] if len(items) == 2 and isinstance(items[0], str) and isinstance(items[1], str) else None
        out_items = [_clip_walk(x, cap, max_items, max_depth, depth + 1, below, name if i == 1 else None)
                     for i, x in enumerate(items)]
        if len(v) > max_items:
            out_items.append(f"… [{len(v) - max_items} more items]")
        return out_items
    return clip(str(v), cap)


def _under_key(key: str, value: str, strict: bool = False) -> str:
    """``value`` (redacted already on its own) redacted as the value of ``key`` in a
    JSON object: ``{"password": "hunter2"}`` handed over as a dict (an MCP tool's
    arguments) says by its key what ``hunter2`` is, as ``"password": "hunter2"`` in a text
    does. Judged exactly so: the pair written as that JSON text and redacted. Only keys
    holding a trigger word (folded: ``ｔｏｋｅｎ`` too) pay for it. ``strict``: only a
    value that looks like a credential (:func:`_credential_like`) goes."""
    low = fold(key).lower()
    if not value or not any(t in low for t in _ASSIGN_TRIGGERS):
        return value
    if strict and not _credential_like(value.replace(" ", "")):
        return value
    head = '"' + _json_lit(key, False) + '": '
    pair = head + '"' + _json_lit(value, False) + '"'
    out = redact(pair)
    if out == pair:
        return value
    lit = out[len(head):]
    if out.startswith(head) and len(lit) >= 2 and lit[0] == lit[-1] == '"':
        new = _json_text(lit[1:-1], False)
        if new is not None:
            return new
    # The key or an escaped quote changed the shape: the whole value goes.
    i = out.find("[REDACTED:", len(head) if out.startswith(head) else 0)
    j = out.find("]", i)
    return out[i:j + 1] if 0 <= i < j else _tag("secret")
