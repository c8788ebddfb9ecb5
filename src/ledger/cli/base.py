"""What every click command shares: the ``ledger`` group, output helpers, common options.

The commands live in :mod:`ledger.cli.app` (agents and people) and
:mod:`ledger.cli.setup` (harness setup); both import this module and neither imports
the other's commands, so the CLI has no import cycle (docs/architecture.md).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Callable

import click

from ..termfmt import json_visible, visible, visible_styled

AGENT_COMMANDS = ("recall", "remember", "forget", "link", "clusters", "conflicts", "judge", "ingest")
HUMAN_COMMANDS = ("search", "review", "resolve", "sources", "stats", "export", "import", "show", "serve")
SETUP_COMMANDS = ("install", "uninstall", "mcp", "doctor", "config", "replay", "checkpoints", "hook")

FILTERS_HELP = """\
Filters (in any query):
  agent:<id>  cluster:<id>  type:chat|doc  kind:claim|chunk
  'strength:<40' | 'strength:>70'   (0-100, as shown; quoted, or the shell reads < and > itself)
  asof:<date|span>  after:<date|span>  before:<date|span>   e.g. 2026-01-01, 30m, 2h, 30d, 2w, 6mo, 1y
  Repeating a key widens it: cluster:code cluster:proc"""


class LedgerGroup(click.Group):
    """Help grouped the seed's way: commands for agents, commands for you."""

    def parse_args(self, ctx, args):
        _refuse_undecodable(args)
        return super().parse_args(ctx, args)

    def list_commands(self, ctx):
        return list(AGENT_COMMANDS + HUMAN_COMMANDS + SETUP_COMMANDS)

    def format_commands(self, ctx, formatter):
        for title, names in (("For agents", AGENT_COMMANDS), ("For you", HUMAN_COMMANDS), ("Setup", SETUP_COMMANDS)):
            rows = []
            for name in names:
                cmd = self.get_command(ctx, name)
                if cmd is not None and not cmd.hidden:
                    rows.append((name, cmd.get_short_help_str(90)))
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)

    def format_epilog(self, ctx, formatter):
        formatter.write_paragraph()
        for line in FILTERS_HELP.splitlines():
            formatter.write(line + "\n")  # verbatim: write_text would re-wrap the columns
        formatter.write(f"\nStore: {_store_for_help()}   (--db, $LEDGER_DB, $LEDGER_HOME)\n")


