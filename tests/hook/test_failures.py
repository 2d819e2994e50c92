"""Fail closed: garbage input, a damaged store, broken config — the hook refuses with the cause,
exits 0 and never prints a traceback; `fail_open` turns refusals into allows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .harness import SESSION, Project, allowed, denied

pytestmark = pytest.mark.e2e


@pytest.fixture
def proj(tmp_path: Path) -> Project:
    return Project(tmp_path / "proj")


@pytest.mark.parametrize("stdin, needle", [
    (b"", "no input"),
    (b"   \n", "no input"),
    (b"{not json", "not valid JSON"),
    (b"\xff\xfe\x00garbage", "not valid JSON"),
    (b"[1, 2, 3]", "must be a JSON object"),
    (b'"PreToolUse"', "must be a JSON object"),
])
def test_garbage_stdin_is_refused(proj: Project, stdin: bytes, needle: str) -> None:
    rc, out, _err = proj.run_hook(["pre-tool-use"], stdin)
    assert rc == 0
    why = denied(json.loads(out))
    assert needle in why and "fails closed" in why


@pytest.mark.parametrize("payload, needle", [
    ({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}}, "session_id"),
    ({"session_id": SESSION, "tool_input": {"command": "ls"}}, "tool_name"),
    ({"session_id": SESSION, "tool_name": "Bash", "tool_input": "ls"}, "tool_input"),
    ({"session_id": SESSION, "tool_name": "Bash"}, "tool_input"),
])
def test_incomplete_input_is_refused_even_without_a_run(proj: Project, payload: dict, needle: str) -> None:
    why = denied(proj.hook("pre-tool-use", payload))
    assert needle in why


def test_unknown_event_is_refused(proj: Project) -> None:
    p = proj.payload("PreToolUse", tool_name="Bash", tool_input={"command": "ls"})
    why = denied(proj.hook("pre-tool-usage", p))
    assert "unknown hook event" in why
    rc, out, _ = proj.run_hook([], json.dumps({**p, "hook_event_name": "Nonsense"}).encode())
    assert rc == 0 and "no hook event" in denied(json.loads(out))


def _damage_store(proj: Project) -> None:
    db = proj.root / ".statewright" / "state.db"
    for extra in ("-wal", "-shm"):
        Path(str(db) + extra).unlink(missing_ok=True)
    db.write_bytes(b"this is not a sqlite database at all" * 200)


def test_damaged_store_is_refused_on_every_tool(proj: Project) -> None:
    proj.start("tdd-feature")
    _damage_store(proj)
    for tool, inp in [("Read", {"file_path": proj.path("a")}), ("Bash", {"command": "ls"})]:
        why = denied(proj.pre(tool, inp))
        assert "STORE_ERROR" in why and "fails closed" in why
    # the other events do not crash either: exit 0, a message, no traceback
    for arg, event, extra in [("post-tool-use", "PostToolUse", {"tool_name": "Read", "tool_input": {}, "tool_response": "x"}),
                              ("session-start", "SessionStart", {"source": "startup"}),
                              ("user-prompt-submit", "UserPromptSubmit", {"prompt": "hi"}),
                              ("stop", "Stop", {"stop_hook_active": False})]:
        out = proj.hook(arg, proj.payload(event, **extra))
        assert out is not None and "STORE_ERROR" in out["systemMessage"]
        assert out.get("decision") != "block"  # a broken store never traps the agent in Stop


def test_unreadable_config_is_refused(proj: Project) -> None:
    proj.start("tdd-feature")
    (proj.root / "statewright.json").write_text('{"fail_open": tru')
    why = denied(proj.pre("Read", {"file_path": proj.path("a")}))
    assert "statewright.json" in why


def test_definition_missing_from_store_is_refused(proj: Project) -> None:
    import sqlite3

    proj.start("tdd-feature")
    con = sqlite3.connect(proj.root / ".statewright" / "state.db")
    con.execute("DELETE FROM definitions")
    con.commit()
    con.close()
    why = denied(proj.pre("Read", {"file_path": proj.path("a")}))
    assert "definition" in why


def test_fail_open_allows_when_the_store_is_damaged(proj: Project) -> None:
    proj.start("tdd-feature")
    (proj.root / "statewright.json").write_text(json.dumps({"fail_open": True}))
    denied(proj.pre("Edit", {"file_path": proj.path("a"), "old_string": "a", "new_string": "b"}))  # rules still apply
    _damage_store(proj)
    allowed(proj.pre("Edit", {"file_path": proj.path("a"), "old_string": "a", "new_string": "b"}))
    assert proj.pre("Read", {"file_path": proj.path("a")}) is None
    rc, out, _ = proj.run_hook(["pre-tool-use"], b"garbage")
    assert rc == 0 and out.strip() == ""  # fail_open: even garbage is let through


def test_store_in_the_way_is_refused(tmp_path: Path) -> None:
    proj = Project(tmp_path / "proj")
    (proj.root / ".statewright" / "state.db").mkdir(parents=True)  # a directory, not a database
    why = denied(proj.pre("Read", {"file_path": proj.path("a")}))
    assert "STORE_ERROR" in why


def test_a_project_without_a_store_is_left_alone(tmp_path: Path) -> None:
    proj = Project(tmp_path / "proj")
    assert proj.pre("Edit", {"file_path": proj.path("a"), "old_string": "a", "new_string": "b"}) is None
    assert proj.post("Read", {"file_path": proj.path("a")}, "x") is None
    assert not (proj.root / ".statewright").exists()  # nothing created on disk
