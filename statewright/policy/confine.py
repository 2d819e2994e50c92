"""Binding by the kernel, the policy's half (DESIGN section 4): which allowed lines run under the
sandbox (`needs_sandbox`), what the sandbox of a state protects (`profile_for`), and the line
the host runs instead (`sandbox_line`). `statewright.sandbox` enforces it.

**Which lines.** A line runs under the sandbox unless the analysis proves it plain: every
command a fixed, bare name of `PLAIN_PROGRAMS` (programs whose every effect the analysis sees:
they run no code from files and write only the paths their words name) with no risk found, and
no variable assigned (`LD_PRELOAD=./x.so cat`, `PATH=./bin:$PATH`). Every line of a state with
`blocked_env` runs under it (the launcher scrubs the variables before `exec`, so no process of
the line holds them, not even its own shell's `/proc/self/environ`). Test runners, build
tools, package scripts, interpreters, script files, patch appliers, git, archivers and unknown
programs always do: the code they run is data the line does not contain.

**What a state protects** (`Profile`): everything check 1 protects, as paths the kernel
enforces: the workflow directories in use (and the project's `workflows/`, where a new file
would shadow one), the configuration that could switch statewright off (`statewright.json`,
`.mcp.json`, `.claude/`, `~/.claude/`, `~/.claude.json`), git's hooks and config and the
conventional hook directories, the programs the host runs for statewright (the package, its
scripts, their virtual environment, the active-run markers), the resident hook servers' socket
directory, and the state's own `read_only` globs; the store (with the resident servers' keys)
hidden; the blocked variables scrubbed and `env_overrides` pinned.
"""

from __future__ import annotations

import os

from ..lean import TYPE_CHECKING, environ_get, lru_cache
from ..names import run_dir
from ..sandbox.launcher import head, wrap
from ..sandbox.probe import tier
from ..sandbox.profile import Profile
from .channels import process_substitution
from .paths import _real_root
from .protect.scope import HOOK_DIRS
from .protect.store import (
    CONFIG_FILES,
    HOME_CONFIG_FILES,
    host_config_dirs,
    markers_of,
    program_paths,
)
from .types import CACHE_MAX_LINE, line_memo

if TYPE_CHECKING:  # pragma: no cover
    from ..definition.compiled import State
    from .shell import ShellAnalysis
    from .types import GateContext

#: programs whose every effect the analysis sees: they run no code from files or from the
#: environment the line does not show, and write only what their words and redirections name
#: (which check 1 and the write scope judge). Builtins included. Anything else, and any name
#: not fixed or given with a path (`./cat` may be the agent's own file), runs sandboxed.
PLAIN_PROGRAMS = frozenset({
    # shell builtins that run nothing
    "cd", "pushd", "popd", "dirs", "pwd", "echo", "printf", "test", "[", "true", "false", ":",
    "type", "exit", "return", "break", "continue", "shift", "times", "umask", "wait",
    # readers
    "cat", "tac", "head", "tail", "wc", "ls", "grep", "egrep", "fgrep", "rg", "diff", "cmp",
    "comm", "file", "stat", "md5sum", "sha1sum", "sha256sum", "sha512sum", "b2sum", "cksum",
    "jq", "realpath", "readlink", "basename", "dirname", "nl", "sort", "uniq", "cut", "tr",
    "column", "hexdump", "xxd", "od", "strings", "fold", "fmt", "paste", "join", "expand",
    "unexpand", "rev", "seq", "date", "whoami", "id", "uname", "hostname", "nproc", "du", "df",
    "tree", "which", "sleep", "printenv",
    # writers of the paths they name
    "mkdir", "touch", "cp", "mv", "rm", "rmdir", "ln", "tee", "chmod", "sed",
    # statewright's own CLI: it runs no code of the project's, and its human-only commands are
    # refused by any route (`protect.cli_violations`); a transition it fires is the agent's
    "statewright",
})

#: variables that may hold the credentials of a shared store (PostgreSQL): never inside a
#: sandbox, whose code could otherwise change the store over the network
STORE_SECRETS = ("STATEWRIGHT_STORE", "STATEWRIGHT_TOKEN", "PGPASSWORD", "PGPASSFILE")

#: sed's options that read its script from a file
_SED_SCRIPT_FILE = ("-f", "--file", "--f")


