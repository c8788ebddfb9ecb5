"""Immutable value objects without :mod:`dataclasses` (the base of :mod:`ledger.models`).

Why not ``@dataclass(frozen=True)``: the agent verbs (``ledger recall``, ``remember``,
``search``, ``show``) run as a fresh process per call and import the models, so what the
models cost is paid on every call (docs/benchmarks.md "Start-up"). ``import
dataclasses`` brings in ``inspect`` (with ``ast``, ``dis`` and ``tokenize``), about 0.9x
a bare ``python -c pass``, and each ``@dataclass`` compiles its generated methods with
``exec`` when the module is imported, another ~1 ms per class. A subclass of
:class:`Frozen` writes its ``__init__`` by hand (compiled once into the ``.pyc``) and
gets the rest of the frozen-dataclass contract from here, driven by ``__slots__``:

* construction by position or keyword in field order (the subclass's ``__init__``),
* immutability (assigning or deleting a field raises :class:`FrozenError`, an
  ``AttributeError`` as ``dataclasses.FrozenInstanceError`` is),
* value equality between instances of the same class, and a hash of the fields (a
  ``TypeError`` when a field is unhashable, e.g. a dict, as with a frozen dataclass),
* ``repr`` as ``Name(field=value, ...)``,
* :meth:`Frozen.replace` in place of ``dataclasses.replace``, and pickling/copying.

Stdlib only; imports nothing.
"""

from __future__ import annotations


class FrozenError(AttributeError):
    """A field of a :class:`Frozen` value was assigned or deleted."""


class Frozen:
    """Base of an immutable value whose fields are its ``__slots__``, in constructor order.

    A subclass declares ``__slots__`` and an ``__init__`` that sets every field with
    ``object.__setattr__`` (this class's ``__setattr__`` refuses all assignments)."""

    __slots__: tuple[str, ...] = ()

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenError(f"cannot assign to field {name!r} of {type(self).__name__} (frozen; use .replace)")

    def __delattr__(self, name: str) -> None:
        raise FrozenError(f"cannot delete field {name!r} of {type(self).__name__} (frozen)")

    def _values(self) -> tuple:
        return tuple([getattr(self, f) for f in self.__slots__])

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        inner = ", ".join([f"{f}={getattr(self, f)!r}" for f in self.__slots__])
        return f"{type(self).__name__}({inner})"

    def __reduce__(self):
        # pickle and copy: rebuild through __init__ (the slots cannot be set afterwards).
        return (type(self), self._values())

    def replace(self, **changes):
        """A copy with the fields in ``changes`` replaced (``dataclasses.replace``).
        Raises TypeError naming a field the class does not have."""
        unknown = [k for k in changes if k not in self.__slots__]
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field {unknown[0]!r}")
        return type(self)(*[changes[f] if f in changes else getattr(self, f) for f in self.__slots__])
