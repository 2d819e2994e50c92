"""Paths (DESIGN.md section 4 "Paths"): which arguments of a tool call are paths, how each is
resolved (per decision, `PathResolver`), project-relative paths, the harmless output devices,
and the glob semantics of `file_pattern` (DESIGN.md section 3).

Patterns are matched against the path relative to the project root with `/` separators:
`*` and `?` never cross `/`; `**` matches any number of directories, including none;
`[abc]` is a character class. `*.js` matches `app.js` but not `src/app.js`; `**/*.env*`
matches `.env` and `.env.local` at any depth (leading dots are not special).
"""

from __future__ import annotations

import os
import stat

from ..lean import TYPE_CHECKING, lru_cache

if TYPE_CHECKING:  # pragma: no cover
    import re
    from collections.abc import Callable
    from typing import Any

    #: `PathResolver.resolve`: (path, cwd, shell=False) -> absolute, symlink-free path
    Resolve = Callable[..., str]

#: output devices a shell line may always write: what is written goes nowhere, or to the
#: command's own output or error stream (which the host reads). Not `/dev/tty`: that is the
#: human's terminal, where some terminals answer escape sequences by typing the answer back in.
HARMLESS_DEVICES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/fd/1",
                              "/dev/fd/2"})


@lru_cache(maxsize=512)
def compile_glob(pattern: str) -> re.Pattern[str]:
    import re  # here, not at module level: a decision that matches no glob never needs it

    i, n, out = 0, len(pattern), []
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                j = i + 2
                at_start = i == 0 or pattern[i - 1] == "/"
                if at_start and j < n and pattern[j] == "/":
                    out.append("(?:[^/]*/)*")  # `**/` : zero or more directories
                    i = j + 1
                    continue
                if at_start and j == n:
                    out.append(".*")  # trailing `/**`: everything below
                    i = j
                    continue
                out.append("[^/]*")  # `**` glued to other text behaves like `*`
                i = j
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = pattern.find("]", i + 2 if pattern[i + 1:i + 2] in ("!", "^") else i + 1)
            if j == -1:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1:j]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("(?!/)[" + body.replace("\\", "\\\\") + "]")
                i = j + 1
                continue
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out) + r"\Z")


def glob_match(pattern: str, relpath: str) -> bool:
    """True if project-relative `relpath` ('/'-separated, no leading './') matches `pattern`."""
    pattern = pattern.removeprefix("./")
    if "[" not in pattern and "\\" not in pattern and not pattern.endswith("/"):
        # the common patterns, matched segment by segment without `re` (whose import is a
        # noticeable share of a hook process that watches files): the same semantics as
        # `compile_glob` (tests/policy check both agree)
        return _segments_match(tuple(pattern.split("/")), tuple(relpath.split("/")))
    return compile_glob(pattern).match(relpath) is not None


def name_filter(pattern: str) -> Callable[[str], bool] | None:
    """A quick test on a file's name alone that every path `pattern` matches passes (the
    pattern's last segment), so a walk can skip most files without `glob_match`; None when
    the last segment says nothing about the name."""
    last = pattern.rsplit("/", 1)[-1]
    if last == "**" or "[" in last or "\\" in last:
        return None
    last = last.replace("**", "*")
    if "*" not in last and "?" not in last:  # a name: equal or not (`conftest.py`)
        return last.__eq__
    if "?" not in last and last.count("*") == 1:  # `*.py`, `test_*`: an end and a start
        head, tail = last.split("*")
        return lambda name: len(name) >= len(head) + len(tail) and name.startswith(head) \
            and name.endswith(tail)
    return lambda name: _segment_match(last, name)


def _segments_match(pat: tuple[str, ...], path: tuple[str, ...]) -> bool:
    if not pat:
        return not path
    head = pat[0]
    if head == "**":
        if len(pat) == 1:  # a trailing `**`: everything below (`a/**` needs `a/` at least)
            return len(path) >= 1
        return any(_segments_match(pat[1:], path[k:]) for k in range(len(path) + 1))
    return bool(path) and _segment_match(head.replace("**", "*"), path[0]) and \
        _segments_match(pat[1:], path[1:])


