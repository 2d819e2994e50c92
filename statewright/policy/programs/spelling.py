"""Long options written short.

GNU getopt_long and argp, git's parse-options, Python's optparse and argparse (unless told
otherwise), npm's nopt and less take any unambiguous prefix of a long option for the option:
`tar --checkpoint-act=exec=CMD` is `--checkpoint-action`, `env --chd=DIR` is `--chdir`,
`sort --outp=F` is `--output`, `git reset --har` is `--hard`. Every rule of statewright looks
for an option by its full name, so the walk writes each such word as the option it stands for
(`spell`) before any rule sees the command: one reading for the entries of `programs`, the
wrappers of `shell.wrappers` and self-protection alike.

`WATCHED` says, per program that takes abbreviations, where the long options its rules look
for are kept (the entries' tables, the wrappers' and self-protection's sets, and the few
options a rule names in its code); `EXACT` lists the program's own options that are a proper
prefix of one of them: a word that is exactly an option is never an abbreviation
(`tar --checkpoint=10` is not `--checkpoint-action`). A word that is neither, and a proper
prefix of a watched option, is read as that option; when it is a prefix of several, the
program would refuse it as ambiguous, and it is read as the first of them in order (a line
that does not run loses nothing by a refusal). `tests/policy/test_spelling.py` checks that
every long option a rule of these programs names in its code is watched.

Programs whose parser takes no abbreviation (pytest, curl, rg, fd, cargo, go, docker, kubectl,
gh, node, uv) are not listed: there `--outp` is an error, not `--output`.
"""

from __future__ import annotations

from ...lean import TYPE_CHECKING
from . import program_name

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Iterable

    from ..shell.records import Word

#: per program name, its own long options that are a proper prefix of one it is watched for
#: (`tar --list` is not `--listed-incremental`): found by reading every long option in each
#: program's `--help` (`git CMD --git-completion-helper` and `-h` for git's commands) and
#: checking them against `watched`; see docs/design-decisions.md, "Long options written short"
_TAR_EXACT = frozenset({"--checkpoint", "--list"})
_COPIER_EXACT = frozenset({"--backup"})
_GREP_EXACT = frozenset({"--binary"})
_PIP_EXACT = frozenset({"--log", "--pre", "--report"})
EXACT: dict[str, frozenset[str]] = {
    "git": frozenset({"--base", "--binary", "--cache", "--cc", "--get-url", "--group", "--head",
                      "--header", "--int", "--log", "--name", "--or", "--path", "--remove",
                      "--replace", "--repo", "--stage", "--temp", "--thread", "--to"}),
    **dict.fromkeys(("tar", "gtar", "bsdtar"), _TAR_EXACT),
    **dict.fromkeys(("cp", "mv", "install", "ln", "rsync"), _COPIER_EXACT),
    **dict.fromkeys(("grep", "egrep", "fgrep"), _GREP_EXACT),
    **dict.fromkeys(("pip", "pip3"), _PIP_EXACT),
    **dict.fromkeys(("npm", "pnpm", "npx"), frozenset({"--global"})),
    "nsenter": frozenset({"--target"}),
    "wget": frozenset({"--base"}),
}

#: the programs whose option parser takes an unambiguous prefix of a long option (GNU
#: getopt_long or argp, git's parse-options, optparse, argparse, nopt, less's own)
ABBREVIATING = frozenset({
    "git", "tar", "gtar", "bsdtar", "cpio", "gzip", "xz", "bzip2", "zstd", "cp", "mv",
    "install", "ln", "rsync", "rm", "chmod", "chown", "chgrp", "shred", "grep", "egrep",
    "fgrep", "make", "gmake", "pip", "pip3", "sed", "gsed", "awk", "gawk", "env", "sudo",
    "su", "xargs", "flock", "time", "nice", "ionice", "timeout", "watch", "script", "runuser",
    "npm", "pnpm", "npx", "pipx", "pdm", "wget", "less", "more", "man", "sort", "tee", "aws",
    "unshare", "nsenter", "systemd-run", "strace", "ltrace", "gdb", "xvfb-run", "setsid",
})

