"""`statewright.lean`'s `lru_cache` and its loading of `_sqlite3` without `functools`.

The hook process imports neither `functools` nor what it imports (`collections`, `operator`,
`reprlib`, ...: ~3 ms, a quarter of a bare interpreter's start-up): `lean.lru_cache` is
`functools.lru_cache` on the same C cache, and `_sqlite3` is loaded with a stand-in `functools`
that holds only that `lru_cache`. These tests hold both to the real thing.
"""

from __future__ import annotations

import functools
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from statewright.lean import lru_cache

ROOT = Path(__file__).resolve().parent.parent


def _pair(maxsize: int | None, typed: bool):
    calls: list[tuple] = []

    def square(x):
        calls.append(("ours", x))
        return (x, type(x).__name__)

    def square_ref(x):
        calls.append(("ref", x))
        return (x, type(x).__name__)

    return (lru_cache(maxsize=maxsize, typed=typed)(square),
            functools.lru_cache(maxsize=maxsize, typed=typed)(square_ref), calls)


@settings(max_examples=150, deadline=None)
@given(maxsize=st.one_of(st.none(), st.integers(-2, 6)), typed=st.booleans(),
       keys=st.lists(st.one_of(st.integers(0, 8), st.sampled_from([1.0, 2.0, True])),
                     max_size=60),
       clear_at=st.integers(0, 60))
def test_lru_cache_caches_and_evicts_as_functools_does(maxsize, typed, keys, clear_at):
    ours, ref, calls = _pair(maxsize, typed)
    for i, k in enumerate(keys):
        if i == clear_at:
            ours.cache_clear()
            ref.cache_clear()
        assert ours(k) == ref(k)
        assert tuple(ours.cache_info()) == tuple(ref.cache_info())
    # the same calls reached the functions: the same keys were hits and misses
    assert [k for who, k in calls if who == "ours"] == [k for who, k in calls if who == "ref"]


def test_lru_cache_keeps_what_functools_copies_and_takes_both_spellings():
    def named(a, b=2):
        """doc"""
        return a + b

    for wrapped in (lru_cache(named), lru_cache()(named), lru_cache(maxsize=None)(named)):
        assert wrapped.__wrapped__ is named
        assert (wrapped.__name__, wrapped.__qualname__, wrapped.__doc__, wrapped.__module__) == (
            named.__name__, named.__qualname__, "doc", __name__)
        assert wrapped(1, b=3) == 4 == wrapped(1, b=3)
        assert wrapped.cache_info().hits == 1
    with pytest.raises(TypeError):
        lru_cache("many")


def _run(code: str) -> str:
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, cwd=ROOT, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_sqlite3_loads_without_functools_and_its_statement_cache_works():
    out = _run("""
        import sys
        from statewright import lean
        lean.one_call_process()
        assert "functools" not in sys.modules
        db = lean.sqlite3.connect(":memory:", cached_statements=4)
        assert "functools" not in sys.modules and "collections" not in sys.modules
        db.execute("create table t (a)")
        for i in range(50):  # more distinct statements than the cache holds, and repeats
            db.execute(f"insert into t values ({i % 7})")
            db.execute("insert into t values (?)", (i,))
        print(db.execute("select count(*), sum(a) from t").fetchone())
        import functools  # the real one afterwards, whole
        print(functools.partial is not None, hasattr(functools, "reduce"))
    """)
    assert out.splitlines() == [str((100, sum(i % 7 for i in range(50)) + sum(range(50)))),
                                "True True"]


def test_sqlite3_loads_as_usual_when_functools_is_already_there():
    assert _run("""
        import functools, sys
        from statewright import lean
        lean.one_call_process()
        db = lean.sqlite3.connect(":memory:")
        print(db.execute("select 1 + 1").fetchone()[0], sys.modules["functools"] is functools)
    """) == "2 True"


def test_a_sqlite3_that_wants_more_of_functools_gets_the_real_one(tmp_path: Path):
    """A Python whose `_sqlite3` asks `functools` for more than `lru_cache`: the stand-in's
    import fails, and `_sqlite3` is imported again with the real `functools`."""
    (tmp_path / "_sqlite3.py").write_text(
        "from functools import lru_cache, partial\nWANTS = (lru_cache, partial)\n")
    assert _run(f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        from statewright import lean
        lean.one_call_process()
        module = lean.sqlite3
        import functools
        print(module.__file__.endswith("_sqlite3.py"), module.WANTS[1] is functools.partial,
              type(sys.modules["functools"].reduce).__name__)
    """) == "True True builtin_function_or_method"


def test_sqlite3_loads_plainly_in_any_other_process():
    """Only a one-call process (one thread) gets the stand-in: in a process with threads,
    another could import `functools` while it is in place."""
    assert _run("""
        import sys
        from statewright import lean
        db = lean.sqlite3.connect(":memory:")
        print(db.execute("select 2 * 3").fetchone()[0], hasattr(sys.modules["functools"], "reduce"))
    """) == "6 True"


def test_environ_get_reads_what_os_environ_holds(monkeypatch: pytest.MonkeyPatch) -> None:
    """`lean.environ_get` answers what `os.environ` holds, as it keeps it (bytes on POSIX), and
    sees every change made through `os.environ` at once."""
    import os

    from statewright.lean import environ_get

    monkeypatch.setenv("SW_LEAN_PROBE", "é/x")
    assert environ_get("SW_LEAN_PROBE") == os.environb[b"SW_LEAN_PROBE"]
    os.environ["SW_LEAN_PROBE"] = "other"
    assert environ_get("SW_LEAN_PROBE") == b"other"
    monkeypatch.delenv("SW_LEAN_PROBE")
    assert environ_get("SW_LEAN_PROBE") is None
