"""What ``ledger mcp`` says when a call fails, in the MCP surface's own terms (docs/mcp.md
"Errors").

An agent on MCP can do two things: call a tool with other arguments, or ask its user. So
every error here ends in one of them: a tool and its argument to use instead, or "ask the
user to ...", naming a command only as the user's (the agent has no shell that reaches
the server's store, its config entry or the ledger install). The core's messages name no
surface (:mod:`ledger.errors`); the CLI adds its commands in :mod:`ledger.cli.hints`,
this module adds the tools and the user.

Three layers fail a call, and each is worded here:

- the core (:func:`phrase`): a :class:`~ledger.errors.LedgerError` from a tool;
- the tool's arguments (:func:`arguments_message`, :func:`unknown_arguments`,
  :func:`unknown_tool`): checked by the SDK against the schema before a tool runs, in
  pydantic's words and Python's type names, which are not what the agent sent (JSON);
- the request itself (:func:`call_problem`, :func:`not_initialized`): a ``tools/call``
  whose ``params`` are no object of ``name`` and ``arguments``, or one sent before
  ``initialize``. The SDK refuses those with a bare -32602 "Invalid request parameters"
  and empty ``data``; :class:`RequestWording` (a middleware, the SDK's own hook) words
  them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..errors import LedgerError

#: Characters. A longer tool error is cut in the middle: an argument echoed back (a
#: megabyte id or query) must not flood the agent's context.
MAX_ERROR_CHARS = 2000

#: Where this server's store is chosen: the user's settings in the client's MCP config,
#: none of them a tool argument.
STORE_SETTING = ("$LEDGER_DB in the env (or --db PATH in the args) of the ledger entry in the client's MCP config "
                 "(`ledger install mcp --db PATH` writes it), or store.db in `ledger config`")
#: What to do when the server may be pointed at the wrong store: only the user can move it.
WHERE_THE_STORE_IS_SET = (f"Only the user can choose this server's store: ask them to set {STORE_SETTING}, "
                          "then to reload the client.")
#: What to do about a store that does not exist, after the no-store sentence.
NO_STORE_FIX = (f"If the user keeps memories elsewhere, the server is pointed at the wrong place. "
                f"{WHERE_THE_STORE_IS_SET} Otherwise nothing is remembered yet: the first `remember` creates this "
                "store.")
#: Where this server's agent id comes from: what the MCP client sends or its config
#: entry holds, never a tool argument.
AGENT_SETTING = ("On this server the agent id is no tool argument: it is $LEDGER_AGENT in the env (or --agent ID in "
                 "the args) of the ledger entry in the client's MCP config, the user's to edit, else the client's "
                 "own name (clientInfo.name in initialize).")
#: After an error that is ledger's own fault.
A_BUG = "This is a ledger bug, not a mistake in the call: tell the user, who can report it."

#: What to call next, by error kind, in the tools' terms (the CLI's hints name commands).
NEXT = {"unknown-memory": "`search` lists ids.",
        "unknown-candidate": "`conflicts` lists the ones waiting.",
        "unknown-conflict": "Only the user resolves conflicts (their `ledger review`); these tools cannot."}
#: An example for a required text left blank, by the field the core names.
BLANK = {"query": 'For example query "deploy steps" or query "cluster:proc"; `search` with an empty query lists '
                  'the strongest memories (sort "created" for the newest).',
         "claim": 'Give claim one self-contained sentence, e.g. "Prefers metric units", with a cluster such as '
                  '"prefs".'}
#: Where the tools list each kind of id an argument takes, for a blank one.
LISTS = {"memory": NEXT["unknown-memory"], "candidate": NEXT["unknown-candidate"]}
#: A call that works, by tool: what an error shows as "send this instead".
EXAMPLES: dict[str, dict] = {
    "recall": {"query": "deploy steps"}, "search": {"query": "deploy"}, "show": {"id": "m_abc123"},
    "remember": {"claim": "Prefers metric units", "cluster": "prefs"}, "conflicts": {"limit": 5},
    "judge": {"candidate": "cc_abc123", "verdict": "conflict"}, "checkpoint": {"project": "/path/to/project"},
}
#: Tools an agent may look for that this server leaves to people on purpose.
USERS_ONLY = {
    "forget": "Dropping a memory is for the user (their `ledger forget` or `ledger review`), not an agent.",
    "resolve": "Resolving a conflict is for the user (their `ledger review`); `judge` gives your verdict on a pair.",
    "ingest": "Ingesting a document is for the user (their `ledger ingest <file>`); `remember` takes one fact.",
}


def phrase(exc: LedgerError) -> str:
    """The tool error text for ``exc``: the core's message (which names no surface) with
    what to do next in this server's terms: a tool and its argument when the agent can
    act, else "ask the user to ..." with the user's command named as theirs."""
    from ..errors import STORE_LOCATION_REASONS, NotAClaim, StoreUnavailable, TextTooLong, UnknownCluster

    msg = exc.message
    if isinstance(exc, UnknownCluster):
        if exc.suggestion:
            return f'{msg} Clusters are named by id. Did you mean cluster "{exc.suggestion}"?'
        return (f"{msg} Known clusters: {', '.join(exc.choices)}. Write to one of them; if none fits, ask the user "
                "to add one (their command: `ledger clusters add <label>`).")
    if isinstance(exc, NotAClaim) and exc.source_id:
        return (f"{msg} Only the user reviews a document's chunks (their `ledger sources` or `ledger serve`); for a "
                f"claim's id (m_...) `search` lists memories. The document is {exc.source_id}.")
    if isinstance(exc, StoreUnavailable):
        return _store(exc, STORE_LOCATION_REASONS)
    if isinstance(exc, TextTooLong):
        return (f"{msg} Remember the few facts worth keeping from it, one `remember` call each; if the whole "
                "document should be kept, ask the user to ingest it (their command: `ledger ingest <file>`).")
    if exc.kind == "invalid-input" and exc.field == "agent":
        if exc.suggestion:  # the core's "Use <id>." is for whoever set the id: the user, here
            msg = msg.replace(f" Use {exc.suggestion}.", "")
            fix = f"change it to {exc.suggestion}"
        else:
            fix = "change it to one word of at most 64 characters, such as claude-code"
        return f"{msg} {AGENT_SETTING} Ask the user to {fix} (or remove it) and reload the client."
    if exc.kind == "invalid-input" and exc.field in BLANK and not str(exc.value or "").strip():
        return f"{msg} {BLANK[exc.field]}"
    if exc.kind == "invalid-input" and exc.field in LISTS and not str(exc.value or "").strip():
        from ..errors import id_example  # a blank id (errors.missing_id): where this server lists them

        f = exc.field
        return f"Which {f}? The {f} id is empty: give one such as {id_example(f)}. {LISTS[f]}"
    if exc.kind == "unknown-candidate" and isinstance(exc.value, str):
        head = exc.value.strip()
        if head.startswith("cf_"):
            msg += (" That is a conflict id: that pair was judged already and waits for the user (their "
                    "`ledger review`).")
        elif head.startswith(("m_", "c_")):
            msg += " That is a memory id: judge takes a candidate id (cc_...), which names a pair of memories."
    nxt = NEXT.get(exc.kind)
    if nxt and nxt not in msg:
        msg = f"{msg} {nxt}"
    return msg


