"""Checks statewright runs itself (DESIGN section 2): outcomes the agent cannot fake.

Through the real CLI (the agent's `statewright transition` and the human's) and the real
`statewright-hook` fed Claude Code's hook JSON, on a real project whose real test suite the
check runs (pytest, pytest-cov; `kubectl` is a stand-in script: there is no cluster here).
Each of the moves an agent that wants to finish early would try is refused or without effect:
claims in event data, `pytest --version`, `--collect-only`, `-k 'not failing'`, a conftest.py
that sets the exit status to 0, a test deleted."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from conftest import VENV_BIN, bin_path, clean_env

from .harness import BASH_OK, Project, allowed

pytestmark = pytest.mark.e2e

BUGGY = "def add(a, b):\n    return a - b\n\n\ndef unused(x):\n    return x * 2\n"
FIXED = "def add(a, b):\n    return a + b\n"
TESTS = ("from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
         "def test_zero():\n    assert add(0, 0) == 0\n")
CHEAT = ("def pytest_sessionfinish(session, exitstatus):\n"
         "    session.exitstatus = 0\n")


class CheckProject(Project):
    """A project with a real (failing) suite; the CLI runs with the test venv's programs on
    PATH (pytest, pytest-cov) and a `kubectl` stand-in."""

    def __init__(self, root: Path, agent: bool = True) -> None:
        super().__init__(root)
        (root / "src").mkdir(exist_ok=True)
        (root / "src" / "calc.py").write_text(BUGGY)
        (root / "tests").mkdir(exist_ok=True)
        (root / "tests" / "test_calc.py").write_text(TESTS)
        (root / "pyproject.toml").write_text(
            '[tool.pytest.ini_options]\npythonpath = ["src"]\n\n'
            '[tool.coverage.run]\nsource = ["src"]\n')
        bindir = root.parent / "bin"
        bindir.mkdir(exist_ok=True)
        kubectl = bindir / "kubectl"
        kubectl.write_text("#!/bin/sh\n# stand-in: the rollout of deployment/app\n"
                           "echo \"deployment \\\"app\\\" successfully rolled out\"\n"
                           "exit \"$(cat \"$(dirname \"$0\")/rollout-status\" 2>/dev/null "
                           "|| echo 0)\"\n")
        kubectl.chmod(0o755)
        self.bindir = bindir
        self.path_env = f"{VENV_BIN}{os.pathsep}{bindir}{os.pathsep}{os.environ.get('PATH', '')}"
        self.agent = agent

    def cli(self, *args: str, check: bool = True, human: bool = False,
            extra_env: dict | None = None) -> subprocess.CompletedProcess:
        env = clean_env(PATH=self.path_env, **(extra_env or {}))
        if self.agent and not human:
            env["STATEWRIGHT_ACTOR"] = "agent"
        r = subprocess.run([bin_path("statewright"), *args, "--project", str(self.root)],
                           capture_output=True, text=True, env=env, timeout=300)
        assert "Traceback (most recent call last)" not in r.stderr, r.stderr
        if check and r.returncode != 0:
            raise AssertionError(f"statewright {' '.join(args)} failed: {r.stderr}")
        return r

    def start(self, name: str, *extra: str) -> dict:
        return json.loads(self.cli("start", name, "--json", *extra, human=True).stdout)

    def send(self, event: str, data: dict | None = None, **kw) -> subprocess.CompletedProcess:
        args = ["transition", event, "--json"]
        if data is not None:
            args += ["--data", json.dumps(data)]
        return self.cli(*args, check=False, **kw)

    def bash(self, line: str, ok: bool = True) -> None:
        allowed(self.pre("Bash", {"command": line}))
        if ok:
            self.post("Bash", {"command": line}, BASH_OK)
        else:
            self.failure("Bash", {"command": line}, "Exit code 1\nFAILED")

    def write(self, rel: str, content: str) -> None:
        """The agent's Write tool: decided by the hook, done, recorded."""
        path = self.path(rel)
        allowed(self.pre("Write", {"file_path": path, "content": content}))
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(content)
        self.post("Write", {"file_path": path, "content": content}, {"filePath": path})

    def edit(self, rel: str, old: str, new: str) -> None:
        path = self.path(rel)
        inp = {"file_path": path, "old_string": old, "new_string": new}
        allowed(self.pre("Edit", inp))
        Path(path).write_text(Path(path).read_text().replace(old, new))
        self.post("Edit", inp, {"filePath": path})

    def checks_in_history(self) -> list[dict]:
        return [h for h in self.history() if h["kind"] == "check"]


