"""Request guards for the loopback web server (stdlib only, pure ASGI).

A server on 127.0.0.1 is still reachable from every web page open in the user's
browser, so three checks run before any endpoint:

* **Host** must be a loopback name (``localhost``, ``127.0.0.1``, ``[::1]``), with the
  bound port when it is known. A page on ``evil.example`` that re-resolves its name to
  127.0.0.1 (DNS rebinding) sends ``Host: evil.example`` and is refused (403).
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

import ipaddress
import json
from typing import Awaitable, Callable, Iterable
from urllib.parse import urlsplit

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


def host_allowed(header: str | None, *, names: Iterable[str], port: int | None, any_host: bool = False) -> bool:
    """Whether a ``Host`` header names this server. ``names`` are the accepted host
    names (lowercase, IPv6 without brackets); ``port`` the bound port (None: any port).
    ``any_host`` accepts every well-formed name (a wildcard bind with ``allow_remote``)."""
    if header is None:
        return False
    parsed = split_host(header)
    if parsed is None:
        return False
    name, p = parsed
    if port is not None and p is not None and p != port:
        return False
    return any_host or name in set(names)


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

    ``names``/``port``/``any_host`` are read from ``self`` on every request so
    :func:`ledger.web.server.serve` can fill in the port after binding port 0."""

    def __init__(self, app: ASGIApp, *, names: Iterable[str] = LOOPBACK_NAMES, port: int | None = None, any_host: bool = False):
        self.app = app
        self.names = {n.lower().strip("[]") for n in names}
        self.port = port
        self.any_host = any_host

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        host = headers.get("host")
        if not host_allowed(host, names=self.names, port=self.port, any_host=self.any_host):
            await _refuse(send, 403, "forbidden-host",
                          f"Host {host!r} is not this server. ledger serve answers only on its loopback address "
                          "(protection against DNS rebinding).")
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


async def _refuse(send: Callable, status: int, kind: str, message: str) -> None:
    body = json.dumps({"error": message, "kind": kind}).encode()
    await send({
        "type": "http.response.start",
        "status": status,
        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())] + SECURITY_HEADERS,
    })
    await send({"type": "http.response.body", "body": body})
