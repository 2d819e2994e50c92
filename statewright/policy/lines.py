"""Checks 5 and 6 for a shell line (DESIGN section 4), called by `gate`, with the file-system
side of check 5: following `cd`, the scope of output redirects, and how check 8 names the files
a line writes. Loaded only when a shell line is decided."""

from __future__ import annotations

import os

from ..lean import TYPE_CHECKING, fnmatchcase, lru_cache
from .paths import HARMLESS_DEVICES, relative_to_real, relative_to_root
from .procfs import SECRET_FILES, environ_path
from .programs import is_python
from .programs.text import (
    GIT_TREE_OPTIONS,
    NO_FILE_ARGS,
    PATTERN_SEARCHERS,
    SUBCOMMAND_FIRST,
    TREE_READERS,
    pattern_args,
)
from .protect.line import changes_worktree, line_dirs
from .protect.scope import holds_protected, sensitive
from .protect.store import ctx_facts
from .shell import check_commands, check_env
from .shell.cwds import DIR_CHANGERS, DirWalk, cdpath_applies
from .shell.env import INTERPRETERS
from .shell.wrappers import CHDIR_WRAPPERS, chdir_target
from .types import CACHE_MAX_LINE, line_memo

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable
    from typing import Any

    from ..definition.compiled import State
    from .paths import Resolve
    from .shell import Command, ShellAnalysis, Verdict, Word
    from .types import GateContext


def _commands_verdict(analysis: ShellAnalysis, allowed: tuple[str, ...]) -> Verdict:
    """Check 5's verdict without its trace (`_commands_trace` gives the trace)."""
    return check_commands(analysis, allowed, None, False)


#: the verdicts of checks 5 and 6 that depend on the text alone, kept per line
_commands_by_line = line_memo(_commands_verdict, with_arg=True)
_env_by_line = line_memo(check_env, with_arg=True)


def _commands_trace(analysis: ShellAnalysis, allowed: tuple[str, ...]
                    ) -> Callable[[], list[str]]:
    """Check 5's lines of the explanation of a line it allowed, worked out when the decision's
    explanation is read (`types.Decision.explanation`: `statewright check`), not for every
    decision: `check_commands` again, a pure function of the text and the allowed entries."""
    return lambda: [f"allowed_commands: {t}" for t in check_commands(analysis, allowed).trace]


def command_problem(c: Any, state: State, ctx: GateContext) -> tuple[str, str] | None:
    """Check 5 for the shell line of `c` (the gate's call): every command allowed, output
    redirects in scope. (rule, why) when refused. Adds to `c` the files the line writes (check
    8) and the trace."""
    analysis, command = c.analysis, c.command
    cwds = line_dirs(analysis, c.cwd or ctx.project_root)[0]
    # (the files the redirects write, as check 8 names them, found with their problems)
    problems = redirect_problems(analysis, ctx, c.resolve, cwds, c.files)
    for f in worktree_changes(analysis, ctx, c.resolve, cwds):
        if f not in c.files:
            c.files.append(f)
    if state.allowed_commands is None:
        # no command rules here, but output redirects obey the same write scope as the
        # file-writing tools (inside the project, not into .git/ or Claude settings)
        if problems:
            c.trace += [f"self_protection: redirect {p}" for p in problems]
            return "self_protection", "; ".join(problems[:3])
        return None
    if analysis.changes_dir or len(command) > CACHE_MAX_LINE:
        v = check_commands(analysis, state.allowed_commands,
                           cd_check=cd_checker(ctx, c.resolve, c.cwd or ctx.project_root))
    else:  # no `cd` to follow on disk: the verdict depends on the text alone
        allowed = tuple(state.allowed_commands)
        v = _commands_by_line(analysis, allowed)
        if v.allowed and not problems:
            c.trace.append(_commands_trace(analysis, allowed))  # (its text when it is read)
            return None
        v = check_commands(analysis, allowed)  # (a refusal: its trace now)
    c.trace += [f"allowed_commands: {t}" for t in v.trace]
    c.trace += [f"allowed_commands: redirect {p} -> deny" for p in problems]
    if not v.allowed or problems:
        return "allowed_commands", "; ".join(x for x in [v.reason, *problems] if x)
    return None


