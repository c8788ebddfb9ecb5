"""The agent verbs without click: ``recall``, ``search``, ``remember`` and ``show``.

Importing click costs about 3x a bare ``python -c pass`` on our machines, more than the
whole start-up budget of ``ledger recall`` (docs/benchmarks.md "Start-up"). These verbs
are parsed here by :func:`parse`, a small reader of the few options they take, and run
through :mod:`.verbs`, the code the click commands run too, so both paths print the same
bytes. Not :mod:`argparse`: its import, the ``gettext``/``locale`` lookups it makes
for every message and building a parser with its help formatter cost about 0.25x
``python -c pass`` for a command line of three words.

The fast path only handles well-formed calls. ``--help``, an unknown option, a missing
or bad value, or anything else unusual makes :func:`run_fast` return ``None`` and
``main`` hands the same arguments to the click app, which prints its usual help or its
usual ``✕`` error (for a word starting with ``-`` that is no option, ``ledger recall -v``,
that error shows the command rewritten with ``--``: :func:`ledger.cli.app._dash_hint`).
Options mirror the click definitions in :mod:`.app`; a test runs
both paths on the same arguments and compares their output.
"""

from __future__ import annotations

import os
import sys

from ..paths import IN_MEMORY, names_folder
from ..vocab import DEFAULT_MODE, MODES, SORTS
from .verbs import FAST_VERBS

#: Per verb: the options taking a value, with their defaults (``--file`` collects a
#: list), and the name of its positional arguments. ``--db`` and ``--json`` are common.
_VALUE_OPTIONS: dict[str, dict[str, object]] = {
    "recall": {"--db": None, "--limit": 10, "--mode": DEFAULT_MODE, "--agent": None},
    "search": {"--db": None, "--limit": 25, "--mode": DEFAULT_MODE, "--sort": None},
    "show": {"--db": None},
    "remember": {"--db": None, "--agent": None, "--text": None, "--cluster": None, "--note": "", "--supersedes": None,
                 "--file": (), "--topic": None},
}
_POSITIONAL = {"recall": "query", "search": "query", "show": "memory_id", "remember": "words"}


def _is_word(arg: str) -> bool:
    """Whether ``arg`` is a word (a positional argument or an option's value) as click
    reads it: anything not starting with ``-``, and ``-`` alone (stdin for ``remember``).
    Anything else is an option to click (``-5`` and ``"-v is verbose"`` included)."""
    return not arg.startswith("-") or arg == "-"


def parse(verb: str, args: list[str]) -> dict | None:
    """The options of ``ledger <verb> <args>`` as a dict (keys: the option names without
    dashes, ``json``, and the verb's positional name: a list of words, or for ``show``
    the one id), or None for anything this reader does not take as given: an unknown or
    abbreviated option, an option without its value or with a value starting with ``-``
    (click would take it; rare enough to leave to click), ``--json=...``, a ``--limit``
    that is not an integer, ``show`` without exactly one id. Options and words may be
    intermixed; ``--`` ends the options (:func:`_is_word` says what is a word). An
    option given twice keeps the last value (``--file`` keeps all), as with click."""
    spec = _VALUE_OPTIONS[verb]
    out: dict = {k[2:]: v for k, v in spec.items()}
    out["json"] = False
    words: list[str] = []
    i, n = 0, len(args)
    while i < n:
        arg = args[i]
        i += 1
        if arg == "--":
            words += args[i:]
            break
        if _is_word(arg):
            words.append(arg)
            continue
        name, eq, value = arg.partition("=")
        if name == "--json" and not eq:
            out["json"] = True
            continue
        if name not in spec:
            return None
        if not eq:
            if i >= n or not _is_word(args[i]):
                return None  # no value: click names the option
            value = args[i]
            i += 1
        if name == "--file":
            out["file"] = (*out["file"], value)
        elif name == "--limit":
            try:
                out["limit"] = int(value)
            except ValueError:
                return None
        else:
            out[name[2:]] = value
    if verb == "show":
        if len(words) != 1:
            return None
        out["memory_id"] = words[0]
    else:
        out[_POSITIONAL[verb]] = words
    return out


def _valid(verb: str, a: dict) -> bool:
    """The click commands' value checks (IntRange, Choice, Path); False lets click report them."""
    if verb in ("recall", "search"):
        if a["mode"] not in MODES or not 1 <= a["limit"] <= (1000 if verb == "recall" else 10000):
            return False
    if verb == "search" and a["sort"] is not None and a["sort"] not in SORTS:
        return False
    if a["db"] is not None and (not a["db"] or a["db"] == IN_MEMORY or os.path.isdir(a["db"]) or names_folder(a["db"])):
        return False  # the click option's check (base._not_empty) names the folder and what to give
    return True


