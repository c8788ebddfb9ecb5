"""The in-place JSONC editor behind `ledger install mcp`: setting then deleting a member
gives back the exact text, for hand-written files with comments and trailing commas and
for any JSON object laid out the usual ways (Hypothesis)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.harness import jsonc_edit as je
from ledger.harness.mcp_clients import _strip_jsonc

ENTRY = {"command": "/venv/bin/ledger", "args": ["mcp"], "env": {"LEDGER_DB": "/d/l.db"}}

FILES = [
    '{\n  "a": 1,\n  "s": {\n    "x": {"c": "y", "args": ["-y", "z"]}\n  }\n}\n',
    '// Zed settings\n//\n{\n  "ui_font_size": 16, // big\n  /* servers */ "s": {\n    "other": {"command": "x",},\n  },\n}\n',
    '{\n\t"a": 1 // one\n}\n',
    '{\n  "s": {}\n}\n',
    '{\n  "s": {\n    // nothing yet\n  }\n}\n',
    '{}\n',
    '{\n  "a": [1,\n 2], "b": "q" /* c */\n}',
    '\ufeff{\n  "url": "http://x//y", "s": {"k": "/* not a comment */"}\n}\n',
]


def roundtrip(text: str, path: list[str], unit: str = "  ") -> str:
    out = je.set_member(text, path, ENTRY, unit)
    doc = json.loads(_strip_jsonc(out)[0].lstrip("\ufeff"))
    node = doc
    for k in path:
        node = node[k]
    assert node == ENTRY
    back = je.delete_member(out, path)
    created = je.get_node(text, path[:1]) is None
    n = je.get_node(back, path[:1])
    if created and n is not None and not n.members:
        back = je.delete_member(back, path[:1])
    return back


@pytest.mark.parametrize("text", FILES)
@pytest.mark.parametrize("path", [["s", "ledger"], ["context_servers", "ledger"]])
def test_set_then_delete_gives_back_every_byte(text, path):
    assert roundtrip(text, path, "\t" if "\t" in text else "  ") == text


def test_setting_an_existing_member_replaces_only_its_value():
    text = '{\n  // keep\n  "s": {\n    "ledger": {"command": "/old/ledger", "args": ["mcp"]}, // ours\n    "z": 1\n  }\n}\n'
    out = je.set_member(text, ["s", "ledger"], ENTRY)
    assert out.startswith('{\n  // keep\n  "s": {\n    "ledger": {\n      "command": "/venv/bin/ledger"')
    assert out.endswith('}, // ours\n    "z": 1\n  }\n}\n')


@pytest.mark.parametrize("bad", ["", "[]", '{"a": }', '{"a" 1}', '{"a": "x', "{} {}", '{"a": 1 /* open'])
def test_text_that_is_not_a_jsonc_object_is_refused(bad):
    with pytest.raises(je.JsoncError):
        je.set_member(bad, ["s", "ledger"], ENTRY)


def test_a_path_through_a_non_object_is_refused():
    with pytest.raises(je.JsoncError, match="not an object"):
        je.set_member('{"s": [1]}', ["s", "ledger"], ENTRY)


keys = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=8)
leaves = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=10))
values = st.recursive(leaves, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                        st.dictionaries(keys, inner, max_size=3)), max_leaves=8)


@settings(max_examples=150, deadline=None)
@given(doc=st.dictionaries(keys, values, max_size=5), indent=st.sampled_from([2, 4, "\t"]),
       servers=st.dictionaries(keys.filter(lambda k: k != "ledger"), values, max_size=3), has_servers=st.booleans())
def test_any_laid_out_object_round_trips(doc, indent, servers, has_servers):
    doc = {k: v for k, v in doc.items() if k != "s"}
    if has_servers:
        doc["s"] = servers
    text = json.dumps(doc, indent=indent, ensure_ascii=False) + "\n"
    unit = "\t" if indent == "\t" else " " * indent
    assert roundtrip(text, ["s", "ledger"], unit) == text