def env_problem(c: Any, state: State) -> str | None:
    """Check 6 for the shell line of `c`: why a blocked variable could be read (adds the
    trace)."""
    analysis = c.analysis
    if not state.blocked_env:
        if not analysis.ok and state.allowed_commands is None:
            c.trace.append("shell: " + "; ".join(analysis.problems) +
                           " (no command rules in this state)")
        return None
    v = _env_by_line(analysis, tuple(state.blocked_env))
    # (its lines of the explanation when it is read, as `_commands_trace`)
    c.trace.append(lambda: [f"blocked_env: {t}" for t in v.trace])
    if not v.allowed:
        return v.reason
    why = environ_search_problem(analysis, c.cwd or c.root, c.resolve, c.root)
    if why is not None:
        c.trace.append(f"blocked_env: {why} -> deny")
    return why


def environ_search_problem(analysis: ShellAnalysis, start: str, resolve: Resolve, root: str
                           ) -> str | None:
    """The file-system side of check 6: why a command of the line could read a process
    environment from where it runs. A search from `/` reaches /proc (`grep -r x /`,
    `cd / && grep -r x`, `tar -C/ -cf - proc`, `env -C / grep -r x .`, `../../..`, a link to
    `/`); anything run in a process's directory reaches its `environ`; after a change of
    directory the analysis cannot follow, a program that reads trees, or a glob that could name
    `environ`, could be anywhere."""
    if not (analysis.changes_dir or start != root):  # (the usual line: run at the root)
        why = _links_to_environ(analysis, None, start, resolve)
        if why is not None:
            return why
        kinds = _KIND_BY_NAME
        for cmd in analysis.commands:
            if (not cmd.name_literal or kinds.get(cmd.program) != 0) and _reads_trees(cmd):
                return _names_root([(c, start) for c in analysis.commands], resolve) or \
                    _given_root(analysis, start, resolve)
        return None  # nothing in it reads trees
    here: str | None = start
    places: list[tuple[Command, str]] = []  # each command and where it runs
    at: list[tuple[int, str]] = []  # (the same, by the command's index)
    reader = visited = False
    moved: dict[int, str] = {}  # a wrapper's index -> where it runs its command (`env -C`)
    line_here = here
    for k, cmd in enumerate(analysis.commands):
        if cmd.name_literal and cmd.name in DIR_CHANGERS:
            here = line_here = _follow(cmd, line_here, analysis.source)
            if here is not None and not visited:  # (`~-`, `$OLDPWD` could name it later)
                visited = environ_path(resolve(".", here, shell=True), True)
            continue
        # (the command a wrapper runs elsewhere runs there; the next ones where the line is)
        here = moved.get(cmd.parent, line_here) if cmd.parent is not None else line_here
        if here is not None and here != line_here:
            moved[k] = here  # (what it runs in turn runs there too)
        reads_trees = _reads_trees(cmd)
        if here is None:
            if reads_trees:
                return (f"`{cmd.name}` could search `/` or a process's directory (after a "
                        "change of directory the analysis cannot follow)")
            for a in cmd.args:
                if (a.glob or a.dynamic) and a.pattern[:1] != "/" and any(
                        fnmatchcase(f, a.pattern.rsplit("/", 1)[-1]) for f in SECRET_FILES):
                    return (f"`{a.text}` could name a process environment (after a change of "
                            "directory the analysis cannot follow)")
            continue
        real = resolve(".", here, shell=True)
        if environ_path(real, True) and (real != "/" or reads_trees):
            return (f"`{cmd.name}` runs in `{here}`, from where it could read a process "
                    "environment (/proc/*/environ)")
        if cmd.name_literal and cmd.program in CHDIR_WRAPPERS:  # `env -C DIR cmd`
            known, target = chdir_target(cmd)
            if not known:
                here = line_here = None  # (the rest of the line counts as anywhere)
            elif target is not None:
                real = resolve(target, here, shell=True)
                if environ_path(real, True) and real != "/":
                    return (f"`{cmd.name}` runs its command in `{target}`, from where it could "
                            "read a process environment (/proc/*/environ)")
                moved[k] = os.path.normpath(os.path.join(here, target))
        reader = reader or reads_trees
        if here is not None:
            places.append((cmd, here))
            at.append((k, here))
    why = _links_to_environ(analysis, at, start, resolve)
    if why is not None or not reader:
        return why
    return _names_root(places, resolve, visited) or _given_root(analysis, start, resolve)


