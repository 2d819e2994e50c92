"""Python: which command names are a Python interpreter (`python3.12`, `pypy3`, the `py`
launcher, a debug build), wherever they are found (`/usr/bin/python3`, `PYTHON3`). `python -m
MODULE` carries the risks of MODULE's own entry (`programs._module_risks`)."""

from __future__ import annotations

from ..types import program_name
from .spec import Example, Program

PYTHON = Program(
    (), "the Python interpreter, by any of its names",
    name_pattern=r"(?:python|pypy)[0-9.]*(?:[-_]?dbg)?|py",
    examples=(
        Example("python -c pass"),
        Example("python3 -m pytest"),
        Example("python -m pytest -p evil", runs_code=True),  # the module's own entry
        Example("python3 -mpip install -e .", runs_code=True),
        Example("python3.12 script.py"),
        Example("pypy3 -V"),
        Example("python3-dbg -c pass"),
        Example("python3.11_dbg -c pass"),
        Example("py -3 -c pass"),
        Example("/usr/bin/python3 -c pass"),
        Example(".venv/bin/Python3 -V"),
        Example("pytest -q", named=False),
        Example("py.test -q", named=False),
        Example("ipython", named=False),
        Example("pythonw x.py", named=False),
        Example("pyright .", named=False),
    ),
)

_VERSION_CHARS = frozenset("0123456789.")


def _python_family(base: str) -> bool:
    """Whether a lower-cased base name is in `PYTHON.name_pattern`'s family (read by hand: a
    hook process would otherwise compile the pattern for every line that names `pytest`;
    `tests/policy/test_programs.py` holds the two to the same answers)."""
    if base == "py":
        return True
    rest = base[6:] if base.startswith("python") else base[4:] if base.startswith("pypy") \
        else None
    if rest is None:
        return False
    if rest.endswith("dbg"):
        rest = rest[:-3]
        if rest[-1:] in ("-", "_"):
            rest = rest[:-1]
    return _VERSION_CHARS.issuperset(rest)


def is_python(name: str) -> bool:
    """Whether the command `name` (a bare name or a path) runs a Python interpreter."""
    if "y" not in name and "Y" not in name:
        return False  # every name of the family has a `y` (the common case: not Python)
    known = _IS_PYTHON.get(name)
    if known is None:
        base = program_name(name).lower()
        known = _python_family(base)
        if len(_IS_PYTHON) >= 1024:
            _IS_PYTHON.clear()
        _IS_PYTHON[name] = known
    return known


_IS_PYTHON: dict[str, bool] = {}  # `is_python` by name (asked a dozen times per line)
