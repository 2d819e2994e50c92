"""Every module the process hook may import, listed (DESIGN section 1 and 8).

`statewright-hook` is a new process for every tool call, so a module that joins its import path
is paid on every call. The lists below are the whole path: a change that adds a module to it
fails here and has to add the module to a list on purpose (with `statewright.lean`, the one home
of the start-up tricks, as the place to look first for a cheaper way).

Measured in a real hook process on real hook JSON, against a project with a running workflow;
modules a bare interpreter already holds (`site` and what it imports) are not counted.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .harness import Project

pytestmark = pytest.mark.e2e

# Every per-call decision (PreToolUse of a non-shell tool, PostToolUse, Stop) imports exactly
# these of ours: the runtime, the store, the run record and the compiled definition, and the
# policy layer without its shell analysis.
CORE = frozenset({
    "statewright", "statewright.config", "statewright.errors", "statewright.lean",
    "statewright.names", "statewright.wildcards",
    "statewright.definition", "statewright.definition.compiled",
    "statewright.engine", "statewright.engine.run",
    "statewright.hook", "statewright.hook.handlers",
    "statewright.policy", "statewright.policy.edits", "statewright.policy.gate",
    "statewright.policy.paths", "statewright.policy.protect", "statewright.policy.protect.files",
    "statewright.policy.protect.scope",
    "statewright.policy.protect.store", "statewright.policy.refusals", "statewright.policy.tools",
    "statewright.policy.types",
    "statewright.runtime", "statewright.runtime.answer", "statewright.runtime.chain",
    "statewright.runtime.enforcement", "statewright.runtime.marker",
    "statewright.runtime.messages",
    # (what a call showed, and a handler's narrowing: small, stdlib and our pure layers)
    "statewright.runtime.observe", "statewright.runtime.interrupted",
    "statewright.runtime.persist", "statewright.runtime.service", "statewright.runtime.state_text",
    "statewright.store", "statewright.store.db", "statewright.store.schema",
    "statewright.store.tables", "statewright.store.cache",
    "statewright.store.chain",  # (each history row's link in its run's hash chain)
    "statewright.atomic",  # (the one writer of whole files: the session's active-run marker)
})
# Recording a result (PostToolUse / PostToolUseFailure) adds the evidence it records
# (`_observed`, DESIGN section 3): a small pure module.
RECORD = CORE | {"statewright.policy.evidence"}
# The launcher's line (`sandbox.launcher`): what a sandboxed line is rewritten to, and read
# back when its result is recorded.
SANDBOX = frozenset({"statewright.sandbox", "statewright.sandbox.launcher",
                     "statewright.sandbox.probe", "statewright.sandbox.profile"})
# A shell line adds the analysis: tree-sitter's C extensions (not their packages), the shell
# and programs packages, and self-protection of shell lines.
SHELL = CORE | {
    "statewright.policy.programs", "statewright.policy.programs.builders",
    "statewright.policy.programs.cloud", "statewright.policy.programs.environment",
    "statewright.policy.programs.files", "statewright.policy.programs.git",
    "statewright.policy.programs.python", "statewright.policy.programs.scripts",
    "statewright.policy.programs.spec", "statewright.policy.programs.text",
    "statewright.policy.programs.writers", "statewright.policy.shell.arith",
    # escape classes 4 and 6: background work, a line's file-system side (cd, redirects,
    # counted files), what worktree-changing programs do (`git status` changes nothing, so
    # `protect.worktree` stays unloaded)
    "statewright.policy.channels", "statewright.policy.lines",
    # where a process environment can be read (check 6, for file tools and lines alike)
    "statewright.policy.procfs",
    "statewright.policy.programs.worktree",
    "statewright.policy.protect.cli", "statewright.policy.protect.line",
    "statewright.policy.shell", "statewright.policy.shell.commands",
    "statewright.policy.shell.cwds", "statewright.policy.shell.env",
    "statewright.policy.shell.parser", "statewright.policy.shell.records",
    "statewright.policy.shell.redirects",
    "statewright.policy.shell.walker", "statewright.policy.shell.words",
    "statewright.policy.shell.wrappers",
    "tree_sitter._binding", "tree_sitter_bash._binding",
    # binding by the kernel: which lines run sandboxed, and the launcher's line (no ctypes,
    # no subprocess: the machine's tier is read from a file kept per boot)
    "statewright.policy.confine", *SANDBOX,
}
# Other modules a per-call decision may import: C modules and `__future__`. `functools` (with
# `collections`, `operator`, `reprlib`, ... ~3 ms) is not among them: `statewright.lean` has
# `lru_cache` on `_functools` and loads `_sqlite3` without it. A shell line may need `re` and
# `fnmatch`.
# (`_sha256`: each history row's link in its run's hash chain, a C module)
STDLIB = frozenset({"__future__", "_functools", "_json", "_sha256", "_sqlite3", "gc"})
STDLIB_SHELL = STDLIB | {"_sre", "copyreg", "enum", "fnmatch", "re", "re._casefix",
                         "re._compiler", "re._constants", "re._parser",
                         # what `re` imports
                         "_collections", "_operator", "collections", "functools", "itertools",
                         "keyword", "operator", "reprlib", "types"}
# never, on any hook event (the heavy dependencies, and what only long-running processes need)
NEVER = ("mcp", "mcp_types", "pydantic", "pydantic_core", "jsonschema", "typer", "click",
         "rich", "anyio", "starlette", "uvicorn", "httpx", "httpx2", "tree_sitter",
         "tree_sitter_bash", "watchdog")

WF = {
    "id": "imports",
    "initial": "work",
    "states": {
        "work": {"allowed_tools": ["Read", "Edit", "Bash"], "allowed_commands": ["pytest", "git"],
                 "blocked_env": ["SECRET"], "max_edit_lines": 50, "on": {"DONE": "end"}},
        "end": {"type": "final"},
    },
}
# (as the console script `statewright.hook.run` decides alone: a one-call process)
_PROBE = ("import sys; base = set(sys.modules); from statewright.hook import main; "
          "from statewright.lean import one_call_process; one_call_process(); "
          "main([sys.argv[1]]); sys.stderr.write('\\nMODULES ' + ' '.join(sorted("
          "set(sys.modules) - base)))")


@pytest.fixture(scope="module")
def proj(tmp_path_factory: pytest.TempPathFactory) -> Project:
    p = Project(tmp_path_factory.mktemp("imports") / "proj")
    p.write_workflow(WF)
    p.start("imports")
    Path(p.path("app.py")).write_text("a = 1\n")
    return p


def _imports(proj: Project, event: str, payload: dict) -> set[str]:
    r = subprocess.run([sys.executable, "-c", _PROBE, event], input=json.dumps(payload).encode(),
                       capture_output=True, env=proj.env, timeout=60)
    err = r.stderr.decode()
    assert r.returncode == 0 and "MODULES " in err, err
    return set(err.rsplit("MODULES ", 1)[1].split())


def _split(mods: set[str]) -> tuple[set[str], set[str]]:
    ours = {m for m in mods if m.split(".")[0] == "statewright" or m.endswith("._binding")}
    return ours, mods - ours


_EDIT = {"file_path": "app.py", "old_string": "a = 1", "new_string": "a = 2"}


@pytest.mark.parametrize("event,hook_event,fields,expected", [
    ("pre-tool-use", "PreToolUse", {"tool_name": "Read", "tool_input": {"file_path": "app.py"}},
     CORE),
    ("pre-tool-use", "PreToolUse", {"tool_name": "Edit", "tool_input": _EDIT}, CORE),
    ("post-tool-use", "PostToolUse", {"tool_name": "Edit", "tool_input": _EDIT,
                                      "tool_response": {}}, RECORD),
    ("post-tool-use-failure", "PostToolUseFailure", {"tool_name": "Edit", "tool_input": _EDIT,
                                                     "error": "no match"}, RECORD),
    # (the Stop hook's reminder: `runtime.briefings`)
    ("stop", "Stop", {}, CORE | {"statewright.runtime.briefings"}),
], ids=["pre-Read", "pre-Edit", "post-Edit", "failure-Edit", "stop"])
def test_a_per_call_event_imports_exactly_the_core(proj: Project, event: str, hook_event: str,
                                                   fields: dict, expected: frozenset) -> None:
    ours, other = _split(_imports(proj, event, proj.payload(hook_event, **fields)))
    assert ours == expected, {"added": sorted(ours - expected),
                              "missing": sorted(expected - ours)}
    assert other <= STDLIB, sorted(other - STDLIB)


def test_recording_a_shell_line_adds_the_analysis_and_the_evidence(proj: Project) -> None:
    ours, other = _split(_imports(proj, "post-tool-use", proj.payload(
        "PostToolUse", tool_name="Bash", tool_input={"command": "pytest -q"},
        tool_response={"stdout": "", "stderr": "", "interrupted": False})))
    # (self-protection of shell lines is the decision's, not the record's)
    expected = (SHELL | RECORD) - {"statewright.policy.protect.cli",
                                   "statewright.policy.protect.line",
                                   "statewright.policy.channels", "statewright.policy.lines",
                                   "statewright.policy.programs.worktree",
                                   "statewright.policy.confine"}
    expected |= {"statewright.runtime.confinement"}  # (a line's output read for the kernel's refusals)
    # a passing test runner line: is it a run of the suite (`programs.runs`), with its
    # configuration unchanged (`runtime.watch` lists the configuration files)?
    expected |= {"statewright.policy.programs.runs", "statewright.runtime.watch"}
    assert ours == expected, {"added": sorted(ours - expected),
                              "missing": sorted(expected - ours)}
    assert other <= STDLIB_SHELL, sorted(other - STDLIB_SHELL)


def test_a_shell_line_adds_only_the_shell_analysis(proj: Project) -> None:
    line = "pytest -q tests && git status | tee out.log; echo $(git rev-parse HEAD) > rev.txt"
    ours, other = _split(_imports(proj, "pre-tool-use", proj.payload(
        "PreToolUse", tool_name="Bash", tool_input={"command": line})))
    assert ours == SHELL, {"added": sorted(ours - SHELL), "missing": sorted(SHELL - ours)}
    assert other <= STDLIB_SHELL, sorted(other - STDLIB_SHELL)


@pytest.mark.parametrize("event,hook_event,fields", [
    ("session-start", "SessionStart", {"source": "startup"}),
    ("user-prompt-submit", "UserPromptSubmit", {"prompt": "go on"}),
])
def test_no_event_imports_the_heavy_dependencies(proj: Project, event: str, hook_event: str,
                                                 fields: dict) -> None:
    mods = _imports(proj, event, proj.payload(hook_event, **fields))
    assert "statewright.runtime.service" in mods
    heavy = sorted(m for m in mods if m.split(".")[0] in NEVER)
    assert not heavy, heavy


def test_watched_files_add_only_the_comparison_of_marks(tmp_path: Path) -> None:
    """A workflow whose interrupts watch files: deciding a call compares the marks of those
    files (`runtime.watch`), without `re` (`glob_match` matches segment by segment)."""
    p = Project(tmp_path / "watched")
    p.write_workflow({**WF, "id": "watched",
                      "interrupts": {"cfg": {"trigger": {"file_pattern": "config/**/*.yml"},
                                             "target": "end"},
                                     "env": {"trigger": {"file_pattern": "**/*.env*"},
                                             "target": "end"}}})
    p.start("watched")
    Path(p.path("app.py")).write_text("a = 1\n")
    payload = p.payload("PreToolUse", tool_name="Read", tool_input={"file_path": "app.py"})
    ours, other = _split(_imports(p, "pre-tool-use", payload))
    expected = CORE | {"statewright.runtime.watch"}
    assert ours == expected, {"added": sorted(ours - expected), "missing": sorted(expected - ours)}
    assert other <= STDLIB, sorted(other - STDLIB)
