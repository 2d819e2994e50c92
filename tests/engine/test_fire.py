"""The rules of DESIGN.md section 3, one by one, on the pure engine."""

from __future__ import annotations

import json

from statewright import errors
from statewright.definition.compiled import CompiledWorkflow
from statewright.engine import (
    agent_may_pause,
    approve,
    child_settled,
    fire,
    fire_interrupt,
    force_state,
    pause,
    reject_approval,
    resume,
    transitions,
)
from statewright.engine.run import COMPLETED, FAILED, PAUSED, RUNNING, Run

from .wf import EXAMPLES, begin, example, kinds, wf

GUARD_TIMING = {
    "id": "guard-timing", "initial": "implementing", "context": {"test_result": None},
    "states": {
        "implementing": {"on": {"TESTS_GREEN": "refactoring"}},
        "refactoring": {"on": {"CLEAN": {"target": "pre_deploy", "guard": "tests_still_pass"}}},
        "pre_deploy": {"type": "final"},
    },
    "guards": {"tests_still_pass": {"field": "test_result", "op": "eq", "value": "pass"}},
}


def test_guard_timing_walkthrough_of_the_schema_reference():
    c = wf(GUARD_TIMING)
    run = begin(c)
    # Skipping step 1: jumping to CLEAN with the data in the same call does not pass the guard.
    out = fire(c, run.with_(state="refactoring"), "CLEAN", {"test_result": "pass"}, now=2)
    assert not out.accepted and out.code == errors.GUARD_REJECTED
    assert "tests_still_pass" in out.message and "saw null" in out.message
    # Steps 1-2: TESTS_GREEN has no guard, fires, then the data merges.
    out = fire(c, run, "TESTS_GREEN", {"test_result": "pass"}, now=2)
    assert out.accepted and out.run.state == "refactoring"
    assert out.run.context["test_result"] == "pass"
    # Steps 3-4: CLEAN's guard sees the merged value.
    out2 = fire(c, out.run, "CLEAN", now=3)
    assert out2.accepted and out2.run.state == "pre_deploy" and out2.run.status == COMPLETED
    assert kinds(out2) == ["transitioned", "completed"]


def test_versions_counters_and_transition_count():
    c = wf(GUARD_TIMING)
    run = begin(c).with_(iterations=5, files_edited=("a.py",), bytes_read=10, denied=2)
    out = fire(c, run, "TESTS_GREEN", now=2)
    r = out.run
    assert (r.version, r.transition_count) == (2, 1)
    assert (r.iterations, r.files_edited, r.bytes_read, r.denied) == (0, (), 0, 0)


def test_reserved_keys_are_stripped_and_data_must_be_an_object():
    c = wf(GUARD_TIMING)
    run = begin(c)
    out = fire(c, run, "TESTS_GREEN", {"_secret": 1, "ok": 2}, now=2)
    assert out.run.context == {"test_result": None, "ok": 2}
    bad = fire(c, run, "TESTS_GREEN", ["not", "an", "object"], now=2)
    assert not bad.accepted and bad.code == errors.INVALID_ARGUMENTS
    assert bad.run is run and kinds(bad) == ["refused"]


def test_unknown_event_rejected_and_safe_next_only_for_unknown_events():
    c = example("deploy-pipeline")  # planning has safe_next: testing
    run = begin(c)
    out = fire(c, run, "WHATEVER", now=2)
    assert out.accepted and out.run.state == "testing"
    assert out.events[0].data["via"] == "safe_next"
    out = fire(c, run, "FAIL", now=2)  # explicitly defined: never redirected
    assert out.run.state == "failed"
    t = out.run.with_(status=RUNNING, state="testing")
    rej = fire(c, t, "WHATEVER", now=2)
    assert not rej.accepted and rej.code == errors.INVALID_TRANSITION
    assert "TESTED" in rej.message and "FAIL" in rej.message


