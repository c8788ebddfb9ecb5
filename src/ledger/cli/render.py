"""Plain-text renderings of the seed's CLI output formats (docs/originals.md §1.14).

Each function returns the text to print; colour is applied only when ``color`` is true
(stdout is a terminal and ``NO_COLOR`` is unset), through click's styling. Stored text
(memories, labels, agent ids, paths) is passed through :func:`ledger.termfmt.visible`
before it is styled, so the writer (:func:`ledger.termfmt.visible_styled`) can tell the
CLI's colour sequences from a memory's (docs/cli.md "Control characters"). Click is
imported only then: the agent verbs print through here without it (docs/benchmarks.md
"Start-up").
"""

from __future__ import annotations

from ..termfmt import age, ago, bar, fit, one_line, pad, text_width, visible

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from ..models import Candidate, Cluster, Memory, SearchResult, Source

LIME, AMBER, RED = (183, 193, 74), (217, 160, 60), (214, 96, 106)


def _style(text: str, **kw) -> str:
    import click

    return click.style(text, **kw)


def _tint(fraction: float) -> tuple[int, int, int]:
    return LIME if fraction > 0.7 else AMBER if fraction > 0.4 else RED


def _dim(text: str, color: bool) -> str:
    return _style(text, dim=True) if color else text


def _bar(fraction: float, width: int, color: bool) -> str:
    b = bar(fraction, width)
    if not color:
        return b
    filled = b.count("█")
    return _style(b[:filled], fg=_tint(fraction)) + _style(b[filled:], dim=True)


from ..text import plural  # noqa: E402,F401 - re-exported: the CLI's modules import it from here


def pct(strength: float) -> int:
    """Strength 0–1 shown as 0–100, rounded half up (:func:`ledger.strength.shown`, what
    ``strength:<N`` compares; Python's ``round()`` would round halves to even)."""
    from ..strength import shown

    return shown(strength)


def recall_lines(res: SearchResult, color: bool) -> str:
    if not res.hits:
        return "nothing remembered about that"
    n = res.total
    lines = [f"{n} {'memory' if n == 1 else 'memories'}"]
    from ..filekeys import change_note, file_changes

    for m in res.hits:
        note = change_note(file_changes(m.files))
        lines.append(visible(f"{m.id}  {pct(m.strength):>3}  {one_line(m.text)}  ") + _dim(visible(f"[{m.cluster_id}]"), color)
                     + visible(f"  ({note})" if note else ""))
    return "\n".join(lines)


def search_table(res: SearchResult, now: int, color: bool) -> str:
    head = f"▍ {res.total} {'memory' if res.total == 1 else 'memories'}  {res.took_ms:.0f}ms"
    lines = [_style(head, bold=True) if color else head]
    for m in res.hits:
        lines.append(
            "  ".join([
                m.id[-6:],
                _bar(m.strength, 6, color),
                f"{pct(m.strength):>3}",
                fit(visible(m.writer), 7),
                fit(visible(m.text), 70),  # terminal columns, not characters: CJK text is two a character
                _dim(fit(visible(m.cluster_label), 16), color),
                age(now - m.last_read_at),
            ])
        )
    return "\n".join(lines)


#: The widest a label is shown in ``ledger clusters``, in terminal columns: a longer one
#: is cut with ``…`` (``--json`` has it whole), so one long label does not push every
#: row's count past the terminal's edge. Ids are never cut: they are what a user types.
CLUSTER_LABEL_COLS = 40


def clusters_table(clusters: list[Cluster], color: bool) -> str:
    """``ledger clusters``: a line per cluster, id, label and memory count. Each column
    is as wide as its widest entry in terminal columns (:func:`text_width`: a CJK or
    fullwidth character takes two), at least 12 and 18 as before, then two spaces: a
    fixed width let a long id or label run into the next column."""
    labels = [one_line(c.label) for c in clusters]  # a tab or newline in a label is one space
    id_w = max([12] + [text_width(visible(c.id)) for c in clusters]) + 2
    label_w = min(CLUSTER_LABEL_COLS, max([18] + [text_width(lb) for lb in labels])) + 2
    return "\n".join(pad(visible(c.id), id_w) + _dim(fit(lb, label_w - 2) + "  ", color) + f"{c.count}"
                     for c, lb in zip(clusters, labels))


def candidates_text(cands: list[Candidate], waiting: int | None = None) -> str:
    """``ledger conflicts``: each pair, how to judge it, and how many more wait
    (``waiting``: every unjudged pair, shown or not)."""
    if not cands:
        return "nothing to judge"
    out = []
    if waiting and waiting > len(cands):
        out += [f"{len(cands)} of {waiting} pairs waiting (best first); `ledger conflicts --limit {min(waiting, 500)}` lists more."]
    for c in cands:
        out += ["", f"{c.id}  {', '.join(c.signals)}", f"  A  {c.a.id}  {one_line(c.a.text)}", f"  B  {c.b.id}  {one_line(c.b.text)}"]
    out += [
        "",
        "For each pair: can both be true at once?",
        '  no  → ledger judge <id> --verdict conflict --kind "<kind>" --detector 0.0-1.0 [--note "..."]',
        "  yes → ledger judge <id> --verdict unrelated   (settles the pair for good)",
        "Kinds: direct contradiction, value drift, stale schedule, stale terms, date conflict, stale fact.",
    ]
    return "\n".join(out)