def refused(r: subprocess.CompletedProcess, *needles: str) -> str:
    assert r.returncode != 0, r.stdout
    for n in needles:
        assert n in r.stderr, r.stderr
    return r.stderr


def moved(r: subprocess.CompletedProcess, state: str) -> dict:
    assert r.returncode == 0, r.stderr
    answer = json.loads(r.stdout)
    assert answer["state"] == state, answer
    return answer


@pytest.fixture
def proj(tmp_path: Path) -> CheckProject:
    return CheckProject(tmp_path / "proj")


# -- verified-fix: the moves, each refused ------------------------------------------------

def test_verified_fix_claims_and_partial_runs_do_not_finish_it(proj: CheckProject) -> None:
    proj.start("verified-fix")
    # claims in event data, its reserved keys included
    claim = {"tests_passed": True, "_checks": {"tests": {"ok": True, "exit_code": 0}},
             "_observed": {"commands": {"pytest": {"ok": True, "exit_code": 0}}}}
    err = refused(proj.send("DONE", claim), "GUARD_REJECTED", "check 'tests' failed")
    assert "1 failed" in err or "failed" in err
    # lines of the agent's own shell that pass without running the suite
    for line in ("pytest --version", "pytest -q --collect-only", "pytest -q -k 'not add'"):
        proj.bash(line)
        refused(proj.send("DONE"), "GUARD_REJECTED", "_checks.tests.ok")
    assert "_checks" not in proj.status()["context"]  # a refusal leaves the run as it was
    outcomes = proj.checks_in_history()
    assert len(outcomes) == 4 and not any(o["data"]["ok"] for o in outcomes)
    last = outcomes[-1]["data"]
    assert last["exit_code"] == 1 and "test_add" in last["output_tail"]
    assert last["duration_ms"] >= 0 and last["sandbox"] in ("none", "namespaces", "landlock")
    assert all(h["actor"] == "system" for h in outcomes)

    proj.edit("src/calc.py", "return a - b", "return a + b")
    answer = moved(proj.send("DONE"), "done")
    assert answer["status"] == "completed"
    assert answer["context"]["_checks"]["tests"]["ok"] is True
    assert answer["checks"]["tests"]["exit_code"] == 0


def test_verified_fix_a_conftest_that_sets_the_exit_status_is_refused(proj: CheckProject) -> None:
    proj.start("verified-fix")
    # two lines that turn every failing session into a pass: the state's read_only may refuse
    # the edit tool at once; written all the same (by the tool, or by a process statewright
    # does not see), the check still refuses
    path = proj.path("conftest.py")
    out = proj.pre("Write", {"file_path": path, "content": CHEAT})
    Path(path).write_text(CHEAT)
    if out is None:
        proj.post("Write", {"file_path": path, "content": CHEAT}, {"filePath": path})
    # run by hand, the suite now "passes"
    hand = subprocess.run([str(VENV_BIN / "pytest"), "-q", "-p", "no:cacheprovider"],
                          cwd=proj.root, capture_output=True, text=True)
    assert hand.returncode == 0 and "failed" in hand.stdout
    refused(proj.send("DONE"), "GUARD_REJECTED", "frozen paths changed", "conftest.py")
    # deleting the failing test instead: refused the same way
    os.unlink(proj.path("conftest.py"))
    os.unlink(proj.path("tests/test_calc.py"))
    refused(proj.send("DONE"), "frozen paths changed", "tests/test_calc.py")
    (proj.root / "tests" / "test_calc.py").write_text(TESTS)  # a human puts it back
    proj.edit("src/calc.py", "return a - b", "return a + b")
    moved(proj.send("DONE"), "done")


def test_the_checks_environment_is_not_the_agents(proj: CheckProject) -> None:
    proj.start("verified-fix")
    # a transition fired from the agent's shell with options for pytest in its environment
    r = proj.send("DONE", extra_env={"PYTEST_ADDOPTS": "-k 'not add and not zero'"})
    refused(r, "GUARD_REJECTED")
    assert proj.checks_in_history()[-1]["data"]["exit_code"] == 1


# -- tdd-feature: red, green, refactor only on the suite's word ----------------------------------