def test_branched_first_passing_entry_wins_and_no_default_is_rejected():
    c = example("incident-triage")  # INVESTIGATE: is_security / severe / minor, no default
    run = begin(c)
    run = fire(c, run, "TRIAGE", now=2).run
    g = c.guards
    assert {"is_security", "severe", "minor"} <= set(g)
    # nothing set: no entry passes and there is no default
    out = fire(c, run, "INVESTIGATE", now=3)
    assert not out.accepted and out.code == errors.GUARD_REJECTED
    assert "no default" in out.message
    for name in ("is_security", "severe", "minor"):
        assert name in out.message


def test_branched_default_entry():
    c = wf({"id": "b", "initial": "a", "context": {"n": 3},
            "guards": {"big": {"field": "n", "op": "gt", "value": 5}},
            "states": {"a": {"on": {"GO": [{"target": "big", "guard": "big"}, {"target": "small"}]}},
                       "big": {"type": "final"}, "small": {"type": "final"}}})
    run = begin(c)
    ts = transitions(c, run)
    assert [(t["target"], t["passes"]) for t in ts] == [("big", False), ("small", True)]
    assert fire(c, run, "GO", now=2).run.state == "small"
    big = run.with_(context={"n": 9})
    assert [t["passes"] for t in transitions(c, big)] == [True, False]
    assert fire(c, big, "GO", now=2).run.state == "big"


def test_final_state_and_stale_version():
    c = wf(GUARD_TIMING)
    run = begin(c)
    stale = fire(c, run, "TESTS_GREEN", expected_version=7, now=2)
    assert stale.code == errors.STALE_VERSION and stale.run.version == 1
    ok = fire(c, run, "TESTS_GREEN", expected_version=1, now=2)
    assert ok.accepted
    wrong = fire(c, ok.run, "TESTS_GREEN", now=3)
    assert wrong.code == errors.INVALID_TRANSITION  # TESTS_GREEN is not an event of refactoring
    end = fire(c, ok.run.with_(context={"test_result": "pass"}), "CLEAN", now=4).run
    again = fire(c, end, "CLEAN", now=5)
    assert again.code == errors.FINAL_STATE


def test_approval_ui_parks_then_approved():
    c = example("bugfix")  # approval_mode ui, PLAN_READY requires approval
    run = begin(c)
    run = fire(c, run, "REPRODUCED", {"reproduced": True}, now=2).run
    # satisfy both guards through data of an earlier transition
    guards = {n: g for n, g in c.guards.items()}
    ctx = dict(run.context)
    for n in ("repro_confirmed", "root_cause_known"):
        g = guards[n]
        ctx[g.field] = g.value if g.op == "eq" else "x"
    run = run.with_(context=ctx)
    parked = fire(c, run, "PLAN_READY", {"plan": "fix it"}, now=3)
    assert parked.accepted and parked.parked
    r = parked.run
    assert r.state == "diagnosing" and r.pending_approval.event == "PLAN_READY"
    assert r.version == run.version + 1 and kinds(parked) == ["approval_requested"]
    second = fire(c, r, "CANNOT_REPRODUCE", now=4)
    assert second.code == errors.PENDING_APPROVAL
    assert all(not t["passes"] for t in transitions(c, r))
    wrong = approve(c, r, "apr_nope", now=5)
    assert wrong.code == errors.NO_PENDING_APPROVAL
    ok = approve(c, r, r.pending_approval.approval_id, now=5)
    assert ok.accepted and ok.run.state == "fixing" and ok.run.context["plan"] == "fix it"
    assert kinds(ok)[:2] == ["approved", "transitioned"] and ok.run.pending_approval is None


def test_approval_rejected_by_human_keeps_state():
    c = example("demo-proxy")
    run = fire(c, begin(c), "PLAN_READY", now=2).run
    parked = fire(c, run, "DONE", now=3).run
    out = reject_approval(c, parked, None, "not yet", now=4)
    assert out.accepted and out.run.state == "implement" and out.run.pending_approval is None
    assert out.events[0].data["reason"] == "not yet"
    assert out.run.version == parked.version + 1
    assert fire(c, out.run, "DONE", now=5).parked  # can ask again