def _color(as_json: bool) -> bool:
    return (not as_json and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
            and os.environ.get("TERM") != "dumb")  # as base._color


def run_fast(args: list[str], *, keep_open: bool = False) -> int | None:
    """Run ``args`` if this path handles them; the exit code, or None to defer to click.
    ``keep_open``: leave the store open for a process about to end with ``os._exit``
    (see :func:`ledger.cli.main`)."""
    verb, rest = args[0], args[1:]
    if verb not in FAST_VERBS or any(x in ("-h", "--help") for x in rest):
        return None
    try:
        for x in rest:
            x.encode("utf-8")
    except UnicodeEncodeError:
        return None  # undecodable bytes in argv: the click app names the argument
    a = parse(verb, rest)
    if a is None or not _valid(verb, a):
        return None
    as_json = a["json"]
    from ..errors import LedgerError
    from . import verbs

    try:
        from ..paths import check_environment

        check_environment()
        # click would keep the last of a repeated option, and so does parse()
        options = verbs.REMEMBER_OPTIONS if verb == "remember" else verbs.QUERY_OPTIONS.get(verb, verbs.SHOW_OPTIONS)
        verbs.refuse_repeated(rest, options, nothing=verbs.NOTHING_DONE[verb])
        if verb == "recall":
            out = verbs.recall(tuple(a["query"]), limit=a["limit"], mode=a["mode"], agent=a["agent"], db=a["db"],
                               as_json=as_json, color=_color(as_json), keep_open=keep_open)
        elif verb == "search":
            out = verbs.search(tuple(a["query"]), limit=a["limit"], mode=a["mode"], sort=a["sort"], db=a["db"],
                               as_json=as_json, color=_color(as_json), keep_open=keep_open)
        elif verb == "show":
            out = verbs.show(a["memory_id"], db=a["db"], as_json=as_json, keep_open=keep_open)
        else:
            out = verbs.remember(tuple(a["words"]), text=a["text"], cluster=a["cluster"], note=a["note"],
                                 supersedes=a["supersedes"], files=a["file"], topic=a["topic"], agent=a["agent"],
                                 db=a["db"], as_json=as_json, keep_open=keep_open)
    except LedgerError as exc:
        from .hints import phrase  # the CLI's wording of core errors, as the click app uses

        return _fail(phrase(exc), exc.kind, as_json)
    except KeyboardInterrupt:
        return 130
    except ModuleNotFoundError as exc:
        # A partial install: one line naming the reinstall command, as the click app does.
        from ..install_hint import missing_module_message

        return _fail(missing_module_message(exc.name or str(exc), verb), "missing-dependency", as_json)
    except Exception as exc:
        # As in the click app: SQLite errors past the store's checks get one line, not a
        # traceback (matched by module, so the CLI never imports sqlite3).
        if type(exc).__module__ == "sqlite3":
            from ..paths import db_file

            return _fail(f"The store cannot be used: {exc}. Check the file and its permissions ({db_file(a['db'])}, or --db).",
                         "store-unavailable", as_json)
        raise
    return _print(out, as_json)


def _print(text: str, as_json: bool) -> int:
    """Write ``text`` and a newline on stdout (JSON as is: :func:`.verbs.dumps` made it
    safe; human text as :func:`ledger.cli.base._out` writes it, control characters shown,
    not acted on). The exit code."""
    if not as_json:
        from ..termfmt import visible, visible_styled

        text = visible_styled(text) if _color(as_json) else visible(text)
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        # `ledger recall x | head -1`: the reader has what it wanted; not an error.
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
    except OSError as exc:  # e.g. stdout on a full disk
        return _fail(f"Cannot write: {exc.strerror or exc}.", "io", as_json)
    return 0


def _fail(message: str, kind: str, as_json: bool) -> int:
    """As the click app's errors: ``✕ <message>``, or with ``--json`` one JSON object
    ``{"error": <message>, "kind": <slug>}`` on stderr. Exit status 1 either way."""
    try:
        if as_json:
            import json

            from ..termfmt import json_visible

            sys.stderr.write(json_visible(json.dumps({"error": message, "kind": kind}, ensure_ascii=False)) + "\n")
        else:
            from ..termfmt import visible  # the message may quote what was typed

            sys.stderr.write(visible(f"✕ {message}") + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    return 1
