"""Click commands: each parses options, calls one facade method and prints the result.

Errors from the core (:class:`ledger.errors.LedgerError`) and click's own usage errors
are printed as ``✕ <message>`` on stderr with exit code 1.
"""

from __future__ import annotations

import json
import os
import sys

import click

from ..errors import InvalidInput, LedgerError
from ..paths import db_path, default_agent
from ..termfmt import json_visible, visible
from ..vocab import DEFAULT_MODE, DEFAULT_SOURCE_TRUST, MODES, SORTS
from . import verbs
from .base import (  # noqa: F401 - shared by setup
    WholeNumber,
    _color,
    _json,
    _open,
    _out,
    _words,
    cli,
    common,
    lookup_store,
    read_store,
    report_store,
)


def _warn_unknown_clusters(led, query: str) -> None:
    """The library's warnings for ``query`` (a ``cluster:`` naming no cluster) on
    stderr, JSON when the command line asks for it (:func:`.verbs.warn_search`)."""
    verbs.warn_warnings(led.query_warnings(query), _JSON_ERRORS)


# ---------------------------------------------------------------------------- agents
@cli.command()
@click.argument("query", nargs=-1)
@click.option("--limit", default=10, show_default=True, type=WholeNumber(1, 1000))
@click.option("--mode", type=click.Choice(MODES), default=DEFAULT_MODE, show_default=True)
@common(agent=True)
def recall(query, limit, mode, agent, db, as_json):
    """Recall memories about a topic (counts as a retrieval: strengthens what it returns).

    \b
    ledger recall invoice terms
    ledger recall deploy cluster:proc 'strength:>40' --limit 5
    """
    _out(verbs.recall(query, limit=limit, mode=mode, agent=agent, db=db, as_json=as_json, color=_color() and not as_json))


@cli.command()
@click.argument("words", nargs=-1)
@click.option("--text", help="The claim (alternative to positional words).")
@click.option("--cluster", help="Topic cluster id (see `ledger clusters`).")
@click.option("--note", default="", help="Provenance: where this came from.")
@click.option("--supersedes", help="Id of an older memory this one replaces (opens a conflict for a person).")
@click.option("--file", "files", multiple=True, help="A file this fact is about (repeatable); re-injected when an agent touches it.")
@click.option("--topic", help="Topic key, e.g. file-format:model.ckpt.")
@common(agent=True)
def remember(words, text, cluster, note, supersedes, files, topic, agent, db, as_json):
    """Remember one self-contained fact.

    \b
    ledger remember "Staging deploys need VPN access" --cluster proc
    ledger remember "model.ckpt is a safetensors file" --cluster code --file model.ckpt
    """
    _out(verbs.remember(words, text=text, cluster=cluster, note=note, supersedes=supersedes, files=files, topic=topic,
                        agent=agent, db=db, as_json=as_json))


@cli.command()
@click.argument("ids", nargs=-1)
@common(agent=True)
def forget(ids, agent, db, as_json):
    """Drop memories that were wrong or are finished (still answerable by asof:).

    \b
    ledger forget m_abc123 m_def456
    """
    with lookup_store(db, as_json) as led:
        r = led.forget_each(list(ids), agent=default_agent(agent))
    if as_json:
        _json({"forgotten": len(r["forgotten"]), "ids": list(ids), "already_forgotten": r["already"]})
        return
    lines = []
    if r["forgotten"]:
        lines.append(f"forgot {len(r['forgotten'])} — still answerable by asof: queries")
    if r["already"]:
        which = ", ".join(r["already"])
        lines.append(f"{which} {'was' if len(r['already']) == 1 else 'were'} already forgotten; nothing to do for "
                     f"{'it' if len(r['already']) == 1 else 'them'}")
    _out("\n".join(lines))


@cli.command()
@click.argument("a")
@click.argument("b")
@common(agent=True)
def link(a, b, agent, db, as_json):
    """Link two related memories (both true, about the same thing).

    \b
    ledger link m_abc123 m_def456
    """
    if not a.strip() or not b.strip():
        raise InvalidInput("Which memories? `ledger link` links two memory ids, e.g. ledger link m_abc123 m_def456 "
                           "(`ledger search` lists ids).", field="memory", value=a if not a.strip() else b)
    with lookup_store(db, as_json) as led:
        a, b = led.link(a, b, agent=default_agent(agent))
    _json({"linked": [a, b]}) if as_json else _out(f"linked {a} {b}")


@cli.group(invoke_without_command=True)
@common()
@click.pass_context
def clusters(ctx, db, as_json):
    """List the topic clusters (or `clusters add <label>`).

    \b
    ledger clusters
    ledger clusters add Client work
    """
    if ctx.invoked_subcommand is not None:
        ctx.obj = {"db": db, "json": as_json}
        return
    from .render import clusters_table

    # A read: a store that does not exist is not created; the clusters a new one starts
    # with are listed, with a no-store warning (an agent runs this before its first write).
    with read_store(db, as_json) as led:
        cs = led.clusters()
    _json([c.to_dict() for c in cs]) if as_json else _out(clusters_table(cs, _color()))