def _store(exc, location_reasons) -> str:
    """:func:`phrase` for a store that cannot be used: nothing a tool argument changes,
    except waiting out a lock."""
    msg, reason = exc.message, exc.reason
    if reason == "locked":
        return msg  # "... Try again.": the agent can
    if reason == "read-only":  # a file's permissions, a read-only mount, a PostgreSQL role: the user's
        where = f" ({exc.path})" if exc.path and exc.path not in msg else ""
        return (f"{msg} These tools cannot change that: ask the user to make the store{where} writable for this "
                f"server, or to point it at another store ({STORE_SETTING}).")
    if reason == "error":
        return f"{msg} {A_BUG}"
    if reason == "corrupt":
        return (f"{msg} These tools cannot repair it. If it is the user's store, ask them to check it (their "
                f"command: `ledger doctor`) and restore a backup. {WHERE_THE_STORE_IS_SET}")
    if reason == "disk-full":
        return f"{msg} Only the user can free space: ask them to, then make the same call again."
    # The core's own fix is a command (store/pg.py, store/migrations.py): said as the user's.
    # When the core's wording changes, the replace finds nothing and the plain sentence
    # still says who acts.
    if reason == "missing-driver":
        said = msg.replace("Install it: ", "Only the user can install it, with their command: ")
        if said == msg:
            return f"{msg} Only the user can install what is missing: ask them to, then to reload the client."
        return f"{said} Ask them to, then to reload the client."
    if reason == "newer-store":
        said = msg.replace("Upgrade ledger (", "Only the user can upgrade ledger (their command: ")
        if said == msg:
            said = f"{msg} Only the user can upgrade ledger."
        return f"{said} Ask them to, then to reload the client. {WHERE_THE_STORE_IS_SET}"
    if reason in location_reasons:
        return f"{msg} {WHERE_THE_STORE_IS_SET}"
    return msg