#: of those, the wrappers whose options end at the first word that is no option (the words
#: after it are their command's, spelled as that command's)
OPTIONS_FIRST = frozenset({
    "env", "sudo", "xargs", "flock", "time", "nice", "ionice", "timeout", "watch", "runuser",
    "unshare", "nsenter", "systemd-run", "strace", "ltrace", "gdb", "xvfb-run", "setsid",
})

_TABLE: dict[str, tuple[str, ...]] = {}
_SETS: dict[str, frozenset[str]] = {}


def _watched() -> dict[str, tuple[str, ...]]:
    """Program name -> the long options its rules look for, in the order an abbreviation
    is matched against them: its own in order, then `ANY_PROGRAM_OUTPUTS` (built on first
    use: most lines
    name no program that needs it). An entry's tables say them as data; a rule written as code
    names them in its code, read here from the code object (its constants, and the module-level
    values and functions it uses), so that a rule that learns an option is never behind."""
    from .. import channels
    from ..protect import line as protect_line
    from ..shell import wrappers as wr
    from . import PROGRAMS, worktree
    from .text import GIT_TREE_OPTIONS, PATTERN_SEARCHERS
    from .writers import ANY_PROGRAM_OUTPUTS

    by_name: dict[str, set[str]] = {name: set() for name in ABBREVIATING}

    def add(names: Iterable[str], *sources: object) -> None:
        found: set[str] = set()
        for src in sources:
            _collect(src, found, set())
        for name in names:
            if name in by_name:
                by_name[name].update(found)

    for entry in PROGRAMS:
        subs = [t for words, _, _ in entry.subcommands for t in words.split()]
        add(entry.names, entry.code_options, entry.long_output_options, entry.value_options,
            subs, entry.risks, entry.writes, entry.dumps_env)
    add(("git",), worktree.git_subcommand, worktree.git_effect, PATTERN_SEARCHERS["git grep"],
        GIT_TREE_OPTIONS)
    add(("tar", "gtar", "bsdtar", "cpio"), worktree.extract_target)
    add(("gzip", "xz", "bzip2", "zstd"), worktree.decompressed)
    add(sorted(worktree.COPIERS), worktree.copy_operands)
    add(sorted(protect_line._RECURSIVE_BY_OPTION), protect_line._recursive)
    add(("grep", "egrep", "fgrep"), PATTERN_SEARCHERS["grep"])
    add(("env",), channels._pinned)
    for name in ABBREVIATING:
        handler = wr._HANDLERS.get(name)
        if handler is not None:
            add((name,), handler, wr._RUNNER_WITH_ARG.get(name, ()))
    # (the options any program is taken to write with come after its own: `cp --target=DIR`
    # is `--target-directory`, not `--target-dir`)
    return {name: (*sorted(opts), *sorted(ANY_PROGRAM_OUTPUTS - opts))
            for name, opts in by_name.items()}


def _collect(src: object, out: set[str], seen: set[int]) -> None:
    """Add to `out` every long option (`--name`, without `=...`) `src` holds: a string, a
    collection of them (a dict's keys and values), or a function's code (its constants, the
    code nested in it, and the module-level values its code names, functions of the same
    module followed in turn)."""
    if id(src) in seen:
        return
    seen.add(id(src))
    if isinstance(src, str):
        if src[:2] == "--" and len(src) > 2:
            out.add(src.split("=", 1)[0])
    elif isinstance(src, dict):
        for k, v in src.items():
            _collect(k, out, seen)
            _collect(v, out, seen)
    elif isinstance(src, (frozenset, set, tuple, list)):
        for v in src:
            _collect(v, out, seen)
    elif callable(src) and hasattr(src, "__code__"):
        module = getattr(src, "__module__", None)
        names = getattr(src, "__globals__", {})
        todo = [src.__code__]
        while todo:
            code = todo.pop()
            for c in code.co_consts:
                if hasattr(c, "co_consts"):
                    todo.append(c)
                else:
                    _collect(c, out, seen)
            for n in code.co_names:
                v = names.get(n)
                if isinstance(v, (str, dict, frozenset, set, tuple, list)) or (
                        callable(v) and getattr(v, "__module__", None) == module):
                    _collect(v, out, seen)


