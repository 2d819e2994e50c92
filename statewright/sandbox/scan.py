"""What a sandboxed line changed, by effect (DESIGN section 4, "Binding by the kernel").

A test the agent wrote, a Makefile recipe or a patch changes files the line's text does not
name, so they are found afterwards on disk: `scan(root)` records every entry of the project
tree as `(inode, size, ctime_ns, mode)`, and `diff(before, after)` says which paths were
created, changed or removed in between.

Why these four and not mtime: the code a line runs can set a file's mtime (and atime) back
(`touch -r`, `os.utime`), keeping its size, but not its ctime: the kernel sets a file's ctime to
the current time on every change of its content or its inode (a write, a truncate, a rename, a
link, a chmod, a utime), and only a process that may set the system clock could put it back.
The inode number tells a file replaced by another of the same name (a write to a temporary
file renamed over it); the mode a `chmod`. A rename is the old path removed and the new one
created; a directory renamed, every path under it.

What is skipped (`skip_names`, `skip_paths`: the caller decides, `statewright.runtime.effects`
gives its reasons): directories only, never a file of the same name, and nothing below a
symlink (a link is recorded as itself, never followed: a link to `/` must not make the scan
walk the machine).

Pure stdlib (`os.scandir`): one `lstat` per entry (relative to its directory's descriptor),
the directory tree read once.
"""

from __future__ import annotations

import errno
import os
import stat as _stat
import time
from collections.abc import Iterable

#: (inode, size, ctime_ns, mode) of one entry
Sig = tuple[int, int, int, int]
#: project-relative path ('/'-separated) -> its signature
Scan = dict[str, Sig]


def scan(root: str, skip_names: Iterable[str] = (), skip_paths: Iterable[str] = (), *,
         unlisted: set[str] | None = None, deadline: float | None = None) -> Scan:
    """Every entry under `root` (not `root` itself), directories included, by project-relative
    path. A directory whose name is in `skip_names`, or whose absolute path is in `skip_paths`,
    is recorded itself but not entered. An entry that vanishes while it is read is left out.

    A directory that exists but cannot be listed (no permission, a path too long to open) is
    recorded without its contents and its path added to `unlisted` ("" for `root`): what
    changed inside it cannot be named, which the caller must not take for nothing.
    `deadline` (a `time.monotonic()` value): past it the scan raises `TimeoutError` rather
    than keep its caller (a hook the host waits for) longer."""
    names = frozenset(skip_names)
    paths = _normed(skip_paths)
    if unlisted is None:
        unlisted = set()
    if not _BY_FD:  # (no `dir_fd` on this platform)
        return _scan_by_path(root, names, paths, unlisted, deadline)
    out: Scan = {}
    lstat_at = os.stat
    isdir = _stat.S_ISDIR
    open_ = os.open
    close = os.close
    scandir = os.scandir
    stack = [(os.path.normpath(root), "")]
    pop = stack.pop
    push = stack.append
    while stack:
        d, prefix = pop()
        if deadline is not None:
            _in_time(deadline, len(out))
        # Each directory is opened once, never through a link (a directory swapped for a link
        # to `/` while the walk runs is not entered), and its entries are stat'ed relative to
        # it: one path component for the kernel to resolve, not the whole path.
        try:
            fd = open_(d, _DIR_FLAGS)
        except OSError as exc:
            if exc.errno not in _GONE:
                unlisted.add(prefix[:-1])
            continue  # recorded (as its parent saw it), not entered
        try:
            with scandir(fd) as it:
                for e in it:
                    name = e.name
                    try:
                        st = lstat_at(name, dir_fd=fd, follow_symlinks=False)
                    except OSError as exc:  # removed between the listing and the stat, or
                        if exc.errno not in _GONE:  # not to be looked at (a listable
                            unlisted.add(prefix[:-1])  # directory without search permission)
                        continue
                    mode = st.st_mode
                    rel = prefix + name
                    out[rel] = (st.st_ino, st.st_size, st.st_ctime_ns, mode)
                    if isdir(mode) and name not in names:
                        full = d + "/" + name if d != "/" else "/" + name
                        if full not in paths:
                            push((full, rel + "/"))
        except OSError as exc:  # (the listing failed part way: what was read is kept)
            if exc.errno not in _GONE:
                unlisted.add(prefix[:-1])
        finally:
            close(fd)
    return out


