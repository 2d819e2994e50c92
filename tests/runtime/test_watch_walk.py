"""`runtime.watch.take_marks` and `matching_files`: the files a set of patterns names, found by
one walk per directory (patterns under one directory share it; files named at the top are read
from the top's listing), must be exactly what a plain walk that matches every pattern finds."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from statewright.policy.paths import glob_match
from statewright.runtime.watch import SKIP_DIRS, matching_files, take_marks

NAMES = ("conftest.py", "a.py", "b.txt", "pytest.ini", "src", "tests", "node_modules", "x.js",
         "jest.config.js", "package.json", ".git")
PATTERNS = ("**/conftest.py", "pytest.ini", "package.json", "**/jest.config.*", "src/**/*.py",
            "tests/*.py", "*.txt", "src/a.py", "missing.cfg", "src", "**/*.js", "tests/**",
            "a.py", "b.txt", "x.js")


def _reference(root: Path, patterns: tuple[str, ...], follow: bool) -> dict[str, tuple]:
    out: dict[str, tuple] = {}
    for p in patterns:
        if not any(c in p for c in "*?["):
            try:
                st = os.stat(root / p)
            except OSError:
                continue
            out[p] = (st.st_mtime_ns, st.st_size, st.st_ino)
    for d, dirs, files in os.walk(root):
        links = [x for x in dirs if os.path.islink(os.path.join(d, x))]  # (names, not walked)
        dirs[:] = [x for x in dirs if x not in SKIP_DIRS and x not in links]
        for name in files + links:
            rel = os.path.relpath(os.path.join(d, name), root).replace(os.sep, "/")
            if any(any(c in p for c in "*?[") and glob_match(p, rel) for p in patterns):
                try:
                    st = os.stat(os.path.join(d, name)) if follow else \
                        os.lstat(os.path.join(d, name))
                except OSError:  # (a link to nowhere, followed)
                    continue
                out[rel] = (st.st_mtime_ns, st.st_size, st.st_ino)
    return out


def _tree(root: Path, rng: random.Random) -> None:
    dirs = [root]
    for _ in range(rng.randint(3, 30)):
        parent = rng.choice(dirs)
        name = rng.choice(NAMES)
        path = parent / name
        if path.exists() or path.is_symlink():
            continue
        kind = rng.random()
        if kind < 0.3:
            path.mkdir()
            dirs.append(path)
        elif kind < 0.9:
            path.write_text("x" * rng.randint(0, 9))
        elif name not in ("src", "tests"):  # (a walk starts in `src/` through a link to it)
            path.symlink_to(rng.choice(["a.py", "../b.txt", "nowhere", str(root)]))


@pytest.mark.parametrize("seed", range(60))
def test_the_walk_finds_what_a_plain_walk_finds(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    _tree(tmp_path, rng)
    patterns = tuple(rng.sample(PATTERNS, rng.randint(1, 6)))
    for follow in (False, True):
        found = {rel: (st.st_mtime_ns, st.st_size, st.st_ino)
                 for rel, st in matching_files(str(tmp_path), patterns, follow=follow)}
        assert found == _reference(tmp_path, patterns, follow), (patterns, follow)
    marks = take_marks(str(tmp_path), patterns)
    assert marks == {k: [v[0], v[1]] for k, v in _reference(tmp_path, patterns, False).items()}


def test_a_top_file_is_found_when_the_walk_of_the_top_runs_out(tmp_path: Path,
                                                               monkeypatch) -> None:
    from statewright.runtime import watch

    for i in range(50):
        (tmp_path / f"f{i}.txt").write_text("")
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    monkeypatch.setattr(watch, "MAX_ENTRIES", 5)  # the listing of the top is cut short
    found = dict(matching_files(str(tmp_path), ("**/conftest.py", "pytest.ini")))
    assert "pytest.ini" in found


def test_a_link_to_nowhere_named_at_the_top_is_still_found_by_a_walk(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").symlink_to("nowhere")
    marks = take_marks(str(tmp_path), ("pytest.ini", "**/*.ini"))
    assert set(marks) == {"pytest.ini"}  # (the walk's: the link itself, as without the name)
    assert dict(matching_files(str(tmp_path), ("pytest.ini", "**/conftest.py"))) == {}


def test_a_top_file_is_found_when_the_top_cannot_be_listed(tmp_path: Path, monkeypatch) -> None:
    from statewright.runtime import watch

    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    real = os.scandir

    def refused(d):  # (a top that can be searched but not read)
        if os.path.samefile(d, tmp_path):
            raise PermissionError(13, "Permission denied", str(d))
        return real(d)

    monkeypatch.setattr(watch.os, "scandir", refused)
    assert "pytest.ini" in dict(matching_files(str(tmp_path), ("**/conftest.py", "pytest.ini")))
