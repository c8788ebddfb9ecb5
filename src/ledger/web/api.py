"""The JSON API under ``/api`` (Starlette routes).

Every endpoint runs its store work in Starlette's thread pool through
:meth:`LedgerPool.call`, which hands the function the calling thread's own
:class:`~ledger.service.Ledger` (SQLite connections belong to one thread). Errors are
``{"error": <message>, "kind": <slug>}`` with the status the error class names (400,
404; a read-only store's refused change is 403 with ``reason: "read-only"``). No
endpoint counts as a retrieval: only ``search``/``get``/``related`` are read.
"""

from __future__ import annotations

import json
import math
import sys
import threading
import time
import traceback
from typing import Any, Callable
from urllib.parse import parse_qsl, unquote_to_bytes

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..errors import InvalidInput, LedgerError
from ..flags import TRUE_WORDS
from ..service import HUMAN, Ledger
from ..text import agent_id, storable_problem
from ..vocab import DEFAULT_MODE, DIRECTIONS, KIND_FILTERS, MAX_TEXT_CHARS, MODES
from . import views

MAX_LIMIT = 1000
MAX_GRAPH = 20_000
NDJSON = "application/x-ndjson"


class LedgerPool:
    """One :class:`Ledger` per worker thread, opened on first use and closed on
    shutdown. Opening is cheap after the first migration; each connection keeps its own
    page cache, so re-using it per thread keeps searches fast."""

    def __init__(self, db_path: str):
        self.db_path = db_path
        self._local = threading.local()
        self._lock = threading.Lock()
        self._open: list[Ledger] = []

    def get(self) -> Ledger:
        led = getattr(self._local, "ledger", None)
        if led is None:
            led = Ledger.open(self.db_path)
            self._local.ledger = led
            with self._lock:
                self._open.append(led)
        return led

    async def call(self, fn: Callable[[Ledger], Any]) -> Any:
        return await run_in_threadpool(lambda: fn(self.get()))

    def close_all(self) -> None:
        with self._lock:
            for led in self._open:
                try:
                    led.close()
                except Exception:  # pragma: no cover - closing at shutdown is best effort
                    pass
            self._open.clear()


class BadRequest(LedgerError):
    kind = "invalid-input"


class NotFound(LedgerError):
    kind = "not-found"
    status = 404


def error_response(message: str, kind: str, status: int, fields: dict | None = None) -> JSONResponse:
    """``{"error": message, "kind": kind}`` plus an error's structured fields
    (``field``, ``value``, ``choices``, ``suggestion``) when it has them."""
    return JSONResponse({"error": message, "kind": kind, **(fields or {})}, status_code=status)


#: Where the web UI's store is chosen, after a store error whose way out is another
#: store (:data:`ledger.errors.STORE_LOCATION_REASONS`): the page cannot change it.
STORE_IS_CHOSEN = "This page shows the store ledger serve was started on; to use another, restart ledger serve on it."


def web_message(exc: LedgerError) -> str:
    """The web UI's phrasing of a core error: the core's message plus a hint in the
    UI's own words (never a CLI flag), from the error's structured fields. What only the
    person running ``ledger serve`` can do (restart it, check the file) says so."""
    from ..errors import STORE_LOCATION_REASONS, TextTooLong

    msg = exc.message
    reason = getattr(exc, "reason", None)
    if reason == "read-only" and "To save changes" in msg:
        # A store found unwritable when the server opened it (connection.read_only_message):
        # the server's connections stay read-only until it is restarted.
        return f"{msg} Then restart ledger serve."
    if reason == "corrupt":
        return f"{msg} If it is your store, it may be damaged: check it and restore a backup. {STORE_IS_CHOSEN}"
    if reason in STORE_LOCATION_REASONS:
        return f"{msg} {STORE_IS_CHOSEN}"
    if isinstance(exc, TextTooLong):
        return f"{msg} Keep the sentence that states the fact; a whole document belongs in Sources, as a source."
    if exc.suggestion and exc.field:
        return f'{msg} Did you mean the {exc.field} "{exc.suggestion}"?'
    if exc.choices and exc.field and "one of" not in msg and len(exc.choices) <= 12:
        return f"{msg} Choose one of: {', '.join(map(str, exc.choices))}."
    return msg


