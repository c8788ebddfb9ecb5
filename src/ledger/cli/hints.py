"""How the CLI phrases a core error: the core's message names no surface (a web edit
must not be told to use ``--cluster``), so the hints that name this CLI's flags and
commands are added here, from the error's structured fields (:mod:`ledger.errors`).
"""

from __future__ import annotations

from ..errors import (
    STORE_LOCATION_REASONS,
    LedgerError,
    NotAClaim,
    StoreUnavailable,
    TextTooLong,
    UnknownCluster,
    id_example,
)

#: Inputs the CLI takes as a flag, by the field name the core reports.
FLAGS = {"cluster": "--cluster", "trust": "--trust", "detector": "--detector", "verdict": "--verdict",
         "kind": "--kind", "limit": "--limit", "supersedes": "--supersedes", "mode": "--mode", "sort": "--sort"}

#: What to run next, by error kind.
NEXT = {
    "unknown-memory": "`ledger search` lists ids.",
    "unknown-source": "`ledger sources` lists them.",
    "unknown-candidate": "`ledger conflicts` lists the ones waiting.",
    "unknown-conflict": "`ledger review` lists open conflicts (cf_...) and candidates waiting for a verdict (cc_...); "
                        "`ledger resolve <id> a|b|both|merge|dismiss` takes either.",
}

#: The CLI's example for a required text left blank, by the field the core names.
BLANK = {"query": "For example: ledger recall deploy steps  or  ledger recall cluster:proc",
         "claim": 'Try: ledger remember "Prefers metric units" --cluster prefs',
         "memories": "Try: ledger forget m_abc123"}

#: Where the CLI's store is chosen, after a store error whose way out is another store
#: (:data:`ledger.errors.STORE_LOCATION_REASONS`; the core names no surface).
STORE_IS_CHOSEN = "--db, $LEDGER_DB or store.db in `ledger config` choose the store (else $LEDGER_HOME/ledger.db)."
#: What to do about a damaged store (reason ``corrupt``), on the command line.
CHECK_STORE = ("If it is your store, `ledger doctor` checks it; restore a backup, or salvage what is left with "
               "sqlite3 <store> .recover | sqlite3 recovered.db and use recovered.db.")

#: Where the CLI lists each kind of id, for a blank one (:func:`ledger.errors.missing_id`).
_LISTS = {"memory": NEXT["unknown-memory"], "source": NEXT["unknown-source"], "candidate": NEXT["unknown-candidate"],
          "conflict": NEXT["unknown-conflict"]}


def phrase(exc: LedgerError) -> str:
    """The line the CLI prints for ``exc`` (without the ``✕``)."""
    msg = exc.message
    if isinstance(exc, UnknownCluster):
        if exc.suggestion:
            return f"{msg} Clusters are named by id. Did you mean --cluster {exc.suggestion}?"
        known = ", ".join(exc.choices)
        return f"{msg} Known clusters: {known}. Create it with `ledger clusters add <label>`, or write to an existing one."
    if isinstance(exc, NotAClaim) and exc.source_id:
        return f"{msg} Use `ledger sources trust {exc.source_id} <0-1>` or `ledger sources drop {exc.source_id}`."
    if isinstance(exc, StoreUnavailable):
        if exc.reason == "read-only":
            if "writable" in msg:  # the core said what to do; add where the CLI picks its store
                return f"{msg} --db (or $LEDGER_DB) picks another store."
            return f"{msg} Check the file and its permissions (--db, $LEDGER_DB)."
        if exc.reason == "error":
            return f"{msg} Please report this as a ledger bug."
        if exc.reason == "corrupt":
            return f"{msg} {CHECK_STORE} {STORE_IS_CHOSEN}"
        if exc.reason in STORE_LOCATION_REASONS:
            return f"{msg} {STORE_IS_CHOSEN}"
        return msg
    if isinstance(exc, TextTooLong):
        return f"{msg} Use `ledger ingest` for documents."
    if exc.kind == "invalid-input" and exc.field in BLANK and not str(exc.value or "").strip():
        return f"{msg} {BLANK[exc.field]}"
    if exc.kind == "invalid-input" and exc.field in _LISTS and not str(exc.value or "").strip():
        if "`ledger " in msg:  # the CLI's own wording already says where
            return msg
        f = exc.field  # a blank id (ledger.errors.missing_id): where the CLI lists them
        return f"Which {f}? The {f} id is empty: give one such as {id_example(f)}. {_LISTS[f]}"
    flag = FLAGS.get(exc.field or "")
    if flag and msg.startswith(exc.field + " "):
        msg = flag + msg[len(exc.field):]
    if exc.kind == "invalid-input" and exc.field == "agent" and "$LEDGER_AGENT" not in msg:
        msg += " The CLI's agent id is --agent, else $LEDGER_AGENT."  # the core names no surface
    if exc.kind == "invalid-input" and exc.field == "outcome":
        msg += " Try: ledger resolve <id> a|b|both|merge|dismiss"
    nxt = NEXT.get(exc.kind)
    if nxt and "`ledger " not in msg:
        msg = f"{msg} {nxt}"
    return msg