def _reads_trees(cmd: Command) -> bool:
    """Whether `cmd` may read what lies below a directory (`programs.text.TREE_READERS`, an
    interpreter, `git --no-index`, a name that is not fixed text)."""
    if not cmd.name_literal:
        return True
    name = cmd.program
    kind = _KIND_BY_NAME.get(name)
    if kind is None:
        kind = 1 if name in _READS_TREES or is_python(name) else 2 if name == "git" else 0
        if len(_KIND_BY_NAME) >= 4096:
            _KIND_BY_NAME.clear()
        _KIND_BY_NAME[name] = kind
    if kind == 2:
        for a in cmd.args:
            if a.value.startswith(GIT_TREE_OPTIONS):
                return True
    return kind == 1


#: command name -> 1: reads trees, 2: `git` (by its arguments), 0: neither
_KIND_BY_NAME: dict[str, int] = {}


def _names_root(places: list[tuple[Command, str]], resolve: Resolve, visited: bool = False
                ) -> str | None:
    """In a line that reads trees, a word naming `/` or a process's directory, as an argument
    or an option's value (`env -C /`, `tar -C/`, `--directory=/`), each command's relative
    words resolved from where it runs (`places`); a word that is not fixed text and climbs
    (`~/../..`, `"$PWD"/../..`) or could be `/` with a slash after it (`${PWD%%/*}/`), or any
    such word once the line has been in such a directory (`visited`: `~-`, `$OLDPWD`)."""
    for cmd, here in places:
        patterns = pattern_args(cmd.name, cmd.args) if cmd.name_literal else ()
        for i, a in enumerate(cmd.args):
            v = a.value
            if i in patterns:
                continue
            if not a.literal:
                pat = a.pattern
                if (visited and not a.glob) or ".." in pat.split("/") or (
                        pat[-1:] == "/" and not pat.strip("*/")):
                    return (f"`{cmd.name} {a.text}` could search `/` or a process's directory "
                            "(/proc/*/environ)")
                continue
            if v[:1] == "-":
                v = v.partition("=")[2] if "=" in v else v[2:] if v[1:2] != "-" else ""
                if "/" not in v and v[:1] != ".":
                    continue
            full = os.path.normpath(os.path.join(here, v))
            if environ_path(full, True) or environ_path(resolve(v, here, shell=True), True):
                return (f"`{cmd.name} {a.value}` could search a process environment "
                        "(/proc/*/environ)")
    return None