def endpoint(fn: Callable) -> Callable:
    """Wrap an async handler: LedgerError → JSON error; anything else → 500 JSON."""

    async def handler(request: Request) -> Response:
        try:
            _check_request_text(request)
            return await fn(request)
        except LedgerError as exc:
            return error_response(web_message(exc), exc.kind, exc.status, exc.fields())
        except Exception as exc:  # keep the JSON contract even for bugs; details on stderr
            traceback.print_exc(file=sys.stderr)
            return error_response(f"internal error: {type(exc).__name__}: {exc}", "internal", 500)

    handler.__name__ = fn.__name__
    handler.__doc__ = fn.__doc__
    return handler


# ---------------------------------------------------------------- request parsing
def _check_request_text(request: Request) -> None:
    """Every query parameter and path segment must be storable text (no NUL, no lone
    surrogate): refused here with a 400 naming the parameter, before any store or FTS
    call can fail on it with a 500. Percent-escapes that are not UTF-8 (``%ff``) are a
    400 too, instead of being searched for as U+FFFD. Bodies get the same check in
    :func:`_body`."""
    try:
        parse_qsl(request.scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True, errors="strict")
    except UnicodeDecodeError as exc:
        raise BadRequest(f"The query string is not UTF-8 (byte 0x{exc.object[exc.start]:02X} after percent-decoding); "
                         "encode parameters as UTF-8.") from None
    raw_path = request.scope.get("raw_path")
    if raw_path:
        # The server decodes the path leniently (%FF becomes U+FFFD, a mojibake id that
        # then 404s); undecodable escapes are the client's mistake, as in the query string.
        try:
            unquote_to_bytes(raw_path.split(b"?", 1)[0]).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BadRequest(f"The path is not UTF-8 (byte 0x{exc.object[exc.start]:02X} after percent-decoding); "
                             "encode ids as UTF-8.") from None
    for name, value in list(request.query_params.multi_items()) + list(request.path_params.items()):
        for what, text in (("name", name), ("value", value)):
            problem = storable_problem(text) if isinstance(text, str) else None
            if problem:
                raise BadRequest(f"The parameter {_shown(name)} {what} {problem}; remove it and try again.")