def test_tdd_feature_walks_to_complete_only_when_the_suite_really_passes(
        proj: CheckProject) -> None:
    (proj.root / "tests" / "test_calc.py").unlink()
    (proj.root / "src" / "calc.py").write_text(FIXED)
    proj.start("tdd-feature")
    moved(proj.send("READY", {"failing_test": "test_double"}), "writing_test")
    moved(proj.send("TEST_WRITTEN"), "testing_red")
    # claims only: there is no test at all (pytest exits 5), RED is refused
    refused(proj.send("RED", {"failing_test": "test_double"}), "GUARD_REJECTED",
            "_checks.tests.exit_code")
    moved(proj.send("GREEN_ALREADY"), "writing_test")
    proj.write("tests/test_double.py", "from calc import double\n\n\ndef test_double():\n"
               "    assert double(4) == 8\n")
    moved(proj.send("TEST_WRITTEN"), "testing_red")
    red = moved(proj.send("RED", {"failing_test": "test_double"}), "implementing")
    # (the function does not exist yet: the test cannot even be collected)
    assert red["context"]["_checks"]["tests"]["exit_code"] == 2
    assert red["context"]["_checks"]["tests"]["summary"]["errors"] == 1
    moved(proj.send("DONE"), "testing_green")
    # PASS claimed before the code exists
    refused(proj.send("PASS", {"test_result": "pass"}), "GUARD_REJECTED")
    moved(proj.send("FAIL"), "implementing")
    proj.edit("src/calc.py", "return a + b\n", "return a + b\n\n\ndef double(x):\n"
              "    return 2 * x\n")
    moved(proj.send("DONE"), "testing_green")
    green = moved(proj.send("PASS"), "refactoring")
    assert green["context"]["_checks"]["tests"]["summary"]["tests"] == 1
    done = moved(proj.send("CLEAN"), "complete")
    assert done["status"] == "completed"


# -- deploy-pipeline: no deploying on claims; DONE reachable ---------------------------------------

def test_deploy_pipeline_moves_on_the_checks_not_on_claims(proj: CheckProject) -> None:
    proj.start("deploy-pipeline")
    moved(proj.send("READY"), "testing")
    moved(proj.send("TESTED", {"test_result": "pass", "coverage": 93}), "evaluating")
    # the suite fails: EVALUATE goes to fixing whatever was claimed
    moved(proj.send("EVALUATE", {"test_result": "pass", "coverage": 93}), "fixing")
    proj.edit("src/calc.py", "return a - b", "return a + b")
    moved(proj.send("DONE"), "testing")
    moved(proj.send("TESTED"), "evaluating")
    # the tests pass, `unused` is not covered: coverage 75% < 80%
    answer = moved(proj.send("EVALUATE"), "improving_coverage")
    assert answer["context"]["_checks"]["coverage"]["ok"] is False
    assert "Required test coverage of 80% not reached" in \
        answer["context"]["_checks"]["coverage"]["output_tail"]
    # as its instructions say: a test for the uncovered code
    proj.write("tests/test_unused.py", "from calc import unused\n\n\ndef test_unused():\n"
               "    assert unused(2) == 4\n")
    moved(proj.send("DONE"), "testing")
    moved(proj.send("TESTED"), "evaluating")
    moved(proj.send("EVALUATE"), "deploying")
    # the rollout is not healthy: DONE refused
    (proj.bindir / "rollout-status").write_text("1")
    refused(proj.send("DONE", {"failed_checks": []}), "GUARD_REJECTED", "rollout")
    (proj.bindir / "rollout-status").write_text("0")
    parked = proj.send("DONE")
    assert parked.returncode == 3, parked.stderr  # (the CLI's "parked for a human")
    assert json.loads(parked.stdout)["pending_approval"] is not None
    proj.cli("approve", human=True)
    assert proj.status()["status"] == "completed"


def test_bugfix_verifying_passes_only_on_the_suite(proj: CheckProject) -> None:
    proj.start("bugfix")
    moved(proj.send("REPRODUCED", {"repro_confirmed": True, "root_cause": "sign"}),
          "diagnosing")
    parked = proj.send("PLAN_READY")
    assert json.loads(parked.stdout)["pending_approval"] is not None
    proj.cli("approve", human=True)
    moved(proj.send("DONE"), "verifying")
    refused(proj.send("PASS", {"tests": "all green"}), "GUARD_REJECTED")
    moved(proj.send("FAIL"), "fixing")
    proj.edit("src/calc.py", "return a - b", "return a + b")
    moved(proj.send("DONE"), "verifying")
    moved(proj.send("PASS"), "fixed")


