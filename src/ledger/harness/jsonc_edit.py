"""Edit one member of a JSON-with-comments (JSONC) file in place, keeping every other
byte: comments, trailing commas, blank lines, key order, indentation.

Zed's ``settings.json`` starts with comment lines and VS Code's and Gemini's files may
hold comments too; Python's ``json`` cannot write them back, so instead of rewriting the
document this module finds the spans of the members to change and splices text there.

* :func:`set_member` sets ``path[-1]`` inside the object at ``path[:-1]`` (creating
  missing objects on the way, appended after the existing members) to a JSON value.
* :func:`delete_member` removes a member and its comma.
* :func:`rewrite` gives the text for a whole new document that differs from the file
  in one top-level member (``ledger install``'s ``hooks`` in Claude Code's settings).

Both take and return text and raise :class:`JsoncError` when the text is not a JSONC
object (the caller then refuses, or falls back). Values are given as Python objects and
written with ``json.dumps`` at the indentation of their neighbours.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field


class JsoncError(ValueError):
    """The text is not a JSON object with comments (or the path crosses a non-object)."""


@dataclass
class Node:
    """A parsed value: its span ``[start, end)`` in the text and, for an object, its
    members as ``(key, key_start, value)`` in order."""

    kind: str
    start: int
    end: int
    members: list[tuple[str, int, "Node"]] = field(default_factory=list)

    def get(self, key: str) -> tuple[int, "Node"] | None:
        for k, at, v in self.members:
            if k == key:
                return at, v
        return None


def _skip(text: str, i: int) -> int:
    """Past whitespace and comments."""
    n = len(text)
    while i < n:
        if text[i] in " \t\r\n\ufeff":
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise JsoncError("unterminated comment")
            i = j + 2
        else:
            break
    return i


def _string_end(text: str, i: int) -> int:
    j = i + 1
    while j < len(text):
        if text[j] == "\\":
            j += 2
        elif text[j] == '"':
            return j + 1
        else:
            j += 1
    raise JsoncError("unterminated string")


def _value(text: str, i: int) -> Node:
    i = _skip(text, i)
    if i >= len(text):
        raise JsoncError("value expected")
    c = text[i]
    if c == "{":
        node = Node("object", i, i)
        j = _skip(text, i + 1)
        while text[j:j + 1] != "}":
            if text[j:j + 1] != '"':
                raise JsoncError(f"key expected at offset {j}")
            kend = _string_end(text, j)
            key = json.loads(text[j:kend])
            colon = _skip(text, kend)
            if text[colon:colon + 1] != ":":
                raise JsoncError(f"':' expected at offset {colon}")
            v = _value(text, colon + 1)
            node.members.append((key, j, v))
            j = _skip(text, v.end)
            if text[j:j + 1] == ",":
                j = _skip(text, j + 1)
            elif text[j:j + 1] != "}":
                raise JsoncError(f"',' or '}}' expected at offset {j}")
        node.end = j + 1
        return node
    if c == "[":
        j = _skip(text, i + 1)
        while text[j:j + 1] != "]":
            v = _value(text, j)
            j = _skip(text, v.end)
            if text[j:j + 1] == ",":
                j = _skip(text, j + 1)
            elif text[j:j + 1] != "]":
                raise JsoncError(f"',' or ']' expected at offset {j}")
        return Node("array", i, j + 1)
    if c == '"':
        return Node("string", i, _string_end(text, i))
    j = i
    while j < len(text) and (text[j].isalnum() or text[j] in "+-."):
        j += 1
    if j == i:
        raise JsoncError(f"unexpected {c!r} at offset {i}")
    return Node("literal", i, j)


def parse(text: str) -> Node:
    """The root object's node. Raises JsoncError for anything else."""
    root = _value(text, 0)
    if root.kind != "object" or _skip(text, root.end) != len(text):
        raise JsoncError("not a single JSON object")
    return root


def _line_indent(text: str, at: int) -> str:
    """The whitespace between the start of ``at``'s line and the first non-blank."""
    start = text.rfind("\n", 0, at) + 1
    j = start
    while j < len(text) and text[j] in " \t":
        j += 1
    return text[start:j]


def _dump(value, unit: str, indent: str) -> str:
    """``value`` as JSON indented by ``unit`` steps, continuation lines under ``indent``."""
    body = json.dumps(value, indent=unit, ensure_ascii=False)
    return body.replace("\n", "\n" + indent)