def _plain(analysis: ShellAnalysis) -> bool:
    if analysis.assignments or process_substitution(analysis.source):
        # (bash does not wait for a process substitution: only the kernel ends what it left)
        return False
    for cmd in analysis.commands:
        if cmd.function_call:
            continue  # (its body's commands are among the line's)
        name = cmd.name
        if not cmd.name_literal or name not in PLAIN_PROGRAMS or cmd.risks:
            return False
        if name == "sed" and any(_sed_script_file(w.value) for w in cmd.args):
            return False
    return True


def _sed_script_file(word: str) -> bool:
    if word.startswith("--"):
        return word.startswith(_SED_SCRIPT_FILE[1:])
    return word.startswith("-") and "f" in word[1:].split("=", 1)[0]


#: whether the analysis proves a line plain, kept per line text
plain_line = line_memo(_plain)


def needs_sandbox(analysis: ShellAnalysis, state: State, ctx: GateContext | None = None
                  ) -> bool:
    """Whether an allowed line must run under the sandbox in `state`. A line that mentions
    the store (`cat data/state.db`, a commit message naming it) is never plain: the kernel
    hides the store from it, so no text rule has to guess what the mention reaches."""
    if state.sandbox == "off":
        return False
    if state.blocked_env or not plain_line(analysis) or not _path_trusted(
            ctx.project_root if ctx is not None else None, os.environ.get("PATH", "")):
        return True
    return ctx is not None and markers_of(ctx.store_dir).search(analysis.source)


@lru_cache(maxsize=16)
def _path_trusted(root: str | None, path: str) -> bool:
    """Whether a bare program name resolves outside the project: no `PATH` entry is relative
    (`.`, empty) or inside the project (an activated project virtual environment): else a
    program the agent's code put there would answer for `ls` in a line that runs unsandboxed."""
    inside = os.path.realpath(root).rstrip(os.sep) + os.sep if root else None
    for d in path.split(os.pathsep):
        if not os.path.isabs(d):
            return False
        if inside and (os.path.realpath(d) + os.sep).startswith(inside):
            return False
    return True


def binds(analysis: ShellAnalysis, state: State, ctx: GateContext) -> bool:
    """Whether the kernel will bind this line: it needs the sandbox and this machine has
    one (then the analysis keeps only its early, explained refusals)."""
    return needs_sandbox(analysis, state, ctx) and tier().available


def profile_for(state: State, ctx: GateContext) -> Profile:
    """What every process of a sandboxed line may not do in `state`."""
    return _kept(state, ctx)[1]


def _kept(state: State, ctx: GateContext) -> tuple[State, Profile, str]:
    """(state, its Profile, the launcher's text for it), kept per state and context."""
    pf = ctx.protected_files
    files = pf if type(pf) is frozenset else frozenset(pf)
    later = git_dirs_later(ctx.project_root)
    key = (id(state), ctx.project_root, ctx.store_dir, files, environ_get("HOME"),
           environ_get("XDG_RUNTIME_DIR"), environ_get("PATH"), later)
    kept = _PROFILES.get(key)
    if kept is None or kept[0] is not state:
        if len(_PROFILES) >= 64:
            _PROFILES.clear()
        profile = _profile(state, ctx.project_root, ctx.store_dir, files, later)
        kept = _PROFILES[key] = (state, profile, head(profile))
    return kept


#: (id of a State, the context's facts, HOME, XDG_RUNTIME_DIR, PATH, the submodules' git
#: files) -> (that State, its Profile, the launcher's text): a State is kept with its profile,
#: so its id is not reused while it is remembered
_PROFILES: dict[tuple[object, ...], tuple[State, Profile, str]] = {}


#: what a git directory holds of its own (not walked for the git directories of submodules)
_GIT_PARTS = frozenset({"objects", "refs", "logs", "info", "hooks", "branches", "lfs",
                        "rr-cache", "worktrees", "modules"})


def _there(path: str) -> bool:
    """Whether `path` exists, a link to nowhere included (as `os.path.lexists`)."""
    return os.access(path, os.F_OK, follow_symlinks=False)


