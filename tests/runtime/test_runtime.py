"""Runtime: sessions, the state answer, effective runs through fork/invoke, interrupts,
approvals, pause/resume and force, all against a real store in a temp project."""

from __future__ import annotations

import sys

import pytest

from statewright import errors
from statewright.runtime import Runtime
from statewright.runtime.persist import stop_run

ANSWER_KEYS = {"run_id", "workflow", "state", "status", "version", "is_final", "instructions",
               "allowed_tools", "allowed_commands", "blocked_env", "counters", "transitions",
               "context", "pending_approval", "interrupt", "fork"}


@pytest.fixture
def rt(project):
    return Runtime.open(project)


def test_state_answer_shape(rt):
    a = rt.start("deploy-pipeline", None)
    assert ANSWER_KEYS <= set(a)
    assert set(a["counters"]) == {"iterations", "max_iterations", "files_edited",
                                  "max_files_per_state", "bytes", "context_budget_bytes",
                                  "max_edit_lines"}
    assert a["counters"]["max_iterations"] == 10 and a["allowed_tools"] == ["Read", "Grep", "Glob"]
    t = a["transitions"][0]
    assert set(t) >= {"event", "target", "guards", "requires_approval", "passes"}
    # get_state adds whether the workflow file changed since the run started
    state = rt.get_state(None)
    assert state.pop("definition")["changed_since_start"] is False
    assert state == a


def test_no_active_run_and_session_fallback(rt, monkeypatch):
    with pytest.raises(errors.StatewrightError) as ei:
        rt.get_state("agent-1")
    assert ei.value.code == errors.NO_ACTIVE_RUN
    a = rt.start("tdd-feature", None)  # default session
    assert rt.get_state("agent-1")["run_id"] == a["run_id"]  # falls back to `default`
    assert rt.effective_run("agent-1")[0].run_id == a["run_id"]
    monkeypatch.setenv("STATEWRIGHT_SESSION", "agent-2")
    assert rt.resolve_session(None) == "agent-2" and rt.resolve_session("x") == "x"
    monkeypatch.delenv("STATEWRIGHT_SESSION")
    assert rt.resolve_session(None) == "default"


def test_starting_while_a_run_governs_the_session_is_refused(rt):
    rt.start("tdd-feature", None)
    with pytest.raises(errors.StatewrightError) as ei:  # an agent cannot escape into a looser workflow
        rt.load_workflow("guarded-edits", "agent-1")
    assert ei.value.code == errors.RUN_ACTIVE and "obeys the 'default' session's" in ei.value.message
    rt.pause(None, actor="human")
    b = rt.start("guarded-edits", "agent-1")  # paused: enforcement stopped, a new run may start
    assert b["workflow"] == "guarded-edits"


def test_unknown_workflow(rt):
    with pytest.raises(errors.StatewrightError) as ei:
        rt.start("nope", None)
    assert ei.value.code == errors.UNKNOWN_WORKFLOW


def test_rejections_are_recorded_and_carry_the_state(rt):
    rt.start("tdd-feature", None)
    rt.transition(None, "READY")
    with pytest.raises(errors.StatewrightError) as ei:
        rt.transition(None, "NOPE")
    e = ei.value
    assert e.code == errors.INVALID_TRANSITION and e.state["state"] == "writing_test"
    assert "TEST_WRITTEN" in e.message
    assert rt.history()[-1]["kind"] == "refused"
    with pytest.raises(errors.StatewrightError) as ei:
        rt.transition(None, "TEST_WRITTEN", expected_version=1)
    assert ei.value.code == errors.STALE_VERSION
    assert rt.transition(None, "TEST_WRITTEN", expected_version=2)["version"] == 3


def test_approval_flow_through_the_runtime(rt):
    rt.start("demo-proxy", None)
    rt.transition(None, "PLAN_READY")
    a = rt.transition(None, "DONE")
    pa = a["pending_approval"]
    assert pa and a["state"] == "implement" and "advice" in a
    with pytest.raises(errors.StatewrightError) as ei:
        rt.transition(None, "DONE")
    assert ei.value.code == errors.PENDING_APPROVAL
    with pytest.raises(errors.StatewrightError) as ei:
        rt.approve(None, actor="agent")  # no agent can approve
    assert ei.value.code == errors.TOOL_DENIED
    r = rt.reject(None, reason="not convinced")
    assert r["pending_approval"] is None and r["state"] == "implement"
    a2 = rt.transition(None, "DONE")
    with pytest.raises(errors.StatewrightError) as ei:
        rt.approve(None, pa["approval_id"])  # the rejected one is gone
    assert ei.value.code == errors.NO_PENDING_APPROVAL
    done = rt.approve(None, a2["pending_approval"]["approval_id"])
    assert done["status"] == "completed" and done["state"] == "done"
    kinds = [h["kind"] for h in rt.history()]
    assert kinds.count("approval_requested") == 2 and "rejected_by_human" in kinds
    assert "approved" in kinds and kinds[-1] == "completed"
    with rt.store.read() as tx:
        assert tx.approval(pa["approval_id"])["status"] == "rejected"
        assert tx.approval(a2["pending_approval"]["approval_id"])["status"] == "approved"


