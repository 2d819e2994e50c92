"""Fixtures shared by every test layer."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from hypothesis import settings

# No per-example deadline anywhere (a loaded 2-core machine is no bug). CI (CI=true) runs the
# property tests with a fixed seed sequence so a landing never depends on luck; locally every
# run explores new examples.
settings.register_profile("dev", deadline=None)
settings.register_profile("ci", deadline=None, derandomize=True, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI", "").lower() in ("1", "true", "yes") else "dev")

REPO = Path(__file__).resolve().parent.parent
VENV_BIN = Path(sys.executable).parent  # the venv the tests run in (make test: .venv/bin)
EXAMPLES = REPO / "workflows"
NPM_DIR = REPO / "tests" / "npm" / "node_modules"


@pytest.fixture(scope="session", autouse=True)
def _resident_servers(tmp_path_factory: pytest.TempPathFactory):
    """The resident hook servers the tests' hook processes start live in a directory of this
    test session (each xdist worker its own), and are stopped when it ends."""
    from statewright.hook.resident import IDLE_ENV, run_dir

    base = tmp_path_factory.mktemp("run")
    os.environ["XDG_RUNTIME_DIR"] = str(base)
    # a server per test project: each goes after 30 s without a request (not the default 10
    # minutes), so a whole run holds a few dozen at most
    os.environ[IDLE_ENV] = "30"
    yield base
    stop_resident_servers(Path(run_dir({"XDG_RUNTIME_DIR": str(base)})))
    _stop_servers_of_projects_under(str(tmp_path_factory.getbasetemp()))


def _stop_servers_of_projects_under(base: str) -> None:
    """Also stop the servers of this session's projects that a test's own environment placed
    elsewhere (a hook run with an environment built from scratch, without XDG_RUNTIME_DIR)."""
    import signal

    for proc in Path("/proc").iterdir() if Path("/proc").is_dir() else ():
        try:
            if b"statewright.hook.server" not in (proc / "cmdline").read_bytes():
                continue
            env = (proc / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(e.startswith(b"CLAUDE_PROJECT_DIR=" + base.encode()) for e in env):
            try:
                os.kill(int(proc.name), signal.SIGTERM)
            except (OSError, ValueError):
                pass


def stop_resident_servers(directory: Path) -> list[int]:
    """Stop every resident hook server whose lock is in `directory`; their pids."""
    import signal

    pids = []
    for lock in directory.glob("*.lock") if directory.is_dir() else ():
        try:
            pid = int(lock.read_text().strip() or 0)
        except (OSError, ValueError):
            continue
        if pid:
            try:
                os.kill(pid, signal.SIGTERM)
                pids.append(pid)
            except OSError:
                pass
    return pids


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test sees the developer's own statewright/Claude environment."""
    for var in ("CLAUDE_PROJECT_DIR", "STATEWRIGHT_HOME", "STATEWRIGHT_WORKFLOWS",
                "STATEWRIGHT_SESSION", "CLAUDE_CODE_SESSION_ID", "STATEWRIGHT_STORE",
                "STATEWRIGHT_MACHINE", "STATEWRIGHT_TOKEN"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture(scope="session")
def pg_server():
    """A real PostgreSQL server for this test session (each xdist worker its own: `initdb`
    and `pg_ctl` in a temp dir, a Unix socket only; `tests/pg_server.py`), started the first
    time a test asks for it and stopped when the session ends."""
    from pg_server import PgServer

    server = PgServer().start()
    yield server
    server.stop()


@pytest.fixture
def pg_url(pg_server) -> str:
    """The URL of an empty schema of its own on the test server: a store for one test."""
    return pg_server.fresh_url()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_kind(request, monkeypatch: pytest.MonkeyPatch) -> str:
    """Runs the test against each store: the project's SQLite file, then a PostgreSQL schema
    of its own (`$STATEWRIGHT_STORE`, which the processes the test starts inherit)."""
    if request.param == "postgresql":
        monkeypatch.setenv("STATEWRIGHT_STORE", request.getfixturevalue("pg_url"))
    return str(request.param)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty project root with a `workflows/` dir holding copies of the shipped examples."""
    root = tmp_path / "proj"
    root.mkdir()
    shutil.copytree(EXAMPLES, root / "workflows")
    return root


def bin_path(name: str) -> str:
    """Absolute path of a console script installed in the test venv."""
    p = VENV_BIN / name
    if not p.exists():
        raise RuntimeError(f"{name} is not installed in {VENV_BIN}; run `make test`")
    return str(p)


def hook_program() -> str:
    """The program `statewright install` names for process-form hooks in the local and user
    scopes: the native client where it was built (always on Linux with a compiler), else the
    Python hook."""
    native = VENV_BIN / "statewright-hook-native"
    return str(native) if native.exists() else bin_path("statewright-hook")


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("STATEWRIGHT_", "CLAUDE_")) or k == "STATEWRIGHT_HOOK_IDLE"}
    env.update(extra)
    return env