def _segment_match(pat: str, s: str) -> bool:
    """`*` (any run) and `?` (one character) within one path segment."""
    p = i = 0
    star, mark = -1, 0
    n, m = len(pat), len(s)
    while i < m:
        if p < n and (pat[p] == "?" or pat[p] == s[i]) and pat[p] != "*":
            p += 1
            i += 1
        elif p < n and pat[p] == "*":
            star, mark = p, i
            p += 1
        elif star != -1:
            p = star + 1
            mark += 1
            i = mark
        else:
            return False
    while p < n and pat[p] == "*":
        p += 1
    return p == n


def project_relative(path: str, project_root: str, cwd: str | None = None) -> str | None:
    """Resolve `path` (absolute, or relative to `cwd`/the root) to a '/'-separated path relative
    to the project root; None if it lies outside the project. Symlinks are resolved where they
    exist, so a link into `.statewright/` is seen for what it is."""
    base = cwd or project_root
    return relative_to_root(real_path(os.path.join(base, os.path.expanduser(path))),
                            project_root)


def relative_to_root(full: str, project_root: str) -> str | None:
    """'/'-separated form of the resolved absolute `full` relative to the (resolved) project
    root; None outside the project."""
    return relative_to_real(full, _real_root(project_root))


def relative_to_real(full: str, root: str) -> str | None:
    """`relative_to_root` for a project root already resolved (`_real_root`)."""
    if full == root:
        return "."
    if root == os.sep:
        return full[1:].replace(os.sep, "/") if full.startswith(os.sep) else None
    if not full.startswith(root) or full[len(root)] != os.sep:
        return None
    return full[len(root) + 1:].replace(os.sep, "/")


@lru_cache(maxsize=64)
def _real_root(project_root: str) -> str:
    # the project root does not move during a process's life; resolving it once saves a
    # syscall per path on the hot path of `gate`
    return os.path.realpath(project_root).rstrip(os.sep) or os.sep


# -- symlink resolution ------------------------------------------------------------------------
#
# `os.path.realpath` walks the path in Python, one lstat per component. Where the platform lets
# the kernel do the walk (Linux: open the path with O_PATH, which reads and runs nothing, and
# read back /proc/self/fd/N) one call resolves every symlink at once; anything unusual (a
# missing file, a dangling link, no /proc) falls back to `os.path.realpath`. Nothing is cached
# across calls: a link made by one tool call is seen by the next.

_O_PATH = getattr(os, "O_PATH", 0)
_KERNEL: list[bool] = []  # [usable] once probed


def _kernel_ok() -> bool:
    if not _KERNEL:
        ok = False
        if _O_PATH and os.path.isdir("/proc/self/fd"):
            try:
                probe = _kernel_resolve(os.sep)
                ok = probe == os.sep
            except Exception:  # pragma: no cover - exotic /proc
                ok = False
        _KERNEL.append(ok)
    return _KERNEL[0]


def _kernel_resolve(p: str) -> str | None:
    try:
        fd = os.open(p, _O_PATH | os.O_CLOEXEC)
    except (OSError, ValueError):
        return None
    try:
        r = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None
    finally:
        os.close(fd)
    if not r.startswith(os.sep) or r.endswith(" (deleted)"):
        return None
    return r


_S_IFMT, _S_IFLNK = 0o170000, stat.S_IFLNK
_SEP, _lstat = os.sep, os.lstat
_WALK_MAX = 2  # below the project root, lstat each name up to this depth


