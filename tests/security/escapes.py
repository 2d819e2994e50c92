"""The escape-class corpora (issue 10, classes 3-6) as data, and the project they run against.

A corpus file (`tests/security/corpus/*.txt`) holds one case per line:

    <allow|deny|kernel> <state> <tool> <input>

(`kernel`: a Bash line the analysis alone refused by what its text could reach, which the
kernel now binds: it is allowed, runs under the sandbox, and running it as the host would
changes no protected file, nor the store.)

- `state`: a state of `WORKFLOW` below (`work`, `free`, `pinned`, `count`); the case is decided
  as if the run were in it;
- `tool`: the tool name as Claude Code reports it (`Bash`, `Write`, `mcp__fs__write_file`, ...);
- `input`: for `Bash`, the command line (unless it starts with `{"`); otherwise the tool input as
  JSON. `<NL>` is a newline. Placeholders: `{ROOT}` the project root, `{OUT}` a directory
  outside it, `{PKG}` statewright's installed package, `{HOOK}` the `statewright-hook` script,
  `{VENV}` the virtual environment the hook runs in, `{MARKERS}` the active-run markers.

`#` lines are comments; `# --- name` starts a section. Every case runs through the pure gate,
the real hook process and, for `mcp__fs__*` cases, the real proxy in front of the real
filesystem server (`test_escape_corpora.py`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CORPORA = ("paths.txt", "store.txt", "agent_files.txt", "channels.txt")
#: the workflow file in use: a non-ASCII name, so NFC and NFD spellings differ
WF_NAME = "flüsse.json"

WORKFLOW: dict[str, Any] = {
    "id": "escape",
    "initial": "work",
    "states": {
        "work": {
            "allowed_tools": ["Read", "Edit", "Write", "MultiEdit", "NotebookEdit", "Glob",
                              "Grep", "Bash", "PowerShell", "mcp__fs__*"],
            "allowed_commands": ["pytest", "git", "cp", "mv", "rsync", "ln", "tar", "unzip",
                                 "gunzip", "rm", "mkdir", "ls", "cat", "echo", "make",
                                 "statewright", "npm test"],
            "blocked_env": ["SECRET_TOKEN"],
            "max_edit_lines": 20,
            "on": {"FREE": "free", "PIN": "pinned", "COUNT": "count", "BUDGET": "budget",
                   "DONE": "done", "SUB": {"invoke": "helper-flow", "on_complete": "work"}},
        },
        "free": {"on": {"WORK": "work", "DONE": "done"}},
        "pinned": {"blocked_env": ["SECRET_TOKEN"], "env_overrides": {"PINNED": "1"},
                   "on": {"WORK": "work", "DONE": "done"}},
        "count": {"max_files_per_state": 1, "on": {"WORK": "work", "DONE": "done"}},
        "budget": {"context_budget_bytes": 64, "on": {"WORK": "work", "DONE": "done"}},
        "done": {"type": "final"},
    },
}

#: the workflow `escape` invokes: a file with its id would replace it before it is invoked
HELPER = {"id": "helper-flow", "initial": "a",
          "states": {"a": {"on": {"X": "done"}}, "done": {"type": "final"}}}

NOTEBOOK = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
    {"id": "big", "cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
     "source": [f"x{i} = {i}\n" for i in range(30)]},
    {"id": "small", "cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
     "source": ["y = 1\n"]},
]}


class Case:
    __slots__ = ("corpus", "expect", "line", "section", "state", "tool", "tool_input")

    def __init__(self, corpus: str, section: str, expect: str, state: str, tool: str,
                 tool_input: dict[str, Any], line: str) -> None:
        self.corpus, self.section, self.expect = corpus, section, expect
        self.state, self.tool, self.tool_input, self.line = state, tool, tool_input, line

    @property
    def id(self) -> str:
        return f"{self.corpus}:{self.expect}:{self.line[:70]}"


def placeholders(root: Path, out: Path) -> dict[str, str]:
    import statewright
    from statewright.config import active_marker_dir

    venv_bin = Path(sys.executable).parent
    return {"{ROOT}": str(root), "{OUT}": str(out),
            "{PKG}": os.path.dirname(os.path.realpath(statewright.__file__)),
            "{HOOK}": os.path.realpath(venv_bin / "statewright-hook"),
            "{VENV}": os.path.realpath(sys.prefix),
            "{MARKERS}": active_marker_dir()}


def load(name: str, subst: dict[str, str]) -> list[Case]:
    cases: list[Case] = []
    section = ""
    for raw in (HERE / "corpus" / name).read_text(encoding="utf-8").splitlines():
        if raw.startswith("# --- "):
            section = raw[6:].strip()
            continue
        if not raw.strip() or raw.startswith("#"):
            continue
        expect, state, tool, rest = raw.split(" ", 3)
        assert expect in ("allow", "deny", "kernel") and state in WORKFLOW["states"], raw
        text = rest.replace("<NL>", "\n")
        for k, v in subst.items():
            text = text.replace(k, v)
        if tool == "Bash" and not text.startswith("{\""):
            inp: dict[str, Any] = {"command": text}
        else:
            inp = json.loads(text)
        cases.append(Case(name, section, expect, state, tool, inp, raw))
    return cases


def make_project(root: Path, out: Path, servers: dict[str, Any]) -> None:
    """The project every case runs against (see the corpus files for what each part is for)."""
    root.mkdir(parents=True, exist_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    (out / "deep" / "dir").mkdir(parents=True, exist_ok=True)
    wf = root / "workflows"
    wf.mkdir(exist_ok=True)
    (wf / WF_NAME).write_text(json.dumps(WORKFLOW, indent=1), encoding="utf-8")
    (wf / "helper.json").write_text(json.dumps(HELPER, indent=1))
    (root / "statewright.json").write_text(json.dumps({"mcpServers": servers}, indent=1))
    (root / ".mcp.json").write_text('{"mcpServers": {}}\n')
    (root / ".claude").mkdir(exist_ok=True)
    (root / ".claude" / "settings.json").write_text("{}\n")
    src = root / "src"
    (src / "pkg").mkdir(parents=True, exist_ok=True)
    (src / "a.py").write_text("x = 1\n")
    (src / "pkg" / "__init__.py").write_text("")
    (src / "other.json").write_text(json.dumps({"id": "other-flow"}))
    (src / "shadow.json").write_text(json.dumps({"id": "escape"}))
    (root / "build").mkdir(exist_ok=True)
    (root / "sub").mkdir(exist_ok=True)
    (root / "nb.ipynb").write_text(json.dumps(NOTEBOOK))
    for link, target in (("linkdir", src), ("outlink", out / "deep" / "dir"),
                         ("envlink", Path("/proc/self/environ"))):
        if not (root / link).is_symlink():
            os.symlink(target, root / link)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "init", "-q", str(root / "sub")], check=True)