def test_approval_mode_none_completes_with_advice():
    doc = json.loads((EXAMPLES / "release.json").read_text())
    doc["meta"]["approval_mode"] = "none"  # (shipped as "ui": a human confirms a release)
    c = wf(doc)
    run = begin(c).with_(state="tagging")
    out = fire(c, run, "DONE", now=2)
    assert out.accepted and not out.parked and out.run.state == "released"
    assert out.advice and "release page" in out.advice


def test_interrupt_fires_from_handlerless_states_and_is_suppressed_in_its_handler():
    c = example("guarded-edits")
    mig = next(i for i in c.interrupts if i.name == "migration_changed")
    sec = next(i for i in c.interrupts if i.name == "secrets_touched")
    run = begin(c).with_(iterations=3)
    out = fire_interrupt(c, run, mig, now=2, path="db/migrations/001.sql")
    r = out.run
    assert out.accepted and r.state == mig.target and r.interrupt == mig.name
    assert r.interrupt_return == "implementing" and r.iterations == 0
    assert kinds(out) == ["interrupted"] and r.version == 2
    # the same interrupt again while its handler is active: nothing (no re-entry)
    assert not fire_interrupt(c, r, mig, now=3).accepted
    back = fire(c, r, "VALIDATED", now=4)
    assert back.accepted and back.run.state == "implementing" and kinds(back) == ["returned"]
    assert back.run.interrupt is None and back.run.interrupt_return is None
    # from another handler-less state it fires again
    t = fire(c, back.run, "DONE", now=5).run
    assert fire_interrupt(c, t, sec, now=6).run.interrupt_return == "testing"


def test_another_interrupt_while_a_handler_is_active_is_queued_and_fires_at_return():
    c = example("guarded-edits")
    mig = next(i for i in c.interrupts if i.name == "migration_changed")
    sec = next(i for i in c.interrupts if i.name == "secrets_touched")
    r = fire_interrupt(c, begin(c), mig, now=2, path="db/migrations/001.sql").run
    q = fire_interrupt(c, r, sec, now=3, path=".env")
    assert q.accepted and kinds(q) == ["interrupt_queued"] and q.run.state == mig.target
    assert q.run.interrupt_queue == (("secrets_touched", ".env"),)
    assert q.run.version == r.version  # queued, not moved
    assert not fire_interrupt(c, q.run, sec, now=3).accepted  # queued once
    back = fire(c, q.run, "VALIDATED", now=4)  # $return: the queued one fires at once
    assert kinds(back) == ["returned", "interrupted"]
    assert back.run.state == sec.target and back.run.interrupt == sec.name
    assert back.run.interrupt_return == "implementing" and back.run.interrupt_queue == ()
    assert Run.from_dict(q.run.to_dict()) == q.run


def test_return_without_interrupt_is_rejected():
    c = example("guarded-edits")
    run = begin(c).with_(state="migration_review")
    out = fire(c, run, "VALIDATED", now=2)
    assert out.code == errors.INVALID_TRANSITION and "no interrupt is active" in out.message


def test_interrupt_does_not_fire_in_final_or_paused_runs():
    c = example("guarded-edits")
    mig = c.interrupts[0]
    run = begin(c)
    assert not fire_interrupt(c, run.with_(state="complete", status=COMPLETED), mig, now=2).accepted
    assert not fire_interrupt(c, run.with_(status=PAUSED), mig, now=2).accepted


def _settle_all(c: CompiledWorkflow, parent, children: dict, now=10):
    """Apply child_settled for each ended child, like the runtime does."""
    for ch in children.values():
        out = child_settled(c, parent, ch, now)
        if out.accepted:
            parent = out.run
    return parent


