"""The shell-attack corpus through the real hook process, and the hook's import diet."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import REPO, bin_path

from .harness import Project, allowed, denied

pytestmark = pytest.mark.e2e

sys.path.insert(0, str(REPO))
from tests.policy.corpus import ALLOWED_COMMANDS, BLOCKED_ENV, attacks, legit  # noqa: E402

WF = {
    "id": "shell-realistic",
    "initial": "implement",
    "states": {
        "implement": {"allowed_tools": ["Read", "Edit", "Bash"],
                      "allowed_commands": list(ALLOWED_COMMANDS), "blocked_env": list(BLOCKED_ENV),
                      "on": {"DONE": "end"}},
        "end": {"type": "final"},
    },
}
FORBIDDEN = ("mcp", "mcp_types", "pydantic", "pydantic_core", "jsonschema", "typer", "rich",
             "watchdog", "click", "anyio", "starlette", "httpx", "httpx2")


def _batch(proj: Project, lines: list[str]) -> list[dict | None]:
    """Decide every line in its own hook process, 8 at a time."""
    outs: list[dict | None] = []
    for i in range(0, len(lines), 8):
        procs = []
        for line in lines[i:i + 8]:
            p = subprocess.Popen([bin_path("statewright-hook"), "pre-tool-use"], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=proj.env)
            p.stdin.write(json.dumps(proj.payload("PreToolUse", tool_name="Bash",
                                                  tool_input={"command": line})).encode())
            p.stdin.close()
            procs.append(p)
        for p in procs:
            out = p.stdout.read().decode()
            assert p.wait(timeout=120) == 0 and b"Traceback" not in p.stderr.read()
            outs.append(json.loads(out) if out.strip() else None)
    return outs


@pytest.fixture(scope="module")
def realistic(tmp_path_factory: pytest.TempPathFactory) -> Project:
    proj = Project(tmp_path_factory.mktemp("attacks") / "proj")
    proj.write_workflow(WF)
    proj.start("shell-realistic")
    return proj


def test_attack_corpus_sample_is_denied_by_the_hook(realistic: Project) -> None:
    sample = attacks()[::4]  # every 4th line: about 55 attacks across every section
    assert len(sample) >= 40
    for line, out in zip(sample, _batch(realistic, sample), strict=True):
        assert out is not None, f"attack allowed through the hook: {line!r}"
        denied(out)


def test_legit_sample_is_allowed_by_the_hook(realistic: Project) -> None:
    sample = legit()[::3]
    for line, out in zip(sample, _batch(realistic, sample), strict=True):
        try:
            allowed(out)
        except AssertionError:
            raise AssertionError(f"legitimate line refused: {line!r}: {out}") from None


def _imports_of(proj: Project, payload: dict, event: str = "pre-tool-use") -> set[str]:
    code = (f"import sys; from statewright.hook import main; main([{event!r}]); "
            "sys.stderr.write('\\nMODULES ' + ' '.join(sorted(sys.modules)))")
    r = subprocess.run([sys.executable, "-X", "importtime", "-c", code],
                       input=json.dumps(payload).encode(), capture_output=True, env=proj.env, timeout=120)
    assert r.returncode == 0, r.stderr.decode()[-2000:]
    err = r.stderr.decode()
    mods = set(err.rsplit("MODULES ", 1)[1].split())
    # -X importtime lines name every module imported, also ones dropped from sys.modules later
    for line in err.splitlines():
        if line.startswith("import time:") and "|" in line:
            mods.add(line.rsplit("|", 1)[1].strip())
    return mods


def test_hook_path_never_imports_heavy_libraries(realistic: Project) -> None:
    cases = [
        ("pre-tool-use", realistic.payload("PreToolUse", tool_name="Read", tool_input={"file_path": "a"})),
        ("pre-tool-use", realistic.payload("PreToolUse", tool_name="Bash",
                                           tool_input={"command": "pytest -q && git status | cat"})),
        ("pre-tool-use", realistic.payload("PreToolUse", tool_name="Edit",
                                           tool_input={"file_path": "a", "old_string": "x", "new_string": "y"})),
        ("post-tool-use", realistic.payload("PostToolUse", tool_name="Write",
                                            tool_input={"file_path": "a", "content": "x"},
                                            tool_response={"filePath": "a"})),
        ("session-start", realistic.payload("SessionStart", source="startup")),
        ("stop", realistic.payload("Stop", stop_hook_active=False)),
    ]
    for event, payload in cases:
        mods = _imports_of(realistic, payload, event)
        assert "statewright.runtime" in mods  # the real path was taken
        bad = sorted(m for m in mods if m.split(".")[0] in FORBIDDEN)
        assert not bad, f"{event} {payload.get('tool_name')}: imports {bad}"
        if payload.get("tool_name") != "Bash":
            assert "tree_sitter" not in mods, f"{event} {payload.get('tool_name')} imports tree-sitter"
    bash = _imports_of(realistic, cases[1][1])
    # Bash lines are parsed by tree-sitter, lazily (policy.shell loads the grammar's C extension
    # `tree_sitter_bash._binding` without the package's `__init__`, which the fallback imports)
    assert any(m.split(".")[0] == "tree_sitter_bash" for m in bash)


def test_import_of_the_hook_module_is_tiny() -> None:
    code = "import sys; import statewright.hook; print(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60).stdout
    mods = set(out.split())
    assert not any(m.startswith(("statewright.runtime", "statewright.policy", "json")) for m in mods)


# stdlib modules that cost milliseconds to import and that the runtime, store, config, engine.run,
# definition.compiled and hook layers do without (DESIGN section 8: hook start-up budget)
SLOW_STDLIB = ("json", "re", "enum", "pathlib", "secrets", "dataclasses", "inspect", "typing",
               "contextlib", "threading", "datetime", "hashlib", "urllib")


def test_runtime_store_and_shared_types_import_no_slow_stdlib() -> None:
    code = ("import sys, statewright.runtime, statewright.store, statewright.config, "
            "statewright.engine.run, statewright.definition.compiled, statewright.lean, "
            "statewright.hook.handlers; print(' '.join(sorted(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    mods = set(out.stdout.split())
    assert "statewright.runtime.service" in mods and "statewright.store.db" in mods
    bad = sorted(m for m in mods if m.split(".")[0] in SLOW_STDLIB)
    assert not bad, f"the runtime layers import {bad}"
    lazy = {"statewright.engine.machine", "statewright.definition.diagnostics", "statewright.policy"}
    assert not mods & lazy, mods & lazy


def test_a_read_decision_imports_no_json_pathlib_or_engine(realistic: Project) -> None:
    """The whole PreToolUse path of a non-Bash call (the policy layer included)."""
    payload = realistic.payload("PreToolUse", tool_name="Read", tool_input={"file_path": "a"})
    mods = _imports_of(realistic, payload)
    assert "statewright.runtime.enforcement" in mods and "statewright.store.db" in mods
    bad = sorted(mods & {"json", "pathlib", "secrets", "datetime", "contextvars", "hashlib",
                         "statewright.engine.machine", "statewright.definition.diagnostics",
                         "tree_sitter"})
    assert not bad, f"a Read decision imports {bad}"
