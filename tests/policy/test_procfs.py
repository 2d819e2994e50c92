"""`policy.procfs.environ_path` (where a process environment can be read) and
`programs.text.pattern_operands` (which words a searcher reads as its pattern), the two pieces
check 6 uses to tell `grep -rn environ src` and `cat /proc/cpuinfo` from a read of /proc; and
the active-run markers' directory, protected where the environment puts it."""

from __future__ import annotations

import os

import pytest

from statewright.policy.procfs import PLAIN_PROC, environ_path
from statewright.policy.programs.text import pattern_operands

#: (path, searched) -> whether a process environment, memory or descriptor is within reach
PATHS = [
    ("/proc/self/environ", False, True), ("/proc/1/environ", False, True),
    ("/proc/self/task/7/environ", False, True), ("/proc/self/mem", False, True),
    ("/proc/self/fd/0", False, True), ("/proc/self/fdinfo/3", False, True),
    ("/dev/fd/3", False, True), ("/dev/stdin", False, True),
    ("/proc", True, True), ("/proc/self", True, True), ("/proc/1", True, True),
    ("/proc/thread-self", True, True), ("/proc/1/task/2", True, True),
    ("/proc/1/task", True, True), ("/proc/self/cwd", True, True),
    ("/proc/1/root/proc", True, True), ("/proc/self/task/1/cwd/x", True, True),
    ("/proc/somethingnew", True, True), ("/", True, True),
    # fine
    ("/", False, False), ("/proc", False, False), ("/proc/self", False, False),
    ("/proc/cpuinfo", True, False), ("/proc/meminfo", False, False),
    ("/proc/sys/kernel/hostname", True, False), ("/proc/net", True, False),
    ("/proc/self/status", True, False), ("/proc/self/cwd", False, False),
    ("/procfoo/environ.txt", True, False), ("/home/u/proj", True, False),
    ("/usr", True, False), ("/dev/null", True, False),
]


@pytest.mark.parametrize(("path", "searches", "reaches"), PATHS)
def test_environ_path(path: str, searches: bool, reaches: bool) -> None:
    assert environ_path(path, searches) is reaches


def test_no_process_directory_is_plain() -> None:
    assert not any(n.isdigit() or n in ("self", "thread-self") for n in PLAIN_PROC)


#: (program, arguments) -> the indexes of its pattern words
OPERANDS = [
    ("grep", "-rn environ src", [1]), ("grep", "-e environ src", [1]),
    ("grep", "environ -e x src", [2]), ("grep", "-A 3 environ", [2]), ("grep", "-A3 environ", [1]),
    ("grep", "--regexp=environ x", [0]), ("grep", "-rne environ x", [1]),
    ("grep", "-f pats environ", []), ("grep", "--file pats environ", []),
    ("grep", "-- environ", [1]), ("grep", "-- -e environ", [1]),
    ("grep", "-e a -e b src", [1, 3]), ("rg", "-g *.py environ", [2]),
    ("git grep", "-n environ", [1]), ("cat", "environ", []),
]


@pytest.mark.parametrize(("name", "args", "want"), OPERANDS)
def test_pattern_operands(name: str, args: str, want: list[int]) -> None:
    vals = args.split()
    assert pattern_operands(name, vals, [True] * len(vals)) == want


def test_a_word_that_is_not_fixed_text_leaves_only_what_is_sure() -> None:
    # `grep $X environ src`: $X could be `-e x` (then `environ` is a file) or `--`
    assert pattern_operands("grep", ["$X", "environ", "src"], [False, True, True]) == []
    assert pattern_operands("grep", ["environ", "$X"], [True, False]) == []
    assert pattern_operands("grep", ["-e", "environ", "$X"], [True, True, False]) == [1]
    assert pattern_operands("grep", ["--", "environ", "$X"], [True, True, False]) == []


def test_the_markers_protected_follow_the_environment(tmp_path, monkeypatch) -> None:
    """The active-run markers' directory is protected where the environment puts it now, as
    `runtime.marker.marker_path` writes there: a decision made under another `XDG_STATE_HOME`
    (a test, a server for another environment) leaves no stale answer behind."""
    from statewright.config import active_marker_dir
    from statewright.definition.compiled import State
    from statewright.policy import Counters, GateContext, ToolCall, gate
    from statewright.policy.protect.store import program_paths

    root = tmp_path / "p"
    (root / ".statewright").mkdir(parents=True)
    ctx = GateContext(project_root=str(root), store_dir=str(root / ".statewright"),
                      protected_files=frozenset())

    def refused(markers: str) -> bool:
        call = ToolCall("Bash", {"command": f"rm -rf {markers}"})
        return not gate(State(name="free"), Counters(), call, ctx).allowed

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "elsewhere"))
    first = active_marker_dir()
    assert refused(first) and os.path.realpath(first) in program_paths()
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    second = active_marker_dir()
    assert second != first
    assert refused(second) and os.path.realpath(second) in program_paths()


def test_the_home_config_files_protected_follow_home(tmp_path, monkeypatch) -> None:
    """`~/.claude/settings.json` is protected where `HOME` puts it now: a decision made under
    another `HOME` by the same context (a test, a server started for another user's
    environment) leaves no stale set of protected files behind (`protect.store.ctx_facts`)."""
    from statewright.definition.compiled import State
    from statewright.policy import Counters, GateContext, ToolCall, gate

    root = tmp_path / "p"
    (root / ".statewright").mkdir(parents=True)
    ctx = GateContext(project_root=str(root), store_dir=str(root / ".statewright"),
                      protected_files=frozenset())

    def refused(home: str) -> bool:
        call = ToolCall("Bash", {"command": f"rm {home}/.claude/settings.json"})
        return not gate(State(name="free"), Counters(), call, ctx).allowed

    for name in ("first", "second"):
        home = tmp_path / name
        (home / ".claude").mkdir(parents=True)
        monkeypatch.setenv("HOME", str(home))
        assert refused(str(home))
