"""The process hook's start-up tricks, all of them, in one place (DESIGN section 1).

`statewright-hook` is a new Python process for every tool call, so everything it imports is
paid on every call (DESIGN section 8: a non-Bash decision within 2.0x a bare `python -c pass`).
What buys that start-up time lives here; the rest of statewright is ordinary Python that imports
these names. `tests/hook/test_imports.py` lists every module the hook may import.

- `TYPE_CHECKING`: False at run time without importing `typing` (~10 ms); type checkers treat
  any name `TYPE_CHECKING` as true.
- `Record`: the base of the small immutable value types (`CompiledWorkflow`, `Run`, `ToolCall`,
  `Decision`, ...), instead of `dataclasses`, which imports `inspect`, `ast`, `dis`, `tokenize`
  (~18 ms) and builds each class with `exec` (1-2 ms apiece).
- `loads` / `dumps`: `json` on CPython's C accelerator `_json` without the `json` package, which
  imports `re` (with `enum` and the regex compiler, ~15 ms). Same results by construction,
  property-tested against `json`; anything off the fast path is handed to `json` itself.
- `sqlite3`: the C module `_sqlite3`; the `sqlite3` package adds only datetime adapters (we store
  none) and imports `datetime` (~3 ms). `thread_local`, `allocate_lock`: `_thread`'s, without
  `threading`.
- `LazyRe`: a regular expression compiled, and `re` imported, on first use; `fnmatchcase`:
  `fnmatch`'s, imported on first use.
- `load_extension(package)`: tree-sitter's C extensions without their packages' `__init__`
  (`tree_sitter` imports `typing`; `tree_sitter_bash` imports `importlib.resources`, ~11 ms).
- `lazy_attributes(package, table)`: a package `__getattr__` that imports a submodule the first
  time one of its names is used (the engine's machine, the definition pipeline, the proxy).
- `exit_now(status)`: end the hook process once its answer is written, without the
  interpreter's teardown (module and object finalisation) and without SQLite's checkpoint on
  closing the last connection, which copies the write-ahead log into the database and syncs it
  to disk: milliseconds per tool call. Committed transactions are already in the log: a later
  connection reads them and the next automatic checkpoint moves them, and a crashed or killed
  process loses nothing. With `synchronous=NORMAL` a power cut may lose the commits since the
  last checkpoint (docs/design-decisions.md, "Durability"); the log and its index stay beside
  the store between calls.

- `compact_dumps(default)`: compact JSON with its C encoder built once (the store writes JSON
  on every tool call; building the encoder costs as much as encoding a small dict).

- `one_call_process()`: a hook process that decides alone says so: `_sqlite3` without
  `functools`, and no cyclic garbage collection (it would only run during the imports, to find
  nothing).

- `field_setters(cls)`: each field's slot descriptor setter, for a record built on every
  decision (`policy.types.Decision`): half the cost of `set_field`, which looks the descriptor
  up along the class's MRO for every field.

- `hmac_sha256` / `sha256` / `same_bytes` / `unix_request`: HMAC-SHA-256 (RFC 2104), a
  constant-time comparison and a Unix-socket round trip on the C modules `_sha256` and
  `_socket`, for the hook process that hands its input to the resident hook server
  (`statewright.hook.resident`): `hmac` and `hashlib` load OpenSSL (~3 ms), `socket` imports
  `selectors` and `enum`.

- `lru_cache`: `functools.lru_cache` on its C core (`_functools._lru_cache_wrapper`) without
  `functools`, which imports `collections`, `operator`, `reprlib`, `keyword` and `types` (~3 ms,
  a quarter of a bare interpreter's start-up). `_sqlite3` imports `functools` only to take its
  `lru_cache` for the statement cache, so in a hook process that decides alone
  (`one_call_process`: one thread, so nothing else imports meanwhile), while `_sqlite3` loads,
  `sys.modules["functools"]` is a module holding just this `lru_cache`, removed once `_sqlite3`
  has it (`_load_sqlite3`); when that fails (a Python whose `_sqlite3` wants more of
  `functools`), the real `functools` is imported and nothing else changes. Every other process
  imports `_sqlite3` plainly.

- `environ_get(key)`: an environment variable's value as `os.environ` keeps it (bytes on
  POSIX: its own mapping, `os.environ._data`), without `os.environ.get`'s encoding of the name,
  decoding of the value and KeyError for an unset one (a microsecond; the runtime asks twice
  per decision). Every change made through `os.environ` lands in that mapping. Elsewhere
  (Windows), `os.environ.get` itself.

Stdlib only; nothing is imported at module level but the C modules `_json`, `_thread` and
`_functools` (and `os`, which the interpreter has loaded before any module). `sqlite3` is
loaded when first asked for (a module `__getattr__`): the hook process that only forwards its
input to the resident hook server (`statewright.hook.resident`) never opens the store.
"""

