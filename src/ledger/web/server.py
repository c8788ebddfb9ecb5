"""``ledger serve``: the supervision UI and its JSON API on a loopback port.

:func:`create_app` builds the Starlette app for one store file; :func:`serve` binds the
socket (port 0 picks a free one), prints the banner and runs uvicorn until Ctrl-C. This
is the only module that imports Starlette and uvicorn; the CLI imports it inside the
``serve`` command so every other command starts without them.

Binding to anything but loopback needs ``allow_remote=True``; then every request from
a peer that is not loopback must carry a token generated at start and printed once,
the Host check stays on (loopback names, the bind address, IP literals and the
``--allow-host`` names), and the banner says what is exposed to whom.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import sys
import threading
import time
import webbrowser
from pathlib import Path
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from .. import __version__
from ..errors import LedgerError
from ..service import Ledger
from . import api
from .security import LOOPBACK_NAMES, GuardMiddleware, is_loopback_host, is_wildcard_host, new_token

STATIC = Path(__file__).parent / "static"
#: Worker threads (and so SQLite connections, each with its own page cache) at most.
WORKERS = 8


class _Static(StaticFiles):
    """Static assets, revalidated on every load (no build step, no hashed names)."""

    async def get_response(self, path: str, scope) -> Response:
        resp = await super().get_response(path, scope)
        resp.headers["cache-control"] = "no-cache"
        return resp


def create_app(db_path: str, *, port: int | None = None, extra_hosts: tuple[str, ...] = (), ip_literals: bool = False,
               token: str | None = None) -> Starlette:
    """The app for the store at ``db_path``.

    Only ``Host`` headers naming loopback (plus ``extra_hosts``; plus any IP address
    when ``ip_literals``) are served; ``port``, when given, must match too (``serve``
    sets it after binding). With ``token``, peers that are not loopback must present it
    (see :mod:`ledger.web.security`).
    """
    pool = api.LedgerPool(str(db_path))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette):
        import anyio.to_thread

        # Each worker thread keeps one connection open; bound how many there can be.
        anyio.to_thread.current_default_thread_limiter().total_tokens = WORKERS
        yield
        pool.close_all()

    async def index(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", headers={"cache-control": "no-cache"})

    async def health(request: Request) -> Response:
        try:
            n = await pool.call(lambda led: led.stats()["memories"])
        except LedgerError as exc:
            return JSONResponse({"ok": False, "error": exc.message, "kind": exc.kind}, status_code=503)
        return JSONResponse({"ok": True, "memories": n, "version": __version__})

    app = Starlette(
        routes=[
            Route("/", index),
            Route("/index.html", index),
            Route("/health", health),
            *api.routes,
            Mount("/static", app=_Static(directory=STATIC), name="static"),
        ],
        middleware=[Middleware(GuardMiddleware, names=LOOPBACK_NAMES | {h.lower().strip("[]") for h in extra_hosts}, port=port,
                               ip_literals=ip_literals, token=token)],
        lifespan=lifespan,
        max_body_size=api.MAX_BODY,
    )
    app.state.pool = pool
    app.state.db_path = str(db_path)
    app.state.started_at = int(time.time() * 1000)
    return app


def _is_ipv6(name: str) -> bool:
    try:
        return ipaddress.ip_address(name).version == 6
    except ValueError:
        return False


def _url(host: str, port: int) -> str:
    h = host.strip("[]")
    if is_wildcard_host(h):
        h = "127.0.0.1" if ":" not in h else "::1"
    return f"http://[{h}]:{port}/" if ":" in h else f"http://{h}:{port}/"


def _bind(host: str, port: int) -> socket.socket:
    h = host.strip("[]")
    family = socket.AF_INET6 if ":" in h else socket.AF_INET
    if h == "localhost":
        h, family = "127.0.0.1", socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((h, port))
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def _say_error(message: str, kind: str) -> None:
    print(f"✕ {message}", file=sys.stderr)


def serve(db_path: str, host: str = "127.0.0.1", port: int = 7444, open_browser: bool = False, allow_remote: bool = False,
          on_error=None, allow_hosts: tuple[str, ...] = (), token: str | None = None, as_json: bool = False,
          phrase=None) -> int:
    """Run the web UI for the store at ``db_path`` until interrupted. Returns an exit
    code: 0 after a clean stop, 130 after Ctrl-C (SIGINT), 1 if the port cannot be bound or the store cannot be
    opened, 2 for a non-loopback host without ``allow_remote`` or a bad ``allow_hosts``
    name.

    The banner with the URL is printed only once uvicorn has started and the socket
    accepts connections, so a script may request the URL as soon as it reads the line.
    With ``as_json`` that line is one JSON object instead of the banner:
    ``{"url", "store", "memories", "pending"}`` plus ``"token"`` when one is required.
    ``on_error(message, kind)`` reports a failure (default: ``✕ <message>`` on stderr;
    the CLI passes its own so ``--json`` gets a JSON object). ``phrase(exc)``: the words
    for a store that cannot be opened at start (default: the core's message; the CLI
    passes its own, :func:`ledger.cli.hints.phrase`, which says where its store is chosen).

    The bind address (the host in the printed URL) and ``allow_hosts`` are accepted in
    ``Host`` besides the loopback names. A non-loopback bind generates a token (unless
    ``token`` is given, for tests) that peers other than loopback must present.
    """
    import uvicorn

    say_error = on_error or _say_error
    remote = not is_loopback_host(host)
    if remote and not allow_remote:
        say_error(f"{host} is not a loopback address. The UI can read and change every memory;"
                  " bind to 127.0.0.1, or pass --allow-remote if you really mean to expose it (a token will be required).",
                  "not-loopback")
        return 2
    names = []
    for name in allow_hosts:
        n = name.strip().lower().strip("[]")
        if not n or any(c in n for c in "/:@ \t*") and not _is_ipv6(n):
            say_error(f"--allow-host takes a bare host name such as box.lan (no scheme, port or wildcard); got {name!r}.",
                      "invalid-input")
            return 2
        names.append(n)
    try:
        with Ledger.open(db_path) as led:
            st = led.stats()
            path = led.path
            read_only = led.store.write_refusal()  # browsing works; every change is answered with an error
    except LedgerError as exc:
        say_error(phrase(exc) if phrase else exc.message, exc.kind)
        return 1
    try:
        sock = _bind(host, port)
    except OSError as exc:
        hint = " Try --port 0 to pick a free port." if port else ""
        say_error(f"Cannot listen on {host}:{port}: {exc.strerror or exc}.{hint}", "port-unavailable")
        return 1
    bound_port = sock.getsockname()[1]
    url = _url(host, bound_port)
    # The name in the printed URL must be accepted: `serve --host 127.0.0.2` used to
    # answer 403 on its own URL.
    printed = urlsplit(url).hostname or ""
    extra = tuple(dict.fromkeys([printed, host.strip("[]").lower(), *names]))
    secret = (token or new_token()) if remote else None
    app = create_app(str(path), port=bound_port, extra_hosts=extra, ip_literals=remote, token=secret)

    def banner() -> None:
        if as_json:
            import json

            line = {"url": url, "store": str(path), "memories": st["memories"], "pending": st["pending"]}
            if secret:
                line["token"] = secret
            if read_only:
                line["readOnly"] = read_only
            print(json.dumps(line), flush=True)
            if open_browser:
                threading.Timer(0.1, webbrowser.open, args=(url,)).start()
            return
        print(f"● LEDGER running   {url}")
        print(f"  {st['memories']} {'memory' if st['memories'] == 1 else 'memories'} · {st['pending']} pending review · {path}")
        if read_only:
            print(f"  Read-only: {read_only}. Browsing works; changes are refused until the store can be written.")
        if remote:
            where = f"port {bound_port} on every interface of this machine" if is_wildcard_host(host) else f"{host}:{bound_port}"
            print(f"  ⚠ Bound to {host}, not loopback: {where}. Whoever reaches it with the token below can read, edit,"
                  f" merge and delete every memory, source and conflict in this store ({st['memories']} memories), and"
                  " see every agent's activity. Plain HTTP: the token and the memories cross the network unencrypted.")
            print(f"  Access token (shown once): {secret}")
            print(f"    open http://<this machine>:{bound_port}/?token={secret} once, or send Authorization: Bearer <token>")
            accepted = ", ".join(["localhost", "127.0.0.1", "[::1]", "IP addresses",
                                  *[n for n in extra if n not in LOOPBACK_NAMES and not is_wildcard_host(n)]])
            print(f"  Host names accepted: {accepted}; add one with --allow-host NAME.")
        elif isinstance(path, str):  # a PostgreSQL URL: the store is shared by design
            print("  Bound to loopback. The store is a shared PostgreSQL database: other machines write to it too.")
        else:
            print("  Bound to loopback. Nothing in this store leaves this machine.")
        sys.stdout.flush()
        if open_browser:
            threading.Timer(0.1, webbrowser.open, args=(url,)).start()

    class _Server(uvicorn.Server):
        # uvicorn sets `started` after its listener is created; only then is the URL true.
        async def startup(self, sockets=None):
            await super().startup(sockets=sockets)
            if self.started and not self.should_exit:
                banner()

    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on", timeout_graceful_shutdown=3)
    server = _Server(config)
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        # uvicorn shuts down gracefully on Ctrl-C, then raises the signal again: the
        # server stopped as asked, and the status says it was by an interrupt (130, the
        # CLI's convention for Ctrl-C, docs/cli.md).
        return 130
    finally:
        sock.close()
    return 0
