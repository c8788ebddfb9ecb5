"""``ledger review``: the keyboard-first review app (Textual).

Two lanes, like the seed's review TUI (docs/originals.md §1.15): pending **claims** (not part of an
open conflict) and open **conflicts**, followed in that lane by **candidates** still
waiting for an agent's verdict (ours: a person may judge and resolve one with the same
keys, in one step). One card at a time; every key acts at once through
the ``Ledger`` facade as agent ``human``.

Why it refreshes: the store is shared. Agents, hooks and the web UI are other processes
writing the same file while this app is open, so the queue is reloaded every
``REFRESH_SECONDS`` and after every action. A reload keeps the cursor on the selected item
when it still exists (matched by id), else on the same index clamped to the lane, so a new
claim arriving at the top never moves what the person is reading.

Why errors are values here: an item can vanish between reload and keypress (another
process dropped or resolved it). The facade then raises a ``LedgerError``; the app shows
its message as a notification and reloads. Keep/pin/edit on a claim dropped elsewhere are
refused here too (the facade would quietly mark the dropped row reviewed).

Why every stored string goes through ``termfmt.visible``: a memory's text is the agent's
data, escape sequences and control characters included. The cards are Rich ``Text``
built with ``append`` (never markup, so ``[bold]x[/bold]`` or ``[link=...]`` in a text is
shown as typed), and Rich drops CR, VT, FF, BEL and backspace from such text while ESC
would reach the terminal: ``visible`` shows each as the CLI does (``␍``, ``␛``, ``�``).
Newlines and tabs stay: a card shows a text on as many lines as it has.

Why the edit box saves characters it does not show: it is one line and must not let the
terminal act on what it holds either, so it shows the same stand-ins (and ``␊``/``␉`` for
a newline and a tab), while :class:`EditBox` keeps the stored text beside them, changed
by every edit exactly as the box is. A Hebrew claim with RLM marks is edited here and
keeps the marks the person did not delete (docs/cli.md "Control characters").

Textual is imported by this module only; ``ledger.tui`` and the CLI import it lazily.
"""

from __future__ import annotations

import sys
from typing import Callable

from rich.table import Table
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.css.query import NoMatches
from textual.widgets import Input, Static

from ..errors import LedgerError, UnknownMemory
from ..models import Candidate, Conflict, Memory
from ..service import Ledger
from ..termfmt import AMBER, LIME, RED, age, bar, pct, strength_color, visible

REFRESH_SECONDS = 2.0
QUEUE_LIMIT = 200

CLAIMS = "claims"
CONFLICTS = "conflicts"

# Calm dark palette (shared hues with the CLI: lime, amber, red).
BG = "#111316"
PANEL = "#171a1e"
LINE = "#2a2f36"
FG = "#d8d4cb"
DIM = "#7a7f87"

CLAIM_KEYS = (("a", "keep"), ("e", "edit"), ("d", "drop"), ("p", "pin"))
CONFLICT_KEYS = (("1", "keep A"), ("2", "keep B"), ("b", "both"), ("m", "merge"), ("n", "not a conflict"))
NAV_KEYS = (("j/k", "move"), ("tab", "lane"), ("q", "quit"))
EDIT_KEYS = (("enter", "save"), ("esc", "cancel"))

CLAIM_ACTIONS = {"keep": "kept", "pin": "pinned", "drop": "dropped", "edit": "edited"}
OUTCOMES = {"a": "kept A", "b": "kept B", "both": "kept both", "merge": "merged B into A", "dismiss": "not a conflict"}


def _keys_line(*groups: tuple[tuple[str, str], ...]) -> Text:
    t = Text()
    for gi, group in enumerate(groups):
        if gi:
            t.append("   ")
        for i, (key, label) in enumerate(group):
            if i:
                t.append("  ")
            t.append(key, style=f"bold {LIME}")
            t.append(f" {label}", style=DIM)
    return t


def _strength(fraction: float, width: int) -> Text:
    t = Text()
    color = strength_color(fraction)
    cells = bar(fraction, width)
    filled = cells.rstrip("░")
    t.append(filled, style=color)
    t.append(cells[len(filled):], style=LINE)
    t.append(f" {pct(fraction):>3}", style=f"bold {color}")
    return t