def real_path(p: str, real_root: str | None = None) -> str:
    """`os.path.realpath(p)` for an absolute path `p` (same answer, fewer system calls).

    `real_root`: an already resolved directory (the project root); a path lexically below it
    by at most two plain names is checked name by name with lstat (no link on the way, so it
    is its own real path) rather than resolved as a whole."""
    if real_root is not None:
        n = len(real_root)
        if p[n:n + 1] == _SEP and p.startswith(real_root) and real_root != _SEP:
            parts = p[n + 1:].split(_SEP)
            if len(parts) <= _WALK_MAX and "" not in parts and "." not in parts and \
                    ".." not in parts:
                cur = real_root
                i = 0
                for name in parts:
                    nxt = cur + _SEP + name
                    try:
                        mode = _lstat(nxt).st_mode
                    except FileNotFoundError:
                        # missing, and not a dangling link: nothing below it exists either
                        return _SEP.join([nxt, *parts[i + 1:]])
                    except OSError:
                        break
                    if mode & _S_IFMT == _S_IFLNK:
                        break
                    cur = nxt
                    i += 1
                else:
                    return cur
    if _kernel_ok():
        r = _kernel_resolve(p)
        if r is not None:
            return r
        # a path about to be created: resolve its nearest existing directory; the first
        # missing name below it must not be a (dangling) link, and then nothing below it
        # exists, so the rest is plain names (no `.`/`..`: those go the slow way)
        head, tails = p, []
        for _ in range(6):
            head, tail = os.path.split(head)
            if not tail or tail in (".", "..") or not head:
                break
            tails.append(tail)
            parent = _kernel_resolve(head)
            if parent is None:
                continue
            first = os.path.join(parent, tails[-1])
            try:
                os.lstat(first)
            except FileNotFoundError:
                if all(t not in (".", "..") for t in tails):
                    return os.path.join(first, *reversed(tails[:-1]))
            except OSError:
                pass
            break
    try:
        return os.path.realpath(p)
    except OSError:  # a link this process may not read (`/proc/1/cwd`): nor may the agent's
        return os.path.normpath(p)


class PathResolver:
    """Resolves the path arguments of one decision: absolute, symlink-free (`real_path`), `~`
    expanded unless the path is a shell word (the shell has expanded it already, so a quoted
    `~` is a plain name). Each answer is remembered for this decision only, so a path checked
    by two rules is resolved once and a link made by a later call is always seen."""

    __slots__ = ("_seen", "real_root", "root")

    def __init__(self, project_root: str) -> None:
        self.root = project_root
        self.real_root = _real_root(project_root)
        self._seen: dict[tuple[str, str, bool], str] = {}

    def resolve(self, p: str, cwd: str | None, shell: bool = False) -> str:
        base = cwd or self.root
        key = (p, base, shell)
        full = self._seen.get(key)
        if full is not None:
            return full
        if not shell and p[:1] == "~":
            p = os.path.expanduser(p)
        # os.path.join, inlined (hot path)
        if p[:1] == _SEP:
            joined = p
        elif base[-1:] == _SEP:
            joined = base + p
        else:
            joined = base + _SEP + p
        full = self._seen[key] = real_path(joined, self.real_root)
        return full

    def files_named(self, p: str, rel: str, cwd: str | None) -> list[str]:
        """The project files a write of `p` (resolved by the kernel to `rel`) may change, as
        checks 7-8 count them: `lnk/../x.py` is `d/x.py` for the kernel (`lnk` -> `d/sub`) and
        `x.py` for a front end that takes `..` before following links (Claude Code's edit
        tools, Node's `path.resolve`); both are counted, whichever is written."""
        if ".." not in p:
            return [rel]
        lex = os.path.normpath(os.path.join(cwd or self.root, os.path.expanduser(p)))
        other = relative_to_real(real_path(lex, self.real_root), self.real_root)
        return [rel] if other is None or other == rel else [rel, other]

    def every(self, p: str, cwd: str | None, roots: tuple[str, ...] = (),
              shell: bool = False) -> list[str]:
        """Every resolution of path `p` the executing side may apply (DESIGN section 4
        "Paths"), absolute and symlink-free: against `cwd` and against each of `roots` (an MCP
        server resolves a relative path against its own allowed directories); with `..`
        taken after symlinks (the kernel) and before them (a lexically normalising front end,
        such as Node's `path.resolve`); in NFC and NFD (a front end may map one spelling to a
        file of the other). Case folding is the comparer's business (`CtxFacts.folded`)."""
        if not roots and p.isascii() and ".." not in p:
            return [self.resolve(p, cwd, shell)]  # (the usual path: one resolution)
        bases = [cwd or self.root]
        if p[:1] != os.sep and p[:1] != "~":
            bases += [r for r in roots if r not in bases]
        out: list[str] = []
        for base in bases:
            for q in _spellings(p):
                full = self.resolve(q, base, shell)
                if full not in out:
                    out.append(full)
                if ".." in q:
                    lex = os.path.normpath(os.path.join(base, os.path.expanduser(q)
                                                        if not shell else q))
                    full = real_path(lex, self.real_root)
                    if full not in out:
                        out.append(full)
        return out


