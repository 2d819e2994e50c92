"""`loads` / `dumps` on CPython's C accelerator `_json`, without importing the `json` package.

Why: `import json` imports `re` (and with it `enum`, `functools`, the regex compiler), about
15 ms on a slow machine, for every hook process. `json` itself only uses `re` to skip
whitespace; the scanner and the encoder are C (`_json.make_scanner`, `_json.make_encoder`).
This module drives them directly, so the hook reads its stdin and the store reads its JSON
columns with the same parser `json.loads` uses, and writes with the same encoder.

Same results as `json` by construction (and property-tested against it in
tests/store/test_json.py). Anything outside the fast path (errors, a BOM, UTF-16/32 bytes,
`indent`, options not supported here, a Python without `_json`) is handed to the real `json`
module, so its error messages and behaviour are exactly `json`'s.
"""

from __future__ import annotations

try:
    import _json as _c
except ImportError:  # pragma: no cover - every CPython has it; other Pythons use json
    _c = None

__all__ = ["dumps", "loads"]

_WS = " \t\n\r"


class _ScanContext:
    """The attributes `_json.make_scanner` reads from a JSONDecoder."""

    __slots__ = (
        "memo",
        "object_hook",
        "object_pairs_hook",
        "parse_constant",
        "parse_float",
        "parse_int",
        "strict",
    )

    def __init__(self) -> None:
        self.strict = True
        self.object_hook = None
        self.object_pairs_hook = None
        self.parse_float = float
        self.parse_int = int
        self.parse_constant = {"-Infinity": float("-inf"), "Infinity": float("inf"),
                               "NaN": float("nan")}.__getitem__
        self.memo = {}


_scan = _c.make_scanner(_ScanContext()) if _c is not None else None


def loads(s):
    """`json.loads(s)` for a `str`, `bytes` or `bytearray` (no options)."""
    if _scan is None:
        return _json_module().loads(s)
    if isinstance(s, (bytes, bytearray)):
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


def _type_error(o):
    raise TypeError(f"Object of type {o.__class__.__name__} is not JSON serializable")


def dumps(obj, *, ensure_ascii: bool = True, separators=None, default=None,
          sort_keys: bool = False, allow_nan: bool = True, check_circular: bool = True,
          skipkeys: bool = False, indent=None) -> str:
    """`json.dumps(obj, ...)` for the options listed (no `indent` fast path, no `cls`)."""
    if _c is None or indent is not None:
        return _json_module().dumps(obj, ensure_ascii=ensure_ascii, separators=separators,
                                    default=default, sort_keys=sort_keys, allow_nan=allow_nan,
                                    check_circular=check_circular, skipkeys=skipkeys,
                                    indent=indent)
    enc = _c.encode_basestring_ascii if ensure_ascii else _c.encode_basestring
    if isinstance(obj, str):
        return enc(obj)
    item_sep, key_sep = separators if separators is not None else (", ", ": ")
    encode = _c.make_encoder({} if check_circular else None,
                             default if default is not None else _type_error, enc, None,
                             key_sep, item_sep, sort_keys, skipkeys, allow_nan)
    return "".join(encode(obj, 0))


def _json_module():
    import json

    return json
