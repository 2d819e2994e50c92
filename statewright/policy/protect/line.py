"""Self-protection for a shell line: every way it could touch the store or a protected file
(by name, by a glob or an expansion that could name them, by a command acting on a whole tree
that holds them, by an output redirect), plus the human-only CLI (`cli`)."""

from __future__ import annotations

import os

from ...lean import TYPE_CHECKING, fnmatchcase, lru_cache
from ...names import STORE_FILE
from ..paths import relative_to_root
from ..procfs import process_link
from ..programs import is_python
from ..programs import worktree as wt
from ..programs.spec import AMBIGUOUS
from ..shell.cwds import line_cwds
from ..types import line_memo, word_texts
from .cli import basename, cli_violations, loose_mention
from .files import host_config_problem
from .store import (
    ctx_facts,
    inside,
    is_protected,
    markers_of,
    program_paths,
    protected_relative,
    store_markers,
)

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from ..paths import Resolve
    from ..shell import Command, ShellAnalysis, Word

#: commands that only read the files they are given
READ_ONLY = {"cat", "less", "more", "head", "tail", "grep", "egrep", "fgrep", "rg", "wc", "ls",
             "diff", "cmp", "file", "stat", "md5sum", "sha256sum", "sha1sum", "jq", "bat",
             "git", "echo", "printf", "test", "[", "realpath", "readlink", "basename",
             "dirname", "nl", "sort", "uniq", "cut", "tr", "column", "hexdump", "xxd", "od",
             "strings", "python", "python3", "node", "pytest", "npm", "statewright", "cd",
             "pushd", "popd", "pwd"}
#: commands that act on whole trees (or move/link them) when given a directory
_TREE_CMDS = {"rm", "mv", "cp", "rsync", "tar", "zip", "chmod", "chown", "chgrp", "ln",
              "shred", "scp", "rmdir", "install", "truncate", "dd", "unlink", "srm", "wipe",
              "find", "git", "setfacl", "chattr", "mount", "bsdtar", "7z", "cpio", "pax",
              "sqlite3", "rclone", "trash", "gio", "busybox"}


#: commands `protect.worktree` judges by their effect on the worktree
_WORKTREE_NAMES = frozenset({"git", "tar", "bsdtar", "gtar", "unzip", "7z", "7za", "7zr",
                             "cpio", "gzip", "xz", "bzip2", "zstd", *wt.COPIERS,
                             *wt.DECOMPRESSORS})


def changes_worktree(analysis: ShellAnalysis, store_dir: str) -> bool:
    """Whether the line copies, moves, links, removes or decompresses files (they count as
    changed files, check 8); found by the static scan (`_static_violations`), kept per line."""
    return _static_by_line(analysis, store_dir)[2][1]


def _worktree_effect(name: str, vals: list[str]) -> tuple[bool, bool]:
    """For a command named `name` (in `_WORKTREE_NAMES` or `programs.worktree.REMOVERS`) with
    arguments `vals`: (whether it could change the worktree as `protect.worktree` judges
    (`git clean -f`, a copy with a destination, an extraction, ...), whether it copies,
    moves, links, removes or decompresses files)."""
    if name == "git":
        return wt.git_effect(vals, _any_path) is not None, False
    if name in wt.COPIERS:
        return (True, True) if wt.copy_operands(name, vals)[1] is not None else (False, False)
    if name in wt.REMOVERS:
        return False, True
    judged = counted = False
    if wt.extract_target(name, vals)[0]:
        judged = True
    if wt.decompressed(name, vals):
        judged = counted = True
    return judged, counted


def _any_path(word: str) -> bool:
    """For `git_effect` judging what a line could do: any word could name a path."""
    return True


