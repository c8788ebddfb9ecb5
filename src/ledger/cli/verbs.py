"""The agent verbs' work, shared by the click app and the fast path.

``recall``, ``search``, ``remember`` and ``show`` are what agents call most, so their
start-up is budgeted (docs/benchmarks.md "Start-up"; ``tests/test_startup.py`` lists the
modules they may import). Each function here takes parsed options, calls the facade and
returns the exact text to print (JSON when ``as_json``); ``keep_open`` leaves the store
open for a process that ends with ``os._exit`` (:func:`ledger.cli.main`). Neither click nor anything
heavier is imported here; colour, when asked for, is applied by :mod:`.render`.

Errors are the core's :class:`ledger.errors.LedgerError` subclasses, raised as is.
"""

from __future__ import annotations

import os
import sys

from ..errors import InvalidInput
from ..paths import default_agent
from ..vocab import DEFAULT_MODE, MAX_TEXT_CHARS

#: The verbs :mod:`ledger.cli.fast` may run without click.
FAST_VERBS = ("recall", "search", "remember", "show")


class _Opened:
    """``with _Opened(db, keep_open) as led``: the store, closed at the end unless
    ``keep_open`` (the console command ends with ``os._exit`` right after printing, and
    closing the last connection would checkpoint the WAL with two fsyncs first; every
    write is committed by then, so the next process finds the WAL as it was).

    ``read``: a store file that does not exist is not created; an empty store in memory
    stands in and a ``no-store`` warning is printed at the end. ``must_exist``: the same
    stand-in, but the end raises :class:`ledger.errors.NoStore` instead of warning (the
    body's own errors, a bad query, come first). Either way an id not found in the
    stand-in is re-raised naming the missing store (:func:`no_store_error`)."""

    def __init__(self, db: str | None, keep_open: bool, *, read: bool = False, as_json: bool = False,
                 must_exist: bool = False):
        self.asked, self.keep_open, self.as_json, self.must_exist = db, keep_open, as_json, must_exist
        self.db = read_target(db) if read or must_exist else db

    @property
    def stand_in(self) -> bool:
        """Whether the store asked for does not exist and an empty one in memory is read."""
        return self.db == ":memory:" and self.asked != ":memory:"

    def __enter__(self):
        from ..service import Ledger

        self.led = Ledger.open(self.db)
        return self.led

    @property
    def warnings(self) -> list[dict]:
        """``[no_store_warning(...)]`` when a stand-in was read, else ``[]``: what a JSON
        body with a ``warnings`` list carries besides the search's own."""
        return [no_store_warning(self.asked)] if self.stand_in else []

    def __exit__(self, exc_type, exc, tb) -> None:
        if not self.keep_open:
            self.led.close()
        if not self.stand_in:
            return
        if exc_type is None:
            if self.must_exist:
                # The body ran on the empty stand-in, so its input errors (a bad query)
                # came first; its answer (zero counts, an empty list) would read as an
                # empty store.
                from ..errors import NoStore

                w = no_store_warning(self.asked)
                raise NoStore(w["warning"], path=w["path"])
            emit_warning(no_store_warning(self.asked), self.as_json)
        elif getattr(exc, "kind", None) in UNKNOWN_ID:
            # "No memory m_x. It may have been mistyped." blamed the id: there is no store.
            raise no_store_error(exc, self.asked) from exc


