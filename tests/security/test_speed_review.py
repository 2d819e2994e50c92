"""Review of the policy core's speed shortcuts (ad425dd..HEAD, plus the joined-values prescreen
of `check_env`): each shortcut's precondition attacked, through the pure gate and the real hook,
with legitimate controls next to the attacks.

- node texts sliced from an ASCII line (`Walker.text`, `words._word_parts`) and code a shell
  runs inside a line beyond ASCII;
- the `&` job token found by the node at each `&` byte (`parser.has_job_token`);
- the CLI check skipped for a plain command name in a line not naming statewright, the mention
  pre-screen, read-only commands skipping the static scan, the glob screen by first letter;
- `git_effect` stopping at subcommands that change nothing;
- `check_env`'s joined-values prescreen (`/proc/*/environ` spellings);
- the per-State / per-context memos (cwd, protected files, env_overrides), several threads
  deciding at once, and lines nested deeper than the walk used to follow.

Found on the way, predating the shortcuts (the old tree decides them the same way): comma
brace expansion (tree-sitter-bash parses `.{s,}tatewright` as a concatenation of plain words,
so the word counted as the literal text `.{s,}tatewright` while bash runs `.statewright
.tatewright`; fixed in `words.make_word`), glob and brace arguments of a writing command that
match a protected file (`rm workflows/*`: such a word was compared with the store's names only;
fixed in `protect.line._pattern_reaches`), and arithmetic's bitwise `&` taken for a job (a
false deny; fixed in `parser.has_job_token`).
"""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import REPO, clean_env

sys.path.insert(0, str(REPO))
from statewright.definition.compiled import State
from statewright.policy import Counters, GateContext, ToolCall, gate
from statewright.sandbox.launcher import unwrap
from tests.hook.harness import Project, allowed, denied
from tests.security.escapes import WF_NAME, make_project

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def proj(tmp_path_factory: pytest.TempPathFactory) -> Project:
    base = tmp_path_factory.mktemp("speed-review")
    root, out = base / "proj", base / "out"
    make_project(root, out, {})
    p = Project(root)
    p.start("escape")  # state `work`: rm, cp, mv, git, cat, echo, ... allowed; SECRET_TOKEN blocked
    return p


def _one_call_env(proj: Project) -> dict[str, str]:
    """The hook deciding alone (`lean.one_call_process`: no resident server, gc off, the
    `functools` stand-in for `_sqlite3`)."""
    env = dict(proj.env)
    env["STATEWRIGHT_HOOK_RESIDENT"] = "0"
    return env


def _bash(line: str) -> dict:
    return {"command": line}


def _answers(proj: Project, line: str) -> tuple[dict | None, dict | None]:
    """The hook's answers to a Bash line: as the resident server gives it and as a hook process
    deciding alone gives it."""
    alone = proj.hook("pre-tool-use", proj.payload("PreToolUse", tool_name="Bash",
                                                   tool_input=_bash(line),
                                                   tool_use_id="toolu_sr"),
                      env=_one_call_env(proj))
    return proj.pre("Bash", _bash(line)), alone


def _hook_denies(proj: Project, lines: list[str]) -> None:
    for line in lines:
        for out in _answers(proj, line):
            denied(out)


def _hook_allows(proj: Project, lines: list[str]) -> None:
    for line in lines:
        for out in _answers(proj, line):
            allowed(out)


def _hook_binds(proj: Project, lines: list[str]) -> None:
    """Lines aimed at the store that only their text could have flagged: since the kernel binds
    them, each is refused early or allowed under the sandbox; run as the host would run it, the
    store keeps its files and the run."""
    store = proj.root / ".statewright"
    for line in lines:
        for out in _answers(proj, line):
            if out and out["hookSpecificOutput"].get("permissionDecision") == "deny":
                continue
            allowed(out)
            command = out["hookSpecificOutput"]["updatedInput"]["command"]
            assert unwrap(command) is not None, line
            listing = sorted(x.name for x in store.iterdir())
            mode = (store / "state.db").stat().st_mode
            r = subprocess.run(["bash", "-c", command], cwd=proj.root, capture_output=True,
                               text=True, timeout=60, env=clean_env())
            assert "SQLite format" not in r.stdout, line  # (nothing of it was read)
            # (nothing of the store's went; statewright's own files may come meanwhile)
            assert set(listing) <= {x.name for x in store.iterdir()}, line
            assert (store / "state.db").stat().st_mode == mode, line
            assert proj.status()["state"] == "work", line


def _hook_decides(proj: Project, attacks: list[str], controls: list[str]) -> None:
    """Every attack refused and every control allowed, both ways (`_answers`)."""
    _hook_denies(proj, attacks)
    _hook_allows(proj, controls)


