"""Self-protection (DESIGN.md section 4, check 1): the store and the workflows in use.

The agent must not write, delete, move or read the store directory (`.statewright/` or
`$STATEWRIGHT_HOME`), nor change a workflow file in use or statewright's own configuration
(`statewright.json`, whose `fail_open` would switch enforcement off, and Claude Code's
`.claude/settings*.json`, which holds the hooks).
"""

from __future__ import annotations

import fnmatch
import os
import re
from functools import lru_cache
from typing import Any

from .paths import project_relative
from .shell import Command, ShellAnalysis, Word

STORE_FILE = "state.db"
#: config files that switch enforcement off if rewritten (project-relative)
CONFIG_FILES = ("statewright.json", ".claude/settings.json", ".claude/settings.local.json")
#: argument names of MCP tools that hold paths
PATH_KEYS = {"path", "paths", "source", "destination", "file_path", "notebook_path", "filePath",
             "directory", "dir", "root", "cwd", "target", "file", "filename", "files", "src",
             "dest", "from", "to", "old_path", "new_path", "relative_workspace_path",
             "target_file", "repo_path"}
#: commands that only read the files they are given
READ_ONLY = {"cat", "less", "more", "head", "tail", "grep", "egrep", "fgrep", "rg", "wc", "ls",
             "diff", "cmp", "file", "stat", "md5sum", "sha256sum", "sha1sum", "jq", "bat",
             "git", "echo", "printf", "test", "[", "realpath", "readlink", "basename",
             "dirname", "nl", "sort", "uniq", "cut", "tr", "column", "hexdump", "xxd", "od",
             "strings", "python", "python3", "node", "pytest", "npm", "statewright"}
#: commands that act on whole trees (or move/link them) when given a directory
_TREE_CMDS = {"rm", "mv", "cp", "rsync", "tar", "zip", "chmod", "chown", "chgrp", "ln",
              "shred", "scp", "rmdir", "install", "truncate", "dd", "unlink", "srm", "wipe",
              "find", "git", "setfacl", "chattr", "mount", "bsdtar", "7z", "cpio", "pax",
              "sqlite3", "rclone", "trash", "gio", "busybox"}


def store_markers(store_dir: str) -> tuple[str, ...]:
    base = os.path.basename(os.path.normpath(store_dir)) or ".statewright"
    return tuple(dict.fromkeys([base, ".statewright"]))


@lru_cache(maxsize=64)
def _marker_re(store_dir: str) -> re.Pattern[str]:
    parts = [re.escape(m) for m in store_markers(store_dir)]
    parts.append(r"(?<![A-Za-z0-9_-])state\.db")
    ab = os.path.normpath(store_dir)
    parts.append(re.escape(ab))
    return re.compile("|".join(parts), re.IGNORECASE)


def _inside(path: str, directory: str) -> bool:
    d = directory.rstrip(os.sep)
    return path == d or path.startswith(d + os.sep)


def resolved(p: str, root: str, cwd: str | None) -> str:
    """Absolute, symlink-free form of `p`. Memoised for the duration of one decision only
    (see `gate`), so a link created later is always seen."""
    key = (p, root, cwd)
    memo = _MEMO.get("paths")
    if memo is not None and key in memo:
        return memo[key]
    full = os.path.realpath(os.path.join(cwd or root, os.path.expanduser(p)))
    if memo is not None:
        memo[key] = full
    return full


_MEMO: dict[str, dict] = {}


def protected_paths(ctx: Any) -> frozenset[str]:
    return _protected(ctx.project_root, frozenset(ctx.protected_files))


@lru_cache(maxsize=64)
def _protected(project_root: str, files: frozenset[str]) -> frozenset[str]:
    root = os.path.realpath(project_root)
    out = {os.path.realpath(p) for p in files}
    out.update(os.path.join(root, f) for f in CONFIG_FILES)
    return frozenset(out)


@lru_cache(maxsize=64)
def _protected_rel(project_root: str, protected: frozenset[str]) -> frozenset[str | None]:
    return frozenset(project_relative(p, project_root) for p in protected)


@lru_cache(maxsize=64)
def real_store(store_dir: str) -> str:
    return os.path.realpath(store_dir)


def path_violation(p: str, ctx: Any, cwd: str | None, write: bool) -> str | None:
    """Why touching path `p` is refused (None if it is fine)."""
    if not isinstance(p, str) or not p:
        return None
    full = resolved(p, ctx.project_root, cwd)
    store = real_store(ctx.store_dir)
    if _inside(full, store) or _marker_re(ctx.store_dir).search(p):
        return f"`{p}` is inside statewright's store ({ctx.store_dir}), which agents may not touch"
    if write and full in protected_paths(ctx):
        return f"`{p}` is a workflow or configuration file statewright is enforcing"
    return None