def _check_json_text(value: Any, where: str = "body") -> None:
    """Walk a parsed JSON body: every string (keys too) must be storable text. JSON can
    spell a lone surrogate (``"\\ud800"``) and a NUL (``"\\u0000"``); both are 400s."""
    if isinstance(value, str):
        problem = storable_problem(value)
        if problem:
            raise BadRequest(f"The request {where} {problem}; remove it and try again.")
    elif isinstance(value, dict):
        for k, v in value.items():
            _check_json_text(k, f"{where} (a key)")
            _check_json_text(v, f"{where}.{_shown(k)}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _check_json_text(v, f"{where}[{i}]")


def _shown(name: str) -> str:
    """A parameter name safe to echo in an error (NUL and surrogates escaped)."""
    return name.encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\x00")[:60]


def _pool(request: Request) -> LedgerPool:
    return request.app.state.pool


def _only(request: Request, *allowed: str) -> None:
    """Refuse query parameters the endpoint does not take (400), so a misspelt or
    guessed one (``/api/events?since=...``) is not silently ignored."""
    for name in request.query_params:
        if name not in allowed:
            takes = f"it takes: {', '.join(allowed)}" if allowed else "it takes none"
            raise BadRequest(f"Unknown parameter {_shown(name)!r} for {request.url.path}; {takes}.")


def _int(request: Request, name: str, default: int, lo: int, hi: int) -> int:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    try:
        v = int(raw)
    except ValueError:
        raise BadRequest(f"{name} must be a whole number, got {raw!r}.") from None
    if not lo <= v <= hi:
        raise BadRequest(f"{name} must be between {lo} and {hi}, got {v}.")
    return v


def _flag(request: Request, name: str) -> bool:
    """A yes/no query parameter: yes by the words of :data:`ledger.flags.TRUE_WORDS`, any
    case; anything else (absent included) is no."""
    return request.query_params.get(name, "").lower() in TRUE_WORDS


def _choice(request: Request, name: str, choices: tuple[str, ...], default: str | None) -> str | None:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    if raw not in choices:
        raise BadRequest(f'Unknown {name} "{raw}". Use one of: {", ".join(choices)}.')
    return raw


#: The most a request body may hold, bytes (2 MiB); ``server.create_app`` gives it
#: to Starlette's reader. A memory's text is at most ``MAX_TEXT_CHARS`` characters, so no
#: request of the UI comes near it.
MAX_BODY = 2 * 1024 * 1024


class TooLarge(LedgerError):
    kind = "invalid-input"
    status = 413


async def _body(request: Request) -> dict:
    from starlette.exceptions import HTTPException

    try:
        raw = await request.body()
    except HTTPException as exc:
        if exc.status_code != 413:
            raise
        # The server's body limit (MAX_BODY): a client's mistake, answered as one, not a
        # traceback on the console of `ledger serve` and a 500.
        raise TooLarge(f"The request body is larger than {MAX_BODY:,} bytes, the most this server reads. A memory's "
                       f"text is at most {MAX_TEXT_CHARS:,} characters; send less.") from None
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):  # RecursionError: absurdly deep nesting
        raise BadRequest("The request body is not valid JSON.") from None
    if not isinstance(data, dict):
        raise BadRequest("The request body must be a JSON object.")
    _check_json_text(data)
    return data


def _by(body: dict, request: Request) -> str:
    by = body.get("by", request.query_params.get("by", HUMAN))
    if not isinstance(by, str) or not by.strip():
        raise BadRequest("by must be a non-empty agent id.")
    try:
        return agent_id(by, source="by")  # one normal form on every write path (docs/search.md "agent:")
    except InvalidInput as exc:
        raise BadRequest(exc.message) from None


def _search_flags(request: Request) -> dict:
    return {
        "mode": _choice(request, "mode", MODES, DEFAULT_MODE),
        "include_archived": _flag(request, "archived"),
        "pending_only": _flag(request, "pending"),
        "pinned_only": _flag(request, "pinned"),
        "conflicted_only": _flag(request, "conflicted"),
    }


# ---------------------------------------------------------------- read endpoints
@endpoint
async def meta(request: Request) -> Response:
    return JSONResponse(await _pool(request).call(views.meta))


@endpoint
async def stats(request: Request) -> Response:
    started = request.app.state.started_at
    with_clusters = request.query_params.get("clusters", "1") != "0"
    return JSONResponse(await _pool(request).call(
        lambda led: views.stats(led, started, int(time.time() * 1000), clusters=with_clusters)))


@endpoint
async def clusters(request: Request) -> Response:
    return JSONResponse(await _pool(request).call(lambda led: [c.to_dict() for c in led.clusters()]))


@endpoint
async def add_cluster(request: Request) -> Response:
    body = await _body(request)
    label = body.get("label")
    if not isinstance(label, str) or not label.strip():
        raise BadRequest("label is required")
    cid, color = body.get("id"), body.get("color")
    if cid is not None and not isinstance(cid, str) or color is not None and not isinstance(color, str):
        raise BadRequest("id and color must be strings.")
    c = await _pool(request).call(lambda led: led.add_cluster(label, cluster_id=cid, color=color))
    return JSONResponse(c.to_dict())


@endpoint
async def agents(request: Request) -> Response:
    return JSONResponse(await _pool(request).call(lambda led: led.agents()))