def test_interrupt_via_runtime_and_return(rt, project):
    rt.start("guarded-edits", None)
    c = rt.effective_run(None)[1]
    pattern = next(i for i in c.interrupts if i.name == "migration_changed").file_pattern
    assert rt.fire_interrupt(None, "README.md") is None
    path = {"db/migrations/**": "db/migrations/0001_init.sql"}.get(pattern, None)
    if path is None:  # derive a matching path from the pattern
        path = pattern.replace("**/", "x/").replace("**", "x").replace("*", "a")
    a = rt.fire_interrupt(None, path)
    assert a["state"] == "migration_review"
    assert a["interrupt"] == {"name": "migration_changed", "return_to": "implementing"}
    assert rt.fire_interrupt(None, path) is None  # suppressed in the handler
    back = rt.transition(None, "VALIDATED")
    assert back["state"] == "implementing" and back["interrupt"] is None
    assert [h["kind"] for h in rt.history()][-2:] == ["interrupted", "returned"]


def test_protected_files_are_the_sources_in_use(rt, project):
    assert rt.protected_files() == set()
    rt.start("tdd-feature", None)
    assert rt.protected_files() == {str(project / "workflows" / "tdd-feature.json")}


def test_sequential_fork_through_the_runtime(rt):
    rt.start("ci-pipeline", None)
    a = rt.transition(None, "BUILD_DONE")
    assert a["state"] == "lint_run" and a["fork"]["branch"] == "lint"
    assert a["workflow"] == "ci-pipeline"
    eff, _ = rt.effective_run(None)
    assert eff.branch == "lint" and eff.session == "default/lint"
    with pytest.raises(errors.StatewrightError):
        rt.transition(None, "BRANCH_DONE:types")  # not finished
    a = rt.transition(None, "PASS")  # lint reaches its terminal: next branch
    assert a["state"] == "types_run" and a["fork"]["branches"]["lint"]["status"] == "completed"
    assert any(t["event"] == "BRANCH_DONE:lint" and t["passes"] for t in a["transitions"])
    a = rt.transition(None, "BRANCH_DONE:lint")
    assert a["state"] == "types_run"
    rt.transition(None, "PASS")
    a = rt.transition(None, "PASS")
    assert a["state"] == "publishing" and a["fork"]["joined"] is True
    a = rt.transition(None, "DONE")
    assert a["status"] == "completed"
    runs = rt.list_runs()
    assert {r["branch"] for r in runs if r["parent_run"]} == {"lint", "types", "security"}
    assert all(r["status"] == "completed" for r in runs)


def test_fork_any_join_and_failing_branch(rt):
    rt.start("incident-triage", None)
    rt.force_state(None, "investigating")
    a = rt.transition(None, "SEARCH")
    assert a["state"] == "searching_logs"
    a = rt.transition(None, "FOUND", {"where": "logs"})
    assert a["state"] == "reporting" and a["context"]["where"] == "logs"
    stopped = [r for r in rt.list_runs() if r["branch"] == "code"]
    assert stopped[0]["status"] == "failed"  # the race is over: the other branch stops

    rt.transition(None, "DONE")
    rt.start("ci-pipeline", None)
    rt.transition(None, "BUILD_DONE")
    a = rt.transition(None, "FAIL")  # the lint branch ends in `failed`, not its terminal
    assert a["state"] == "failed" and a["status"] == "completed" and a["fork"] is None


def test_invoke_through_the_runtime(rt):
    rt.start("release", None)
    a = rt.transition(None, "READY")
    assert a["workflow"] == "release-checks" and a["state"] == "running_tests"
    assert a["context"]["suite"] == "release"
    a = rt.transition(None, "FAIL")  # child reaches its final state named `failed`
    assert a["workflow"] == "release" and a["state"] == "aborted" and a["status"] == "completed"

    rt.start("release", None)
    rt.transition(None, "READY")
    rt.transition(None, "PASS")
    a = rt.transition(None, "OK", {"notes": "fine"})
    assert a["workflow"] == "release" and a["state"] == "tagging"
    assert a["context"]["release-checks"]["notes"] == "fine"
    a = rt.transition(None, "DONE")  # approval_mode "ui": a human confirms the release
    assert a["state"] == "tagging" and a["pending_approval"]
    assert "release page" in a["pending_approval"]["message"]
    a = rt.approve(None, actor="human")
    assert a["state"] == "released" and a["status"] == "completed"


