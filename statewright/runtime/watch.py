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
    from collections.abc import Iterator
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


#: each tuple of patterns worked out once (`_plan`): the files named without wildcards, the
#: walks (a directory its patterns' literal prefix names, those patterns), and the files named
#: at the top (read from the top's listing when the top is walked)
_Plan = tuple[tuple[str, ...], tuple[tuple[str, tuple[str, ...]], ...], frozenset[str]]
_PLANS: dict[tuple[str, ...], _Plan] = {}


def _plan(patterns: tuple[str, ...]) -> _Plan:
    plan = _PLANS.get(patterns)
    if plan is None:
        files: dict[str, None] = {}
        walks: dict[str, list[str]] = {}
        for pattern in patterns:
            parts = pattern.strip("/").split("/")
            fixed: list[str] = []
            for p in parts:
                if _GLOB_CHARS.intersection(p):
                    break
                fixed.append(p)
            if len(fixed) == len(parts):
                files["/".join(fixed)] = None
            else:  # (patterns under one directory share its walk)
                walks.setdefault("/".join(fixed), []).append(pattern)
        if len(_PLANS) >= 64:
            _PLANS.clear()
        plan = _PLANS[patterns] = (tuple(files), tuple((b, tuple(ps)) for b, ps in walks.items()),
                                   frozenset(f for f in files if "/" not in f))
    return plan


def matching_files(root: str, patterns: tuple[str, ...], *, follow: bool = False
                   ) -> Iterator[tuple[str, os.stat_result]]:
    """(project-relative path, its `stat`) of every file under `root` that one of `patterns`
    matches (a file two walks find comes twice). A file a walk finds is not followed through a
    link unless `follow`; a pattern without wildcards names its file through one. A file named
    at the top while the top is walked is looked up in that walk's listing, not by a `stat`
    of its own (most of them do not exist)."""
    files, walks, at_top = _plan(patterns)
    budget = [MAX_ENTRIES]
    listed = [False]  # (set when the listing of the top was read whole)
    for base, pats in walks:
        if base:
            yield from _walk(root, os.path.join(root, base), pats, budget, follow, frozenset(),
                             [False])
        else:
            yield from _walk(root, root, pats, budget, follow, at_top, listed)
    for rel in files:
        if listed[0] and rel in at_top:
            continue
        try:
            yield rel, os.stat(os.path.join(root, rel))
        except OSError:
            pass


def take_marks(root: str, patterns: tuple[str, ...]) -> Marks:
    """The marks of every file under `root` that one of `patterns` matches."""
    return {rel: [st.st_mtime_ns, st.st_size] for rel, st in matching_files(root, patterns)}


#: each walk's patterns with their name filters (`policy.paths.name_filter`)
_TESTS: dict[tuple[str, ...], tuple[tuple[str, Any], ...]] = {}


def _walk(root: str, base: str, patterns: tuple[str, ...], budget: list[int], follow: bool,
          top: frozenset[str], listed: list[bool]) -> Iterator[tuple[str, os.stat_result]]:
    """The files under `base` one of `patterns` matches, and in its own listing the files `top`
    names (`stat` through a link, as those files are looked up alone; `listed[0]` says that
    listing was read whole)."""
    from ..policy.paths import glob_match

    tests = _TESTS.get(patterns)
    if tests is None:
        if len(_TESTS) >= 64:
            _TESTS.clear()
        from ..policy.paths import name_filter

        tests = _TESTS[patterns] = tuple((p, name_filter(p)) for p in patterns)
    stack = [base]
    rootlen = len(root.rstrip(os.sep)) + 1
    first = bool(top)
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
                if first and e.name in top:
                    try:
                        yield e.name, e.stat()
                    except OSError:  # (a link to nowhere: as a `stat` of the name finds)
                        pass
                try:
                    if e.is_dir(follow_symlinks=False):
                        if e.name not in SKIP_DIRS:
                            stack.append(e.path)
                        continue
                    rel = None
                    for pattern, quick in tests:
                        if quick is not None and not quick(e.name):
                            continue
                        if rel is None:
                            rel = e.path[rootlen:].replace(os.sep, "/")
                        if glob_match(pattern, rel):
                            yield rel, e.stat(follow_symlinks=follow)
                            break
                except OSError:
                    continue
        if first:
            listed[0] = True
        first = False


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
    # (through links: a link's target is the configuration the runner reads)
    return any(st.st_ctime > since for _, st in matching_files(root, globs, follow=True))