from __future__ import annotations

import _functools  # type: ignore[import-not-found]  # (no stub: the C half of functools)
import _json as _cjson
import _thread

TYPE_CHECKING = False
if TYPE_CHECKING:
    import _sqlite3 as sqlite3
    import re
    from collections.abc import Callable
    from types import ModuleType
    from typing import Any

__all__ = [
    "TYPE_CHECKING", "FrozenInstanceError", "LazyRe", "Record", "allocate_lock", "compact_dumps",
    "dumps", "environ_get", "exit_now", "field_setters", "fnmatchcase", "hmac_sha256",
    "lazy_attributes",
    "load_extension", "loads", "lru_cache", "one_call_process", "same_bytes", "set_field",
    "sha256", "sqlite3", "thread_local", "unix_request",
]

thread_local = _thread._local
allocate_lock = _thread.allocate_lock


def __getattr__(name: str) -> Any:
    # `sqlite3` (the C module `_sqlite3`) on first use, then kept as a module global
    if name != "sqlite3":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = _load_sqlite3()
    globals()["sqlite3"] = module
    return module


def _load_sqlite3() -> ModuleType:
    """`_sqlite3`, loaded with a `functools` that holds only `lru_cache` (see the docstring)."""
    import sys

    modules = sys.modules
    # (only in a one-call process, which runs no other thread: another thread could import
    # `functools` meanwhile and be handed the stand-in)
    if not _one_call or "functools" in modules or "_sqlite3" in modules:
        import _sqlite3

        return _sqlite3
    stand_in = type(sys)("functools")
    stand_in.lru_cache = lru_cache  # type: ignore[attr-defined]
    modules["functools"] = stand_in
    try:
        import _sqlite3
    except Exception:  # (it wants more of functools than lru_cache: the real one, below)
        pass
    finally:
        if modules.get("functools") is stand_in:
            del modules["functools"]
    import _sqlite3

    return _sqlite3


# -- functools.lru_cache ------------------------------------------------------------------------

class _CacheInfo(tuple):
    """What `cache_info()` answers: (hits, misses, maxsize, currsize), as functools' does."""

    __slots__ = ()

    def __new__(cls, hits: int, misses: int, maxsize: int | None, currsize: int) -> _CacheInfo:
        return tuple.__new__(cls, (hits, misses, maxsize, currsize))

    @property
    def hits(self) -> int:
        return self[0]

    @property
    def misses(self) -> int:
        return self[1]

    @property
    def maxsize(self) -> int | None:
        return self[2]

    @property
    def currsize(self) -> int:
        return self[3]


def _cached(function: Any, maxsize: int | None, typed: bool) -> Any:
    wrapper = _functools._lru_cache_wrapper(function, maxsize, typed, _CacheInfo)
    for attribute in ("__module__", "__name__", "__qualname__", "__doc__"):
        try:
            setattr(wrapper, attribute, getattr(function, attribute))
        except AttributeError:  # (a callable without a name: a sqlite3 connection)
            pass
    wrapper.__wrapped__ = function
    return wrapper


if TYPE_CHECKING:
    from functools import lru_cache as lru_cache
else:
    def lru_cache(maxsize=128, typed=False):
        """`functools.lru_cache`, same arguments and the same C cache (`@lru_cache`,
        `@lru_cache(maxsize=None)`, `cache_clear()`, `cache_info()`, `__wrapped__`)."""
        if callable(maxsize) and isinstance(typed, bool):
            return _cached(maxsize, 128, typed)
        if maxsize is not None and not isinstance(maxsize, int):
            raise TypeError("Expected first argument to be an integer, a callable, or None")
        if isinstance(maxsize, int) and maxsize < 0:
            maxsize = 0
        return lambda function: _cached(function, maxsize, typed)


# -- records ----------------------------------------------------------------------------------

#: how a record's `__init__` stores a field (records refuse attribute assignment)
set_field = object.__setattr__


class FrozenInstanceError(AttributeError):
    """Raised on an attempt to change a field of an immutable record."""


