"""The ``ledger`` command.

``main()`` routes ``ledger hook ...`` to the stdlib-only hook runner *before* importing
click, so a harness hook pays only for Python's start-up. The agent verbs (``recall``,
``search``, ``remember``, ``show``) go through :mod:`ledger.cli.fast` (no click; the
console command then ends with ``os._exit``, see :func:`_end`) and ``--version`` is
answered here; every other command, and any call the fast path declines, goes
through the click app in :mod:`ledger.cli.app`.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Run ``ledger`` with ``argv`` (default: the command line); returns the exit status.
    Ctrl-C at any point, even while the modules of a command are still being imported
    (the first few hundred ms of ``ledger import``, ``ingest``, ``serve``), is 130, the
    shell's convention for an interrupt, never a traceback."""
    try:
        return _main(argv)
    except KeyboardInterrupt:
        return 130


def _main(argv: list[str] | None) -> int:
    args = _db_first(sys.argv[1:] if argv is None else argv)
    _ensure_std_streams()
    if args and args[0] == "hook" and not _wants_help(args[1:]):
        from ..harness.runner import hook_main

        return hook_main(args[1:], fast_exit=True)
    if args and args[0] == "__serve-session":
        # Internal: the long-lived child process of the OpenCode plugin (JSON lines).
        from ..harness.session_server import main as serve_session

        return serve_session(args[1:])  # checks the harness against the registry
    if args and args[0] == "__distill":
        # Internal: the detached distiller the watcher starts (argparse, no click).
        from .distiller import main as distill

        return distill(args[1:])
    if args and args[0] == "__drain":
        # Internal: the detached process that stores spooled observations (watcher/spool.py).
        from .drainer import main as drain

        return drain(args[1:])
    if args and args[0] == "mcp" and not any(a in ("-h", "--help") for a in args[1:]):
        # The MCP server: a client spawns it and waits for `initialize`, so it starts
        # without click (docs/benchmarks.md "MCP server"); --help goes to click.
        from ..mcp.server import main as serve_mcp

        return serve_mcp(args[1:])
    if args == ["--version"]:
        from .. import __version__

        print(f"ledger, version {__version__}")  # click's version_option format
        return 0
    if args and args[0] in ("recall", "search", "remember", "show"):
        # The agent verbs start without click (docs/benchmarks.md "Start-up"); a call
        # the fast path does not handle (help, a bad option) falls through to click.
        if argv is None:
            # The console command: a process of a few tens of ms that ends with
            # os._exit. The cyclic garbage collector's passes over the objects the
            # imports create cost it about 1.5 ms (docs/benchmarks.md, "remember's
            # start-up") and would free next to nothing; a caller of main(argv) keeps it.
            import gc

            gc.disable()
        from .fast import run_fast

        rc = run_fast(args, keep_open=argv is None)
        if rc is not None:
            if argv is None:
                _end(rc)
            return rc
        if argv is None:
            gc.enable()  # the click app may run for long (serve, watch, ingest)
    from .app import run

    return run(args)


def _db_first(args: list[str]) -> list[str]:
    """``ledger --db X <command> ...`` as ``ledger <command> --db X ...``, and the same
    for ``--json`` (``ledger --json recall deploy``), in any order and together: the
    top-level help names ``--db``, people type these first (``ledger --db other.db
    export``), and every command that opens a store takes both. The options move only
    when a command follows them; anything else is left as it is (click then names it)."""
    lead: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--json" or a.startswith("--db="):
            lead.append(a)
            i += 1
        elif a == "--db" and i + 1 < len(args):
            lead += args[i : i + 2]
            i += 2
        else:
            break
    if lead and i < len(args) and not args[i].startswith("-"):
        return [args[i], *lead, *args[i + 1 :]]
    return args


def _end(rc: int) -> None:
    """End the console command at once with status ``rc``, its output flushed: no
    interpreter teardown, and the store left open (closing the last connection
    checkpoints the WAL with two fsyncs, half of a ``recall``'s wall time on our
    machines; docs/benchmarks.md "Start-up"). Only the console command does this
    (``main()`` without arguments): a caller of ``main(argv)`` gets its status back.
    Every write was committed before, so nothing is lost; the next process finds the
    WAL as it was, as after ``ledger hook`` (:func:`ledger.harness.runner.hook_main`)."""
    import os

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(rc)


def _wants_help(rest: list[str]) -> bool:
    """``ledger hook --help``, ``ledger hook claude-code -h``, or any ``ledger hook ...``
    typed at a terminal: a person asking, not a harness (a harness sends no flags and
    pipes the payload into stdin), so click prints the usage. With a harness or event
    named, stdin at a terminal used to wait silently for a payload nobody would type.
    With piped stdin it stays on the hook path and fails open, silently."""
    if any(a in ("--help", "-h") for a in rest):
        return True
    try:
        return sys.stdin.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def _ensure_std_streams() -> None:
    """A harness or script may start us with stdin/stdout/stderr closed (``<&-``):
    Python then sets them to None. Give them /dev/null so nothing crashes on them. An
    output stream whose encoding is not a UTF (``PYTHONIOENCODING=ascii``) escapes what
    it cannot carry instead of raising (:func:`_json_escape`)."""
    import os

    for name, mode in (("stdin", "r"), ("stdout", "w"), ("stderr", "w")):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, mode))
    for stream in (sys.stdout, sys.stderr):
        enc = (getattr(stream, "encoding", None) or "utf-8").lower().replace("_", "-")
        if not enc.startswith("utf") and hasattr(stream, "reconfigure"):
            # PYTHONIOENCODING=ascii (or latin-1, a legacy locale): printing a stored "café"
            # was a UnicodeEncodeError traceback. What the encoding cannot carry is written
            # as \uXXXX, which is also a valid escape inside the JSON of --json.
            import codecs

            codecs.register_error("ledger-json-escape", _json_escape)
            stream.reconfigure(errors="ledger-json-escape")


def _json_escape(exc: UnicodeEncodeError) -> tuple[str, int]:
    """A codec error handler: each character the stream cannot encode as ``\\uXXXX`` (a
    surrogate pair beyond U+FFFF), JSON's own escape, readable in text as well."""
    out = []
    for c in exc.object[exc.start : exc.end]:
        o = ord(c)
        if o > 0xFFFF:
            o -= 0x10000
            out.append(f"\\u{0xD800 + (o >> 10):04x}\\u{0xDC00 + (o & 0x3FF):04x}")
        else:
            out.append(f"\\u{o:04x}")
    return "".join(out), exc.end