def _word_could_name(w: Word, names: tuple[str, ...],
                     firsts: frozenset[str] | None = None) -> bool:
    """Could this word (glob or partly dynamic) expand to a path with a component in `names`?
    (`firsts`: `_first_letters(names)`, when the caller has it.)"""
    if not (w.glob or w.dynamic):
        return False
    if firsts is None:
        firsts = _first_letters(names)
    for comp in w.pattern.split("/"):
        if not comp.strip("*"):
            continue  # (empty, or stars only)
        low = comp.lower()
        if comp[0] not in firsts and low[0] not in firsts:
            # (a pattern that starts with neither a wildcard nor the first letter of a name,
            # in either case, matches none: the usual word is ruled out without matching it)
            continue
        for n in names:
            if fnmatchcase(n, comp) or fnmatchcase(n.lower(), low):
                return True
    return False


@lru_cache(maxsize=64)
def _first_letters(names: tuple[str, ...]) -> frozenset[str]:
    """The wildcards that may start a pattern, and the first letter of each of `names` and of
    its lower-case form."""
    return frozenset({"*", "?", "["} | {n[:1] for n in names} | {n.lower()[:1] for n in names})


@lru_cache(maxsize=64)
def _markers(store_dir: str) -> tuple[str, ...]:
    """The names that mark the store in a path: its own and `STORE_FILE`."""
    return (*store_markers(store_dir), STORE_FILE)


def _is_ancestor_arg(w: Word, ctx: Any, cwd: str) -> bool:
    if w.tilde or w.value.startswith("~"):
        return True
    if not w.literal:
        return w.pattern in ("*", "/*") and w.dynamic  # a whole-word variable could be `.`
    full = os.path.normpath(os.path.join(cwd, w.value))
    store = os.path.normpath(ctx.store_dir)
    return inside(store, full)


#: commands made recursive by an option (`rm -r`, `cp -a`)
_RECURSIVE_BY_OPTION = frozenset({"rm", "cp", "chmod", "chown", "chgrp", "setfacl", "scp", "srm",
                                  "shred", "trash"})


def _recursive(c: Command, vals: list[str]) -> bool:
    """Whether `c` (its arguments' values: `vals`) acts on whole trees."""
    n = c.program
    if n in _RECURSIVE_BY_OPTION:
        return any(v in ("--recursive", "-R") or (v.startswith("-") and not v.startswith("--")
                                                    and ("r" in v or "R" in v or "a" in v))
                   for v in vals)
    if n == "find":
        return any(v in ("-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0",
                         "-fprintf", "-fls") for v in vals)
    if n == "git":
        return "clean" in vals or "rm" in vals or ("stash" in vals and "-a" in vals)
    return n in _TREE_CMDS


def _static_violations(analysis: ShellAnalysis, store_dir: str
                       ) -> tuple[tuple[str, ...], tuple[Any, ...], tuple[bool, bool],
                                  tuple[str, ...]]:
    """What self-protection can tell from the text alone: (reasons, commands whose arguments
    need the file system or the working directory checked, with their facts, what the line
    does to the worktree: `_worktree_effect` of all its commands, and the reasons among the
    first that are only mentions of the store in the text: what the kernel binds for a
    sandboxed line, `shell_violations(kernel=True)`)."""
    out: list[str] = []
    mentions: list[str] = []
    rx = markers_of(store_dir)
    markers = _markers(store_dir)
    words = analysis.words
    values, _, odd = word_texts(analysis)
    # (the usual line: neither the line nor a word's value names the store, found by one
    # search of them all)
    named = rx.any_of([analysis.source, values])
    if named and rx.search(analysis.source):
        mentions.append("the command names statewright's store")
    elif analysis.problems:
        tok = loose_mention(analysis.source, markers)
        if tok is not None:
            mentions.append(f"`{tok}` could name statewright's store in a line that cannot be "
                            f"fully analysed ({analysis.problems[0]})")
    named = named and bool(words) and rx.search(values)
    firsts = _first_letters(markers)
    # (no word's value names the store: only the words not fixed text, `odd`, could)
    for w in words if named else odd:
        if named and rx.search(w.value):
            mentions.append(f"`{w.text}` names statewright's store")
        elif (w.glob or w.dynamic) and _word_could_name(w, markers, firsts):
            mentions.append(f"`{w.text}` could expand to statewright's store")
    todo: list[Any] = []
    judged = counted = False
    for c in analysis.commands:
        if c.stdin_text and rx.search(c.stdin_text):
            mentions.append(f"`{c.name}` is fed text naming statewright's store")
        if not c.name_literal:
            continue
        name = c.program
        if c.name in _QUIET:
            # reads what it is given, never a whole tree: nothing below applies (by its bare
            # name only: `./cat` could be a file the agent wrote)
            continue
        args = c.args
        vals = [a.value for a in args]
        if name in _WORKTREE_NAMES or name in wt.REMOVERS:
            j, k = _worktree_effect(name, vals)
            judged, counted = judged or j, counted or k
        if name == "git" and "clean" in vals and any(
                v.startswith("-") and not v.startswith("--") and ("x" in v or "X" in v)
                for v in vals):
            out.append("`git clean -x` would delete statewright's store")
        recursive = _recursive(c, vals)
        find_here = name == "find" and recursive and (
            not args or all(v.startswith(("-", "(", "!")) for v in vals[:1]))
        # the arguments worth a look: not options; for read-only commands only when the
        # command acts on whole trees
        writes = c.name not in READ_ONLY  # (a path may be any program: it may write)
        check: tuple[Word, ...] = ()
        if recursive or writes or name == "ln":
            check = tuple(a for a in args if not (a.literal and a.value.startswith("-")))
        if check or find_here:
            todo.append((c, recursive, writes, check, find_here))
    return (tuple(dict.fromkeys(mentions + out)), tuple(todo), (judged, counted),
            tuple(dict.fromkeys(mentions)))


