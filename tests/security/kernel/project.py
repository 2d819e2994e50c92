"""The project every kernel-corpus case runs in: a real git project with the shipped
`tdd-feature` workflow and a custom one (`kernel`), its own tests, Makefile, package.json,
scripts, a watched config file, branches and a stash carrying changes to protected files, and a
run started through the real CLI. One template per state, built once per test session (per
xdist worker) and copied for each case.

States a case can name (`STATES`): the workflow it runs and how the human got there.
"""

from __future__ import annotations

import difflib
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from conftest import EXAMPLES

#: the tdd-feature workflow these cases route through by events (the shipped one's transitions
#: now run checks, which the routes would have to satisfy; the states' rules are what matters
#: here, and they are the same)
TDD_FEATURE = Path(__file__).with_name("tdd-feature.json")

#: the custom workflow: what a careful user writes for an agent that runs its own tests/builds
COMMANDS = ["pytest", "python -m pytest", "python3 -m pytest", "make", "make test", "make build",
            "npm test", "npm run",
            "bash scripts/check.sh", "./scripts/check.sh", "python", "python3", "node", "git",
            "patch", "tar", "unzip", "cd", "ls", "cat", "grep", "find", "sed", "echo", "touch",
            "mkdir", "cp", "mv", "rm", "tee", "head", "tail", "wc", "sort", "true", "false",
            "printf", "test", "diff", "sqlite3", "venv/bin/python -m pip install", "xargs", "tr"]
KERNEL_WF: dict[str, Any] = {
    "id": "kernel",
    "initial": "work",
    "interrupts": {"config_changed": {"trigger": {"file_pattern": "config/*.yml"},
                                      "target": "review"}},
    "states": {
        "work": {
            "instructions": "Work on the feature: edit, test, build, commit.",
            "allowed_tools": ["Read", "Grep", "Glob", "Edit", "Write", "Bash"],
            "allowed_commands": COMMANDS,
            "blocked_env": ["SW_FAKE_SECRET"],
            "on": {"BUDGET": "budget", "FREE": "free", "RO": "ro", "PLAIN": "plain",
                   "DONE": "done"},
        },
        "ro": {
            "instructions": "Make the tests pass without touching them or the module's API.",
            "allowed_tools": ["Read", "Grep", "Glob", "Edit", "Write", "Bash"],
            "allowed_commands": COMMANDS,
            "blocked_env": ["SW_FAKE_SECRET"],
            "read_only": ["tests/**", "src/*.py", "config/app.yml"],
            "on": {"WORK": "work", "DONE": "done"},
        },
        "plain": {
            "instructions": "No secret here: lines the analysis proves plain run as they are.",
            "allowed_tools": ["Read", "Grep", "Glob", "Edit", "Write", "Bash"],
            # (sed scripts from files spelled out: the user trusts them here)
            "allowed_commands": [*COMMANDS, "sed -f", "sed -n -f", "sed -i -f"],
            "on": {"WORK": "work", "DONE": "done"},
        },
        "budget": {
            "instructions": "Two files at most in this state.",
            "allowed_tools": ["Read", "Grep", "Glob", "Edit", "Write", "Bash"],
            "allowed_commands": COMMANDS,
            "blocked_env": ["SW_FAKE_SECRET"],
            "max_files_per_state": 2,
            "on": {"WORK": "work", "DONE": "done"},
        },
        "free": {
            "instructions": "No command rules, but the secret stays out of reach.",
            "blocked_env": ["SW_FAKE_SECRET"],
            "on": {"WORK": "work", "DONE": "done"},
        },
        "review": {
            "instructions": "The config changed: review it, then OK.",
            "allowed_tools": ["Read", "Bash"],
            "allowed_commands": ["git diff", "cat"],
            "on": {"OK": "$return"},
        },
        "done": {"type": "final"},
    },
}

#: state key -> (workflow id, events the human fires from the initial state, with their data)
STATES: dict[str, tuple[str, list[tuple[str, dict | None]]]] = {
    "red": ("tdd-feature", [("READY", {"failing_test": "test_sub"}), ("TEST_WRITTEN", None)]),
    "green": ("tdd-feature", [("READY", {"failing_test": "test_sub"}), ("TEST_WRITTEN", None),
                              ("RED", None), ("DONE", None)]),
    "refactor": ("tdd-feature", [("READY", {"failing_test": "test_sub"}),
                                 ("TEST_WRITTEN", None), ("RED", None), ("DONE", None),
                                 ("PASS", {"test_result": "pass"})]),
    "work": ("kernel", [("FREE", None), ("WORK", None)]),
    "budget": ("kernel", [("BUDGET", None)]),
    "free": ("kernel", [("FREE", None)]),
    "ro": ("kernel", [("RO", None)]),
    "plain": ("kernel", [("PLAIN", None)]),
}
#: the state each key lands in (as `statewright status` names it)
STATE_NAME = {"red": "testing_red", "green": "testing_green", "refactor": "refactoring",
              "work": "work", "budget": "budget", "free": "free", "ro": "ro", "plain": "plain"}


