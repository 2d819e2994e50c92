"""Counting by effect through the real `statewright-hook` (DESIGN section 4, "Binding by the
kernel"): Claude Code's PreToolUse for a sandboxed line, the line really run by `bash -c` (the
rewritten one when the hook rewrote it, as the host does), then its PostToolUse; what the line's
code changed on disk counts against the state's limits and fires watched-file interrupts, in the
process hook and through the resident hook server alike.

Which lines are sandboxed is the gate's to say (`Decision.sandboxed`): a script run by an
interpreter is, and the hook rewrites it to run under the launcher, which is what runs here."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from statewright.sandbox.launcher import unwrap

from .harness import BASH_OK as OK
from .harness import SESSION, Project, allowed, context, denied

pytestmark = pytest.mark.e2e

FLOW = {
    "id": "effects-flow",
    "initial": "work",
    "interrupts": {
        "config_changed": {"trigger": {"file_pattern": "config/**"}, "target": "review"},
    },
    "states": {
        "work": {
            "allowed_tools": ["Read", "Bash", "Edit", "Write"],
            "allowed_commands": ["python3", "ls"],
            "max_files_per_state": 2,
            "max_edit_lines": 10,
            "on": {"DONE": "free"},
        },
        "free": {"allowed_tools": ["Read", "Bash"], "allowed_commands": ["python3"],
                 "on": {"FINISH": "done"}},
        "review": {"allowed_tools": ["Read"], "on": {"REVIEWED": "$return"}},
        "done": {"type": "final"},
    },
}


@pytest.fixture(params=["process", "resident"])
def proj(request: pytest.FixtureRequest, tmp_path: Path) -> Project:
    p = Project(tmp_path / "proj")
    p.write_workflow(FLOW)
    (p.root / "src").mkdir()
    for n in "abc":
        (p.root / "src" / f"{n}.py").write_text("".join(f"{n}{i} = {i}\n" for i in range(50)))
    (p.root / "config").mkdir()
    (p.root / "config" / "app.ini").write_text("[app]\nport = 8080\n")
    if request.param == "process":
        p.env["STATEWRIGHT_HOOK_RESIDENT"] = "0"
    p.start("effects-flow")
    if request.param == "resident":
        _wait_for_server(p)
    return p


def _wait_for_server(p: Project) -> None:
    """Fire a hook event (which starts the project's resident hook server) and wait until it
    listens: from then on the hook processes hand their events to it."""
    from statewright.hook import resident

    ep = resident.endpoint(p.env)
    assert ep is not None
    p.hook("stop", p.payload("Stop"))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if os.path.exists(ep.socket) and os.path.exists(ep.key_file):
            return
        time.sleep(0.1)
    raise AssertionError(f"no resident hook server listened at {ep.socket}")


def bash(p: Project, command: str, call_id: str, session: str = SESSION) -> dict | None:
    """A Bash call as Claude Code makes it: PreToolUse, the line as rewritten (under the
    launcher) run with `bash -c` in the project, then PostToolUse or PostToolUseFailure with
    the same id and the rewritten input."""
    inp = {"command": command, "description": "run it"}
    pre = p.hook("pre-tool-use", p.payload("PreToolUse", session, tool_name="Bash",
                                           tool_input=inp, tool_use_id=call_id))
    allowed(pre)
    assert pre is not None
    run = pre["hookSpecificOutput"]["updatedInput"]
    assert unwrap(run["command"]) is not None  # (the line runs sandboxed)
    r = subprocess.run(["bash", "-c", run["command"]], cwd=p.root, capture_output=True,
                       text=True, timeout=60)
    if r.returncode == 0:
        return p.hook("post-tool-use", p.payload("PostToolUse", session, tool_name="Bash",
                                                 tool_input=run,
                                                 tool_response={**OK, "stdout": r.stdout},
                                                 tool_use_id=call_id))
    return p.hook("post-tool-use-failure",
                  p.payload("PostToolUseFailure", session, tool_name="Bash", tool_input=run,
                            error=f"Exit code {r.returncode}\n{r.stderr}", tool_use_id=call_id))


def test_code_that_changes_three_files_overruns_a_two_file_budget(proj: Project) -> None:
    (proj.root / "gen.py").write_text("for n in 'abc':\n"
                                      "    open(f'src/{n}.py', 'a').write('# more\\n')\n")
    out = bash(proj, "python3 gen.py", "toolu_gen")
    told = context(out, "PostToolUse")
    assert "The command `python3 gen.py` changed 3 file(s) (src/a.py, src/b.py, src/c.py)" in told
    assert "max_files_per_state is 2" in told
    why = denied(proj.pre("Read", {"file_path": proj.path("src/a.py")}))
    assert "changed 3 file(s)" in why and "max_files_per_state is 2" in why
    assert "DONE" in why  # what to do instead
    st = proj.status()
    assert st["counters"]["files_edited"] == ["src/a.py", "src/b.py", "src/c.py"]
    kinds = [h["kind"] for h in proj.history()]
    assert "changed_by_effect" in kinds
    proj.transition("DONE")
    allowed(proj.pre("Read", {"file_path": proj.path("src/a.py")}))


def test_a_failing_line_still_counts_and_lines_are_counted_by_effect(proj: Project) -> None:
    (proj.root / "t.py").write_text("p = 'src/a.py'\n"
                                    "lines = open(p).read().splitlines(True)\n"
                                    "for i in range(0, 24, 2):\n"
                                    "    lines[i] = 'x\\n'\n"
                                    "open(p, 'w').write(''.join(lines))\n"
                                    "raise SystemExit(1)\n")
    out = bash(proj, "python3 t.py", "toolu_t")
    told = context(out, "PostToolUseFailure")
    assert "changed 12 lines (src/a.py); max_edit_lines is 10" in told
    why = denied(proj.pre("Bash", {"command": "ls"}))
    assert "changed 12 lines" in why


def test_a_watched_file_changed_with_size_and_mtime_kept_fires_the_interrupt(
        proj: Project) -> None:
    (proj.root / "sneak.py").write_text(
        "import os\n"
        "p = 'config/app.ini'\n"
        "st = os.stat(p)\n"
        "open(p, 'w').write('[app]\\nport = 6666\\n')\n"
        "os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))\n")
    before = os.stat(proj.root / "config" / "app.ini")
    out = bash(proj, "python3 sneak.py", "toolu_sneak")
    after = os.stat(proj.root / "config" / "app.ini")
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert context(out, "PostToolUse").startswith("[STATEWRIGHT INTERRUPT] config/app.ini changed")
    assert proj.status()["state"] == "review"


def test_a_plain_line_within_the_budget_is_counted_and_let_through(proj: Project) -> None:
    (proj.root / "one.py").write_text("open('src/a.py', 'a').write('# one\\n')\n")
    assert bash(proj, "python3 one.py", "toolu_one") is None  # nothing to tell
    store = proj.root / ".statewright" / "effects"
    assert store.is_dir() and not (store / "pending").exists()  # each scan taken by its result
    allowed(proj.pre("Read", {"file_path": proj.path("src/a.py")}))
    assert proj.status()["counters"]["files_edited"] == ["src/a.py"]
    rows = [h for h in proj.history() if h["kind"] == "changed_by_effect"]
    assert [r["data"]["changed"] for r in rows] == [["src/a.py"]]


def test_a_session_without_a_run_of_its_own_counts_on_the_run_it_falls_back_to(
        proj: Project) -> None:
    """Another Claude Code session without a run of its own falls back to the default session's
    run: its calls are counted on that run."""
    other = "aaaaaaaa-1111-4222-8333-444455556666"
    assert other != SESSION
    (proj.root / "gen.py").write_text("for n in 'abc':\n"
                                      "    open(f'src/{n}.py', 'a').write('#\\n')\n")
    out = bash(proj, "python3 gen.py", "toolu_o", session=other)
    assert "max_files_per_state is 2" in context(out, "PostToolUse")
    denied(proj.pre("Read", {"file_path": proj.path("src/a.py")}))
