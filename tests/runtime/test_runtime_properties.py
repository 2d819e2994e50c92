"""Hypothesis: random operation sequences over the example workflows never raise anything but a
StatewrightError, never leave a run in a state its workflow lacks, and versions only go up."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from statewright.engine import agent_may_pause
from statewright.engine.run import STATUSES
from statewright.errors import StatewrightError
from statewright.runtime import Runtime

EXAMPLES = Path(__file__).resolve().parents[2] / "workflows"
NAMES = sorted(p.stem for p in EXAMPLES.glob("*.json"))
EVENTS = sorted({e for p in EXAMPLES.glob("*.json")
                 for s in json.loads(p.read_text())["states"].values() for e in s.get("on", {})})
DATA = st.none() | st.dictionaries(
    st.sampled_from(["test_result", "coverage", "_secret", "severity", "reproduced", "x"]),
    st.sampled_from(["pass", "fail", 0, 95, True, None, "high", [1]]), max_size=3)
OPS = st.one_of(
    st.tuples(st.just("fire"), st.sampled_from([*EVENTS, "BRANCH_DONE:lint", "NOPE"]), DATA),
    st.tuples(st.just("interrupt"), st.sampled_from(["db/migrations/1.sql", ".env", "x.py",
                                                     "statewright.json", "config/app.json"]), st.none()),
    st.tuples(st.just("pause"), st.sampled_from(["agent", "human"]), st.none()),
    st.tuples(st.just("resume"), st.none(), st.none()),
    st.tuples(st.just("approve"), st.none(), st.none()),
    st.tuples(st.just("reject"), st.none(), st.none()),
    st.tuples(st.just("force"), st.sampled_from(["testing", "implementing", "nowhere"]), DATA),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(NAMES), ops=st.lists(OPS, max_size=14))
def test_random_sequences(name, ops):
    tmp = Path(tempfile.mkdtemp())
    try:
        root = tmp / "p"
        shutil.copytree(EXAMPLES, root / "workflows")
        rt = Runtime.open(root)
        rt.start(name, None)
        seen_versions: dict[str, int] = {}
        for op, arg, data in ops:
            try:
                if op == "fire":
                    rt.transition(None, arg, data)
                elif op == "interrupt":
                    rt.fire_interrupt(None, arg)
                elif op == "pause":
                    with rt.store.read() as tx:
                        paused_before = {r.run_id for r in tx.list_runs() if r.status == "paused"}
                    try:
                        rt.pause(None, actor=arg)
                    finally:  # the agent pauses only workflows that let it
                        with rt.store.read() as tx:
                            for r in tx.list_runs():
                                if r.status == "paused" and r.run_id not in paused_before:
                                    assert arg == "human" or agent_may_pause(tx.definition_of(r.run_id))
                elif op == "resume":
                    rt.resume(name, None)
                elif op == "approve":
                    rt.approve(None)
                elif op == "reject":
                    rt.reject(None, reason="no")
                elif op == "force":
                    rt.force_state(None, arg, data, actor="agent")
            except StatewrightError:
                pass
            with rt.store.read() as tx:
                for run in tx.list_runs():
                    c = tx.definition_of(run.run_id)
                    assert run.state in c.states
                    assert run.status in STATUSES
                    assert run.version >= seen_versions.get(run.run_id, 1)
                    seen_versions[run.run_id] = run.version
                    if c.states[run.state].final and run.branch is None:
                        assert run.status in ("completed", "failed")
        for h in (rt.history(r) for r in seen_versions):
            # a run's history includes its fork branches' and invoked runs': each in order
            for rid in {e["run_id"] for e in h}:
                sm = [e["version"] for e in h if e["run_id"] == rid
                      and e["kind"] not in ("refused", "tool_allowed", "tool_denied")]
                assert sm == sorted(sm)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
