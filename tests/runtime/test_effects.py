"""Counting by effect (DESIGN section 4, checks 7 and 8): a sandboxed call is scanned before it
runs and after, and what it changed on disk counts against the state's limits and fires
watched-file interrupts. Real files, a real store, the line run by a real `bash -c` between
`authorize` and `record` as the host runs it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from statewright import atomic as atomic_mod
from statewright.policy.types import ToolCall, ToolResult
from statewright.runtime import Runtime, enforcement
from statewright.runtime import effects as effects_mod

FLOW = {
    "id": "effects-flow",
    "initial": "work",
    "interrupts": {
        "config_changed": {"trigger": {"file_pattern": "config/**"}, "target": "review"},
    },
    "states": {
        "work": {
            "allowed_tools": ["Read", "Bash", "Edit", "Write"],
            "allowed_commands": ["python3", "bash", "ls", "true"],
            "max_files_per_state": 2,
            "max_edit_lines": 10,
            "on": {"DONE": "free"},
        },
        "free": {
            "allowed_tools": ["Read", "Bash"],
            "allowed_commands": ["python3", "bash", "ls", "true"],
            "on": {"FINISH": "done", "BACK": "work"},
        },
        "review": {"allowed_tools": ["Read", "Bash"], "on": {"REVIEWED": "$return"}},
        "done": {"type": "final"},
    },
}
SESSION = "s-effects"


@pytest.fixture
def proj(project: Path) -> Path:
    (project / "workflows" / "effects-flow.json").write_text(json.dumps(FLOW))
    src = project / "src"
    src.mkdir()
    for name in ("a", "b", "c", "d"):
        (src / f"{name}.py").write_text("".join(f"{name}{i} = {i}\n" for i in range(200)))
    (project / "config").mkdir()
    (project / "config" / "app.ini").write_text("[app]\nport = 8080\n")
    return project


@pytest.fixture
def rt(proj: Path) -> Runtime:
    r = Runtime.open(proj)
    r.start("effects-flow", SESSION)
    return r


class Agent:
    """Calls as the host makes them: decided, run with `bash -c` in the project, recorded."""

    def __init__(self, rt: Runtime, root: Path) -> None:
        self.rt = rt
        self.root = root
        self.n = 0

    def pre(self, line: str, call_id: str | None = None, sandboxed: bool | None = True):
        # (`sandboxed`: what the decision would say; None: the decision's own say)
        return enforcement.authorize(self.rt, SESSION, ToolCall(
            "Bash", {"command": line}, cwd=str(self.root), call_id=call_id), sandboxed)

    def post(self, line: str, call_id: str | None = None, code: int = 0):
        return self.rt.record(SESSION, ToolResult("Bash", {"command": line}, output_bytes=10,
                                                  is_error=code != 0, cwd=str(self.root),
                                                  exit_code=code, call_id=call_id))

    def run(self, line: str, sandboxed: bool | None = True, call_id: str | None = None):
        self.n += 1
        cid = call_id or f"toolu_{self.n:04d}"
        d = self.pre(line, cid, sandboxed)
        assert d.allowed, d.reason
        r = subprocess.run(["bash", "-c", line], cwd=self.root, capture_output=True, text=True,
                           timeout=60)
        return d, self.post(line, cid, r.returncode)

    def read(self, path: str = "src/a.py"):
        return self.rt.authorize(SESSION, ToolCall("Read", {"file_path": str(self.root / path)},
                                                   cwd=str(self.root)))


def script(root: Path, name: str, body: str) -> str:
    """A script file the agent wrote (the code the line's text does not show)."""
    (root / name).write_text(body)
    return f"python3 {name}"


def state_of(rt: Runtime) -> dict:
    return rt.get_state(SESSION)


def test_a_sandboxed_call_that_changed_three_files_overruns_a_two_file_budget(rt, proj):
    agent = Agent(rt, proj)
    line = script(proj, "gen.py", "for n in 'abc':\n"
                                  "    p = f'src/{n}.py'\n"
                                  "    open(p, 'a').write('# touched\\n')\n")
    _, out = agent.run(line)
    told = "\n".join(out.messages)
    assert "python3 gen.py" in told and "3 file(s)" in told and "max_files_per_state is 2" in told
    st = state_of(rt)
    assert st["counters"]["files_edited"] == ["src/a.py", "src/b.py", "src/c.py"]
    assert st["context"]["_observed"]["overrun"]["rule"] == "max_files_per_state"
    assert set(st["context"]["_observed"]["files_changed"]) >= {"src/a.py", "src/b.py",
                                                                "src/c.py"}
    # the next call, whatever it is, is refused with the reason
    refused = agent.read()
    assert not refused.allowed and refused.rule == "max_files_per_state"
    assert "the command `python3 gen.py` changed 3 file(s)" in refused.reason
    assert "max_files_per_state is 2" in refused.reason and "DONE" in refused.reason
    refused = agent.pre("ls", "toolu_x", sandboxed=False)
    assert not refused.allowed and "transitions" in refused.reason
    # statewright's own tools still work, and a transition clears it
    own = rt.authorize(SESSION, ToolCall("mcp__statewright__statewright_get_state", {}))
    assert own.allowed
    rt.transition(SESSION, "DONE")
    assert agent.read().allowed
    assert "overrun" not in state_of(rt)["context"]["_observed"]
    history = rt.history(session=SESSION)
    rows = [h for h in history if h["kind"] == "changed_by_effect"]
    assert rows and rows[0]["data"]["changed"] == ["src/a.py", "src/b.py", "src/c.py"]
    assert rows[0]["data"]["overrun"] == "max_files_per_state"


def test_within_the_budget_the_files_join_the_state_and_edits_obey_the_budget(rt, proj):
    agent = Agent(rt, proj)
    line = script(proj, "one.py", "open('src/a.py', 'a').write('x = 1\\n')\n")
    _, out = agent.run(line)
    assert not any("refused" in m for m in out.messages)
    assert state_of(rt)["counters"]["files_edited"] == ["src/a.py"]
    # one file left in the budget, counted the same way an edit tool's is
    edit = rt.authorize(SESSION, ToolCall("Write", {"file_path": str(proj / "src/new.py"),
                                                    "content": "b = 1\n"}))
    assert edit.allowed
    third = rt.authorize(SESSION, ToolCall("Write", {"file_path": str(proj / "src/new2.py"),
                                                     "content": "c = 1\n"}))
    assert not third.allowed and third.rule == "max_files_per_state"
    assert agent.read().allowed  # no overrun: the edit tools' budget refused the new file


def test_lines_changed_by_effect_are_counted_against_the_old_text(rt, proj):
    """A 200-line file with three lines changed counts 3 lines, not 200: the text before the
    call was kept when it was scanned."""
    agent = Agent(rt, proj)
    three = script(proj, "three.py",
                   "p = 'src/a.py'\n"
                   "lines = open(p).read().splitlines(True)\n"
                   "for i in (5, 50, 150):\n"
                   "    lines[i] = 'changed\\n'\n"
                   "open(p, 'w').write(''.join(lines))\n")
    _, out = agent.run(three)
    rows = [h for h in rt.history(session=SESSION) if h["kind"] == "changed_by_effect"]
    assert rows[-1]["data"]["lines"] == 3 and rows[-1]["data"]["changed"] == ["src/a.py"]
    assert agent.read().allowed
    # 12 lines in the same file: over max_edit_lines (10 per call)
    twelve = script(proj, "twelve.py",
                    "p = 'src/a.py'\n"
                    "lines = open(p).read().splitlines(True)\n"
                    "for i in range(100, 112):\n"
                    "    lines[i] = 'changed again\\n'\n"
                    "open(p, 'w').write(''.join(lines))\n")
    _, out = agent.run(twelve)
    assert any("changed 12 lines" in m and "max_edit_lines is 10" in m for m in out.messages)
    refused = agent.read()
    assert not refused.allowed and refused.rule == "max_edit_lines"
    assert "the command `python3 twelve.py` changed 12 lines (src/a.py)" in refused.reason


def test_a_created_file_counts_all_its_lines_and_a_removed_one_all_it_had(rt, proj):
    agent = Agent(rt, proj)
    agent.run(script(proj, "new.py", "open('src/e.py', 'w').write('1\\n2\\n3\\n4\\n')\n"))
    rows = [h for h in rt.history(session=SESSION) if h["kind"] == "changed_by_effect"]
    assert rows[-1]["data"]["created"] == ["src/e.py"] and rows[-1]["data"]["lines"] == 4
    assert agent.read().allowed
    agent.run(script(proj, "rm.py", "import os\nos.remove('src/d.py')\n"))
    rows = [h for h in rt.history(session=SESSION) if h["kind"] == "changed_by_effect"]
    assert rows[-1]["data"]["removed"] == ["src/d.py"] and rows[-1]["data"]["lines"] == 200
    refused = agent.read()
    assert not refused.allowed and refused.rule == "max_edit_lines"


def test_a_watched_file_changed_by_effect_fires_its_interrupt(rt, proj):
    """The change keeps the file's size and mtime: only its ctime tells."""
    agent = Agent(rt, proj)
    line = script(proj, "sneak.py",
                  "import os\n"
                  "p = 'config/app.ini'\n"
                  "st = os.stat(p)\n"
                  "open(p, 'w').write('[app]\\nport = 6666\\n')\n"
                  "os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))\n")
    before = os.stat(proj / "config" / "app.ini")
    _, out = agent.run(line)
    after = os.stat(proj / "config" / "app.ini")
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    told = "\n".join(out.messages)
    assert told.startswith("[STATEWRIGHT INTERRUPT] config/app.ini changed")
    assert out.interrupts and out.interrupts[0]["interrupt"] == "config_changed"
    st = state_of(rt)
    assert st["state"] == "review" and st["interrupt"]["return_to"] == "work"


def test_a_failed_call_still_counts_what_it_changed(rt, proj):
    agent = Agent(rt, proj)
    line = script(proj, "fail.py", "for n in 'abc':\n"
                                   "    open(f'src/{n}.py', 'a').write('#\\n')\n"
                                   "raise SystemExit(1)\n")
    _, out = agent.run(line)
    assert any("max_files_per_state is 2" in m for m in out.messages)
    assert not agent.read().allowed


def test_a_call_not_sandboxed_is_not_scanned(rt, proj):
    agent = Agent(rt, proj)
    line = script(proj, "gen.py", "for n in 'abc':\n    open(f'src/{n}.py', 'a').write('#\\n')\n")
    agent.run(line, sandboxed=False)
    assert state_of(rt)["counters"]["files_edited"] == []
    assert agent.read().allowed
    # by default, the decision's own say (`Decision.sandboxed`): a line the analysis proves
    # plain is not sandboxed, nor scanned; a script file is
    d, _ = agent.run("true", sandboxed=None)
    assert not d.sandboxed and state_of(rt)["counters"]["files_edited"] == []
    d, _ = agent.run(line, sandboxed=None)
    assert d.sandboxed
    assert state_of(rt)["counters"]["files_edited"] == ["src/a.py", "src/b.py", "src/c.py"]


def test_a_state_without_limits_or_interrupts_scans_nothing(proj):
    flow = dict(FLOW, id="plain-flow")
    flow.pop("interrupts")
    flow["states"] = {k: {kk: vv for kk, vv in v.items()
                          if kk not in ("max_files_per_state", "max_edit_lines")}
                      for k, v in FLOW["states"].items() if k != "review"}
    (proj / "workflows" / "plain-flow.json").write_text(json.dumps(flow))
    rt = Runtime.open(proj)
    rt.start("plain-flow", SESSION)
    agent = Agent(rt, proj)
    agent.run(script(proj, "gen.py", "open('src/a.py', 'a').write('#\\n')\n"))
    assert not (proj / ".statewright" / "effects").exists()


def test_each_call_has_its_own_scan_and_one_result_counts_it_once(rt, proj):
    """Two calls in flight at once: each is compared with its own scan before it ran (a change
    inside both windows counts for both: the files are counted once in the state). A result
    recorded twice counts once."""
    agent = Agent(rt, proj)
    rt.transition(SESSION, "DONE")  # a state with no limits (scanned for the interrupts)
    assert agent.pre("bash x", "call-A").allowed
    (proj / "src" / "a.py").write_text("changed by A\n")  # (A's effect)
    assert agent.pre("bash y", "call-B").allowed
    (proj / "src" / "b.py").write_text("changed by B\n")  # (B's effect)
    out_a = agent.post("bash x", "call-A")
    assert state_of(rt)["counters"]["files_edited"] == ["src/a.py", "src/b.py"]
    assert not any("refused" in m for m in out_a.messages), out_a.messages
    rows = [h for h in rt.history(session=SESSION) if h["kind"] == "changed_by_effect"]
    assert rows[-1]["data"]["changed"] == ["src/a.py", "src/b.py"]
    agent.post("bash y", "call-B")
    rows = [h for h in rt.history(session=SESSION) if h["kind"] == "changed_by_effect"]
    assert rows[-1]["data"]["changed"] == ["src/b.py"]  # B's window began after A's change
    n = len(rows)
    agent.post("bash y", "call-B")  # the same result again
    assert len([h for h in rt.history(session=SESSION)
                if h["kind"] == "changed_by_effect"]) == n
    # every scan kept before a call was taken by its result, and the directory went with the last
    assert not (proj / ".statewright" / "effects" / "pending").exists()


def test_concurrent_processes_lose_no_file(proj):
    """Eight processes each decide, change one file and record, at once: every file is in the
    state's count (the store's write transactions; each call's own scan)."""
    flow = json.loads(json.dumps(FLOW))
    flow["id"] = "wide-flow"
    flow["states"]["work"]["max_files_per_state"] = 50
    flow["states"]["work"]["max_edit_lines"] = 5000
    (proj / "workflows" / "wide-flow.json").write_text(json.dumps(flow))
    rt = Runtime.open(proj)
    rt.start("wide-flow", SESSION)
    prog = (
        "import sys, time\n"
        "from statewright.runtime import Runtime, enforcement\n"
        "from statewright.policy.types import ToolCall, ToolResult\n"
        "root, i, session = sys.argv[1], sys.argv[2], sys.argv[3]\n"
        "rt = Runtime.open(root)\n"
        "line = f'python3 w{i}.py'\n"
        "d = enforcement.authorize(rt, session, ToolCall('Bash', {'command': line},"
        " call_id='c' + i), sandboxed=True)\n"
        "assert d.allowed, d.reason\n"
        "open(f'{root}/gen_{i}.txt', 'w').write('x\\n' * 3)\n"
        "time.sleep(0.05)\n"
        "rt.record(session, ToolResult('Bash', {'command': line}, exit_code=0,"
        " call_id='c' + i))\n"
    )
    import sys

    procs = [subprocess.Popen([sys.executable, "-c", prog, str(proj), str(i), SESSION])
             for i in range(8)]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    files = state_of(rt)["counters"]["files_edited"]
    assert {f"gen_{i}.txt" for i in range(8)} <= set(files)
    assert not (proj / ".statewright" / "effects" / "pending").exists()


def test_the_store_and_git_database_are_not_counted(rt, proj):
    agent = Agent(rt, proj)
    (proj / ".git" / "objects").mkdir(parents=True)
    line = script(proj, "g.py", "open('.git/objects/x', 'w').write('blob')\n"
                                "import os; os.makedirs('__pycache__', exist_ok=True)\n"
                                "open('__pycache__/m.pyc', 'w').write('c')\n")
    agent.run(line)
    assert state_of(rt)["counters"]["files_edited"] == []


def test_lines_of_files_that_are_not_text_or_too_large_are_not_counted(rt, proj):
    agent = Agent(rt, proj)
    big = effects_mod.MAX_TEXT_BYTES + 10
    line = script(proj, "bin.py", f"open('data.bin', 'wb').write(b'\\0' * 50)\n"
                                  f"open('big.txt', 'w').write('l\\n' * {big // 2})\n")
    agent.run(line)
    rows = [h for h in rt.history(session=SESSION) if h["kind"] == "changed_by_effect"]
    assert rows[-1]["data"]["created"] == ["big.txt", "data.bin"]
    assert rows[-1]["data"]["lines"] == 0
    assert rows[-1]["data"]["lines_not_counted"] == ["big.txt", "data.bin"]
    st = state_of(rt)
    assert st["counters"]["files_edited"] == ["big.txt", "data.bin"]
    assert agent.read().allowed  # two files: within the budget; no lines counted


def test_a_scan_that_cannot_be_kept_refuses_the_call(rt, proj, monkeypatch):
    def broken(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic_mod, "write_atomic", broken)
    d = Agent(rt, proj).pre("python3 x.py", "toolu_9")
    assert not d.allowed and d.rule == "fail_closed" and "No space left" in d.reason


def test_what_cannot_be_counted_after_the_call_refuses_the_next_one(rt, proj, monkeypatch):
    """Fail closed: a scan that fails after the call leaves nothing to vouch for the state's
    limits, so the next call is refused with the cause (unless `fail_open` is set)."""
    agent = Agent(rt, proj)
    assert agent.pre("python3 x.py", "toolu_f").allowed

    def broken(*a, **k):
        raise PermissionError(13, "Permission denied", "src")

    monkeypatch.setattr(effects_mod, "take", broken)
    out = agent.post("python3 x.py", "toolu_f")
    assert any("could not find what the command `python3 x.py` changed" in m
               for m in out.messages)
    refused = agent.read()
    assert not refused.allowed and refused.rule == "by_effect"
    assert "Permission denied" in refused.reason


def test_under_fail_open_what_cannot_be_counted_is_let_through(proj, monkeypatch):
    (proj / "statewright.json").write_text(json.dumps({"fail_open": True}))
    rt = Runtime.open(proj)
    rt.start("effects-flow", SESSION)
    agent = Agent(rt, proj)
    assert agent.pre("python3 x.py", "toolu_f").allowed
    monkeypatch.setattr(effects_mod, "take", lambda rt: (_ for _ in ()).throw(OSError("gone")))
    agent.post("python3 x.py", "toolu_f")
    assert agent.read().allowed


def test_damaged_copies_are_started_afresh(rt, proj):
    agent = Agent(rt, proj)
    agent.run(script(proj, "one.py", "open('src/a.py', 'a').write('#\\n')\n"))
    db = proj / ".statewright" / "effects" / "texts.db"
    assert db.is_file()
    db.write_bytes(b"this is not a database" * 100)
    agent.run(script(proj, "two.py", "open('src/a.py', 'a').write('#\\n')\n"))
    rows = [h for h in rt.history(session=SESSION) if h["kind"] == "changed_by_effect"]
    assert rows[-1]["data"]["changed"] == ["src/a.py"] and rows[-1]["data"]["lines"] == 1
    assert agent.read().allowed


def test_a_scan_whose_result_never_came_is_removed_after_a_day(rt, proj):
    agent = Agent(rt, proj)
    assert agent.pre("python3 x.py", "toolu_never").allowed  # (the host never ran it)
    pending = proj / ".statewright" / "effects" / "pending"
    [left] = list(pending.iterdir())
    old = left.stat().st_mtime - effects_mod.STALE_S - 60
    os.utime(left, (old, old))
    agent.run(script(proj, "one.py", "open('src/a.py', 'a').write('#\\n')\n"))
    assert not pending.exists()


def test_files_hidden_below_a_path_too_long_to_open_refuse_the_next_call(rt, proj):
    """Code that writes where the scan cannot look (a directory chain longer than a path may
    be) is not taken for having changed nothing."""
    agent = Agent(rt, proj)
    line = script(proj, "deep.py",
                  "import os\n"
                  "fd = os.open('.', os.O_RDONLY)\n"
                  "name, n = 'deep', 0\n"
                  "while n < 4300:\n"
                  "    os.mkdir(name, dir_fd=fd)\n"
                  "    nfd = os.open(name, os.O_RDONLY, dir_fd=fd)\n"
                  "    os.close(fd)\n"
                  "    fd, n, name = nfd, n + len(name) + 1, 'd' * 200\n"
                  "for i in range(3):\n"
                  "    w = os.open(f'm{i}.py', os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)\n"
                  "    os.write(w, b'x = 1\\n')\n"
                  "    os.close(w)\n")
    _, out = agent.run(line)
    assert any("cannot be listed, and it changed during the call" in m for m in out.messages)
    refused = agent.read()
    assert not refused.allowed and refused.rule == "by_effect"


def test_a_project_too_large_to_scan_in_time_refuses(rt, proj, monkeypatch):
    agent = Agent(rt, proj)
    monkeypatch.setattr(effects_mod, "SCAN_LIMIT_S", -1.0)
    d = agent.pre("python3 x.py", "toolu_big")
    assert not d.allowed and "too many entries to scan in time" in d.reason


def test_a_real_test_run_leaves_only_caches_and_counts_nothing(rt, proj):
    """Everyday work: pytest writes `__pycache__` and `.pytest_cache` on every run (and
    `.hypothesis` when a property test has examples to keep); none of it is the project's
    files, so a two-file budget is untouched."""
    import sys

    (proj / "checks").mkdir()
    (proj / "checks" / "test_ok.py").write_text(
        "from hypothesis import given, strategies as st\n"
        "@given(st.integers())\n"
        "def test_ints(n):\n"
        "    assert n == n\n"
        "def test_plain():\n"
        "    assert True\n")
    agent = Agent(rt, proj)
    line = "python3 -m pytest -q -p no:xdist checks"
    d = agent.pre(line, "toolu_pytest")
    assert d.allowed, d.reason
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PATH"] = f"{os.path.dirname(sys.executable)}:{env['PATH']}"
    r = subprocess.run(["bash", "-c", line], cwd=proj, capture_output=True, text=True,
                       timeout=300, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (proj / ".pytest_cache").is_dir()
    assert (proj / "checks" / "__pycache__").is_dir()
    out = agent.post(line, "toolu_pytest")
    assert out.messages == []
    assert state_of(rt)["counters"]["files_edited"] == []
    assert agent.read().allowed