def git_dirs_later(root: str) -> tuple[str, ...]:
    """The files of the project's other git directories that make code run later, outside any
    sandbox, as `.git/hooks` and `.git/config` do: each submodule's git directory under
    `.git/modules` (nested ones too) keeps its own `hooks/` and `config` (a `core.fsmonitor`
    there runs on the human's next `git status` in the project, which looks into every
    submodule), and a linked worktree's `config.worktree`. Only what exists (a mount pins an
    existing path); looked up on every sandboxed decision (one `stat` where there is none)."""
    git = os.path.join(_real_root(root), ".git")  # (resolved once per process)
    out: list[str] = []
    # (`access` answers "not there" without an exception: most projects have none of these)
    stack = [(m, False)] if _there(m := os.path.join(git, "modules")) else []
    while stack and len(out) < 512:
        d, in_git = stack.pop()
        try:
            entries = list(os.scandir(d))
        except OSError:
            continue
        for e in entries:
            if not e.is_dir(follow_symlinks=False) or (in_git and e.name in _GIT_PARTS):
                continue
            git_dir = _there(os.path.join(e.path, "HEAD"))
            if git_dir:
                out += [p for p in (os.path.join(e.path, n) for n in
                                    ("hooks", "config", "config.worktree")) if _there(p)]
                stack.append((os.path.join(e.path, "modules"), False))
            # (a submodule named `a/b` keeps its git directory at modules/a/b, whatever is at
            # modules/a: a `HEAD` planted there hides nothing below it)
            stack.append((e.path, git_dir))
    if _there(p := os.path.join(git, "config.worktree")):
        out.append(p)
    worktrees = os.path.join(git, "worktrees")
    if _there(worktrees):
        try:
            names = os.listdir(worktrees)
        except OSError:
            names = []
        out += [p for p in (os.path.join(worktrees, n, "config.worktree") for n in names)
                if _there(p)]
    return tuple(sorted(out))


def _profile(state: State, project_root: str, store_dir: str, workflow_files: frozenset[str],
             git_later: tuple[str, ...] = ()) -> Profile:
    real = os.path.realpath
    root = real(project_root)
    paths: list[str] = []
    for f in sorted(workflow_files):
        full = real(f)
        d = os.path.dirname(full)
        # (a workflow at the project's top, or above it: the file alone, never the project)
        paths.append(full if root == d or root.startswith(d.rstrip(os.sep) + os.sep) else d)
    paths.append(os.path.join(root, "workflows"))
    paths += [os.path.join(root, f) for f in CONFIG_FILES if not f.startswith(".claude/")]
    paths.append(os.path.join(root, ".claude"))
    paths += [real(os.path.expanduser(f)) for f in HOME_CONFIG_FILES
              if not f.startswith("~/.claude/")]
    paths.append(real(os.path.expanduser("~/.claude")))
    paths += host_config_dirs(root)  # (Codex's, Gemini CLI's, Copilot CLI's settings)
    paths += [os.path.join(root, ".git", "hooks"), os.path.join(root, ".git", "config")]
    paths += git_later
    paths += [os.path.join(root, d) for d in sorted(HOOK_DIRS)]
    paths += program_paths()
    paths += host_programs(root)
    paths += runs_later(root)
    paths.append(run_dir(os.environ))
    paths += read_only_paths(state, root)
    store = real(store_dir)
    pgpass = real(os.path.expanduser("~/.pgpass"))
    # never the project itself, nor a directory above it: the project stays the agent's
    kept = tuple(dict.fromkeys(p for p in paths if p != root and not (
        root + os.sep).startswith(p.rstrip(os.sep) + os.sep)))
    names = tuple(dict.fromkeys([*(n for n in state.blocked_env if n and "=" not in n),
                                 *STORE_SECRETS]))
    return Profile(root, kept, (store, pgpass), names,
                   tuple(sorted(state.env_overrides.items())),
                   network=state.network, unix_sockets=state.unix_sockets)


#: what makes code run later, outside any sandbox: the user's shell start-up files (Claude
#: Code's shell snapshot is made from them, and plain lines run in that shell), the user's
#: configuration of git, npm and ssh, and the user's own program directory
HOME_STARTUP = ("~/.bashrc", "~/.bash_profile", "~/.bash_login", "~/.bash_logout", "~/.profile",
                "~/.zshrc", "~/.zshenv", "~/.zprofile", "~/.zlogin", "~/.config/fish",
                "~/.inputrc", "~/.gitconfig", "~/.config/git", "~/.npmrc", "~/.yarnrc",
                "~/.yarnrc.yml", "~/.ssh", "~/.local/bin")
#: system places whose files run in later shells and programs (writable where the agent runs
#: as root)
SYSTEM_STARTUP = ("/etc",)