def shell_violations(analysis: ShellAnalysis, ctx: Any, resolve: Resolve, cwd: str | None,
                     kernel: bool = False) -> list[str]:
    """Self-protection for a shell line: every reason it could touch the store or a protected
    file, or run statewright's human-only CLI.

    `kernel`: the line runs under the kernel sandbox (`policy.confine`), which hides the store
    from every process of the line and keeps the protected files read-only. Then the rules that
    could only guess from the text are left to it: mentions of the store (a commit message, a
    grep pattern, an app's own `data/state.db`), globs and computed names that could reach it,
    and trees walked from the project's top (`find . -name '*.pyc' -delete`). What the analysis
    knows exactly stays, as an early and explained refusal: a word that resolves into the
    store, protected paths written, linked, moved or taken away by what a program is known to
    do (`git clean -x`, `git stash -u`, `python3 -c` naming a workflow), the human-only CLI."""
    cwd = cwd or ctx.project_root
    static, todo, (changes, _), mentions = _static_by_line(analysis, ctx.store_dir)
    if kernel:
        out = [p for p in static if p not in mentions]
        out += _words_in_store(analysis, ctx, resolve, cwd)
    else:
        out = list(static)
    if analysis.problems:  # (code the analysis cannot see, `echo 'rm flow.json' | sh`)
        out += _unseen_mentions(analysis, ctx)
        # an option that is not known to be one option (`git clean --for`: `--force` or
        # `--format`?) hides what the command does to the worktree: refused in every state
        out += [p for p in analysis.problems if AMBIGUOUS in p]
    out += _inline_code_mentions(analysis, ctx)
    needs_fs = todo or analysis.redirects
    if needs_fs:
        fx = ctx_facts(ctx)  # (`protected_paths(ctx)`, `real_store(ctx.store_dir)`)
        protected, store = fx.protected, fx.real_store
        cwds, lost = line_dirs(analysis, cwd)
    for c, recursive, writes, check, find_here in todo:
        name = c.program
        if find_here and not kernel and inside(store, os.path.normpath(cwd)):
            out.append("`find` with an action from above the store would reach it")
        for a in check:
            if recursive and not kernel and any(_is_ancestor_arg(a, ctx, d) for d in cwds):
                out.append(f"`{name} {a.text}` would reach statewright's store")
            if not a.literal:
                if writes:
                    why = _unknown_written(name, a, analysis, ctx.project_root, cwds, lost,
                                           protected)
                    if why:
                        out.append(why)
                continue
            if not a.value:
                continue
            if writes and a.value[:1] == "/" and process_link(os.path.normpath(a.value)):
                out.append(f"`{name} {a.value}` goes through a process's link (its working "
                           "directory, root or open files): it could be any file, "
                           "statewright's among them")
                continue
            if writes:
                for d in cwds:
                    why = _protected_arg(c, a, recursive, ctx, resolve(a.value, d, shell=True),
                                         protected, kernel)
                    if why:
                        out.append(why)
                        break
                if lost and basename(a.value) in _protected_names(protected):
                    out.append(f"`{name}` would change `{a.value}`, which may be a file "
                               "statewright is enforcing (the line changes directory)")
            if name == "ln":
                full = resolve(a.value, cwd, shell=True)
                if inside(full, store) or full in protected:
                    out.append(f"`ln {a.value}` would link to statewright's files")
    if changes:  # (a command could change the worktree as `protect.worktree` judges)
        from .worktree import worktree_violations

        out += worktree_violations(analysis, ctx, resolve, line_dirs(analysis, cwd)[0], kernel)
    out += cli_violations(analysis, cwd)
    if analysis.redirects:
        out += _redirect_violations(analysis, ctx, resolve, cwds, lost)
    return list(dict.fromkeys(out))


