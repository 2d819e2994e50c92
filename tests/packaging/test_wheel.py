"""The wheel a user installs: built from this checkout, installed into a NEW venv, and the
README's tour walked with its console scripts in a scratch project, with nothing of the
checkout on sys.path."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO, clean_env

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("wheel")]

README = (REPO / "README.md").read_text()

# the tour's commands, in the README's order (each must appear in the README as written)
TOUR = [
    "statewright init",
    "statewright validate workflows/",
    "statewright start tdd",
    "statewright status",
    "statewright transition TEST_FAILS",
    "statewright check Bash '{\"command\": \"pytest -q && rm -rf build\"}'",
    "statewright runs",
    "statewright history",
    "statewright end --reason \"tour over\"",
]


def _run(cmd: list[str], cwd: Path, env: dict[str, str], ok: bool = True,
         timeout: int = 600) -> subprocess.CompletedProcess:
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert "Traceback" not in p.stderr, p.stderr
    if ok:
        assert p.returncode == 0, (cmd, p.stdout, p.stderr)
    return p


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """bin/ of a new venv with the wheel of this checkout installed."""
    tmp = tmp_path_factory.mktemp("wheel")
    env = clean_env(PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH", None)
    _run([sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", "--no-build-isolation",
          "-w", str(tmp / "dist"), "-q"], cwd=tmp, env=env)
    wheel = next((tmp / "dist").glob("statewright-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert "statewright/_data/schema/workflow-schema.json" in names
    assert "statewright/_data/schema/config-schema.json" in names
    assert any(n.startswith("statewright/_data/workflows/") for n in names)
    assert not any(n.startswith(("tests/", "benchmarks/")) for n in names)
    # the native hook client (built here: Linux with a C compiler), installed into bin/
    assert any(n.endswith(".data/scripts/statewright-hook-native") for n in names)
    meta = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("METADATA"))).decode()
    for field in ("License-Expression: MIT", "Project-URL: Homepage", "Classifier: ",
                  "Description-Content-Type: text/markdown"):
        assert field in meta, field
    base = getattr(sys, "_base_executable", sys.executable)
    _run([base, "-m", "venv", str(tmp / "venv")], cwd=tmp, env=env)
    _run([str(tmp / "venv" / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)],
         cwd=tmp, env=env, timeout=1200)
    return tmp / "venv" / "bin"


def test_the_readme_tour_with_the_installed_console_scripts(installed, tmp_path):
    proj = tmp_path / "scratch"
    (proj / ".git").mkdir(parents=True)
    env = clean_env(PATH=f"{installed}{os.pathsep}/usr/bin:/bin", HOME=str(tmp_path / "home"),
                    COLUMNS="80")
    env.pop("PYTHONPATH", None)
    env.pop("VIRTUAL_ENV", None)
    where = _run([str(installed / "python"), "-c",
                  "import statewright, sys; print(statewright.__file__); print(sys.path)"],
                 cwd=proj, env=env).stdout
    assert str(installed.parent) in where.splitlines()[0]
    assert str(REPO) not in where
    for cmd in TOUR:
        assert cmd in README, f"the README's tour no longer shows `{cmd}`"
    # the tour's workflow, as the README shows it
    doc = next(json.loads(block) for block in re.findall(r"```json\n(.*?)```", README, re.S)
               if '"id": "tdd"' in block)
    (proj / "workflows").mkdir()
    (proj / "workflows" / "tdd.json").write_text(json.dumps(doc, indent=2))
    outs = {}
    for cmd in TOUR:
        argv = ["bash", "-c", cmd]
        outs[cmd] = _run(argv, cwd=proj, env=env, ok=not cmd.startswith("statewright check"))
    assert "created" in outs["statewright init"].stdout
    assert "0 errors, 0 warnings" in outs["statewright validate workflows/"].stdout
    assert "red" in outs["statewright status"].stdout
    assert "green" in outs["statewright transition TEST_FAILS"].stdout
    check = outs[TOUR[5]]
    assert check.returncode == 1 and "DENIED" in check.stdout and "rm -rf build" in check.stdout
    runs = outs["statewright runs"].stdout
    assert re.search(r"^run_[0-9a-f]+\s+tdd\s", runs, re.M), runs
    assert "TEST_FAILS from red" in outs["statewright history"].stdout
    assert "ended" in outs[TOUR[-1]].stdout
    # the commands a pip user has instead of the checkout's folders
    schema = _run(["statewright", "schema"], cwd=proj, env=env).stdout
    assert json.loads(schema)["title"] == "Statewright workflow"
    listed = _run(["statewright", "list", "--json"], cwd=proj, env=env).stdout
    assert {"tdd", "starter", "tdd-feature"} <= {w["id"] for w in json.loads(listed)["workflows"]}
    assert _run(["statewright", "--version"], cwd=proj, env=env).stdout.startswith("statewright ")
    hook = subprocess.run(["statewright-hook", "pre-tool-use"], cwd=proj, env=env, input="{}",
                          capture_output=True, text=True, timeout=60)
    assert "Traceback" not in hook.stderr
    # the native client beside it answers as it does (here: handing over, no server yet)
    native = subprocess.run(["statewright-hook-native", "pre-tool-use"], cwd=proj, env=env,
                            input="{}", capture_output=True, text=True, timeout=60)
    assert (native.returncode, native.stdout) == (hook.returncode, hook.stdout)
    assert os.access(installed / "statewright-hook-native", os.X_OK)
