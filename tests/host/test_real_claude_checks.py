"""The real Claude Code CLI walks `tdd-feature` (the shipped example), for both hook forms: the
run reaches `complete` only when statewright's own run of the suite really passes. The model
(scripted: standin.py) tries the shortcuts first: RED with no test written, PASS before the
code exists, claims in event data; each is refused with the check's outcome. Everything else is
real: the host, its hooks, the proxy, pytest, the store on disk."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import EXAMPLES, VENV_BIN

from .harness import FORMS, SW, Host
from .standin import Text, ToolUse

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]


def _transition(event: str, data: dict | None = None) -> ToolUse:
    return ToolUse(SW + "statewright_transition",
                   {"event": event, **({"data": data} if data is not None else {})})


@pytest.mark.parametrize("form", FORMS)
def test_tdd_feature_completes_only_when_the_suite_really_passes(tmp_path: Path,
                                                                 form: str) -> None:
    root = tmp_path / "proj"
    tdd = json.loads((EXAMPLES / "tdd-feature.json").read_text())
    host = Host(root, form, workflows={"tdd-feature": tdd},
                path=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    (root / "src").mkdir()
    (root / "src" / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (root / "tests").mkdir()
    (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["src"]\n')
    host.start("tdd-feature")
    test_file = str(root / "tests" / "test_double.py")
    s = host.run([
        _transition("READY", {"failing_test": "test_double"}),
        _transition("TEST_WRITTEN"),
        _transition("RED", {"failing_test": "test_double", "test_result": "fail"}),  # no test
        _transition("GREEN_ALREADY"),
        ToolUse("Write", {"file_path": test_file, "content":
                          "from calc import double\n\n\ndef test_double():\n"
                          "    assert double(4) == 8\n"}),
        _transition("TEST_WRITTEN"),
        ToolUse("Bash", {"command": "pytest -q"}),  # the agent's own run: red
        _transition("RED", {"failing_test": "test_double"}),
        _transition("DONE"),
        _transition("PASS", {"test_result": "pass"}),  # claimed before the code exists
        _transition("FAIL"),
        ToolUse("Edit", {"file_path": str(root / "src" / "calc.py"),
                         "old_string": "    return a + b\n",
                         "new_string": "    return a + b\n\n\ndef double(x):\n"
                                       "    return 2 * x\n"}),
        _transition("DONE"),
        _transition("PASS"),
        _transition("CLEAN"),
        Text("finished"),
    ])
    assert s.returncode == 0, s.stderr
    r = s.results()
    names = [x[0] for x in r]
    assert len(r) == 15, names
    # RED with no test at all: statewright's pytest found nothing to run (exit status 5)
    assert r[2][2] and "GUARD_REJECTED" in r[2][1] and "exit status 5" in r[2][1]
    assert not r[3][2] and '"writing_test"' in r[3][1]
    assert not r[4][2] and Path(test_file).exists()
    assert r[6][0] == "Bash" and r[6][2]  # the agent's own pytest fails (red)
    assert not r[7][2] and '"implementing"' in r[7][1]  # RED: the check saw the failure
    # PASS claimed before the code exists: the check runs the suite, which fails
    assert r[9][2] and "GUARD_REJECTED" in r[9][1] and "_checks.tests.ok" in r[9][1]
    assert not r[11][2]  # the edit to src/ (tests are read_only in implementing)
    assert not r[13][2] and '"refactoring"' in r[13][1]
    assert not r[14][2] and '"complete"' in r[14][1]
    st = host.status()
    assert st["status"] == "completed" and st["state"] == "complete"
    assert st["context"]["_checks"]["tests"]["ok"] is True
    checks = [h for h in host.history() if h["kind"] == "check"]
    assert [c["data"]["ok"] for c in checks] == [False, False, False, True, True]
    assert all(c["actor"] == "system" for c in checks)
