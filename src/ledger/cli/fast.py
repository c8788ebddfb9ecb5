"""The agent verbs without click: ``recall``, ``search``, ``remember`` and ``show``.

Importing click costs about 3x a bare ``python -c pass`` on our machines, more than the
whole start-up budget of ``ledger recall`` (docs/benchmarks.md "Start-up"). These verbs
are parsed here with :mod:`argparse` (its import is nearly free once ``re`` is loaded,
which the console-script launcher already does) and run through :mod:`.verbs`, the code
the click commands run too, so both paths print the same bytes.

The fast path only handles well-formed calls. ``--help``, an unknown option, a bad
value or anything else argparse rejects makes :func:`run_fast` return ``None`` and
``main`` hands the same arguments to the click app, which prints its usual help or its
usual ``✕`` error. Options mirror the click definitions in :mod:`.app`; a test runs
both paths on the same arguments and compares their output.
"""

from __future__ import annotations

import argparse
import os
import sys

from ..vocab import DEFAULT_MODE, MODES, SORTS
from .verbs import FAST_VERBS


class _Decline(Exception):
    """argparse could not parse the call: let click handle (and report) it."""


class _Formatter(argparse.HelpFormatter):
    """A fixed width: argparse builds a formatter for every ``add_argument`` and the
    default one imports ``shutil`` (with bz2 and lzma) to measure the terminal."""

    def __init__(self, prog):
        super().__init__(prog, width=100)


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse would print usage and exit 2
        raise _Decline(message)

    def exit(self, status=0, message=None):  # pragma: no cover - only -h/--version, declined earlier
        raise _Decline(message or "")


def _parser(verb: str) -> _Parser:
    p = _Parser(prog=f"ledger {verb}", add_help=False, allow_abbrev=False, formatter_class=_Formatter)
    p.add_argument("--db")
    p.add_argument("--json", dest="as_json", action="store_true")
    if verb in ("recall", "search"):
        p.add_argument("query", nargs="*")
        p.add_argument("--limit", type=int, default=10 if verb == "recall" else 25)
        p.add_argument("--mode", default=DEFAULT_MODE)
    if verb == "search":
        p.add_argument("--sort")
    if verb in ("recall", "remember"):
        p.add_argument("--agent")
    if verb == "remember":
        p.add_argument("words", nargs="*")
        p.add_argument("--text")
        p.add_argument("--cluster")
        p.add_argument("--note", default="")
        p.add_argument("--supersedes")
        p.add_argument("--file", dest="files", action="append", default=[])
        p.add_argument("--topic")
    if verb == "show":
        p.add_argument("memory_id")
    return p


def _valid(verb: str, a: argparse.Namespace) -> bool:
    """The click commands' value checks (IntRange, Choice); False lets click report them."""
    if verb in ("recall", "search"):
        if a.mode not in MODES or not 1 <= a.limit <= (1000 if verb == "recall" else 10000):
            return False
    if verb == "search" and a.sort is not None and a.sort not in SORTS:
        return False
    return True


def _color(as_json: bool) -> bool:
    return not as_json and sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def run_fast(args: list[str]) -> int | None:
    """Run ``args`` if this path handles them; the exit code, or None to defer to click."""
    verb, rest = args[0], args[1:]
    if verb not in FAST_VERBS or any(x in ("-h", "--help") for x in rest):
        return None
    try:
        for x in rest:
            x.encode("utf-8")
    except UnicodeEncodeError:
        return None  # undecodable bytes in argv: the click app names the argument
    try:
        a = _parser(verb).parse_intermixed_args(rest)
    except _Decline:
        return None
    if not _valid(verb, a):
        return None
    from ..errors import LedgerError
    from . import verbs

    try:
        from ..paths import check_environment

        check_environment()
        if verb == "recall":
            out = verbs.recall(tuple(a.query), limit=a.limit, mode=a.mode, agent=a.agent, db=a.db, as_json=a.as_json,
                               color=_color(a.as_json))
        elif verb == "search":
            out = verbs.search(tuple(a.query), limit=a.limit, mode=a.mode, sort=a.sort, db=a.db, as_json=a.as_json,
                               color=_color(a.as_json))
        elif verb == "show":
            out = verbs.show(a.memory_id, db=a.db, as_json=a.as_json)
        else:
            out = verbs.remember(tuple(a.words), text=a.text, cluster=a.cluster, note=a.note, supersedes=a.supersedes,
                                 files=tuple(a.files), topic=a.topic, agent=a.agent, db=a.db, as_json=a.as_json)
    except LedgerError as exc:
        from .hints import phrase  # the CLI's wording of core errors, as the click app uses

        return _fail(phrase(exc), exc.kind, a.as_json)
    except KeyboardInterrupt:
        return 130
    except ModuleNotFoundError as exc:
        # A partial install: one line naming the reinstall command, as the click app does.
        from ..install_hint import missing_module_message

        return _fail(missing_module_message(exc.name or str(exc), verb), "missing-dependency", a.as_json)
    except Exception as exc:
        # As in the click app: SQLite errors past the store's checks get one line, not a
        # traceback (matched by module, so the CLI never imports sqlite3).
        if type(exc).__module__ == "sqlite3":
            from ..paths import db_file

            return _fail(f"The store cannot be used: {exc}. Check the file and its permissions ({db_file(a.db)}, or --db).",
                         "store-unavailable", a.as_json)
        raise
    return _print(out, a.as_json)


def _print(text: str, as_json: bool) -> int:
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

            sys.stderr.write(json.dumps({"error": message, "kind": kind}, ensure_ascii=False) + "\n")
        else:
            sys.stderr.write(f"✕ {message}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    return 1