def _links_to_environ(analysis: ShellAnalysis, at: list[tuple[int, str]] | None, start: str,
                      resolve: Resolve) -> str | None:
    """A file a command is given (an argument, an input redirect) that is a process
    environment, its memory or a descriptor through a link (`cat e` after
    `ln -s /proc/1/environ e` in an earlier state: the Read tool resolves it, and so does the
    line), or where the command runs (`cd / && cat proc/1/mem`); a glob or word under a link
    to a process's directory. `at`: each command's index and where it runs (None: every
    command, at `start`). A path that names /proc or /dev itself is the text's business
    (`shell.env`); a searcher's pattern is no file; nor is a subcommand (`git status`) or what
    a program that reads no file is given (`echo`). One pass, nothing built: a new line is
    the usual case."""
    cmds = analysis.commands
    for k, here in enumerate([start] * len(cmds)) if at is None else at:
        cmd = cmds[k]
        # (by its bare name: what a program reads no file from lets more through, and
        # `./grep`, `./echo` may be files the agent wrote that read their words)
        name = cmd.name if cmd.name_literal else ""
        if name not in NO_FILE_ARGS:
            patterns = pattern_args(name, cmd.args) if name in _PATTERNED else ()
            first = name in SUBCOMMAND_FIRST  # (`git status`: no file)
            for i, a in enumerate(cmd.args):
                v = a.value
                if a.literal:
                    if not v or v[0] == "-":
                        continue
                    if first:
                        first = False
                    elif i not in patterns and not v.startswith(("/proc", "/dev")) and \
                            _secret_link(v, here, resolve):
                        return (f"`{cmd.name} {a.text}` is a process environment or memory "
                                "(/proc/*/environ), through a link or where it runs")
                    continue
                first = False
                # (`"$F"` alone, no glob and no directory, is the documented limit of dynamic
                # words)
                if (a.glob or "/" in a.pattern) and i not in patterns and \
                        not v.startswith(("/proc", "/dev")) and _word_through_link(a, here,
                                                                                  resolve):
                    return (f"`{cmd.name} {a.text}` could name a process environment "
                            "(/proc/*/environ) through a link")
        for r in cmd.redirects:
            t = r.target
            if not r.output and t is not None and t.literal and t.value[:1] not in ("", "-") \
                    and not t.value.startswith(("/proc", "/dev")) and not t.value.isdigit() \
                    and _secret_link(t.value, here, resolve):
                return (f"`{r.op} {t.text}` is a process environment or memory "
                        "(/proc/*/environ), through a link or where it runs")
    return None


def _word_through_link(a: Word, here: str, resolve: Resolve) -> bool:
    """Whether word `a`, not fixed text, could name a process environment through a link (a
    brace word's each alternative; a glob or a pattern through its leading directory)."""
    v = a.value
    if a.glob and not a.dynamic and "{" in v:
        alts = _braces(v)
        if alts is not None:  # (`{src,build}`: words, not a glob of the directory)
            return any(_glob_through_link(x, True, here, resolve)
                       if any(ch in x for ch in "*?[")
                       else bool(x) and _secret_link(x, here, resolve) for x in alts)
    return _glob_through_link(a.pattern, a.glob, here, resolve)


def _secret_link(v: str, here: str, resolve: Resolve) -> bool:
    """Whether the file `v` names from `here` is a process environment, its memory or a
    descriptor: only a link can make it one without naming it (`el` -> /proc/1/environ; one
    under a linked directory has to be named `environ` or `mem`, which the text shows), so a
    word naming no link costs one `readlink`, not a resolution."""
    p = v if v[0] == "/" else here + "/" + v
    if p.rsplit("/", 1)[-1] not in SECRET_FILES:
        # (a word naming nothing, the usual case, is answered by `os.access`, which returns
        # False where `readlink` would raise: a raised error costs three times the call. A
        # name `access` cannot look up, `readlink` cannot either, so it is no link)
        if _ACCESS_NOFOLLOW and not _access(p, _F_OK, follow_symlinks=False):
            return False
        try:
            _readlink(p)  # (one system call whether the word names a link or a file)
        except OSError:
            return False
    full = resolve(v, here, shell=True)
    return full.startswith(("/proc/", "/dev/")) and environ_path(full, False)