def test_fork_join_all():
    c = example("ci-pipeline")
    run = begin(c)
    out = fire(c, run, "BUILD_DONE", {"build": "ok"}, now=2)
    assert out.accepted and kinds(out)[0] == "forked"
    parent = out.run
    kids = {ch.run.branch: ch.run for ch in out.children}
    assert list(kids) == ["lint", "types", "security"]
    assert all(k.session == "s/" + b and k.context["build"] == "ok" for b, k in kids.items())
    # BRANCH_DONE before the branch reached its terminal is refused
    early = fire(c, parent, "BRANCH_DONE:lint", now=3)
    assert early.code == errors.INVALID_TRANSITION and "lint_done" in early.message
    # the lint branch reaches its terminal: it completes by itself
    lint = fire(c, kids["lint"], "PASS", {"lint": "clean"}, now=3).run
    assert lint.status == COMPLETED and lint.state == "lint_done"
    s = child_settled(c, parent, lint, 4)
    parent = s.run
    assert s.accepted and kinds(s) == ["branch_done"] and parent.state == "building"
    assert fire(c, parent, "BRANCH_DONE:lint", now=5).accepted
    types = fire(c, kids["types"], "PASS", now=6).run
    parent = child_settled(c, parent, types, 6).run
    assert parent.state == "building"
    sec = fire(c, kids["security"], "PASS", now=7).run
    joined = child_settled(c, parent, sec, 7)
    assert joined.accepted and joined.run.state == "publishing" and "joined" in kinds(joined)
    assert joined.run.context["lint"] == "clean"  # branch results flow back


def test_fork_join_any_stops_the_rest():
    c = example("incident-triage")
    run = begin(c).with_(state="investigating")
    out = fire(c, run, "SEARCH", now=2)
    kids = {ch.run.branch: ch.run for ch in out.children}
    code = fire(c, kids["code"], "FOUND", now=3).run
    joined = child_settled(c, out.run, code, 3)
    assert joined.run.state == "reporting"
    assert joined.stop == (kids["logs"].run_id,)


def test_failing_branch_reaches_on_fail_or_fails_the_run():
    c = example("ci-pipeline")
    out = fire(c, begin(c), "BUILD_DONE", now=2)
    kids = {ch.run.branch: ch.run for ch in out.children}
    bad = fire(c, kids["types"], "FAIL", now=3).run
    assert bad.status == FAILED and bad.state == "failed"  # a final state other than its terminal
    s = child_settled(c, out.run, bad, 3)
    assert s.run.state == c.states["building"].on["BUILD_DONE"].fork.on_fail
    assert set(s.stop) == {kids["lint"].run_id, kids["security"].run_id}
    # without on_fail the run fails
    doc = {"id": "f", "initial": "a", "states": {
        "a": {"on": {"GO": {"fork": {"branches": {"x": {"initial": "x1", "terminal": "x2"}},
                                     "on_complete": "done"}}}},
        "x1": {"on": {"OK": "x2", "BAD": "oops"}}, "x2": {"type": "final"},
        "oops": {"type": "final"}, "done": {"type": "final"}}}
    c2 = wf(doc)
    o = fire(c2, begin(c2), "GO", now=2)
    x = fire(c2, o.children[0].run, "BAD", now=3).run
    s2 = child_settled(c2, o.run, x, 3)
    assert s2.run.status == FAILED and s2.run.fork is None


def test_invoke_child_completes_or_fails():
    parent_c = example("release")
    child_c = example("release-checks")
    resolve = {"release-checks": child_c}.__getitem__
    run = begin(parent_c)
    out = fire(parent_c, run, "READY", {"version": "1.2"}, now=2, resolve=resolve)
    assert out.accepted and kinds(out) == ["invoked", "started"]
    p = out.run
    child = out.children[0].run
    assert p.state == "preparing" and p.child_run == child.run_id and p.context["version"] == "1.2"
    assert child.parent_run == p.run_id and child.context["suite"] == "release"
    # the parent waits: its own events are refused
    assert fire(parent_c, p, "READY", now=3, resolve=resolve).code == errors.INVALID_TRANSITION
    ok = fire(child_c, fire(child_c, child, "PASS", {"checked": True}, now=3).run, "OK", now=4).run
    assert ok.status == COMPLETED and ok.state == "passed"
    done = child_settled(parent_c, p, ok, 5)
    assert done.run.state == "tagging" and done.run.context["release-checks"]["checked"] is True
    bad = fire(child_c, child, "FAIL", now=3).run
    assert bad.status == FAILED  # final state named `failed`
    failed = child_settled(parent_c, p, bad, 4)
    assert failed.run.state == "aborted" and "release-checks" not in failed.run.context