@clusters.command("add")
@click.argument("label", nargs=-1, required=True)
@common()
@click.pass_context
def clusters_add(ctx, label, db, as_json):
    """Create a cluster; its id is the slug of the label."""
    db = db or (ctx.obj or {}).get("db")
    as_json = as_json or (ctx.obj or {}).get("json")
    from ..text import slugify

    text = " ".join(label)

    def work(led):
        existed = {c.id: c for c in led.clusters()}.get(slugify(text.strip()))
        return existed, led.add_cluster(text)

    # A bad label fails before the store is created (verbs.write).
    (existed, c), created = verbs.write(db, work)
    if created:
        verbs.emit_warning(verbs.new_store_warning(db), as_json)
    if as_json:
        _json({**c.to_dict(), "created": existed is None})
    elif existed is not None:
        _out(f'cluster {c.id} ("{c.label}") already exists; nothing changed')
    else:
        _out(f"✓ {c.id}")


@cli.command()
@click.option("--limit", default=5, show_default=True, type=WholeNumber(1, 500))
@common()
def conflicts(limit, db, as_json):
    """Pairs the store suspects of contradicting, for you (the agent) to judge.

    \b
    ledger conflicts --limit 5
    """
    from .render import candidates_text

    with report_store(db, as_json) as led:
        cands = led.candidates(limit)
        waiting = led.candidate_count() if len(cands) == limit else len(cands)
    _json([c.to_dict() for c in cands]) if as_json else _out(candidates_text(cands, waiting))


def _need_source_id(source_id: str) -> None:
    """An empty id is a missing one: ask for it instead of "No source ."."""
    if not source_id.strip():
        raise InvalidInput("Which source? Give its id, e.g. s_abc123 (`ledger sources` lists them).",
                           field="source", value=source_id)


@cli.command()
@click.argument("candidate")
@click.option("--verdict", required=True, help="conflict | unrelated")
@click.option("--kind", help="direct contradiction | value drift | stale schedule | stale terms | date conflict | stale fact")
@click.option("--detector", type=float, help="Your confidence 0-1 (default 0.8).")
@click.option("--note", default="", help="Why, for the person who resolves it.")
@common(agent=True)
def judge(candidate, verdict, kind, detector, note, agent, db, as_json):
    """Judge a candidate pair: can both be true at once?

    \b
    ledger judge cc_abc --verdict conflict --kind "value drift" --detector 0.9
    ledger judge cc_abc --verdict unrelated
    """
    if not candidate.strip():
        raise InvalidInput("Which candidate? Give its id, e.g. ledger judge cc_abc123 --verdict unrelated "
                           "(`ledger conflicts` lists the ones waiting).", field="candidate", value=candidate)
    with lookup_store(db, as_json) as led:
        cf = led.judge(candidate, verdict, agent=default_agent(agent), kind=kind, detector=detector, note=note)
        c = led.conflict(cf) if cf else None
    if as_json:
        _json({"candidate": candidate, "verdict": verdict, "conflict": c.to_dict() if c else None})
    elif cf:
        _out(f"queued {cf} — {c.kind}, for the human to resolve")
    else:
        _out("settled — marked unrelated, will not be proposed again")


@cli.command()
@click.argument("path", required=False)
@click.option("--cluster", help="Topic cluster id (required).")
@click.option("--trust", type=float, default=None,
              help=f"How much to trust this document, 0-1 (default {DEFAULT_SOURCE_TRUST}; a re-ingest keeps the source's).")
