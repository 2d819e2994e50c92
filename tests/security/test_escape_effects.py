"""Escape classes 4-6: the mechanisms whose effect shows on disk or in the run, driven through
real processes (the `statewright` CLI and hook, real git, bash, `statewright serve` in front of
the real `server-everything`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, bin_path, clean_env

sys.path.insert(0, str(REPO))
from statewright.store.db import Store
from tests.hook.harness import Project, allowed, denied
from tests.proxy.harness import ProxyClient, everything_server, text_of
from tests.security.escapes import WORKFLOW, make_project

pytestmark = pytest.mark.e2e


def _git(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=60)


@pytest.fixture
def proj(tmp_path: Path) -> Project:
    root, out = tmp_path / "proj", tmp_path / "out"
    make_project(root, out, {})
    p = Project(root)
    p.start("escape")
    return p


def test_the_store_carries_its_own_gitignore(proj: Project) -> None:
    """`git clean -fd` and `git stash -u` leave an ignored store alone; git lists it ignored."""
    store = proj.root / ".statewright"
    assert (store / ".gitignore").read_text().splitlines()[-1] == "*"
    assert "!! .statewright/" in _git("status", "--porcelain", "--ignored", cwd=proj.root).stdout
    (proj.root / "junk.txt").write_text("x")
    assert _git("clean", "-fd", "--", "junk.txt", "build", cwd=proj.root).returncode == 0
    assert not (proj.root / "junk.txt").exists() and (store / "state.db").exists()
    # the agent asking for the options that reach ignored files is refused
    denied(proj.pre("Bash", {"command": "git clean -fdx"}))
    denied(proj.pre("Bash", {"command": "git stash --all"}))


def test_a_store_taken_away_under_a_running_run_is_a_deny(proj: Project,
                                                          tmp_path: Path) -> None:
    read = {"file_path": proj.path("src/a.py")}
    allowed(proj.pre("Read", read))
    store, aside = proj.root / ".statewright", tmp_path / "aside"
    os.rename(store, aside)  # hidden by a process the analysis did not see
    try:
        reason = denied(proj.pre("Read", read))
        assert "missing" in reason and "was active" in reason
        # replaced: a fresh, empty store where the old one was
        Store.open(store / "state.db")
        assert "does not hold run" in denied(proj.pre("Read", read))
        shutil.rmtree(store)
    finally:
        os.rename(aside, store)
    allowed(proj.pre("Read", read))
    # a human ends the run: the marker goes with the next decision, and a missing store is
    # then no longer a refusal
    proj.cli("end", "--reason", "done here")
    allowed(proj.pre("Read", read))
    shutil.rmtree(store)
    allowed(proj.pre("Read", read))


def test_a_transition_through_the_agents_shell_is_the_agents(proj: Project) -> None:
    env = clean_env(CLAUDECODE="1")
    subprocess.run([bin_path("statewright"), "transition", "FREE", "--project", str(proj.root)],
                   env=env, check=True, capture_output=True, timeout=60)
    # the hook makes a line that runs the CLI export who is acting; run it as the host would
    out = proj.pre("Bash", {"command": "statewright transition WORK"})
    allowed(out)
    line = out["hookSpecificOutput"]["updatedInput"]["command"]
    assert "STATEWRIGHT_ACTOR=agent" in line
    subprocess.run(["bash", "-c", line], env=clean_env(PATH=str(Path(bin_path("statewright"))
                                                                .parent) + ":" + os.environ["PATH"]),
                   cwd=proj.root, check=True, capture_output=True, timeout=60)
    proj.transition("FREE")  # the human at the terminal
    actors = [e.get("actor") for e in proj.history() if e.get("kind") == "transitioned"]
    assert actors[-3:] == ["agent", "agent", "human"], actors


def test_git_runs_hardened_against_a_planted_bare_repository(proj: Project,
                                                             tmp_path: Path) -> None:
    """A bare repository the agent could write (its files are not named `.git`) would make an
    allowed `git diff` run its `diff.external`; the rewritten line refuses the implicit bare
    repository."""
    seed = tmp_path / "seed"
    seed.mkdir()
    _git("init", "-q", cwd=seed)
    for i in range(2):
        (seed / "f").write_text(f"{i}\n")
        _git("add", "f", cwd=seed)
        _git("commit", "-qm", str(i), cwd=seed)
    planted = proj.root / "planted"
    assert _git("clone", "-q", "--bare", str(seed), str(planted), cwd=tmp_path).returncode == 0
    pwned = tmp_path / "pwned"
    with open(planted / "config", "a") as fh:  # what an allowed Write could put there
        fh.write(f"[diff]\n\texternal = touch {pwned}\n")
    line = "cd planted && git diff HEAD~1 HEAD"
    subprocess.run(["bash", "-c", line], cwd=proj.root, capture_output=True, timeout=60)
    assert pwned.exists(), "the attack itself must work without statewright"
    pwned.unlink()
    out = proj.pre("Bash", {"command": line})
    allowed(out)
    hardened = out["hookSpecificOutput"]["updatedInput"]["command"]
    r = subprocess.run(["bash", "-c", hardened], cwd=proj.root, capture_output=True, text=True,
                       timeout=60)
    # (git refuses the implicit bare repository and looks further up: no code of it runs)
    assert not pwned.exists() and r.returncode != 0, r.stderr


def test_downstream_servers_start_without_blocked_variables(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    make_project(root, tmp_path / "out", {"everything": everything_server()})
    secret = "s3cr3t-" + os.urandom(4).hex()
    env = clean_env(STATEWRIGHT_SESSION="default", SECRET_TOKEN=secret, HARMLESS_VAR="visible")
    with ProxyClient(root, env=env) as client:
        names = {t.name for t in client.list_tools()}
        tool = next(n for n in names if n.startswith("everything__") and "env" in n.lower())
        text = text_of(client.call(tool, {}))
    assert "visible" in text  # the server did print its environment
    assert secret not in text and "SECRET_TOKEN" not in text
    assert "SECRET_TOKEN" in json.dumps(WORKFLOW)  # (blocked by a workflow on the search path)
