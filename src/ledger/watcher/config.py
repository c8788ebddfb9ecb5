"""Settings: one typed table, read from ``$LEDGER_HOME/config.toml`` and environment
variables, validated on load.

Every setting is one :class:`Setting` row in :data:`SETTINGS`: its key
(``section.name``, the TOML table and key), type, default, help and environment
variable. Values come from the default, then the file, then the variable (the last one
set wins). Each value is checked against its row: a wrong type (``every = "abc"``), a
string that is not a boolean (``deny_on_escalation = "maybe"``), a number below the
minimum, a backend that does not exist. A bad value never fails the caller: that one
setting keeps its default and a :class:`Problem` says what was wrong, where, and which
value is used instead. The hook logs each problem as one line of ``hook.log`` (once per
version of the file, :func:`load_logged`) and carries
on; ``ledger config`` shows them to a person.

Booleans accept TOML ``true``/``false`` and, in the file or a variable, the words
``true/false``, ``yes/no``, ``on/off``, ``1/0`` (any case): ``"false"`` means false
(:mod:`ledger.flags`, the rule every yes/no value follows). The yes/no variables that
are not settings (``LEDGER_HOOKS_DISABLED``...) are checked here too, so a bad one is
reported the same way.
Integers accept TOML integers and decimal strings (``"20"``); ``true`` is not a number.

Stdlib only, read on every hook call; ``tomllib`` is imported only when the file exists
and the LLM backend registry only when a backend is set. Writing the file is
``ledger config set`` (:mod:`ledger.cli.config`).

Example ``config.toml``::

    [watcher]
    every = 15                 # distill after this many new tool calls (steps)
    escalate_after = 4         # injection count at which the message escalates
    deny_on_escalation = false # also deny the re-investigating tool call (PreToolUse)

    [llm]
    backend = "command"        # see `ledger config list` for the choices
    command = "claude -p"      # command backend: prompt on stdin, answer on stdout
    timeout = 120              # seconds
"""

from __future__ import annotations

import os

from ..flags import EXPECTED, env_flag_problems, parse_flag
from ..paths import home_dir

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable

def _backend_names() -> tuple[str, ...]:
    from .llm import BACKENDS

    return tuple(BACKENDS)


class Setting:
    """One row of the settings table.

    - ``key``: ``"section.name"`` (the TOML table and key).
    - ``type``: ``"int"``, ``"float"``, ``"bool"`` or ``"str"``.
    - ``default``: the value when nothing sets it (of that type).
    - ``help``: one line for ``ledger config list`` and docs; says the unit.
    - ``env``: the environment variable that overrides the file, or None.
    - ``minimum``: for numbers, the smallest value accepted.
    - ``choices``: for strings, the accepted values (a tuple, or a function returning
      one, evaluated only when the setting is set); compared lower-cased.
    """

    __slots__ = ("key", "type", "default", "help", "env", "minimum", "choices")

    def __init__(self, key: str, type: str, default: Any, help: str, env: str | None = None, *,
                 minimum: float | None = None, choices: tuple[str, ...] | Callable[[], tuple[str, ...]] | None = None):
        self.key, self.type, self.default, self.help, self.env = key, type, default, help, env
        self.minimum, self.choices = minimum, choices

    @property
    def section(self) -> str:
        return self.key.partition(".")[0]

    @property
    def name(self) -> str:
        return self.key.partition(".")[2]

    def valid_choices(self) -> tuple[str, ...] | None:
        return self.choices() if callable(self.choices) else self.choices

    def coerce(self, value: object) -> Any:
        """``value`` (from TOML, an environment variable or the command line) as this
        setting's type. Raises ``ValueError`` with a message saying what is expected."""
        t = self.type
        if t == "bool":
            flag = parse_flag(value)  # the one rule for yes/no values (ledger.flags)
            if flag is None:
                raise ValueError(f"expected true or false ({EXPECTED})")
            return flag
        if t in ("int", "float"):
            if isinstance(value, bool):
                raise ValueError(f"expected {'an integer' if t == 'int' else 'a number'}, not a boolean")
            try:
                if t == "int":
                    if isinstance(value, float):
                        if not value.is_integer():
                            raise ValueError
                        value = int(value)
                    n: float = int(value.strip()) if isinstance(value, str) else int(value)  # type: ignore[arg-type]
                else:
                    n = float(value.strip()) if isinstance(value, str) else float(value)  # type: ignore[arg-type]
            except (TypeError, ValueError):
                raise ValueError(f"expected {'an integer' if t == 'int' else 'a number'}") from None
            if n != n or n in (float("inf"), float("-inf")):
                raise ValueError("expected a finite number")
            if self.minimum is not None and n < self.minimum:
                raise ValueError(f"must be at least {_fmt(self.minimum)}")
            return n
        if not isinstance(value, str):
            raise ValueError("expected a string (in quotes)")
        choices = self.valid_choices()
        if choices is not None:
            v = value.strip().lower()
            if v not in choices:
                raise ValueError(f"expected one of {', '.join(choices)}")
            return v
        if self.key == "watcher.agent":
            return _agent(value)
        return value