def read_target(db: str | None, *, write: bool = False) -> str | None:
    """The store a verb that only reads should open: ``db`` itself, or ``":memory:"``
    (an empty store that leaves nothing on disk) when the store file ``db`` names, or the
    default one, does not exist (:class:`_Opened` then warns on stderr, saying how to
    create it, unless the command failed: an error stays the one line on stderr). Opening it as before created an empty store there, folders and all, so a
    mistyped ``--db`` looked like an empty store and left files behind. Input errors
    (a bad query, an unknown id) are reported as usual. Writes create the store through
    :func:`write`, which asks this first. One ``stat()`` per folder up to the first that
    exists; a PostgreSQL URL is passed through.

    A path ending in a separator (``/tmp/new/``) names a folder: passed through, so
    opening it is refused (:func:`ledger.store.connection.connect`) instead of a
    warning that suggests writing there. A path whose folder is a regular file cannot
    be a store: for a read (``write`` false) that raises
    :class:`ledger.errors.StoreUnavailable` (reason ``bad-path``) saying there is no
    store there; for a write it is passed through, so opening it says the store cannot
    be created and names that file."""
    import os

    from ..paths import db_file, names_folder

    p = db_file(db)
    if p.startswith(("postgresql://", "postgres://")) or p == ":memory:" or os.path.exists(p) or names_folder(p):
        return db
    d = os.path.dirname(os.path.abspath(p))
    while not os.path.exists(d) and os.path.dirname(d) != d:
        d = os.path.dirname(d)
    if not os.path.isdir(d):
        if write:
            return db
        from ..errors import StoreUnavailable

        # MCP reads through here too: where the store is chosen is each surface's to say
        # (reason bad-path: cli/hints.py, mcp/server.py).
        raise StoreUnavailable(f"No store at {p}: {d} is a file, not a folder, so no store can be there; nothing "
                               f"was read or created. Check the store's path.", reason="bad-path", path=p)
    return ":memory:"


def write(db: str | None, work, *, keep_open: bool = False, fix: str = "", again=None):
    """Run the write ``work(led)`` (a function of the opened :class:`ledger.service.Ledger`)
    on the store ``db`` and return ``(its result, created)``; ``created`` is True when
    the store file did not exist and this write created it (with its folders).

    The one mechanism by which a write creates a store, for the CLI and the MCP server
    alike: when the file does not exist (:func:`read_target`), ``work`` runs once on a
    new store in a temporary file beside it, which takes the store's name only when
    ``work`` succeeded (:func:`ledger.store.newstore.create`). So whatever ``work``
    checks (an unknown cluster, empty text, a bad label, an unknown id), an error
    halfway, or an interrupt leaves no file and no folder behind. Only when another
    process created the store meanwhile does ``work`` run a second time, on that store:
    ``again()`` (when given) is called first, to drop what the first run collected, so
    read stdin or files before calling this. An id not found in the new store is
    re-raised naming the missing store (:func:`no_store_error` with ``fix``).
    ``keep_open``: as :class:`_Opened` (a store this call created is closed: closing it
    is part of creating it). Raises what ``work`` and opening raise."""
    from ..service import Ledger

    if read_target(db, write=True) == ":memory:" and db != ":memory:":
        from ..paths import db_file
        from ..store.newstore import create

        def build(temp: str):
            with Ledger.open(temp) as led:
                return work(led)

        try:
            res, created = create(db_file(db), build)
        except Exception as exc:
            if getattr(exc, "kind", None) in UNKNOWN_ID:
                raise no_store_error(exc, db, fix) from exc
            raise
        if created:
            return res, True
        if again is not None:
            again()
    led = Ledger.open(db)
    try:
        return work(led), False
    finally:
        if not keep_open:
            led.close()


def new_store_warning(db: str | None) -> dict:
    """The CLI's ``new-store`` warning of a write that created the store:
    ``{"kind": "new-store", "warning": "Created a new store at <path>.", "path"}``, the
    path absolute, so a mistyped ``--db`` or ``$LEDGER_DB`` is noticed at its first
    write, not when the memories seem lost."""
    from ..paths import db_file

    p = os.path.abspath(db_file(db))
    return {"kind": "new-store", "warning": f"Created a new store at {p}.", "path": p}


def missing_store(db: str | None) -> bool:
    """Whether ``db`` (or the default store) names a store file that does not exist, in a
    folder that could hold it (:func:`read_target`): a read then has nothing to read."""
    return read_target(db) == ":memory:" and db != ":memory:"


def require_store(db: str | None) -> None:
    """For the commands that report on a store without opening it through
    :class:`_Opened` (the interactive review, checkpoints, serve on a named store):
    raise :class:`ledger.errors.NoStore` when its file does not exist, with the no-store
    warning's words (the path, and how to create the store). Nothing is created."""
    if missing_store(db):
        from ..errors import NoStore

        w = no_store_warning(db)
        raise NoStore(w["warning"], path=w["path"])