def _glob_through_link(pattern: str, glob: bool, here: str, resolve: Resolve) -> bool:
    """Whether a word not fixed text (its `pattern`) could name a process environment through
    a link: its fixed leading directory is a process's (`me/e*`, `me/$F` with `me` a link to
    /proc/<pid>), or its first part with a glob matches a link to one, or to a process's
    directory, in that directory (`e*`, `e` a link to /proc/1/environ; `m*/e*`; a bare
    expansion, `"$F"`, is the documented limit of dynamic words). A pattern that spells /proc
    itself is the text's business."""
    parts = pattern.split("/")
    k = 0
    while k < len(parts) - 1 and not any(ch in parts[k] for ch in "*?[\\"):
        k += 1
    prefix = "/".join(parts[:k]) or ("/" if pattern[:1] == "/" else ".")
    if prefix == "." or (prefix[:1] != "/" and ".." not in parts[:k] and not any(
            os.path.islink(os.path.join(here, *parts[:j + 1])) for j in range(k))):
        d = os.path.join(here, prefix)  # (no link on the way: where `here` is, not /proc)
    else:
        d = resolve(prefix, here, shell=True)
        if d.startswith("/proc/") and environ_path(d, True):
            return True
    part = parts[k]
    if not glob or not part or "\\" in part or not any(ch in part for ch in "*?["):
        return False
    try:
        entries = [e.name for e in os.scandir(d) if e.is_symlink()]
    except OSError:
        return False
    for name in entries:  # (the links the first part with a glob could be)
        if fnmatchcase(name, part) and (name[0] != "." or part[0] == "."):
            full = resolve(os.path.join(prefix, name), here, shell=True)
            if full.startswith(("/proc/", "/dev/")) and environ_path(full, k < len(parts) - 1):
                return True
    return False


def _braces(v: str) -> list[str] | None:
    """The words bash makes of `v` by its simple brace groups (`{src,build}` -> `src`,
    `build`; `{e,}l` -> `el`, `l`), or None for what this does not follow (nested groups,
    sequences `{1..3}`, a backslash, more than 64 words)."""
    if "\\" in v or ".." in v:
        return None
    out = [""]
    i = 0
    while i < len(v):
        if v[i] == "{":
            j = v.find("}", i)
            body = v[i + 1:j] if j > 0 else ""
            if j < 0 or "{" in body or "," not in body:
                return None
            out = [o + b for o in out for b in body.split(",")]
            if len(out) > 64:
                return None
            i = j + 1
        else:
            out = [o + v[i] for o in out]
            i += 1
    return out


_readlink, _access, _F_OK = os.readlink, os.access, os.F_OK
#: whether `os.access` can leave a link at the end of a path unfollowed (Linux, macOS)
_ACCESS_NOFOLLOW = os.access in os.supports_follow_symlinks


def _given_root(analysis: ShellAnalysis, start: str, resolve: Resolve) -> str | None:
    """In a line that reads trees, a value the line gives other than as an argument (`D=/`,
    `for D in /`, `read D <<< /`, `D=link-to-slash`) naming `/` or a process's directory: a
    later `$D` is it."""
    left: dict[str, int] = {}
    for w in analysis.words:
        v = w.value
        if w.literal and v and v[0] != "-":
            left[v] = left.get(v, 0) + 1
    if not left:
        return None
    for c in analysis.commands:
        for a in c.argv:
            if a.value in left:
                left[a.value] -= 1
    for v, n in left.items():
        if n > 0:
            full = os.path.normpath(os.path.join(start, v))
            if environ_path(full, True) or environ_path(resolve(v, start, shell=True), True):
                return (f"`{v}`, a value the line gives, could search a process environment "
                        "(/proc/*/environ)")
    return None


#: the programs `pattern_args` may find a pattern among the arguments of (`git grep`)
_PATTERNED = frozenset({*PATTERN_SEARCHERS, "git"})


#: programs that read trees or run code that can
_READS_TREES = TREE_READERS | INTERPRETERS


def _follow(cmd: Command, here: str | None, source: str) -> str | None:
    """The directory after `cd DIR` or `pushd DIR` (one literal argument) from `here`; None:
    unknown (any other change, or `$CDPATH` set by the line itself; one from the environment,
    which the agent does not choose, is not followed by the analysis either way)."""
    args = cmd.args
    if here is None or cmd.name == "popd" or len(args) != 1 or not args[0].literal or \
            args[0].value in ("", "-") or (cdpath_applies(args[0].value) and "CDPATH" in source):
        return None
    return os.path.normpath(os.path.join(here, args[0].value))


