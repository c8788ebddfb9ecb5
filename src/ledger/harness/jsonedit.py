"""Change one top-level member of a JSON object file and keep every other byte.

``ledger install`` edits files people keep by hand (``.claude/settings.local.json``).
Loading and dumping the whole document re-wrapped their one-line arrays, spacing and
escapes; here only the member we own (``"hooks"``) is rewritten, in the file's own
indentation, and the text around it is left as it was. The parsing is the standard
library's (``json.JSONDecoder.raw_decode`` reports where each value ends); the result is
parsed again and compared with the intended document, and on any difference the whole
document is written the plain way, so a splice can never change the meaning.
"""

from __future__ import annotations

import json

_WS = " \t\n\r"


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


def members(text: str) -> tuple[list[tuple[str, int, int, int]], int]:
    """The top-level members of the JSON object ``text`` as ``(key, key_start,
    value_start, value_end)`` character offsets, and the offset of its closing brace.
    Raises ValueError when ``text`` is not one JSON object."""
    dec = json.JSONDecoder()
    i = _skip(text, 0)
    if i >= len(text) or text[i] != "{":
        raise ValueError("not a JSON object")
    i = _skip(text, i + 1)
    out: list[tuple[str, int, int, int]] = []
    while i < len(text) and text[i] != "}":
        key, j = dec.raw_decode(text, i)
        j = _skip(text, j)
        if text[j] != ":":
            raise ValueError(f"expected ':' at {j}")
        v = _skip(text, j + 1)
        _, end = dec.raw_decode(text, v)
        out.append((key, i, v, end))
        i = _skip(text, end)
        if i < len(text) and text[i] == ",":
            i = _skip(text, i + 1)
    if i >= len(text):
        raise ValueError("unterminated object")
    return out, i


def _line_indent(text: str, at: int) -> str:
    start = text.rfind("\n", 0, at) + 1
    lead = text[start:at]
    return lead if not lead.strip() else ""


def _render(value: object, indent: str | int | None, base: str) -> str:
    if indent is None:
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, indent=indent, ensure_ascii=False).replace("\n", "\n" + base)


def set_member(text: str, key: str, value: object, *, indent: str | int | None = 2) -> str:
    """``text`` (a JSON object) with member ``key`` set to ``value`` (added at the end
    when absent), every other character unchanged. ``indent`` is the file's unit of
    indentation (a tab, a number of spaces, None for a one-line file). Raises
    ValueError when ``text`` is not a JSON object."""
    found, close = members(text)
    for k, _, v, end in found:
        if k == key:
            return text[:v] + _render(value, indent, _line_indent(text, _key_start(found, k))) + text[end:]
    if indent is None:
        sep = ", " if found else ""
        at = found[-1][3] if found else close
        return text[:at] + f'{sep}{json.dumps(key)}: {_render(value, None, "")}' + text[at:]
    unit = "\t" if indent == "\t" else " " * int(indent)
    if found:
        base = _line_indent(text, found[-1][1]) or unit
        at = found[-1][3]
        return text[:at] + f",\n{base}{json.dumps(key)}: {_render(value, indent, base)}" + text[at:]
    outer = _line_indent(text, close)
    return text[:close].rstrip(_WS) + f"\n{outer}{unit}{json.dumps(key)}: {_render(value, indent, outer + unit)}\n{outer}" + text[close:]


def _key_start(found, key: str) -> int:
    return next(ks for k, ks, _, _ in found if k == key)


def drop_member(text: str, key: str) -> str:
    """``text`` without member ``key`` (and the comma that separated it), everything
    else unchanged; ``text`` itself when there is no such member."""
    found, close = members(text)
    for n, (k, ks, _, end) in enumerate(found):
        if k != key:
            continue
        if n > 0:  # from the end of the previous value: its comma goes with this member
            return text[:found[n - 1][3]] + text[end:]
        if len(found) > 1:  # the first of several: up to the next key
            return text[:ks] + text[found[1][1]:]
        return text[:ks].rstrip(_WS) + ("\n" if "\n" in text[:close] else "") + text[close:]
    return text


def rewrite(original: str, doc: dict, key: str, *, indent: str | int | None, newline: bool) -> str:
    """The text to write for ``doc``, a change of ``original`` in member ``key`` only:
    spliced when that reproduces ``doc`` exactly, else ``doc`` dumped whole in
    ``indent`` (a tab, spaces, None: one line). ``newline``: end with a newline."""
    if original.strip():
        try:
            text = set_member(original, key, doc[key], indent=indent) if key in doc else drop_member(original, key)
            if json.loads(text) == doc:
                return text
        except ValueError:  # json.JSONDecodeError is one
            pass
    text = json.dumps(doc, indent=indent, ensure_ascii=False)
    return text + ("\n" if newline else "")