@endpoint
async def events(request: Request) -> Response:
    _only(request, "limit", "after")
    limit = _int(request, "limit", 20, 1, 500)
    after = _int(request, "after", 0, 0, 2**62)
    evs = await _pool(request).call(lambda led: led.events(limit))
    return JSONResponse({"events": [e.to_dict() for e in evs if e.id > after]})


@endpoint
async def facets(request: Request) -> Response:
    return JSONResponse(await _pool(request).call(lambda led: led.facets()))


@endpoint
async def timeline(request: Request) -> Response:
    _only(request, "buckets")
    buckets = _int(request, "buckets", 60, 1, 1000)
    return JSONResponse(await _pool(request).call(lambda led: led.timeline(buckets)))


@endpoint
async def search(request: Request) -> Response:
    q = request.query_params.get("q", "")
    limit = _int(request, "limit", 100, 0, MAX_LIMIT)
    offset = _int(request, "offset", 0, 0, 10**9)
    kind = _choice(request, "kind", KIND_FILTERS, "all")
    sort = _choice(request, "sort", views.SORTS, None)
    direction = _choice(request, "dir", DIRECTIONS, "desc")
    flags = _search_flags(request)
    res = await _pool(request).call(
        lambda led: led.search(q, limit=limit, offset=offset, kind=kind, sort=sort, direction=direction, **flags)
    )
    d = res.to_dict()
    d["offset"] = offset
    return JSONResponse(d)


@endpoint
async def graph(request: Request) -> Response:
    q = request.query_params.get("q", "")
    limit = _int(request, "limit", 5000, 1, MAX_GRAPH)
    kind = _choice(request, "kind", KIND_FILTERS, "claim")
    flags = _search_flags(request)
    return JSONResponse(await _pool(request).call(lambda led: views.graph(led, q, limit=limit, kind=kind, **flags)))


@endpoint
async def memory(request: Request) -> Response:
    _only(request)
    mid = request.path_params["id"]
    return JSONResponse(await _pool(request).call(lambda led: views.memory_detail(led, mid)))


@endpoint
async def export(request: Request) -> Response:
    """Every match of a query as NDJSON (the whole result, not one page): the same
    records as ``ledger export`` (:meth:`Ledger.export_lines`), history lines included."""
    q = request.query_params.get("q", "")
    kind = _choice(request, "kind", KIND_FILTERS, "all")
    sort = _choice(request, "sort", views.SORTS, None)
    flags = _search_flags(request)
    text = await _pool(request).call(lambda led: "".join(led.export_lines(q, kind=kind, sort=sort, **flags)))
    return _ndjson(text)


def _ndjson(text: str) -> Response:
    return Response(text, media_type=NDJSON, headers={"content-disposition": 'attachment; filename="ledger-export.jsonl"'})


@endpoint
async def review(request: Request) -> Response:
    _only(request, "limit")
    limit = _int(request, "limit", 50, 1, 500)
    return JSONResponse(await _pool(request).call(lambda led: views.review_bundle(led, limit)))


@endpoint
async def sources(request: Request) -> Response:
    _only(request, "preview")
    preview = _int(request, "preview", 4, 0, 200)
    return JSONResponse(await _pool(request).call(lambda led: views.sources(led, preview)))


@endpoint
async def source(request: Request) -> Response:
    sid = request.path_params["id"]
    _only(request, "preview")
    preview = _int(request, "preview", 50, 0, 10_000)
    return JSONResponse(await _pool(request).call(lambda led: views.source_detail(led, sid, preview)))


# ---------------------------------------------------------------- write endpoints
@endpoint
async def update_memory(request: Request) -> Response:
    mid = request.path_params["id"]
    body = await _body(request)
    text, cluster = body.get("text"), body.get("cluster")
    if text is None and cluster is None:
        raise BadRequest("Nothing to update: send text and/or cluster.")
    if text is not None and not isinstance(text, str) or cluster is not None and not isinstance(cluster, str):
        raise BadRequest("text and cluster must be strings.")
    by = _by(body, request)
    m = await _pool(request).call(lambda led: led.update(mid, text=text, cluster=cluster, by=by))
    return JSONResponse({"memory": m.to_dict()})


