"""``ledger config list|get|set``: see and change the settings in ``config.toml``.

The settings table, its validation and the environment overrides are
:mod:`ledger.watcher.config`; this module only shows them and writes the file. Writing
goes through tomlkit, which keeps the user's comments, order and other settings as they
were; the new value is validated before anything is written, and the file is replaced
atomically.
"""

from __future__ import annotations

import os

import click

from ..errors import InvalidInput
from .base import _err_line, _json, _out, cli


def _settings():
    from ..watcher import config as C

    return C


def _unknown(key: str) -> InvalidInput:
    import difflib

    C = _settings()
    keys = list(C.BY_KEY)
    # A section left out ("every" for "watcher.every") is the commonest slip: match the
    # part after the dot first, then the nearest whole key by edit distance.
    tail = key.rsplit(".", 1)[-1].lower()
    close = [k for k in keys if k.rsplit(".", 1)[-1] == tail]
    if not close:
        by_tail = difflib.get_close_matches(tail, [k.rsplit(".", 1)[-1] for k in keys], n=1)
        close = [k for k in keys if by_tail and k.rsplit(".", 1)[-1] == by_tail[0]]
    close = close or difflib.get_close_matches(key, keys, n=1)
    hint = f' Did you mean "{close[0]}"?' if close else ""
    return InvalidInput(f'Unknown setting "{key}".{hint} Run `ledger config list` to see them all.')


def _shown(key: str, value):
    """``value`` fit to print: the store's URL without its password (the file keeps it)."""
    if key == "store.db" and isinstance(value, str):
        from ..paths import shown_location

        return shown_location(value)
    return value


def _row(s, loaded) -> dict:
    return {"key": s.key, "value": _shown(s.key, loaded.values[s.section][s.name]), "default": s.default, "type": s.type,
            "origin": loaded.origin[s.key], "env": s.env, "help": s.help,
            "choices": list(s.valid_choices()) if s.choices else None}


def _show(value) -> str:
    from ..watcher.config import show_value

    return show_value(value)


def _problems(loaded, as_json: bool) -> None:
    """Print the problems on stderr and exit 1 when there are any."""
    if not loaded.problems:
        return
    if not as_json:
        for p in loaded.problems:
            _err_line(f"✕ {p}")
    raise click.exceptions.Exit(1)


@cli.group("config", invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable JSON output.")
@click.pass_context
def config(ctx, as_json):
    """Settings in $LEDGER_HOME/config.toml (list, get, set); bad values are named here.

    \b
    ledger config                          # same as `ledger config list`
    ledger config get watcher.every
    ledger config set watcher.every 20
    """
    ctx.obj = {"json": as_json}
    if ctx.invoked_subcommand is None:
        ctx.invoke(config_list, as_json=as_json)


@config.command("list")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable JSON output.")
@click.pass_context
def config_list(ctx, as_json):
    """Every setting: value, where it came from, what it means. Exit 1 if a value is bad."""
    as_json = as_json or ((ctx.obj or {}).get("json") if ctx else False)
    C = _settings()
    loaded = C.load_checked()
    rows = [_row(s, loaded) for s in C.SETTINGS]
    if as_json:
        _json({"path": loaded.path, "settings": rows, "problems": [p.as_dict() for p in loaded.problems]})
    else:
        width = max(len(r["key"]) for r in rows)
        lines = [f"# {loaded.path}{'' if os.path.isfile(loaded.path) else ' (not created yet: every value is a default)'}"]
        for r in rows:
            origin = "" if r["origin"] == "default" else f"   [{'file' if r['origin'] == loaded.path else r['origin']}]"
            lines.append(f"{r['key']:<{width}}  {_show(r['value']):<12} {r['help']}{origin}")
        _out("\n".join(lines))
    _problems(loaded, as_json)


@config.command("get")
@click.argument("key")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable JSON output.")
@click.pass_context
def config_get(ctx, key, as_json):
    """The value in effect for one setting (e.g. watcher.every)."""
    as_json = as_json or (ctx.obj or {}).get("json")
    C = _settings()
    s = C.BY_KEY.get(key)
    if s is None:
        raise _unknown(key)
    loaded = C.load_checked()
    mine = [p for p in loaded.problems if p.key in (key, None)]  # this setting's, or an unreadable file
    if as_json:
        _json({**_row(s, loaded), "problems": [p.as_dict() for p in mine]})
    else:
        value = _shown(key, loaded.values[s.section][s.name])
        _out(value if isinstance(value, str) else _show(value))
    if mine:
        if not as_json:
            for p in mine:
                _err_line(f"✕ {p}")
        raise click.exceptions.Exit(1)


@config.command("set", context_settings={"ignore_unknown_options": True})
@click.argument("key")
@click.argument("value")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable JSON output.")
@click.pass_context
def config_set(ctx, key, value, as_json):
    """Set one setting in config.toml (checked first; everything else in the file stays).

    \b
    ledger config set watcher.deny_on_escalation true
    ledger config set llm.backend command
    """
    as_json = as_json or (ctx.obj or {}).get("json")
    C = _settings()
    s = C.BY_KEY.get(key)
    if s is None:
        raise _unknown(key)
    try:
        typed = s.coerce(value)
    except ValueError as exc:
        raise InvalidInput(f"{key} = {_shown(key, value)}: {exc}. Nothing was changed.") from None
    if key == "store.db" and typed:
        from ..paths import check_store_target

        check_store_target(typed, "store.db")  # mysql://... would become a folder: refused before writing
        from ..paths import names_folder

        if names_folder(typed) or os.path.isdir(os.path.expanduser(typed)):
            # A folder is where a store file goes, not one (it would fail at every open).
            raise InvalidInput(f"store.db = {typed} names a folder, not a store file: give the store file, e.g. "
                               f"ledger config set store.db {os.path.join(typed, 'ledger.db')} (created on first "
                               "use). Nothing was changed.", field="store.db", value=typed)
    path = C.config_path()
    write_setting(path, s.section, s.name, typed)
    loaded = C.load_checked(path)
    overridden = s.env and loaded.origin[key] == f"${s.env}"
    result = {"key": key, "value": _shown(key, typed), "path": path, "overriddenBy": f"${s.env}" if overridden else None}
    if as_json:
        _json(result)
    else:
        _out(f"✓ {key} = {_show(_shown(key, typed))} in {path}")
        if overridden:
            _err_line(f"⚠ ${s.env} is set and overrides it "
                      f"({_show(_shown(key, loaded.values[s.section][s.name]))} is in effect here).")


def write_setting(path: str, section: str, name: str, value) -> None:
    """Set ``[section] name = value`` in the TOML file at ``path`` (created if missing),
    keeping every other line, comment and setting. Raises :class:`InvalidInput` (and
    changes nothing) when the file is not valid TOML or ``section`` is not a table."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    text = ""
    if os.path.exists(path):
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    try:
        doc = tomlkit.parse(text)
    except TOMLKitError as exc:
        raise InvalidInput(f"{path} is not valid TOML ({exc}); fix it first. Nothing was changed.") from None
    table = doc.get(section)
    if table is None:
        table = tomlkit.table()
        doc[section] = table
    elif not isinstance(table, dict):
        raise InvalidInput(f"{path}: {section} is not a table ([{section}]); fix it first. Nothing was changed.")
    table[name] = value
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(tomlkit.dumps(doc))
    os.replace(tmp, path)
