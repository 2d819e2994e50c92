"""A check's frozen test, answered by bytecode the agent planted beside it.

The check's `read_only` paths are frozen by their content, and the state's are bound read-only
under the kernel sandbox; a test module kept beside the code (`src/test_calc.py`, frozen by
`**/test_*.py`) is bound as a file, but its bytecode cache (`src/__pycache__/`) is the
agent's: code a sandboxed `pytest` runs (the module under test, which the agent may edit) can
write there the cached, assertion-rewritten module pytest reads instead of the source whenever
its header names the source (its hash; its time and size before pytest 9). The check, run by statewright itself, then ran the
agent's `def test_add(): pass`, and the guard passed on a bug. Driven through the real hook, the
real `bash -c` of the rewritten line (the kernel sandbox) and the real CLI's transition, which
runs the real pytest.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import clean_env

from statewright.sandbox import probe

from .test_checks import BUGGY, CheckProject, moved, refused

pytestmark = pytest.mark.e2e

COLOCATED = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
#: the module under test, as the agent edits it: still wrong, and on import it writes the
#: cached form of its frozen test, compiled from a test that asserts nothing
PLANT = '''
import importlib.util
import marshal
import os
import sys

_test = os.path.join(os.path.dirname(os.path.abspath(__file__)), "test_calc.py")
try:
    import pytest as _pytest

    _st = os.stat(_test)
    _tag = sys.implementation.cache_tag + "-pytest-" + _pytest.__version__
    _code = compile("def test_add():\\n    pass\\n", _test, "exec")
    if int(_pytest.__version__.split(".")[0]) >= 9:  # (a hash of the source)
        with open(_test, "rb") as _f:
            _head = b"\\x03\\0\\0\\0" + importlib.util.source_hash(_f.read())
    else:  # (its time and size)
        _head = (bytes(4) + (int(_st.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little")
                 + (_st.st_size & 0xFFFFFFFF).to_bytes(4, "little"))
    _data = importlib.util.MAGIC_NUMBER + _head + marshal.dumps(_code)
    _dir = os.path.join(os.path.dirname(_test), "__pycache__")
    os.makedirs(_dir, exist_ok=True)
    with open(os.path.join(_dir, "test_calc." + _tag + ".pyc"), "wb") as _f:
        _f.write(_data)
except Exception:
    pass
'''


@pytest.fixture
def proj(tmp_path: Path) -> CheckProject:
    p = CheckProject(tmp_path / "proj")
    for f in (p.root / "tests").iterdir():
        f.unlink()
    (p.root / "tests").rmdir()
    (p.root / "src" / "test_calc.py").write_text(COLOCATED)
    return p


def run_line(p: CheckProject, line: str) -> subprocess.CompletedProcess:
    return p.run_line(line, clean_env(CLAUDE_PROJECT_DIR=str(p.root), PATH=p.path_env),
                      timeout=300)


def test_bytecode_planted_beside_a_frozen_test_is_not_what_the_check_runs(
        proj: CheckProject) -> None:
    if probe.tier().kind == "none":
        pytest.fail(f"this machine has no kernel tier: {probe.tier().why}")
    proj.start("verified-fix")
    proj.edit("src/calc.py", BUGGY, BUGGY + PLANT)
    r = run_line(proj, "pytest -q")
    assert "1 failed" in r.stdout, r.stdout  # (the agent's own run: its planting run)
    planted = list((proj.root / "src" / "__pycache__").glob("test_calc.*-pytest-*.pyc"))
    assert planted, "the attack did not plant its bytecode"
    # the frozen test is unchanged; the check must run it, not the planted bytecode
    assert (proj.root / "src" / "test_calc.py").read_text() == COLOCATED
    refused(proj.send("DONE"), "GUARD_REJECTED")
    outcome = proj.checks_in_history()[-1]["data"]
    assert not outcome["ok"] and outcome["summary"]["failures"] == 1, outcome
    # the fix, made for real, passes: the check compiles what it runs afresh
    proj.edit("src/calc.py", BUGGY + PLANT, "def add(a, b):\n    return a + b\n")
    moved(proj.send("DONE"), "done")


def test_a_check_still_passes_and_fails_on_the_source(proj: CheckProject) -> None:
    """The legitimate run: a failing suite fails the check, the fixed one passes it (the
    agent's own pytest runs leave their usual bytecode behind)."""
    proj.start("verified-fix")
    run_line(proj, "pytest -q")
    refused(proj.send("DONE"), "GUARD_REJECTED")
    proj.edit("src/calc.py", BUGGY, "def add(a, b):\n    return a + b\n")
    run_line(proj, "pytest -q")
    moved(proj.send("DONE"), "done")


def test_without_the_sandbox_the_check_compiles_afresh(proj: CheckProject) -> None:
    """Where a check runs without the kernel sandbox (no tier on the machine), the planted
    bytecode is not read either: every module is compiled into a directory of the check's."""
    from statewright.definition.compiled import Check
    from statewright.runtime import checks

    (proj.root / "src" / "calc.py").write_text(BUGGY + PLANT)
    env = clean_env(PATH=proj.path_env)
    planting = subprocess.run(["pytest", "-q", "-p", "no:cacheprovider"], cwd=proj.root,
                              env=env, capture_output=True, timeout=300)
    assert b"1 failed" in planting.stdout, planting.stdout
    assert list((proj.root / "src" / "__pycache__").glob("test_calc.*-pytest-*.pyc"))
    fooled = subprocess.run(["pytest", "-q", "-p", "no:cacheprovider"], cwd=proj.root,
                            env=env, capture_output=True, timeout=300)
    assert b"1 passed" in fooled.stdout, fooled.stdout  # (what a plain run of it reads)
    check = Check(name="tests", run="pytest -q -p no:cacheprovider --junitxml=r.xml",
                  read_only=("**/test_*.py",), report="r.xml")
    frozen = checks.fingerprint(str(proj.root), check.read_only)
    outcome = checks.run_check(check, str(proj.root), frozen=frozen, prefix=None, environ=env)
    assert not outcome["ok"] and outcome["summary"]["failures"] == 1, outcome
    assert outcome["sandbox"] == "none"