def runs_later(root: str) -> list[str]:
    """Paths outside the project whose contents run later outside any sandbox: the user's and
    the system's start-up files (`HOME_STARTUP`, `SYSTEM_STARTUP`), every directory on `PATH`
    (a program put there would answer for a bare name in a later line), and the Python the
    hook runs on (its standard library and every site directory on `sys.path`: a `.pth` or a
    `sitecustomize.py` there runs in every later hook)."""
    import sys

    real = os.path.realpath
    out = [real(os.path.expanduser(f)) for f in HOME_STARTUP] + list(SYSTEM_STARTUP)
    out += [real(d) for d in os.environ.get("PATH", "").split(os.pathsep) if os.path.isabs(d)]
    out.append(real(os.path.dirname(os.__file__)))
    out += [real(d) for d in sys.path if os.path.isabs(d) and os.path.isdir(d)]
    out.append(real(sys.executable))
    inside = root.rstrip(os.sep) + os.sep
    return [p for p in out if not (p + os.sep).startswith(inside)]


def host_programs(root: str) -> list[str]:
    """The programs the host's settings run for statewright (`.claude/settings*.json` and
    `~/.claude/settings.json` hooks, the `statewright` server of `.mcp.json`): each program's
    file and, when it lives in a virtual environment, that environment (its interpreter and
    packages decide what runs)."""
    from ..lean import loads

    commands: list[str] = []
    for f in (os.path.join(root, ".claude", "settings.json"),
              os.path.join(root, ".claude", "settings.local.json"),
              os.path.expanduser("~/.claude/settings.json")):
        try:
            with open(f, "rb") as fh:
                hooks = loads(fh.read()).get("hooks") or {}
        except (OSError, ValueError, AttributeError):
            continue
        for groups in hooks.values() if isinstance(hooks, dict) else ():
            for g in groups if isinstance(groups, list) else ():
                for h in (g.get("hooks") or []) if isinstance(g, dict) else ():
                    if isinstance(h, dict) and isinstance(h.get("command"), str):
                        commands.append(h["command"])
    try:
        with open(os.path.join(root, ".mcp.json"), "rb") as fh:
            server = (loads(fh.read()).get("mcpServers") or {}).get("statewright") or {}
        if isinstance(server.get("command"), str):
            commands.append(server["command"])
    except (OSError, ValueError, AttributeError):
        pass
    out: list[str] = []
    for command in commands:
        for var in ('"$CLAUDE_PROJECT_DIR"', "${CLAUDE_PROJECT_DIR}", "$CLAUDE_PROJECT_DIR"):
            command = command.replace(var, root)
        words = command.replace('"', " ").replace("'", " ").split()
        if not words:
            continue
        program = words[0] if "/" in words[0] else _which(words[0])
        if not program:
            continue
        named = os.path.abspath(os.path.join(root, program))  # (an absolute path stays)
        out += [named, os.path.realpath(named)]
        env = os.path.dirname(os.path.dirname(named))
        if os.path.exists(os.path.join(env, "pyvenv.cfg")):
            out.append(os.path.realpath(env))
    return out


def _which(name: str) -> str | None:
    """`shutil.which(name)`, without importing `shutil` on the hook's path."""
    for d in os.environ.get("PATH", "").split(os.pathsep):
        full = os.path.join(d, name)
        if d and os.path.isfile(full) and os.access(full, os.X_OK):
            return full
    return None


def server_profile(ctx: GateContext, withheld: frozenset[str]) -> Profile:
    """The sandbox of a downstream MCP server the proxy starts: check 1's paths read-only and
    the store hidden, as for a line, the variables any workflow blocks (`withheld`) scrubbed;
    the network and Unix sockets left to it (servers talk to services; the proxy gates every
    call it forwards). A state's own rules change while a server runs; these do not."""
    from ..definition.compiled import State

    base = _profile(State(name="servers"), ctx.project_root, ctx.store_dir,
                    frozenset(ctx.protected_files), git_dirs_later(ctx.project_root))
    return Profile(base.root, base.read_only, base.hidden,
                   tuple(sorted(withheld | frozenset(STORE_SECRETS))),
                   network=True, unix_sockets=True)