@click.option("--text", help="Inline text instead of a file (not both); --name names it.")
@click.option("--name", help="Name of a --text or stdin source; ingesting under the same name again updates it.")
@click.option("--as-new", is_flag=True, help="Add a second source even when this file was ingested before (default: update it).")
@common(agent=True)
def ingest(path, cluster, trust, text, name, as_new, agent, db, as_json):
    """Ingest a document as chunks (any UTF-8 text file: md, txt, code...; `-` for stdin).

    Ingesting a file that was ingested before updates that source: unchanged chunks keep
    their reads, changed and removed ones are retired (asof: still finds them), new ones
    are added. Text (--text or stdin) is the same source again when it comes under the
    same --name, else when it is the same text. A file and --text together are refused.
    Ingesting a file again updates it in its cluster: another --cluster is refused
    (--as-new adds a copy there).

    \b
    ledger ingest docs/runbook.md --cluster proc --trust 0.9
    pdftotext spec.pdf - | ledger ingest - --cluster reading
    """
    from .. import ingest as ing

    if not cluster:
        raise InvalidInput("--cluster is required. Run `ledger clusters` to see the taxonomy.")
    if name is not None and not name.strip():
        # "must be 1-255 characters (got 3)" for three spaces named the wrong problem.
        raise InvalidInput(f"--name is {'empty' if not name else 'only spaces'}: give the text a name, e.g. "
                           "--name oncall.txt (ingesting under the same name again updates it), or leave --name out.")
    if name is not None and len(name) > ing.MAX_SOURCE_NAME:
        raise InvalidInput(f"--name must be 1-{ing.MAX_SOURCE_NAME} characters (got {len(name):,}).")
    if text is not None and path is not None:
        # PATH beside --text used to name the source silently, so `ingest c1.md --text x`
        # stored "x" under c1.md's name while c1.md itself went unread.
        shown = "`-` (stdin)" if path == "-" else repr(path)
        raise InvalidInput(f"Give a file (or `-` for stdin) or --text, not both: got {shown} and --text. "
                           f"To ingest the file: ledger ingest {path} --cluster <id>. To name inline text: "
                           'ledger ingest --text "..." --name <name> --cluster <id>. Nothing was ingested.')
    if name is not None and text is None and path != "-":
        raise InvalidInput("--name names text from --text or stdin (`-`); a file is known by its path.")
    if text is not None:
        src = ing.source_from_text(text, name or "text", empty=(  # named apart from piped input
            f"The --text value is {'empty' if not text else 'only whitespace'}: nothing to ingest. "
            'Give the text itself (ledger ingest --text "..." --cluster <id>), or a file or `-` for stdin.'))
    elif path == "-":
        src = ing.read_source_stream(sys.stdin.buffer, name or "stdin")
    elif path:
        src = ing.read_source_file(path)
    else:
        raise InvalidInput("What should I ingest? Try: ledger ingest notes.md --cluster reading  (or `-` for stdin, or --text).")
    if path and path != "-" and text is None:
        where = os.path.realpath(path)
    else:  # text has no file: its identity is its name, else its content
        where = ing.text_identity(src.text, name)
    # An unknown cluster or a bad --trust fails before the store is created (verbs.write);
    # the document was read above, once.
    res, created = verbs.write(db, lambda led: led.ingest(src, cluster=cluster, agent=default_agent(agent), trust=trust,
                                                          path=where, as_new=as_new))
    if created:
        verbs.emit_warning(verbs.new_store_warning(db), as_json)
    if res.redacted:
        verbs.warn_redacted(res.redacted, as_json)
    if as_json:
        _json(res.to_dict())
    elif res.updated:
        from .render import plural

        _out(f"updated {res.source_id}  {plural(res.chunks, 'chunk')}: {res.kept} unchanged (reads kept), "
             f"{res.added} new, {res.retired} retired (asof: still finds them)\n"
             "  `--as-new` adds a separate copy instead.")
    else:
        _out(
            f"ingested {res.source_id}  {res.chunks} chunk{'' if res.chunks == 1 else 's'}\n"
            "  Chunks inherit the document's trust and are never reviewed one by one.\n"
            "  Ingesting is not learning: a fact worth keeping on its own deserves\n"
            '  `ledger remember "<fact>" --cluster <id>` as a claim.'
        )


# ---------------------------------------------------------------------------- people
@cli.command()
@click.argument("query", nargs=-1)
@click.option("--limit", default=25, show_default=True, type=WholeNumber(1, 10000))
@click.option("--mode", type=click.Choice(MODES), default=DEFAULT_MODE, show_default=True)
@click.option("--sort", type=click.Choice(SORTS),
              help="created is newest first, last is last read. Default: the score, or strength with no words.")
@common()
def search(query, limit, mode, sort, db, as_json):
    """Search the store (never counts as a retrieval). With no words, the strongest
    memories first (--sort created: the newest).

    \b
    ledger search deploy cluster:proc
    ledger search asof:2026-01-01 invoice
    ledger search --sort created
    """
    _out(verbs.search(query, limit=limit, mode=mode, sort=sort, db=db, as_json=as_json, color=_color() and not as_json))


@cli.command()
@click.argument("memory_id")
@common()
def show(memory_id, db, as_json):
    """Show one memory with its strength explained (never counts as a retrieval).

    \b
    ledger show m_mx36zvatn5jla2
    ledger show n5jla2          # the short id `search` and `review` print
    """
    _out(verbs.show(memory_id, db=db, as_json=as_json))


@cli.command()
@click.argument("conflict")
@click.argument("outcome", required=False)
@common()
def resolve(conflict, outcome, db, as_json):
    """Resolve a conflict, or judge and resolve a waiting candidate in one step:
    keep a, keep b, both, merge, or dismiss.

    \b
    ledger resolve cf_abc123 b
    ledger resolve cc_abc123 dismiss
    """
    if not conflict.strip():
        raise InvalidInput("Which conflict? Give its id, e.g. ledger resolve cf_abc123 a (`ledger review` lists open "
                           "conflicts (cf_...) and candidates waiting for a verdict (cc_...)).", field="conflict",
                           value=conflict)
    if not outcome:
        raise InvalidInput(f"Which outcome? Try: ledger resolve {conflict} a|b|both|merge|dismiss  (a/b keep one side, both keeps both and links them, merge puts B's text on A, dismiss: not a conflict)")
    how = {"a": "kept A, retired B", "b": "kept B, retired A", "both": "kept both, linked", "merge": "merged B's text into A",
           "dismiss": "dismissed, not a conflict"}
    with lookup_store(db, as_json) as led:
        c = led.resolve(conflict, outcome)
    via = f"{conflict} → " if conflict != c.id else ""  # a candidate becomes a settled conflict
    _json(c.to_dict()) if as_json else _out(f"resolved {via}{c.id} — {how[outcome]}")