def _redirect_violations(analysis: ShellAnalysis, ctx: Any, resolve: Resolve, cwds: list[str],
                         lost: bool) -> list[str]:
    """Output redirects that could write the store or a protected file."""
    fx = ctx_facts(ctx)
    protected, folded, store = fx.protected, fx.folded, fx.real_store
    out: list[str] = []
    for r in analysis.redirects:
        if r.output and r.target is not None and not r.target.literal:
            # (bash expands a glob in a redirect's target when it names one file)
            hit = _pattern_reaches(r.target, cwds, protected, ctx.project_root)
            if hit:
                out.append(f"`{r.op} {r.target.text}` could write `{hit}`, which statewright is "
                           "enforcing")
        if r.output and r.target is not None and r.target.literal:
            for d in cwds:
                full = resolve(r.target.value, d, shell=True)
                if is_protected(full, protected, folded) or inside(full, store) or (
                        r.fd is None and r.op.startswith("-") and inside(store, full)):
                    out.append(f"`{r.op} {r.target.value}` would write a file statewright is "
                               "enforcing")
                    break
            if lost and basename(r.target.value) in _protected_names(protected):
                out.append(f"`{r.op} {r.target.value}` may write a file statewright is "
                           "enforcing (the line changes to a directory the analysis cannot "
                           "know)")
    return out


def _words_in_store(analysis: ShellAnalysis, ctx: Any, resolve: Resolve, cwd: str
                    ) -> list[str]:
    """The literal words of a line that resolve into the store (read or written): refused
    early even where the kernel would hide it (`cat .statewright/state.db`), unlike a word
    that only mentions it (`data/state.db`, a commit message)."""
    fx = ctx_facts(ctx)
    if not fx.markers.search(analysis.source):
        return []
    cwds = line_dirs(analysis, cwd)[0]
    return [f"`{w.text}` is inside statewright's store, which agents may not touch"
            for w in analysis.words
            if w.literal and w.value and fx.markers.search(w.value) and any(
                inside(resolve(w.value, d, shell=True), fx.real_store) for d in cwds)]


def line_dirs(analysis: ShellAnalysis, start: str) -> tuple[list[str], bool]:
    """`shell.cwds.line_cwds(analysis, start)` (not to be changed by the caller): the usual
    line, with no command that changes directory, answered without a walk, and the last answer
    kept (the checks of one decision ask two or three times)."""
    last = _LAST_DIRS[0]
    if last[0] is analysis and last[1] == start:
        return last[2]
    # (`changes_dir`: a `cd`, `pushd`, `popd`, or a wrapper's option that moves its command)
    out = line_cwds(analysis, start) if analysis.changes_dir else ([start], False)
    _LAST_DIRS[0] = (analysis, start, out)  # (one store: a thread never sees half of it)
    return out


