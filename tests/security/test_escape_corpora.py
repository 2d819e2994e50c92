"""Escape classes 3-6 of issue 10: every corpus case through the pure gate, the real
`statewright-hook` process (a run started by the real CLI, moved through its states by the real
CLI) and, for MCP filesystem cases, the real `statewright serve` in front of the real
`@modelcontextprotocol/server-filesystem`, with the effect checked on disk and in the run."""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, clean_env

sys.path.insert(0, str(REPO))
from statewright.config import load_config, mcp_server_roots
from statewright.definition.compiled import State
from statewright.policy import Counters, GateContext, ToolCall, gate
from statewright.runtime.enforcement import file_reader
from statewright.sandbox.launcher import unwrap
from tests.hook.harness import Project, allowed, denied
from tests.proxy.harness import FS_JS, NODE, ProxyClient, text_of
from tests.security.escapes import CORPORA, WF_NAME, WORKFLOW, Case, load, make_project
from tests.security.escapes import placeholders as _placeholders

pytestmark = pytest.mark.e2e

_U = re.compile(r"\\u([0-9a-fA-F]{4})")


def _servers(root: Path) -> dict:
    return {"fs": {"command": NODE, "args": [str(FS_JS), str(root / "workflows"),
                                             str(root / "src")]}}


def _cases(root: Path, out: Path) -> list[Case]:
    subst = _placeholders(root, out)
    cases = [c for name in CORPORA for c in load(name, subst)]
    for c in cases:  # `\u0308` in a shell line: the NFD spelling, as in the JSON cases
        if c.tool == "Bash":
            c.tool_input = {k: _U.sub(lambda m: chr(int(m.group(1), 16)), v)
                            if isinstance(v, str) else v for k, v in c.tool_input.items()}
    return cases


_ROOT = Path("/nonexistent-root")  # ids only: the real paths are per fixture
_ALL = _cases(_ROOT, Path("/nonexistent-out"))


def test_corpus_sizes() -> None:
    attacks = [c for c in _ALL if c.expect == "deny"]
    controls = [c for c in _ALL if c.expect == "allow"]
    assert len(attacks) >= 50 and len(controls) >= 20, (len(attacks), len(controls))
    assert len({c.line for c in _ALL}) == len(_ALL), "duplicate cases"
    for name in CORPORA:  # every corpus has both sides
        assert {c.expect for c in _ALL if c.corpus == name} >= {"allow", "deny"}, name


# -- the pure gate ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def gproj(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("escgate")
    root, out = base / "proj", base / "out"
    make_project(root, out, _servers(root))
    (root / ".statewright").mkdir()
    (root / ".statewright" / ".gitignore").write_text("*\n")
    return root, out


def _state(name: str) -> State:
    st = dict(WORKFLOW["states"][name])
    st.pop("on", None)
    return State(name=name, allowed_tools=tuple(st["allowed_tools"]) if "allowed_tools" in st
                 else None,
                 allowed_commands=tuple(st["allowed_commands"]) if "allowed_commands" in st
                 else None,
                 blocked_env=tuple(st.get("blocked_env", ())),
                 env_overrides=dict(st.get("env_overrides", {})),
                 max_edit_lines=st.get("max_edit_lines"),
                 max_files_per_state=st.get("max_files_per_state"),
                 context_budget_bytes=st.get("context_budget_bytes"))


def _gate_decide(root: Path, case: Case):
    ctx = GateContext(project_root=str(root), store_dir=str(root / ".statewright"),
                      protected_files=frozenset({str(root / "workflows" / WF_NAME)}),
                      read_text=file_reader(str(root)), events=("DONE",),
                      server_roots=mcp_server_roots(load_config(root)))
    counters = Counters(files_edited=frozenset({"src/a.py"}) if case.state == "count"
                        else frozenset())
    return gate(_state(case.state), counters, ToolCall(case.tool, case.tool_input, cwd=str(root)),
                ctx)


@pytest.mark.parametrize("idx", range(len(_ALL)), ids=[c.id for c in _ALL])
def test_gate(gproj: tuple[Path, Path], idx: int) -> None:
    root, out = gproj
    case = _cases(root, out)[idx]
    d = _gate_decide(root, case)
    why = f"{case.line}\n" + "\n".join(d.explanation)
    if case.expect == "deny":
        assert not d.allowed and d.code == "TOOL_DENIED", "attack allowed: " + why
    elif case.expect == "kernel":
        assert d.allowed and d.sandboxed, "not left to the kernel: " + why
    else:
        assert d.allowed, f"control denied: {d.reason}\n" + why


# -- the real hook process -------------------------------------------------------------------

@pytest.fixture(scope="module")
def hproj(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, Path]:
    base = tmp_path_factory.mktemp("eschook")
    root, out = base / "proj", base / "out"
    make_project(root, out, _servers(root))
    p = Project(root)
    p.start("escape")
    return p, out


def _digest(root: Path) -> str:
    h = hashlib.sha256()
    for rel in (f"workflows/{WF_NAME}", "statewright.json", ".mcp.json",
                ".claude/settings.json"):
        h.update((root / rel).read_bytes())
    return h.hexdigest()