@cli.command()
@click.option("--plain", is_flag=True, help="Print the queue instead of opening the interactive review.")
@click.option("--limit", type=WholeNumber(1, 10_000), default=None,
              help="Items shown per lane (claims, conflicts, candidates): default 20 printed, 200 with --json.")
@common()
def review(plain, limit, db, as_json):
    """Review what your agents learned (interactive on a terminal).

    Printed (--plain, or not on a terminal), each lane shows 20 items and says how many
    more there are; --limit shows more.

    \b
    ledger review --plain --limit 500 | less
    """
    if not plain and not as_json and sys.stdin.isatty() and sys.stdout.isatty():
        from ..tui.app import run as run_tui

        verbs.require_store(db)  # the interactive review would create the store

        sys.exit(run_tui(str(db_path(db))))
    from ..tui.plain import MAX_ITEMS, plain_dump, queue_json

    with report_store(db, as_json) as led:
        q = led.review_queue(limit or (200 if as_json else MAX_ITEMS))
        now = led.clock()
    _json(queue_json(q)) if as_json else _out(plain_dump(q, now, limit or MAX_ITEMS))


@cli.group(invoke_without_command=True)
@common()
@click.pass_context
def sources(ctx, db, as_json):
    """Ingested documents (or `sources trust <id> <0-1>`, `sources drop <id>`)."""
    if ctx.invoked_subcommand is not None:
        ctx.obj = {"db": db, "json": as_json}
        return
    from .render import sources_table

    with report_store(db, as_json) as led:
        ss = led.sources()
    _json([s.to_dict() for s in ss]) if as_json else _out(sources_table(ss, _color()))


# A negative value (`sources trust s_x -0.5`) is the value, out of range, not an unknown
# option: click read it as the option "-0" and said "No such option '-0'".
@sources.command("trust", context_settings={"ignore_unknown_options": True})
@click.argument("source_id")
@click.argument("value", type=float)
@common()
@click.pass_context
def sources_trust(ctx, source_id, value, db, as_json):
    """Set a document's trust (0-1); every chunk's strength moves with it."""
    db = db or (ctx.obj or {}).get("db")
    _need_source_id(source_id)
    if not 0 <= value <= 1:  # the value is positional: the core's "trust must be ..." would be read as --trust
        hint = f" Did you mean {value / 100:g} ({value:g}%)?" if 1 < value <= 100 else ""
        raise InvalidInput(f"The trust value must be from 0 to 1, got {value:g}.{hint} "
                           f"e.g. ledger sources trust {source_id} 0.5")
    from ..strength import shown

    with lookup_store(db, as_json) as led:
        t = led.set_trust(source_id, value)
    _json({"sourceId": source_id, "trust": t}) if as_json or (ctx.obj or {}).get("json") else _out(f"trust {source_id} → {shown(t)}")


@sources.command("drop")
@click.argument("source_id")
@common()
@click.pass_context
def sources_drop(ctx, source_id, db, as_json):
    """Drop a document: its chunks go, claims distilled from it return to review."""
    db = db or (ctx.obj or {}).get("db")
    _need_source_id(source_id)
    with lookup_store(db, as_json) as led:
        r = led.drop_source(source_id)
    if as_json or (ctx.obj or {}).get("json"):
        _json(r)
    else:
        from .render import plural

        _out(f"dropped {source_id} · {plural(r['chunks'], 'chunk')} removed, {plural(r['flagged'], 'claim')} flagged for review")


@cli.command()
@common()
def stats(db, as_json):
    """Store size, review queue, conflicts, agents, disk."""
    from .render import stats_text

    with report_store(db, as_json) as led:
        st = led.stats()
    _json(st) if as_json else _out(stats_text(st, _color()))