def watched(name: str) -> tuple[str, ...]:
    """The long options statewright looks for in `name`'s command lines, if `name` (a program
    name, not a path) takes abbreviated long options (empty otherwise), in matching order."""
    if not _TABLE:
        _TABLE.update(_watched())
        _SETS.update((k, frozenset(v)) for k, v in _TABLE.items())
    return _TABLE.get(name, ())


def full_option(name: str, word: str) -> str | None:
    """The long option `word` (`--chd`, `--chd=DIR`'s option part) abbreviates for program
    `name`, or None when it abbreviates none of those watched (or is an option itself)."""
    opts = watched(name)
    if not opts or word in _SETS[name] or word in EXACT.get(name, ()):
        return None
    for o in opts:
        if o.startswith(word):
            return o
    return None


def spell_argv(name: str, argv: tuple[Word, ...]) -> tuple[Word, ...] | None:
    """A command's words (`argv`, its name `name` a program name or a path) with its
    abbreviated long options written out (`spell`), or None when it has none."""
    prog = program_name(name) if "/" in name else name
    if prog not in ABBREVIATING:
        return None
    spelled = spell(prog, argv[1:], prog in OPTIONS_FIRST)
    return None if spelled is None else (argv[0], *spelled)


def respell(words: list[Word], old: tuple[Word, ...], new: tuple[Word, ...]
            ) -> tuple[Word, ...]:
    """Put each word of `new` that replaces one of `old` in its place in `words` (the line's
    words, to which `old`'s were added last): every check reads a word as its command does.
    Returns `new`."""
    end = len(words)
    for o, n in zip(reversed(old), reversed(new), strict=True):
        if o is not n:
            for k in range(end - 1, -1, -1):
                if words[k] is o:
                    words[k] = n
                    end = k
                    break
    return new


def spell(name: str, args: tuple[Word, ...], options_first: bool = False
          ) -> tuple[Word, ...] | None:
    """`args` of program `name` with each abbreviated long option written out (its text kept as
    written), or None when none is abbreviated. Options end at `--`, and with `options_first`
    (a wrapper: its command's words are the command's) at the first word that is no option."""
    if name not in ABBREVIATING:
        return None
    out: list[Word] | None = None
    for i, a in enumerate(args):
        v = a.value
        if v[:2] != "--":
            if options_first and v[:1] != "-":
                break
            continue
        if v == "--":
            break
        opt, eq, rest = v.partition("=")
        full = full_option(name, opt)
        if full is None:
            continue
        respelled = _respelled(a, opt, full + eq + rest)
        if respelled is None:
            continue
        if out is None:
            out = list(args)
        out[i] = respelled
    return tuple(out) if out is not None else None


def _respelled(a: Word, opt: str, value: str) -> Word | None:
    """Word `a` with its option part `opt` written as `value`'s; None when that part is not
    fixed text (`--ch$X=DIR` could be any option)."""
    from ..shell.records import new_word
    from ..shell.words import escape_pattern

    if a.literal:
        return new_word(a.text, value, escape_pattern(value), True)
    tail = a.pattern[len(opt):]
    if not a.pattern.startswith(opt) or tail[:1] not in ("", "="):
        return None
    return new_word(a.text, value, escape_pattern(value.partition("=")[0]) + tail, False,
                    a.dynamic, a.glob, a.tilde)
