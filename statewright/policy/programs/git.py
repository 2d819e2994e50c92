"""git: global options that make it run any command, aliases that run a shell command, and
the files `-o` names (`git format-patch -o DIR`)."""

from __future__ import annotations

from .spec import Example, Program

#: global options that take the next word as their value
_GLOBAL_WITH_ARG = frozenset({"-C", "--git-dir", "--work-tree", "--namespace"})


def _runs_code(name: str, vals: list[str]) -> str | None:
    """`git -c core.pager=...`, `--config-env`, `--exec-path` make git run any command; so
    does an alias that starts with `!` (given as the command)."""
    i = 0
    while i < len(vals) and vals[i].startswith("-"):
        v = vals[i]
        if v in ("-c", "--config-env") or v.startswith(("--config-env=", "--exec-path")):
            return "`git -c` / `--config-env` / `--exec-path` can make git run any command"
        i += 2 if v in _GLOBAL_WITH_ARG else 1
    if i < len(vals) and vals[i].startswith("!"):
        return "a git alias that runs a shell command"
    return None


GIT = Program(
    ("git",), "the version control system",
    output_options=frozenset({"-o"}),
    runs_code=_runs_code,
    examples=(
        Example("git -c core.pager=sh log", runs_code=True),
        Example("git -C sub -c alias.x=!sh x", runs_code=True),
        Example("git --config-env=core.pager=PAGER log", runs_code=True),
        Example("git --exec-path=/tmp/bin status", runs_code=True),
        Example("git '!sh -c id'", runs_code=True),
        Example("git diff --output=changes.patch", writes=("changes.patch",)),
        Example("git format-patch -o patches HEAD~2", writes=("patches",)),
        Example("git format-patch -opatches HEAD~2", writes=("patches",)),
        Example("git status"),
        Example("git -C sub log --oneline"),
        Example("git --git-dir .git --work-tree . diff"),
        Example("git commit -m '!important'"),
    ),
)