_BY_FD = os.stat in os.supports_dir_fd and os.scandir in os.supports_fd and os.sep == "/"
_DIR_FLAGS = (os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
              | getattr(os, "O_CLOEXEC", 0))
#: a directory that is gone, or no longer a directory (swapped for a file or a link), when it
#: is opened: its parent's listing says what it is now
_GONE = frozenset({errno.ENOENT, errno.ENOTDIR, errno.ELOOP})


def _in_time(deadline: float, entries: int) -> None:
    if time.monotonic() > deadline:
        raise TimeoutError(f"the project has too many entries to scan in time ({entries:,} "
                           "read)")


def _normed(paths: Iterable[str]) -> frozenset[str]:
    return frozenset(os.path.normpath(p) for p in paths)


def _scan_by_path(root: str, names: frozenset[str], paths: frozenset[str], unlisted: set[str],
                  deadline: float | None) -> Scan:
    """`scan` where directories cannot be opened as descriptors: by whole paths."""
    out: Scan = {}
    base = os.path.normpath(root)
    cut = len(base) + 1 if base != os.sep else 1
    stack = [base]
    while stack:
        d = stack.pop()
        if deadline is not None:
            _in_time(deadline, len(out))
        here = d[cut:].replace(os.sep, "/")
        try:
            it = os.scandir(d)
        except OSError as exc:
            if exc.errno not in _GONE:
                unlisted.add(here)
            continue
        with it:
            for e in it:
                try:
                    st = os.lstat(e.path)
                except OSError as exc:
                    if exc.errno not in _GONE:
                        unlisted.add(here)
                    continue
                rel = e.path[cut:].replace(os.sep, "/")
                out[rel] = (st.st_ino, st.st_size, st.st_ctime_ns, st.st_mode)
                if _stat.S_ISDIR(st.st_mode) and e.name not in names and e.path not in paths:
                    stack.append(e.path)
    return out


class Changes:
    """What differs between two scans: paths created, changed (same path, another signature:
    content, inode, mode or type) and removed, each sorted; `dirs`: which of them are
    directories (in the scan that has them)."""

    __slots__ = ("changed", "created", "dirs", "removed")

    def __init__(self, created: tuple[str, ...] = (), changed: tuple[str, ...] = (),
                 removed: tuple[str, ...] = (), dirs: frozenset[str] = frozenset()) -> None:
        self.created = created
        self.changed = changed
        self.removed = removed
        self.dirs = dirs

    def __bool__(self) -> bool:
        return bool(self.created or self.changed or self.removed)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Changes) and (
            self.created, self.changed, self.removed, self.dirs) == (
            other.created, other.changed, other.removed, other.dirs)

    def __repr__(self) -> str:
        return (f"Changes(created={self.created!r}, changed={self.changed!r}, "
                f"removed={self.removed!r}, dirs={sorted(self.dirs)!r})")

    def files(self) -> tuple[str, ...]:
        """Every path created, changed or removed that is not a directory (a file, a link, ...),
        sorted: a directory changes when an entry is added to or removed from it, and that
        entry is listed itself."""
        dirs = self.dirs
        return tuple(sorted(p for p in (*self.created, *self.changed, *self.removed)
                            if p not in dirs))


def diff(before: Scan, after: Scan) -> Changes:
    """The paths created, changed and removed between scan `before` and scan `after`."""
    created: list[str] = []
    changed: list[str] = []
    dirs: set[str] = set()
    isdir = _stat.S_ISDIR
    get = before.get
    for path, sig in after.items():
        old = get(path)
        if old is None:
            created.append(path)
        elif old != sig:
            changed.append(path)
            if isdir(sig[3]) and isdir(old[3]):
                dirs.add(path)
            continue
        else:
            continue
        if isdir(sig[3]):
            dirs.add(path)
    removed = [p for p in before.keys() - after.keys()]
    for p in removed:
        if isdir(before[p][3]):
            dirs.add(p)
    created.sort()
    changed.sort()
    removed.sort()
    return Changes(tuple(created), tuple(changed), tuple(removed), frozenset(dirs))