def no_store_warning(db: str | None) -> dict:
    """The ``no-store`` warning of a read on a store file that does not exist, in the
    CLI's words: ``{"kind": "no-store", "warning", "path"}`` (``path`` as given, or the
    default store's)."""
    from ..paths import db_file

    p = db_file(db)
    return {"kind": "no-store",
            "warning": f"{no_store_message(p)} Check the path (--db, $LEDGER_DB, store.db in `ledger config`); the "
                       f'first write creates the store, e.g. ledger remember "Prefers metric units" --cluster prefs '
                       f"--db {p}",
            "path": p}


#: Error kinds of an id not found (:mod:`ledger.errors`): read on a store that does not
#: exist, they say so rather than blame the id.
UNKNOWN_ID = frozenset({"unknown-memory", "unknown-candidate", "unknown-conflict", "unknown-source"})


#: Characters. An id longer than this is not repeated in an error (ids are about 16).
MAX_ID_ECHO = 64


def no_store_error(exc, db: str | None, fix: str = ""):
    """``exc`` (an id not found, :data:`UNKNOWN_ID`) said again for a store that does not
    exist: the same error class, kind and fields, the message naming the missing store
    and then ``fix`` (default: the CLI's "Check the path ...")."""
    from ..paths import db_file

    p = db_file(db)
    v = exc.value if isinstance(exc.value, str) else ""
    what = v if v.strip() and len(v) <= MAX_ID_ECHO else "that id"  # a megabyte "id" is not echoed back
    fix = fix or "Check the path (--db, $LEDGER_DB, store.db in `ledger config`)."
    return type(exc)(f"{no_store_message(p)[:-1]}, so {what} is not there. {fix}", field=exc.field, value=exc.value,
                     choices=exc.choices, suggestion=exc.suggestion)


def no_store_message(path: str) -> str:
    """The first sentence of every surface's no-store warning (the CLI's and the MCP
    server's say what to do in their own terms after it)."""
    return f"No store at {path}: nothing to read, and nothing was created."