def _refuse_undecodable(args: list[str]) -> None:
    """Every command-line argument must be valid UTF-8. Python hands undecodable bytes
    over as lone surrogates (``surrogateescape``), which no store, JSON or terminal can
    carry: refuse them here, once for every command and option, naming the argument,
    instead of failing later inside SQLite with a traceback. Raises InvalidInput."""
    from ..errors import InvalidInput

    for n, arg in enumerate(args, 1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError as exc:
            shown = arg.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace") if _escaped(arg) \
                else arg.encode("utf-8", "backslashreplace").decode("ascii")
            locale = _utf8_under_another_locale(arg)
            if locale:
                # The bytes are UTF-8: the process was told to read them as something else.
                raise InvalidInput(
                    f'Argument {n} ("{shown[:80]}") is UTF-8, but this process reads its arguments as {locale} '
                    "(PYTHONUTF8=0 with the C or POSIX locale, or another legacy locale), so ledger cannot take it "
                    "as typed. Run it under a UTF-8 locale (LC_ALL=C.UTF-8 ledger ...) or unset PYTHONUTF8."
                ) from None
            raise InvalidInput(
                f'Argument {n} ("{shown[:80]}") is not valid UTF-8 (undecodable byte at position {exc.start}). '
                "ledger keeps text as UTF-8: re-type it, or convert it first (iconv -f <encoding> -t utf-8)."
            ) from None


def _utf8_under_another_locale(arg: str) -> str | None:
    """The name of this process's argument encoding when ``arg``'s bytes are valid UTF-8
    all the same (so the locale, not the text, is wrong), else None."""
    enc = sys.getfilesystemencoding()
    if not _escaped(arg) or enc.lower().replace("_", "-") in ("utf-8", "utf8"):
        return None
    try:
        os.fsencode(arg).decode("utf-8")
    except (UnicodeDecodeError, UnicodeEncodeError):
        return None
    return enc


def _escaped(arg: str) -> bool:
    """True when every surrogate in ``arg`` stands for one undecodable byte."""
    return all(0xDC80 <= ord(c) <= 0xDCFF for c in arg if 0xD800 <= ord(c) <= 0xDFFF)


def _color() -> bool:
    # TERM=dumb (Emacs' shell, some CI consoles) shows escape sequences as text: no colour.
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


def _out(text: str) -> None:
    """Print ``text`` on stdout for a person: control characters from stored or typed
    text are shown, not acted on (:func:`ledger.termfmt.visible`; with colour on, the
    CLI's own colour sequences are kept, :func:`ledger.termfmt.visible_styled`)."""
    color = _color()
    click.echo(visible_styled(text) if color else visible(text), color=color)


def _err_line(text: str) -> None:
    """Print one human line on stderr (``✕ ...``, ``⚠ ...``), control characters shown
    as :func:`ledger.termfmt.visible` shows them."""
    click.echo(visible(text), err=True)


def _json(data) -> None:
    """Print ``data`` as indented JSON, UTF-8 kept; C1 and bidi controls written as
    ``\\u`` escapes (:func:`ledger.termfmt.json_visible`: the same JSON value)."""
    click.echo(json_visible(json.dumps(data, indent=2, ensure_ascii=False, default=str)))


DB_HELP = ("Store: a SQLite file or a postgresql:// URL (default: $LEDGER_DB, then store.db in `ledger config`, "
           "then $LEDGER_HOME/ledger.db, ~/.ledger/ledger.db). May also come before the command: ledger --db X recall ...")


def _not_empty(ctx, param, value):
    """``--db ""`` is a mistake (an unset variable in a script), not the default store;
    ``--db <folder>`` (an existing folder, or any path ending in a separator) names
    where the store file would be, not the file; ``--db :memory:`` is a store each
    command would lose at its end: all are refused saying what to give instead (``click.BadParameter``)."""
    if value is not None and not value.strip():
        raise click.BadParameter("the path is empty: give a store file or a postgresql:// URL, or leave --db out for the default store.")
    from ..paths import IN_MEMORY, in_memory_message, names_folder

    if value == IN_MEMORY:
        raise click.BadParameter(in_memory_message("--db").removeprefix("--db is "))
    if value is not None and os.path.isdir(os.path.expanduser(value)):
        raise click.BadParameter(f"{value} is a folder, not a store file. Give the store file, e.g. "
                                 f"--db {os.path.join(value, 'ledger.db')} (created on first use), or a postgresql:// URL.")
    if value is not None and names_folder(value):
        # SQLite would make a file named like the folder, blocking it for good.
        raise click.BadParameter(f"{value} ends in {value[-1]}, so it names a folder, not a store file. Give the store "
                                 f"file, e.g. --db {os.path.join(value, 'ledger.db')} (created on first use), or a "
                                 "postgresql:// URL. Nothing was created.")
    return value


class WholeNumber(click.IntRange):
    """A whole number from ``min`` to ``max`` (both included), as ``click.IntRange``, whose
    error says what to type: click's own is "'abc' is not a valid integer range." Raises
    ``click.BadParameter``: "expected a whole number from 1 to 1000, got 'abc': e.g.
    --limit 10" (the example is the option's default, else ``min``)."""

    name = "number"

    def convert(self, value, param, ctx):
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter:
            flag = param.opts[0] if param is not None and param.opts else ""
            default = getattr(param, "default", None)
            example = default if isinstance(default, int) and self.min <= default <= self.max else self.min
            self.fail(f"expected a whole number from {self.min} to {self.max}, got {value!r}: e.g. {flag} {example}".rstrip() + ".",
                      param, ctx)


def read_store(db: str | None, as_json: bool = False):
    """For ``clusters``, a read an agent makes before its first write: the store as a
    context manager, or when its file does not exist an empty one in memory (the
    clusters a new store starts with) and a ``no-store`` warning on stderr
    (:func:`.verbs.read_target`). Creates nothing."""
    from .verbs import _Opened

    return _Opened(db, False, read=True, as_json=as_json)


def report_store(db: str | None, as_json: bool = False):
    """For the reads that report on a store (stats, conflicts, sources, review, export):
    the store as a context manager. A store file that does not exist raises
    :class:`ledger.errors.NoStore` (exit 1; ``{"error", "kind": "no-store"}`` with
    ``--json``, nothing on stdout) naming the path and how to create the store: zero
    counts or an empty list would read as an empty store. The body runs first on an
    empty stand-in in memory, so its input errors (a bad query) are reported as usual.
    Creates nothing."""
    from .verbs import _Opened

    return _Opened(db, False, as_json=as_json, must_exist=True)


def common(*, agent: bool = False) -> Callable:
    """Options every command takes: --db and --json (and --agent where it matters)."""

    def deco(fn):
        fn = click.option("--json", "as_json", is_flag=True, help="Machine-readable JSON output.")(fn)
        fn = click.option("--db", envvar=None, callback=_not_empty, help=DB_HELP)(fn)
        if agent:
            fn = click.option("--agent", help="Acting agent id (default: $LEDGER_AGENT, else 'agent').")(fn)
        return fn

    return deco


def lookup_store(db: str | None, as_json: bool = False):
    """For the writes that act on an existing id (forget, link, judge, resolve, sources
    trust/drop): the store, or when its file does not exist an empty stand-in in memory
    (:func:`.verbs.read_target`), so a mistyped --db creates no store and no folder: the
    id is then not found, and the error names the missing store
    (:func:`.verbs.no_store_error`) instead of calling the id mistyped."""
    from .verbs import _Opened

    return _Opened(db, False, read=True, as_json=as_json)


def _open(db: str | None):
    from ..service import Ledger

    return Ledger.open(db)


def _words(words: tuple[str, ...], text: str | None) -> str:
    return (text if text is not None else " ".join(words)).strip()


@click.group(cls=LedgerGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
             invoke_without_command=True)
@click.version_option(package_name="ledger-memory", prog_name="ledger")
@click.pass_context
def cli(ctx):
    """LEDGER: local memory for coding agents. One SQLite store on this machine;
    agents remember and recall, people review and resolve."""
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())


def _store_for_help() -> str:
    """The store for ``--help``: without a URL's password; a location ledger cannot open
    is named with why, so help still prints."""
    from ..errors import LedgerError
    from ..paths import db_file, shown_location

    try:
        return shown_location(db_file())
    except LedgerError as exc:
        return f"none usable ({exc.message})"