@endpoint
async def bulk(request: Request) -> Response:
    body = await _body(request)
    op, ids = body.get("op"), body.get("ids")
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise BadRequest("ids must be a list of memory ids.")
    if not ids:
        raise BadRequest("no memories selected")
    if op == "export":
        def run(led: Ledger) -> str:
            return "".join(led.export_lines(ids=ids))

        return _ndjson(await _pool(request).call(run))
    if not isinstance(op, str):
        raise BadRequest("op is required: pin, unpin, archive, unarchive, merge, drop or export.")
    by = _by(body, request)
    out = await _pool(request).call(lambda led: led.bulk(op, ids, by=by))
    if "merged" in out:
        return JSONResponse({"merged": out["merged"].to_dict(), "affected": len(set(ids))})
    return JSONResponse(out)


@endpoint
async def review_action(request: Request) -> Response:
    mid, action = request.path_params["id"], request.path_params["action"]
    body = await _body(request)
    text = body.get("text")
    if text is not None and not isinstance(text, str):
        raise BadRequest("text must be a string.")
    by = _by(body, request)
    m = await _pool(request).call(lambda led: led.review(mid, action, text=text, by=by))
    if action == "drop":
        return JSONResponse({"dropped": mid})
    return JSONResponse({"memory": m.to_dict()})


@endpoint
async def resolve(request: Request) -> Response:
    cid = request.path_params["id"]
    body = await _body(request)
    resolution = body.get("resolution")
    if not isinstance(resolution, str) or not resolution:
        raise BadRequest("resolution is required: a, b, both, merge or dismiss.")
    by = _by(body, request)
    c = await _pool(request).call(lambda led: led.resolve(cid, resolution, by=by))
    return JSONResponse({"resolved": cid, "resolution": resolution, "conflict": c.to_dict()})


@endpoint
async def set_trust(request: Request) -> Response:
    sid = request.path_params["id"]
    body = await _body(request)
    trust = body.get("trust")
    if isinstance(trust, bool) or not isinstance(trust, (int, float)) or not math.isfinite(trust):
        raise InvalidInput("trust must be a number from 0 to 1.")
    by = _by(body, request)
    t = await _pool(request).call(lambda led: led.set_trust(sid, float(trust), by=by))
    return JSONResponse({"id": sid, "trust": t})


@endpoint
async def drop_source(request: Request) -> Response:
    sid = request.path_params["id"]
    body = await _body(request)
    by = _by(body, request)
    return JSONResponse(await _pool(request).call(lambda led: led.drop_source(sid, by=by)))


@endpoint
async def not_found(request: Request) -> Response:
    raise NotFound(f"No API endpoint {request.method} {request.url.path}.")


routes = [
    Route("/api/meta", meta),
    Route("/api/stats", stats),
    Route("/api/clusters", clusters, methods=["GET"]),
    Route("/api/clusters", add_cluster, methods=["POST"]),
    Route("/api/agents", agents),
    Route("/api/events", events),
    Route("/api/facets", facets),
    Route("/api/timeline", timeline),
    Route("/api/search", search),
    Route("/api/graph", graph),
    Route("/api/export", export),
    Route("/api/memories/bulk", bulk, methods=["POST"]),
    Route("/api/memories/{id}", memory, methods=["GET"]),
    Route("/api/memories/{id}", update_memory, methods=["PATCH"]),
    Route("/api/review", review),
    Route("/api/review/{id}/{action}", review_action, methods=["POST"]),
    Route("/api/conflicts/{id}/resolve", resolve, methods=["POST"]),
    Route("/api/sources", sources),
    Route("/api/sources/{id}", source, methods=["GET"]),
    Route("/api/sources/{id}", drop_source, methods=["DELETE"]),
    Route("/api/sources/{id}/trust", set_trust, methods=["POST"]),
    Route("/api/{rest:path}", not_found, methods=["GET", "POST", "PUT", "PATCH", "DELETE"]),
]
