"""A state's `read_only` globs, as the analysis enforces them (the early, explained refusal;
the kernel tier binds what the analysis cannot see): which glob names a written path, or could
name a path below a directory that is moved or removed whole.

Globs have the semantics of `file_pattern` (`paths.glob_match`) and are matched against every
project-relative form of a path: resolved (symlinks followed: a link into `tests/` is `tests/`)
and as written (a `tests` that is itself a link is still `tests`), in NFC, and case-folded (the
file system may be case-insensitive), as check 1 compares protected files.
"""

from __future__ import annotations

import os

from ...lean import TYPE_CHECKING
from .. import edits
from ..paths import (
    HARMLESS_DEVICES,
    TooDeep,
    _segment_match,
    compile_glob,
    glob_match,
    relative_to_real,
    tool_paths,
)

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from ..shell import Command
    from ..types import GateContext


def _forms(rel: str) -> tuple[str, ...]:
    """`rel` as the globs are matched against it: as it is, in NFC, case-folded."""
    if rel.isascii():
        low = rel.lower()
        return (rel,) if low == rel else (rel, low)
    import unicodedata

    nfc = unicodedata.normalize("NFC", rel)
    return tuple(dict.fromkeys((rel, nfc, nfc.casefold())))


def _pattern_forms(pattern: str) -> tuple[str, ...]:
    p = pattern.removeprefix("./")
    if p.isascii():
        low = p.lower()
        return (p,) if low == p else (p, low)
    import unicodedata

    nfc = unicodedata.normalize("NFC", p)
    return tuple(dict.fromkeys((p, nfc, nfc.casefold())))


def matching_glob(rel: str, globs: tuple[str, ...]) -> str | None:
    """The first of `globs` that names the project-relative path `rel` (None: none does);
    a function of the text alone, so its verdicts are kept."""
    key = (globs, rel)
    if key in _VERDICTS:
        return _VERDICTS[key]
    found = None
    if rel != ".":
        forms = _forms(rel)
        found = next((g for g in globs for pf in _pattern_forms(g) for f in forms
                      if glob_match(pf, f)), None)
    if len(_VERDICTS) >= 4096:
        _VERDICTS.clear()
    _VERDICTS[key] = found
    return found


#: `matching_glob`'s verdicts: (globs, relative path) -> the glob that names it, or None
_VERDICTS: dict[tuple[tuple[str, ...], str], str | None] = {}


def holding_glob(rel: str, globs: tuple[str, ...]) -> str | None:
    """The first of `globs` that could name a path below the directory `rel` (`.`: the project
    root), which a command moving or removing the whole directory would change."""
    dirs = [()] if rel == "." else [tuple(f.split("/")) for f in _forms(rel)]
    for g in globs:
        for pf in _pattern_forms(g):
            pat = tuple(pf.split("/"))
            for d in dirs:
                if _could_hold(pat, d):
                    return g
    return None


def _could_hold(pat: tuple[str, ...], d: tuple[str, ...]) -> bool:
    """Whether some path strictly below directory `d` (its segments) matches pattern `pat`."""
    while d:
        if not pat:
            return False
        head = pat[0]
        if head == "**":
            return True  # (any number of directories: below `d` too)
        if not _segment_ok(head, d[0]):
            return False
        pat, d = pat[1:], d[1:]
    return bool(pat) and pat != ("",)


def _segment_ok(pat: str, seg: str) -> bool:
    if "[" in pat or "\\" in pat:
        return compile_glob(pat).match(seg) is not None
    return _segment_match(pat.replace("**", "*"), seg)


def relatives(p: str, fulls: list[str], real_root: str, root: str, cwd: str | None
              ) -> list[str]:
    """Every project-relative form of path argument `p`: of each of its resolutions `fulls`
    (symlink-free) and of `p` as written (normalised lexically against `cwd` or the root),
    against the real root and the root as given."""
    out: list[str] = []
    for full in fulls:
        rel = relative_to_real(full, real_root)
        if rel is not None and rel not in out:
            out.append(rel)
    if root == real_root and p in fulls:
        return out  # (an absolute path with no link on the way, the root given as it is)
    lex = os.path.normpath(os.path.join(cwd or root, p))
    if root == real_root and lex in fulls:
        return out  # (the same for a relative path)
    for r in (real_root, os.path.normpath(root)):
        rel = relative_to_real(lex, r)
        if rel is not None and rel not in out:
            out.append(rel)
    return out


#: how many entries below a directory moved or removed whole are looked at for a read-only
#: path; a bigger tree is refused unlooked (fail closed)
WALK_LIMIT = 20_000


