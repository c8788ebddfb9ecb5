"""One rule for every yes/no value ledger reads: environment variables and config.toml
booleans alike, in Python and in the OpenCode plugin (``harness/opencode/ledger.js``
has the same word lists; ``tests/test_flags.py`` runs both).

- true: ``1``, ``true``, ``yes``, ``on``; false: ``0``, ``false``, ``no``, ``off``.
  Case and surrounding spaces do not matter.
- An unset or empty variable is not set: the default applies.
- Anything else (``maybe``, ``2``, ``disabled``) is not a boolean. It is never guessed
  at: the default applies, and the value is reported (``ledger doctor``, ``ledger
  config``, one ``hook.log`` line) naming the variable and what it holds.

Why a rule at all: ``LEDGER_HOOKS_DISABLED=0`` used to turn every hook off (any
non-empty value did), while the README promised ``1/0``.

Not covered: ``NO_COLOR``, whose own convention (no-color.org) is that any non-empty
value turns colour off.

Stdlib only (L0; the hook path reads :data:`ENV_FLAGS` on every call).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from typing import Mapping

TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("0", "false", "no", "off")
#: How the accepted words are named in messages.
EXPECTED = "1/true/yes/on or 0/false/no/off"

#: The yes/no environment variables that are not config.toml settings (those are in
#: :data:`ledger.watcher.config.SETTINGS`, read by the same rule): name -> (default,
#: what true means, for messages).
ENV_FLAGS: dict[str, tuple[bool, str]] = {
    "LEDGER_HOOKS_DISABLED": (False, "every hook is a no-op"),
    "LEDGER_OPENCODE_DEBUG": (False, "the OpenCode plugin also prints its log lines on stderr"),
}


def parse_flag(value: object) -> bool | None:
    """``value`` as a boolean by the rule above: ``True``/``False`` for the accepted
    words (and for a real ``bool``), ``None`` for anything else, the empty string
    included (the caller decides whether empty means "not set")."""
    if isinstance(value, bool):
        return value
    if not isinstance(value, str):
        return None
    word = value.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    return None


def env_flag(name: str, default: bool | None = None, environ: Mapping[str, str] | None = None) -> bool:
    """The yes/no environment variable ``name``: its value by :func:`parse_flag`, or
    ``default`` (:data:`ENV_FLAGS`' default when None) when it is unset, empty or not a
    boolean. Never raises; :func:`env_flag_problems` reports the bad value."""
    if default is None:
        default = ENV_FLAGS.get(name, (False, ""))[0]
    env = os.environ if environ is None else environ
    raw = env.get(name)
    if raw is None or not raw.strip():
        return default
    value = parse_flag(raw)
    return default if value is None else value


def bad_flag_message(raw: str, default: bool) -> str:
    """Says that ``raw`` is not a boolean and which value is used instead (the caller
    names the variable: ``$NAME: <this>``)."""
    return f"{raw!r} is not a boolean ({EXPECTED}); using the default, {'true' if default else 'false'}"


def env_flag_problems(environ: Mapping[str, str] | None = None) -> list[tuple[str, str, str]]:
    """``(name, value, message)`` for each :data:`ENV_FLAGS` variable set to something
    that is not a boolean (empty counts as unset); ``message`` as
    :func:`bad_flag_message`."""
    env = os.environ if environ is None else environ
    out = []
    for name, (default, _what) in ENV_FLAGS.items():
        raw = env.get(name)
        if raw is not None and raw.strip() and parse_flag(raw) is None:
            out.append((name, raw, bad_flag_message(raw, default)))
    return out
