"""Following `cd` through a line (DESIGN section 4 "Paths"): the directories its relative paths
may be resolved against, and whether a change of directory could not be followed."""

from __future__ import annotations

import os

from ...lean import TYPE_CHECKING
from ..procfs import process_link
from .wrappers import CHDIR_WRAPPERS, chdir_target

if TYPE_CHECKING:  # pragma: no cover
    from .records import Command, ShellAnalysis

#: the commands that change the working directory
DIR_CHANGERS = frozenset({"cd", "pushd", "popd"})


class DirWalk:
    """The working directory as the commands of a line change it: `cd DIR` with one literal
    argument moves it (lexically, as the analysis cannot know the file system at run time);
    any other `cd`, `pushd` or `popd` loses track (`lost`: count the directory as unknown).
    `seen`: every directory it has been in, in order."""

    __slots__ = ("cwd", "lost", "seen")

    def __init__(self, start: str) -> None:
        self.cwd = start
        self.seen = [start]
        self.lost = False

    def follow(self, c: Command) -> None:
        if not c.name_literal or c.name not in DIR_CHANGERS:
            if c.name_literal and c.program in CHDIR_WRAPPERS:
                # `env -C DIR cmd`, `sudo -D DIR cmd`: the command it runs is in DIR (counted
                # as a directory of the line; the lines after it are where they were)
                known, target = chdir_target(c)
                if not known:
                    self.lost = True
                elif target is not None:
                    d = os.path.normpath(os.path.join(self.cwd, target))
                    if d not in self.seen:
                        self.seen.append(d)
            return
        if c.name == "cd" and len(c.args) == 1 and c.args[0].literal:
            target = c.args[0].value
            self.cwd = os.path.normpath(os.path.join(self.cwd, target))
            if process_link(self.cwd):  # (`cd /proc/self/cwd`: as the shell sees it)
                self.lost = True
            if self.cwd not in self.seen:
                self.seen.append(self.cwd)
            if cdpath_applies(target):
                # bash looks a name like this up in `$CDPATH` first, whose value the analysis
                # cannot know (it may come from the environment): the directory is also unknown
                self.lost = True
        else:
            self.lost = True


def cdpath_applies(target: str) -> bool:
    """Whether bash's `cd` would search `$CDPATH` for `target`: it does unless the name starts
    with `/` or its first component is `.` or `..`."""
    first = target.split("/", 1)[0]
    return bool(target) and not target.startswith("/") and first not in (".", "..")


def line_cwds(analysis: ShellAnalysis, start: str) -> tuple[list[str], bool]:
    """(every directory a relative path in the line may be resolved against, whether a
    directory change could not be followed)."""
    walk = DirWalk(start)
    for c in analysis.commands:
        walk.follow(c)
    return walk.seen, walk.lost
