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

# (what the walk and the checks use is kept in `spec`, which every shell decision loads
# already: a module of its own would cost the hook a file to read)
from .spec import (
    _WATCHED,
    ABBREVIATING,
    AMBIGUOUS,
    ANY_PROGRAM_OUTPUTS,
    EXACT,
    OPTIONS_FIRST,
    full_option,
    own_options,
    respell,
    spell,
    spell_argv,
    watched,
)

__all__ = ["ABBREVIATING", "AMBIGUOUS", "EXACT", "OPTIONS_FIRST", "_WATCHED", "full_option",
           "own_options", "respell", "spell", "spell_argv", "watched", "watched_text"]


def _watched(name: str) -> tuple[str, ...]:
    """The long options the rules of program `name` look for besides `ANY_PROGRAM_OUTPUTS`, in
    order. An entry's tables say them as data; a rule written as code names them in its code,
    read here from the code object (its constants, and the module-level values and functions
    it uses), so that a rule that learns an option is never behind."""
    from .. import channels
    from ..protect import line as protect_line
    from ..shell import wrappers as wr
    from . import _entry, worktree
    from .text import GIT_TREE_OPTIONS, PATTERN_SEARCHERS

    sources: list[object] = []
    entry = _entry(name)
    if entry is not None:
        sources += [entry.code_options, entry.long_output_options, entry.value_options,
                    [t for words, _, _ in entry.subcommands for t in words.split()],
                    entry.risks, entry.writes, entry.dumps_env]
    if name == "git":
        sources += [worktree.git_subcommand, worktree.git_effect,
                    PATTERN_SEARCHERS["git grep"], GIT_TREE_OPTIONS]
    if name in ("tar", "gtar", "bsdtar", "cpio"):
        sources.append(worktree.extract_target)
    if name in ("gzip", "xz", "bzip2", "zstd"):
        sources.append(worktree.decompressed)
    if name in worktree.COPIERS:
        sources.append(worktree.copy_operands)
    if name in protect_line._RECURSIVE_BY_OPTION:
        sources.append(protect_line._recursive)
    if name in PATTERN_SEARCHERS:
        sources.append(PATTERN_SEARCHERS[name])
    if name == "env":
        sources.append(channels._pinned)
    handler = wr._HANDLERS.get(name)
    if handler is not None:
        sources += [handler, wr._RUNNER_WITH_ARG.get(name, ())]
    own: set[str] = set()
    seen: set[int] = set()
    for src in sources:
        _collect(src, own, seen)
    return tuple(sorted(own - ANY_PROGRAM_OUTPUTS))


def _collect(src: object, out: set[str], seen: set[int]) -> None:
    """Add to `out` every long option (`--name`, without `=...`) `src` holds: a string, a
    collection of them (a dict's keys and values), or a function's code (its constants, the
    code nested in it, and the module-level values its code names, functions of the same
    module followed in turn)."""
    if isinstance(src, str):
        if src[:2] == "--" and len(src) > 2:
            out.add(src.split("=", 1)[0])
        return
    if id(src) in seen:
        return
    seen.add(id(src))
    if isinstance(src, dict):
        src = [*src, *src.values()]
    if isinstance(src, (frozenset, set, tuple, list)):
        for v in src:
            if type(v) is str:
                if v[:2] == "--" and len(v) > 2:
                    out.add(v.split("=", 1)[0])
            else:
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


def watched_text() -> str:
    """What `_WATCHED` holds when it is current: `_watched` of each program of
    `ABBREVIATING`, a program a line (`name: --opt ...`, wrapped)."""
    out = [""]
    for name in sorted(ABBREVIATING):
        row = name + ":"
        for o in _watched(name):
            if len(row) + len(o) + 1 > 95:
                out.append(row)
                row = "   "
            row += " " + o
        out.append(row)
    return "\n".join([*out, ""])


if __name__ == "__main__":  # pragma: no cover
    from pathlib import Path

    here = Path(__file__).with_name("spec.py")  # (where `_WATCHED` is kept)
    text = here.read_text()
    start = text.index('_WATCHED = """') + len('_WATCHED = """')
    here.write_text(text[:start] + watched_text() + text[text.index('"""', start):])
