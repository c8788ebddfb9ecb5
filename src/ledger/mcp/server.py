"""The MCP server behind ``ledger mcp``: seven tools over the :class:`ledger.service.Ledger`
facade, served on stdio with the official Python SDK's ``MCPServer`` (docs/mcp.md).

Tools are the agent verbs of ``SKILL.md`` with the field's names: ``recall`` (counted: the
agent's read), ``search`` (never counted), ``show``, ``remember``, ``conflicts``, ``judge``
and ``checkpoint``. There is no ``resolve`` and no ``forget``: which memory survives a
conflict, and what is dropped, stays with people (``ledger review``, ``ledger serve``).

Shapes come from :mod:`ledger.wire`, as the CLI's ``--json``: lists are compact
(``id``, ``strength`` 0-1, ``text``, ``cluster``) unless ``detail`` is true, which gives
the full memory as ``ledger recall --json`` prints it. Every result starts with
``warnings`` (a list, ``[]`` when all is well): the CLI's stderr warnings as data
(``{"kind", "warning", ...}``: a query's filter warnings, ``no-store``, ``new-store``,
``redacted``, ``missing-file``). Errors are tool errors (``isError`` results): the core's
message with what to do next, a tool and its argument, or "ask the user to ..." where only
the user can act (:mod:`ledger.mcp.wording`; the CLI's :func:`ledger.cli.hints.phrase`
names its commands instead); an argument a tool does not take is one too. A request the
SDK refuses before any tool runs (before ``initialize``, params of the wrong shape) is a
JSON-RPC error saying what to send. The server itself never stops on one.

A read never creates a store: a store file that does not exist is answered from an empty
stand-in with a ``no-store`` warning naming the path, as the CLI's reads; ``remember``
creates it, as the CLI's writes, and says so.

Each call opens the store, does its work and closes it, in the SDK's worker thread (the
SDK runs plain functions there): a store locked by another writer makes that call wait
its busy timeout and fail alone, while the server keeps answering, and nothing is held
open between calls that could keep another process from the file.

Agent identity: ``$LEDGER_AGENT`` if set (or ``--agent``), else the client's own name
from the MCP ``initialize`` request (``clientInfo.name``: ``claude-code``, ``cursor``...).
"""

from __future__ import annotations

import os
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.shared.message import SessionMessage
from mcp.types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    ToolAnnotations,
)
from pydantic import Field, ValidationError

from .. import __version__, wire
from ..errors import InvalidInput, LedgerError
from ..paths import IN_MEMORY, in_memory_message
from ..vocab import DEFAULT_MODE, MODES, SORTS
from .wording import (  # noqa: F401  (MAX_ERROR_CHARS, WHERE_THE_STORE_IS_SET: for tests and embedders)
    A_BUG,
    MAX_ERROR_CHARS,
    NO_STORE_FIX,
    WHERE_THE_STORE_IS_SET,
    RequestWording,
    arguments_message,
    clip_error,
    phrase,
    unknown_arguments,
    unknown_tool,
)

#: Used when neither $LEDGER_AGENT nor the client's name is known.
FALLBACK_AGENT = "mcp"
#: Seconds. After stdin closes, how long requests already read may still run before
#: the server stops anyway (a store's busy timeout is well under this).
DRAIN_LIMIT_S = 120.0

INSTRUCTIONS = """\
ledger is the local memory shared by every agent on this machine.
Call `recall` before answering anything about the user, their projects, codebases,
people or history; call `remember` for durable facts worth knowing next week (one
self-contained sentence each, with a cluster id; an unknown cluster is an error that
lists the known ones). Prefer strong memories (strength near 1); treat anything under
0.4 as a lead to check. When a fact changes, remember the new one with `supersedes`;
a person decides. In a spare turn, `conflicts` lists pairs to `judge`.
`search` is for browsing and does not count as a read.
Every result has `warnings`: read them before concluding that nothing is known (a filter
that matches nothing, or no store at the configured path, is said there)."""