@cli.command()
@click.argument("query", nargs=-1)
@common()
def export(query, db, as_json):
    """Every matching memory as JSON lines (no cap); with no query, a backup.

    With no query the export holds every memory (dropped ones too) and the store's
    history: earlier texts of edited claims, conflicts and candidate pairs, the log,
    sessions with their prompts, plan, todos and edited files, observations,
    injections, LLM calls and checkpoints. `ledger import` restores all of it. Not
    carried: indexes and summaries (rebuilt), strength (computed), a live session's
    lease and reminder counters, an ingest in progress, agents' labels, clusters no
    memory is in, and settings (`ledger config`). With a query: the matches and the
    conflicts, candidates and earlier texts among them.

    \b
    ledger export > backup.jsonl
    ledger export cluster:code > code.jsonl
    """
    with report_store(db, as_json) as led:
        _warn_unknown_clusters(led, " ".join(query))
        dashed = verbs.options_as_query_warning("export", query, {"--db": db, "--json": as_json})
        if dashed:
            verbs.emit_warning(dashed, _JSON_ERRORS)
        try:
            for line in led.export_lines(" ".join(query)):
                click.echo(json_visible(line), nl=False)  # JSON lines: C1 and bidi controls as \u escapes
        except BrokenPipeError:
            # `ledger export | head`: the reader has what it wanted; not an error.
            sys.stdout = open(os.devnull, "w")


@cli.command("import")
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))
@common()
def import_(file, db, as_json):
    """Restore a `ledger export` file into this store, without duplicates.

    Memories keep their ids, times, reads, readers, flags and links; their sources and
    clusters come along, and from a whole-store export the history too (earlier texts,
    conflicts and candidates, the log, sessions and their record, observations,
    injections, checkpoints). A memory already here (same id, or a live claim with the
    same text in the same cluster) is merged: readers unioned, the larger hit count
    kept. Every field of the whole file is checked by the write paths' rules before
    anything is written; a bad one is named by line and field and nothing is imported.
    A progress bar shows on a terminal.

    \b
    ledger export > all.jsonl                   # on the old machine
    ledger import all.jsonl                     # on the new one
    ledger --db other.db export | ledger import -
    """
    records = _read_export(file)  # the whole file is checked before the store is opened

    def work(led):
        bar = _progress(len(records))
        try:
            return led.import_records(records, progress=bar.advance if bar else None)
        except KeyboardInterrupt:
            # The import is one transaction: an interrupt rolls all of it back. Say so,
            # and that running it again is safe (it merges, never duplicates).
            if bar:
                bar.stop()
                bar = None
            _err(f"Import interrupted: nothing from {file} was saved (the import is one transaction, rolled back). "
                 f"Run the same `ledger import` again to import it; it is safe to repeat.", "aborted")
            raise SystemExit(130) from None
        finally:
            if bar:
                bar.stop()

    # Into a new store, an interrupt or an error leaves no file (verbs.write).
    r, created = verbs.write(db, work)
    if created:
        verbs.emit_warning(verbs.new_store_warning(db), as_json)
    r = {"file": file, "lines": len(records), **r}
    if as_json:
        _json(r)
        return
    from .render import plural

    _out(f"imported {plural(r['imported'], 'memory', 'memories')} from {file}"
         + (f", merged {r['merged']} already here" if r["merged"] else "")
         + f" · {plural(r['sources'], 'new source')} · {plural(r['clusters'], 'new cluster')} · {plural(r['links'], 'link')}"
         + "".join(f" · {plural(r[k], one, many)}" for k, one, many in (
             ("conflicts", "conflict", None), ("candidates", "candidate", None),
             ("formerTexts", "earlier text", None), ("events", "log entry", "log entries"),
             ("sessions", "session", None), ("prompts", "prompt", None), ("observations", "observation", None),
             ("injections", "injection", None), ("checkpoints", "checkpoint", None)) if r.get(k)))


#: The longest line `ledger import` reads (characters): far past any export line (a
#: memory's text is at most 20,000 characters), short of filling the memory.
MAX_IMPORT_LINE_CHARS = 64 * 1024 * 1024

def _read_export(file: str) -> list[tuple[int, dict]]:
    """Parse and check every line first, so a bad file changes nothing."""
    from ..store.transfer import validate
    from ..store.transfer_history import validate_history

    if not file.strip():
        raise InvalidInput(f"The file name is {'empty' if not file else 'only spaces'} ({file!r}): give the "
                           "`ledger export` file to import, or `-` for stdin. Nothing was imported.")
    stream = sys.stdin if file == "-" else None
    try:
        fh = stream or open(file, encoding="utf-8")  # a BOM is dropped from line 1 below
    except OSError as exc:
        raise InvalidInput(f"Cannot read {file}: {exc.strerror or exc}.") from None
    out = []
    try:
        # A line at a time, each bounded: a file with no newline (`ledger import /dev/zero`)
        # was read whole until Python died of a MemoryError.
        for n, line in enumerate(iter(lambda: fh.readline(MAX_IMPORT_LINE_CHARS + 1), ""), 1):
            if len(line) > MAX_IMPORT_LINE_CHARS:
                raise InvalidInput(f"line {n} of {file} is longer than {MAX_IMPORT_LINE_CHARS:,} characters, which no "
                                   "`ledger export` line is; is this an export file? Nothing was imported.")
            if n == 1:
                line = line.removeprefix("\ufeff")  # a byte-order mark some editors write: not part of the JSON
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except ValueError as exc:
                raise InvalidInput(f"line {n} of {file} is not JSON ({exc.msg}); is this a `ledger export` file? "
                                   "Nothing was imported.") from None
            out.append((n, validate_history(rec, n) if isinstance(rec, dict) and "record" in rec else validate(rec, n)))
    except UnicodeDecodeError:
        raise InvalidInput(f"{file} is not UTF-8 text; is this a `ledger export` file? Nothing was imported.") from None
    finally:
        if stream is None:
            fh.close()
    if not out:
        raise InvalidInput(f"{file} holds no memories: nothing to import.")
    return out


