"""Unit tests for every check of `gate`, tool-name matching, edit counting and glob semantics."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from statewright.definition.compiled import State
from statewright.policy import Counters, Decision, GateContext, ToolCall, gate
from statewright.policy.edits import edit_lines, write_lines
from statewright.policy.paths import glob_match
from statewright.policy.shell import analyze, check_commands, check_env, rewrite_for_env
from statewright.policy.tools import is_statewright_tool, normalize_tool_name, tool_allowed
from statewright.sandbox.launcher import unwrap


@pytest.fixture
def root(tmp_path):
    (tmp_path / ".statewright").mkdir()
    (tmp_path / "workflows").mkdir()
    (tmp_path / "workflows" / "flow.json").write_text("{}")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("a\nb\nc\n")
    return tmp_path


@pytest.fixture
def ctx(root):
    files = {str(root / "src" / "app.py"): "a\nb\nc\n"}
    return GateContext(project_root=str(root), store_dir=str(root / ".statewright"),
                       protected_files=frozenset({str(root / "workflows" / "flow.json")}),
                       shell_tools={"mcp__shell__run": "cmd"}, events=("DONE", "ABORT"),
                       read_text=lambda p: files.get(os.path.realpath(p)))


def call(tool, **inp):
    return ToolCall(tool, inp)


# -- tool names ----------------------------------------------------------------------------


def test_normalize_tool_name():
    assert normalize_tool_name("mcp__statewright__github__create_issue") == \
        "mcp__github__create_issue"
    assert normalize_tool_name("mcp__github__create_issue") == "mcp__github__create_issue"
    assert normalize_tool_name("mcp__statewright__statewright_get_state") == \
        "mcp__statewright__statewright_get_state"
    assert normalize_tool_name("mcp__plugin_statewright_statewright__github__create_issue") == \
        "mcp__github__create_issue"
    assert normalize_tool_name("Bash") == "Bash"


def test_statewright_tools_recognised():
    assert is_statewright_tool("statewright_transition")
    assert is_statewright_tool("mcp__statewright__statewright_transition")
    assert is_statewright_tool("mcp__plugin_statewright_statewright__statewright_get_state")
    assert not is_statewright_tool("mcp__github__create_issue")
    assert not is_statewright_tool("Bash")


@pytest.mark.parametrize("name", [
    # another server's tool that borrows the prefix: not statewright's
    "mcp__github__statewright_pause", "mcp__evil__statewright_x", "mcp__plugin_x_sw__statewright_get_state",
    "mcp__statewright__github__statewright_transition",
    # unknown statewright_* names, even under statewright's own server
    "statewright_x", "statewright_", "mcp__statewright__statewright_exec",
    "mcp__plugin_statewright_statewright__statewright_shell",
    # near misses of the six
    "Statewright_transition", "statewright_transition ", " statewright_transition",
    "statewright_transitionx", "mcp__statewright__statewright_get_state__x",
    "mcp__Statewright__statewright_pause", "mcp__statewright___statewright_pause",
])
def test_statewright_exemption_is_exact(name):
    assert not is_statewright_tool(normalize_tool_name(name))
    assert not tool_allowed(normalize_tool_name(name), ())


def test_tool_allowed_semantics():
    assert tool_allowed("Bash", None)
    assert not tool_allowed("Bash", ())
    assert tool_allowed("statewright_get_state", ())
    assert tool_allowed("mcp__github__create_issue", ("mcp__github__*",))
    assert not tool_allowed("mcp__gitlab__create_issue", ("mcp__github__*",))
    assert not tool_allowed("Bash", ("Bash",), ("Bash",))
    assert not tool_allowed("mcp__github__delete_repo", ("mcp__github__*",), ("*delete*",))
    assert tool_allowed("Read", ("Read", "Edit"))
    assert not tool_allowed("ReadX", ("Read",))


# -- checks in order ---------------------------------------------------------------------


def test_statewright_tool_always_allowed_and_not_counted(ctx):
    s = State(name="s", allowed_tools=(), max_iterations=1)
    d = gate(s, Counters(iterations=5), call("mcp__statewright__statewright_transition",
                                             event="DONE"), ctx)
    assert d.allowed and d.counts_iteration is False


def test_allowed_tools_denies_with_alternatives(ctx):
    s = State(name="plan", allowed_tools=("Read", "mcp__github__*"))
    d = gate(s, Counters(), call("Edit", file_path="src/app.py", old_string="a",
                                 new_string="b"), ctx)
    assert not d.allowed and d.rule == "allowed_tools" and d.code == "TOOL_DENIED"
    assert "Read" in d.reason and "mcp__github__*" in d.reason and "DONE" in d.reason
    assert gate(s, Counters(), call("mcp__statewright__github__create_issue", title="x"),
                ctx).allowed


def test_disallowed_tools(ctx):
    s = State(name="s", disallowed_tools=("Write",))
    d = gate(s, Counters(), call("Write", file_path="x.txt", content="x"), ctx)
    assert not d.allowed and "disallowed_tools" in d.reason


def test_max_iterations(ctx):
    s = State(name="s", max_iterations=3)
    assert gate(s, Counters(iterations=2), call("Read", file_path="src/app.py"), ctx).allowed
    d = gate(s, Counters(iterations=3), call("Read", file_path="src/app.py"), ctx)
    assert not d.allowed and d.rule == "max_iterations" and "transition" in d.reason


def test_context_budget(ctx):
    s = State(name="s", context_budget_bytes=100)
    assert gate(s, Counters(bytes_read=99), call("Read", file_path="a"), ctx).allowed
    d = gate(s, Counters(bytes_read=100), call("Read", file_path="a"), ctx)
    assert not d.allowed and d.rule == "context_budget_bytes"


def test_order_self_protection_before_allowed_tools(ctx):
    s = State(name="s", allowed_tools=())
    d = gate(s, Counters(), call("Read", file_path=".statewright/state.db"), ctx)
    assert d.rule == "self_protection"


def test_order_allowed_tools_before_iterations(ctx):
    s = State(name="s", allowed_tools=("Read",), max_iterations=1)
    d = gate(s, Counters(iterations=1), call("Edit", file_path="a", old_string="",
                                             new_string="x"), ctx)
    assert d.rule == "allowed_tools"


@pytest.mark.parametrize("tool,inp", [
    ("Read", {"file_path": ".statewright/state.db"}),
    ("Write", {"file_path": ".statewright/state.db", "content": "x"}),
    ("Edit", {"file_path": "./.statewright/../.statewright/x", "old_string": "", "new_string": "x"}),
    ("Grep", {"pattern": "x", "path": ".statewright"}),
    ("Glob", {"pattern": ".statewright/**"}),
    ("mcp__fs__read_file", {"path": ".statewright/state.db"}),
    ("mcp__fs__move_file", {"source": ".statewright", "destination": "x"}),
    ("mcp__fs__read_multiple_files", {"paths": ["a", ".statewright/state.db"]}),
    ("Write", {"file_path": "workflows/flow.json", "content": "{}"}),
    ("Edit", {"file_path": "statewright.json", "old_string": "", "new_string": "x"}),
    ("mcp__fs__write_file", {"path": "workflows/flow.json", "content": "{}"}),
])
def test_self_protection_tools(ctx, tool, inp):
    d = gate(State(name="free"), Counters(), ToolCall(tool, inp), ctx)
    assert not d.allowed and d.rule == "self_protection", d.explanation


def test_self_protection_absolute_and_symlink(ctx, root):
    d = gate(State(name="free"), Counters(),
             call("Read", file_path=str(root / ".statewright" / "state.db")), ctx)
    assert not d.allowed
    os.symlink(root / ".statewright", root / "innocent")
    d = gate(State(name="free"), Counters(), call("Read", file_path="innocent/state.db"), ctx)
    assert not d.allowed and d.rule == "self_protection"


def test_reading_workflow_in_use_is_fine(ctx):
    assert gate(State(name="free"), Counters(), call("Read", file_path="workflows/flow.json"),
                ctx).allowed


def test_unrestricted_state_allows_normal_calls(ctx):
    d = gate(State(name="free"), Counters(), call("Bash", command="rm -rf build"), ctx)
    assert d.allowed and d.updated_input is None


# -- shell tools ---------------------------------------------------------------------------


def test_mcp_shell_tool_gets_bash_treatment(ctx):
    s = State(name="s", allowed_commands=("pytest",))
    assert gate(s, Counters(), call("mcp__shell__run", cmd="pytest -q"), ctx).allowed
    d = gate(s, Counters(), call("mcp__shell__run", cmd="pytest; rm x"), ctx)
    assert not d.allowed and d.rule == "allowed_commands"
    d = gate(s, Counters(), call("mcp__shell__run", cmd=["not", "text"]), ctx)
    assert not d.allowed


def test_prefix_matching_token_by_token():
    allowed = ("npm test", "git status")
    assert check_commands(analyze("npm test --watch"), allowed).allowed
    assert check_commands(analyze("npm 'test'"), allowed).allowed
    assert not check_commands(analyze("npm tests"), allowed).allowed
    assert not check_commands(analyze("npm testx"), allowed).allowed
    assert not check_commands(analyze("npm"), allowed).allowed
    assert not check_commands(analyze("npm $T"), allowed).allowed


@pytest.mark.parametrize("line,ok", [
    ("timeout 5 pytest", True),
    ("timeout 5 rm -rf x", False),
    ("env FOO=1 pytest", True),
    ("env FOO=1 rm x", False),
    ("env PATH=. pytest", False),
    ("ls | xargs cat", True),
    ("ls | xargs rm", False),
    ("find src -name '*.py' -exec cat {} +", True),
    ("find src -exec rm {} +", False),
    ("sh -c 'pytest -q'", True),
    ("sh -c 'pytest; rm x'", False),
    ("sh -c \"$X\"", False),
    ("sh script.sh", True),
    ("cat x | sh", False),
    ("sh <<EOF\npytest\nEOF", True),
    ("sh <<EOF\nrm x\nEOF", False),
    ("eval pytest -q", True),
    ("eval 'rm x'", False),
])
def test_wrappers_need_inner_command_allowed(line, ok):
    allowed = ("timeout", "env", "xargs", "find -exec", "sh", "eval", "pytest", "cat", "ls")
    assert check_commands(analyze(line), allowed).allowed is ok, check_commands(
        analyze(line), allowed).trace


def test_find_exec_needs_spelling_out_and_its_inner_command_allowed():
    line = analyze("find src -name '*.py' -exec cat {} +")
    assert not check_commands(line, ("find", "cat")).allowed
    assert check_commands(line, ("find -exec", "cat")).allowed
    assert not check_commands(line, ("find -exec",)).allowed


def test_wrapper_prefix_covering_inner_command():
    assert check_commands(analyze("sudo apt-get update"), ("sudo apt-get update",)).allowed
    assert not check_commands(analyze("sudo apt-get remove x"), ("sudo apt-get update",)).allowed


def test_analysis_finds_every_command():
    a = analyze("pytest -v && rm -rf / ; echo $(cat /etc/passwd) | tee x")
    names = [c.name for c in a.commands]
    assert sorted(names) == sorted(["pytest", "rm", "echo", "cat", "tee"])
    assert next(c for c in a.commands if c.name == "rm").values() == ["rm", "-rf", "/"]
    a = analyze("f() { rm x; }; if a; then b; fi; case $x in y) c;; esac; d <(e) `g`")
    assert {"rm", "a", "b", "c", "d", "e", "g"} <= {c.name for c in a.commands}
    assert "f" in a.functions


def test_unquoting_and_decoding():
    assert analyze("r'm' x").commands[0].name == "rm"
    assert analyze('"r"m x').commands[0].name == "rm"
    assert analyze("\\rm x").commands[0].name == "rm"
    assert analyze("$'\\x72m' x").commands[0].name == "rm"
    assert analyze("echo 'a b' \"c $X\"").commands[0].args[0].value == "a b"
    assert not analyze("echo \"c $X\"").commands[0].args[0].literal


def test_parse_errors_fail_closed():
    for line in ("echo 'x", "(", "if x; then", "echo ${"):
        a = analyze(line)
        assert not a.ok
        assert not check_commands(a, ("echo",)).allowed


def test_check_env_and_rewrite():
    assert not check_env(analyze("echo ${!P*}"), ("SECRET",)).allowed
    assert check_env(analyze("echo $HOME"), ("SECRET",)).allowed
    assert not check_env(analyze("echo $SECRET"), ("SECRET",)).allowed
    assert not check_env(analyze("awk '{print ENVIRON[\"X\"]}' f"), ("SECRET",)).allowed
    out = rewrite_for_env("pytest -q", ("A", "B"), {"MODE": "test it"})
    assert out == "unset A B; export MODE='test it'\npytest -q"


def test_redirect_rules(ctx):
    s = State(name="s", allowed_commands=("echo", "pytest"))
    for ok in ("pytest 2>&1", "pytest >/dev/null", "pytest >&2", "echo x > out.txt"):
        assert gate(s, Counters(), call("Bash", command=ok), ctx).allowed, ok
    for bad in ("echo x > /etc/x", "echo x >> ~/.bashrc", "echo x > .git/hooks/pre-commit",
                "echo x > $F", "echo x > workflows/flow.json"):
        assert not gate(s, Counters(), call("Bash", command=bad), ctx).allowed, bad


def test_bash_files_and_updated_input(ctx):
    s = State(name="s", blocked_env=("SECRET",), env_overrides={"CI": "1"})
    d = gate(s, Counters(), call("Bash", command="echo x > out.txt", timeout=5), ctx)
    assert d.allowed and d.files == ("out.txt",)
    # (a state with blocked_env: the line runs under the sandbox, which scrubs SECRET and pins
    # CI before exec; inside, the line itself runs with them unset and exported)
    assert d.sandboxed and d.updated_input is not None and d.updated_input["timeout"] == 5
    assert "--unset SECRET --set CI=1" in d.updated_input["command"]
    assert unwrap(d.updated_input["command"]) == "unset SECRET; export CI=1\necho x > out.txt"


# -- edits ---------------------------------------------------------------------------------


def test_edit_line_counting():
    assert edit_lines("Edit", {"old_string": "a\nb", "new_string": "c"}, None) == 2
    assert edit_lines("MultiEdit", {"edits": [{"old_string": "a", "new_string": "b\nc"},
                                              {"old_string": "x\ny\nz", "new_string": ""}]},
                      None) == 5
    assert edit_lines("NotebookEdit", {"new_source": "1\n2\n3"}, None) == 3
    assert edit_lines("Write", {"file_path": "new.txt", "content": "1\n2\n"}, lambda p: None) == 2
    assert write_lines("a\nB\nc\nd\n", "a\nb\nc\n") == 2
    assert edit_lines("mcp__fs__edit_file", {"path": "x", "edits": [
        {"oldText": "a", "newText": "b\nc"}]}, None) == 2
    assert edit_lines("mcp__fs__write_file", {"path": "x", "content": "q"}, lambda p: "q") == 0
    assert edit_lines("Read", {"file_path": "x"}, None) is None


def test_max_edit_lines(ctx):
    s = State(name="s", max_edit_lines=2)
    assert gate(s, Counters(), call("Write", file_path="src/app.py", content="a\nB\nc\n"),
                ctx).allowed  # one line differs from the current content
    d = gate(s, Counters(), call("Write", file_path="src/new.py", content="1\n2\n3\n"), ctx)
    assert not d.allowed and d.rule == "max_edit_lines" and "3 lines" in d.reason


def test_max_files_per_state(ctx, root):
    s = State(name="s", max_files_per_state=1)
    e = call("Edit", file_path=str(root / "src" / "app.py"), old_string="a", new_string="b")
    d = gate(s, Counters(), e, ctx)
    assert d.allowed and d.files == ("src/app.py",)
    assert gate(s, Counters(files_edited=frozenset({"src/app.py"})), e, ctx).allowed
    d = gate(s, Counters(files_edited=frozenset({"src/app.py"})),
             call("Edit", file_path="src/other.py", old_string="a", new_string="b"), ctx)
    assert not d.allowed and d.rule == "max_files_per_state" and "src/other.py" in d.reason
    # edit tools write only inside the project (like shell output redirects)
    d = gate(State(name="t"), Counters(), call("Write", file_path="/tmp/outside.txt",
                                               content="x"), ctx)
    assert not d.allowed and d.rule == "self_protection" and "outside the project" in d.reason


# -- glob semantics (DESIGN section 3) -----------------------------------------------------


@pytest.mark.parametrize("pattern,path,ok", [
    ("*.js", "app.js", True),
    ("*.js", "src/app.js", False),
    ("**/*.js", "src/app.js", True),
    ("**/*.js", "app.js", True),
    ("**/*.env*", ".env", True),
    ("**/*.env*", "a/b/.env.local", True),
    ("src/?.py", "src/a.py", True),
    ("src/?.py", "src/ab.py", False),
    ("src/**", "src/a/b/c.py", True),
    ("src/*", "src/a/b.py", False),
    ("[ab].txt", "a.txt", True),
    ("[!ab].txt", "c.txt", True),
    ("[!ab].txt", "a.txt", False),
    ("migrations/**/*.sql", "migrations/001.sql", True),
    ("./*.md", "README.md", True),
])
def test_glob_match(pattern, path, ok):
    assert glob_match(pattern, path) is ok


# -- never raises --------------------------------------------------------------------------

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=30),
    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=10), c, max_size=4),
    max_leaves=12)
_names = st.sampled_from(["Bash", "Edit", "Write", "MultiEdit", "NotebookEdit", "Read", "Grep",
                          "Glob", "mcp__fs__write_file", "mcp__fs__edit_file",
                          "mcp__shell__run", "statewright_x", "mcp__statewright__a__b"]) | \
    st.text(max_size=20)
_keys = st.sampled_from(["command", "cmd", "file_path", "path", "paths", "content", "edits",
                         "old_string", "new_string", "new_source", "source", "destination"])


@settings(max_examples=150, deadline=None)
@given(name=_names, inp=st.dictionaries(_keys | st.text(max_size=8), _json, max_size=5),
       cwd=st.none() | st.text(max_size=10))
def test_gate_never_raises(tmp_path_factory, name, inp, cwd):
    root = "/tmp/sw-hyp-proj"
    ctx = GateContext(project_root=root, store_dir=root + "/.statewright",
                      shell_tools={"mcp__shell__run": "cmd"}, read_text=lambda p: None)
    s = State(name="s", allowed_commands=("ls",), blocked_env=("S",), max_edit_lines=3,
              max_files_per_state=1)
    d = gate(s, Counters(), ToolCall(name, inp, cwd=cwd), ctx)
    assert isinstance(d, Decision)
    if not d.allowed:
        assert d.reason and d.code == "TOOL_DENIED"


@settings(max_examples=150, deadline=None)
@given(line=st.text(alphabet=st.sampled_from(list("ab $(){}[]'\"`\\;|&<>=!*?~.\n-/#x")),
                    max_size=40))
def test_shell_never_raises_and_denies_on_doubt(line):
    ctx = GateContext(project_root="/tmp/sw-hyp-proj", store_dir="/tmp/sw-hyp-proj/.statewright")
    d = gate(State(name="s", allowed_commands=("ls",), blocked_env=("S",)), Counters(),
             ToolCall("Bash", {"command": line}), ctx)
    assert isinstance(d, Decision)
    a = analyze(line)
    if not a.ok:
        assert not d.allowed


def test_a_name_under_a_reserved_server_never_normalises_to_an_own_tool() -> None:
    from statewright.policy.tools import is_statewright_tool, normalize_tool_name

    for forged in ("mcp__statewright__statewright__statewright_transition",
                   "mcp__statewright__Statewright__statewright_pause",
                   "mcp__plugin_statewright_statewright__statewright__statewright_get_state",
                   "mcp__statewright__plugin_statewright_statewright__statewright_force_state"):
        assert normalize_tool_name(forged) == forged
        assert not is_statewright_tool(normalize_tool_name(forged))
    assert normalize_tool_name("mcp__statewright__github__create_issue") == "mcp__github__create_issue"
    assert normalize_tool_name("mcp__statewright__statewright_get_state") == \
        "mcp__statewright__statewright_get_state"


def test_redirects_obey_the_write_scope_without_command_rules(tmp_path) -> None:
    """A state that allows Bash without `allowed_commands` still keeps output redirects inside
    the project (or the system temp directory) and out of .git/ - the scope of Write/Edit."""
    from statewright.definition.compiled import State
    from statewright.policy import Counters, GateContext, ToolCall, gate

    root = tmp_path / "proj"
    (root / ".git" / "hooks").mkdir(parents=True)
    ctx = GateContext(project_root=str(root), store_dir=str(root / ".statewright"))
    state = State(name="free", allowed_tools=("Bash",))
    for line in ("echo x >> ~/.bashrc", "echo x > .git/hooks/pre-commit",
                 "echo x > ~/outside.txt", "pytest -q > /etc/cron.d/x"):
        d = gate(state, Counters(), ToolCall("Bash", {"command": line}), ctx)
        assert not d.allowed and d.rule == "self_protection", (line, d)
    for line in ("pytest -q > out.txt 2>&1", "echo hi >/dev/null", "make > build/log.txt",
                 "pytest > /tmp/x.log", f"echo x > {tmp_path}/beside.txt"):
        d = gate(state, Counters(), ToolCall("Bash", {"command": line}), ctx)
        assert d.allowed, (line, d.reason)


def test_gated_by_proxy_only_for_our_tools_and_configured_servers() -> None:
    from statewright.policy.tools import gated_by_proxy

    servers = ["github", "statewright", ""]
    assert gated_by_proxy("mcp__statewright__statewright_transition", servers)
    assert gated_by_proxy("mcp__plugin_statewright_statewright__statewright_get_state", [])
    assert gated_by_proxy("mcp__statewright__github__create_issue", servers)
    assert gated_by_proxy("mcp__plugin_statewright_statewright__github__list", servers)
    # not ours: an unknown server, a reserved one, a bare prefix, another server's tool
    assert not gated_by_proxy("mcp__statewright__gitlab__create_issue", servers)
    assert not gated_by_proxy("mcp__statewright__statewright__statewright_transition", servers)
    assert not gated_by_proxy("mcp__statewright__github__", servers)
    assert not gated_by_proxy("mcp__statewright__run_anything", servers)
    assert not gated_by_proxy("mcp__github__create_issue", servers)
    assert not gated_by_proxy("Bash", servers)


def _nested(depth: int, leaf: object) -> object:
    for _ in range(depth):
        leaf = [leaf]
    return leaf


@pytest.mark.parametrize("inp,cwd,why", [
    # nested deeper than the checks can vouch for (under a path key and elsewhere)
    ({"file_path": "a.txt", "content": "x", "options": {"path": _nested(20, "x")}}, None,
     "nested more than 16 levels"),
    ({"file_path": "a.txt", "content": "x", "meta": _nested(40, 1)}, None, "nested more than"),
    # a path argument or a working directory no system call can take
    ({"file_path": "a.txt", "content": "x", "target_path": "\ud800"}, None, "lone surrogate"),
    ({"file_path": "a.txt", "content": "x", "target_path": "b\x00c"}, None, "NUL byte"),
    ({"file_path": "a.txt", "content": "x"}, "/tmp/\udcff", "lone surrogate"),
    ({"file_path": "a.txt", "content": "x"}, "/tmp/a\x00b", "NUL byte"),
])
def test_malformed_input_is_refused_not_raised(root, ctx, inp, cwd, why) -> None:
    """The gate is total: input it cannot judge is refused as `invalid` by the gate itself.
    Were it to raise instead, the runtime would decide by `fail_open`, and an agent could make
    any call (a Write into the store) raise on purpose."""
    for state in (State(name="s"), State(name="s", allowed_tools=("Write",), max_edit_lines=5)):
        d = gate(state, Counters(), ToolCall("Write", inp, cwd=cwd), ctx)
        # (a path argument that names no file is refused by self-protection's path check)
        assert not d.allowed and d.rule in ("invalid", "self_protection") and why in d.reason, d


def test_input_within_the_nesting_limit_is_decided_as_usual(root, ctx) -> None:
    inp = {"file_path": "a.txt", "content": "x", "options": {"path": _nested(10, "src/b.txt")}}
    assert gate(State(name="s"), Counters(), ToolCall("Write", inp), ctx).allowed
    inp["options"] = {"path": _nested(10, ".statewright/state.db")}
    d = gate(State(name="s"), Counters(), ToolCall("Write", inp), ctx)
    assert not d.allowed and d.rule == "self_protection"


def _difflib_lines(new: str, old: str) -> int:
    import difflib

    a, b = old.splitlines(True), new.splitlines(True)
    return sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in
               difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if tag != "equal")


def test_a_write_counts_as_difflib_does_on_real_files():
    """Only the part between the common head and tail is compared: on real source files and
    everyday edits (lines changed, added, removed anywhere) the count is difflib's."""
    import random
    from pathlib import Path

    rng = random.Random(17)
    root = Path(__file__).resolve().parents[2]
    files = [root / "statewright/policy/gate.py", root / "README.md", root / "docs/policy.md"]
    for f in files:
        old = f.read_text()
        for _ in range(40):
            lines = old.splitlines(True)
            for _ in range(rng.randint(1, 6)):
                i = rng.randrange(len(lines))
                op = rng.choice(("change", "insert", "delete"))
                if op == "change":
                    lines[i] = f"changed {rng.random()}\n"
                elif op == "insert":
                    lines.insert(i, "\n" if rng.random() < 0.5 else f"new {i}\n")
                elif len(lines) > 1:
                    del lines[i]
            new = "".join(lines)
            assert write_lines(new, old) == _difflib_lines(new, old)


def test_a_write_over_a_long_repetitive_file_is_counted_at_least_as_many_lines_as_differ():
    """Lines that repeat too often to compare quickly stop anchoring the comparison (it would
    otherwise take seconds inside the store's write transaction): the count can only err
    towards more lines, never below what certainly differs."""
    old = "".join("x = 1\n" if i % 2 else "    pass\n" for i in range(2000))
    rewrite = "".join("x = 1\n" if i % 3 else "    pass\n" for i in range(2000))
    differ = abs(old.count("pass") - rewrite.count("pass"))  # lines no order can match
    assert write_lines(rewrite, old) >= differ
    two = old.split("\n")
    two[0], two[-2] = "first changed", "last changed"
    assert write_lines("\n".join(two), old) >= 2