class Record:
    """What the dataclasses gave the value types: `==` and `hash` over the fields in order, a
    readable `repr`, immutability, `replace(**changes)`, pickling and copying.

    A subclass sets `__slots__` (its fields, in order) and `_fields = __slots__`, annotates each
    field in its body (for type checkers), and stores each field in `__init__` with
    `set_field(self, name, value)`."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r} of {type(self).__name__}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r} of {type(self).__name__}")

    def _astuple(self) -> tuple[Any, ...]:
        return tuple([getattr(self, f) for f in self._fields])

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            assert isinstance(other, Record)
            return self._astuple() == other._astuple()
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            assert isinstance(other, Record)
            return self._astuple() != other._astuple()
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._astuple())

    def __repr__(self) -> str:
        inner = ", ".join([f"{f}={getattr(self, f)!r}" for f in self._fields])
        return f"{type(self).__qualname__}({inner})"

    def __reduce__(self) -> tuple[Any, ...]:  # pickle / copy / deepcopy: rebuild via __init__
        return self.__class__, self._astuple()

    def replace(self, **changes: Any) -> Any:
        """A copy with some fields changed (what `dataclasses.replace` did)."""
        values = {f: getattr(self, f) for f in self._fields}
        n = len(values)
        values.update(changes)
        if len(values) != n:
            unknown = sorted(set(changes) - set(self._fields))
            raise TypeError(f"{type(self).__name__} has no field(s) {unknown}")
        return self.__class__(**values)

    def asdict(self) -> dict[str, Any]:
        """The fields as a shallow dict, in order."""
        return {f: getattr(self, f) for f in self._fields}


def field_setters(cls: type[Record]) -> tuple[Callable[[Any, Any], None], ...]:
    """The `__set__` of each field's slot descriptor, in `_fields` order."""
    return tuple(getattr(cls, f).__set__ for f in cls._fields)


# -- JSON -------------------------------------------------------------------------------------

_WS = " \t\n\r"


class _ScanContext:
    """The attributes `_json.make_scanner` reads from a `json.JSONDecoder`."""

    __slots__ = ("memo", "object_hook", "object_pairs_hook", "parse_constant", "parse_float",
                 "parse_int", "strict")

    def __init__(self) -> None:
        self.strict = True
        self.object_hook = None
        self.object_pairs_hook = None
        self.parse_float = float
        self.parse_int = int
        self.parse_constant = {"-Infinity": float("-inf"), "Infinity": float("inf"),
                               "NaN": float("nan")}.__getitem__
        self.memo: dict[str, str] = {}


# (the C scanner reads these attributes of any object; typeshed asks for a JSONDecoder)
_scan = _cjson.make_scanner(_ScanContext())  # type: ignore[arg-type]


def _json_module() -> ModuleType:
    import json

    return json


def loads(s: str | bytes | bytearray) -> Any:
    """`json.loads(s)` for a `str`, `bytes` or `bytearray` (no options)."""
    if isinstance(s, bytes | bytearray):
        # json.loads sniffs UTF-16/32 and BOMs; UTF-8 without a BOM is the only fast case
        if len(s) >= 2 and (not s[0] or not s[1] or s[:3] == b"\xef\xbb\xbf"
                            or s[:2] in (b"\xff\xfe", b"\xfe\xff")):
            return _json_module().loads(s)
        try:
            s = s.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            return _json_module().loads(s)
    elif not isinstance(s, str):
        return _json_module().loads(s)  # raises json's TypeError
    n = len(s)
    i = 0
    while i < n and s[i] in _WS:
        i += 1
    try:
        obj, end = _scan(s, i)
    except BaseException:  # StopIteration, JSONDecodeError, RecursionError...: json words it
        return _json_module().loads(s)
    if end != n:
        j = end
        while j < n and s[j] in _WS:
            j += 1
        if j != n:
            return _json_module().loads(s)  # "Extra data" error, as json reports it
    return obj


def compact_dumps(default: Callable[[Any], Any]) -> Callable[[Any], str]:
    """`dumps(obj, separators=(",", ":"), default=default, check_circular=False)` as one
    function whose C encoder is built once (building it costs about as much as encoding a small
    dict; the store writes JSON on every tool call). Without the circular check a structure
    that contains itself fails with RecursionError; JSON-born data never does."""
    enc = _cjson.encode_basestring_ascii
    encode = _cjson.make_encoder(None, default, enc, None, ":", ",", False, False, True)

    def compact(obj: Any) -> str:
        if isinstance(obj, str):
            return enc(obj)
        return "".join(encode(obj, 0))

    return compact


def _type_error(o: object) -> Any:
    raise TypeError(f"Object of type {o.__class__.__name__} is not JSON serializable")


