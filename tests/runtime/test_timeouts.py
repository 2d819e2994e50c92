"""State timeouts fired while no call comes (`runtime.timeouts.fire_due`), on both stores: a
due timeout fires once; a look when nothing changed and no deadline passed reads one mark;
a look the store's notices call quiet reads nothing until the earliest deadline comes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from statewright.runtime import Runtime

WF = {"id": "slow", "initial": "waiting",
      "states": {"waiting": {"timeout_s": 30, "on_timeout": "EXPIRE",
                             "on": {"EXPIRE": "expired", "GO": "other"}},
                 "other": {"timeout_s": 60, "on_timeout": "EXPIRE", "on": {"EXPIRE": "expired"}},
                 "expired": {"type": "final"}}}


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


class CountedReads:
    """The real store, with its read transactions counted."""

    def __init__(self, rt: Runtime) -> None:
        self.n = 0
        store = rt.store
        real = store.read

        def read(*a, **k):
            self.n += 1
            return real(*a, **k)

        store.read = read  # type: ignore[method-assign]


@pytest.fixture
def rt(tmp_path: Path, store_kind: str) -> Runtime:
    root = tmp_path / "proj"
    (root / "workflows").mkdir(parents=True)
    (root / "workflows" / "slow.json").write_text(json.dumps(WF))
    r = Runtime.open(root)
    r.clock = Clock()
    return r


def test_a_quiet_look_reads_nothing_before_the_deadline(rt: Runtime) -> None:
    clock = rt.clock
    assert isinstance(clock, Clock)
    rt.start("slow", "s1")
    reads = CountedReads(rt)
    assert rt.fire_due_timeouts(quiet=True) == []  # (the first look always reads)
    assert reads.n == 1 and rt.seconds_to_next_timeout() == 30.0
    clock.now += 29
    for _ in range(5):
        assert rt.fire_due_timeouts(quiet=True) == []
    assert reads.n == 1
    assert rt.seconds_to_next_timeout() == 1.0
    clock.now += 1
    fired = rt.fire_due_timeouts(quiet=True)
    assert [(f["state"], f["to"]) for f in fired] == [("waiting", "expired")]
    assert rt.get_state("s1")["state"] == "expired"
    assert rt.fire_due_timeouts(quiet=True) == [] and rt.seconds_to_next_timeout() is None


def test_without_a_notice_each_look_reads_and_sees_a_change_made_elsewhere(rt: Runtime) -> None:
    """Without notices (a project's SQLite file, or a feed that saw something), a look reads
    the store's mark, so a transition another process made moves the deadline."""
    clock = rt.clock
    assert isinstance(clock, Clock)
    rt.start("slow", "s1")
    assert rt.fire_due_timeouts() == []
    clock.now += 10
    other = Runtime.open(rt.root_dir)
    other.clock = clock
    other.transition("s1", "GO")
    assert rt.fire_due_timeouts() == []  # (the deadline is now 60 s after the move)
    assert rt.seconds_to_next_timeout() == 60.0
    clock.now += 60
    assert [f["state"] for f in rt.fire_due_timeouts()] == ["other"]
