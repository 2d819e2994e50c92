"""What the hook imports for another host's event (DESIGN sections 1 and 8): the Claude Code
hook's modules (tests/hook/test_imports.py), plus the host adapter (`statewright.hook.hosts`
and the host's module) and nothing heavy."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .harness import Project
from .test_imports import CORE, NEVER, STDLIB, WF

pytestmark = pytest.mark.e2e

_PROBE = ("import sys; base = set(sys.modules); from statewright.hook import main; "
          "from statewright.lean import one_call_process; one_call_process(); "
          "main(sys.argv[1:]); sys.stderr.write('\\nMODULES ' + ' '.join(sorted("
          "set(sys.modules) - base)))")


@pytest.mark.parametrize("host,event,payload", [
    ("gemini", "BeforeTool", {"session_id": "g", "tool_name": "read_file",
                              "tool_input": {"file_path": "app.py"}}),
    ("copilot", "preToolUse", {"sessionId": "c", "toolName": "view",
                               "toolArgs": {"path": "app.py"}}),
    ("codex", "PreToolUse", {"session_id": "x", "tool_name": "apply_patch", "tool_input": {
        "command": "*** Begin Patch\n*** Update File: app.py\n@@\n-a = 1\n+a = 2\n"
                   "*** End Patch\n"}}),
])
def test_a_host_event_adds_only_its_adapter(tmp_path: Path, host: str, event: str,
                                            payload: dict) -> None:
    p = Project(tmp_path / "proj")
    p.write_workflow(WF)
    p.start("imports")
    Path(p.path("app.py")).write_text("a = 1\n")
    r = subprocess.run([sys.executable, "-c", _PROBE, f"--host={host}", event],
                       input=json.dumps({**payload, "cwd": str(p.root)}).encode(),
                       capture_output=True, env=p.env, timeout=60)
    err = r.stderr.decode()
    assert r.returncode == 0 and "MODULES " in err, err
    assert r.stdout.strip() == b"" or b"deny" not in r.stdout, r.stdout
    mods = set(err.rsplit("MODULES ", 1)[1].split())
    ours = {m for m in mods if m.split(".")[0] == "statewright"}
    expected = CORE | {"statewright.hook.hosts", f"statewright.hook.{host}"}
    if host == "codex":
        expected |= {"statewright.hook.patch", "statewright.runtime.batch"}
    assert ours == expected, {"added": sorted(ours - expected),
                              "missing": sorted(expected - ours)}
    other = mods - ours - {m for m in mods if m.endswith("._binding")}
    assert other <= STDLIB | {"_thread", "time"}, sorted(other - STDLIB)
    assert not any(m.split(".")[0] in NEVER for m in mods)