def dumps(obj: Any, *, ensure_ascii: bool = True,
          separators: tuple[str, str] | None = None,
          default: Callable[[Any], Any] | None = None, sort_keys: bool = False,
          allow_nan: bool = True, check_circular: bool = True, skipkeys: bool = False,
          indent: int | str | None = None) -> str:
    """`json.dumps(obj, ...)` for the options listed (`indent` goes to `json`; no `cls`)."""
    if indent is not None:
        return _json_module().dumps(obj, ensure_ascii=ensure_ascii, separators=separators,
                                    default=default, sort_keys=sort_keys, allow_nan=allow_nan,
                                    check_circular=check_circular, skipkeys=skipkeys,
                                    indent=indent)
    enc = _cjson.encode_basestring_ascii if ensure_ascii else _cjson.encode_basestring
    if isinstance(obj, str):
        return enc(obj)
    item_sep, key_sep = separators if separators is not None else (", ", ": ")
    encode = _cjson.make_encoder({} if check_circular else None,
                                 default if default is not None else _type_error, enc, None,
                                 key_sep, item_sep, sort_keys, skipkeys, allow_nan)
    return "".join(encode(obj, 0))


# -- regular expressions and modules, on first use ---------------------------------------------

def fnmatchcase(name: str, pattern: str) -> bool:
    """`fnmatch.fnmatchcase`, with `fnmatch` (which imports `re`, ~6 ms) loaded on first use:
    only a glob or a partly dynamic word of a shell line needs it."""
    import fnmatch

    return fnmatch.fnmatchcase(name, pattern)


class LazyRe:
    """A regular expression compiled (and `re` imported) on first use: the big ones cost
    milliseconds to compile, which every hook process would pay even for calls that never
    need them."""

    __slots__ = ("_args", "_rx")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._args = (pattern, flags)
        self._rx: re.Pattern[str] | None = None

    def get(self) -> re.Pattern[str]:
        rx = self._rx
        if rx is None:
            import re

            rx = self._rx = re.compile(*self._args)
        return rx

    def match(self, s: str) -> re.Match[str] | None:
        return self.get().match(s)

    def fullmatch(self, s: str) -> re.Match[str] | None:
        return self.get().fullmatch(s)

    def search(self, s: str) -> re.Match[str] | None:
        return self.get().search(s)

    def split(self, s: str) -> list[str | Any]:
        return self.get().split(s)

    def sub(self, repl: str | Callable[[re.Match[str]], str], s: str) -> str:
        return self.get().sub(repl, s)


