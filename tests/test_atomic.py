"""The one writer of whole files (`statewright.atomic`): a reader sees the old bytes or the new
ones, never part; the mode asked for whatever the umask; nothing planted is written through;
nothing left behind when it fails."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from statewright.atomic import write_atomic


def test_new_file_gets_the_bytes_and_the_mode_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o077)
    try:
        write_atomic(str(tmp_path / "a"), b"one", 0o644)
        write_atomic(str(tmp_path / "b"), b"two")
    finally:
        os.umask(old)
    assert (tmp_path / "a").read_bytes() == b"one"
    assert (tmp_path / "a").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "b").stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b"]


def test_a_link_at_the_name_is_replaced_not_written_through(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_bytes(b"keep")
    (tmp_path / "f").symlink_to(victim)
    write_atomic(str(tmp_path / "f"), b"new")
    assert victim.read_bytes() == b"keep"
    assert not (tmp_path / "f").is_symlink()
    assert (tmp_path / "f").read_bytes() == b"new"


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(OSError):
        write_atomic(str(tmp_path / "d"), b"x")  # (a directory cannot be replaced by a file)
    assert (tmp_path / "d").is_dir()
    assert [p.name for p in tmp_path.iterdir()] == ["d"]
    with pytest.raises(OSError):
        write_atomic(str(tmp_path / "missing" / "f"), b"x")


def test_readers_never_see_part_of_a_file(tmp_path: Path) -> None:
    path = tmp_path / "f"
    big = [bytes([65 + i]) * 300_000 for i in range(4)]
    write_atomic(str(path), big[0])
    seen: set[bytes] = set()
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            data = path.read_bytes()
            seen.add(data[:1] + data[-1:] + str(len(data)).encode())

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for i in range(200):
            write_atomic(str(path), big[i % 4])
    finally:
        stop.set()
        reader.join()
    assert seen <= {b[:1] + b[-1:] + b"300000" for b in big}
    assert [p.name for p in tmp_path.iterdir()] == ["f"]
