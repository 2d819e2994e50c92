"""Interrupt handlers are no door (DESIGN section 3), through the real `statewright-hook`:
a handler never grants what the interrupted state refused unless its interrupt says
`widen: true`, and a round trip through a handler never refills a budget."""

from __future__ import annotations

from pathlib import Path

import pytest

from .harness import BASH_OK, Project, allowed, denied

pytestmark = pytest.mark.e2e


def _door(widen: bool | None = None) -> dict:
    interrupt = {"trigger": {"file_pattern": "reports/*.xml"}, "target": "triage"}
    if widen is not None:
        interrupt["widen"] = widen
    return {
        "id": "door", "initial": "testing",
        "interrupts": {"report": interrupt,
                       "settings": {"trigger": {"file_pattern": "settings.cfg"},
                                    "target": "review"}},
        "states": {
            "testing": {"allowed_tools": ["Read", "Bash"], "allowed_commands": ["pytest"],
                        "on": {"TESTED": "editing"}},
            "editing": {"allowed_tools": ["Read", "Edit", "Write"], "max_files_per_state": 2,
                        "on": {"DONE": "done"}},
            "triage": {"allowed_tools": ["Read", "Edit", "Write", "Bash"],
                       "on": {"BACK": "$return"}},
            "review": {"allowed_tools": ["Read"], "on": {"OK": "$return"}},
            "done": {"type": "final"},
        },
    }


@pytest.fixture
def proj(tmp_path: Path) -> Project:
    p = Project(tmp_path / "proj")
    (p.root / "src").mkdir()
    for name in ("a.py", "b.py", "c.py"):
        (p.root / "src" / name).write_text("x = 1\n")
    (p.root / "reports").mkdir()
    return p


def _edit(p: Project, rel: str) -> dict | None:
    path = p.path(rel)
    inp = {"file_path": path, "old_string": "x = 1", "new_string": "x = 2"}
    return p.pre("Edit", inp)


def _done_edit(p: Project, rel: str) -> None:
    path = p.path(rel)
    inp = {"file_path": path, "old_string": "x = 1", "new_string": "x = 2"}
    allowed(p.pre("Edit", inp))
    Path(path).write_text("x = 2\n")
    p.post("Edit", inp, {"filePath": path})


def _fire_report_interrupt(p: Project) -> None:
    """`pytest --junitxml=reports/r.xml`, allowed in `testing`, writes a watched file."""
    line = "pytest --junitxml=reports/r.xml"
    allowed(p.pre("Bash", {"command": line}))
    (p.root / "reports" / "r.xml").write_text("<testsuite tests='0'/>")
    p.post("Bash", {"command": line}, BASH_OK)
    assert p.status()["state"] == "triage"


def test_a_handler_does_not_grant_what_the_interrupted_state_refused(proj: Project) -> None:
    proj.write_workflow(_door())
    proj.start("door")
    assert "Edit" in denied(_edit(proj, "src/a.py"))
    _fire_report_interrupt(proj)
    reason = denied(_edit(proj, "src/a.py"))  # the handler allows Edit; testing does not
    assert "interrupted state 'testing'" in reason and "Edit" in reason
    allowed(proj.pre("Read", {"file_path": proj.path("src/a.py")}))  # both allow Read
    assert proj.transition("BACK")["state"] == "testing"


def test_widen_lets_the_handler_grant_it_on_purpose(proj: Project) -> None:
    proj.write_workflow(_door(widen=True))
    proj.start("door")
    _fire_report_interrupt(proj)
    allowed(_edit(proj, "src/a.py"))


def test_a_round_trip_through_a_handler_never_refills_a_budget(proj: Project) -> None:
    proj.write_workflow(_door())
    proj.start("door")
    proj.transition("TESTED")
    _done_edit(proj, "src/a.py")
    _done_edit(proj, "src/b.py")
    assert "at most 2 files" in denied(_edit(proj, "src/c.py"))
    # a watched file changes: the review handler, then back
    (proj.root / "settings.cfg").write_text("x\n")
    allowed(proj.pre("Read", {"file_path": proj.path("src/a.py")}))
    assert proj.status()["state"] == "review"
    back = proj.transition("OK")
    assert back["state"] == "editing"
    assert back["counters"]["files_edited"] == ["src/a.py", "src/b.py"]
    assert "at most 2 files" in denied(_edit(proj, "src/c.py"))
    # entering the state afresh (not through $return) does start a new budget
    assert proj.transition("DONE")["status"] == "completed"
