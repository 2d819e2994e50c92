"""Eight hook processes deciding at once on one session: no counter update is lost and a limit
is never passed by two racing calls."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import bin_path

from .harness import Project

pytestmark = pytest.mark.e2e

N = 8
WF = {
    "id": "race",
    "initial": "limited",
    "states": {
        "limited": {"allowed_tools": ["Read", "Edit"], "max_iterations": 5, "on": {"NEXT": "open"}},
        "open": {"allowed_tools": ["Read", "Edit"], "max_files_per_state": 3, "on": {"DONE": "end"}},
        "end": {"type": "final"},
    },
}


def _at_once(proj: Project, event: str, payloads: list[dict]) -> list[dict | None]:
    """Start every process first, then feed them, so they decide concurrently."""
    procs = [subprocess.Popen([bin_path("statewright-hook"), event], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=proj.env)
             for _ in payloads]
    for p, payload in zip(procs, payloads, strict=True):
        p.stdin.write(json.dumps(payload).encode())
        p.stdin.close()
    outs = []
    for p in procs:
        out = p.stdout.read().decode()
        err = p.stderr.read().decode()
        assert p.wait(timeout=120) == 0 and "Traceback" not in err, err
        outs.append(json.loads(out) if out.strip() else None)
    return outs


def test_eight_hooks_at_once_keep_exact_counters(tmp_path: Path) -> None:
    proj = Project(tmp_path / "proj")
    proj.write_workflow(WF)
    proj.start("race")

    # 8 racing calls against a limit of 5: exactly 5 pass, 3 are refused
    reads = [proj.payload("PreToolUse", tool_name="Read", tool_input={"file_path": proj.path(f"f{i}")})
             for i in range(N)]
    outs = _at_once(proj, "pre-tool-use", reads)
    assert sum(o is None for o in outs) == 5
    refused = [o for o in outs if o is not None]
    assert len(refused) == 3
    assert all(o["hookSpecificOutput"]["permissionDecision"] == "deny" for o in refused)
    assert proj.status()["counters"]["iterations"] == 5
    kinds = [h["kind"] for h in proj.history()]
    assert kinds.count("tool_allowed") == 5 and kinds.count("tool_denied") == 3

    # no limit: 8 racing calls, 8 counted; 8 racing results, every byte counted
    proj.transition("NEXT")
    outs = _at_once(proj, "pre-tool-use", reads)
    assert outs == [None] * N
    outs = _at_once(proj, "post-tool-use", [
        proj.payload("PostToolUse", tool_name="Read", tool_input={"file_path": proj.path(f"f{i}")},
                     tool_response="x" * (10 + i)) for i in range(N)])
    st = proj.status()
    assert st["counters"]["iterations"] == N
    assert st["counters"]["bytes"] == sum(10 + i for i in range(N))

    # 8 racing edits of 8 different files against max_files_per_state 3: exactly 3 files pass
    edits = [proj.payload("PreToolUse", tool_name="Edit",
                          tool_input={"file_path": proj.path(f"src/m{i}.py"), "old_string": "a",
                                      "new_string": "b"}) for i in range(N)]
    outs = _at_once(proj, "pre-tool-use", edits)
    assert sum(o is None for o in outs) == 3
    st = proj.status()
    assert len(st["counters"]["files_edited"]) == 3
    assert st["counters"]["iterations"] == N + 3