def _spellings(p: str) -> tuple[str, ...]:
    """`p` and its NFC and NFD forms (ASCII has one form)."""
    if p.isascii():
        return (p,)
    import unicodedata

    return tuple(dict.fromkeys((p, unicodedata.normalize("NFC", p),
                                unicodedata.normalize("NFD", p))))


def unicode_forms(full: str) -> tuple[str, ...]:
    """The NFC and NFD forms of a resolved path (to compare with protected paths)."""
    return _spellings(full)


# -- which arguments are paths -------------------------------------------------------------------

#: argument names of MCP tools that hold paths
PATH_KEYS = {"path", "paths", "source", "destination", "file_path", "notebook_path", "filePath",
             "directory", "dir", "root", "cwd", "target", "file", "filename", "files", "src",
             "dest", "from", "to", "old_path", "new_path", "relative_workspace_path",
             "target_file", "repo_path"}


def tool_paths(args: dict[str, Any]) -> list[str]:
    """Every path-like argument of a tool call: the strings under a path-like key, at any
    depth of the input (`{"options": {"path": ...}}`, `{"paths": [{"file": ...}]}`)."""
    out: list[str] = []
    known = _PATH_KEY_MEMO
    for k, v in args.items():
        if type(v) is str:
            pk = known.get(k)
            if pk is None:
                pk = is_path_key(k)
                if type(k) is str:
                    if len(known) >= 4096:
                        known.clear()
                    known[k] = pk
            if pk:
                out.append(v)
        elif is_path_key(k):
            _add_paths(v, out)
        elif isinstance(v, (dict, list)):
            _nested_paths(v, out, 1)
    return out


_PATH_KEY_MEMO: dict[str, bool] = {}  # `is_path_key` of argument names (text only)


#: how deep containers may nest in a tool input: `tool_paths` refuses to walk deeper input
#: (`TooDeep`), and the gate refuses such a call as malformed
MAX_NESTING = 16


class TooDeep(ValueError):
    """A tool input nests lists and objects deeper than `MAX_NESTING`: `tool_paths` cannot
    vouch for every path inside, so the call is malformed."""


def has_surrogate(text: str) -> bool:
    """Whether `text` holds a lone surrogate (U+D800..U+DFFF), the only code points UTF-8
    cannot encode: such text is valid JSON but not valid Unicode, and names no file."""
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def unusable_path(p: str) -> str | None:
    """Why no system call could take `p` as a path (a NUL byte, a lone surrogate), else None.
    Such a path names no file to judge: the gate refuses the call as malformed."""
    if "\0" in p:
        return "holds a NUL byte"
    if has_surrogate(p):
        return "is not valid Unicode (it holds a lone surrogate)"
    return None


def _nested_paths(v: Any, out: list[str], depth: int) -> None:
    if depth > MAX_NESTING:
        raise TooDeep(f"the tool input is nested more than {MAX_NESTING} levels deep")
    if isinstance(v, dict):
        for k, x in v.items():
            if isinstance(k, str) and is_path_key(k):
                _add_paths(x, out, depth + 1)
            elif isinstance(x, (dict, list)):
                _nested_paths(x, out, depth + 1)
    elif isinstance(v, list):
        for x in v:
            if isinstance(x, (dict, list)):
                _nested_paths(x, out, depth + 1)


def _add_paths(v: Any, out: list[str], depth: int = 0) -> None:
    """Every string inside the value of a path argument, however it is nested (a front end
    that flattens or coerces an odd shape must not reach a path that was never checked)."""
    if depth > MAX_NESTING:
        raise TooDeep(f"the tool input is nested more than {MAX_NESTING} levels deep")
    if isinstance(v, str):
        out.append(v)
    elif isinstance(v, (list, tuple)):
        for x in v:
            _add_paths(x, out, depth + 1)
    elif isinstance(v, dict):
        for v2 in v.values():
            _add_paths(v2, out, depth + 1)


@lru_cache(maxsize=1024)
def is_path_key(k: str) -> bool:
    return k in PATH_KEYS or k.lower().endswith(("path", "paths", "file", "dir"))