def clip_error(text: str, limit: int = MAX_ERROR_CHARS) -> str:
    """``text`` cut to at most about ``limit`` characters, keeping its start and end
    (where the what-to-do sits) around ``…``."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    return f"{text[:head]} … [{len(text) - limit:,} characters cut] … {text[-(limit - head):]}"


# ------------------------------------------------------------------ JSON terms
def json_kind(value: Any) -> str:
    """What ``value`` was on the wire, in JSON's words: ``null``, ``true``, ``the number
    5``, ``the string "x"`` (cut), ``an array``, ``an object``. The agent sent JSON, so
    Python's ``int`` or ``NoneType`` name nothing it wrote."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return f"the number {clip_error(repr(value), 40)}"
    if isinstance(value, str):
        return f"the string {clip_error(json.dumps(value, ensure_ascii=False), 60)}"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


def expected(schema: Mapping | None) -> str:
    """What a JSON schema (one property of a tool's input schema) takes, in words: ``a
    string``, ``a whole number from 1 to 1000``, ``one of "hybrid", "keyword",
    "fuzzy"``, ``an array of strings, or null``."""
    if not isinstance(schema, Mapping):
        return "a value"
    if "anyOf" in schema:
        parts = [expected(s) for s in schema["anyOf"]]
        return ", or ".join(dict.fromkeys(p for p in parts if p))
    if "enum" in schema:
        return "one of " + ", ".join(json.dumps(v) for v in schema["enum"])
    t = schema.get("type")
    if t == "string":
        return "a string"
    if t in ("integer", "number"):
        word = "a whole number" if t == "integer" else "a number"
        lo, hi = schema.get("minimum"), schema.get("maximum")
        if lo is not None and hi is not None:
            return f"{word} from {lo} to {hi}"
        return f"{word} of at least {lo}" if lo is not None else word
    if t == "boolean":
        return "true or false"
    if t == "array":
        item = expected(schema.get("items"))
        return "an array" + (f" of {item.removeprefix('a ').removeprefix('an ')}s" if item.startswith("a") else "")
    if t == "object":
        return "an object"
    if t == "null":
        return "null"
    return "a value"