def claim_card(m: Memory, now: int) -> Text:
    """Writer, age, cluster label, 8-cell strength bar and number, the text in bold,
    then provenance and id."""
    t = Text()
    t.append(visible(m.writer), style=f"bold {FG}")
    t.append("  ·  ", style=DIM)
    t.append(age(now - m.created_at), style=FG)
    t.append("  ·  ", style=DIM)
    t.append(visible(m.cluster_label), style=m.cluster_color or FG)
    t.append("\n")
    t.append_text(_strength(m.strength, 8))
    t.append("\n\n")
    t.append(visible(m.text), style=f"bold {FG}")
    t.append("\n\n")
    t.append(visible(m.provenance or "no provenance"), style=f"italic {DIM}")
    t.append("\n")
    t.append(m.id, style=DIM)
    return t


def _side(label: str, m: Memory, now: int) -> tuple[Text, Text]:
    head = Text()
    head.append(visible(m.writer), style=f"bold {FG}")
    head.append("  ·  ", style=DIM)
    head.append(age(now - m.created_at), style=FG)
    head.append("  ·  ", style=DIM)
    head.append_text(_strength(m.strength, 6))
    head.append("\n")
    head.append(visible(m.text), style=f"bold {FG}")
    return Text(label, style=f"bold {AMBER}"), head


def _sides(a: Memory, b: Memory, now: int) -> Table:
    """Sides A and B in a two-column grid, so a long text wraps under itself, not under "A"."""
    sides = Table.grid(padding=(0, 2, 0, 0), expand=True)
    sides.add_column(width=1, no_wrap=True)
    sides.add_column(ratio=1)
    sides.add_row(*_side("A", a, now))
    sides.add_row("", "")
    sides.add_row(*_side("B", b, now))
    return sides


def candidate_card(c: Candidate, now: int) -> Table:
    """``? candidate``, the signals and score 0–100, sides A and B, then what a key does
    here: no agent has judged the pair yet, so a key judges and resolves it at once."""
    top = Text()
    top.append("? candidate", style=f"bold {AMBER}")
    top.append("  ·  ", style=DIM)
    top.append(visible(", ".join(c.signals)), style=FG)
    top.append("  ·  ", style=DIM)
    top.append("score ", style=DIM)
    top.append(str(pct(c.score)), style=f"bold {FG}")
    sides = _sides(c.a, c.b, now)
    note = Text()
    note.append("waiting for an agent's verdict — your key judges and resolves it now", style=f"italic {DIM}")
    card = Table.grid(expand=True)
    card.add_column(ratio=1)
    for row in (top, "", sides, "", note):
        card.add_row(row)
    return card


def conflict_card(c: Conflict, now: int) -> Table:
    """``▲ kind``, cluster, detector 0–100, sides A and B (writer, age, 6-cell bar,
    strength, text), then the note."""
    same = c.a.cluster_id == c.cluster_id
    top = Text()
    top.append(visible(f"▲ {c.kind}"), style=f"bold {AMBER}")
    top.append("  ·  ", style=DIM)
    top.append(visible(c.a.cluster_label if same else c.cluster_id), style=(c.a.cluster_color if same else None) or FG)
    top.append("  ·  ", style=DIM)
    top.append("detector ", style=DIM)
    top.append(str(pct(c.detector)), style=f"bold {FG}")
    sides = _sides(c.a, c.b, now)
    note = Text()
    note.append("note  ", style=DIM)
    note.append(visible(c.note or "none"), style=f"italic {DIM}")
    card = Table.grid(expand=True)
    card.add_column(ratio=1)
    card.add_row(top)
    card.add_row("")
    card.add_row(sides)
    card.add_row("")
    card.add_row(note)
    return card


# The edit box's stand-ins: what :func:`ledger.termfmt.visible` replaces, and also the
# newline and the tab, which a one-line box would draw as a break or as spaces. One
# character for one, so a position in the box is the same position in the stored text.
_BOX = {0x0A: 0x240A, 0x09: 0x2409}


def box_shown(text: str) -> str:
    """``text`` as the edit box shows it: :func:`~ledger.termfmt.visible` (``␍``, ``␛``,
    ``�`` for a bidi control), and ``␊``/``␉`` for a newline and a tab. Same length."""
    return visible(text).translate(_BOX)