class _Bar:
    """A rich progress bar on stderr; ``advance(n)`` after each batch."""

    def __init__(self, total: int):
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

        self.progress = Progress("importing", BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                                 console=Console(stderr=True), transient=True)
        self.task = self.progress.add_task("import", total=total)
        self.progress.start()

    def advance(self, n: int) -> None:
        self.progress.advance(self.task, n)

    def stop(self) -> None:
        self.progress.stop()


#: Imports shorter than this finish before a bar would be worth drawing.
PROGRESS_MIN_RECORDS = 2000


def _progress(total: int) -> "_Bar | None":
    """A progress bar only on a terminal (stderr) and for long runs."""
    if total < PROGRESS_MIN_RECORDS or _JSON_ERRORS or not sys.stderr.isatty():
        return None
    return _Bar(total)


@cli.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=7444, show_default=True, type=WholeNumber(0, 65535), help="0 picks a free port.")
@click.option("--open", "open_browser", is_flag=True, help="Open the UI in a browser.")
@click.option("--allow-remote", is_flag=True, help="Allow binding to a non-loopback address (peers then need the printed token).")
@click.option("--allow-host", "allow_hosts", multiple=True, metavar="NAME",
              help="Also answer to this host name (repeatable), e.g. box.lan; other names get 403 (DNS rebinding).")
@common()
def serve(host, port, open_browser, allow_remote, allow_hosts, db, as_json):
    """The supervision web UI on http://127.0.0.1:7444.

    \b
    ledger serve
    ledger serve --host 0.0.0.0 --allow-remote --allow-host box.lan   # prints a token
    ledger serve --port 0 --json     # one line {"url", "store", ..., "token" if any} once listening
    """
    from ..paths import db_file, home_dir

    if db_file(db) != os.path.join(home_dir(), "ledger.db"):
        # A store named by --db, $LEDGER_DB or the config must exist: a mistyped name
        # would serve (and create) an empty store. The default one is created on first
        # run, as before: the UI's first-run page shows how to connect an agent.
        verbs.require_store(db)
    from ..web.server import serve as run_server
    from .hints import phrase

    rc = run_server(str(db_path(db)), host=host, port=port, open_browser=open_browser, allow_remote=allow_remote, on_error=_err,
                    allow_hosts=tuple(allow_hosts), as_json=as_json, phrase=phrase)
    sys.exit(rc if rc in (0, 130) else 1)


# Setup commands (install, uninstall, replay, checkpoints, hook, config) register themselves on
# `cli` when their module is imported; imported here so `run` knows every command.
from . import config as _config  # noqa: E402,F401
from . import setup as _setup  # noqa: E402,F401


def _err(message: str, kind: str = "error", **extra) -> None:
    """Print an error on stderr: ``✕ <message>``, or with ``--json`` one JSON object
    ``{"error": <message>, "kind": <slug>, **extra}`` so a script can branch on ``kind``
    (``extra``: e.g. the ``path`` of a ``no-store`` error)."""
    try:
        if _JSON_ERRORS:
            click.echo(json_visible(json.dumps({"error": message, "kind": kind, **extra}, ensure_ascii=False)), err=True)
        else:
            click.echo(visible(f"✕ {message}"), err=True)
    except (OSError, ValueError):
        pass


#: Set by :func:`run` when the command line asks for ``--json`` (before ``--``).
_JSON_ERRORS = False


def _asks_json(args: list[str]) -> bool:
    head = args[: args.index("--")] if "--" in args else args
    return "--json" in head


def _unknown_command(name: str, ctx: click.Context | None) -> str:
    """The message for a command name no group has: inside a group (``ledger config
    bogus``) it lists that group's subcommands and points at its own ``--help``."""
    group = ctx.command if ctx is not None and isinstance(ctx.command, click.Group) else None
    if group is None or ctx.parent is None:
        return f'Unknown command "{name}". Run `ledger --help`.'
    subs = [n for n in group.list_commands(ctx) if not getattr(group.get_command(ctx, n), "hidden", False)]
    path = ctx.command_path
    import difflib

    close = difflib.get_close_matches(name, subs, n=1)
    hint = f" Did you mean `{path} {close[0]}`?" if close else ""
    return f'Unknown command "{name}" for `{path}`: it has {", ".join(subs)}.{hint} Run `{path} --help`.'


#: The commands whose words are text that may start with ``-``, and what the words are.
_WORDS_ARE = {"recall": "part of the query", "search": "part of the query", "export": "part of the query",
              "remember": "the fact", "clusters add": "the label"}