# -- escapes that predate the shortcuts (fixed) -------------------------------------------------

#: comma brace expansion (bash expands each word to a list that holds the name: checked below
#: with bash itself); the grammar reads such a word as plain text
BRACE_STORE_ATTACKS = [
    ("rm -rf .{s,}tatewright", ".statewright"),
    ("chmod -R 000 .{s,}tatewright", ".statewright"),
    ("cat .{s,}tatewright/stat{e,}.db", ".statewright/state.db"),
    ("rm -rf .statewrigh{t,}", ".statewright"),
    ("cp -r build/. .{s,x}tatewright", ".statewright"),
]
BRACE_PROTECTED_ATTACKS = [
    ("rm statewright.js{on,}", "statewright.json"),
    ("rm .mcp.js{on,}", ".mcp.json"),
    (f"rm workflows/{WF_NAME[:-2]}{{on,}}", f"workflows/{WF_NAME}"),
]
BRACE_CONTROLS = ["mkdir -p build/{x,y}", "ls {src,build}", "rm -rf build/{x,y}",
                  "echo {a,b}", "cat src/{a.py,pkg/__init__.py}", "echo '{a,b}'", "echo \\{a,b}",
                  "echo {a}", "mv build/{a,b}"]


def test_bash_expands_the_brace_words_to_the_protected_names(proj: Project) -> None:
    for line, name in BRACE_STORE_ATTACKS + BRACE_PROTECTED_ATTACKS:
        word = line.split(" ")[-1]
        out = subprocess.run(["bash", "-c", f"printf '%s\\n' {word}"], cwd=proj.root,
                             capture_output=True, text=True, timeout=30, env=clean_env())
        assert name in out.stdout.splitlines(), (line, out.stdout)


def test_brace_expansion_naming_the_store_is_refused(proj: Project) -> None:
    """Predates the shortcuts (ad425dd allowed these too): the word was taken as the literal
    text `.{s,}tatewright`. Fixed: such a word is a glob (`words._brace_expands`) whose
    pattern has `*` for each brace group (`.*tatewright`)."""
    _hook_binds(proj, [line for line, _name in BRACE_STORE_ATTACKS])


def test_brace_expansion_controls_pass(proj: Project) -> None:
    _hook_allows(proj, BRACE_CONTROLS)


GLOB_ATTACKS = ["rm workflows/*", "rm statewright.js?n", "rm -f .mcp.*", "rm workflows/fl*.json",
                *(line for line, _name in BRACE_PROTECTED_ATTACKS)]
GLOB_ATTACKS += ["rm -rf .c*", "rm -f .*.json", "rm -rf @(workflows)", "rm -rf w**/",
                 "shopt -s dotglob; rm -rf *", "rm -f wo?kflows/*", "chmod 000 [w]orkflows",
                 "echo x > workflows/*.json", "rm -f $D/workflows/*",
                 # a tilde word (`~+` is the working directory), the project root and above
                 f"rm ~+/workflows/{WF_NAME}", "rm ~+/workflows/*", "mv ../pro* /tmp/",
                 "rm -rf ../*", "chmod 000 ../p?oj",
                 # after a change of directory the analysis cannot follow
                 f"cd $D && rm {WF_NAME[:3]}*.json"]
#: a glob's wildcards stay within one path component, as bash's do
GLOB_CONTROLS = ["rm -rf build/*", "rm -f src/*.pyc", "ls workflows/*", "cat workflows/*",
                 "rm -f src/*.json", "rm -rf build/*/cache", "rm -f src/*/*.json",
                 "rm ~+/src/*.pyc", "rm -rf ../other/*", "rm -f /tmp/*.log"]


def test_a_glob_argument_matching_a_protected_file_is_refused(proj: Project) -> None:
    """Predates the shortcuts (ad425dd allowed these too): a glob or brace word of a writing
    command was compared with the store's names only, never with the protected files. Fixed:
    `protect.line._pattern_reaches` matches its pattern against every protected file and the
    directories that hold them."""
    _hook_denies(proj, GLOB_ATTACKS)


def test_glob_controls_pass(proj: Project) -> None:
    _hook_allows(proj, GLOB_CONTROLS)


# -- the shortcuts: attacks refused, controls passing --------------------------------------------

#: lines beyond ASCII (node texts decoded, not sliced) around code sliced from ASCII text
ASCII_SLICE_ATTACKS = [
    "echo é; cat .statewright/state.db",
    "echo 🙂 && bash -c 'rm -rf .statewright'",
    "sh -c 'echo é; statewright approve'",
    "echo é; sh -c 'statewright approve'",
    "echo é > /dev/null; cat $'\\x2estatewright/state.db'",
    "cat <<'E'\né\nE\nstatewright approve",
    "echo é; eval 'cat .statewright/state.db'",
    "echo é; echo x > .git/config",
]
ASCII_SLICE_CONTROLS = ["echo é", "echo 🙂 && ls src", "echo é && ls src/pkg",
                        "cat <<'E'\né\nE\nls src"]


