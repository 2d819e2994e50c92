"""`Record`: the base of statewright's small immutable value types (stdlib only, no imports).

Why not `dataclasses`: `import dataclasses` pulls in `inspect`, `ast`, `dis`, `tokenize` (about
18 ms on a slow machine) and every `@dataclass` costs another 1-2 ms to build (it `exec`s its
generated methods). The shared types (`CompiledWorkflow`, `Run`, `ToolCall`, `Decision`, ...)
are imported by every hook process, so they are plain classes with `__slots__` and an explicit
`__init__` (keyword or positional construction and the same defaults as before), and this base
class gives them what the dataclasses gave: `==` and `hash` over the fields in order, a
readable `repr`, immutability (assigning an attribute raises `FrozenInstanceError`, an
`AttributeError`), `replace(**changes)`, pickling/copying, and `__match_args__`.

A subclass sets `__slots__` (the fields, in order) and `_fields = __slots__`, and its `__init__`
stores each field with `_set(self, name, value)`.
"""

__all__ = ["FrozenInstanceError", "Record", "_set"]

_set = object.__setattr__


class FrozenInstanceError(AttributeError):
    """Raised on an attempt to change a field of an immutable record."""


class Record:
    __slots__ = ()
    _fields: tuple = ()

    def __setattr__(self, name, value):
        raise FrozenInstanceError(f"cannot assign to field {name!r} of {type(self).__name__}")

    def __delattr__(self, name):
        raise FrozenInstanceError(f"cannot delete field {name!r} of {type(self).__name__}")

    def _astuple(self):
        return tuple([getattr(self, f) for f in self._fields])

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return self._astuple() == other._astuple()
        return NotImplemented

    def __ne__(self, other):
        if other.__class__ is self.__class__:
            return self._astuple() != other._astuple()
        return NotImplemented

    def __hash__(self):
        return hash(self._astuple())

    def __repr__(self):
        inner = ", ".join([f"{f}={getattr(self, f)!r}" for f in self._fields])
        return f"{type(self).__qualname__}({inner})"

    def __reduce__(self):  # pickle / copy / deepcopy: rebuild through __init__
        return self.__class__, self._astuple()

    def replace(self, **changes):
        """A copy with some fields changed (what `dataclasses.replace` did)."""
        values = {f: getattr(self, f) for f in self._fields}
        n = len(values)
        values.update(changes)
        if len(values) != n:
            unknown = sorted(set(changes) - set(self._fields))
            raise TypeError(f"{type(self).__name__} has no field(s) {unknown}")
        return self.__class__(**values)

    def asdict(self):
        """The fields as a shallow dict, in order."""
        return {f: getattr(self, f) for f in self._fields}
