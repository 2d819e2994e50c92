"""Files watched (DESIGN section 3) through the real `statewright-hook` process: an interrupt
fires when a matching file changes by any means -- a shell redirect during a call, an outside
process between calls -- and a second interrupt during a handler is queued until `$return`."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from .harness import BASH_OK as OK
from .harness import Project, allowed, context, denied

pytestmark = pytest.mark.e2e



@pytest.fixture
def proj(tmp_path: Path) -> Project:
    p = Project(tmp_path / "proj")
    (p.root / "config").mkdir()
    (p.root / "config" / "app.yml").write_text("replicas: 1\n")
    (p.root / "web").mkdir()
    (p.root / "web" / "package-lock.json").write_text("{}\n")
    p.start("watched-files")
    return p


def bash(p: Project, command: str) -> dict | None:
    """A Bash call as Claude Code makes it: PreToolUse, the line really run, PostToolUse."""
    allowed(p.pre("Bash", {"command": command}))
    r = subprocess.run(["bash", "-c", command], cwd=p.root, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    return p.post("Bash", {"command": command}, OK)


def test_a_shell_redirect_fires_the_interrupt_with_the_result(proj: Project) -> None:
    bash(proj, "echo starting")  # the first look takes the marks
    out = bash(proj, "echo 'replicas: 5' > config/app.yml")
    text = context(out, "PostToolUse")
    assert text.startswith("[STATEWRIGHT INTERRUPT] config/app.yml changed")
    assert proj.status()["state"] == "config_review"
    assert "Edit" in denied(proj.pre("Edit", {"file_path": proj.path("config/app.yml"),
                                              "old_string": "5", "new_string": "1"}))
    fired = [h for h in proj.history() if h["kind"] == "interrupted"]
    assert [h["data"]["file"] for h in fired] == ["config/app.yml"]


def test_an_outside_process_between_calls_fires_before_the_next_call(proj: Project) -> None:
    allowed(proj.pre("Read", {"file_path": proj.path("config/app.yml")}))  # marks taken
    proj.post("Read", {"file_path": proj.path("config/app.yml")}, "replicas: 1\n")
    # an editor outside the agent (a separate process, not a tool call)
    subprocess.run(["python3", "-c", "open('config/app.yml', 'a').write('debug: true\\n')"],
                   cwd=proj.root, check=True)
    # the next call is decided under the handler's rules, and its refusal says why (once)
    why = denied(proj.pre("Write", {"file_path": proj.path("notes.md"), "content": "x"}))
    assert "config_review" in why
    assert why.startswith("[STATEWRIGHT INTERRUPT] config/app.yml changed"), why
    assert "[STATEWRIGHT INTERRUPT]" not in denied(
        proj.pre("Write", {"file_path": proj.path("notes.md"), "content": "y"}))
    allowed(proj.pre("Read", {"file_path": proj.path("config/app.yml")}))
    out = proj.post("Read", {"file_path": proj.path("config/app.yml")}, "...")
    assert "[STATEWRIGHT INTERRUPT]" not in str(out)  # (told once: not again here)


def test_an_outside_change_is_told_with_the_next_result_when_the_call_is_allowed(
        proj: Project) -> None:
    allowed(proj.pre("Read", {"file_path": proj.path("config/app.yml")}))  # marks taken
    proj.post("Read", {"file_path": proj.path("config/app.yml")}, "replicas: 1\n")
    subprocess.run(["python3", "-c", "open('config/app.yml', 'a').write('debug: true\\n')"],
                   cwd=proj.root, check=True)
    # Read is allowed in the handler too: the result tells it
    allowed(proj.pre("Read", {"file_path": proj.path("config/app.yml")}))
    out = proj.post("Read", {"file_path": proj.path("config/app.yml")}, "...")
    assert context(out, "PostToolUse").startswith("[STATEWRIGHT INTERRUPT] config/app.yml")


def test_a_second_interrupt_during_a_handler_is_queued_until_return(proj: Project) -> None:
    allowed(proj.pre("Read", {"file_path": proj.path("config/app.yml")}))
    os.utime(proj.root / "config" / "app.yml", ns=(1, 1))
    allowed(proj.pre("Read", {"file_path": proj.path("config/app.yml")}))
    assert proj.status()["state"] == "config_review"
    # a background job rewrites the lock file while the config is under review
    (proj.root / "web" / "package-lock.json").write_text('{"lockfileVersion": 3}\n')
    out = proj.post("Read", {"file_path": proj.path("config/app.yml")}, "...")
    assert "queued" in context(out, "PostToolUse")
    assert proj.status()["state"] == "config_review"
    after = proj.transition("REVIEWED")  # $return: the queued interrupt fires at once
    assert after["state"] == "dependency_review"
    assert after["interrupt"] == {"name": "dependencies_changed", "return_to": "implementing"}
    assert proj.transition("REVIEWED")["state"] == "implementing"
    kinds = [h["kind"] for h in proj.history()]
    assert kinds.count("interrupted") == 2 and "interrupt_queued" in kinds
