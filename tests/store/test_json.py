"""statewright.lean's JSON against the stdlib json module: same text out, same values in, same errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from statewright import lean as _json

SETTINGS = settings(max_examples=150, deadline=None)

scalars = (st.none() | st.booleans() | st.integers() | st.text()
           | st.floats(allow_nan=False, allow_infinity=False))
values = st.recursive(
    scalars,
    lambda kids: st.lists(kids, max_size=5) | st.dictionaries(st.text(max_size=8), kids, max_size=5),
    max_leaves=25,
)
# keys json accepts besides str (int, float, bool, None), for the encoder
odd_keys = st.dictionaries(st.none() | st.booleans() | st.integers()
                           | st.floats(allow_nan=False) | st.text(max_size=4), scalars, max_size=6)
options = st.fixed_dictionaries({}, optional={
    "ensure_ascii": st.booleans(),
    "separators": st.sampled_from([(",", ":"), (", ", ": "), (",", ": ")]),
    "sort_keys": st.booleans(),
})


def _outcome(fn, *args, **kw):
    try:
        return "ok", fn(*args, **kw)
    except Exception as exc:
        return type(exc).__name__, str(exc)


def _same(a, b) -> bool:
    """Outcomes are equal, `NaN` included (`float("nan") != float("nan")`, yet both parsers
    must give a NaN for the text `NaN`): compare by repr, which spells every value exactly."""
    return repr(a) == repr(b)


@SETTINGS
@given(values, options)
def test_dumps_is_json_dumps(value, opts) -> None:
    assert _outcome(_json.dumps, value, **opts) == _outcome(json.dumps, value, **opts)


@SETTINGS
@given(odd_keys, options)
def test_dumps_converts_keys_like_json(value, opts) -> None:
    assert _outcome(_json.dumps, value, **opts) == _outcome(json.dumps, value, **opts)


@SETTINGS
@given(values, options)
def test_round_trip(value, opts) -> None:
    text = _json.dumps(value, **opts)
    assert _json.loads(text) == json.loads(text) == value
    assert _json.loads(text.encode("utf-8")) == value  # the hook reads bytes from stdin


@SETTINGS
@given(st.text(max_size=40))
def test_loads_arbitrary_text_like_json(text) -> None:
    assert _same(_outcome(_json.loads, text), _outcome(json.loads, text))


@SETTINGS
@given(st.binary(max_size=40))
def test_loads_arbitrary_bytes_like_json(raw) -> None:
    assert _same(_outcome(_json.loads, raw), _outcome(json.loads, raw))


@pytest.mark.parametrize("text", [
    "", " ", "{", "[1,]", '{"a" 1}', "[1] x", "\ufeff[1]", "01", "nul", '"\\x"', "[1]\n\t ",
    "NaN", "-Infinity", '"\ud800"', "1e400", "[" * 50 + "]" * 50, '{"a": 1, "a": 2}',
])
def test_edge_cases_like_json(text: str) -> None:
    assert _same(_outcome(_json.loads, text), _outcome(json.loads, text))


@pytest.mark.parametrize("raw", [b"\xef\xbb\xbf[1]", "[1, 2]".encode("utf-16"),
                                 "[1]".encode("utf-32-le"), b"\xff\xfe", b'"\xed\xa0\x80"'])
def test_encoded_bytes_like_json(raw: bytes) -> None:
    assert _same(_outcome(_json.loads, raw), _outcome(json.loads, raw))


def test_dumps_errors_and_options_like_json() -> None:
    loop: list = []
    loop.append(loop)
    for value, kw in [(loop, {}), ({1j: 1}, {}), ({1j: 1}, {"skipkeys": True}), (object(), {}),
                      (float("nan"), {"allow_nan": False}), ({"b": 1, "a": [1.5]}, {"indent": 2}),
                      ({"x": object()}, {"default": repr}), ({1: 2, "1": 3}, {})]:
        o = _outcome(_json.dumps, value, **kw)
        j = _outcome(json.dumps, value, **kw)
        if kw.get("default") is repr:  # object addresses are the same object's
            assert o == j
        else:
            assert o == j, (value, kw)


def test_importing_it_does_not_import_json_or_re() -> None:
    code = ("import sys, statewright.lean as j; j.loads(j.dumps({'a': [1, 2.5, None]})); "
            "print(' '.join(sorted(sys.modules)))")
    mods = set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              check=True, timeout=60).stdout.split())
    assert not mods & {"json", "re", "json.decoder", "enum"}
