"""Escape classes 1 and 2 of issue 10, case by case (`corpus/programs.txt`,
`corpus/bash_contexts.txt`): every attack refused and every legitimate control let through, by
the pure gate and by the installed `statewright-hook` process fed Claude Code's PreToolUse JSON
for a run started with the real CLI. The arithmetic corpus is also run with real bash, which
proves each of its attacks is a real escape (the hidden `$(touch pwned)` runs).

A denied call never runs in Claude Code; through the hook the test asserts the refusal, and
that the project on disk holds none of the files an attack would have written."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from conftest import REPO, bin_path

sys.path.insert(0, str(REPO))
from statewright.policy import Counters, GateContext, ToolCall, gate
from tests.hook.harness import Project, allowed, denied
from tests.security.escape_corpus import Case, load, states

PROGRAMS = load("programs.txt")
CONTEXTS = load("bash_contexts.txt")
ALL = PROGRAMS + CONTEXTS


def _layout(root) -> None:
    """The project every case is decided in (see the corpus headers)."""
    for d in ("src", "vendor", "backup", "dist", "build", ".git/hooks", ".statewright"):
        (root / d).mkdir(parents=True, exist_ok=True)
    (root / "src" / "app.py").write_text("print('hi')\n")
    (root / ".mcp.json").write_text('{"mcpServers": {}}')


@pytest.fixture(scope="module")
def ctx(tmp_path_factory: pytest.TempPathFactory) -> GateContext:
    root = tmp_path_factory.mktemp("esc") / "proj"
    root.mkdir()
    _layout(root)
    (root / "workflows").mkdir()
    flow = root / "workflows" / "flow.json"
    flow.write_text("{}")
    return GateContext(project_root=str(root), store_dir=str(root / ".statewright"),
                       protected_files=frozenset({str(flow)}), events=("DONE",))


def test_corpus_sizes() -> None:
    attacks = [c for c in ALL if not c.allowed]
    controls = [c for c in ALL if c.allowed]
    assert len(attacks) >= 60 and len(controls) >= 25
    assert len({(c.state_name, c.line) for c in ALL}) == len(ALL), "duplicate cases"


@pytest.mark.parametrize("case", ALL, ids=repr)
def test_gate(case: Case, ctx: GateContext) -> None:
    d = gate(case.state(), Counters(), ToolCall("Bash", {"command": case.line}), ctx)
    assert d.allowed is case.allowed, f"{case!r}: {d.reason}\n" + "\n".join(d.explanation)
    if not d.allowed:
        assert d.rule in ("self_protection", "allowed_commands", "blocked_env")


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")  # pragma: no cover
@pytest.mark.parametrize("case", CONTEXTS, ids=repr)
def test_bash_runs_the_hidden_code_of_every_attack(case: Case, tmp_path) -> None:
    """Real bash: the attack's hidden `$(touch pwned)` runs; a control creates nothing."""
    subprocess.run(["bash", "-c", case.line], cwd=tmp_path, stdin=subprocess.DEVNULL,
                   capture_output=True, timeout=30, env={"PATH": os.environ["PATH"]})
    assert (tmp_path / "pwned").exists() is (not case.allowed), case


def _workflow(doc: dict) -> dict:
    work = {k: v for k, v in doc.items() if k in ("allowed_commands", "blocked_env")}
    return {"id": "flow", "initial": "work",
            "states": {"work": {**work, "on": {"DONE": "end"}}, "end": {"type": "final"}}}


def _hook_batch(p: Project, lines: list[str]) -> list[dict | None]:
    """Each line in its own hook process, 8 at a time (as Claude Code runs them)."""
    outs: list[dict | None] = []
    for i in range(0, len(lines), 8):
        procs = []
        for line in lines[i:i + 8]:
            proc = subprocess.Popen([bin_path("statewright-hook"), "pre-tool-use"],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, env=p.env)
            payload = p.payload("PreToolUse", tool_name="Bash", tool_input={"command": line},
                                tool_use_id="toolu_esc")
            assert proc.stdin is not None
            proc.stdin.write(json.dumps(payload).encode())
            proc.stdin.close()
            procs.append(proc)
        for proc in procs:
            assert proc.stdout is not None and proc.stderr is not None
            out, err = proc.stdout.read().decode(), proc.stderr.read()
            assert proc.wait(timeout=120) == 0 and b"Traceback" not in err, err
            outs.append(json.loads(out) if out.strip() else None)
    return outs


@pytest.mark.e2e
@pytest.mark.parametrize("state", sorted(states(ALL)))
def test_real_hook(state: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    cases = [c for c in ALL if c.state_name == state]
    p = Project(tmp_path_factory.mktemp(f"esc-{state}") / "proj")
    _layout(p.root)
    p.write_workflow(_workflow(cases[0].state_doc))
    p.start("flow")
    before = sorted(str(x.relative_to(p.root)) for x in p.root.rglob("*")
                    if ".statewright" not in x.parts)
    for case, out in zip(cases, _hook_batch(p, [c.line for c in cases]), strict=True):
        if case.allowed:
            try:
                allowed(out)
            except AssertionError:
                raise AssertionError(f"legitimate line refused: {case!r}: {out}") from None
        else:
            assert out is not None, f"hook allowed an attack: {case!r}"
            denied(out)
    after = sorted(str(x.relative_to(p.root)) for x in p.root.rglob("*")
                   if ".statewright" not in x.parts)
    assert after == before  # the hook decides; it runs nothing
    assert not (p.root / "pwned").exists()
