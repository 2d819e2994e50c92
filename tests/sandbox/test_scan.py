"""`sandbox.scan`: what changed on disk between two scans, with real files in a temp tree.

The case the scan exists for: code that changes a file and sets its mtime back keeping its size
(`touch -r`, `os.utime`) is still seen, because the kernel moved the file's ctime."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from statewright.sandbox.scan import Changes, diff, scan


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "src" / "pkg" / "mod.py").write_text("a = 1\nb = 2\n")
    (root / "src" / "app.py").write_text("print('hi')\n")
    (root / "tests" / "test_app.py").write_text("def test(): pass\n")
    (root / "README.md").write_text("# proj\n")
    return root


def test_a_scan_records_every_entry_with_inode_size_ctime_and_mode(tree: Path) -> None:
    s = scan(str(tree))
    assert set(s) == {"src", "src/pkg", "src/pkg/mod.py", "src/app.py", "tests",
                      "tests/test_app.py", "README.md"}
    st = os.lstat(tree / "src" / "pkg" / "mod.py")
    assert s["src/pkg/mod.py"] == (st.st_ino, st.st_size, st.st_ctime_ns, st.st_mode)
    assert not diff(s, scan(str(tree)))  # nothing changed: no changes
    assert diff(s, scan(str(tree))) == Changes()


def test_content_changed_with_size_and_mtime_kept_is_seen_by_its_ctime(tree: Path) -> None:
    target = tree / "src" / "pkg" / "mod.py"
    before = scan(str(tree))
    st = os.stat(target)
    # the way code that wants to hide would: same length, mtime and atime put back
    target.write_text("a = 9\nb = 2\n")
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    after_st = os.stat(target)
    assert (after_st.st_size, after_st.st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    ch = diff(before, scan(str(tree)))
    assert ch.changed == ("src/pkg/mod.py",) and ch.files() == ("src/pkg/mod.py",)
    assert not ch.created and not ch.removed


def test_touch_reference_is_caught(tree: Path) -> None:
    """`touch -r OTHER FILE` after rewriting FILE (the real program, as a test would run it)."""
    target = tree / "README.md"
    ref = tree / "ref"
    ref.write_text("x")
    subprocess.run(["touch", "-r", str(target), str(ref)], check=True)
    before = scan(str(tree))
    target.write_text("# PROJ\n")
    subprocess.run(["touch", "-r", str(ref), str(target)], check=True)
    assert os.stat(target).st_mtime_ns == os.stat(ref).st_mtime_ns
    assert diff(before, scan(str(tree))).files() == ("README.md",)


def test_a_chmod_changes_the_entry(tree: Path) -> None:
    before = scan(str(tree))
    os.chmod(tree / "src" / "app.py", 0o755)
    assert diff(before, scan(str(tree))).changed == ("src/app.py",)


def test_a_rename_is_removed_plus_created_and_keeps_the_inode(tree: Path) -> None:
    before = scan(str(tree))
    os.rename(tree / "src" / "app.py", tree / "src" / "main.py")
    after = scan(str(tree))
    ch = diff(before, after)
    assert ch.created == ("src/main.py",) and ch.removed == ("src/app.py",)
    assert ch.changed == ("src",) and "src" in ch.dirs  # its entries changed
    assert ch.files() == ("src/app.py", "src/main.py")
    assert before["src/app.py"][0] == after["src/main.py"][0]


def test_a_directory_renamed_moves_every_path_under_it(tree: Path) -> None:
    before = scan(str(tree))
    os.rename(tree / "src" / "pkg", tree / "src" / "lib")
    ch = diff(before, scan(str(tree)))
    assert ch.created == ("src/lib", "src/lib/mod.py")
    assert ch.removed == ("src/pkg", "src/pkg/mod.py")
    assert ch.files() == ("src/lib/mod.py", "src/pkg/mod.py")
    assert {"src/lib", "src/pkg", "src"} <= ch.dirs


def test_a_new_directory_with_files_and_an_empty_one(tree: Path) -> None:
    before = scan(str(tree))
    (tree / "gen" / "deep").mkdir(parents=True)
    (tree / "gen" / "deep" / "a.py").write_text("x = 1\n")
    (tree / "empty").mkdir()
    ch = diff(before, scan(str(tree)))
    assert ch.created == ("empty", "gen", "gen/deep", "gen/deep/a.py")
    assert ch.files() == ("gen/deep/a.py",)  # directories are not files
    assert {"empty", "gen", "gen/deep"} <= ch.dirs


def test_a_removed_file_and_a_removed_tree(tree: Path) -> None:
    before = scan(str(tree))
    (tree / "README.md").unlink()
    (tree / "tests" / "test_app.py").unlink()
    (tree / "tests").rmdir()
    ch = diff(before, scan(str(tree)))
    assert ch.removed == ("README.md", "tests", "tests/test_app.py")
    assert ch.files() == ("README.md", "tests/test_app.py")
    assert not ch.created and not ch.changed


def test_a_file_replaced_by_another_of_the_same_name_and_size(tree: Path) -> None:
    """An editor's save, or code writing a temporary file and renaming it over the original:
    a new inode."""
    before = scan(str(tree))
    tmp = tree / "src" / ".app.py.tmp"
    tmp.write_text("print('ho')\n")
    os.replace(tmp, tree / "src" / "app.py")
    ch = diff(before, scan(str(tree)))
    assert "src/app.py" in ch.changed and ch.files() == ("src/app.py",)


def test_a_file_replaced_by_a_directory_is_a_changed_file(tree: Path) -> None:
    before = scan(str(tree))
    (tree / "README.md").unlink()
    (tree / "README.md").mkdir()
    ch = diff(before, scan(str(tree)))
    assert ch.changed == ("README.md",) and ch.files() == ("README.md",)


def test_links_are_recorded_not_followed(tree: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "big.txt").write_text("x")
    os.symlink(outside, tree / "link")
    os.symlink("/", tree / "root")
    s = scan(str(tree))
    assert "link" in s and "root" in s
    assert not any(p.startswith(("link/", "root/")) for p in s)
    before = s
    os.unlink(tree / "link")
    os.symlink(tree / "src", tree / "link")  # retargeted: a new link
    assert diff(before, scan(str(tree))).changed == ("link",)


def test_skipped_directories_are_recorded_but_not_entered(tree: Path) -> None:
    (tree / ".git" / "objects").mkdir(parents=True)
    (tree / ".git" / "objects" / "ab").write_text("blob")
    (tree / "node_modules" / "x").mkdir(parents=True)
    (tree / "store").mkdir()
    (tree / "store" / "state.db").write_text("db")
    (tree / "src" / "node_modules").write_text("a file of that name is the project's own")
    s = scan(str(tree), skip_names={".git", "node_modules"}, skip_paths=[str(tree / "store")])
    assert {".git", "node_modules", "store", "src/node_modules"} <= set(s)
    assert not any(p.startswith((".git/", "node_modules/", "store/")) for p in s)
    before = s
    (tree / ".git" / "objects" / "cd").write_text("blob")
    (tree / "store" / "state.db").write_text("db2")
    after = scan(str(tree), skip_names={".git", "node_modules"}, skip_paths=[str(tree / "store")])
    assert diff(before, after).files() == ()


def test_a_directory_that_cannot_be_listed_is_recorded_and_named(tree: Path) -> None:
    """A path too long to open stands for every directory that exists but cannot be listed
    (as root, permissions never stop the scan; as another user, mode 000 does the same)."""
    fd = os.open(tree, os.O_RDONLY | os.O_DIRECTORY)
    length, name = len(str(tree)), "deep"
    while length < 4200:  # (made one component at a time, each relative to its parent)
        os.mkdir(name, dir_fd=fd)
        nfd = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd, length, name = nfd, length + len(name) + 1, "d" * 200
    os.close(fd)
    unlisted: set[str] = set()
    s = scan(str(tree), unlisted=unlisted)
    assert len(unlisted) == 1
    [p] = unlisted
    assert p in s and p.startswith("deep/") and len(str(tree / p)) + 201 > 4096
    assert "tests/test_app.py" in s  # the rest is scanned
    by_path: set[str] = set()
    from statewright.sandbox.scan import _scan_by_path

    _scan_by_path(str(tree), frozenset(), frozenset(), by_path, None)
    # (by whole paths the parent is named: its child's path is what is too long to stat)
    [q] = by_path
    assert p.startswith(q + "/")


def test_a_scan_past_its_deadline_raises(tree: Path) -> None:
    import time

    with pytest.raises(TimeoutError, match="too many entries"):
        scan(str(tree), deadline=time.monotonic() - 1)
    assert scan(str(tree), deadline=time.monotonic() + 60)


def test_a_missing_root_scans_empty(tmp_path: Path) -> None:
    assert scan(str(tmp_path / "nope")) == {}


def test_the_scan_by_paths_sees_what_the_scan_by_descriptors_sees(tree: Path) -> None:
    """(Platforms without `dir_fd` walk by whole paths: the same answer.)"""
    from statewright.sandbox.scan import _scan_by_path

    (tree / ".git" / "x").mkdir(parents=True)
    (tree / "store").mkdir()
    (tree / "store" / "db").write_text("x")
    os.symlink("/", tree / "root")
    names, paths = frozenset({".git"}), frozenset({str(tree / "store")})
    assert _scan_by_path(str(tree), names, paths, set(), None) == scan(str(tree), names, paths)
    assert "store" in scan(str(tree), names, paths) and "store/db" not in scan(str(tree), names,
                                                                               paths)