def held_glob(rel: str, full: str, globs: tuple[str, ...]) -> tuple[str, str] | None:
    """(glob, what) when the directory `full` (project-relative: `rel`) holds a path one of
    `globs` names now: moving or removing the directory whole would change it. Only globs that
    could name a path below it are looked for (`holding_glob`); a tree of more than
    `WALK_LIMIT` entries counts as holding one."""
    could = tuple(g for g in globs if holding_glob(rel, (g,)) is not None)
    if not could:
        return None
    prefix = "" if rel == "." else rel + "/"
    seen = 0
    stack = [(full, prefix)]
    while stack:
        d, pre = stack.pop()
        try:
            with os.scandir(d) as it:
                entries = list(it)
        except OSError:
            continue
        for e in entries:
            seen += 1
            if seen > WALK_LIMIT:
                return could[0], f"more than {WALK_LIMIT} entries, too many to look through"
            sub = pre + e.name
            g = matching_glob(sub, could)
            if g is not None:
                return g, f"`{sub}`"
            try:
                if e.is_dir(follow_symlinks=False):
                    stack.append((e.path, sub + "/"))
            except OSError:
                continue
    return None


def path_problem(p: str, rels: list[str], globs: tuple[str, ...], whole: str | None = None
                 ) -> str | None:
    """Why writing the path `p` (its project-relative forms: `rels`) is refused in a state
    with `read_only` `globs`; `whole`: the real path of a directory the call moves or removes
    with everything below it."""
    for rel in rels:
        g = matching_glob(rel, globs)
        if g is not None:
            return f"`{p}` is read-only in this state (read_only `{g}`)"
    if whole is not None:
        for rel in rels:
            held = held_glob(rel, whole, globs)
            if held is not None:
                return (f"`{p}` holds {held[1]}, read-only in this state (read_only "
                        f"`{held[0]}`)")
    return None


def whole_dir(full: str) -> str | None:
    """`full` when it is a directory now (a move or removal of it changes what is below)."""
    try:
        return full if os.path.isdir(full) else None
    except (OSError, ValueError):
        return None


# -- the calls: a tool's paths, a line's writes ------------------------------------------------

def call_problem(c: Any, globs: tuple[str, ...], ctx: GateContext) -> str | None:
    """Why the gate's call `c` would change a path the state's `read_only` `globs` name: an
    edit tool, a tool that writes, moves or deletes what it names, or a shell line whose writes
    the analysis sees (the kernel tier binds what it cannot see); None for any other call."""
    if c.analysis is not None:
        return line_problem(c, globs, ctx)
    if c.may_write or c.write:
        return tool_problem(c, globs, ctx)
    return None


def tool_problem(c: Any, globs: tuple[str, ...], ctx: GateContext) -> str | None:
    """Why a tool that writes, moves or deletes the paths it names (the gate's call `c`) would
    change a path `globs` name (a directory moved or deleted: anything below it)."""
    if c.fulls:  # (self-protection resolved every path argument already)
        paths = list(c.fulls)
    else:
        try:
            paths = tool_paths(c.args)
        except TooDeep as exc:  # (refused by self-protection already; refused here too)
            return str(exc)
    name = c.name
    # (the directories an MCP server resolves a relative path against: `gate._server_roots`)
    roots = ctx.server_roots.get(name[5:].split("__", 1)[0], ()) \
        if name.startswith("mcp__") and ctx.server_roots else ()
    for p in edits.edited_paths(c.name, c.args) if c.write else ():
        if isinstance(p, str) and p not in paths:
            paths.append(p)
    for p in paths:
        fulls = c.fulls.get(p)
        if fulls is None:
            fulls = c.fulls[p] = c.every(p, c.cwd, roots)
        whole = next((f for f in fulls if whole_dir(f)), None) if c.tree else None
        why = path_problem(p, relatives(p, fulls, c.real_root, ctx.project_root, c.cwd), globs,
                           whole)
        if why:
            return why
    return None


#: programs that change a file's mode, owner or attributes (their first operand is the mode or
#: owner, unless given by `--reference=`)
_METADATA_CHANGERS = frozenset({"chmod", "chown", "chgrp"})
#: programs that make hard links (a second name for a read-only file's content)
_LINKERS = frozenset({"ln", "link"})