def _agent(value: str) -> str:
    """``watcher.agent`` as the writer id every distilled finding is stored under: the
    rule of every other agent id (:func:`ledger.text.agent_id`), since the library
    stores what it is given. "a b" made findings no ``agent:`` filter could name, and
    "" findings with no writer at all. Raises ``ValueError`` saying why and what to use."""
    from ..errors import InvalidInput
    from ..text import agent_id

    try:
        return agent_id(value)
    except InvalidInput as exc:
        fixed = f"; use {exc.suggestion}" if exc.suggestion else ""
        why = exc.message.split(" Nothing was written.")[0].split(". An agent id may")[0].rstrip(".")
        raise ValueError(f"not an agent id ({why.removeprefix('The agent id ')}){fixed}") from None


def _fmt(n: float) -> str:
    return str(int(n)) if float(n).is_integer() else str(n)


#: The settings table: every setting ledger reads, in display order.
SETTINGS: tuple[Setting, ...] = (
    Setting("watcher.enabled", "bool", True, "inject facts about the files a tool call touches", "LEDGER_WATCHER"),
    Setting("watcher.every", "int", 15, "distill after this many new tool calls (steps)", "LEDGER_DISTILL_EVERY",
            minimum=1),
    Setting("watcher.agent", "str", "watcher", "writer id of distilled findings", "LEDGER_WATCHER_AGENT"),
    Setting("watcher.escalate_after", "int", 4, "injecting steps after which the message escalates (1 acts as 2: never the first)",
            "LEDGER_ESCALATE_AFTER", minimum=1),
    Setting("watcher.deny_on_escalation", "bool", False, "also deny the re-investigating tool call (PreToolUse)",
            "LEDGER_DENY_ON_ESCALATION"),
    Setting("watcher.max_facts", "int", 8, "facts per injection", minimum=1),
    Setting("watcher.max_chars", "int", 1200, "characters per injection", minimum=1),
    Setting("watcher.max_output_chars", "int", 2000, "characters kept of one tool output", minimum=1),
    Setting("watcher.spool_first", "str", "auto",
            "a finished tool call goes to this machine's spool and a detached process stores it: auto (PostgreSQL stores), "
            "always, never", "LEDGER_SPOOL_FIRST", choices=("auto", "always", "never")),
    Setting("watcher.max_trajectory_chars", "int", 24000, "characters of trajectory sent to the LLM per distillation",
            minimum=1),
    Setting("llm.backend", "str", "none", "who distills findings (none turns distillation off)", "LEDGER_LLM_BACKEND",
            choices=_backend_names),
    Setting("llm.command", "str", "", "command backend: program reading the prompt on stdin", "LEDGER_LLM_COMMAND"),
    Setting("llm.url", "str", "", "openai/anthropic backends: base URL (empty: the vendor's)", "LEDGER_LLM_URL"),
    Setting("llm.model", "str", "", "model name (empty: the backend's default)", "LEDGER_LLM_MODEL"),
    Setting("llm.api_key_env", "str", "", "name of the environment variable holding the API key",
            "LEDGER_LLM_API_KEY_ENV"),
    Setting("llm.timeout", "float", 120.0, "seconds to wait for one LLM answer", "LEDGER_LLM_TIMEOUT", minimum=1),
    Setting("llm.daily_token_budget", "int", 200_000, "LLM tokens per local day (0: no budget)",
            "LEDGER_LLM_DAILY_TOKENS", minimum=0),
    Setting("llm.max_tokens", "int", 1500, "longest LLM answer, in tokens", minimum=1),
    Setting("store.db", "str", "", "the store: a SQLite file or a postgresql:// URL (empty: $LEDGER_HOME/ledger.db); "
            "--db wins", "LEDGER_DB"),
)

BY_KEY: dict[str, Setting] = {s.key: s for s in SETTINGS}
SECTIONS: tuple[str, ...] = tuple(dict.fromkeys(s.section for s in SETTINGS))


class Problem:
    """A value that was not used: ``key`` (a setting, an unknown ``section.name`` or
    section, or None when the file could not be read), the ``value`` given, ``where`` it came from (the file path or ``$VARIABLE``) and
    ``message`` (what was expected). ``str()`` gives one line for logs and people."""

    __slots__ = ("key", "value", "where", "message")

    def __init__(self, key: str | None, value: object, where: str, message: str):
        self.key, self.value, self.where, self.message = key, value, where, message

    def __str__(self) -> str:
        s = BY_KEY.get(self.key) if self.key else None
        if s is None:  # the file, a section or an unknown key: the message says it all
            return f"{self.where}: {self.message}"
        return f"{self.where}: {self.key} = {show_value(self.value)}: {self.message}; using the default {show_value(s.default)}"

    def as_dict(self) -> dict:
        return {"key": self.key, "value": self.value, "where": self.where, "message": self.message, "text": str(self)}