def test_lines_beyond_ascii_and_the_code_inside_them(proj: Project) -> None:
    _hook_decides(proj, ASCII_SLICE_ATTACKS, ASCII_SLICE_CONTROLS)


#: a `&` job token, and the tokens holding `&` that are none
JOB_ATTACKS = ["sleep 1 &", "ls & ls", "bash -c 'sleep 1 &'", "eval 'sleep 1 &'",
               "echo é; sleep 1 &", "  \n sleep 1 &", "cat <<EOF &\nx\nEOF",
               "bash <<EOF\nsleep 1 &\nEOF", "sh -c 'echo é & ls'", "echo \"$(sleep 1 &)\""]
JOB_CONTROLS = ["echo a &> /dev/null", "ls 2>&1", "ls |& cat", "echo 'a & b'",
                "echo \"a & b\"", "ls && ls", "echo a\\&b",
                "cat <<EOF\na & b\nEOF", "echo a # & b"]


def test_job_tokens(proj: Project) -> None:
    _hook_decides(proj, JOB_ATTACKS, JOB_CONTROLS)


def test_bitwise_and_in_arithmetic_is_no_job(proj: Project) -> None:
    """A false deny that predates the shortcuts (ad425dd refused these too): the grammar's
    token for arithmetic's bitwise `&` has the type of the job token. Fixed: in a tree without
    errors an `&` whose parent is a `binary_expression` is no job (`has_job_token`)."""
    _hook_allows(proj, ["echo $(( 5 & 3 ))", "echo $(( 5&3 ))", "echo ${a[1&2]}"])


CLI_ATTACKS = [
    "st\\atewright approve", "$'\\x73tatewright' approve", "statewrigh? approve",
    "python -m statewright approve", "stat* approve", "S=statewright; $S approve",
    "env statewright approve", "echo approve | xargs statewright", "uv run statewright approve",
    ".venv/bin/statewright approve", "[s]tatewright approve", "?tatewright approve",
    "Statewright approve", "\u017ftatewright approve", "st''atewright approve",
    "nohup statewright approve", "command statewright approve", "*wright approve",
    "statewright-hook pre-tool-use", "python3 -c 'import statewright.cli'",
]
CLI_CONTROLS = ["ls src", "git status", "cat src/a.py", "echo statewright approve",
                "statewright status", "git grep -n statewright -- src", "mkdir -p build/out"]


def test_cli_spellings_in_lines_with_and_without_the_name(proj: Project) -> None:
    _hook_decides(proj, CLI_ATTACKS, CLI_CONTROLS)


STORE_GLOB_ATTACKS = ["cat .[s]tatewright/x", "cat .?tatewright/x", "cat .S*/x",
                      "cat [.]statewright/x", "cat .STATEWRIGHT/STATE.DB",
                      "cat .\u017ftatewright/state.db", "cat .statewright/[s]tate.db",
                      "rm -rf .[sS]*", "cat */state.db", "cat *tate.db"]
STORE_GLOB_CONTROLS = ["cat src/*.py", "ls src/pkg", "cat src/[a]*.py", "ls build/*"]


def test_store_spellings_and_the_first_letter_screen(proj: Project) -> None:
    _hook_binds(proj, STORE_GLOB_ATTACKS)
    _hook_allows(proj, STORE_GLOB_CONTROLS)


GIT_ATTACKS = ["git -C . clean -fdx", "git --git-dir=.git clean -fdx", "git --no-pager clean -xdf",
               "git -p clean -fdx", "git --literal-pathspecs clean -fdx",
               "git status; git clean -fx", f"git checkout -- workflows/{WF_NAME}",
               "git rm -r workflows"]
GIT_CONTROLS = ["git status", "git diff", "git log -1", "git clean -n", "git -C src status"]


def test_git_subcommands_after_global_options(proj: Project) -> None:
    _hook_decides(proj, GIT_ATTACKS, GIT_CONTROLS)


#: `check_env` (SECRET_TOKEN blocked in `work`): a process environment read in any spelling
ENV_ATTACKS = ["cat /proc/self/environ", "cat /proc/*/environ", "cat /pr?c/self/environ",
               "cat /proc/self/env*", "cat '/proc'/self/environ",
               "cat $'/proc/self/\\x65nviron'", "cat /proc/self/envir''on",
               "cat /proc/$$/environ", "cat /proc/1/en\\viron", "cat < /proc/self/environ",
               "echo $SECRET_TOKEN", "cat /proc/self/[e]nviron"]