def read_only_paths(state: State, root: str) -> list[str]:
    """The paths of the state's `read_only` globs: a glob's fixed leading directories when the
    rest of it is `**` or one name pattern (all of `tests/` for `tests/**`, all of `src/` for
    `src/*.py`), else the existing files and directories it matches now (`**/*.lock`: a file
    created later that matches is refused by the analysis and, made by a sandboxed line, counted
    by effect as an overrun)."""
    out: list[str] = []
    for glob in state.read_only:
        parts = glob.strip("/").split("/")
        fixed: list[str] = []
        for part in parts:
            if any(ch in part for ch in "*?["):
                break
            fixed.append(part)
        rest = parts[len(fixed):]
        if fixed and (not rest or rest == ["**"] or rest == ["**", "*"] or (
                len(rest) == 1 and "**" not in rest[0])):
            # (`tests/**`: all of `tests/`; `src/*.py`: all of `src/`, since a file made there
            # later could match and the kernel binds directories, not names: fail closed)
            out.append(os.path.join(root, *fixed))
            continue
        out += _matches(root, glob)
    return out


def _matches(root: str, glob: str) -> list[str]:
    from .paths import glob_match

    found: list[str] = []
    for base, dirs, files in os.walk(root):
        rel_base = os.path.relpath(base, root)
        dirs[:] = [d for d in dirs if d not in (".git", ".statewright")]
        for name in dirs + files:
            rel = name if rel_base == "." else f"{rel_base}/{name}"
            if glob_match(glob, rel):
                found.append(os.path.join(base, name))
    return found


def sandbox_line(analysis: ShellAnalysis, line: str, state: State, ctx: GateContext
                 ) -> tuple[str, bool, str | None]:
    """An allowed Bash `line` (already rewritten for the environment) as the host is to run
    it: (the text, whether it runs under the sandbox, a line of the decision's explanation).
    Raises `Unconfinable` where the line needs the kernel tier, the state requires it, and this
    machine has none."""
    if not needs_sandbox(analysis, state, ctx):
        return line, False, None
    found = tier()
    if not found.available:
        if state.sandbox == "required":
            raise Unconfinable(
                "the line runs code whose effects its text does not show, and state "
                f"'{state.name}' requires the kernel sandbox, which this machine does not give "
                f"({found.why}); run commands whose effects the line shows")
        return line, False, ("sandbox: none on this machine (`sandbox: auto`): the analysis "
                             "alone binds this line")
    _, profile, text = _kept(state, ctx)
    key = (text, line)
    wrapped = _WRAPPED.get(key)
    if wrapped is None:
        wrapped = wrap(profile, line, kept_head=text)
        if len(line) <= CACHE_MAX_LINE:
            if len(_WRAPPED) >= 256:
                _WRAPPED.clear()
            _WRAPPED[key] = wrapped
    return wrapped, True, (
        "sandbox: the line runs under the kernel sandbox (protected paths read-only, the store "
        "hidden, blocked variables scrubbed, what it starts reaped)")


#: (the launcher's text for a state, a line) -> the line wrapped in it: an agent runs the same
#: lines again and again (the test command), and quoting the line is most of wrapping it
_WRAPPED: dict[tuple[str, str], str] = {}


class Unconfinable(Exception):
    """A line needs the kernel tier, the state requires it, and this machine has none (the
    message is the refusal's reason)."""


#: what a program prints when the kernel refused it something (the namespaces tier: a
#: read-only bind, a hidden path, seccomp; the Landlock tier: Landlock), and the launcher's own
_REFUSAL_SIGNS = ("Read-only file system", "Operation not permitted", "Permission denied",
                  "statewright sandbox:")


def refusal_note(state: State, output: str) -> str | None:
    """What the agent is told after a sandboxed line whose output shows a kernel refusal (None:
    it shows none): what this state protects, and what to do instead."""
    if not any(sign in output for sign in _REFUSAL_SIGNS):
        return None
    own = f" and this state's read-only paths ({', '.join(state.read_only)})" \
        if state.read_only else ""
    return (f"[STATEWRIGHT SANDBOX] In state '{state.name}' this line ran under statewright's "
            "kernel sandbox: no process it starts may change the workflow files, "
            "statewright.json, .mcp.json, .claude/, ~/.claude, the other coding hosts' "
            "settings (.codex/, .gemini/, .github/hooks/, ...), git's hooks and config, or "
            f"statewright's own programs{own}; statewright's store is hidden, blocked "
            "variables are unset, no new Unix socket may be opened, and whatever the line "
            "leaves running is stopped when it ends. A 'Read-only file system', 'Operation not "
            "permitted' or 'Permission denied' above that names one of these is that rule, not "
            "a fault to work around: change other files, or move on with statewright_transition.")
