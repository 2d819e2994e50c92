"""What keeps `statewright.policy` cheap to import: every `statewright-hook` process imports it.

- `lru_cache(maxsize)`: the C LRU cache `functools.lru_cache` is built on (`_functools`, a
  built-in module), without importing `functools` itself (it imports `collections`, `types`,
  `reprlib`, ...: ~5 ms on a slow machine). Same behaviour: positional and keyword arguments,
  `TypeError` on an unhashable argument, `cache_clear()`, `cache_info()`, `__wrapped__`.
  Falls back to `functools.lru_cache` where `_functools` lacks it (another interpreter).
- `LazyRe`: a regular expression compiled on first use; `re` itself is imported then (it
  imports `enum`; a Read decision never needs a regular expression).
- `CACHE_MAX_LINE`: shell lines longer than this are analysed every time, not cached.

Stdlib only, nothing imported at module level but `_functools`.
"""

from __future__ import annotations

try:
    from _functools import _lru_cache_wrapper  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - not CPython
    _lru_cache_wrapper = None

__all__ = ["CACHE_MAX_LINE", "CacheInfo", "LazyRe", "lru_cache"]

#: shell lines longer than this are analysed every time rather than kept in the caches
CACHE_MAX_LINE = 4096


class CacheInfo(tuple):
    """What `cache_info()` returns: `(hits, misses, maxsize, currsize)`, by name too."""

    __slots__ = ()

    def __new__(cls, hits: int, misses: int, maxsize: int | None, currsize: int) -> CacheInfo:
        return tuple.__new__(cls, (hits, misses, maxsize, currsize))

    hits = property(lambda self: self[0])
    misses = property(lambda self: self[1])
    maxsize = property(lambda self: self[2])
    currsize = property(lambda self: self[3])

    def __repr__(self) -> str:
        hits, misses, maxsize, currsize = self
        return (f"CacheInfo(hits={hits!r}, misses={misses!r}, maxsize={maxsize!r}, "
                f"currsize={currsize!r})")


def lru_cache(maxsize: int | None = 128):
    """`functools.lru_cache(maxsize=...)` without importing `functools`."""

    def decorate(func):
        if _lru_cache_wrapper is None:  # pragma: no cover - not CPython
            import functools

            return functools.lru_cache(maxsize=maxsize)(func)
        wrapper = _lru_cache_wrapper(func, maxsize, False, CacheInfo)
        for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
            try:
                setattr(wrapper, attr, getattr(func, attr))
            except AttributeError:  # pragma: no cover
                pass
        wrapper.__wrapped__ = func
        return wrapper

    return decorate


class LazyRe:
    """A regular expression compiled (and `re` imported) on first use: the big ones cost
    milliseconds to compile, which every `statewright-hook` process would pay even for calls
    that never need them."""

    __slots__ = ("_args", "_rx")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._args = (pattern, flags)
        self._rx = None

    def get(self):
        rx = self._rx
        if rx is None:
            import re

            rx = self._rx = re.compile(*self._args)
        return rx

    def match(self, s: str):
        return self.get().match(s)

    def fullmatch(self, s: str):
        return self.get().fullmatch(s)

    def search(self, s: str):
        return self.get().search(s)

    def split(self, s: str):
        return self.get().split(s)

    def sub(self, repl, s: str):
        return self.get().sub(repl, s)