def sources_table(sources: list[Source], color: bool) -> str:
    """``ledger sources``: a line per source. A name several listed sources share (the
    path as typed at ingest, e.g. ``run.md`` from two folders) is replaced by each one's
    resolved path, so they can be told apart; a name over 40 characters keeps its tail."""
    head = f"▍ Sources  {len(sources)} {'document' if len(sources) == 1 else 'documents'}"
    lines = [_style(head, bold=True) if color else head]
    seen: dict[str, int] = {}
    for s in sources:
        seen[s.filename] = seen.get(s.filename, 0) + 1
    for s in sources:
        # collapse: a --name may hold a line break, which would start a fake row
        name = visible(one_line(s.path if seen[s.filename] > 1 and s.path else s.filename))
        if text_width(name) > 40:  # a path's tail names the file
            while text_width(name) > 39:
                name = name[1:]
            name = "…" + name
        lines.append(
            f"{visible((s.ext or '—').upper()[:5]):<5} {pad(name, 40)} {_bar(s.trust, 6, color)} {pct(s.trust):>3}  "
            f"{plural(s.chunk_count, 'chunk')} · {plural(s.claim_count, 'claim')} · {plural(s.hits, 'read')}  " + _dim(s.id, color)
        )
    return "\n".join(lines)


def _count(n: int, word: str, many: str | None = None) -> str:
    """A right-aligned count column and its noun, singular for 1: ``     1  memory``."""
    return f"{n:>6}  {word if n == 1 else (many or word + 's')}"


def stats_text(st: dict, color: bool) -> str:
    head = visible(f"▍ LEDGER  {st['db']}")
    w, llm = st["watcher"], st["llmToday"]
    return "\n".join([
        _style(head, bold=True) if color else head,
        f"{_count(st['memories'], 'memory', 'memories')}   {plural(st['claims'], 'claim')} · {plural(st['chunks'], 'chunk')}",
        f"{st['reviewQueue']:>6}  waiting in review   {plural(st['reviewClaims'], 'claim')} · "
        f"{plural(st['conflicts'], 'conflict')}",
        f"{_count(st['conflicts'], 'open conflict')}   {plural(st['candidates'], 'candidate')} awaiting an agent",
        _count(st["sources"], "source"),
        f"{_count(st['agents'], 'agent')}     {plural(st['requestsToday'], 'call')} today",
        f"{_count(w['sessions'], 'watched session')}   {plural(w['observations'], 'tool call')} · "
        f"{plural(w['injections'], 'injection')} · {plural(w['checkpoints'], 'checkpoint')}",
        f"{_count(llm['calls'], 'LLM call')} today   {plural(llm['promptTokens'] + llm['completionTokens'], 'token')}"
        + (f" · {llm['failed']} failed" if llm['failed'] else ""),
        f"{st['diskBytes'] / 1e6:>6.1f}  MB on disk",
    ])


def memory_text(m: Memory, now: int, events=(), former=()) -> str:
    """``ledger show``: the memory, its strength explained, its files, and what happened
    to it: ``events`` (:class:`ledger.models.Event`, oldest first) and ``former`` texts
    (``(text, replaced_at ms, agent)``, oldest first), from :meth:`ledger.service.Ledger.history`."""
    f = m.factors
    # A chunk's strength is its source's trust (clamped); the use factors do not apply.
    why = (f"source trust {m.source_trust:.2f}, {m.source_id}" if m.kind == "chunk" and m.source_trust is not None
           else f"used {f.used:.2f} · fresh {f.fresh:.2f} · corroborated {f.corroborated:.2f}")
    # last_read_at starts at created_at (freshness counts from the write), so a memory
    # nobody has read would show "last read just now".
    read = f"last read {ago(now - m.last_read_at)}" if m.hits else "not read yet"
    lines = [
        f"{m.id}  {m.kind} · {m.origin} · [{m.cluster_id}] {one_line(m.cluster_label)}",
        f"  {one_line(m.text)}",
        f"  strength {pct(m.strength)}  ({why})",
        f"  writer {m.writer} · readers {', '.join(m.readers)} · hits {m.hits} · {read}",
    ]
    if m.provenance:
        lines.append(f"  provenance: {one_line(m.provenance)}")
    if m.topic:
        lines.append(f"  topic: {one_line(m.topic)}")
    from ..filekeys import file_changes

    changed = {c["path"]: c["state"] for c in file_changes(m.files)}
    for f in m.files:
        state = changed.get(f.path)
        mark = ("  — changed since this was learned (may be stale)" if state == "changed"
                else "  — gone since this was learned (may be stale)" if state == "gone" else "")
        lines.append(f"  file: {f.path}" + (f"  ({f.size} bytes, sha256 {f.sha256[:12]}…)" if f.sha256 else "") + mark)
    if m.deleted_at:
        lines.append(f"  dropped {ago(now - m.deleted_at)}")
    if events:
        lines.append("  history:")
        for e in events:
            detail = f"  {one_line(e.detail)[:100]}" if e.detail and e.op != "memory.write" else ""
            lines.append(f"    {ago(now - e.at)}  {e.op} by {e.agent}{detail}")
    for text, at, by in former:
        lines.append(f"  earlier text (until {ago(now - at)}, replaced by {by}): {one_line(text)}")
    return "\n".join(lines)