def lazy_attributes(package: str, where: dict[str, str]) -> Callable[[str], Any]:
    """A module-level `__getattr__` for `package`: the name `n` is `package.<where[n]>.n`,
    imported on first use and then kept in the package's namespace."""

    def __getattr__(name: str) -> Any:
        sub = where.get(name)
        if sub is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        import sys
        from importlib import import_module

        value = getattr(import_module(f"{package}.{sub}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__


def load_extension(package: str, name: str = "_binding", defer: tuple[str, ...] = ()) -> Any:
    """The C extension module `package.name`, loaded without running `package/__init__.py`
    (the imported package's own when it is already imported).

    It is found where an import would find it (the first `package` directory on `sys.path`)
    and registered under its own name, so a later `import package` shares it. `defer`: modules
    the extension imports as it loads only to keep functions of theirs for later (tree-sitter's
    binding keeps `re.compile` for its queries' `#match?`: importing `re` costs a hook process
    ~2.5 ms): while it loads, each is a stand-in whose functions import the real module when
    first called (`_deferred`); only in a process with one thread (a hook process), where no
    other code can import the stand-in meanwhile."""
    import sys

    full = f"{package}.{name}"
    mod = sys.modules.get(full)
    if mod is not None:
        return mod
    if package in sys.modules:  # imported already: use what it imported
        return getattr(sys.modules[package], name, None) or __import__(full, fromlist=["_"])
    import _imp
    import os

    bootstrap = sys.modules["_frozen_importlib"]
    external = sys.modules["_frozen_importlib_external"]
    for entry in sys.path:
        directory = os.path.join(entry or os.getcwd(), package)
        if not os.path.isfile(os.path.join(directory, "__init__.py")):
            continue  # (a zip entry, a namespace package, ...: not this package)
        # the first extension suffix present wins, as in the import system's file finder
        for suffix in _imp.extension_suffixes():
            path = os.path.join(directory, name + suffix)
            if os.path.isfile(path):
                loader = external.ExtensionFileLoader(full, path)
                spec = bootstrap.ModuleSpec(full, loader, origin=path)
                spec.has_location = True  # (sets `__file__`, as an import would)
                # (one thread only: another could `import re` and get the stand-in)
                threading = sys.modules.get("threading")
                alone = threading is None or threading.active_count() == 1
                stand_ins = [m for m in defer if m not in sys.modules] if alone else []
                for m in stand_ins:
                    sys.modules[m] = _deferred(m)
                try:
                    mod = bootstrap.module_from_spec(spec)
                    loader.exec_module(mod)
                finally:
                    for m in stand_ins:
                        if getattr(sys.modules.get(m), "_deferred", False):
                            del sys.modules[m]
                sys.modules[full] = mod
                return mod
        break  # the package found first has no extension: let the import system decide
    raise ImportError(f"no {full} extension found on sys.path")


def _deferred(name: str) -> Any:
    """A stand-in for module `name` (see `load_extension`): each attribute asked of it is a
    function that imports the real module when called, and calls the real function."""
    import sys

    stand_in = type(sys)(name)
    stand_in._deferred = True  # type: ignore[attr-defined]

    def attribute(attr: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            if getattr(sys.modules.get(name), "_deferred", False):
                del sys.modules[name]  # (still the stand-in: the real module is imported)
            return getattr(__import__(name), attr)(*args, **kwargs)

        return call

    stand_in.__getattr__ = attribute  # type: ignore[method-assign]  # (PEP 562)
    return stand_in


def sha256(data: bytes = b"") -> Any:
    """A SHA-256 hash object (`hashlib.sha256` without `hashlib`)."""
    from _sha256 import sha256 as _sha  # type: ignore[import-not-found]  # (C; no stubs)

    return _sha(data)


def hmac_sha256(key: bytes, msg: bytes) -> bytes:
    """HMAC-SHA-256 (RFC 2104), checked against `hmac` by the tests."""
    block = (key if len(key) <= 64 else sha256(key).digest()).ljust(64, b"\0")
    inner = sha256(bytes(b ^ 0x36 for b in block) + msg).digest()
    return sha256(bytes(b ^ 0x5C for b in block) + inner).digest()


def same_bytes(a: bytes, b: bytes) -> bool:
    """Whether `a == b`, in a time that does not depend on where they differ
    (`hmac.compare_digest` without `hmac`)."""
    if len(a) != len(b):
        return False
    diff = 0
    for x, y in zip(a, b, strict=True):
        diff |= x ^ y
    return diff == 0


def unix_request(path: str, data: bytes, timeout: float) -> bytes:
    """Send `data` over a Unix stream socket at `path`, end the sending side, and return all
    that comes back until the other side closes (`socket` imports `selectors` and `enum`; the
    C module `_socket` is all this needs). Raises OSError: FileNotFoundError or
    ConnectionRefusedError when nothing listens there, TimeoutError past `timeout`."""
    import _socket

    s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        s.settimeout(timeout)
        s.connect(path)
        s.sendall(data)
        s.shutdown(_socket.SHUT_WR)
        chunks: list[bytes] = []
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    finally:
        s.close()


_one_call = False


def one_call_process() -> None:
    """Declares this process one that decides one call, in one thread, and ends
    (`statewright-hook` deciding alone): `_sqlite3` is loaded without `functools` (see the
    module's docstring), and no cyclic garbage collection runs. Its collections would run while
    the modules are imported (each import allocates enough to start one) and find next to
    nothing to free; whatever cycles a decision leaves go with the process (`exit_now`): 2-4% of
    such a process's instructions."""
    global _one_call
    import gc

    gc.disable()
    _one_call = True


def exit_now(status: int) -> None:
    """End the process with `status` now: flush the standard streams, then `os._exit` (no
    teardown, no checkpoint of the store's log on close; see the module's docstring)."""
    import os
    import sys

    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except BaseException:  # (a closed or broken stream: nothing more can be said on it)
            pass
    os._exit(status)


# -- the environment as os.environ keeps it -----------------------------------------------------

def _environ_getter() -> Callable[[str], object]:
    import os

    data = getattr(os.environ, "_data", None)
    if os.name != "posix" or not isinstance(data, dict):  # pragma: no cover - (Windows)
        return os.environ.get
    encoded: dict[str, bytes] = {}

    def get(key: str) -> object:
        k = encoded.get(key)
        if k is None:
            k = encoded[key] = key.encode()
        return data.get(k)

    return get


#: `environ_get(key)`: the value (bytes on POSIX, None when unset); see the docstring
environ_get = _environ_getter()
start_thread, new_lock = _thread.start_new_thread, _thread.allocate_lock  # (no `threading`)