def _dash_hint(exc: click.exceptions.NoSuchOption, args: list[str]) -> str:
    """For a word that starts with ``-`` but is no option of a command taking words
    (``ledger recall -v``, ``ledger remember "--force is dangerous" --cluster proc``):
    how to pass it as text, the user's own command line rewritten with its options
    first and ``--`` before the words (click reads everything after ``--`` as words,
    options too), and for ``remember`` with ``--text``. Empty for a near miss of an
    option (click's "Did you mean '--limit'?" says it) and for a command without words."""
    ctx, token = exc.ctx, exc.option_name
    if ctx is None:
        return ""
    if ctx.parent is None and token in ("--db", "--json"):
        return f" {token} goes with a command, before or after it: ledger {token}{' <store>' if token == '--db' else ''} recall deploy."
    if exc.possibilities and not any(c.isspace() for c in token):
        import difflib

        # click offers loose matches ('--force': '--mode', '--sort'); only a close one
        # ('--limt': '--limit') makes the word a mistyped option rather than text.
        if max(difflib.SequenceMatcher(None, token, p).ratio() for p in exc.possibilities) >= 0.8:
            return ""
    path = ctx.command_path.split()[1:]  # ["recall"], ["clusters", "add"]
    what = _WORDS_ARE.get(" ".join(path))
    if what is None or args[: len(path)] != path:
        return ""
    cmd = ctx.command
    takes_value = {}
    for p in cmd.params:
        if isinstance(p, click.Option):
            for o in (*p.opts, *p.secondary_opts):
                takes_value[o] = not (p.is_flag or p.count)
    opts: list[str] = []
    words: list[str] = []
    rest = args[len(path):]
    i = 0
    while i < len(rest):
        a = rest[i]
        i += 1
        if a == "--":
            words += rest[i:]
            break
        name = a.partition("=")[0]
        if a != "-" and a.startswith("-") and name in takes_value:
            opts.append(a)
            if takes_value[name] and "=" not in a and i < len(rest):
                opts.append(rest[i])
                i += 1
        else:
            words.append(a)
    import shlex

    def line(parts: list[str]) -> str:
        return " ".join(["ledger", *path, *(shlex.quote(p) for p in parts)])

    sep = ["--"]
    hint = f' If "{token}" is {what}, put -- before the words (after the options): {line([*opts, *sep, *words])}'
    if "--text" in takes_value and words and not any(o.partition("=")[0] == "--text" for o in opts):
        hint += f", or give it with --text: {line(['--text', ' '.join(words), *opts])}"
    return hint + "."


#: Where the CLI lists the ids a missing argument takes, by the argument's name.
_ID_LISTS = {"memory_id": "`ledger search` lists memory ids.", "source_id": "`ledger sources` lists source ids.",
             "candidate": "`ledger conflicts` lists the candidates waiting (cc_...).",
             "conflict": "`ledger review` lists open conflicts (cf_...).",
             "a": "`ledger search` lists memory ids.", "b": "`ledger search` lists memory ids."}


def _usage_line(ctx: click.Context) -> tuple[str, str | None]:
    """``ledger show MEMORY_ID`` (no ``[OPTIONS]``) and the command's first example from
    its help (None without one)."""
    path = ctx.command_path
    usage = " ".join(p for p in ctx.command.collect_usage_pieces(ctx) if p != "[OPTIONS]")
    example = next((ln.strip() for ln in (ctx.command.help or "").splitlines() if ln.strip().startswith(path + " ")), None)
    if example and "  #" in example:
        example = example.split("  #")[0].strip()
    return f"{path} {usage}".rstrip(), example


def _usage_hint(exc: click.UsageError, msg: str, args: list[str]) -> str:
    """What to do after click's other usage errors: an extra argument (``ledger show a
    b``) gets the usage, the help's example and a word on quoting; an option given
    without its value (``--limit``) gets an example value (its default); ``--db`` or
    ``--json`` with no command after it (``ledger --db x``) says they go with a command."""
    ctx = exc.ctx
    if isinstance(exc, click.BadOptionUsage) and msg.endswith("requires an argument."):
        # click's parser raises this without a context: find the command in the arguments.
        cmd, words = cli, ["ledger"]
        for a in args:
            if not isinstance(cmd, click.Group) or a not in cmd.commands:
                break
            cmd, words = cmd.commands[a], [*words, a]
        param = next((p for p in cmd.params if isinstance(p, click.Option) and exc.option_name in p.opts), None)
        default = getattr(param, "default", None)
        path = " ".join(words)
        if param is not None and isinstance(default, (int, float, str)) and default != "" and not param.is_flag:
            return f"{msg[:-1]}, e.g. {exc.option_name} {default}. Run `{path} --help`."
        return f"{msg} Run `{path} --help`."
    if ctx is None:
        return msg
    path = ctx.command_path
    if msg.startswith("Got unexpected extra argument"):
        usage, example = _usage_line(ctx)
        out = f"{msg}. Usage: {usage}" + (f", e.g. {example}" if example else "")
        return f"{out}. Text with spaces goes in quotes, as one argument. Run `{path} --help`."
    return msg