#: [(analysis, start, answer)] of the last `line_dirs`
_LAST_DIRS: list[tuple[Any, Any, Any]] = [(None, None, None)]


def _protected_arg(c: Command, a: Word, recursive: bool, ctx: Any, full: str,
                   protected: frozenset[str], kernel: bool = False) -> str | None:
    """Why changing `a` (resolved: `full`) would change a file statewright is enforcing.
    (`kernel`: the line runs sandboxed; a tree walked from the project's top, `find . -delete`,
    is then left to the kernel, which keeps the protected files in it.)"""
    if is_protected(full, protected):
        return f"`{c.name}` would change `{a.value}`, a file statewright is enforcing"
    for d in program_paths():
        if inside(full, d) or (recursive and inside(d, full)):
            return (f"`{c.name}` would change `{a.value}`, part of statewright's installed "
                    "programs or its active-run markers")
    tree = c.program in _TREE_CMDS and c.program != "ln" and (recursive or c.program == "mv")
    rel = relative_to_root(full, ctx.project_root) if tree else None
    why = host_config_problem(full, ctx_facts(ctx), holds=tree and not (kernel and rel == "."))
    if why:
        return f"`{c.name} {a.text}` would change {why}"
    if rel is not None and not (kernel and rel == "."):  # (a walk from the top: the kernel's)
        prefix = "" if rel == "." else rel + "/"
        if any(r and r != "." and r.startswith(prefix)
               for r in protected_relative(ctx.project_root, protected)):
            return f"`{c.name} {a.text}` would change a file statewright is enforcing"
    return None


def _pattern_reaches(w: Word, dirs: list[str], protected: frozenset[str], root: str
                     ) -> str | None:
    """A protected file, or a directory holding one, that a word which is not fixed text (a
    glob `workflows/*`, a brace word `.mcp.js{on,}`, `dir/$f`) could name from one of `dirs`:
    its path below the project root (None: none). The word's pattern (`Word.pattern`: `*` for
    each part the analysis cannot know) is matched in either case. A glob's `*`, `?` and `[...]`
    stay within one path component, as bash's do (`rm *.json` at the root cannot reach
    `.claude/settings.json`); a word with a brace group, a variable or a substitution (whose
    value may hold `/`) or `**` (globstar) is matched against whole paths. Leading dots are not
    spared: `shopt -s dotglob` lets `*` match them. A pattern of nothing but wildcards from a
    variable (`rm "$f"`) names no file in particular and is not judged here: its value is
    unknown (docs/policy.md, what is out of reach)."""
    pattern = w.pattern
    if not pattern or (not w.glob and not pattern.strip("*")):
        return None
    whole = w.dynamic or "{" in w.text or "**" in pattern
    if w.tilde:
        pattern, unknown = _tilde(pattern)
        whole = whole or unknown
    targets = _protected_targets(protected, root)
    fulls = [os.path.normpath(os.path.join(d, pattern)) for d in dirs]
    if whole and pattern[0] == "*":
        fulls.append(pattern)  # (`$D/workflows/*`: the unknown start may be `/abs/path` or `.`)
    for full in fulls:
        low = full.lower()
        if whole:
            for t, rel in targets:
                if fnmatchcase(t, full) or fnmatchcase(t.lower(), low):
                    return rel
            continue
        parts = [_component(c) for c in full.split("/")]
        for t, rel in targets:
            names = t.split("/")
            if len(names) == len(parts) and all(
                    fnmatchcase(n, c) or fnmatchcase(n.lower(), c.lower())
                    for n, c in zip(names, parts, strict=True)):
                return rel
    return None


def _tilde(pattern: str) -> tuple[str, bool]:
    """A pattern starting with bash's tilde (`~/x`, `~user/x`, `~+/x`), expanded as bash does
    (`~+` is the working directory, a relative path here); (the pattern, whether its start is
    unknown: `~-`, an unknown user, then `*`)."""
    head, sep, rest = pattern.partition("/")
    if head == "~+":
        return "." + sep + rest, False
    home = os.path.expanduser(head) if head != "~-" else head
    if home == head or "*" in head:
        return "*" + sep + rest, True
    return home + sep + rest, False