def dumps(data) -> str:
    """JSON as every command prints it: indented, UTF-8 kept, unknown types as str."""
    import json  # only for --json (start-up budget)

    from ..termfmt import json_visible

    return json_visible(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def warn_search(res, as_json: bool) -> None:
    """Print the warnings of a search or recall (:meth:`ledger.models.SearchResult.warnings`,
    e.g. a ``cluster:`` naming no cluster) on stderr, so stdout keeps its format: ``⚠
    <message>``, or with ``--json`` ``{"warning", "kind", "known"}``."""
    warn_warnings(res.warnings(), as_json)


def warn_warnings(warnings: list[dict], as_json: bool) -> None:
    """Print library warnings (``{"kind", "warning", ...}``) as :func:`warn_search` does."""
    for w in warnings:
        if w["kind"] == "unknown-cluster" or w["kind"] == "quoted-value" and "list of clusters" in w["warning"]:
            w = {**w, "warning": w["warning"][:-1] + " (ledger clusters)."}
        elif w["kind"] == "empty-filter" and w.get("key") == "strength":
            w = {**w, "warning": w["warning"] + " " + SHELL_ATE_STRENGTH}
        emit_warning(w, as_json)


#: Said with an empty ``strength:`` on the command line: typed unquoted, ``strength:>40``
#: reaches ledger as ``strength:`` (the shell took ``>40`` as a redirection).
SHELL_ATE_STRENGTH = ("If you typed strength:>N or strength:<N, the shell took >N or <N for itself (>N writes the "
                      "output to a file named N): quote the filter, e.g. 'strength:>40' (or the whole query).")


def emit_warning(w: dict, as_json: bool) -> None:
    """Print one warning ``{"kind", "warning", ...}`` on stderr (:func:`_warn`)."""
    _warn(w["warning"], w["kind"], as_json, **{k: v for k, v in w.items() if k not in ("warning", "kind")})


def _warn(msg: str, kind: str, as_json: bool, **extra) -> None:
    """``⚠ <msg>`` on stderr, or with ``--json`` a JSON object ``{"warning", "kind", ...}``."""
    try:
        if as_json:
            import json

            from ..termfmt import json_visible

            sys.stderr.write(json_visible(json.dumps({"warning": msg, "kind": kind, **extra}, ensure_ascii=False)) + "\n")
        else:
            from ..termfmt import visible  # a warning may quote the query or the fact: shown, not acted on

            sys.stderr.write(visible(f"⚠ {msg}") + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def redacted_warning(n: int) -> dict:
    """``{"kind": "redacted", "warning", "count"}``: ``n`` secrets were replaced by
    ``[REDACTED:<kind>]`` before storing (what was stored is not what was given)."""
    return {"kind": "redacted",
            "warning": f"{n} secret{'s' if n != 1 else ''} replaced by [REDACTED:<kind>] before storing: the store "
                       "never holds secrets (docs/watcher.md \"Redaction\"). Keep the value in a secret manager and "
                       "remember where it is.",
            "count": n}


def missing_file_warnings(given, keys, name: str) -> list[dict]:
    """``{"kind": "missing-file", "warning", "path"}`` for each file key whose file does
    not exist (kept anyway: a file about to be written is a fair key). ``given``: the
    paths as typed, ``keys``: their :class:`ledger.models.FileKey`; ``name``: how the
    surface calls the argument (``--file``, ``files``)."""
    return [{"kind": "missing-file",
             "warning": f"{name} {f}: no such file ({k.path}); remembered anyway, keyed to that path (check it for a "
                        "typo).",
             "path": k.path}
            for f, k in zip(given, keys) if not os.path.exists(k.path)]


def warn_redacted(n: int, as_json: bool) -> None:
    """Tell the user on stderr that ``n`` secrets were replaced by
    ``[REDACTED:<kind>]`` before storing (what was stored is not what they typed)."""
    emit_warning(redacted_warning(n), as_json)


def recall(query: tuple[str, ...], *, limit: int, mode: str, agent: str | None, db: str | None, as_json: bool,
           color: bool, keep_open: bool = False) -> str:
    """``ledger recall``: counted search, seed's one-line-per-memory format."""
    from .render import recall_lines

    with _Opened(db, keep_open, read=True, as_json=as_json) as led:
        res = led.recall(" ".join(query), agent=default_agent(agent), limit=limit, mode=mode)
    warn_search(res, as_json)
    dashed = options_as_query_warning("recall", query, {"--limit": None if limit == 10 else limit,
                                                        "--mode": None if mode == DEFAULT_MODE else mode,
                                                        "--agent": agent, "--db": db, "--json": as_json})
    if dashed:
        emit_warning(dashed, as_json)
    if res.not_counted:
        # The hits go out but the read was not counted (store locked or full): say so on
        # stderr, so stdout keeps its format.
        _warn(f"these results were not counted as a retrieval: {res.not_counted}", "not-counted", as_json)
    if as_json:
        from ..filekeys import file_changes

        return dumps([{**m.to_dict(), "fileChanges": file_changes(m.files)} for m in res.hits])
    return recall_lines(res, color)


def search(query: tuple[str, ...], *, limit: int, mode: str, sort: str | None, db: str | None, as_json: bool,
           color: bool, keep_open: bool = False) -> str:
    """``ledger search``: uncounted search, the seed's table."""
    from .render import search_table

    opened = _Opened(db, keep_open, read=True, as_json=as_json)
    with opened as led:
        res = led.search(" ".join(query), limit=limit, mode=mode, sort=sort)
        now = led.clock()
    warn_search(res, as_json)
    dashed = options_as_query_warning("search", query, {"--limit": None if limit == 25 else limit,
                                                        "--mode": None if mode == DEFAULT_MODE else mode,
                                                        "--sort": sort, "--db": db, "--json": as_json})
    if dashed:
        emit_warning(dashed, as_json)
    if not as_json:
        return search_table(res, now, color)
    # The body says everything stderr said: a missing store first (the hits are empty
    # because nothing was there, not because nothing matched), then the query's own.
    d = res.to_dict()
    d["warnings"] = [*opened.warnings, *d["warnings"], *([dashed] if dashed else [])]
    return dumps(d)


def show(memory_id: str, *, db: str | None, as_json: bool, keep_open: bool = False) -> str:
    """``ledger show``: one memory with its strength explained (never counted)."""
    from .render import memory_text

    with _Opened(db, keep_open, read=True, as_json=as_json) as led:
        m = led.get(led.resolve_id(memory_id))
        events, former = led.history(m.id)
        now = led.clock()
    if as_json:
        from .. import wire
        from ..filekeys import file_changes

        return dumps({**m.to_dict(), "fileChanges": file_changes(m.files), **wire.history(events, former)})
    return memory_text(m, now, events, former)



#: What ``remember -`` reads from stdin at most, in characters: far past a claim's limit
#: (``MAX_TEXT_CHARS``), so any text a person pipes gets its exact length in the refusal.
MAX_STDIN_CLAIM_CHARS = 1024 * 1024

def remember(words: tuple[str, ...], *, text: str | None, cluster: str | None, note: str, supersedes: str | None,
             files: tuple[str, ...], topic: str | None, agent: str | None, db: str | None, as_json: bool,
             keep_open: bool = False) -> str:
    """``ledger remember``: write one claim (``-`` reads it from stdin) and report what
    the proposer found. Raises InvalidInput for a missing claim, cluster or file path."""
    after_dash = _option_words(words)
    if after_dash and not cluster and any(o == "--cluster" for o, _ in after_dash):
        raise InvalidInput(
            "--cluster came after --, and everything after -- is the fact's text, so no --cluster was given. "
            f"Put the options first: {_options_first(words, after_dash, locals())}")
    if words and text is not None:
        raise InvalidInput("Give the claim either as words or with --text, not both.")
    claim = (text if text is not None else " ".join(words)).strip()
    if claim == "-":
        # Bounded: `yes | ledger remember -` read until Python died of a MemoryError. Up
        # to the bound the claim's own check gives the exact count (TextTooLong).
        claim = sys.stdin.read(MAX_STDIN_CLAIM_CHARS + 1)
        if len(claim) > MAX_STDIN_CLAIM_CHARS:
            raise InvalidInput(f"A claim is one self-contained fact; stdin holds more than {MAX_STDIN_CLAIM_CHARS:,} "
                               f"characters (a claim may have {MAX_TEXT_CHARS:,}). For a document: ledger ingest - "
                               "--cluster <id>. Nothing was remembered.")
    if not claim.strip():
        raise InvalidInput('Nothing to remember. Try: ledger remember "Prefers metric units" --cluster prefs')
    if not cluster:
        raise InvalidInput("--cluster is required. Run `ledger clusters` to see the taxonomy.")
    if any(not f.strip() for f in files):
        raise InvalidInput("--file needs a path, e.g. --file model.ckpt")
    if supersedes is not None and not supersedes.strip():
        raise InvalidInput("--supersedes needs the id of the memory this one replaces, e.g. --supersedes m_abc123")
    keys = []
    if files:
        from ..filekeys import named_file_key

        keys = [named_file_key(f) for f in files]  # before the store is opened: a folder is refused
    who = default_agent(agent)
    res, created = write(db, lambda led: led.remember(claim, cluster=cluster, agent=who, note=note,
                                                      supersedes=supersedes, files=keys, topic=topic),
                         keep_open=keep_open)
    if created:
        emit_warning(new_store_warning(db), as_json)
    if res.redacted:
        warn_redacted(res.redacted, as_json)
    if after_dash:
        emit_warning(options_as_text_warning(claim, words, after_dash, locals()), as_json)
    for w in missing_file_warnings(files, keys, "--file"):
        emit_warning(w, as_json)
    if as_json:
        return dumps(res.to_dict())
    if res.duplicate:
        if res.new_reader:
            return f"already remembered {res.memory.id} — counted as corroboration by {who}"
        # Corroboration counts distinct agents (docs/store.md "Corroboration"): a repeat adds none.
        return f"already remembered {res.memory.id} — {who} had stated it already, so corroboration is unchanged"
    lines = [f"remembered {res.memory.id}"]
    if res.conflict_id:
        lines.append(f"opened {res.conflict_id} — supersedes {supersedes}, for the human to resolve")
    if res.proposed:
        # Only what this write proposed: a store-wide count on every write reads as
        # news when it is not (issue 15).
        n = len(res.proposed)
        lines.append(f"proposed {n} conflict candidate{'s' if n != 1 else ''} with earlier claims — "
                     "judge with `ledger conflicts` when convenient")
    return "\n".join(lines)


#: ``ledger remember``'s options (the click command's, :func:`ledger.cli.app.remember`;
#: a test compares them) and whether each takes a value.
REMEMBER_OPTIONS = {"--text": True, "--cluster": True, "--note": True, "--supersedes": True, "--file": True,
                    "--topic": True, "--agent": True, "--db": True, "--json": False}


def refuse_repeated(args: list[str], options: dict[str, bool] = REMEMBER_OPTIONS, many: tuple[str, ...] = ("--file",),
                    nothing: str = "Nothing was remembered.") -> None:
    """Raise InvalidInput when an option of ``options`` that takes one value is given
    more than once among ``args`` (a verb's arguments, as typed; ``--`` ends the
    options). Both CLI paths, like click, would keep the last value and drop the
    others without a word: ``--supersedes m_A --supersedes m_B`` would supersede m_B
    only (``judge --verdict conflict --verdict unrelated`` would settle the pair for
    good). ``many``: the options meant to repeat; ``nothing``: the message's last
    sentence, what was not done."""
    seen: dict[str, list[str]] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            break
        name, eq, value = arg.partition("=")
        if name not in options:
            continue
        if options[name] and not eq and i < len(args):
            value = args[i]
            i += 1
        seen.setdefault(name, []).append(value)
    for name, values in seen.items():
        if len(values) > 1 and name not in many and options[name]:
            shown = ", ".join(repr(v) if len(v) <= 40 else repr(v[:37] + "...") for v in values)
            if name == "--supersedes":
                raise InvalidInput(
                    f"--supersedes was given {len(values)} times ({shown}); a claim supersedes one memory, "
                    "and only the last would have been used. Give the one it replaces; if another is also "
                    "outdated, `ledger forget` it or remember a claim that supersedes it. Nothing was remembered.",
                    field="supersedes", value=values[-1])
            raise InvalidInput(f"{name} was given {len(values)} times ({shown}); it takes one value, and only the "
                               f"last would have been used. Give {name} once. {nothing}")


#: The options of the verbs whose words are a query (the click commands'
#: :func:`ledger.cli.app.recall`, ``search`` and ``export``; a test compares them) and
#: whether each takes a value: a word after ``--`` that is one of them is searched as
#: typed, with an ``options-as-text`` warning (:func:`options_as_query_warning`).
#: What :func:`refuse_repeated` says was not done, by command (both CLI paths print the
#: same line); any other command: "Nothing was done."
NOTHING_DONE = {"remember": "Nothing was remembered.", "recall": "Nothing was searched.",
                "search": "Nothing was searched.", "show": "Nothing was shown."}

#: ``show``'s options (the fast path's, for :func:`refuse_repeated`).
SHOW_OPTIONS = {"--db": True, "--json": False}

QUERY_OPTIONS = {
    "recall": {"--limit": True, "--mode": True, "--agent": True, "--db": True, "--json": False},
    "search": {"--limit": True, "--mode": True, "--sort": True, "--db": True, "--json": False},
    "export": {"--db": True, "--json": False},
}


def _option_words(words: tuple[str, ...], options: dict[str, bool] = REMEMBER_OPTIONS) -> list[tuple[str, int]]:
    """``[(option, index)]`` for the words that are exactly one of ``options``
    (``--note`` or ``--note=x``). Both CLI paths take such a word as an option unless it
    comes after ``--``, so among the words it did. A word that merely starts with one
    (``"--force is bad"``, ``--notes``) is not counted."""
    return [(w.partition("=")[0], i) for i, w in enumerate(words) if w.partition("=")[0] in options]


def _options_first(words: tuple[str, ...], found: list[tuple[str, int]], given: dict) -> str:
    """The ``ledger remember`` command line with the options ``given`` (the verb's
    arguments) and those ``found`` among the words first, then ``--`` and the rest
    (shell-quoted; a missing option value is shown as ``<id>`` or ``<value>``)."""
    import shlex  # only on this path: shlex imports re

    q = shlex.quote
    opts: list[str] = []
    for name, value in (("--cluster", given["cluster"]), ("--note", given["note"] or None),
                        ("--supersedes", given["supersedes"]), ("--topic", given["topic"]),
                        ("--agent", given["agent"]), ("--db", given["db"])):
        if value is not None:
            opts += [name, q(value)]
    for f in given["files"]:
        opts += ["--file", q(f)]
    if given["as_json"]:
        opts.append("--json")
    return _reordered("remember", opts, words, found, REMEMBER_OPTIONS, always_dash=True)


def _reordered(verb: str, opts: list[str], words: tuple[str, ...], found: list[tuple[str, int]],
               options: dict[str, bool], *, always_dash: bool = False) -> str:
    """``ledger <verb> <opts> <the found options with their values> [--] <other words>``,
    shell-quoted (``opts`` already are). ``--`` goes before the other words when
    ``always_dash`` or when one of them starts with ``-``."""
    import shlex  # only on this path: shlex imports re

    q = shlex.quote
    opts = list(opts)
    taken: set[int] = set()
    for name, i in found:
        if i in taken:
            continue
        taken.add(i)
        opts.append(q(words[i]))
        if options[name] and "=" not in words[i]:
            if i + 1 < len(words) and not any(j == i + 1 for _, j in found):
                taken.add(i + 1)
                opts.append(q(words[i + 1]))
            else:  # the option ends the line: show where its value goes
                opts.append("<id>" if name == "--cluster" else "<value>")
    left = [w for i, w in enumerate(words) if i not in taken]
    dash = ["--"] if left and (always_dash or any(w.startswith("-") and w != "-" for w in left)) else []
    return " ".join(["ledger", verb, *opts, *dash, *(q(w) for w in left)])


def options_as_query_warning(verb: str, words: tuple[str, ...], given: dict[str, object]) -> dict | None:
    """``{"kind": "options-as-text", "warning", "options": [names]}`` when words of a
    ``recall``/``search``/``export`` query (``words``, as the command got them) are that
    verb's own options (:data:`QUERY_OPTIONS`, with or without a value): they came after
    ``--`` and were searched as words, as ``--`` says (a query may well look for
    ``--limit``), so the message shows the command that would have taken them as
    options. ``given``: the options the command did take, by name (``None``/``False``:
    not given; their defaults are not shown). None when no word is an option."""
    options = QUERY_OPTIONS[verb]
    found = _option_words(words, options)
    if not found:
        return None
    import shlex

    opts: list[str] = []
    moved = {name for name, _ in found}
    for name, value in given.items():
        if name in moved:
            continue  # the one after -- is the one meant (the last given wins): shown once, from there
        if value is True:
            opts.append(name)
        elif value is not None and value is not False:
            opts += [name, shlex.quote(str(value))]
    names = list(dict.fromkeys(name for name, _ in found))
    shown = " ".join(words)
    shown = shown if len(shown) <= 80 else shown[:79] + "…"
    one = len(names) == 1
    return {"kind": "options-as-text", "options": names,
            "warning": f"{', '.join(names)} came after --, so {'it was' if one else 'they were'} searched as "
                       f'words of the query: "{shown}". If {"it was an option" if one else "they were options"}, put '
                       f"the options first: {_reordered(verb, opts, words, found, options)}"}


def options_as_text_warning(claim: str, words: tuple[str, ...], found: list[tuple[str, int]], given: dict) -> dict:
    """``{"kind": "options-as-text", "warning", "options": [names]}``: words after ``--``
    that are ``ledger remember`` options (``found``, :func:`_option_words`) were stored as
    part of the fact, as ``--`` says; a fact may well mention ``--note``, so it is kept,
    and the message shows the command that would have taken them as options."""
    names = list(dict.fromkeys(name for name, _ in found))
    shown = claim if len(claim) <= 80 else claim[:79] + "…"
    return {"kind": "options-as-text", "options": names,
            "warning": f"{', '.join(names)} came after --, so {'it was' if len(names) == 1 else 'they were'} stored "
                       f'as text of the fact: "{shown}". If {"it was an option" if len(names) == 1 else "they were options"}, '
                       f"forget this one (ledger forget <id>) and remember it again with the options first: "
                       f"{_options_first(words, found, given)}"}