# -- the runner: timeouts, process groups, reports, progress -----------------------------------------

def _flow(checks: dict, guard_field: str = "_checks.c.ok") -> dict:
    return {"id": "chk", "initial": "a", "checks": checks,
            "guards": {"ok": {"field": guard_field, "op": "eq", "value": True}},
            "states": {"a": {"on": {"GO": {"target": "b", "guard": "ok",
                                           "checks": list(checks)}}},
                       "b": {"type": "final"}}}


def _sleepers(mark: str) -> list[int]:
    """The processes whose command line holds `mark` (seen from here, whatever namespace)."""
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if mark in (d / "cmdline").read_bytes().decode("utf-8", "replace"):
                    out.append(int(d.name))
            except OSError:
                continue
    return out


def test_a_check_that_runs_too_long_is_cut_with_everything_it_started(
        proj: CheckProject) -> None:
    mark = f"{os.getpid() % 1000 + 4000}.{time.time_ns() % 10**6}"
    proj.write_workflow(_flow({"c": {"run": f"sleep {mark} & sleep {mark}; wait",
                                     "timeout_s": 1}}))
    proj.start("chk")
    t0 = time.monotonic()
    err = refused(proj.send("GO"), "GUARD_REJECTED", "timed out after 1 s")
    assert time.monotonic() - t0 < 60
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _sleepers(mark):
        time.sleep(0.1)
    assert not _sleepers(mark), "the check's processes outlived it"
    rec = proj.checks_in_history()[-1]["data"]
    assert rec["timed_out"] is True and rec["exit_code"] is None and "timed out" in err


def test_a_check_cannot_change_its_frozen_paths_while_it_runs(proj: CheckProject) -> None:
    """The check runs the agent's code (a test that rewrites the tests it is judged by, or the
    configuration): under the kernel tier the frozen paths are read-only to it."""
    from statewright.sandbox.probe import tier

    proj.write_workflow(_flow({"c": {
        "run": "echo 'def test_more(): pass' >> tests/test_calc.py; echo x > conftest.py; "
               "echo ran", "read_only": ["tests/**", "conftest.py"]}}))
    proj.start("chk")
    before = (proj.root / "tests" / "test_calc.py").read_text()
    r = proj.send("GO")
    rec = proj.checks_in_history()[-1]["data"]
    if tier().available:  # this machine's kernel binds it
        assert rec["sandbox"] == tier().kind
        assert (proj.root / "tests" / "test_calc.py").read_text() == before
        assert not (proj.root / "conftest.py").exists()
        assert "ran" in rec["output_tail"] and ("Read-only" in rec["output_tail"]
                                                or "denied" in rec["output_tail"])
        moved(r, "b")  # (the command's own status: `echo ran`)
    else:  # no kernel tier: the outcome says so, and the fingerprint catches it next time
        assert rec["sandbox"] == "none"


def test_a_check_in_a_subdirectory_with_a_junit_report_and_exit_statuses(
        proj: CheckProject) -> None:
    (proj.root / "sub").mkdir()
    report = ('<testsuites><testsuite tests="3" failures="1" errors="0" skipped="1"/>'
              '<testsuite tests="2" failures="0" errors="1" skipped="0"/></testsuites>')
    proj.write_workflow(_flow({"c": {"run": f"printf '%s' '{report}' > out.xml; pwd; exit 3",
                                     "cwd": "sub", "report": "sub/out.xml",
                                     "expect_exit": [0, 3]}}))
    proj.start("chk")
    answer = moved(proj.send("GO"), "b")
    out = answer["context"]["_checks"]["c"]
    assert out["ok"] is True and out["exit_code"] == 3
    assert out["summary"] == {"tests": 5, "failures": 1, "errors": 1, "skipped": 1}
    assert out["output_tail"].strip().endswith("/sub")


def test_a_report_left_from_before_is_not_read(proj: CheckProject) -> None:
    (proj.root / "r.xml").write_text('<testsuite tests="9" failures="0" errors="0"/>')
    proj.write_workflow(_flow({"c": {"run": "true", "report": "r.xml"}}))
    proj.start("chk")
    # the planted report is gone before the command runs; a command that writes none passes
    # nothing, whatever its exit status
    refused(proj.send("GO"), "GUARD_REJECTED", "was not written")
    last = proj.checks_in_history()[-1]["data"]
    assert last["summary"] is None and last["exit_code"] == 0 and last["ok"] is False
    assert not (proj.root / "r.xml").exists()