def _where(loc: tuple) -> str:
    """A pydantic location as the agent wrote it: ``files[0]``, not ``files.0``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "arguments"


def _property(schema: Mapping, loc: tuple) -> Mapping | None:
    """The schema of the argument at ``loc`` in a tool's input ``schema`` (an array's
    items for ``files[0]``; an ``anyOf`` branch that has items)."""
    node: Any = schema
    for part in loc:
        if isinstance(part, int):
            branches = node.get("anyOf", [node]) if isinstance(node, Mapping) else []
            node = next((b["items"] for b in branches if isinstance(b, Mapping) and "items" in b), None)
        else:
            node = (node.get("properties") or {}).get(part) if isinstance(node, Mapping) else None
        if node is None:
            return None
    return node


def takes(tool: str, schema: Mapping) -> str:
    """``"recall takes query, limit, mode, detail (query required), e.g. {...}"``: the
    sentence that ends an argument error with what to send instead."""
    names = list(schema.get("properties", {}))
    required = list(schema.get("required", []))
    said = f"{tool} takes {', '.join(names) if names else 'no arguments'}"
    if required:
        said += f" ({', '.join(required)} required)"
    if tool in EXAMPLES:
        said += f", e.g. {json.dumps(EXAMPLES[tool], ensure_ascii=False)}"
    return said + "."


def arguments_message(tool: str, schema: Mapping, exc, arguments_given: str = "") -> str:
    """The SDK's schema check of ``tool``'s arguments (a pydantic ``ValidationError``)
    as one line in JSON terms, one clause per argument, then what ``tool`` takes with an
    example: ``bad arguments, nothing was done: query must be a string (got the number
    123). recall takes query, ... e.g. {"query": "deploy steps"}.`` (pydantic's own text
    names internal models, Python types and a docs link). ``arguments_given``: "null" or
    "missing" when the request's ``arguments`` was, so a required argument reads as
    such."""
    parts = []
    for e in exc.errors(include_url=False):
        loc = tuple(e.get("loc", ()))
        where = _where(loc)
        kind = str(e.get("type", ""))
        want = expected(_property(schema, loc))
        got = e.get("input")
        if kind == "missing":
            parts.append(f"{where} is missing ({want})")
        elif kind.endswith(("_type", "_parsing")) or kind in ("int_from_float", "bool_parsing"):
            parts.append(f"{where} must be {want} (got {json_kind(got)})")
        elif kind in ("literal_error", "enum", "greater_than_equal", "less_than_equal", "greater_than", "less_than"):
            parts.append(f"{where} must be {want} (got {json_kind(got)})")
        else:  # ranges and the rest: pydantic's sentence is plain enough, with the value
            parts.append(f"{where}: {e.get('msg', 'invalid')} (got {json_kind(got)})")
    head = "bad arguments, nothing was done: "
    if arguments_given:
        head = f"bad arguments (arguments was {arguments_given}), nothing was done: "
    return head + "; ".join(parts) + ". " + takes(tool, schema)


def unknown_arguments(tool: str, schema: Mapping, arguments: Mapping) -> str:
    """The complaint about argument names ``tool`` does not take (``schema``: its input
    schema), or "" when every name is one of its properties. The SDK's own check drops
    them without a word, so ``search {"mode": "bogus"}`` or a misspelt ``limt`` read as
    a plain search; the complaint names each, its nearest real name when one is close,
    and every name the tool takes."""
    import difflib

    known = list(schema.get("properties", {}))
    extra = [k for k in arguments if k not in known]
    if not extra:
        return ""
    said = []
    for k in extra:
        near = difflib.get_close_matches(str(k), known, n=1, cutoff=0.7)
        said.append(f"{clip_error(str(k), 80)} (did you mean {near[0]}?)" if near else clip_error(str(k), 80))
    names = ", ".join(known) if known else "no arguments"
    return (f"unknown argument{'s' if len(extra) > 1 else ''} {', '.join(said)}: nothing was done. "
            f"{tool} takes {names}.")


def unknown_tool(name: str, tools: list[str]) -> str:
    """The tool error for a ``tools/call`` of a tool this server does not have: the SDK
    says only "Unknown tool: x". Names the nearest tool, every tool, and for a verb this
    server leaves to people (``forget``, ``resolve``) who does it."""
    import difflib

    shown = clip_error(name, 80)
    said = f"There is no tool {shown!r}; nothing was done."
    key = name.strip().lower().removeprefix("ledger_").removeprefix("mcp__ledger__")
    if key in USERS_ONLY:
        said += " " + USERS_ONLY[key]
    elif key in tools and key != name:
        said += f" Did you mean {key}?"
    else:
        near = difflib.get_close_matches(key, tools, n=1, cutoff=0.6)
        if near:
            said += f" Did you mean {near[0]}?"
    return f"{said} This server's tools: {', '.join(tools)} (tools/list gives their arguments)."


# ------------------------------------------------------------------ the request
def not_initialized(method: str) -> str:
    """The JSON-RPC error message for a request sent before ``initialize``."""
    return (f"{method} was sent before initialize: this connection is not initialized yet. Send the initialize "
            'request first (params {"protocolVersion", "capabilities", "clientInfo": {"name", "version"}}), then '
            "the notifications/initialized notification, then the call again.")


def call_problem(params: Any, tools: Mapping[str, Mapping]) -> str:
    """What is wrong with the ``params`` of a ``tools/call`` (the raw JSON value) and
    what to send instead, or "" when they have the right shape (an object with ``name``
    a string and ``arguments`` an object, null or absent). ``tools``: each tool's input
    schema, by name."""
    names = ", ".join(tools)
    shape = ('params must be an object {"name": <tool>, "arguments": {<argument>: <value>}}, e.g. '
             '{"name": "search", "arguments": {"query": "deploy"}}')
    if not isinstance(params, Mapping):
        return f"tools/call {shape} (got {json_kind(params)}). Tools: {names}."
    name = params.get("name")
    if name is None:
        return f'tools/call params.name is {"null" if "name" in params else "missing"}: {shape}. Tools: {names}.'
    if not isinstance(name, str):
        return f"tools/call params.name must be the tool's name as a string (got {json_kind(name)}). Tools: {names}."
    args = params.get("arguments")
    if args is None or isinstance(args, Mapping):
        return ""
    if isinstance(args, str):
        try:
            decoded = json.loads(args)
        except ValueError:
            decoded = None
        if isinstance(decoded, Mapping):
            return (f"tools/call params.arguments is a string holding JSON; send the object itself, not encoded: "
                    f'"arguments": {clip_error(args, 200)}.')
    schema = tools.get(name)
    rest = f" {takes(name, schema)}" if schema is not None else ""
    return (f"tools/call params.arguments must be an object of argument names to values (got {json_kind(args)}); "
            f"send {{}} or leave it out for none.{rest}")


#: What a pydantic type error asked for, in JSON's words (:func:`validation_summary`).
TYPE_WORDS = {"string_type": "a string", "int_type": "a whole number", "int_parsing": "a whole number",
              "float_type": "a number", "float_parsing": "a number", "bool_type": "true or false",
              "bool_parsing": "true or false", "list_type": "an array", "dict_type": "an object",
              "model_type": "an object", "model_attributes_type": "an object"}


def validation_summary(exc) -> str:
    """A pydantic error about a request's params in JSON terms, for what
    :func:`call_problem` does not name (``initialize`` without ``clientInfo``,
    ``_meta`` that is no object...)."""
    parts = []
    for e in exc.errors(include_url=False):
        where, kind = _where(tuple(e.get("loc", ()))), str(e.get("type", ""))
        if kind == "missing":
            parts.append(f"{where} is missing")
        elif kind in TYPE_WORDS:
            parts.append(f"{where} must be {TYPE_WORDS[kind]} (got {json_kind(e.get('input'))})")
        else:
            parts.append(f"{where}: {e.get('msg', 'invalid')} (got {json_kind(e.get('input'))})")
    return "; ".join(parts)


class RequestWording:
    """Server middleware (``lowlevel.Server.middleware``, the SDK's hook around every
    request, before its own checks) that words the two refusals the SDK sends as a bare
    -32602 "Invalid request parameters" with empty data: a request before
    ``initialize`` (the SDK raises it as an ``MCPError`` of exactly that text) and params
    that fail the SDK's model of the method (a pydantic ``ValidationError``). The
    decision stays the SDK's: only the message changes, the code stays -32602."""

    def __init__(self, tools):
        #: Each tool's input schema by name, read per request (``tools()``).
        self.tools = tools

    async def __call__(self, ctx, call_next):
        from mcp.shared.exceptions import MCPError
        from mcp.types import INVALID_PARAMS
        from pydantic import ValidationError

        if ctx.request_id is None:  # a notification: nothing to answer
            return await call_next(ctx)
        try:
            return await call_next(ctx)
        except ValidationError as exc:
            said = call_problem(ctx.params, self.tools()) if ctx.method == "tools/call" else ""
            if not said:
                said = f"Invalid params for {ctx.method}: {validation_summary(exc)}."
            raise MCPError(code=INVALID_PARAMS, message=clip_error(said)) from None
        except MCPError as exc:
            if exc.code == INVALID_PARAMS and exc.message == "Invalid request parameters" and not exc.data:
                # The only bare MCPError on the way: the SDK's gate before initialize
                # (mcp.server.runner); a params defect arrives as ValidationError.
                raise MCPError(code=INVALID_PARAMS, message=not_initialized(ctx.method)) from None
            raise