ENV_CONTROLS = ["ls src", "cat src/a.py", "echo PATH", "git status"]


def test_process_environment_reads_under_blocked_env(proj: Project) -> None:
    _hook_decides(proj, ENV_ATTACKS, ENV_CONTROLS)


def test_lines_nested_deeper_than_before(proj: Project) -> None:
    """The walk follows deeper lines now; what it finds there is still refused, and a line far
    beyond is refused as nested too deeply."""
    def nest(depth: int, leaf: str) -> str:
        return "echo " + "$(echo " * depth + leaf + ")" * depth

    _hook_denies(proj, [nest(220, "$(statewright approve)"), nest(220, "x; rm -rf .statewright"),
                        nest(2000, "x")])
    _hook_allows(proj, [nest(40, "x")])


# -- memos per State object and per context, and threads ---------------------------------------

def _contexts(root: Path) -> tuple[GateContext, GateContext]:
    base = frozenset({str(root / "workflows" / WF_NAME)})
    one = GateContext(project_root=str(root), store_dir=str(root / ".statewright"),
                      protected_files=base)
    two = GateContext(project_root=str(root), store_dir=str(root / ".statewright"),
                      protected_files=base | {str(root / "src" / "a.py")})
    return one, two


_FREE = State(name="free")
_PIN_A = State(name="pin", blocked_env=("SECRET_TOKEN",), env_overrides={"PINNED": "a"})
_PIN_B = State(name="pin", blocked_env=("SECRET_TOKEN",), env_overrides={"PINNED": "b"})
_BLOCK_A = State(name="blk", blocked_env=("SECRET_TOKEN",))
_BLOCK_B = State(name="blk", blocked_env=("OTHER_TOKEN",))


def _cases(root: Path) -> list[tuple[State, GateContext, str, str | None, object]]:
    """(state, context, line, cwd, expected): allowed (True), refused (False), or the text the
    rewritten line must hold."""
    one, two = _contexts(root)
    wf, src = str(root / "workflows"), str(root / "src")
    return [
        (_FREE, one, "rm src/a.py", None, True),
        (_FREE, two, "rm src/a.py", None, False),  # protected in the second context only
        (_FREE, one, f"rm {WF_NAME}", wf, False),
        (_FREE, one, f"rm {WF_NAME}", src, True),  # the same line from another cwd
        (_FREE, one, "cd workflows && rm x.json", None, True),
        (_FREE, one, f"cd workflows && rm {WF_NAME}", None, False),
        # a glob after a change of directory the analysis cannot follow
        (_FREE, one, f"cd $D && rm {WF_NAME[:3]}*.json", None, False),
        (_FREE, one, "cd $D && rm -f *.pyc", None, True),
        (_PIN_A, one, "ls src", None, "export PINNED=a\n"),
        (_PIN_B, one, "ls src", None, "export PINNED=b\n"),
        (_BLOCK_A, one, "git status", None, "unset SECRET_TOKEN"),
        (_BLOCK_B, one, "git status", None, "unset OTHER_TOKEN"),
        (_BLOCK_A, one, "echo $SECRET_TOKEN", None, False),
        (_BLOCK_B, one, "echo $SECRET_TOKEN", None, True),
        (_BLOCK_B, one, "statewright status", None, "STATEWRIGHT_ACTOR=agent"),
    ]


def _check(case: tuple[State, GateContext, str, str | None, object]) -> None:
    state, ctx, line, cwd, expected = case
    d = gate(state, Counters(), ToolCall("Bash", {"command": line}, cwd=cwd), ctx)
    if isinstance(expected, bool):
        assert d.allowed is expected, (state.name, line, cwd, d.reason)
    else:
        assert d.allowed, (state.name, line, d.reason)
        assert d.updated_input is not None and expected in d.updated_input["command"], \
            (state.name, line, d.updated_input)
        assert (unwrap(d.updated_input["command"]) or d.updated_input["command"]).endswith(line)


def test_memos_keep_each_state_and_context_apart(proj: Project) -> None:
    cases = _cases(proj.root)
    for _round in range(3):  # every answer asked again after the others were kept
        for case in cases:
            _check(case)
        for case in reversed(cases):
            _check(case)


def test_several_threads_deciding_at_once(proj: Project) -> None:
    cases = _cases(proj.root)
    errors: list[BaseException] = []

    def work(offset: int) -> None:
        try:
            for i in range(200):
                _check(cases[(i * 7 + offset) % len(cases)])
        except BaseException as exc:  # (reported by the main thread)
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