class EditBox(Input):
    """The one-line edit box, keeping the characters it shows by a stand-in.

    The box holds :func:`box_shown` of the text, so a bidi mark, a CR or an ESC is seen,
    never acted on (the card's rule), and :attr:`stored` beside it, the text itself,
    character for character. Every change Textual's Input makes by key, paste or cut
    goes through :meth:`replace`, which makes the same change to :attr:`stored` with
    the new text as it was typed or pasted: a character the person did not touch keeps
    what was stored (an RLM stays an RLM, a CR a CR, a newline a newline), one they
    deleted is gone, one they typed is what they typed (a pasted RLM is stored as one and
    shown as ``�``). ZWJ and ZWNJ are not stand-ins (``visible`` leaves them: they are
    part of how emoji and Persian are written), so they are in the box as they are."""

    stored: str = ""
    _refused = False

    def load(self, text: str) -> None:
        """Put ``text`` in the box, cursor at its end."""
        self.stored = text
        self.value = box_shown(text)
        self.cursor_position = len(text)

    def replace(self, text: str, start: int, end: int) -> None:
        """Textual's replace (every edit's path), mirrored onto :attr:`stored`."""
        stored = self.stored
        start, end = sorted((max(0, start), min(len(self.value), end)))
        self._refused = False
        super().replace(box_shown(text), start, end)
        if not self._refused:  # a change that leaves the box as it was (`�` typed over a mark) still counts
            self.stored = stored[:start] + text + stored[end:]

    def restricted(self) -> None:
        """Input refused the change (its length or character limits; none are set here)."""
        self._refused = True
        super().restricted()

    def text(self) -> str:
        """The text to save (:func:`box_text`)."""
        return box_text(self.stored, self.value)


def box_text(stored: str, value: str) -> str:
    """The text an edit box holding ``value`` saves, ``stored`` being the text it mirrors:
    ``stored`` itself while the box shows it (every edit went through
    :meth:`EditBox.replace`); else (the value was set directly) the box's characters,
    each one that lines up with an unchanged stand-in taken back from ``stored``."""
    shown = box_shown(stored)
    if shown == value:
        return stored
    from difflib import SequenceMatcher

    out = []
    for op, i1, i2, j1, j2 in SequenceMatcher(None, shown, value, autojunk=False).get_opcodes():
        out.append(stored[i1:i2] if op == "equal" else value[j1:j2])
    return "".join(out)


