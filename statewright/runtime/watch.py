"""Files watched for interrupts where no process stays alive to watch them (DESIGN section 3).

An interrupt fires when a matching file changes by any means: an edit tool, a shell redirect, a
script, a background job, an editor outside the agent. `statewright serve` watches the project
with watchdog (`proxy/watcher.py`); the hook's processes cannot, so around each call the
runtime compares what it can cheaply see: the `(mtime_ns, size)` of the files that match the
effective workflow's `file_pattern`s, taken when a call is decided (`authorize`) and when its
result is recorded (`record`), and kept in the store between processes (`Tx.marks`). A change
found when a call is decided happened since the last call (another process, a background job);
a change found when its result is recorded happened during the call (a redirect, a script).

Kept cheap: a pattern without wildcards is one `stat`; a pattern with wildcards walks only the
directory its literal prefix names (`src/**/*.py` walks `src/`), skipping directories that
are never project sources (`SKIP_DIRS`), and at most `MAX_ENTRIES` directory entries per call
(beyond that the walk stops: the docs say so; serve's watchdog has no such limit).
"""

from __future__ import annotations

import os

from ..lean import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from ..definition.compiled import CompiledWorkflow
    from ..engine.run import Run

Marks = dict[str, list[int]]  # project-relative path -> [mtime_ns, size]

SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", ".statewright", ".venv", "venv",
                       "__pycache__", ".tox", ".nox", ".mypy_cache", ".pytest_cache",
                       ".ruff_cache", ".hypothesis"})
MAX_ENTRIES = 20_000
_GLOB_CHARS = frozenset("*?[")


def patterns_of(wf: CompiledWorkflow) -> tuple[str, ...]:
    return tuple(dict.fromkeys(i.file_pattern for i in wf.interrupts))


def take_marks(root: str, patterns: tuple[str, ...]) -> Marks:
    """The marks of every file under `root` that one of `patterns` matches."""
    from ..policy.paths import glob_match

    out: Marks = {}
    budget = [MAX_ENTRIES]
    for pattern in patterns:
        parts = pattern.strip("/").split("/")
        fixed: list[str] = []
        for p in parts:
            if _GLOB_CHARS.intersection(p):
                break
            fixed.append(p)
        if len(fixed) == len(parts):  # no wildcard: the one file
            _stat_into(out, root, "/".join(fixed))
            continue
        base = os.path.join(root, *fixed)
        _walk(out, root, base, pattern, glob_match, budget)
    return out


def _stat_into(out: Marks, root: str, rel: str) -> None:
    try:
        st = os.stat(os.path.join(root, rel))
    except OSError:
        return
    out[rel] = [st.st_mtime_ns, st.st_size]


def _walk(out: Marks, root: str, base: str, pattern: str, match: object,
          budget: list[int]) -> None:
    from ..policy.paths import name_filter

    quick = name_filter(pattern)
    stack = [base]
    rootlen = len(root.rstrip(os.sep)) + 1
    while stack and budget[0] > 0:
        d = stack.pop()
        try:
            it = os.scandir(d)
        except OSError:
            continue
        with it:
            for e in it:
                budget[0] -= 1
                if budget[0] <= 0:
                    return
                try:
                    if e.is_dir(follow_symlinks=False):
                        if e.name not in SKIP_DIRS:
                            stack.append(e.path)
                        continue
                    if quick is not None and not quick(e.name):
                        continue
                    rel = e.path[rootlen:].replace(os.sep, "/")
                    if match(pattern, rel):  # type: ignore[operator]
                        st = e.stat(follow_symlinks=False)
                        out[rel] = [st.st_mtime_ns, st.st_size]
                except OSError:
                    continue


def changed(old: Marks | None, new: Marks) -> list[str]:
    """Files created, changed or deleted between two sets of marks (none without old marks:
    the first look only takes them)."""
    if old is None:
        return []
    return sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))


def config_changed(run: Run, globs: tuple[str, ...], files: list[str], root: str) -> bool:
    """Whether the agent changed, in this state, a file of the configuration `globs` name: an
    edit this state counted (`_observed.files_changed`, this call's files), or a file whose
    inode changed (ctime: no tool can set it back) since the run's last move."""
    if not globs:
        return False
    from ..names import OBSERVED
    from ..policy.paths import glob_match

    obs = run.context.get(OBSERVED)
    seen = obs.get("files_changed") if isinstance(obs, dict) else None
    changed = set(files).union(seen if isinstance(seen, list) else ())
    if any(glob_match(g, f) for g in globs for f in changed if isinstance(f, str)):
        return True
    since = run.updated_at
    for rel in take_marks(root, globs):
        try:
            if os.stat(os.path.join(root, rel)).st_ctime > since:
                return True
        except OSError:
            continue
    return False


def not_a_real_run(evidence: Any, run: Run, line: str, files: list[str], root: str) -> bool:
    """A passing test runner line that is no evidence of the suite (`_observed`, DESIGN section
    3): it ran a part of it (`policy.programs.runs`), or the agent changed, in this state, the
    configuration that decides what runs."""
    partial, config = evidence.not_evidence_of_a_pass(line)
    return partial is not None or config_changed(run, config, files, root)