def line_problem(c: Any, globs: tuple[str, ...], ctx: GateContext) -> str | None:
    """Why the shell line of `c` (the gate's call) would change a path the state's `read_only`
    `globs` name: an output redirect or a file an option says a command writes (`sed -i`, `tee`,
    a copy's destination), a removal, a move's source, a directory moved or removed whole that
    could hold one, a hard link to one, a change of its mode or owner. What code the line runs
    would write is the kernel tier's to bind."""
    analysis = c.analysis
    # (a target that is not fixed text is check 5's and check 1's to refuse)
    outputs = [r for r in analysis.redirects if r.output and r.target is not None and
               r.target.literal and r.target.value not in HARMLESS_DEVICES]
    named = [cmd for cmd in analysis.commands if cmd.name_literal and
             (cmd.program in _METADATA_CHANGERS or cmd.program in _LINKERS or
              cmd.program == "git" or (cmd.program == "cp" and _copies_as_links(cmd)))]
    changes_worktree, line_dirs = _shell_parts()
    moves = changes_worktree(analysis, ctx.store_dir)
    if not (outputs or named or moves):
        return None  # (the usual line: it writes nothing the analysis sees)
    cwds = line_dirs(analysis, c.cwd or ctx.project_root)[0]
    for r in outputs:
        v = r.target.value
        for d in cwds:
            why = _judge(c, ctx, globs, v, d)
            if why:
                return f"`{r.op} {v}`: {why}"
    if moves:
        from .worktree import changed_files

        for full in changed_files(analysis, c.resolve, cwds):
            if full == "?":
                continue  # (a name known only at run time: the kernel tier's)
            shown = relative_to_real(full, c.real_root) or full
            why = path_problem(shown, relatives(full, [full], c.real_root, ctx.project_root,
                                                None), globs, whole_dir(full))
            if why:
                return why
    for cmd in named:
        for d in cwds:
            for v, base, whole in _named_operands(cmd, d):
                why = _judge(c, ctx, globs, v, base, whole)
                if why:
                    return f"`{cmd.text[:80]}`: {why}"
    return None


def _named_operands(cmd: Command, cwd: str) -> list[tuple[str, str, bool]]:
    """(operand, the directory it is resolved from, whether the whole tree below it changes)
    for a command that changes or links the files it names: a metadata changer, a linker,
    `cp -l`, a git command that rewrites the worktree."""
    if cmd.program != "git":
        return [(v, cwd, whole) for v, whole in _metadata_or_link_operands(cmd)]
    from ..programs import worktree as wt
    from .worktree import _git_base

    vals = [a.value for a in cmd.args]
    base = _git_base(vals, cwd)
    effect = wt.git_effect(vals, lambda w: os.path.lexists(os.path.join(base, w)))
    if effect is None:
        return []
    if not effect.pathspecs:
        # the whole tree below where git runs: tracked files rewritten (`reset --hard`,
        # `checkout .`); what `clean` or `stash -u` would remove is the kernel tier's
        return [(".", base, True)] if effect.tracked and not effect.untracked else []
    # (pathspec magic and globs are the kernel tier's: literal pathspecs only)
    return [(v, base, True) for v in effect.pathspecs
            if not v.startswith(":") and not any(ch in v for ch in "*?[")]


def _copies_as_links(cmd: Command) -> bool:
    """`cp -l` / `cp --link`: the copies are hard links to the sources."""
    return any(a.value == "--link" or (a.value.startswith("-") and not a.value.startswith("--")
                                        and "l" in a.value) for a in cmd.args)


def _judge(c: Any, ctx: GateContext, globs: tuple[str, ...], v: str, d: str,
           whole: bool = False) -> str | None:
    """`path_problem` for the word `v` of a line run in directory `d`."""
    full = c.resolve(v, d, shell=True)
    return path_problem(v, relatives(v, [full], c.real_root, ctx.project_root, d), globs,
                        whole_dir(full) if whole else None)


_SHELL: list[Any] = []


def _shell_parts() -> list[Any]:
    """`protect.line`'s `changes_worktree` and `line_dirs`, imported on the first line judged
    (not for an edit tool's call)."""
    if not _SHELL:
        from .line import changes_worktree, line_dirs

        _SHELL.extend((changes_worktree, line_dirs))
    return _SHELL


def _metadata_or_link_operands(cmd: Command) -> list[tuple[str, bool]]:
    """The literal operands whose file `cmd` (a metadata changer or a linker) changes or links
    to, each with whether the command acts on the whole tree below it."""
    from ..programs import worktree as wt

    vals = [a.value for a in cmd.args]
    if cmd.program in _LINKERS or cmd.program == "cp":
        opts = [v for v in vals if v.startswith("-") and v != "-"]
        if any(v == "--symbolic" or (not v.startswith("--") and "s" in v) for v in opts):
            return []  # (a symbolic link: writing through it is judged where it resolves)
        srcs = wt.copy_operands(cmd.program, vals)[0]
        # (`cp -rl DIR`: every file below DIR gets a second name)
        return [(vals[i], cmd.program == "cp") for i in srcs if cmd.args[i].literal]
    recursive = any(v in ("-R", "--recursive") or (v.startswith("-") and
                                                     not v.startswith("--") and "R" in v)
                    for v in vals)
    out: list[tuple[str, bool]] = []
    first = not any(v.startswith("--reference") for v in vals)
    done = False
    for a in cmd.args:
        v = a.value
        if not done and a.literal and v == "--":
            done = True
            continue
        if not done and a.literal and v.startswith("-") and v != "-" and \
                not (cmd.program == "chmod" and v[1:2] in "rwxXst" and v[1:2] != ""):
            continue
        if first:  # (the mode or the owner)
            first = False
            continue
        if a.literal:
            out.append((v, recursive))
    return out