class ReviewApp(App[int]):
    """The review app over an open :class:`Ledger` (the caller owns and closes it)."""

    TITLE = "ledger review"
    # Nothing has focus until an edit opens: every key reaches the app's bindings.
    AUTO_FOCUS = None

    CSS = f"""
    Screen {{
        background: {BG};
        color: {FG};
    }}
    #title {{
        height: 1;
        padding: 0 2;
        color: {DIM};
    }}
    #lanebar {{
        height: 1;
        padding: 0 2;
        margin-bottom: 1;
    }}
    #lanes {{
        width: 1fr;
    }}
    #pos {{
        width: auto;
        color: {DIM};
    }}
    #body {{
        height: 1fr;
        padding: 0 2;
    }}
    #card {{
        background: {PANEL};
        border: round {LINE};
        border-title-color: {DIM};
        padding: 1 2;
        height: auto;
    }}
    #card.conflicts {{
        border: round {AMBER} 60%;
    }}
    #clear {{
        height: 1fr;
        content-align: center middle;
        text-align: center;
        display: none;
    }}
    #edit {{
        margin: 1 0 0 0;
        display: none;
        background: {PANEL};
        border: tall {LIME};
        color: {FG};
    }}
    #status {{
        height: 1;
        padding: 0 2;
        color: {DIM};
    }}
    #keys {{
        height: auto;
        padding: 0 2;
        background: {PANEL};
    }}
    """

    BINDINGS = [
        Binding("q", "quit_review", "quit"),
        Binding("ctrl+c", "quit_review", "quit", show=False, priority=True),
        Binding("tab", "switch_lane", "switch lane", priority=True),
        Binding("escape", "cancel_edit", "cancel", show=False, priority=True),
        Binding("j,down", "move(1)", "next", show=False),
        Binding("k,up", "move(-1)", "previous", show=False),
        Binding("a", "claim('keep')", "keep"),
        Binding("e", "edit", "edit"),
        Binding("d", "claim('drop')", "drop"),
        Binding("p", "claim('pin')", "pin"),
        Binding("1", "resolve('a')", "keep A"),
        Binding("2", "resolve('b')", "keep B"),
        Binding("b", "resolve('both')", "both"),
        Binding("m", "resolve('merge')", "merge"),
        Binding("n", "resolve('dismiss')", "not a conflict"),
    ]

    def __init__(self, ledger: Ledger, *, refresh_seconds: float = REFRESH_SECONDS):
        super().__init__()
        self.ledger = ledger
        self.refresh_seconds = refresh_seconds
        self.lane = CLAIMS
        self.index = 0
        self.claims: list[Memory] = []
        self.conflicts: list[Conflict] = []
        self.claim_count = 0
        self.conflict_count = 0
        self.store_size = 0
        self.editing: str | None = None  # id of the claim being edited
        self.errors: list[str] = []  # every error shown, newest last (tests read it)
        self.last_status = ""

    # ------------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        yield Static(id="title")
        with Horizontal(id="lanebar"):
            yield Static(id="lanes")
            yield Static(id="pos")
        with VerticalScroll(id="body", can_focus=False):
            yield Static(id="card")
            yield EditBox(id="edit", placeholder="new text", disabled=True, select_on_focus=False)
        yield Static(id="clear")
        yield Static(id="status")
        yield Static(id="keys")

    def on_mount(self) -> None:
        title = Text()
        title.append("▍", style=LIME)
        title.append("LEDGER", style=f"bold {FG}")
        title.append("   What your agents learned", style=DIM)
        self.query_one("#title", Static).update(title)
        self.reload()
        if self.refresh_seconds and self.refresh_seconds > 0:
            self.set_interval(self.refresh_seconds, self._poll)

    def _poll(self) -> None:
        """The periodic reload. A tick can fire while the app is closing and its widgets
        are already gone (seen under load: "No nodes match '#lanes'"); then there is
        nothing to show, so the tick is dropped."""
        try:
            self.reload()
        except NoMatches:
            pass

    # ------------------------------------------------------------------ state
    def items(self, lane: str | None = None) -> list:
        return self.claims if (lane or self.lane) == CLAIMS else self.conflicts

    def current(self) -> Memory | Conflict | None:
        items = self.items()
        if not items:
            return None
        return items[min(self.index, len(items) - 1)]

    def current_id(self) -> str | None:
        item = self.current()
        return item.id if item is not None else None

    def reload(self) -> None:
        """Reload both lanes from the store, keeping the cursor (same id, else same
        index clamped). Skipped while an edit is open: the edited claim is held by id."""
        if self.editing is not None:
            return
        keep_id, keep_index = self.current_id(), self.index
        try:
            queue = self.ledger.review_queue(QUEUE_LIMIT)
            self.claims = list(queue["claims"])
            self.conflicts = list(queue["conflicts"]) + list(queue.get("candidates") or [])
            self.claim_count = int(queue["claimCount"])
            self.conflict_count = int(queue["conflictCount"]) + int(queue.get("candidateCount") or 0)
            if not self.claims and not self.conflicts:
                self.store_size = int(self.ledger.stats()["memories"])
        except LedgerError as exc:
            self.show_error(exc.message)
            return
        ids = [item.id for item in self.items()]
        if keep_id is not None and keep_id in ids:
            self.index = ids.index(keep_id)
        else:
            self.index = max(0, min(keep_index, len(ids) - 1))
        if not ids:
            other = CONFLICTS if self.lane == CLAIMS else CLAIMS
            if self.items(other):
                # Trigger: the lane on screen ran empty. Outcome: show the other one.
                self.lane, self.index = other, 0
        self.render_view()

    # ------------------------------------------------------------------ rendering
    def render_view(self) -> None:
        now = self.ledger.clock()
        lanes = Text()
        for lane, label, count in ((CLAIMS, "CLAIMS", self.claim_count), (CONFLICTS, "CONFLICTS", self.conflict_count)):
            if lane == CONFLICTS:
                lanes.append("  ")
            if lane == self.lane:
                lanes.append(f" {label} {count} ", style=f"bold {BG} on {LIME}")
            else:
                lanes.append(f" {label} {count} ", style=DIM)
        self.query_one("#lanes", Static).update(lanes)
        items = self.items()
        pos = f"{self.index + 1} of {len(items)}   tab switches lane" if items else ""
        self.query_one("#pos", Static).update(pos)

        card = self.query_one("#card", Static)
        body = self.query_one("#body")
        clear = self.query_one("#clear", Static)
        item = self.current()
        if item is None:
            body.display = False
            clear.display = True
            msg = Text()
            msg.append("QUEUE CLEAR", style=f"bold {LIME}")
            msg.append("\n\n")
            msg.append(f"Your agents are writing straight through. {self.store_size} {'memory' if self.store_size == 1 else 'memories'} on this machine.", style=DIM)
            clear.update(msg)
        else:
            clear.display = False
            body.display = True
            if isinstance(item, Conflict):
                card.update(conflict_card(item, now))
                card.border_title = "conflict"
                card.set_class(True, "conflicts")
            elif isinstance(item, Candidate):
                card.update(candidate_card(item, now))
                card.border_title = "candidate"
                card.set_class(True, "conflicts")
            else:
                card.update(claim_card(item, now))
                card.border_title = "claim"
                card.set_class(False, "conflicts")
        if self.editing is not None:
            keys = _keys_line(EDIT_KEYS)
        elif item is None:
            keys = _keys_line((("q", "quit"),))
        elif self.lane == CLAIMS:
            keys = _keys_line(CLAIM_KEYS, NAV_KEYS)
        else:
            keys = _keys_line(CONFLICT_KEYS, NAV_KEYS)
        self.query_one("#keys", Static).update(keys)

    def set_status(self, message: str, *, error: bool = False) -> None:
        self.last_status = message
        self.query_one("#status", Static).update(Text(visible(message), style=RED if error else DIM))

    def show_error(self, message: str) -> None:
        self.errors.append(message)
        self.set_status(message, error=True)
        self.notify(visible(message), title="not done", severity="error", markup=False, timeout=6)

    # ------------------------------------------------------------------ actions
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # While editing, only Esc (cancel) and Ctrl-C act; every other key goes to the
        # input. Lane-specific keys do nothing in the other lane.
        if self.editing is not None:
            return action in ("cancel_edit", "quit_review")
        if action == "cancel_edit":
            return False
        if action in ("claim", "edit"):
            return self.lane == CLAIMS
        if action == "resolve":
            return self.lane == CONFLICTS
        return True

    def action_quit_review(self) -> None:
        self.exit(0)

    def action_move(self, step: int) -> None:
        items = self.items()
        if items:
            self.index = max(0, min(len(items) - 1, self.index + step))
            self.render_view()

    def action_switch_lane(self) -> None:
        other = CONFLICTS if self.lane == CLAIMS else CLAIMS
        if not self.items(other):
            self.set_status(f"no {other} waiting")
            return
        self.lane, self.index = other, 0
        self.set_status("")
        self.render_view()

    def _act(self, fn: Callable[[], str]) -> None:
        """Run one store action; show its outcome or its error, then reload."""
        try:
            self.set_status(fn())
        except LedgerError as exc:
            self.show_error(exc.message)
        self.reload()

    def _live_claim(self, memory_id: str) -> Memory:
        m = self.ledger.get(memory_id)
        if m.deleted_at is not None:
            raise UnknownMemory(f"{memory_id} was dropped by another process; the queue is refreshed.")
        return m

    def action_claim(self, action: str) -> None:
        m = self.current()
        if not isinstance(m, Memory):
            return

        def run() -> str:
            if action != "drop":
                self._live_claim(m.id)
            self.ledger.review(m.id, action, by="human")
            return f"{CLAIM_ACTIONS[action]} {m.id}"

        self._act(run)

    def action_resolve(self, outcome: str) -> None:
        c = self.current()
        if not isinstance(c, (Conflict, Candidate)):
            return

        def run() -> str:
            done = self.ledger.resolve(c.id, outcome, by="human")  # a candidate: judged and resolved
            return f"{OUTCOMES[outcome]} · {c.id}" + (f" → {done.id}" if done.id != c.id else "")

        self._act(run)

    def action_edit(self) -> None:
        m = self.current()
        if not isinstance(m, Memory):
            return
        self.editing = m.id
        box = self.query_one("#edit", EditBox)
        box.load(m.text)
        box.disabled = False
        box.display = True
        box.focus()
        hidden = box.value != m.text
        self.set_status(f"editing {m.id}" + (" · ␍ ␊ ␉ ␛ � stand for characters kept as stored unless you delete them"
                                             if hidden else ""))
        self.render_view()

    def _close_edit(self) -> str | None:
        mid, self.editing = self.editing, None
        box = self.query_one("#edit", EditBox)
        box.stored = ""
        box.display = False
        box.disabled = True
        box.value = ""
        self.set_focus(None)
        return mid

    def action_cancel_edit(self) -> None:
        if self.editing is None:
            return
        self._close_edit()
        self.set_status("edit cancelled")
        self.reload()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if self.editing is None:
            return
        text = self.query_one("#edit", EditBox).text()  # the stored characters, not their stand-ins
        mid = self._close_edit()
        if mid is None:
            return
        if not text.strip():
            # The seed's prompt treats an empty line as "cancel"; so do we.
            self.set_status("empty text: edit cancelled")
            self.reload()
            return

        def run() -> str:
            self._live_claim(mid)
            self.ledger.review(mid, "edit", text=text, by="human")
            return f"edited {mid}"

        self._act(run)


def run(db_path: str) -> int:
    """Open the store at ``db_path``, run the review app, close the store. Returns the
    exit code (0, or 1 when the store cannot be opened)."""
    try:
        ledger = Ledger.open(db_path)
    except LedgerError as exc:
        print(f"✕ {exc.message}", file=sys.stderr)
        return 1
    try:
        app = ReviewApp(ledger)
        result = app.run()
        return int(result or app.return_code or 0)
    finally:
        ledger.close()