def _missing(exc: click.MissingParameter) -> str:
    """A missing argument (``ledger show``): click's "Missing argument 'MEMORY_ID'." with
    the command's usage, its first example from the help, where the ids are listed, and
    ``--help``."""
    msg = exc.format_message()
    ctx = exc.ctx
    if ctx is None or not isinstance(exc.param, click.Argument):
        return msg
    path = ctx.command_path
    usage, example = _usage_line(ctx)
    out = f"{msg} Usage: {usage}"
    if example:
        out += f", e.g. {example}"
    out += "."
    ids = _ID_LISTS.get(exc.param.name or "")
    if ids:
        out += f" {ids}"
    return f"{out} Run `{path} --help`."


def _options_of(args: list[str]) -> tuple[list[str], dict[str, bool], tuple[str, ...]] | None:
    """For the command ``args`` name (``judge``, ``sources trust``): its arguments after
    the command's name, its options (whether each takes a value) and those meant to
    repeat (``multiple``), for :func:`ledger.cli.verbs.refuse_repeated`; None when
    ``args`` name no command."""
    cmd, rest = cli, list(args)
    while isinstance(cmd, click.Group):
        if not rest or rest[0] not in cmd.commands:
            return None
        cmd, rest = cmd.commands[rest[0]], rest[1:]
    options: dict[str, bool] = {}
    many: list[str] = []
    for p in cmd.params:
        if isinstance(p, click.Option):
            for o in (*p.opts, *p.secondary_opts):
                options[o] = not (p.is_flag or p.count)
                if p.multiple:
                    many.append(o)
    return rest, options, tuple(many)


def run(args: list[str]) -> int:
    """Run the click app; map errors to ``✕ <message>`` (or, with ``--json``, a JSON
    object on stderr, see :func:`_err`) and exit 1. Exit statuses do not depend on
    ``--json``."""
    global _JSON_ERRORS
    _JSON_ERRORS = _asks_json(args)
    try:
        if args and not any(a in ("-h", "--help") for a in args):  # help still works, to show what to set
            from ..paths import check_environment

            check_environment()
            from .verbs import NOTHING_DONE, refuse_repeated

            single = _options_of(args)
            if single is not None:  # click would keep the last of a repeated option; the fast path's words
                refuse_repeated(*single, nothing=NOTHING_DONE.get(args[0], "Nothing was done."))
        rc = cli.main(args=args, prog_name="ledger", standalone_mode=False)
        # Without standalone mode click returns the code of a `ctx.exit(n)` / `Exit(n)`
        # (e.g. `ledger config list` finding a bad value) instead of exiting.
        return rc if isinstance(rc, int) else 0
    except LedgerError as exc:
        from ..errors import NoStore
        from .hints import phrase

        _err(phrase(exc), exc.kind, **({"path": exc.path} if isinstance(exc, NoStore) else {}))
        return 1
    except click.exceptions.NoSuchOption as exc:
        hint = _dash_hint(exc, args)
        _err(f"{exc.format_message()}{hint} Run `{exc.ctx.command_path if exc.ctx else 'ledger'} --help`.", "usage")
        return 1
    except click.MissingParameter as exc:
        _err(_missing(exc), "usage")
        return 1
    except click.UsageError as exc:
        msg = exc.format_message()
        if "No such command" in msg:
            name = msg.split("'")[1] if "'" in msg else msg
            msg = _unknown_command(name, exc.ctx)
        else:
            msg = _usage_hint(exc, msg, args)
        _err(msg, "usage")
        return 1
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.exceptions.Abort as exc:
        if isinstance(exc.__cause__ or exc.__context__, KeyboardInterrupt):
            # click turns a Ctrl-C anywhere in a command (reading the file to import,
            # opening the store, before a command's own handler) into Abort: the
            # interrupt it was exits 130, as the shell convention and every command's
            # own handler have it, not 1 like a refused prompt.
            return 130
        _err("Aborted.", "aborted")
        return 1
    except click.ClickException as exc:
        _err(exc.format_message(), "usage")
        return 1
    except BrokenPipeError:
        # `ledger export | head`: the reader went away; that is not an error.
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 0
    except KeyboardInterrupt:
        return 130
    except ModuleNotFoundError as exc:
        # A partial install (a dependency removed by hand, a broken venv): one line that
        # names the reinstall command, never a traceback.
        from ..install_hint import missing_module_message

        _err(missing_module_message(exc.name or str(exc), " ".join(a for a in args[:1] if not a.startswith("-")) or "…"),
             "missing-dependency")
        return 1
    except OSError as exc:  # e.g. stdout on a full disk
        _err(f"Cannot write: {exc.strerror or exc}.", "io")
        return 1
    # SQLite's errors never get here: the store translates them into StoreUnavailable.