def cd_checker(ctx: GateContext, resolve: Resolve, start: str
                ) -> Callable[[Command], str | None]:
    """A `cd` checker that follows the directory changes of the line in order."""
    walk = DirWalk(start)

    def check(c: Command) -> str | None:
        why = cd_problem(c, ctx, resolve, walk.cwd)
        if why is None:
            walk.follow(c)
        return why

    return check


def cd_problem(c: Command, ctx: GateContext, resolve: Resolve, cwd: str) -> str | None:
    args = c.args
    if len(args) != 1 or not args[0].literal or args[0].value in ("-", ""):
        return "`cd` needs one literal directory inside the project"
    target = args[0].value
    full = resolve(target, cwd, shell=True)
    rel = relative_to_root(full, ctx.project_root)
    if rel is None:
        return f"`cd {target}` leaves the project"
    why = sensitive(rel, full, ctx)
    return f"`cd {target}`: {why}" if why else None


def redirect_problems(analysis: ShellAnalysis, ctx: GateContext, resolve: Resolve,
                      cwds: list[str], files: list[str] | None = None) -> list[str]:
    """Output redirects (and files options say a command writes) may write inside the project
    only, never into git metadata, Claude settings, the store or a protected file. `files`:
    a list to add the files they write to, as check 8 names them (project-relative, else
    absolute), in order."""
    out: list[str] = []
    root = ctx_facts(ctx).real_root  # (`relative_to_root(full, ctx.project_root)`)
    for r in analysis.redirects:
        if not r.output or r.target is None:
            continue
        t = r.target
        if not t.literal:
            out.append(f"`{r.op} {t.text}`: the target is not a literal path")
            continue
        v = t.value
        if v in HARMLESS_DEVICES:
            continue
        refused = False
        for d in cwds:
            full = resolve(v, d, shell=True)
            rel = relative_to_real(full, root)
            if files is not None:
                f = rel if rel is not None else _outside_key(v, ctx, d)
                if f not in files:
                    files.append(f)
            if refused:
                continue  # (one problem per redirect: the rest only names its files)
            if rel is None:
                if in_temp_dir(full) and not (full + os.sep).startswith(
                        ctx_facts(ctx).home_claude_prefix):
                    continue
                out.append(f"`{r.op} {v}` writes outside the project and the temp directory")
                refused = True
                continue
            why = sensitive(rel, full, ctx) or holds_protected(full, ctx)
            if why:
                out.append(f"`{r.op} {v}`: {why}")
                refused = True
    return list(dict.fromkeys(out)) if out else out


def in_temp_dir(full: str) -> bool:
    """Whether resolved `full` lies in the system's temp directory (`$TMPDIR`, else `/tmp`),
    where output redirects may write as inside the project (DESIGN section 4)."""
    return any(full.startswith(d + os.sep) for d in _temp_dirs(os.environ.get("TMPDIR")))


@lru_cache(maxsize=8)
def _temp_dirs(tmpdir: str | None) -> tuple[str, ...]:
    dirs = {os.path.realpath(tmpdir)} if tmpdir and os.path.isabs(tmpdir) else set()
    dirs.add(os.path.realpath("/tmp"))
    return tuple(d.rstrip(os.sep) for d in dirs if d not in (os.sep, ""))


def _outside_key(path: str, ctx: GateContext, cwd: str) -> str:
    """How check 8 names a file a shell line writes outside the project: absolute (inside:
    project-relative)."""
    return os.path.normpath(os.path.join(cwd or ctx.project_root, path))


def worktree_changes(analysis: ShellAnalysis, ctx: GateContext, resolve: Resolve,
                     cwds: list[str]) -> list[str]:
    """The files the copies, moves, removals and extractions of a line change, as check 8
    names them (a name known only at run time is `?`: it counts as one more file)."""
    if not changes_worktree(analysis, ctx.store_dir):
        return []
    from .protect.worktree import changed_files

    return [("? (a name known only at run time)" if full == "?" else
             relative_to_root(full, ctx.project_root) or full)
            for full in changed_files(analysis, resolve, cwds)]