def _component(c: str) -> str:
    """A glob's path component as `fnmatch` reads it: an extended glob (`+(a|b)`, `@(x)`, ...,
    with `shopt -s extglob`) is `*`, as it could match any name."""
    return "*" if "(" in c else c


@lru_cache(maxsize=64)
def _protected_targets(protected: frozenset[str], root: str) -> tuple[tuple[str, str], ...]:
    """(path, path below the root) of every protected file and of every directory between it
    and the project root: a glob that names the directory (`rm -rf work*`, `mv wo* /tmp`,
    `chmod 000 w*`) changes the file too."""
    out: dict[str, str] = {}
    # the project root and the directories above it: a glob naming one (`mv ../pro* /tmp`,
    # `rm -rf /*`) takes every protected file with it
    up = os.path.normpath(root)
    while True:
        out[up] = up + ("" if up.endswith("/") else "/")
        parent = os.path.dirname(up)
        if parent == up:
            break
        up = parent
    for p in sorted(protected):
        rel = relative_to_root(p, root)
        if rel is None or rel == ".":
            continue
        out[p] = rel
        parts = rel.split("/")
        for k in range(1, len(parts)):
            out[os.path.join(root, *parts[:k])] = "/".join(parts[:k]) + "/"
    return tuple(out.items())


def _unknown_written(name: str, a: Word, analysis: ShellAnalysis, root: str, dirs: list[str],
                     lost: bool, protected: frozenset[str]) -> str | None:
    """Why word `a`, not fixed text, of writing command `name` could change a protected file
    (None: it could not, as far as the analysis can tell)."""
    if _could_be_process_link(a.pattern):
        return (f"`{name} {a.text}` could go through a process's link (its working directory, "
                "root or open files): it could be any file, statewright's among them")
    hit = _pattern_reaches(a, dirs, protected, root)
    if hit:
        return f"`{name} {a.text}` could change `{hit}`, which statewright is enforcing"
    if lost and a.pattern.strip("*") and any(fnmatchcase(n, basename(a.pattern).lower())
                                             for n in _protected_names(protected)):
        return (f"`{name} {a.text}` may change a file statewright is enforcing (the line "
                "changes directory)")
    if not a.pattern.strip("*"):
        named = _named_in(analysis.source, protected)
        if named:
            return (f"`{name} {a.text}` could change `{named}`, which the line names and "
                    "statewright is enforcing")
    return None


def _could_be_process_link(pattern: str) -> bool:
    """Whether an absolute pattern could start in /proc or /dev (`/proc/$$/cwd/x`, `/$D/x`),
    where a process's links are (`procfs.process_link`)."""
    if pattern[:1] != "/":
        return False
    first = pattern[1:].split("/", 1)[0]
    return fnmatchcase("proc", first) or fnmatchcase("dev", first)


def _unseen_mentions(analysis: ShellAnalysis, ctx: Any) -> list[str]:
    """A protected file named in a line with code the analysis cannot see (`echo 'rm
    flow.json' | sh`): that code could change it."""
    named = _named_in(analysis.source, ctx_facts(ctx).protected)
    if named is None:
        return []
    return [f"`{named}`, which statewright is enforcing, is named in a line that cannot be "
            f"fully analysed ({analysis.problems[0]})"]


#: interpreters and the options whose value is code they run (`python -c CODE`, `node -e`)
_INLINE_CODE = {
    **dict.fromkeys(("node", "nodejs", "bun"), ("-e", "-p", "--eval", "--print")),
    **dict.fromkeys(("perl",), ("-e", "-E")),
    **dict.fromkeys(("ruby", "lua", "luajit", "Rscript", "osascript", "julia", "groovy"),
                    ("-e",)),
    "php": ("-r",), "deno": ("eval",), "pwsh": ("-c", "-Command"),
    "powershell": ("-c", "-Command"),
}
_PYTHON_CODE = ("-c",)