def test_pause_resume_across_sessions(rt):
    rt.start("tdd-feature", "s1")
    rt.transition("s1", "READY", {"failing_test": "t1"})
    run_id = rt.effective_run("s1")[0].run_id
    with rt.store.transaction() as tx:
        run = tx.require_run(run_id)
        tx.save_with_events(run, run.with_(iterations=7), ())
    p = rt.pause("s1", actor="human")
    assert p["status"] == "paused"
    assert rt.effective_run("s1") is None  # enforcement stops
    with pytest.raises(errors.StatewrightError) as ei:
        rt.transition("s1", "TEST_WRITTEN")
    assert ei.value.code == errors.NO_ACTIVE_RUN
    r = rt.resume("tdd-feature", "s2")
    assert r["status"] == "running" and r["state"] == "writing_test" and r["run_id"] == p["run_id"]
    assert r["counters"]["iterations"] == 0 and r["context"]["failing_test"] == "t1"
    run, _ = rt.effective_run("s2")
    assert run.transition_count == 1 and run.session == "s2"
    fresh = rt.load_workflow("bugfix", "s3", resume=True)  # nothing paused: starts fresh
    assert fresh["state"] == "reproducing" and fresh["version"] == 1


def test_force_state_agent_needs_debug(rt):
    rt.start("deploy-pipeline", None)
    with pytest.raises(errors.StatewrightError) as ei:
        rt.force_state(None, "deploying", actor="agent")
    assert ei.value.code == errors.DEBUG_DISABLED
    a = rt.force_state(None, "deploying", {"coverage": 90})
    assert a["state"] == "deploying" and a["context"]["coverage"] == 90
    h = rt.history()[-1]
    assert h["kind"] == "forced" and h["actor"] == "human"


def test_parallel_branch_binding(rt):
    rt.start("ci-pipeline", "lead")
    rt.transition("lead", "BUILD_DONE")
    b = rt.load_workflow("ci-pipeline", "helper", branch="security")
    assert b["state"] == "security_run"
    assert rt.effective_run("helper")[0].branch == "security"
    rt.transition("helper", "PASS")
    a = rt.get_state("lead")
    assert a["fork"]["branches"]["security"]["status"] == "completed"


def test_a_governed_session_cannot_bind_to_another_runs_branch(rt):
    """Binding to a fork branch must not let a governed session trade its rules for another
    run's: only branches of its own run's forks are open to it."""
    rt.start("ci-pipeline", "lead")
    rt.transition("lead", "BUILD_DONE")
    rt.start("tdd-feature", "other")  # "other" is governed by its own running run
    with pytest.raises(errors.StatewrightError) as ei:
        rt.load_workflow("ci-pipeline", "other", branch="security")
    assert ei.value.code == errors.NO_ACTIVE_RUN
    assert rt.effective_run("other")[0].workflow == "tdd-feature"


def test_force_state_moves_the_sessions_own_run_not_a_branch(rt):
    top = rt.start("ci-pipeline", "lead")
    rt.transition("lead", "BUILD_DONE")  # the effective run is now the first branch
    a = rt.force_state("lead", "publishing")
    assert a["run_id"] == top["run_id"] and a["state"] == "publishing"
    assert a["status"] == "running"
    assert rt.effective_run("lead")[0].run_id == top["run_id"]