# Annotations are hints a client may use to decide what needs the user's approval; they
# must be true. open_world is false everywhere: the tools touch one local file.
# recall is read-only for the user's environment although each call counts a use
# (hits, last read, readers: the store's own bookkeeping that makes strength work), so
# it is not idempotent: calling it again strengthens the same memories again.
READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
COUNTED_READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=False,
                               open_world_hint=False)
# remember adds a claim (or corroborates the same claim); it never overwrites or drops.
# A repeated call corroborates again, so it is not idempotent.
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)
# judge records a verdict once: the same call again finds the pair already judged and
# changes nothing (an error says so), so it is idempotent; it drops nothing.
JUDGE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)

Mode = Annotated[Literal[MODES], Field(description="hybrid: words, and words no memory holds widened to their "
                                                    "neighbours; keyword: whole words only; fuzzy: every word "
                                                    "widened (as `ledger search --mode`).")]
Sort = Annotated[Literal[SORTS] | None, Field(description="Order by relevance, strength, hits, created (newest "
                                                          "first) or last (last read); default: the score (relevance "
                                                          "and strength), or strength when the query has no words.")]
Detail = Annotated[bool, Field(description="Full records (as `ledger recall --json`) instead of the compact "
                                            "id, strength, text, cluster.")]


def compact(m) -> dict:
    """:func:`ledger.wire.memory_compact` with ``stale`` filled in when a file the
    memory is keyed to changed since it was learned."""
    stale = ""
    if m.files:
        from ..filekeys import change_note, file_changes

        stale = change_note(file_changes(m.files))
    return wire.memory_compact(m, stale)


