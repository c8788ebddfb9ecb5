"""The immutable values of ledger.frozen and the models built on them keep the contract of
the frozen dataclasses they replaced (they were replaced to keep `dataclasses` off the
agent verbs' start-up; docs/benchmarks.md "Start-up")."""

from __future__ import annotations

import copy
import pickle

import pytest

from ledger.conflicts.signals import Suspicion
from ledger.conflicts.values import Quantity, read
from ledger.frozen import Frozen, FrozenError
from ledger.models import Agent, Cluster, FileKey, Memory, SearchResult
from ledger.service import IngestResult, WriteResult
from ledger.strength import Factors


def _memory(**changes) -> Memory:
    m = Memory("m_1", "CI runs on 3.11", "claim", "chat", "code", "Code", "#0af", "claude", ("claude",), None, None,
               "", 1, 2, 0, 1, False, False, None, None, 0.5, Factors(0.1, 0.9, 0.0))
    return m.replace(**changes) if changes else m


def test_fields_by_position_and_by_keyword_with_defaults():
    assert Cluster("code", "Code", "#0af", 5) == Cluster(id="code", label="Code", color="#0af", created_at=5, count=0)
    m = _memory()
    assert (m.conflict_with, m.topic, m.files, m.score, m.source_trust) == (None, None, (), None, None)
    with pytest.raises(TypeError):
        Cluster("code", "Code")  # missing fields fail as they did


def test_immutable():
    c = Cluster("code", "Code", "#0af", 5)
    with pytest.raises(AttributeError):
        c.label = "x"  # type: ignore[misc]
    with pytest.raises(FrozenError):
        del c.label
    with pytest.raises(AttributeError):
        c.other = 1  # type: ignore[attr-defined]


def test_equality_and_hash_by_value_and_class():
    a, b = _memory(), _memory()
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != _memory(hits=3)
    assert FileKey("/a") != ("/a", None, None, None)  # another class is never equal
    assert Quantity("time", 90.0) == Quantity("time", 90.0) and {Quantity("", "3")} == {Quantity("", "3")}
    with pytest.raises(TypeError):
        hash(Agent("a", "A", "agent", "#fff", 1, 2, {"k": 1}))  # a dict field is unhashable, as before


def test_repr_names_every_field_in_order():
    assert repr(FileKey("/a", 3)) == "FileKey(path='/a', size=3, mtime_ms=None, sha256=None)"
    assert repr(Suspicion(0.5, ("divergent numbers",), 0.43)) == (
        "Suspicion(overlap=0.5, signals=('divergent numbers',), score=0.43)")


def test_replace_copies_and_refuses_unknown_fields():
    m = _memory()
    n = m.replace(score=0.7)
    assert n.score == 0.7 and m.score is None and n.text == m.text
    with pytest.raises(TypeError, match="no field 'scor'"):
        m.replace(scor=0.7)
    r = SearchResult((m,), 1, 2.0)
    assert r.replace(not_counted="locked").not_counted == "locked" and r.not_counted is None


def test_pickle_and_copy():
    values = [_memory(files=(FileKey("/a", 1, 2, "ff"),)), Agent("a", "A", "agent", "#fff", 1, 2),
              WriteResult(_memory(), ("cc_1",), None, 1), IngestResult("s_1", 3, "a.md"), read("Retries 3 times at 09:00")]
    for v in values:
        assert pickle.loads(pickle.dumps(v)) == v and copy.copy(v) == v and copy.deepcopy(v) == v


def test_default_factory_gives_each_value_its_own_dict():
    a, b = Agent("a", "A", "agent", "#fff", 1, 2), Agent("b", "B", "agent", "#fff", 1, 2)
    assert a.extra == {} and a.extra is not b.extra


def test_every_value_class_declares_its_fields_as_slots():
    # No per-instance __dict__: a typo'd attribute cannot be set, and memory stays small.
    for cls in (Cluster, Memory, FileKey, SearchResult, Agent, WriteResult, IngestResult, Suspicion, Quantity):
        assert issubclass(cls, Frozen) and cls.__slots__ and not hasattr(_memory(), "__dict__")