REPORT = ("printf '<testsuite tests=\"%s\" failures=\"%s\" errors=\"0\"/>' {t} {f} "
          "> r.xml")


@pytest.mark.parametrize("tests,failures,passes", [(3, 0, True), (3, 1, False), (0, 0, False)])
def test_an_exit_status_of_0_must_agree_with_the_report(proj: CheckProject, tests: int,
                                                        failures: int, passes: bool) -> None:
    proj.write_workflow(_flow({"c": {"run": REPORT.format(t=tests, f=failures),
                                     "report": "r.xml"}}))
    proj.start("chk")
    r = proj.send("GO")
    if passes:
        moved(r, "b")
    else:
        refused(r, "GUARD_REJECTED", "exited 0 but its report")


#: the code under test ends the process with status 0 as soon as a test imports it: no test
#: runs, and the exit status says the suite passed
EARLY_EXIT = "import os\nos._exit(0)\n\n\n"


def test_verified_fix_code_that_ends_pytest_early_does_not_pass(proj: CheckProject) -> None:
    proj.start("verified-fix")
    proj.edit("src/calc.py", "def add(a, b):", EARLY_EXIT + "def add(a, b):")
    refused(proj.send("DONE"), "GUARD_REJECTED", "test-report.xml was not written")
    last = proj.checks_in_history()[-1]["data"]
    assert last["exit_code"] == 0 and last["ok"] is False  # (the status alone said "passed")
    proj.edit("src/calc.py", EARLY_EXIT, "")
    proj.edit("src/calc.py", "return a - b", "return a + b")
    answer = moved(proj.send("DONE"), "done")
    assert answer["context"]["_checks"]["tests"]["summary"]["tests"] == 2


def test_the_cli_shows_progress_while_a_check_runs(proj: CheckProject) -> None:
    proj.write_workflow(_flow({"c": {"run": "for i in 1 2 3 4 5 6 7; do echo step $i; "
                                     "sleep 1; done", "timeout_s": 60}}))
    proj.start("chk")
    r = proj.send("GO")
    moved(r, "b")
    assert "check c [" in r.stderr and "s / 60s" in r.stderr and "step" in r.stderr


# -- state timeouts: statewright fires them itself ------------------------------------------------

TIMED = {
    "id": "timed", "initial": "waiting",
    "states": {"waiting": {"timeout_s": 2, "on_timeout": "EXPIRE", "allowed_tools": ["Read"],
                           "on": {"EXPIRE": "expired", "GO": "done"}},
               "expired": {"allowed_tools": ["Read"], "on": {"RETRY": "waiting"}},
               "done": {"type": "final"}},
}


def test_the_next_hook_call_fires_a_due_timeout_and_says_so(proj: CheckProject) -> None:
    proj.write_workflow(TIMED)
    proj.cli("start", "timed", "--session", "other", human=True)  # (no resident server yet)
    started = proj.start("timed")
    assert started["timeout"]["on_timeout"] == "EXPIRE"
    assert "times out in" in proj.cli("status", human=True).stdout
    time.sleep(2.5)
    out = proj.pre("Read", {"file_path": proj.path("src/calc.py")})
    assert out is not None
    reason = out["hookSpecificOutput"]["permissionDecisionReason"]
    assert "[STATEWRIGHT TIMEOUT]" in reason and "'expired'" in reason
    assert proj.status()["state"] == "expired"
    allowed(proj.pre("Read", {"file_path": proj.path("src/calc.py")}))  # now expired's rules
    moved(proj.send("RETRY"), "waiting")
    # the timer starts afresh on entering the state again
    assert proj.status()["timeout"]["deadline"] > time.time() + 1


def test_a_resident_server_fires_a_timeout_with_no_agent_call(proj: CheckProject) -> None:
    proj.write_workflow(TIMED)
    proj.cli("start", "verified-fix", "--session", "other", human=True)  # (the store exists)
    allowed(proj.pre("Read", {"file_path": proj.path("src/calc.py")}))  # the server starts
    proj.start("timed")  # then no call at all
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and proj.status()["state"] != "expired":
        time.sleep(0.2)
    assert proj.status()["state"] == "expired"
    assert any(h["kind"] == "timed_out" and h["actor"] == "system" for h in proj.history())
