"""What the per-call hot path keeps between calls (docs/design-decisions.md, "Store speed,
part 4"): the JSON of history rows written over and over, and the active-run marker's path.
Each kept answer must be the one computed afresh."""

from __future__ import annotations

import os

import pytest

from statewright.policy.types import ToolCall, ToolResult
from statewright.runtime import Runtime, enforcement, marker
from statewright.runtime.service import _enforcement
from statewright.store.tables import to_json

WORK = {"id": "hot", "initial": "w",
        "states": {"w": {"allowed_tools": ["Read", "Bash", "Edit"],
                         "allowed_commands": ["pytest"], "on": {"DONE": "z"}},
                   "z": {"type": "final"}}}


@pytest.fixture
def rt(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    (tmp_path / "workflows").mkdir()
    (tmp_path / "workflows" / "hot.json").write_text(to_json(WORK))
    (tmp_path / "a.py").write_text("x = 1\n")
    runtime = Runtime.open(tmp_path, resident=True)
    runtime.start("hot", "s")
    yield runtime
    runtime.close()


def _history(rt: Runtime, kind: str) -> list[dict]:
    rid = rt.get_state("s")["run_id"]
    return [e["data"] for e in rt.history(rid) if e["kind"] == kind]


def test_allowed_calls_rows_are_the_json_of_their_data(rt, tmp_path):
    enforcement._ROWS.clear()
    for source in ("claude", "proxy", "claude", "proxy"):
        assert rt.authorize("s", ToolCall("Read", {"file_path": "a.py"}, source=source)).allowed
    edit = ToolCall("Edit", {"file_path": str(tmp_path / "a.py"), "old_string": "1",
                             "new_string": "2"})
    assert rt.authorize("s", edit).allowed  # a call that edits: its files, never kept
    assert _history(rt, "tool_allowed") == [
        {"tool": "Read", "source": "claude"}, {"tool": "Read", "source": "proxy"},
        {"tool": "Read", "source": "claude"}, {"tool": "Read", "source": "proxy"},
        {"tool": "Edit", "source": "claude", "files": ["a.py"]}]
    assert set(enforcement._ROWS) == {("tool_allowed", "Read", "claude"),
                                      ("tool_allowed", "Read", "proxy")}
    assert rt.get_state("s")["counters"]["iterations"] == 5


def test_exit_status_rows_keep_true_apart_from_1(rt):
    """`True == 1` and they hash alike: a kept row for exit code 1 must not answer for `True`
    (JSON `true`), nor 0 for `False`."""
    enforcement._ROWS.clear()
    line = {"command": "pytest -q"}
    for code, error in ((1, False), (True, False), (0, False), (False, False), (1, False),
                        (None, True), (0, True), (2, False)):
        assert rt.authorize("s", ToolCall("Bash", line)).allowed
        rt.record("s", ToolResult("Bash", line, output_bytes=3, exit_code=code, is_error=error))
    rows = _history(rt, "observed")
    assert [(r["exit_code"], type(r["exit_code"])) for r in rows] == [
        (1, int), (True, bool), (0, int), (False, bool), (1, int), (None, type(None)),
        (0, int), (2, int)]
    # (`ok` is `exit_code == 0`, as ever: False counts as 0)
    assert [r["ok"] for r in rows] == [False, False, True, True, False, False, False, False]
    assert all(r["tool"] == "Bash" and r["commands"] == ["pytest"] for r in rows)
    observed = rt.get_state("s")["context"]["_observed"]["commands"]["pytest"]
    assert observed["exit_code"] == 2 and observed["ok"] is False


def test_the_marker_follows_the_environment(rt, tmp_path, monkeypatch):
    """The marker's path is kept per store, session and environment: a changed
    `XDG_STATE_HOME` or `HOME` is seen at the next decision."""
    call = ToolCall("Read", {"file_path": "a.py"})
    assert rt.authorize("s", call).allowed
    first = tmp_path / "state" / "statewright" / "active"
    assert [p.name for p in first.iterdir()] == [os.path.basename(
        marker.marker_path(rt.store_file, "s"))]
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "other"))
    assert rt.authorize("s", call).allowed
    assert len(list((tmp_path / "other" / "statewright" / "active").iterdir())) == 1
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert marker.marker_path(rt.store_file, "s").startswith(
        str(tmp_path / "home" / ".local" / "state" / "statewright" / "active"))
    assert rt.authorize("s", call).allowed
    assert len(list((tmp_path / "home" / ".local" / "state" / "statewright" /
                     "active").iterdir())) == 1


def test_the_store_path_and_enforcement_are_kept(rt):
    assert rt.store_file is rt.store_file == os.path.join(rt.store_dir, "state.db")
    assert _enforcement() is enforcement
