"""Request guards for the web server (stdlib only, pure ASGI).

A server on 127.0.0.1 is still reachable from every web page open in the user's
browser, so these checks run before any endpoint:

* **Host** must be a name on the allow-list (``localhost``, ``127.0.0.1``, ``[::1]``,
  the address ``serve`` was bound to and printed, and every ``--allow-host`` name), with
  the bound port when it is known. A page on ``evil.example`` that re-resolves its name
  to the server's address (DNS rebinding) sends ``Host: evil.example`` and is refused
  (403). On a non-loopback bind, IP-address literals are accepted too: rebinding needs
  a name, and a browser that asks for an address directly is on that address's origin.
* **Token** (non-loopback binds only): a request whose peer is not loopback must carry
  the token ``serve`` generated and printed once: ``Authorization: Bearer <token>``, or
  ``?token=<token>`` once, which answers with a redirect that drops it from the URL
  and sets an ``HttpOnly; SameSite=Strict`` session cookie (401 otherwise).
* **State-changing requests** (POST, PUT, PATCH, DELETE) must prove they come from our
  own page: ``Sec-Fetch-Site: same-origin``, or an ``Origin`` equal to
  ``http://<Host>``. A cross-site ``Sec-Fetch-Site`` or a foreign ``Origin`` is refused
  even if the other header looks fine (403).
* They must also carry ``Content-Type: application/json``. Cross-origin JSON requires a
  CORS preflight, which this server never grants, so a plain HTML form cannot forge one
  (415).

Every response gets a strict Content-Security-Policy (scripts and styles from this
origin only, no inline script), ``nosniff`` and ``frame-ancestors 'none'``: memory text
is rendered with ``textContent`` by the front end, and the CSP is the second wall.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import secrets
from typing import Awaitable, Callable, Iterable
from urllib.parse import parse_qsl, urlencode, urlsplit

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})

CSP = "; ".join([
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
])
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]


def is_loopback_host(host: str) -> bool:
    """True for a bind address or name that only this machine can reach."""
    h = host.strip().strip("[]").lower()
    if h in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(h).is_loopback
    except ValueError:
        return False


def is_ip_literal(name: str) -> bool:
    """True for ``192.168.1.5`` or ``fe80::1`` (no brackets), False for a host name."""
    try:
        ipaddress.ip_address(name.strip("[]"))
    except ValueError:
        return False
    return True


def is_wildcard_host(host: str) -> bool:
    return host.strip().strip("[]") in ("0.0.0.0", "::", "")


def split_host(value: str) -> tuple[str, int | None] | None:
    """``"localhost:7444"`` → ``("localhost", 7444)``; ``"[::1]"`` → ``("::1", None)``.
    None when the header is malformed (bad port, unbalanced brackets, empty)."""
    v = value.strip().lower()
    if not v:
        return None
    if v.startswith("["):
        end = v.find("]")
        if end < 0:
            return None
        name, rest = v[1:end], v[end + 1 :]
        if rest and not rest.startswith(":"):
            return None
        port_s = rest[1:] if rest else None
    else:
        if v.count(":") > 1:  # a bare IPv6 address is not a valid Host header
            return None
        name, _, port_s = v.partition(":")
        port_s = port_s if ":" in v else None
    if not name:
        return None
    if port_s is None:
        return name, None
    if not port_s.isdigit() or not 0 < int(port_s) < 65536:
        return None
    return name, int(port_s)


def host_allowed(header: str | None, *, names: Iterable[str], port: int | None, ip_literals: bool = False) -> bool:
    """Whether a ``Host`` header names this server. ``names`` are the accepted host
    names (lowercase, IPv6 without brackets); ``port`` the bound port (None: any port).
    ``ip_literals`` also accepts any IP address (a non-loopback bind: DNS rebinding
    needs a host name, so an address literal cannot be a rebinding attack)."""
    if header is None:
        return False
    parsed = split_host(header)
    if parsed is None:
        return False
    name, p = parsed
    if port is not None and p is not None and p != port:
        return False
    return name in set(names) or (ip_literals and is_ip_literal(name))


def new_token() -> str:
    """A fresh access token: 32 random bytes, URL-safe base64 (43 characters)."""
    return secrets.token_urlsafe(32)


def session_cookie_value(token: str) -> str:
    """The cookie a browser gets for ``?token=``: an HMAC of the token, so the token
    itself never sits in the cookie jar and the server keeps no session table."""
    return hmac.new(token.encode(), b"ledger-web-session", hashlib.sha256).hexdigest()


COOKIE = "ledger_session"


def _peer_is_loopback(scope: dict) -> bool:
    client = scope.get("client")
    if not client:
        return False
    return is_loopback_host(str(client[0]))


def _cookies(header: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in header.split(";"):
        k, sep, v = part.strip().partition("=")
        if sep:
            out.setdefault(k.strip(), v.strip())
    return out


def token_check(scope: dict, headers: dict[str, str], token: str) -> str:
    """How a request from a non-loopback peer authenticates: ``"ok"`` (bearer header or
    session cookie), ``"exchange"`` (a correct ``?token=``: answer with the cookie and a
    redirect), or ``"refuse"``. Comparisons are constant-time."""
    auth = headers.get("authorization", "")
    if auth[:7].lower() == "bearer " and hmac.compare_digest(auth[7:].strip().encode(), token.encode()):
        return "ok"
    cookie = _cookies(headers.get("cookie", "")).get(COOKIE)
    if cookie and hmac.compare_digest(cookie.encode(), session_cookie_value(token).encode()):
        return "ok"
    query = scope.get("query_string", b"").decode("latin-1")
    for k, v in parse_qsl(query, keep_blank_values=True):
        if k == "token" and hmac.compare_digest(v.encode("utf-8", "replace"), token.encode()):
            return "exchange"
    return "refuse"


def same_origin(method: str, host: str | None, origin: str | None, fetch_site: str | None) -> str | None:
    """None if a request may change state; otherwise the reason it may not."""
    if method not in UNSAFE_METHODS:
        return None
    if fetch_site is not None and fetch_site.lower() != "same-origin":
        return f"cross-site request refused (Sec-Fetch-Site: {fetch_site})"
    if origin is not None:
        parts = urlsplit(origin.strip())
        if parts.scheme not in ("http", "https") or not host or parts.netloc.lower() != host.strip().lower():
            return f"cross-origin request refused (Origin: {origin})"
        return None
    if fetch_site is not None:  # same-origin, no Origin header
        return None
    return "state-changing requests need a same-origin Origin or Sec-Fetch-Site header"


ASGIApp = Callable[[dict, Callable, Callable], Awaitable[None]]


class GuardMiddleware:
    """Pure ASGI middleware applying the checks above and adding security headers.

    ``names``/``port``/``ip_literals``/``token`` are read from ``self`` on every request
    so :func:`ledger.web.server.serve` can fill in the port after binding port 0.
    ``token`` (None: no token check) is required from every peer that is not loopback."""

    def __init__(self, app: ASGIApp, *, names: Iterable[str] = LOOPBACK_NAMES, port: int | None = None,
                 ip_literals: bool = False, token: str | None = None):
        self.app = app
        self.names = {n.lower().strip("[]") for n in names}
        self.port = port
        self.ip_literals = ip_literals
        self.token = token

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        host = headers.get("host")
        if not host_allowed(host, names=self.names, port=self.port, ip_literals=self.ip_literals):
            await _refuse(send, 403, "forbidden-host",
                          f"Host {host!r} is not this server. ledger serve answers only on the names it was given "
                          "(its bind address, loopback and --allow-host names), to stop DNS rebinding. "
                          "Restart it with --allow-host <name> to use this name.")
            return
        if self.token is not None and not _peer_is_loopback(scope):
            verdict = token_check(scope, headers, self.token)
            if verdict == "exchange":
                await _set_cookie_and_redirect(send, scope, session_cookie_value(self.token))
                return
            if verdict == "refuse":
                await _refuse(send, 401, "token-required",
                              "This ledger is served beyond loopback and needs the access token that `ledger serve` "
                              "printed: open the URL with ?token=<token> once, or send Authorization: Bearer <token>.")
                return
        method = scope.get("method", "GET").upper()
        reason = same_origin(method, host, headers.get("origin"), headers.get("sec-fetch-site"))
        if reason:
            await _refuse(send, 403, "cross-origin", reason)
            return
        if method in UNSAFE_METHODS:
            ctype = headers.get("content-type", "").split(";")[0].strip().lower()
            if ctype != "application/json":
                await _refuse(send, 415, "unsupported-media-type",
                              "state-changing requests must send a JSON body (Content-Type: application/json)")
                return

        async def send_with_headers(message: dict) -> None:
            if message["type"] == "http.response.start":
                existing = {k.lower() for k, _ in message.get("headers", [])}
                message = dict(message)
                message["headers"] = list(message.get("headers", [])) + [h for h in SECURITY_HEADERS if h[0] not in existing]
            await send(message)

        await self.app(scope, receive, send_with_headers)


async def _set_cookie_and_redirect(send: Callable, scope: dict, cookie: str) -> None:
    """303 to the same path without ``token`` (so it leaves the address bar, history and
    Referer), setting the session cookie."""
    query = [(k, v) for k, v in parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
             if k != "token"]
    raw = scope.get("raw_path")
    path = raw.decode("latin-1") if raw else (scope.get("path") or "/")
    path = "/" + path.lstrip("/")  # never "//host": that would redirect to another site
    location = path + ("?" + urlencode(query) if query else "")
    headers = [
        (b"location", location.encode("utf-8", "replace")),
        (b"set-cookie", f"{COOKIE}={cookie}; HttpOnly; SameSite=Strict; Path=/".encode()),
        (b"cache-control", b"no-store"),
        (b"content-length", b"0"),
    ] + SECURITY_HEADERS
    await send({"type": "http.response.start", "status": 303, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


async def _refuse(send: Callable, status: int, kind: str, message: str) -> None:
    body = json.dumps({"error": message, "kind": kind}).encode()
    await send({
        "type": "http.response.start",
        "status": status,
        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())] + SECURITY_HEADERS,
    })
    await send({"type": "http.response.body", "body": body})