def tool_paths(args: dict[str, Any]) -> list[str]:
    """Every path-like argument of a tool call (recursing one level into lists/dicts)."""
    out: list[str] = []

    def add(v: Any) -> None:
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, list):
            for x in v:
                if isinstance(x, str):
                    out.append(x)
                elif isinstance(x, dict):
                    for k2, v2 in x.items():
                        if k2 in PATH_KEYS:
                            add(v2)

    for k, v in args.items():
        if k in PATH_KEYS or k.lower().endswith(("path", "paths", "file", "dir")):
            add(v)
    return out


# -- shell -------------------------------------------------------------------------------------


def _word_could_name(w: Word, names: tuple[str, ...]) -> bool:
    """Could this word (glob or partly dynamic) expand to a path with a component in `names`?"""
    if not (w.glob or w.dynamic):
        return False
    for comp in w.pattern.split("/"):
        if not comp or set(comp) <= {"*"}:
            continue
        for n in names:
            if fnmatch.fnmatchcase(n, comp) or fnmatch.fnmatchcase(n.lower(), comp.lower()):
                return True
    return False


def _is_ancestor_arg(w: Word, ctx: Any, cwd: str) -> bool:
    if w.tilde or w.value.startswith("~"):
        return True
    if not w.literal:
        return w.pattern in ("*", "/*") and w.dynamic  # a whole-word variable could be `.`
    full = os.path.normpath(os.path.join(cwd, w.value))
    store = os.path.normpath(ctx.store_dir)
    return _inside(store, full)


def _recursive(c: Command) -> bool:
    vals = [a.value for a in c.args]
    n = c.name
    if n in ("rm", "cp", "chmod", "chown", "chgrp", "setfacl", "scp", "srm", "shred", "trash"):
        return any(v in ("--recursive", "-R") or (v.startswith("-") and not v.startswith("--")
                                                    and ("r" in v or "R" in v or "a" in v))
                   for v in vals)
    if n == "find":
        return any(v in ("-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0",
                         "-fprintf", "-fls") for v in vals)
    if n == "git":
        return "clean" in vals or "rm" in vals or "stash" in vals and "-a" in vals
    return n in _TREE_CMDS


def shell_violations(analysis: ShellAnalysis, ctx: Any, cwd: str | None) -> list[str]:
    """Self-protection for a shell line: every reason it could touch the store or a protected
    file."""
    out: list[str] = []
    cwd = cwd or ctx.project_root
    rx = _marker_re(ctx.store_dir)
    markers = store_markers(ctx.store_dir) + (STORE_FILE,)
    if rx.search(analysis.source):
        out.append("the command names statewright's store")
    for w in analysis.words:
        if rx.search(w.value):
            out.append(f"`{w.text}` names statewright's store")
        elif _word_could_name(w, markers):
            out.append(f"`{w.text}` could expand to statewright's store")
    for c in analysis.commands:
        if c.stdin_text and rx.search(c.stdin_text):
            out.append(f"`{c.name}` is fed text naming statewright's store")
    protected = protected_paths(ctx)
    prot_rel = _protected_rel(ctx.project_root, protected)
    store = real_store(ctx.store_dir)
    for c in analysis.commands:
        if not c.name_literal:
            continue
        args = c.args
        vals = [a.value for a in args]
        if c.name == "git" and "clean" in vals and any(
                v.startswith("-") and not v.startswith("--") and ("x" in v or "X" in v)
                for v in vals):
            out.append("`git clean -x` would delete statewright's store")
        if c.name == "find" and _recursive(c) and (
                not args or all(v.startswith(("-", "(", "!")) for v in vals[:1])):
            if _inside(store, os.path.normpath(cwd)):
                out.append("`find` with an action from above the store would reach it")
        for a in args:
            if a.value.startswith("-") and a.literal:
                continue
            if _recursive(c) and _is_ancestor_arg(a, ctx, cwd):
                out.append(f"`{c.name} {a.text}` would reach statewright's store")
            if c.name not in READ_ONLY and a.literal and a.value:
                full = os.path.realpath(os.path.join(cwd, a.value))
                if full in protected:
                    out.append(f"`{c.name}` would change `{a.value}`, a file statewright "
                               "is enforcing")
                elif c.name in _TREE_CMDS and c.name not in ("ln",) and any(
                        r and r != "." and (r + "/").startswith(
                            (project_relative(full, ctx.project_root) or "\0") + "/")
                        for r in prot_rel if r):
                    if _recursive(c) or c.name in ("mv",):
                        out.append(f"`{c.name} {a.text}` would change a file statewright "
                                   "is enforcing")
            if c.name == "ln" and a.literal:
                full = os.path.realpath(os.path.join(cwd, a.value))
                if _inside(store, full) or full in protected:
                    out.append(f"`ln {a.value}` would link to statewright's files")
    for r in analysis.redirects:
        if r.output and r.target is not None and r.target.literal:
            full = os.path.realpath(os.path.join(cwd, r.target.value))
            if full in protected or _inside(full, store):
                out.append(f"`{r.op} {r.target.value}` would write a file statewright is "
                           "enforcing")
    return list(dict.fromkeys(out))