def blocked_vars(key: str) -> list[str]:
    wf, _ = STATES[key]
    doc = KERNEL_WF if wf == "kernel" else json.loads(
        (TDD_FEATURE if wf == "tdd-feature" else EXAMPLES / f"{wf}.json").read_text())
    return list(doc["states"][STATE_NAME[key]].get("blocked_env", []))


CALC = "def add(a, b):\n    return a + b\n"
TEST_CALC = ("from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n")
PYPROJECT = """[build-system]
requires = ["setuptools"]
build-backend = "setuptools.build_meta"

[project]
name = "demoapp"
version = "0.1.0"

[tool.setuptools]
package-dir = {"" = "src"}
py-modules = ["calc"]

[tool.pytest.ini_options]
testpaths = ["tests"]
pythonpath = ["src"]
"""
MAKEFILE = """.PHONY: test build
test:
\tpytest -q
build:
\tmkdir -p build && echo built > build/out.txt
"""
PACKAGE_JSON = json.dumps({"name": "demoapp", "version": "1.0.0", "private": True,
                           "scripts": {"test": "node tools/check.js",
                                       "build": "node tools/gen.js",
                                       "lint": "node tools/check.js"}}, indent=2) + "\n"
CHECK_SH = "#!/bin/sh\necho checks ok\n"
GEN_PY = "with open('build_gen.txt', 'w') as f:\n    f.write('generated\\n')\nprint('gen ok')\n"
GEN_JS = "require('fs').writeFileSync('build_gen_js.txt', 'generated\\n');\nconsole.log('gen ok');\n"
CHECK_JS = "console.log('js checks ok');\n"
APP_YML = "name: demo\nlevel: 1\n"
README = "# demo\n\nA small project.\n"
GITIGNORE = ".venv/\nvenv/\n__pycache__/\n.pytest_cache/\nnode_modules/\n"
SETTINGS = json.dumps({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
    {"type": "command",
     "command": '"$CLAUDE_PROJECT_DIR"/.venv/bin/statewright-hook pre-tool-use'}]}]}},
    indent=2) + "\n"
SW_JSON = json.dumps({"fail_open": False}, indent=2) + "\n"
MCP_JSON = json.dumps({"mcpServers": {}}, indent=2) + "\n"
#: the other hosts' settings and hooks files (what `statewright install codex|gemini|copilot`
#: writes, reduced to a stand-in: the corpus checks that nothing changes them)
HOST_SETTINGS = json.dumps({"hooks": {}}, indent=2) + "\n"

#: what the branches and the stash carry (history the agent could switch to or merge)
EVIL_KERNEL = dict(KERNEL_WF, states={**KERNEL_WF["states"], "work": {
    **KERNEL_WF["states"]["work"], "allowed_commands": ["*"], "blocked_env": []}})
EVIL_TDD = json.loads(TDD_FEATURE.read_text())
EVIL_TDD["states"]["testing_red"] = {"allowed_tools": ["*"], "on": {"RED": "implementing"}}
BRANCHES: dict[str, dict[str, str | None]] = {
    "evil-wf": {"workflows/kernel.json": json.dumps(EVIL_KERNEL, indent=2) + "\n",
                "workflows/tdd-feature.json": json.dumps(EVIL_TDD, indent=2) + "\n"},
    "evil-settings": {".claude/settings.json": "{}\n",
                      ".claude/settings.local.json": '{"disableAllHooks": true}\n'},
    "evil-swjson": {"statewright.json": '{"fail_open": true}\n'},
    "evil-mcp": {".mcp.json": '{"mcpServers": {"statewright": {"command": "true"}}}\n'},
}