class _MCPServer(MCPServer):
    """The SDK's server with ledger's wording for the failures the SDK words itself
    (:mod:`ledger.mcp.wording`): an unknown tool with the tools there are, bad arguments
    in one line in JSON terms with what to send, a crash with its cause (the SDK sends
    only "Error executing tool X"), every tool error at most :data:`MAX_ERROR_CHARS`
    long, and (:class:`~ledger.mcp.wording.RequestWording`) a ``tools/call`` the SDK
    refuses before any tool runs."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self._lowlevel_server.middleware.append(
            RequestWording(lambda: {t.name: t.parameters for t in self._tool_manager.list_tools()}))

    async def call_tool(self, name, arguments, context=None):
        tool = self._tool_manager.get_tool(name)
        if tool is None:
            tools = [t.name for t in self._tool_manager.list_tools()]
            raise ToolError(clip_error(unknown_tool(str(name), tools)))
        unknown = unknown_arguments(name, tool.parameters, arguments or {})
        if unknown:
            raise ToolError(clip_error(f"Error executing tool {name}: {unknown}"))
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError as exc:
            import logging

            cause = exc.__cause__ or exc
            logging.getLogger(__name__).error("tool %s failed unexpectedly", name, exc_info=cause)
            raise ToolError(clip_error(f"Error executing tool {name}: ledger failed unexpectedly "
                                       f"({type(cause).__name__}: {cause}). The server goes on. {A_BUG}")) from None
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError):
                said = arguments_message(name, tool.parameters, cause, _arguments_given(context))
                raise ToolError(clip_error(f"Error executing tool {name}: {said}")) from cause
            if len(str(exc)) > MAX_ERROR_CHARS:
                raise ToolError(clip_error(str(exc))) from cause
            raise

    async def run_stdio_async(self) -> None:
        """Serve on stdin/stdout like the SDK, with two repairs of its stdio loop:

        - On EOF the SDK cancels every request still running, so a client that writes
          its requests and closes stdin (``printf ... | ledger mcp``) loses the answers
          of calls in a worker thread. Here EOF reaches the SDK only once every request
          read so far has been answered (or :data:`DRAIN_LIMIT_S` passed).
        - A line that is not JSON, or JSON that is not a JSON-RPC message, is dropped
          by the SDK without a word; JSON-RPC 2.0 requires an error reply: -32700
          (parse error) or -32600 (invalid request), ``id`` null unless one could be
          read from the line.
        """
        import anyio
        from mcp.server.stdio import stdio_server

        try:
            await self._serve_stdio(stdio_server, anyio)
        except* (BrokenPipeError, ConnectionResetError):
            # The client closed stdout before the last answers: the work is done (the
            # store is written); there is no one left to tell.
            pass

    async def _serve_stdio(self, stdio_server, anyio) -> None:
        async with stdio_server() as (sdk_read, sdk_write):
            to_server, server_in = anyio.create_memory_object_stream(0)
            server_out, from_server = anyio.create_memory_object_stream(0)
            pending: set = set()
            drained = anyio.Event()
            eof = False

            async def inbound():
                nonlocal eof
                async with to_server:
                    async for item in sdk_read:
                        if isinstance(item, Exception):
                            reply = protocol_error_reply(item)
                            if reply is not None:
                                await sdk_write.send(reply)
                            continue
                        msg = item.message
                        if isinstance(msg, JSONRPCRequest):
                            pending.add(msg.id)
                        elif isinstance(msg, JSONRPCNotification) and msg.method == "notifications/cancelled":
                            # A cancelled request may never be answered: stop waiting for it.
                            pending.discard((msg.params or {}).get("requestId"))
                        await to_server.send(item)
                    eof = True
                    if not pending:
                        drained.set()
                    with anyio.move_on_after(DRAIN_LIMIT_S):
                        await drained.wait()

            async def outbound():
                async with from_server:
                    async for item in from_server:
                        msg = item.message
                        if isinstance(msg, JSONRPCResponse | JSONRPCError):
                            pending.discard(msg.id)
                            if eof and not pending:
                                drained.set()
                        await sdk_write.send(item)
                await sdk_write.aclose()

            async with anyio.create_task_group() as tg:
                tg.start_soon(inbound)
                tg.start_soon(outbound)
                await self._lowlevel_server.run(server_in, server_out,
                                                self._lowlevel_server.create_initialization_options())


def _arguments_given(context) -> str:
    """"missing" or "null" when the ``tools/call`` behind ``context`` had no
    ``arguments`` or ``"arguments": null`` (the SDK reads both as ``{}``), else ""."""
    try:
        params = context.request_context.params
    except (AttributeError, ValueError):
        return ""
    if not isinstance(params, dict):
        return ""
    if "arguments" not in params:
        return "missing"
    return "null" if params["arguments"] is None else ""


def protocol_error_reply(exc: Exception):
    """The JSON-RPC error answering a line the SDK could not read as a message (a
    ``SessionMessage``), or None for a blank line. ``exc``: the SDK's pydantic
    ``ValidationError`` (``json_invalid`` = not JSON → -32700, else → -32600)."""
    errors = exc.errors(include_url=False) if isinstance(exc, ValidationError) else []
    rid = None
    for e in errors:
        raw = e.get("input")
        if isinstance(raw, str) and not raw.strip():
            return None
        if isinstance(raw, dict) and isinstance(raw.get("id"), int | str) and not isinstance(raw.get("id"), bool):
            rid = raw["id"]
            break
    if errors and all(e.get("type") == "json_invalid" for e in errors):
        error = ErrorData(code=PARSE_ERROR, message="Parse error: the line is not JSON")
    else:
        error = ErrorData(code=INVALID_REQUEST, message="Invalid request: not a JSON-RPC 2.0 request, "
                                                        "notification or response")
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=rid, error=error))


class Server:
    """The tools bound to one store. ``db``: the store path (None = ``$LEDGER_DB``,
    ``$LEDGER_HOME/ledger.db``, ``~/.ledger/ledger.db``); ``agent``: a fixed agent id
    (None = ``$LEDGER_AGENT``, else the client's name)."""

    def __init__(self, db: str | None = None, agent: str | None = None):
        self.db = db
        self.agent = agent or os.environ.get("LEDGER_AGENT") or None
        self.app = _MCPServer(name="ledger", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")
        for fn, ann in ((self.recall, COUNTED_READ), (self.search, READ), (self.show, READ), (self.remember, WRITE),
                        (self.conflicts, READ), (self.judge, JUDGE), (self.checkpoint, READ)):
            self.app.add_tool(fn, name=fn.__name__, annotations=ann)
            # The schema says what call_tool enforces: no argument beyond the listed ones.
            self.app._tool_manager.get_tool(fn.__name__).parameters["additionalProperties"] = False

    # ------------------------------------------------------------------ helpers
    def _agent(self, ctx: Context | None) -> str:
        """The acting agent's id in its normal form (:func:`ledger.text.agent_id`), as the
        CLI stores it: ``--agent``/``$LEDGER_AGENT`` (an id with a space is a tool error
        saying what to use instead), else the client's name slugged (``Claude Desktop``
        is ``claude-desktop``), else :data:`FALLBACK_AGENT`."""
        from ..text import agent_id

        if self.agent:
            try:  # no source named: phrase() says where this server's id is set
                return agent_id(self.agent)
            except LedgerError as exc:
                raise ToolError(phrase(exc)) from exc
        try:
            info = ctx.session.client_params.client_info if ctx is not None else None
        except (AttributeError, ValueError):
            info = None
        name = (getattr(info, "name", None) or "").strip()
        return agent_id(name, slug=True) or FALLBACK_AGENT

    def _run(self, work, *, create: bool = False, warnings: list[dict] | None = None) -> dict:
        """Open the store, run ``work(led)`` (a dict), close, and return that dict with
        ``warnings`` first: the store's own (below), then ``warnings``, the list ``work``
        appends the call's warnings to. A ledger error becomes a tool error: the core's
        message with what to do in this server's terms (:func:`phrase`); a SQLite error
        past the store's checks one line naming the file.

        A store file that does not exist is never created by a read: an empty store in
        memory stands in (:func:`ledger.cli.verbs.read_target`, as for the CLI's reads)
        and the result carries a ``no-store`` warning naming the path; an id looked up
        there (``show``, ``judge``, ``supersedes``) is a tool error saying there is no
        store. ``create`` (``remember``): the store is created by the CLI's writes' own
        mechanism (:func:`ledger.cli.verbs.write`: built in a temporary file that takes
        the store's name only when ``work`` succeeded, so a call that fails creates
        nothing), and the result says so with a ``new-store`` warning."""
        from ..cli.verbs import read_target
        from ..cli.verbs import write as write_once

        warnings = [] if warnings is None else warnings
        try:
            if self.db == IN_MEMORY:
                # Each tool call opens the store anew: a store in memory would lose every write.
                raise InvalidInput(in_memory_message("--db"), field="db", value=self.db)
            if create:
                # A second run (another process created the store meanwhile) says its own
                # warnings. The store by its absolute path: an error names it so.
                out, missing = write_once(self._path(), work, fix=NO_STORE_FIX, again=warnings.clear)
            else:
                target = read_target(self.db)
                missing = target == ":memory:" and self.db != ":memory:"
                out = self._work(work, target, missing)
        except LedgerError as exc:
            raise ToolError(phrase(exc)) from exc
        except Exception as exc:
            if type(exc).__module__ == "sqlite3":
                from ..paths import db_file

                raise ToolError(f"The store cannot be used: {exc}. These tools cannot change that: ask the user to "
                                f"check the store file and its permissions ({db_file(self.db)}).") from exc
            raise
        found = [self._new_store() if create else self._no_store()] if missing else []
        return {"warnings": [*found, *warnings], **out}

    def _work(self, work, target: str | None, missing: bool) -> dict:
        """``work(led)`` on the store ``target``; ``missing``: ``target`` stands in for a
        store that does not exist, so an id not found is said to be so for that reason."""
        from ..cli.verbs import UNKNOWN_ID, no_store_error
        from ..service import Ledger

        try:
            with Ledger.open(target) as led:
                return work(led)
        except LedgerError as exc:
            if missing and exc.kind in UNKNOWN_ID:
                raise ToolError(str(no_store_error(exc, self._path(), NO_STORE_FIX))) from exc
            raise

    def _path(self) -> str:
        """The store this server opens, absolute when it is a file (the agent and the
        user do not know the server's working folder)."""
        from ..paths import db_file, is_store_url

        p = db_file(self.db)
        return p if is_store_url(p) or p == ":memory:" else os.path.abspath(p)

    def _no_store(self) -> dict:
        """The ``no-store`` warning of a read on a store that does not exist."""
        from ..cli.verbs import no_store_message

        p = self._path()
        return {"kind": "no-store", "warning": f"{no_store_message(p)} {NO_STORE_FIX}", "path": p}

    def _new_store(self) -> dict:
        """The ``new-store`` warning of a write that created the store."""
        p = self._path()
        return {"kind": "new-store",
                "warning": f"There was no store at {p}: this write created it, empty but for this memory. If the "
                           f"user expected earlier memories, the server is pointed at the wrong store. "
                           f"{WHERE_THE_STORE_IS_SET}",
                "path": p}

    @staticmethod
    def _memories(ms, detail: bool) -> list[dict]:
        if not detail:
            return [compact(m) for m in ms]
        from ..filekeys import file_changes

        return [{**wire.memory(m), "fileChanges": file_changes(m.files)} for m in ms]

    # ------------------------------------------------------------------ tools
    def recall(self, query: Annotated[str, Field(description="Words and filters, e.g. 'deploy steps cluster:proc "
                                                             "strength:>40'.")],
               limit: Annotated[int, Field(ge=1, le=1000, description="At most this many memories.")] = 10,
               mode: Mode = DEFAULT_MODE, detail: Detail = False, ctx: Context | None = None) -> dict[str, Any]:
        """Recall memories for a question: your read. Every memory returned gets stronger
        (counted as a retrieval by you); memories nobody reads fade. Returns {warnings,
        hits: [{id, strength 0-1, text, cluster, stale?}], total}; `notCounted` says why
        when the store was too busy to count the read. Read `warnings` first: a filter
        that matches nothing (an unknown cluster, kind:bogus), a filter given twice, or no
        store at all is said there, and then no hits does not mean nothing is known."""
        agent = self._agent(ctx)

        warnings: list[dict] = []

        def work(led):
            res = led.recall(query, agent=agent, limit=limit, mode=mode)
            warnings.extend(res.warnings())
            out = {"hits": self._memories(res.hits, detail), "total": res.total}
            if res.not_counted:
                out["notCounted"] = res.not_counted
            return out

        return self._run(work, warnings=warnings)

    def search(self, query: Annotated[str, Field(description="Words and filters; empty lists the strongest first "
                                                                        "(sort: created for the newest).")] = "",
               limit: Annotated[int, Field(ge=1, le=10000, description="At most this many memories.")] = 25,
               mode: Mode = DEFAULT_MODE, sort: Sort = None, detail: Detail = False) -> dict[str, Any]:
        """Browse the store without counting a read (for looking around, not for answering:
        use recall for that). Returns {warnings, hits: [{id, strength, text, cluster}],
        total}; `warnings` as for recall."""
        warnings: list[dict] = []

        def work(led):
            res = led.search(query, limit=limit, mode=mode, sort=sort)
            warnings.extend(res.warnings())
            return {"hits": self._memories(res.hits, detail), "total": res.total}

        return self._run(work, warnings=warnings)

    def show(self, id: Annotated[str, Field(description="A memory id (m_...) or a unique tail of one.")]) -> dict[str, Any]:
        """One memory in full, with its strength explained (factors), whether files it
        is about changed since, and what happened to it (history: log rows; formerTexts:
        texts it had before an edit or merge). Never counted as a read."""
        from ..filekeys import file_changes

        def work(led):
            m = led.get(id)
            return {**wire.memory(m), "fileChanges": file_changes(m.files), **wire.history(*led.history(m.id))}

        return self._run(work)

    def remember(self, claim: Annotated[str, Field(description="One self-contained sentence, understandable with no "
                                                               "other context.")],
                 cluster: Annotated[str, Field(description="Cluster id (e.g. code, proc, prefs); an unknown one is an "
                                                           "error listing the known ones.")],
                 note: Annotated[str, Field(description="Where it comes from, for the person reviewing.")] = "",
                 topic: Annotated[str | None, Field(description="What it is about, e.g. 'file-format:model.ckpt'.")] = None,
                 files: Annotated[list[str] | None, Field(description="Files the fact is about (paths; relative ones "
                                                                       "against the server's folder). When one "
                                                                       "changes, the fact is marked possibly stale.")] = None,
                 supersedes: Annotated[str | None, Field(description="Id of the one memory this one replaces (a single id, not a list); a person "
                                                                     "decides which survives.")] = None,
                 detail: Detail = False, ctx: Context | None = None) -> dict[str, Any]:
        """Remember a durable fact (a claim). The same fact again counts as corroboration,
        not a copy. Returns {id, strength, text, cluster, duplicate, proposed (candidate
        ids the store suspects of contradicting it), conflictId (with supersedes),
        pendingCandidates, redacted (secrets replaced by [REDACTED:<kind>] before storing),
        warnings (new-store: this write created the store; redacted; missing-file)}."""
        agent = self._agent(ctx)
        blank = [i for i, f in enumerate(files or ()) if not f.strip()]
        if blank:  # name the entries: an agent building the list needs to know which
            raise ToolError(f"files needs paths, e.g. [\"model.ckpt\"]; entr{'y' if len(blank) == 1 else 'ies'} "
                            f"{', '.join(map(str, blank))} (counting from 0) {'is' if len(blank) == 1 else 'are'} empty.")
        if supersedes is not None and not supersedes.strip():
            raise ToolError(str(InvalidInput("supersedes needs the id of the memory this one replaces, e.g. m_abc123")))

        warnings: list[dict] = []

        def work(led):
            from ..cli.verbs import missing_file_warnings, redacted_warning

            keys = []
            if files:
                from ..filekeys import named_file_key

                keys = [named_file_key(f) for f in files]
            res = led.remember(claim, cluster=cluster, agent=agent, note=note, supersedes=supersedes, files=keys,
                               topic=topic)
            if res.redacted:
                warnings.append(redacted_warning(res.redacted))
            warnings.extend(missing_file_warnings(files or (), keys, "files:"))
            head = wire.memory(res.memory) if detail else compact(res.memory)
            return wire.write_result(head, res.proposed, res.conflict_id, res.pending_candidates, res.duplicate,
                                     res.redacted)

        return self._run(work, create=True, warnings=warnings)

    def conflicts(self, limit: Annotated[int, Field(ge=1, le=500, description="At most this many pairs.")] = 5,
                  detail: Detail = False) -> dict[str, Any]:
        """Pairs of memories the store suspects of contradicting each other, waiting for
        your verdict (judge them in a spare turn, not mid-task). Returns {candidates:
        [{id, score, signals, a, b}], waiting (every unjudged pair, listed or not),
        warnings}."""

        def work(led):
            out = []
            cands = led.candidates(limit)
            for c in cands:
                d = wire.candidate(c)
                if not detail:
                    d["a"], d["b"] = compact(c.a), compact(c.b)
                out.append(d)
            return {"candidates": out, "waiting": led.candidate_count() if len(cands) == limit else len(cands)}

        return self._run(work)

    def judge(self, candidate: Annotated[str, Field(description="Candidate id (cc_...) from conflicts.")],
              verdict: Annotated[str, Field(description="'conflict' (both cannot be true at once) or 'unrelated' "
                                                        "(both can: settles the pair for good).")],
              kind: Annotated[str | None, Field(description="direct contradiction | value drift | stale schedule | "
                                                            "stale terms | date conflict | stale fact")] = None,
              detector: Annotated[float | None, Field(description="Your honest confidence, 0 to 1 (default 0.8).")] = None,
              note: Annotated[str, Field(description="Why, for the person who resolves it.")] = "",
              detail: Detail = False, ctx: Context | None = None) -> dict[str, Any]:
        """Judge a candidate pair: can both be true at once? A conflict is queued for a
        person to resolve (you cannot resolve it). Returns {candidate, verdict, conflict,
        warnings}."""
        agent = self._agent(ctx)
        if not candidate.strip():
            raise ToolError("Which candidate? Give its id, e.g. cc_abc123 (`conflicts` lists the ones waiting).")

        def work(led):
            cf = led.judge(candidate, verdict, agent=agent, kind=kind, detector=detector, note=note)
            c = led.conflict(cf) if cf else None
            if c is None:
                return {"candidate": candidate, "verdict": verdict, "conflict": None}
            d = wire.conflict(c)
            if not detail:
                d = {"id": d["id"], "kind": d["kind"], "status": d["status"], "detector": d["detector"],
                     "a": compact(c.a), "b": compact(c.b)}
            return {"candidate": candidate, "verdict": verdict, "conflict": d}

        return self._run(work)

    def checkpoint(self, project: Annotated[str | None, Field(description="The project folder (absolute, or "
                                                                          "relative to the server's folder); "
                                                                          "default: the server's folder.")] = None
                   ) -> dict[str, Any]:
        """The last checkpoint of a project: task, branch, git status and files changed,
        written when a hooked agent last stopped there. Returns {project, checkpoint:
        {id, session, at (epoch ms), event, branch, content (markdown)} or null,
        warnings}."""
        folder = os.path.abspath(os.path.expanduser(project or os.getcwd()))
        warnings: list[dict] = []
        if not os.path.isdir(folder):  # a mistyped project reads as "never checkpointed" otherwise
            warnings.append({"kind": "no-project", "path": folder,
                             "warning": f"{folder} is not a folder on this machine, so no checkpoint can be "
                                        "there. Give the project's folder (absolute, or relative to the server's)."})

        def work(led):
            rows = led.checkpoints(project=folder, limit=1)
            return {"project": folder, "checkpoint": rows[0] if rows else None}

        return self._run(work, warnings=warnings)


def build(db: str | None = None, agent: str | None = None) -> MCPServer:
    """The configured ``MCPServer`` (for tests and embedding)."""
    return Server(db, agent).app


def main(argv: list[str]) -> int:
    """``ledger mcp [--db PATH] [--agent ID]``: serve on stdin/stdout until the client
    closes stdin. Returns the exit status (0 on a clean end, 2 on bad arguments)."""
    import argparse

    class Parser(argparse.ArgumentParser):
        def error(self, message):  # the CLI's own form, not argparse's usage block
            import sys

            sys.stderr.write(f"✕ {message[:1].upper()}{message[1:]}. Run `ledger mcp --help`.\n")
            raise SystemExit(2)

    p = Parser(prog="ledger mcp", description="Serve the store to an MCP client over stdio.")
    p.add_argument("--db", help="Store path (default: $LEDGER_DB, $LEDGER_HOME/ledger.db, ~/.ledger/ledger.db).")
    p.add_argument("--agent", help="Agent id for reads and writes (default: $LEDGER_AGENT, else the client's name).")
    a = p.parse_args(argv)
    try:
        build(a.db, a.agent).run("stdio")
    except KeyboardInterrupt:
        return 130
    return 0
