"""Code planted for later in the project's other git directories, through the real hook and the
real `bash -c` of the rewritten (sandboxed) line, on a real repository with a real submodule.

The kernel sandbox pins `.git/hooks` and `.git/config` because what they name runs later,
outside any sandbox (the human's next `git commit`). A submodule keeps its own git directory
under `.git/modules/<name>/`, with its own `hooks/` and `config`; the human's plain `git status`
in the project runs `git status` in every submodule, and with it a `core.fsmonitor` the
submodule's config names. Code an allowed line ran (a test, a script) wrote there. Everyday
work in the submodule (commits, status) must keep working under the sandbox.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from statewright.sandbox import probe

from .harness import Project

pytestmark = pytest.mark.e2e

WF = {
    "id": "gitlater",
    "initial": "work",
    "states": {
        "work": {"allowed_tools": ["Bash", "Read", "Edit"],
                 "allowed_commands": ["python3", "git", "echo"], "max_files_per_state": 50,
                 "on": {"NEXT": "end"}},
        "end": {"type": "final"},
    },
}
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com",
       "-c", "protocol.file.allow=always", "-c", "init.defaultBranch=main"]


def git(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*GIT, *args], cwd=cwd, capture_output=True, text=True, check=True,
                          timeout=60)


@pytest.fixture
def proj(tmp_path: Path) -> Project:
    if probe.tier().kind == "none":
        pytest.fail(f"this machine has no kernel tier: {probe.tier().why}")
    sub = tmp_path / "subrepo"
    sub.mkdir()
    git(sub, "init", "-q")
    (sub / "lib.txt").write_text("lib\n")
    git(sub, "add", "lib.txt")
    git(sub, "commit", "-q", "-m", "lib")
    p = Project(tmp_path / "proj")
    git(p.root, "init", "-q")
    git(p.root, "submodule", "add", "-q", str(sub), "vendor/lib")
    git(p.root, "add", "-A")
    git(p.root, "commit", "-q", "-m", "init")
    for k, v in (("user.name", "t"), ("user.email", "t@example.com")):
        git(p.root / "vendor/lib", "config", k, v)
    p.write_workflow(WF)
    p.start("gitlater")
    return p


def run(p: Project, line: str) -> subprocess.CompletedProcess:
    return p.run_line(line, rewritten=True)


MARKER = "planted-ran"
PLANTS = {
    "fsmonitor": ("import subprocess\n"
                  "subprocess.run(['git', 'config', '-f', '.git/modules/vendor/lib/config', "
                  "'core.fsmonitor', 'touch {marker} #'])\n"),
    "hook": ("import os\n"
             "p = '.git/modules/vendor/lib/hooks/pre-commit'\n"
             "open(p, 'w').write('#!/bin/sh\\ntouch {marker}\\n')\n"
             "os.chmod(p, 0o755)\n"),
    "hooks-dir-swapped": ("import os\n"
                          "d = '.git/modules/vendor/lib/hooks'\n"
                          "os.rename(d, d + '.old')\n"
                          "os.mkdir(d)\n"
                          "open(d + '/pre-commit', 'w').write('#!/bin/sh\\ntouch {marker}\\n')\n"
                          "os.chmod(d + '/pre-commit', 0o755)\n"),
}


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_a_submodules_git_directory_holds_no_code_for_later(proj: Project, tmp_path: Path,
                                                            plant: str) -> None:
    marker = tmp_path / MARKER
    (proj.root / "plant.py").write_text(PLANTS[plant].format(marker=marker))
    before = (proj.root / ".git/modules/vendor/lib/config").read_text()
    run(proj, "python3 plant.py")
    # later, the human, outside any sandbox: a status of the project, a commit in the submodule
    subprocess.run(["git", "status"], cwd=proj.root, capture_output=True, timeout=60)
    lib = proj.root / "vendor/lib"
    (lib / "lib.txt").write_text("lib 2\n")
    subprocess.run([*GIT, "commit", "-q", "-am", "more"], cwd=lib, capture_output=True,
                   timeout=60)
    assert not marker.exists(), f"code the agent planted ({plant}) ran outside the sandbox"
    assert (proj.root / ".git/modules/vendor/lib/config").read_text() == before


def test_work_in_a_submodule_still_runs_under_the_sandbox(proj: Project) -> None:
    lib = proj.root / "vendor/lib"
    (lib / "lib.txt").write_text("lib 3\n")
    r = run(proj, "git -C vendor/lib commit -q -am 'lib 3' && git status --short && "
                  "git submodule status")
    assert r.returncode == 0, r.stderr
    assert "vendor/lib" in r.stdout
    log = subprocess.run(["git", "log", "--oneline", "-1"], cwd=lib, capture_output=True,
                         text=True, check=True).stdout
    assert "lib 3" in log
    assert os.path.isfile(proj.root / ".git/modules/vendor/lib/HEAD")


def test_a_planted_head_hides_no_submodule_below_it(tmp_path: Path) -> None:
    """The submodules' git files are found wherever they are under `.git/modules`: a `HEAD`
    the agent's code plants in `modules/a` (the parent of submodule `a/b`'s git directory)
    does not stop the lookup before `modules/a/b`; and what a git directory keeps of its own
    (objects, refs, ...) is not walked."""
    from statewright.policy.confine import git_dirs_later

    git_dir = tmp_path / ".git"
    sub = git_dir / "modules" / "a" / "b"
    for d in (sub / "hooks", sub / "objects" / "ab", git_dir / "modules" / "c" / "hooks"):
        d.mkdir(parents=True)
    for f in (sub / "HEAD", sub / "config", git_dir / "modules" / "c" / "HEAD",
              git_dir / "modules" / "a" / "HEAD", sub / "objects" / "ab" / "HEAD"):
        f.write_text("x\n")
    found = set(git_dirs_later(str(tmp_path)))
    assert {str(sub / "hooks"), str(sub / "config"),
            str(git_dir / "modules" / "c" / "hooks")} <= found
    assert not any("objects" in p for p in found)
    assert git_dirs_later(str(tmp_path / "none")) == ()