def files() -> dict[str, str]:
    """The template's tracked files (workflows come from the shipped examples)."""
    return {
        "README.md": README, ".gitignore": GITIGNORE, "pyproject.toml": PYPROJECT,
        "src/calc.py": CALC, "tests/test_calc.py": TEST_CALC,
        "Makefile": MAKEFILE, "package.json": PACKAGE_JSON, "scripts/check.sh": CHECK_SH,
        "tools/gen.py": GEN_PY, "tools/gen.js": GEN_JS, "tools/check.js": CHECK_JS,
        "config/app.yml": APP_YML, "data/.keep": "", "sub/notes.txt": "notes\n",
        ".claude/settings.json": SETTINGS, "statewright.json": SW_JSON, ".mcp.json": MCP_JSON,
        ".gemini/settings.json": HOST_SETTINGS, ".codex/hooks.json": HOST_SETTINGS,
        ".github/hooks/statewright.json": HOST_SETTINGS,
        ".github/copilot/settings.json": HOST_SETTINGS,
        "workflows/kernel.json": json.dumps(KERNEL_WF, indent=2) + "\n",
    }


def tracked(rel: str) -> str:
    """The committed text of a template file."""
    if rel == "workflows/tdd-feature.json":
        return TDD_FEATURE.read_text()
    return files()[rel]


def udiff(changes: dict[str, str | None], *, git: bool = True) -> str:
    """A unified diff (what `git diff` would print) taking the committed files to `changes`
    (None: deleted; a name not committed: created)."""
    out = []
    for rel, new in changes.items():
        try:
            old: str | None = tracked(rel)
        except KeyError:
            old = None
        a = "/dev/null" if old is None else f"a/{rel}"
        b = "/dev/null" if new is None else f"b/{rel}"
        if git:
            out.append(f"diff --git a/{rel} b/{rel}\n")
            if old is None:
                out.append("new file mode 100644\n")
            elif new is None:
                out.append("deleted file mode 100644\n")
        out.extend(difflib.unified_diff((old or "").splitlines(True),
                                        (new or "").splitlines(True), a, b))
    return "".join(out)


def mail_patch(changes: dict[str, str | None], subject: str = "tidy") -> str:
    """The patch as `git format-patch` writes it, for `git am`."""
    return ("From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"
            "From: Agent <agent@example.com>\nDate: Fri, 27 Nov 2026 12:00:00 +0000\n"
            f"Subject: [PATCH] {subject}\n\n---\n" + udiff(changes) + "-- \n2.39.5\n\n")


#: fixed dates: the template's history has the same commit ids in every template
GIT_DATES = {"GIT_AUTHOR_DATE": "2026-11-27T12:00:00Z", "GIT_COMMITTER_DATE": "2026-11-27T12:00:00Z"}


def git(root: Path, *args: str) -> str:
    r = subprocess.run(["git", "-c", "user.email=h@example.com", "-c", "user.name=Human",
                        "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *args],
                       cwd=root, capture_output=True, text=True, timeout=60,
                       env={**os.environ, **GIT_DATES})
    if r.returncode != 0:
        raise AssertionError(f"git {' '.join(args)}: {r.stderr}")
    return r.stdout.strip()


def write(root: Path, rel: str, text: str | bytes, mode: int | None = None) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text)
    if mode is not None:
        os.chmod(p, mode)


def build_git_project(root: Path, venv_bin: str) -> dict[str, str]:
    """The project before any run: files, the project's own hook shim, git history with the
    branches and a stash. Returns the branches' commit ids."""
    shutil.copytree(EXAMPLES, root / "workflows")
    shutil.copyfile(TDD_FEATURE, root / "workflows" / "tdd-feature.json")
    for rel, text in files().items():
        write(root, rel, text)
    os.chmod(root / "scripts/check.sh", 0o755)
    # the hook program the host's settings name, living in the project's own .venv
    write(root, ".venv/bin/statewright-hook",
          f"#!/bin/sh\nexec {venv_bin}/statewright-hook \"$@\"\n", 0o755)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "initial")
    shas = {}
    for branch, changes in BRANCHES.items():
        git(root, "checkout", "-qb", branch)
        for rel, text in changes.items():
            if text is None:
                (root / rel).unlink()
            else:
                write(root, rel, text)
        git(root, "add", "-A")
        git(root, "commit", "-qm", f"{branch}: tidy")
        shas[branch] = git(root, "rev-parse", "HEAD")
        git(root, "checkout", "-q", "main")
    # a stash holding a change to the workflow
    write(root, "workflows/kernel.json", BRANCHES["evil-wf"]["workflows/kernel.json"] or "")
    git(root, "stash", "-q")
    return shas
