"""The real `statewright` console script: validate / list / show / graph."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, bin_path, clean_env

BAD_REF = {"id": "bad", "initial": "a", "states": {"a": {"on": {"GO": "nowhere"}}, "d": {"type": "final"}}}


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([bin_path("statewright"), *args], capture_output=True, text=True,
                          cwd=cwd, env=clean_env(COLUMNS="220"), timeout=60)


def no_traceback(p: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in p.stdout + p.stderr
    assert "INTERNAL" not in p.stderr


def test_validate_examples_ok(project: Path) -> None:
    p = run("validate", str(project / "workflows"), "--project", str(project))
    no_traceback(p)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "0 errors" in p.stdout and "tdd-feature" in p.stdout


def test_validate_json_reports_pointers(tmp_path: Path, project: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(BAD_REF))
    good = EXAMPLES / "bugfix.json"
    p = run("validate", str(good), str(bad), "--json", "--project", str(project))
    no_traceback(p)
    assert p.returncode == 1
    out = json.loads(p.stdout)
    assert out["ok"] is False and out["errors"] == 2
    files = {Path(f["path"]).name: f for f in out["files"]}
    assert files["bugfix.json"]["ok"] is True and files["bugfix.json"]["id"] == "bugfix"
    got = {(d["pointer"], d["code"]) for d in files["bad.json"]["diagnostics"] if d["severity"] == "error"}
    assert got == {("/states/a/on/GO", "unknown-state"), ("/states/d", "unreachable-state")}


def test_validate_human_output_groups_by_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(BAD_REF))
    p = run("validate", str(bad), "--project", str(tmp_path))
    no_traceback(p)
    assert p.returncode == 1
    assert "FAIL" in p.stdout and str(bad) in p.stdout and "/states/a/on/GO" in p.stdout
    assert "[unknown-state]" in p.stdout  # brackets printed literally, not eaten as markup


@pytest.mark.parametrize("content,needle", [
    ("{\"id\": ", "invalid JSON at line 1"),
    ("", "invalid JSON"),
    ("[1, 2]", "must be an object"),
])
def test_validate_bad_input_is_one_clear_line(tmp_path: Path, content: str, needle: str) -> None:
    f = tmp_path / "w.json"
    f.write_text(content)
    p = run("validate", str(f), "--project", str(tmp_path))
    no_traceback(p)
    assert p.returncode == 1 and needle in p.stdout


def test_validate_missing_file_and_empty_dir(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    p = run("validate", str(tmp_path / "nope.json"), str(empty), "--project", str(tmp_path))
    no_traceback(p)
    assert p.returncode == 2  # a PATH that is not there is a usage error
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert len(lines) == 2 and all(ln.startswith("error[INVALID_ARGUMENTS]: ") for ln in lines)
    assert "no such file or directory" in lines[0] and "no workflow files" in lines[1]
    pj = run("validate", str(tmp_path / "nope.json"), "--json", "--project", str(tmp_path))
    assert pj.returncode == 2 and json.loads(pj.stdout)["problems"][0]["path"].endswith("nope.json")


def test_validate_usage_errors_exit_2(tmp_path: Path) -> None:
    for args in (["validate"], ["validate", "--no-such-flag", "x.json"]):
        p = run(*args)
        no_traceback(p)
        assert p.returncode == 2, p.stderr


def test_validate_strict_fails_on_warnings(tmp_path: Path) -> None:
    f = tmp_path / "w.json"
    f.write_text(json.dumps({"id": "w", "initial": "a", "model": "x",
                             "states": {"a": {"on": {"DONE": "d"}}, "d": {"type": "final"}}}))
    assert run("validate", str(f), "--project", str(tmp_path)).returncode == 0
    p = run("validate", str(f), "--strict", "--project", str(tmp_path))
    assert p.returncode == 1 and "ignored-field" in p.stdout


def test_validate_files_together_resolve_invoke(tmp_path: Path) -> None:
    d = tmp_path / "flows"
    d.mkdir()
    (d / "parent.json").write_text(json.dumps({"id": "parent", "initial": "a", "states": {
        "a": {"on": {"GO": {"invoke": "kid", "on_complete": "d"}}}, "d": {"type": "final"}}}))
    p = run("validate", str(d / "parent.json"), "--json", "--project", str(tmp_path))
    assert p.returncode == 1 and "unknown-workflow" in p.stdout
    (d / "kid.json").write_text(json.dumps({"id": "kid", "initial": "a", "states": {
        "a": {"on": {"OK": "d"}}, "d": {"type": "final"}}}))
    p = run("validate", str(d), "--json", "--project", str(tmp_path))
    assert p.returncode == 0, p.stdout


def test_list(project: Path) -> None:
    (project / "workflows" / "broken.json").write_text("{oops")
    p = run("list", "--json", "--project", str(project))
    no_traceback(p)
    assert p.returncode == 0
    out = json.loads(p.stdout)
    by_name = {Path(w["path"]).name: w for w in out["workflows"] if Path(w["path"]).parent == project / "workflows"}
    assert by_name["tdd-feature.json"]["ok"] and by_name["tdd-feature.json"]["id"] == "tdd-feature"
    assert by_name["broken.json"]["ok"] is False
    # the shipped copies of the same ids come later on the search path and are shadowed
    shadowed = [w for w in out["workflows"] if w["id"] == "tdd-feature" and w["duplicate_of"]]
    assert shadowed and shadowed[0]["duplicate_of"] == str(project / "workflows" / "tdd-feature.json")
    p = run("list", "--project", str(project))
    no_traceback(p)
    assert p.returncode == 0 and "tdd-feature" in p.stdout and "invalid" in p.stdout


def test_show(project: Path) -> None:
    p = run("show", "deploy-pipeline", "--project", str(project))
    no_traceback(p)
    assert p.returncode == 0
    for needle in ("deploy-pipeline", "evaluating", "EVALUATE", "tests_passed", "kubectl", "needs approval"):
        assert needle in p.stdout, needle
    pj = run("show", "guarded-edits", "--json", "--project", str(project))
    data = json.loads(pj.stdout)
    assert data["id"] == "guarded-edits" and data["interrupts"][0]["name"] == "migration_changed"
    by_path = run("show", str(EXAMPLES / "bugfix.json"), "--project", str(project))
    assert by_path.returncode == 0 and "bugfix" in by_path.stdout


def test_show_unknown_and_invalid(project: Path) -> None:
    p = run("show", "no-such-flow", "--project", str(project))
    no_traceback(p)
    assert p.returncode == 1
    assert "UNKNOWN_WORKFLOW" in p.stderr and "tdd-feature" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
    (project / "workflows" / "bad.json").write_text(json.dumps(BAD_REF))
    p = run("show", "bad", "--project", str(project))
    no_traceback(p)
    assert p.returncode == 1 and "INVALID_WORKFLOW" in p.stderr and "/states/a/on/GO" in p.stderr


def test_graph(project: Path) -> None:
    p = run("graph", "ci-pipeline", "--format", "mermaid", "--project", str(project))
    no_traceback(p)
    assert p.returncode == 0 and p.stdout.startswith("stateDiagram-v2")
    p = run("graph", "ci-pipeline", "--format", "dot", "--project", str(project))
    assert p.returncode == 0 and p.stdout.startswith('digraph "ci-pipeline"')
    p = run("graph", "ci-pipeline", "--format", "svg", "--project", str(project))
    no_traceback(p)
    assert p.returncode == 2 and "mermaid or dot" in p.stderr


def test_version_is_the_package_version() -> None:
    import statewright

    r = subprocess.run([bin_path("statewright"), "--version"], capture_output=True, text=True,
                       env=clean_env(), timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == f"statewright {statewright.__version__}"
    r = subprocess.run([bin_path("statewright-hook"), "--version"], capture_output=True,
                       text=True, env=clean_env(), timeout=60, input="")
    assert "Traceback" not in r.stderr  # (the hook takes an event, not options: it refuses)


def test_show_lists_the_kernel_tier_settings(tmp_path: Path, project: Path) -> None:
    wf = tmp_path / "green.json"
    wf.write_text(json.dumps({"id": "green", "initial": "a", "states": {
        "a": {"read_only": ["tests/**", "conftest.py"], "sandbox": "required", "network": False,
              "on": {"DONE": "b"}},
        "b": {"unix_sockets": True, "on": {"DONE": "d"}}, "d": {"type": "final"}}}))
    p = run("show", str(wf), "--project", str(project))
    no_traceback(p)
    assert p.returncode == 0
    for needle in ("read only: tests/**, conftest.py", "kernel: sandbox required, no network",
                   "kernel: unix sockets allowed"):
        assert needle in p.stdout, (needle, p.stdout)
    data = json.loads(run("show", str(wf), "--json", "--project", str(project)).stdout)
    assert data["states"]["a"]["read_only"] == ["tests/**", "conftest.py"]
    assert data["states"]["b"]["sandbox"] == "auto" and data["states"]["b"]["unix_sockets"] is True