def _inline_code_mentions(analysis: ShellAnalysis, ctx: Any) -> list[str]:
    """`_inline_code_mention` of each interpreter of the line given code (rarely one)."""
    out = []
    for c in analysis.commands:
        if c.program in _INLINE_CODE or (c.program[:2] == "py" and is_python(c.program)):
            why = _inline_code_mention(c, ctx)
            if why:
                out.append(why)
    return out


def _inline_code_mention(c: Command, ctx: Any) -> str | None:
    """A protected file named in the code an interpreter is given on the line (`python3 -c
    'open("workflows/flow.json", "w")'`): what the code does to it the analysis cannot see."""
    opts = _INLINE_CODE.get(c.program, _PYTHON_CODE)
    letters = {o[1] for o in opts if len(o) == 2}
    vals = [a.value for a in c.args]
    codes = [c.stdin_text] if c.stdin_text else []  # (`python3 - <<EOF`, `<<< CODE`)
    for i, v in enumerate(vals):
        nxt = vals[i + 1] if i + 1 < len(vals) else ""
        if v in opts:
            codes.append(nxt)
        elif v[:2] == "--" and v.partition("=")[0] in opts:
            codes.append(v.partition("=")[2])  # (`--eval=CODE`)
        elif v[:1] == "-" and v[1:2] != "-":
            # (a cluster: `-Ic CODE`, `-le CODE`, `-pe CODE`: each reading taken)
            codes += [v[k + 1:] or nxt for k in range(1, len(v)) if v[k] in letters]
    for code in codes:
        if code:
            protected = ctx_facts(ctx).protected
            named = _named_in(code, protected) or _dir_named_in(code, protected,
                                                                 ctx.project_root)
            if named:
                return (f"the code `{c.name}` is given names `{named}`, a file statewright is "
                        "enforcing or a directory holding one: what the code does to it cannot "
                        "be seen")
    return None


def _named_in(source: str, protected: frozenset[str]) -> str | None:
    """The name of a protected file that the text of the line holds, quotes and backslashes
    taken out (`echo workflows/flow.json | xargs rm`, `f=flo''w.json; rm "$f"`): a writing
    command given a word the analysis cannot know (`<input>`, `"$f"`) may be given it."""
    text = source.lower().replace("'", "").replace('"', "").replace("\\", "")
    for n in sorted(_protected_names(protected)):  # (sorted: the same name every time)
        if n in text:
            return n
    return None


def _dir_named_in(code: str, protected: frozenset[str], root: str) -> str | None:
    """The name of a directory of the project holding a protected file that `code` holds as a
    quoted string (`shutil.rmtree("workflows")`)."""
    for d in sorted(_protected_dirs(protected, root)):
        for q in ('"', "'"):
            if q + d + q in code or q + d + "/" + q in code or q + "./" + d + q in code:
                return d
    return None


@lru_cache(maxsize=64)
def _protected_dirs(protected: frozenset[str], root: str) -> frozenset[str]:
    """The first directory below the project root of each protected file there."""
    out = set()
    for p in protected:
        rel = relative_to_root(p, root)
        if rel is not None and "/" in rel:
            out.add(rel.split("/", 1)[0])
    return frozenset(out)


@lru_cache(maxsize=64)
def _protected_names(protected: frozenset[str]) -> frozenset[str]:
    return frozenset(os.path.basename(p).lower() for p in protected)


#: commands for which `_static_violations` finds nothing to look at: read-only
#: (`READ_ONLY`), never recursive whatever their arguments (`_recursive`), and none that
#: `_worktree_effect` judges
_QUIET = frozenset(READ_ONLY - _TREE_CMDS - _RECURSIVE_BY_OPTION - {"find", "git", "ln"}
                   - _WORKTREE_NAMES - wt.REMOVERS)

#: what the line's text alone tells (kept per line)
_static_by_line = line_memo(_static_violations, with_arg=True)