def test_invoke_unknown_workflow_is_rejected():
    c = example("release")

    def resolve(name):
        raise errors.StatewrightError(errors.UNKNOWN_WORKFLOW, f"no workflow named {name!r}")

    out = fire(c, begin(c), "READY", now=2, resolve=resolve)
    assert not out.accepted and out.code == errors.UNKNOWN_WORKFLOW


def test_pause_and_resume_reset_iterations_keep_context_and_count():
    c = wf(GUARD_TIMING)
    run = fire(c, begin(c), "TESTS_GREEN", {"test_result": "pass"}, now=2).run.with_(iterations=4)
    p = pause(c, run, now=3, actor="human")
    assert p.run.status == PAUSED and p.run.version == run.version + 1
    assert p.events[0].kind == "paused" and p.events[0].actor == "human"
    assert fire(c, p.run, "CLEAN", now=4).code == errors.RUN_NOT_RUNNING
    assert pause(c, p.run, now=4, actor="human").code == errors.RUN_NOT_RUNNING
    r = resume(c, p.run, now=5, session="other")
    assert r.run.status == RUNNING and r.run.iterations == 0 and r.run.session == "other"
    assert r.run.context["test_result"] == "pass" and r.run.transition_count == 1
    assert r.run.version == p.run.version + 1


def test_the_agent_may_pause_only_when_the_workflow_opts_in():
    """Pausing lifts every rule: the agent may pause only with meta.allow_agent_pause (or
    meta.debug); a human always may."""
    plain = wf(GUARD_TIMING)
    run = begin(plain)
    assert not agent_may_pause(plain)
    for actor in ("agent", "system", "someone"):  # anyone but the human needs the opt-in
        refused = pause(plain, run, now=2, actor=actor)
        assert not refused.accepted and refused.code == errors.TOOL_DENIED and refused.run is run
        assert "only a human can pause" in refused.message and "`statewright pause`" in refused.message
        assert "allow_agent_pause" in refused.message and "TESTS_GREEN" in refused.message
        assert kinds(refused) == ["refused"] and refused.events[0].data["code"] == errors.TOOL_DENIED
    assert pause(plain, run, now=2).code == errors.TOOL_DENIED  # the default actor is the agent
    assert pause(plain, run, now=2, actor="human").accepted
    for meta in ({"allow_agent_pause": True}, {"debug": True}):
        c = wf({**GUARD_TIMING, "meta": meta})
        assert agent_may_pause(c)
        out = pause(c, begin(c), now=2, actor="agent")
        assert out.accepted and out.run.status == PAUSED and out.events[0].actor == "agent"
    for meta in ({"allow_agent_pause": False}, {"allow_agent_pause": "yes"}, {"debug": False}):
        c = compile_doc_unchecked({**GUARD_TIMING, "meta": meta})
        assert not agent_may_pause(c)
        assert pause(c, begin(c), now=2, actor="agent").code == errors.TOOL_DENIED


def compile_doc_unchecked(doc):
    """A compiled workflow built directly (the schema would refuse a non-boolean opt-in)."""
    c = wf({k: v for k, v in doc.items() if k != "meta"})
    return c.replace(meta=dict(doc["meta"]))


def test_force_state_merges_context_and_needs_debug_for_the_agent():
    c = example("deploy-pipeline")  # no meta.debug
    run = begin(c)
    refused = force_state(c, run, "deploying", {"x": 1}, now=2, actor="agent")
    assert refused.code == errors.DEBUG_DISABLED and refused.run is run
    ok = force_state(c, run, "deploying", {"x": 1}, now=2, actor="human")
    assert ok.accepted and ok.run.state == "deploying"
    assert ok.run.context["x"] == 1 and ok.run.context["environment"] == "staging"  # merged
    assert kinds(ok) == ["forced"] and ok.events[0].actor == "human"
    dbg = example("tdd-feature")  # meta.debug: true
    assert force_state(dbg, begin(dbg), "refactoring", {"_x": 1}, now=2, actor="agent").run.context.get("_x") is None
    assert force_state(c, run, "nowhere", now=2).code == errors.INVALID_ARGUMENTS
    final = force_state(c, run, "complete", now=2)
    assert final.run.status == COMPLETED and "completed" in kinds(final)