def _insert(text: str, obj: Node, key: str, value, unit: str) -> str:
    """``text`` with ``"key": value`` added as the last member of ``obj``, on a line of
    its own at its neighbours' indentation (a trailing comma style is kept)."""
    if not obj.members:
        ind = _line_indent(text, obj.start) + unit
        member = f"{json.dumps(key, ensure_ascii=False)}: {_dump(value, unit, ind)}"
        at = obj.start + 1
        inner = text[at:obj.end - 1].rstrip(" \t")  # only blanks and comments in an empty object
        return text[:at] + "\n" + ind + member + inner + ("" if inner.endswith("\n") else "\n") \
            + _line_indent(text, obj.start) + text[obj.end - 1:]
    ind = _line_indent(text, obj.members[-1][1])
    member = f"{json.dumps(key, ensure_ascii=False)}: {_dump(value, unit, ind)}"
    last_end = obj.members[-1][2].end
    after = _skip_inline(text, last_end)
    trailing = text[after:after + 1] == ","
    at = after + 1 if trailing else last_end
    # A line comment after the last member stays on its line: insert after it.
    rest = _skip_inline(text, at)
    if text.startswith("//", rest):
        nl = text.find("\n", rest)
        at = len(text) if nl < 0 else nl
    elif rest < len(text) and text[rest] == "\n":
        at = rest
    added = "\n" + ind + member + ("," if trailing else "")
    if trailing:
        return text[:at] + added + text[at:]
    return text[:last_end] + "," + text[last_end:at] + added + text[at:]


def _skip_inline(text: str, i: int) -> int:
    """Past spaces and tabs on the same line."""
    while i < len(text) and text[i] in " \t":
        i += 1
    return i


def set_member(text: str, path: list[str], value, unit: str = "  ") -> str:
    """``text`` with the member at ``path`` set to ``value`` (missing objects on the way
    are created). Raises JsoncError when ``text`` does not parse or the path crosses a
    value that is not an object."""
    root = parse(text)
    obj = root
    for depth, key in enumerate(path):
        found = obj.get(key)
        last = depth == len(path) - 1
        if found is None:
            nested = value
            for k in reversed(path[depth + 1:]):
                nested = {k: nested}
            return _insert(text, obj, key, nested, unit)
        at, node = found
        if last:
            ind = _line_indent(text, at)
            return text[:node.start] + _dump(value, unit, ind) + text[node.end:]
        if node.kind != "object":
            raise JsoncError(f"{'.'.join(path[:depth + 1])} is not an object")
        obj = node
    raise JsoncError("empty path")  # pragma: no cover - path is never empty


def get_node(text: str, path: list[str]) -> Node | None:
    """The node at ``path``, or None when a key on the way is missing."""
    node = parse(text)
    for key in path:
        if node.kind != "object":
            return None
        found = node.get(key)
        if found is None:
            return None
        node = found[1]
    return node


def delete_member(text: str, path: list[str]) -> str:
    """``text`` without the member at ``path`` (its line, and its comma). Unchanged when
    the member is not there. Raises JsoncError when ``text`` does not parse."""
    root = parse(text)
    obj = root
    for key in path[:-1]:
        found = obj.get(key)
        if found is None or found[1].kind != "object":
            return text
        obj = found[1]
    idx = next((n for n, (k, _, _) in enumerate(obj.members) if k == path[-1]), None)
    if idx is None:
        return text
    _, key_at, node = obj.members[idx]
    start, end = key_at, node.end
    prev_comma = None
    after = _skip(text, end)
    if text[after:after + 1] == ",":
        end = after + 1  # our comma goes with us
    elif idx > 0:
        comma = _skip(text, obj.members[idx - 1][2].end)
        if text[comma:comma + 1] == ",":
            prev_comma = comma  # we were last: the comma before us goes (alone: a comment after it stays)
    # Take the whole line when the member stood on lines of its own.
    line_start = text.rfind("\n", 0, start) + 1
    if not text[line_start:start].strip():
        start = line_start
        nl = text.find("\n", end)
        if nl >= 0 and not text[end:nl].strip():
            end = nl + 1
        elif start > 0:
            start -= 1  # keep one newline between the neighbours
    out = text[:start] + text[end:]
    if prev_comma is not None and prev_comma < start:
        out = out[:prev_comma] + out[prev_comma + 1:]
        start -= 1
    if len(obj.members) == 1:
        # The object is empty now: "{ }" over several lines becomes "{}" again.
        open_at = obj.start
        close_at = out.find("}", open_at)
        if close_at > open_at and not out[open_at + 1:close_at].strip():
            out = out[:open_at + 1] + out[close_at:]
    return out


def rewrite(original: str, doc: dict, key: str, *, indent: str | int | None, newline: bool) -> str:
    """The text to write for ``doc``, which differs from ``original`` in the top-level
    member ``key`` only: that member spliced in (or out) when the result parses back to
    ``doc`` exactly, else ``doc`` dumped whole in ``indent`` (a tab, a number of spaces,
    None for one line). ``newline``: end a whole dump with a newline. Never raises for a
    bad ``original``: it is then replaced by the dump."""
    # A one-line file stays one line: the splicer lays values out over lines, so it is
    # dumped compact (key order kept: ``doc`` was loaded from it).
    if original.strip() and indent is not None:
        unit = "\t" if indent == "\t" else " " * int(indent)
        try:
            text = set_member(original, [key], doc[key], unit) if key in doc else delete_member(original, [key])
            if json.loads(text) == doc:  # a splice must never change the meaning
                return text
        except ValueError:  # JsoncError, and json.JSONDecodeError for a file with comments
            pass
    text = json.dumps(doc, indent=indent, ensure_ascii=False)
    return text + ("\n" if newline else "")
