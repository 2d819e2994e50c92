"""Firing an event (`Runtime.transition`), with the checks its transition names (DESIGN
section 2): the checks an event needs are found in its own write transaction; when there are
any, nothing is written, they run outside the store's lock (`runtime.checks`, under the kernel
tier's launcher with the state's profile), and the event is fired again with their outcomes,
which the engine records before it evaluates guards. If the run moved meanwhile, the event is
refused with STALE_VERSION: an outcome belongs to the run and version it was taken for."""

from __future__ import annotations

from .. import engine
from ..engine.run import FINISHED, PAUSED, Run
from ..errors import INVALID_ARGUMENTS, NO_ACTIVE_RUN, STALE_VERSION, StatewrightError
from ..lean import TYPE_CHECKING
from ..names import FROZEN
from .answer import answer_for_run, state_answer
from .chain import active_chain
from .persist import apply_outcome, new_id

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable
    from typing import Any

    from ..definition.compiled import Check, CompiledWorkflow
    from ..store import Tx
    from .surface import Runtime

    Chain = list[tuple[Run, CompiledWorkflow]]
    CheckProgress = Callable[[str, float, float, str], None]
    Ran = tuple[str, int, dict[str, dict[str, Any]]]


def transition(rt: Runtime, session: str, event: str, data: Any, expected_version: int | None,
               actor: str, progress: CheckProgress | None) -> dict[str, Any]:
    """`Runtime.transition` (the session resolved)."""
    if expected_version is not None and (isinstance(expected_version, bool)
                                         or not isinstance(expected_version, int)):
        raise StatewrightError(INVALID_ARGUMENTS, "expected_version must be an integer")
    rt.require_store(session)
    ran: Ran | None = None
    while True:
        now = rt.clock()
        plan = None
        with rt.store.transaction() as tx:
            top, chain, target, target_c, checked_version = event_target(
                tx, session, event, expected_version)
            outcomes = None
            if ran is None:
                needed = engine.checks_needed(target_c, target, event, checked_version)
                if needed:  # run them first, outside this transaction (nothing written)
                    plan = (top, target, target_c, needed,
                            state_profile(rt, target_c, target, tx.source_paths_in_use()))
            else:
                run_id, version, outcomes = ran
                if target.run_id != run_id or target.version != version:
                    raise StatewrightError(STALE_VERSION, f"run {target.run_id} moved while "
                                           f"the checks of '{event}' ran; send the event "
                                           "again", state=state_answer(tx, chain, top))
            if plan is None:
                out = engine.fire(target_c, target, event, data, now=now, actor=actor,
                                  expected_version=checked_version, new_id=new_id,
                                  resolve=rt.load_definition, checks=outcomes)
                apply_outcome(tx, target, out, now)
                if target is top and not out.children and not (
                        out.run.parent_run and out.run.status in FINISHED):
                    top_now = out.run  # nothing else changed: no need to read it back
                else:
                    top_now = tx.require_run(top.run_id)
                answer = answer_for_run(tx, top_now)
        if plan is None:
            break
        ran = run_checks(rt, *plan, progress)
    if not out.accepted:  # raised after COMMIT: the `rejected` history row is kept
        raise StatewrightError(out.code, out.message, state=answer)
    if ran is not None:
        answer["checks"] = ran[2]  # what statewright's own runs of the checks answered
    if out.advice:
        answer["advice"] = out.advice
    if out.parked:
        answer["advice"] = rt._decide_where(out.message, out.run.run_id)
    return answer


def event_target(tx: Tx, session: str, event: str, expected_version: int | None,
                 ) -> tuple[Run, Chain, Run, CompiledWorkflow, int | None]:
    """(top run, chain, the run `event` is for, its definition, the version to check)."""
    top, chain = active_chain(tx, session)
    if top.status == PAUSED:
        raise StatewrightError(NO_ACTIVE_RUN, f"run {top.run_id} is paused; resume it with "
                               f"`statewright resume {top.workflow}`",
                               state=state_answer(tx, chain, top))
    i, checked_version = engine.event_target([r for r, _ in chain], event, expected_version)
    target, target_c = chain[i]
    return top, chain, target, target_c, checked_version


def frozen_of(run: Run, check: str) -> dict[str, str] | None:
    """The fingerprint of `check`'s frozen paths that `run` took when it started, if any."""
    kept = run.context.get(FROZEN)
    got = kept.get(check) if isinstance(kept, dict) else None
    return got if isinstance(got, dict) else None


def run_checks(rt: Runtime, top: Run, target: Run, target_c: CompiledWorkflow,
               needed: tuple[Check, ...], base: Any, progress: CheckProgress | None) -> Ran:
    """Run the checks an event needs, outside any store transaction: (the run they were run
    for, its version, the outcomes by name). `base`: the sandbox profile of its state."""
    from . import checks as _checks

    outcomes: dict[str, dict[str, Any]] = {}
    required = getattr(target_c.states.get(target.state), "sandbox", "auto") == "required"
    for check in needed:
        frozen = frozen_of(target, check.name)
        if frozen is None:  # (a fork branch or an invoked run: the top run's)
            frozen = frozen_of(top, check.name)
        prefix, kind = _checks.sandbox_prefix(rt.root_dir, check, base)
        if prefix is None and required:
            outcomes[check.name] = _checks.unsandboxed(rt.clock())
            continue
        report = None
        if progress is not None:
            name = check.name

            def report(elapsed: float, total: float, line: str, name: str = name) -> None:
                progress(name, elapsed, total, line)

        outcomes[check.name] = _checks.run_check(
            check, rt.root_dir, frozen=frozen, prefix=prefix, sandbox=kind,
            progress=report, clock=rt.clock)
    return target.run_id, target.version, outcomes


def state_profile(rt: Runtime, compiled: CompiledWorkflow, run: Run, protected: Any) -> Any:
    """The kernel sandbox's profile of `run`'s state (`policy.confine.profile_for`): what its
    checks may not do either, before their own frozen paths are added."""
    state = compiled.states.get(run.state)
    if state is None:
        return None
    from ..policy.confine import profile_for
    from .enforcement import gate_context

    return profile_for(state, gate_context(rt, state, protected))