def show_value(value: object) -> str:
    """``value`` as it would be written in TOML (strings quoted, booleans lower-case)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return repr(value)


class Loaded:
    """The result of :func:`load_checked`: ``values`` as ``{"watcher": {...}, "llm":
    {...}}``, ``origin`` (key -> ``"default"``, the file path, or ``$VARIABLE``),
    ``problems`` (list of :class:`Problem`) and the file ``path``."""

    __slots__ = ("values", "origin", "problems", "path")

    def __init__(self, values: dict, origin: dict[str, str], problems: list[Problem], path: str):
        self.values, self.origin, self.problems, self.path = values, origin, problems, path


def config_path() -> str:
    """``$LEDGER_HOME/config.toml``."""
    return os.path.join(home_dir(), "config.toml")


def defaults() -> dict:
    """Every setting at its default, as ``{"watcher": {...}, "llm": {...}}``."""
    out: dict[str, dict] = {sec: {} for sec in SECTIONS}
    for s in SETTINGS:
        out[s.section][s.name] = s.default
    return out


def read_file(path: str) -> tuple[dict, Problem | None]:
    """The parsed TOML file (``{}`` when missing) and the problem that made it unusable."""
    if not os.path.isfile(path):
        return {}, None
    import tomllib

    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh), None
    except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError) as exc:
        return {}, Problem(None, None, path, f"not read ({exc}); every setting from the file is ignored")


def load_checked(path: str | None = None, environ: dict[str, str] | None = None) -> Loaded:
    """Read and validate every setting (see the module docstring); never raises for a
    bad value or file."""
    p = path or config_path()
    env = os.environ if environ is None else environ
    values = defaults()
    origin = {s.key: "default" for s in SETTINGS}
    data, file_problem = read_file(p)
    problems: list[Problem] = [file_problem] if file_problem else []
    for section, table in data.items():
        if section not in values:
            problems.append(Problem(section, None, p, f"unknown section [{section}] ignored (known: {', '.join(SECTIONS)})"))
            continue
        if not isinstance(table, dict):
            problems.append(Problem(section, None, p, f"{section} must be a table ([{section}]); ignored"))
            continue
        for name, raw in table.items():
            s = BY_KEY.get(f"{section}.{name}")
            if s is None:
                known = ", ".join(x.name for x in SETTINGS if x.section == section)
                problems.append(Problem(f"{section}.{name}", None, p, f"unknown setting {section}.{name} ignored (known: {known})"))
                continue
            _apply(s, raw, p, values, origin, problems)
    for s in SETTINGS:
        raw = env.get(s.env) if s.env else None
        if raw is None or raw == "":
            continue
        _apply(s, raw, f"${s.env}", values, origin, problems)
    for name, raw, message in env_flag_problems(env):
        problems.append(Problem(name, raw, f"${name}", message))
    return Loaded(values, origin, problems, p)


def _apply(s: Setting, raw: object, where: str, values: dict, origin: dict, problems: list[Problem]) -> None:
    try:
        values[s.section][s.name] = s.coerce(raw)
        origin[s.key] = where
    except ValueError as exc:
        # Only this setting falls back; an earlier good value (the file's, under a bad
        # variable) stays.
        problems.append(Problem(s.key, raw, where, str(exc)))


def load(path: str | None = None, errors: list[str] | None = None) -> dict:
    """Settings as ``{"watcher": {...}, "llm": {...}}`` (see :func:`load_checked`).
    With an ``errors`` list each problem is appended to it as one line and the bad
    value falls back; without one, any problem raises ``ValueError`` listing them."""
    loaded = load_checked(path)
    if loaded.problems:
        lines = [str(x) for x in loaded.problems]
        if errors is None:
            raise ValueError("; ".join(lines))
        errors.extend(lines)
    return loaded.values


#: Beside ``hook.log``: the signature of the config problems last logged, so a bad
#: value is logged once per edit of ``config.toml``, not once per hook call.
LOGGED_MARK = ".config-problems-logged"


def load_logged(path: str | None = None) -> dict:
    """:func:`load` for processes nobody watches (hooks, the distiller, the OpenCode
    session server): the bad value falls back to its default and each problem becomes
    one ``config ignored: ...`` line in ``hook.log``, once for the same problems in the
    same version of the file (its mtime and size; a changed environment variable
    changes the problem text, so it is logged again)."""
    problems: list[str] = []
    p = path or config_path()
    cfg = load(path, errors=problems)
    if problems:
        import hashlib

        from ..log import log_line

        try:
            st = os.stat(p)
            stamp = f"{st.st_mtime_ns}:{st.st_size}"
        except OSError:
            stamp = "-"
        sig = hashlib.sha256("\n".join([p, stamp, *problems]).encode("utf-8", "replace")).hexdigest()
        mark = os.path.join(home_dir(), LOGGED_MARK)
        try:
            with open(mark, encoding="utf-8") as fh:
                if fh.read().strip() == sig:
                    return cfg
        except OSError:
            pass
        for msg in problems:
            log_line(f"config ignored: {msg}")
        try:
            with open(mark, "w", encoding="utf-8") as fh:
                fh.write(sig)
        except OSError:
            pass
    return cfg
