"""A state's `read_only` globs, as the analysis enforces them (the gate's `read_only` check):
every way an edit tool, a writing MCP tool or a shell line names a matching path is refused with
the glob in the reason; everyday work beside them is not. The kernel tier binds what code a line
runs would write; these are the early, explained refusals."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from statewright.definition.compiled import State
from statewright.policy import Counters, GateContext, ToolCall, gate
from statewright.policy.protect.readonly import (
    WALK_LIMIT,
    held_glob,
    holding_glob,
    matching_glob,
)
from tests.conftest import REPO, bin_path, clean_env

GLOBS = ("tests/**", "conftest.py", "**/*.lock", "docs/[ab]*.md", "Makefile")


@pytest.fixture
def root(tmp_path):
    r = tmp_path / "proj"
    for d in (".statewright", "workflows", "tests/unit", "src/pkg", "docs", "build"):
        (r / d).mkdir(parents=True)
    (r / "workflows" / "flow.json").write_text("{}")
    (r / "tests" / "unit" / "test_a.py").write_text("def test_a():\n    assert 1\n")
    (r / "conftest.py").write_text("")
    (r / "Makefile").write_text("all:\n\ttrue\n")
    (r / "src" / "pkg" / "mod.py").write_text("x = 1\n")
    (r / "src" / "pkg" / "deps.lock").write_text("a==1\n")
    (r / "docs" / "api.md").write_text("# api\n")
    (r / "docs" / "guide.md").write_text("# guide\n")
    (r / "build" / "out.o").write_text("")
    os.symlink("tests", r / "tlink")
    return r


@pytest.fixture
def ctx(root):
    return GateContext(project_root=str(root), store_dir=str(root / ".statewright"),
                       protected_files=frozenset({str(root / "workflows" / "flow.json")}),
                       events=("GREEN",))


STATE = State("green", read_only=GLOBS)


def decide(ctx, tool, state=STATE, **inp):
    return gate(state, Counters(), ToolCall(tool, inp, cwd=ctx.project_root), ctx)


# -- the globs ------------------------------------------------------------------------------------

@pytest.mark.parametrize("rel,glob", [
    ("tests/unit/test_a.py", "tests/**"), ("tests/x", "tests/**"), ("conftest.py", "conftest.py"),
    ("poetry.lock", "**/*.lock"), ("a/b/c.lock", "**/*.lock"), ("docs/api.md", "docs/[ab]*.md"),
    ("Makefile", "Makefile"), ("TESTS/x.py", "tests/**"), ("makefile", "Makefile"),
    ("docs/b.md", "docs/[ab]*.md"),
])
def test_matching_glob_names_the_glob(rel, glob):
    assert matching_glob(rel, GLOBS) == glob


@pytest.mark.parametrize("rel", ["tests", "src/conftest.py", "src/pkg/mod.py", "docs/guide.md",
                                 "docs/sub/api.md", "Makefile.bak", "lock", ".", "testsx/a"])
def test_matching_glob_leaves_the_rest(rel):
    assert matching_glob(rel, GLOBS) is None


def test_nfc_and_nfd_spellings_match():
    nfc, nfd = "tests/caf\u00e9.py", "tests/cafe\u0301.py"
    assert matching_glob(nfd, ("tests/caf\u00e9.py",)) == "tests/caf\u00e9.py"
    assert matching_glob(nfc, ("tests/cafe\u0301.py",)) == "tests/cafe\u0301.py"


@pytest.mark.parametrize("rel,expected", [
    (".", "tests/**"), ("tests", "tests/**"), ("tests/unit", "tests/**"), ("src", "**/*.lock"),
    ("docs", "**/*.lock"),
])
def test_holding_glob_is_structural(rel, expected):
    assert holding_glob(rel, GLOBS) == expected


def test_holding_glob_rules_out_what_cannot_be_below():
    assert holding_glob("src", ("tests/**", "conftest.py", "docs/*.md")) is None
    assert holding_glob("docs/sub", ("docs/*.md",)) is None
    assert holding_glob("docs", ("docs/*.md",)) == "docs/*.md"


def test_held_glob_looks_at_what_is_there(root):
    assert held_glob("src", str(root / "src"), GLOBS) == ("**/*.lock", "`src/pkg/deps.lock`")
    assert held_glob("build", str(root / "build"), GLOBS) is None
    big = root / "build" / "many"
    big.mkdir()
    for i in range(WALK_LIMIT + 1):
        (big / f"f{i}").touch()
    glob, what = held_glob("build", str(root / "build"), GLOBS)
    assert glob == "**/*.lock" and "too many" in what  # (fail closed: not looked through)
    assert held_glob("build", str(root / "build"), ("tests/**",)) is None  # (nothing to look for)


# -- attacks: each refused by the read_only check, naming the glob -------------------------------

TOOL_ATTACKS = [
    ("Edit", {"file_path": "tests/unit/test_a.py", "old_string": "1", "new_string": "0"}, "tests/**"),
    ("Edit", {"file_path": "{root}/tests/unit/test_a.py", "old_string": "1", "new_string": "0"}, "tests/**"),
    ("Write", {"file_path": "tests/unit/test_b.py", "content": "x"}, "tests/**"),
    ("Write", {"file_path": "tlink/unit/test_a.py", "content": "x"}, "tests/**"),
    ("Write", {"file_path": "src/../tests/unit/test_a.py", "content": "x"}, "tests/**"),
    ("Write", {"file_path": "./conftest.py", "content": "import os"}, "conftest.py"),
    ("Write", {"file_path": "src/pkg/deps.lock", "content": "b==2\n"}, "**/*.lock"),
    ("Write", {"file_path": "Cargo.lock", "content": "x"}, "**/*.lock"),
    ("Write", {"file_path": "TESTS/unit/test_a.py", "content": "x"}, "tests/**"),
    ("MultiEdit", {"file_path": "Makefile", "edits": [{"old_string": "true", "new_string": "rm -rf /"}]}, "Makefile"),
    ("NotebookEdit", {"notebook_path": "tests/nb.ipynb", "new_source": "x"}, "tests/**"),
    ("Write", {"file_path": "docs/api.md", "content": "x"}, "docs/[ab]*.md"),
    ("mcp__filesystem__write_file", {"path": "{root}/tests/unit/test_a.py", "content": "x"}, "tests/**"),
    ("mcp__filesystem__edit_file", {"path": "{root}/conftest.py", "edits": []}, "conftest.py"),
    ("mcp__filesystem__move_file", {"source": "{root}/tests/unit/test_a.py", "destination": "{root}/x.py"}, "tests/**"),
    ("mcp__filesystem__move_file", {"source": "{root}/src/a.py", "destination": "{root}/tests/a.py"}, "tests/**"),
    ("mcp__filesystem__move_file", {"source": "{root}/tests", "destination": "{root}/t2"}, "tests/**"),
    ("mcp__filesystem__move_file", {"source": "{root}/src", "destination": "{root}/s2"}, "**/*.lock"),
    ("mcp__fs__delete_file", {"path": "{root}/tests/unit"}, "tests/**"),
]


def _fill(inp, root):
    return json.loads(json.dumps(inp).replace("{root}", str(root)))


@pytest.mark.parametrize("tool,inp,glob", TOOL_ATTACKS,
                         ids=[f"{t}:{json.dumps(i)[:50]}" for t, i, _ in TOOL_ATTACKS])
def test_tool_attack_refused(ctx, root, tool, inp, glob):
    d = decide(ctx, tool, **_fill(inp, root))
    assert not d.allowed and d.rule == "read_only", d.reason
    assert f"read_only `{glob}`" in d.reason and "state 'green'" in d.reason


LINE_ATTACKS = [
    ("echo 'assert 0' > tests/unit/test_a.py", "tests/**"),
    ("printf x >> tests/unit/test_a.py", "tests/**"),
    ("cat /dev/null > conftest.py", "conftest.py"),
    ("ls &> tests/log", "tests/**"),
    ("sed -i s/1/0/ tests/unit/test_a.py", "tests/**"),
    ("sed -i.bak -e s/1/0/ conftest.py", "conftest.py"),
    ("tee tests/unit/test_a.py < /dev/null", "tests/**"),
    ("echo x | tee -a Makefile", "Makefile"),
    ("sort -o tests/unit/test_a.py src/pkg/mod.py", "tests/**"),
    ("dd if=/dev/zero of=conftest.py count=1", "conftest.py"),
    ("truncate -s 0 tests/unit/test_a.py", "tests/**"),
    ("touch tests/unit/test_new.py", "tests/**"),
    ("cp src/pkg/mod.py tests/unit/test_a.py", "tests/**"),
    ("cp src/pkg/mod.py tests/unit/", "tests/**"),
    ("install -m 644 src/pkg/mod.py conftest.py", "conftest.py"),
    ("mv src/pkg/mod.py tests/unit/test_a.py", "tests/**"),
    ("mv tests/unit/test_a.py src/", "tests/**"),
    ("mv tests tests_old", "tests/**"),
    ("mv src src2", "**/*.lock"),
    ("rm tests/unit/test_a.py", "tests/**"),
    ("rm -f conftest.py Makefile", "conftest.py"),
    ("rm -rf tests", "tests/**"),
    ("rm -r tests/unit", "tests/**"),
    ("rm -rf src/pkg", "**/*.lock"),
    ("rm tests/unit/*.py", "tests/**"),
    ("unlink conftest.py", "conftest.py"),
    ("rm -rf tlink/unit", "tests/**"),
    ("ln tests/unit/test_a.py src/hard", "tests/**"),
    ("ln -f src/pkg/mod.py conftest.py", "conftest.py"),
    ("chmod 000 tests/unit/test_a.py", "tests/**"),
    ("chmod -w Makefile", "Makefile"),
    ("chmod -R u+w tests", "tests/**"),
    ("chown -R nobody src", "**/*.lock"),
    ("cd tests && echo x > unit/test_a.py", "tests/**"),
    ("cd tests/unit; rm test_a.py", "tests/**"),
    ("echo x > ./src/../conftest.py", "conftest.py"),
    ("echo x > tlink/unit/test_a.py", "tests/**"),
    ("pytest -q; echo done > tests/ran", "tests/**"),
    ("echo > Cargo.lock", "**/*.lock"),
    ("echo > docs/b2.md", "docs/[ab]*.md"),
    ("gunzip tests/data.json.gz", "tests/**"),
    ("cp -l tests/unit/test_a.py src/alias.py", "tests/**"),
    ("cp -rl tests backup", "tests/**"),
    ("cp --link conftest.py c2.py", "conftest.py"),
    ("git checkout -- tests/unit/test_a.py", "tests/**"),
    ("git restore tests", "tests/**"),
    ("git restore --source=HEAD~3 conftest.py", "conftest.py"),
    ("git rm -r tests", "tests/**"),
    ("git rm -q conftest.py", "conftest.py"),
    ("git mv Makefile GNUmakefile", "Makefile"),
    ("git -C tests checkout .", "tests/**"),
    ("git -C src/pkg restore .", "**/*.lock"),
    ("git -C tests checkout -- unit/test_a.py", "tests/**"),
    ("cd src && git checkout -- ../conftest.py", "conftest.py"),
]


@pytest.mark.parametrize("line,glob", LINE_ATTACKS, ids=[a[0] for a in LINE_ATTACKS])
def test_line_attack_refused(ctx, line, glob):
    d = decide(ctx, "Bash", command=line)
    assert not d.allowed and d.rule == "read_only", d.reason
    assert f"read_only `{glob}`" in d.reason


def test_a_shell_tool_of_an_mcp_server_is_judged_as_a_line(root):
    ctx = GateContext(project_root=str(root), store_dir=str(root / ".statewright"),
                      shell_tools={"mcp__shell__run": "cmd"})
    d = gate(STATE, Counters(), ToolCall("mcp__shell__run", {"cmd": "rm conftest.py"}), ctx)
    assert not d.allowed and d.rule == "read_only"


# -- controls: everyday work in the same state ---------------------------------------------------

TOOL_CONTROLS = [
    ("Edit", {"file_path": "src/pkg/mod.py", "old_string": "1", "new_string": "2"}),
    ("Write", {"file_path": "src/pkg/new.py", "content": "y = 2\n"}),
    ("Write", {"file_path": "src/conftest.py", "content": ""}),
    ("Write", {"file_path": "docs/guide.md", "content": "x"}),
    ("Write", {"file_path": "docs/c.md", "content": "x"}),
    ("Write", {"file_path": "testsuite/x.py", "content": "x"}),
    ("Write", {"file_path": "Makefile.local", "content": "x"}),
    ("Read", {"file_path": "tests/unit/test_a.py"}),
    ("Grep", {"pattern": "assert", "path": "tests"}),
    ("Glob", {"pattern": "tests/**/*.py"}),
    ("mcp__filesystem__read_file", {"path": "{root}/tests/unit/test_a.py"}),
    ("mcp__filesystem__move_file", {"source": "{root}/build", "destination": "{root}/build2"}),
    ("mcp__filesystem__write_file", {"path": "{root}/src/pkg/mod.py", "content": "x"}),
]


@pytest.mark.parametrize("tool,inp", TOOL_CONTROLS, ids=[f"{t}:{json.dumps(i)[:50]}" for t, i in TOOL_CONTROLS])
def test_tool_control_allowed(ctx, root, tool, inp):
    d = decide(ctx, tool, **_fill(inp, root))
    assert d.allowed, d.reason


LINE_CONTROLS = [
    "pytest -q tests", "pytest tests/unit/test_a.py -x", "cat tests/unit/test_a.py",
    "grep -rn assert tests", "ls -la tests", "git status", "git diff tests",
    "cat tests/unit/test_a.py > build/copy.py", "echo ok > src/pkg/note.txt",
    "sed -i s/1/2/ src/pkg/mod.py", "cp tests/unit/test_a.py build/", "cp -r tests backup",
    "mv src/pkg/mod.py src/pkg/mod2.py", "rm src/pkg/mod.py", "rm -rf build", "mkdir -p build/x",
    "touch src/pkg/__init__.py", "chmod +x src/pkg/mod.py", "ln -s ../tests/unit/test_a.py src/link",
    "diff tests/unit/test_a.py src/pkg/mod.py", "pytest -q > /dev/null 2>&1",
    "python -m pytest tests 2>&1 | tail -5", "echo x > docs/guide.md", "tee build/log < /dev/null",
    "cd src && echo x > pkg/new.py", "wc -l tests/unit/*.py",
    "git checkout -- src/pkg/mod.py", "git restore src/pkg/mod.py", "git rm src/pkg/mod.py",
    "git checkout -b feature", "git log -p tests", "git diff -- tests", "git stash list",
    "git reset HEAD src/pkg/mod.py", "git add tests src", "cp -r tests build/copy",
    "cp -l src/pkg/mod.py src/pkg/mod2.py", "git mv src/pkg/mod.py src/pkg/mod3.py",
]


@pytest.mark.parametrize("line", LINE_CONTROLS)
def test_line_control_allowed(ctx, line):
    d = decide(ctx, "Bash", command=line)
    assert d.allowed, d.reason


def test_counts():
    assert len(TOOL_ATTACKS) + len(LINE_ATTACKS) >= 60
    assert len(TOOL_CONTROLS) + len(LINE_CONTROLS) >= 35


def test_a_state_without_read_only_allows_the_same_writes(ctx, root):
    plain = State("red")
    for tool, inp, _ in TOOL_ATTACKS[:6]:
        assert decide(ctx, tool, plain, **_fill(inp, root)).allowed
    for line, _ in LINE_ATTACKS[:20]:
        d = decide(ctx, "Bash", plain, command=line)
        assert d.rule != "read_only", line


def test_the_final_state_enforces_nothing(ctx):
    done = State("done", final=True, read_only=GLOBS)
    assert decide(ctx, "Bash", done, command="rm -rf tests").allowed


def test_self_protection_comes_first_and_explanations_name_the_check(ctx):
    d = decide(ctx, "Bash", command="rm workflows/flow.json tests/unit/test_a.py")
    assert not d.allowed and d.rule == "self_protection"
    d = decide(ctx, "Bash", command="echo x > conftest.py")
    assert any(line.startswith("read_only: `> conftest.py`") for line in d.explanation)
    ok = decide(ctx, "Bash", command="echo x > src/x.py")
    assert "read_only: ok" in ok.explanation


# -- the real CLI: `statewright check` against a workflow with read_only ------------------------

def test_statewright_check_explains_a_read_only_refusal(tmp_path):
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "tests" / "test_a.py").write_text("def test_a():\n    assert 1\n")
    (root / "workflows").mkdir()
    (root / "workflows" / "green.json").write_text(json.dumps({
        "id": "green", "initial": "making_green",
        "states": {"making_green": {"allowed_tools": ["Read", "Edit", "Bash"], "allowed_commands": ["pytest", "sed"],
                                    "read_only": ["tests/**"], "on": {"GREEN": "done"}},
                   "done": {"type": "final"}}}))
    env = clean_env(HOME=str(tmp_path))
    exe = bin_path("statewright")

    def sw(*args, stdin=None):
        return subprocess.run([exe, *args, "--project", str(root)], input=stdin, text=True,
                              capture_output=True, env=env, cwd=root, timeout=60)

    assert sw("start", "green").returncode == 0
    refused = sw("check", "Bash", "--json", stdin=json.dumps({"command": "sed -i s/1/0/ tests/test_a.py"}))
    answer = json.loads(refused.stdout)
    assert refused.returncode == 1 and answer["allowed"] is False and answer["rule"] == "read_only"
    assert "read_only `tests/**`" in answer["reason"]
    edit = sw("check", "Edit", "--json", stdin=json.dumps(
        {"file_path": str(root / "tests" / "test_a.py"), "old_string": "1", "new_string": "0"}))
    assert json.loads(edit.stdout)["rule"] == "read_only"
    ok = sw("check", "Bash", "--json", stdin=json.dumps({"command": "pytest -q tests"}))
    assert ok.returncode == 0 and json.loads(ok.stdout)["allowed"] is True
    assert (root / "tests" / "test_a.py").read_text() == "def test_a():\n    assert 1\n"
    assert REPO.is_dir()