def _route(p: Project, state: str) -> None:
    """Move the run to `state` with the real CLI (as a human would)."""
    cur = p.status()["state"]
    if cur == state:
        return
    if cur != "work":
        p.transition("WORK")
    if state != "work":
        p.transition({"free": "FREE", "pinned": "PIN", "count": "COUNT",
                      "budget": "BUDGET"}[state])
    if state == "count":  # src/a.py is the one file this state has changed
        allowed(p.pre("Edit", {"file_path": p.path("src/a.py"), "old_string": "x = 1",
                               "new_string": "x = 1"}))


def _denials(p: Project) -> int:
    return sum(1 for e in p.history() if e.get("kind") == "tool_denied")


def test_hook(hproj: tuple[Project, Path]) -> None:
    """Every case through the real hook, state by state; refusals are recorded in the run,
    and the protected files are untouched."""
    p, out = hproj
    cases = _cases(p.root, out)
    before = _digest(p.root)
    failures: list[str] = []
    denials = 0
    for state in ("work", "free", "pinned", "count"):
        _route(p, state)
        start = _denials(p)
        n = 0
        for case in (c for c in cases if c.state == state):
            answer = p.pre(case.tool, case.tool_input)
            try:
                if case.expect == "deny":
                    denied(answer)
                    n += 1
                else:
                    allowed(answer)
                    if case.expect == "kernel":  # (run for real: `test_kernel_cases`)
                        assert unwrap(answer["hookSpecificOutput"]["updatedInput"]["command"])
            except AssertionError as exc:
                failures.append(f"{case.line}: {exc}")
        assert _denials(p) - start == n, state  # every refusal is recorded in the run
        denials += n
    assert not failures, "\n".join(failures)
    assert denials == sum(c.expect == "deny" for c in cases)
    assert _digest(p.root) == before


_KERNEL = [i for i, c in enumerate(_ALL) if c.expect == "kernel"]


@pytest.mark.parametrize("idx", _KERNEL, ids=[_ALL[i].id for i in _KERNEL])
def test_kernel_cases(tmp_path: Path, idx: int) -> None:
    """Each line left to the kernel, in a project of its own: the real hook rewrites it, bash
    runs the rewritten line as the host would, and no protected file nor the store changed."""
    root, out = tmp_path / "proj", tmp_path / "out"
    make_project(root, out, _servers(root))
    p = Project(root)
    p.start("escape")
    case = _cases(root, out)[idx]
    _route(p, case.state)
    store = root / ".statewright" / "state.db"
    answer = p.pre(case.tool, case.tool_input)
    allowed(answer)
    # (the write-ahead log comes and goes with statewright's own writes)
    before, listing = _digest(root), sorted(x.name for x in store.parent.iterdir()
                                            if not x.name.endswith(("-wal", "-shm")))
    line = answer["hookSpecificOutput"]["updatedInput"]["command"]
    assert unwrap(line) is not None, line
    subprocess.run(["bash", "-c", line], cwd=root, capture_output=True, timeout=120,
                   env=clean_env(SECRET_TOKEN="s3cr3t"))
    assert _digest(root) == before, case.line
    # (nothing of the store's went: statewright's own new files, a resident server's key, may
    # come meanwhile)
    assert set(listing) <= {x.name for x in store.parent.iterdir()}, case.line
    assert p.status()["state"] == case.state  # the store still holds the run, unchanged


# -- the real proxy in front of the real filesystem server -----------------------------------

@pytest.fixture(scope="module")
def pproj(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, Path]:
    base = tmp_path_factory.mktemp("escproxy")
    root, out = base / "proj", base / "out"
    make_project(root, out, _servers(root))
    (root / "src" / "big.txt").write_text("0123456789" * 100)
    p = Project(root)
    p.cli("start", "escape", "--session", "default")
    return p, out


def test_proxy_filesystem_cases(pproj: tuple[Project, Path]) -> None:
    p, out = pproj
    cases = [c for c in _cases(p.root, out) if c.tool.startswith("mcp__fs__")]
    assert cases
    before = _digest(p.root)
    listing = sorted(str(x) for x in p.root.rglob("*"))
    failures = []
    with ProxyClient(p.root, env=clean_env(STATEWRIGHT_SESSION="default")) as client:
        for case in cases:
            r = client.call("fs__" + case.tool.split("__", 2)[2], case.tool_input)
            text = text_of(r)
            refused = r.is_error and "TOOL_DENIED" in text
            if (case.expect == "deny") != refused:
                failures.append(f"{case.line}: {text[:300]}")
    assert not failures, "\n".join(failures)
    assert _digest(p.root) == before
    created = sorted(str(x) for x in p.root.rglob("*"))
    new = set(created) - set(listing)
    assert new <= {str(p.root / "src" / "notes.txt")}, new  # only the allowed write landed


def test_proxy_cuts_output_past_the_budget(pproj: tuple[Project, Path]) -> None:
    p, _out = pproj
    p.cli("transition", "BUDGET", "--session", "default")
    try:
        with ProxyClient(p.root, env=clean_env(STATEWRIGHT_SESSION="default")) as client:
            r = client.call("fs__read_text_file", {"path": str(p.root / "src" / "big.txt")})
            text = text_of(r)
            assert "output cut" in text
            body = text.split("[statewright] output cut", 1)[0].rstrip("\n")
            assert len(body.encode()) <= 64 and body.startswith("0123456789")
            again = client.call("fs__read_text_file", {"path": str(p.root / "src" / "a.py")})
            assert again.is_error and "context_budget" in text_of(again).replace(" ", "_")
    finally:
        p.cli("transition", "WORK", "--session", "default")
