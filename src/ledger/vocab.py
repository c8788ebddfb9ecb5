"""The shared vocabulary: every enumerated word, time unit, default and weight that more
than one module (or a SQL string) needs, spelled once.

Surfaces (CLI choices, web API validation, ``/api/meta``) and the store (SQL generated
from these names and weights) import from here; nothing else spells them. Stdlib only,
no imports at all: the hook path loads it for free.
"""

from __future__ import annotations

# ---------------------------------------------------------------- time units (ms)
SECOND_MS = 1_000
MINUTE_MS = 60 * SECOND_MS
HOUR_MS = 60 * MINUTE_MS
DAY_MS = 24 * HOUR_MS

# ---------------------------------------------------------------- memories
#: What a memory is: a claim (one assertion, decays) or a chunk (a slice of a source).
KINDS = ("claim", "chunk")
KIND_FILTERS = ("all",) + KINDS  # ``kind=`` of search and the web API
#: Where a memory came from: a conversation (``remember``) or a document.
ORIGINS = ("chat", "doc")

# ---------------------------------------------------------------- search
#: ``hybrid``: word index (BM25, prefix terms), words no memory holds widened to their
#: vocabulary neighbours; ``keyword``: whole terms, no neighbours; ``fuzzy``: every word
#: widened (docs/search.md).
MODES = ("hybrid", "keyword", "fuzzy")
DEFAULT_MODE = "hybrid"
#: Sort keys, each naming what it orders by: the score, computed strength, hits,
#: creation time, last counted read.
SORTS = ("relevance", "strength", "hits", "created", "last")
DIRECTIONS = ("desc", "asc")

#: Search score = RELEVANCE_WEIGHT * relevance + STRENGTH_WEIGHT * strength, both 0-1
#: (the LEDGER seed's ranking, docs/store.md "Ranking"). The SQL is generated from these.
RELEVANCE_WEIGHT = 0.75
#: Word-index weight of a chunk's neighbour context (docs/design.md, retrieval notes).
CONTEXT_WEIGHT = 0.3
#: A fuzzy-only hit's relevance factor (docs/originals.md §1.6): below an equally good exact one.
FUZZY_WEIGHT = 0.6
# A query word's extra phrases when its prefix phrase misses words that start with it
# (docs/search.md "Prefixes"): at most this many, one per stem.
MAX_PREFIX_EXTRAS = 16
STRENGTH_WEIGHT = 0.25

# ---------------------------------------------------------------- sources
#: Trust (0-1) of an ingested document when none is given (CLI, API, service, schema).
DEFAULT_SOURCE_TRUST = 0.75

# ---------------------------------------------------------------- agents and clusters
#: The person at the keyboard, as an agent id (review, resolve, web edits).
HUMAN = "human"
#: Colours given to new clusters and agents in turn.
PALETTE = ("#b7c14a", "#4a9fd4", "#cf6fb8", "#4fb8a8", "#6fbf73", "#d9a03c", "#6f86e0", "#9a76dd", "#e0793f", "#d6606a")

# ---------------------------------------------------------------- contradiction pipeline
VERDICTS = ("conflict", "unrelated")
CONFLICT_KINDS = ("direct contradiction", "value drift", "stale schedule", "stale terms", "date conflict", "stale fact")
DEFAULT_CONFLICT_KIND = "direct contradiction"
DEFAULT_DETECTOR = 0.8  # an agent's confidence in a ``conflict`` verdict when it gives none
RESOLUTIONS = ("a", "b", "both", "merge", "dismiss")
CONFLICT_STATUSES = ("open", "resolved", "dismissed")

# ---------------------------------------------------------------- review
REVIEW_ACTIONS = ("keep", "pin", "drop", "edit")
BULK_OPS = ("pin", "unpin", "archive", "unarchive", "merge", "drop")

# ---------------------------------------------------------------- lengths (characters)
#: Characters: the longest claim text.
MAX_TEXT_CHARS = 20_000  # a claim is one sentence; anything this long belongs in ingest
#: Characters: the longest note (remember's provenance, a verdict's reason). A note says
#: where a claim came from (a URL, a file and line, a session) or why a pair conflicts, in
#: a line or two; it is shown beside the claim in review and copied into the log on every
#: corroboration, so a pasted document there would be carried around unsearched. 2,000
#: holds a long URL and a paragraph; anything longer is a document for ``ingest``.
MAX_NOTE_CHARS = 2_000
#: Characters: the longest topic key ("file-format:model.ckpt"). A topic is a key compared
#: whole, not prose; 500 leaves room for a long absolute path inside one.
MAX_TOPIC_CHARS = 500
#: Characters: the longest cluster colour (a CSS colour: "#4f8a8b", "teal", "rgb(...)").
MAX_COLOR_CHARS = 64
#: Characters: the longest agent id ("claude-code", "cursor"); longer is a mistake.
MAX_AGENT_ID = 64
#: Characters. A cluster's label is a short topic name ("procedures"); a longer one is
#: a pasted text, and would flood every list and the web UI's legend.
MAX_CLUSTER_LABEL = 80
#: Characters: the longest memory or source id an import takes. Ours are about 16
#: (``ledger.ids``); 200 leaves room for ids another tool wrote, and refuses a pasted text.
MAX_ID_CHARS = 200
#: Characters: the longest machine name an import takes (a host name is at most 253).
MAX_MACHINE_CHARS = 200
#: Characters: the longest file path or file name an import takes (Linux's PATH_MAX).
MAX_PATH_CHARS = 4096
#: Characters: the longest file extension an import takes. ``ingest.extension`` keeps
#: ten at most; older stores may hold longer ones, and their exports import.
MAX_EXT_CHARS = 64
#: Characters: a SHA-256 digest in hex (a file key's ``sha256``).
SHA256_HEX_CHARS = 64
