"""What the Session State block says at each compaction of real transcripts, and what the
checkpoints carry, when the agent kept no ``.agents/`` file (issue 13).

Usage::

    python bench/session_state.py ../shared/data/transcripts/*.jsonl [--json] [--show]

Each transcript is replayed through the hooks (``ledger replay``: tool calls, the user's
prompts, a made-up Stop at each turn's end; fallback distiller, no LLM). At every
compaction boundary the PreCompact block is measured: characters, the sections present,
whether it names the task in the user's words (the first prompt, quoted), whether it has
the plan or todo list the transcript made before that point (ExitPlanMode, TodoWrite,
TaskCreate/TaskUpdate), and how many of the files edited so far it lists. ``--show``
prints each block.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import import_ledger, machine, table  # noqa: E402

import_ledger()

PLAN_TOOLS = {"ExitPlanMode"}
TODO_TOOLS = {"TodoWrite", "TaskCreate", "TaskUpdate"}
EDIT_TOOLS = {"Edit", "Write", "MultiEdit", "NotebookEdit"}


def truth(path: str) -> list[dict]:
    """Per compaction, what the transcript had done before it: the first prompt, whether
    a plan / todo list was made, and the files edited (by successful edit tools)."""
    from ledger.harness.replay import iter_transcript

    first, plan, todo, edited, out = None, False, False, {}, []
    for kind, item in iter_transcript(path):
        if kind == "prompt" and first is None:
            first = item["text"]
        elif kind == "tool":
            name = item["name"]
            plan |= name in PLAN_TOOLS
            todo |= name in TODO_TOOLS
            inp = item["input"] if isinstance(item["input"], dict) else {}
            if name in EDIT_TOOLS and not item["is_error"] and isinstance(inp.get("file_path"), str):
                edited.setdefault(inp["file_path"], None)
        elif kind == "compact":
            out.append({"first": first, "plan": plan, "todo": todo, "edited": list(edited)})
    return out


def measure(path: str) -> dict:
    from ledger.harness.replay import replay

    r = replay(path)
    facts = truth(path)
    rows = []
    for c, t in zip(r["compactions"], facts):
        block = c["preCompact"]
        first = (t["first"] or "").strip().splitlines()[0] if t["first"] else ""
        shown = [l[2:] for l in block.splitlines() if l.startswith("- ")]
        listed = sum(1 for p in t["edited"] if any(p == x or p.endswith("/" + x) for x in shown))
        rows.append({
            "line": c["line"], "chars": c["chars"], "sections": c["sections"],
            "taskNamed": bool(first) and ("> " + first[:80]) in block,
            "planOrTodos": {"made": t["plan"] or t["todo"],
                            "shown": "Plan" in c["sections"] or "Todo List" in c["sections"]},
            "filesEdited": len(t["edited"]), "filesListed": listed,
            "sessionStartChars": len(json.loads(c["sessionStart"])["hookSpecificOutput"]["additionalContext"])
            if c["sessionStart"] else 0,
            "block": block,
        })
    return {"transcript": Path(path).name, "prompts": r["prompts"], "stops": r["stops"],
            "checkpoints": [{"event": k["event"], "chars": k["chars"], "sections": k["sections"]} for k in r["checkpoints"]],
            "compactions": rows}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("transcripts", nargs="+")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--show", action="store_true", help="print each compaction's block")
    a = ap.parse_args()
    results = [measure(t) for t in a.transcripts]
    if a.json:
        print(json.dumps({"machine": machine(), "results": results}, indent=2))
        return 0
    rows = []
    for r in results:
        for c in r["compactions"]:
            rows.append([r["transcript"][:8], c["line"], c["chars"], c["sessionStartChars"], ", ".join(c["sections"]),
                         "yes" if c["taskNamed"] else "no",
                         ("yes" if c["planOrTodos"]["shown"] else "no") if c["planOrTodos"]["made"] else "none made",
                         f"{c['filesListed']}/{c['filesEdited']}"])
    print(table(["transcript", "line", "PreCompact chars", "SessionStart chars", "sections", "task in user's words",
                 "plan/todos", "files listed/edited"], rows, markdown=True))
    print()
    crow = [[r["transcript"][:8], r["prompts"], r["stops"], len(r["checkpoints"]),
             max((k["chars"] for k in r["checkpoints"]), default=0),
             ", ".join(r["checkpoints"][-1]["sections"]) if r["checkpoints"] else "—"] for r in results]
    print(table(["transcript", "prompts", "turn ends", "checkpoints", "largest chars", "last checkpoint's sections"], crow,
                markdown=True))
    if a.show:
        for r in results:
            for c in r["compactions"]:
                print(f"\n--- {r['transcript']} compaction at line {c['line']}\n{c['block']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