def test_hook_import_path_stays_light():
    import subprocess

    code = ("import sys, statewright.runtime, statewright.store, statewright.engine;"
            "print(','.join(m for m in ('pydantic','jsonschema','mcp','typer','rich') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


# -- pause: only a human, unless the workflow opts in ------------------------------------------

def _write_workflow(rt, doc):
    import json

    (rt.root / "workflows" / f"{doc['id']}.json").write_text(json.dumps(doc))


def test_the_agent_cannot_pause_a_workflow_that_does_not_opt_in(rt):
    a = rt.start("guarded-edits", "s1")  # meta has neither allow_agent_pause nor debug
    with pytest.raises(errors.StatewrightError) as ei:
        rt.pause("s1")  # the default actor is the agent
    e = ei.value
    assert e.code == errors.TOOL_DENIED
    assert "only a human can pause" in e.message and "`statewright pause`" in e.message
    assert "meta.allow_agent_pause" in e.message
    assert e.state["status"] == "running" and e.state["version"] == a["version"]
    assert rt.effective_run("s1") is not None  # enforcement goes on
    hist = rt.history(session="s1")
    assert hist[-1]["kind"] == "refused" and hist[-1]["data"]["code"] == errors.TOOL_DENIED
    assert hist[-1]["actor"] == "agent"
    p = rt.pause("s1", actor="human")  # `statewright pause`
    assert p["status"] == "paused" and rt.effective_run("s1") is None


def test_the_agent_may_pause_when_the_workflow_opts_in(rt):
    for meta in ({"allow_agent_pause": True}, {"debug": True}):
        doc = {"id": "optin", "meta": meta, "initial": "a",
               "states": {"a": {"allowed_tools": ["Read"], "on": {"GO": "z"}}, "z": {"type": "final"}}}
        _write_workflow(rt, doc)
        rt.start("optin", "s-opt")
        p = rt.pause("s-opt", actor="agent")
        assert p["status"] == "paused"
        assert rt.history(session="s-opt")[-1]["kind"] == "paused"
        rt.force_state("s-opt", "z", actor="human")  # finish it so the next loop can start


def test_agent_pause_needs_every_governing_workflow_to_opt_in(rt):
    """A parent that opts in cannot be used to lift the rules of an invoked child that does not."""
    doc = {"id": "lenient-parent", "meta": {"allow_agent_pause": True}, "initial": "prep",
           "states": {"prep": {"on": {"READY": {"invoke": "release-checks", "on_complete": "done",
                                                "on_fail": "done"}}},
                      "done": {"type": "final"}}}
    _write_workflow(rt, doc)
    rt.start("lenient-parent", "s2")
    a = rt.transition("s2", "READY")
    assert a["workflow"] == "release-checks"  # the child's rules apply now
    with pytest.raises(errors.StatewrightError) as ei:
        rt.pause("s2", actor="agent")
    assert ei.value.code == errors.TOOL_DENIED and "'release-checks'" in ei.value.message
    assert rt.effective_run("s2")[0].workflow == "release-checks"
    assert rt.pause("s2", actor="human")["status"] == "paused"


# -- get_state after the run ended --------------------------------------------------------------

def test_get_state_after_completion_shows_the_finished_run(rt):
    with pytest.raises(errors.StatewrightError) as ei:
        rt.get_state("s1")  # never a run: NO_ACTIVE_RUN
    assert ei.value.code == errors.NO_ACTIVE_RUN
    a = rt.start("release-checks", "s1")
    rt.transition("s1", "PASS")
    done = rt.transition("s1", "OK")
    assert done["status"] == "completed"
    g = rt.get_state("s1")
    assert ANSWER_KEYS <= set(g)
    assert g["run_id"] == a["run_id"] and g["state"] == "passed"
    assert g["status"] == "completed" and g["is_final"] is True and g["transitions"] == []
    assert "nothing is enforced" in g["advice"]
    assert rt.effective_run("s1") is None  # and nothing is enforced
    with pytest.raises(errors.StatewrightError) as ei:  # moving a finished run is still refused
        rt.transition("s1", "OK")
    assert ei.value.code == errors.NO_ACTIVE_RUN
    # a new run may start after completion, and then it is the one answered
    b = rt.start("guarded-edits", "s1")
    assert b["run_id"] != a["run_id"] and rt.get_state("s1")["run_id"] == b["run_id"]
    assert rt.get_state("s1")["status"] == "running"


def test_get_state_of_a_failed_run_and_the_default_fallback(rt):
    a = rt.start("release-checks", None)  # default session
    rt.transition(None, "FAIL")
    for session in (None, "agent-7"):  # agent-7 has no run of its own: the default's is shown
        g = rt.get_state(session)
        assert g["run_id"] == a["run_id"] and g["state"] == "failed"
        assert g["status"] == "completed" and g["is_final"] and g["transitions"] == []
    # a run stopped in a non-final state (status failed): still final for the answer
    b = rt.start("guarded-edits", "s9")
    with rt.store.transaction() as tx:
        stop_run(tx, b["run_id"], rt.clock(), "stopped by the test")
    g = rt.get_state("s9")
    assert g["run_id"] == b["run_id"] and g["status"] == "failed"
    assert g["is_final"] is True and g["transitions"] == [] and "failed" in g["advice"]
    # a session's own finished run wins over the default session's
    assert rt.get_state("s9")["run_id"] != a["run_id"]


def test_a_long_running_runtime_opens_a_store_put_in_the_place_of_its_own(project):
    """A store moved away and replaced while a long-running process (serve, the resident hook
    server) holds it open: that process reads and writes the store now at the path, not the
    file it opened (its connections would otherwise still reach the old one)."""
    resident = Runtime.open(project, resident=True)
    first = resident.start("tdd-feature", "s")["run_id"]
    assert resident.effective_run("s")[0].run_id == first
    state_dir = project / ".statewright"
    for f in state_dir.glob("state.db*"):
        f.rename(project / f"old-{f.name}")
    second = Runtime.open(project).start("tdd-feature", "s")["run_id"]
    assert second != first
    assert resident.effective_run("s")[0].run_id == second
    assert [r["run_id"] for r in resident.list_runs("s")] == [second]
