"""The review queue as plain text (``ledger review`` when stdin is not a terminal) and as
JSON (``ledger review --json``).

``plain_dump`` follows the seed's dump (docs/originals.md §1.14 ``review``): a header with both
counts, up to 20 claims one per line (``--limit`` changes the 20 of every lane, and a cut
lane ends with how many more there are), then up to 20 conflicts as a kind/age line with the
two sides under it, then up to 20 candidates still waiting for an agent's verdict (a
person may resolve them too, by id). No colour: it is meant for pipes and logs.

Stdlib only; the queue is the dict returned by ``Ledger.review_queue``.
"""

from __future__ import annotations

from ..termfmt import age, bar, pad, truncate

MAX_ITEMS = 20
#: The most items a lane shows with ``--limit`` (the queue is read whole into memory).
MAX_LIMIT = 10_000


#: What a claim is marked with when no hook hands it back (docs/watcher.md "What a
#: finding must be to be handed back").
WITHHELD = "not handed back by hooks: reads as instructions to the agent"


def withheld_ids(claims) -> list[str]:
    """Ids of those of ``claims`` (memories) that no hook hands to an agent, because
    their text reads as instructions to it (:func:`ledger.watcher.admit.instruction_like`)."""
    from ..watcher.admit import instruction_like

    return [m.id for m in claims if instruction_like(m.text, imperatives=False)]


def _counts(queue: dict) -> tuple[int, int]:
    claims = queue.get("claims") or []
    conflicts = queue.get("conflicts") or []
    return int(queue.get("claimCount", len(claims))), int(queue.get("conflictCount", len(conflicts)))


def _more(shown: int, total: int, what: str, limit: int) -> list[str]:
    """The line under a lane cut at ``limit``: how many are not shown and how to see them."""
    if total <= shown:
        return []
    how = (f"ledger review --plain --limit {total} shows them all" if total <= MAX_LIMIT else
           f"ledger review --plain --limit {MAX_LIMIT} shows the first {MAX_LIMIT:,}")
    return ["", f"… {total - shown:,} more {what} not shown: {how}"]


def plain_dump(queue: dict, now_ms: int, limit: int = MAX_ITEMS) -> str:
    """Render ``queue`` as text, ages measured at ``now_ms`` (epoch ms), up to ``limit``
    items a lane, each cut lane followed by how many more there are. Ends with a
    newline."""
    n_claims, n_conflicts = _counts(queue)
    n_candidates = int(queue.get("candidateCount", len(queue.get("candidates") or [])))
    lines = [f"Review queue  {n_claims} claim{'' if n_claims == 1 else 's'} · {n_conflicts} conflict{'' if n_conflicts == 1 else 's'}"]
    claims = list(queue.get("claims") or [])[:limit]
    conflicts = list(queue.get("conflicts") or [])[:limit]
    if claims:
        lines.append("")
        withheld = set(withheld_ids(claims))
        for m in claims:
            lines.append(f"{m.id[-6:]}  {bar(m.strength, 6)}  {pad(m.writer, 7)}  {truncate(m.text, 78)}")
            if m.id in withheld:
                lines.append(f"        ⚠ {WITHHELD} (drop it: ledger forget {m.id})")
        lines += _more(len(claims), n_claims, "claims", limit)
    if conflicts:
        for c in conflicts:
            lines.append("")
            lines.append(f"▲ {c.kind:<22} {age(now_ms - c.created_at):<6} {c.id}")  # the id: for `ledger resolve`
            lines.append(f"  A  {truncate(c.a.text, 76)}")
            lines.append(f"  B  {truncate(c.b.text, 76)}")
        lines += _more(len(conflicts), n_conflicts, "conflicts", limit)
    candidates = list(queue.get("candidates") or [])[:limit]
    if candidates:
        lines.append("")
        lines.append(f"Waiting for an agent's verdict: {n_candidates}  (resolve one yourself: ledger resolve <cc_id> a|b|both|merge|dismiss)")
        for c in candidates:
            lines.append("")
            lines.append(f"? {', '.join(c.signals):<22} {age(now_ms - c.created_at):<6} {c.id}")
            lines.append(f"  A  {truncate(c.a.text, 76)}")
            lines.append(f"  B  {truncate(c.b.text, 76)}")
        lines += _more(len(candidates), n_candidates, "candidates", limit)
    return "\n".join(lines) + "\n"


def queue_json(queue: dict) -> dict:
    """The queue in the stable JSON shape: memories and conflicts as their ``to_dict()``
    plus both lane counts, and ``withheld``: the ids of the claims listed that no hook
    hands back (:func:`withheld_ids`)."""
    n_claims, n_conflicts = _counts(queue)
    return {
        "claims": [m.to_dict() for m in queue.get("claims") or []],
        "conflicts": [c.to_dict() for c in queue.get("conflicts") or []],
        "candidates": [c.to_dict() for c in queue.get("candidates") or []],
        "claimCount": n_claims,
        "conflictCount": n_conflicts,
        "candidateCount": int(queue.get("candidateCount", len(queue.get("candidates") or []))),
        "waiting": int(queue.get("waiting", n_claims + n_conflicts)),
        "withheld": withheld_ids(queue.get("claims") or []),
    }
