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

Pure stdlib (`os.scandir`): one `lstat` per entry, the directory tree read once.
"""

from __future__ import annotations

import os
import stat as _stat
from collections.abc import Iterable

#: (inode, size, ctime_ns, mode) of one entry
Sig = tuple[int, int, int, int]
#: project-relative path ('/'-separated) -> its signature
Scan = dict[str, Sig]


def scan(root: str, skip_names: Iterable[str] = (), skip_paths: Iterable[str] = ()) -> Scan:
    """Every entry under `root` (not `root` itself), directories included, by project-relative
    path. A directory whose name is in `skip_names`, or whose absolute path is in `skip_paths`,
    is recorded itself but not entered. An entry that vanishes while it is read is left out; a
    directory that cannot be listed is recorded without its contents."""
    names = frozenset(skip_names)
    paths = frozenset(os.path.normpath(p) for p in skip_paths)
    out: Scan = {}
    base = os.path.normpath(root)
    cut = len(base) + 1 if base != os.sep else 1
    lstat = os.lstat
    isdir = _stat.S_ISDIR
    stack = [base]
    slash = os.sep != "/"
    while stack:
        d = stack.pop()
        try:
            it = os.scandir(d)
        except OSError:
            continue  # gone, or not listable: recorded (as its parent saw it), not entered
        with it:
            for e in it:
                path = e.path
                try:
                    st = lstat(path)
                except OSError:
                    continue  # removed between the listing and the stat
                rel = path[cut:]
                if slash:
                    rel = rel.replace(os.sep, "/")
                mode = st.st_mode
                out[rel] = (st.st_ino, st.st_size, st.st_ctime_ns, mode)
                if isdir(mode) and e.name not in names and (not paths or path not in paths):
                    stack.append(path)
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
