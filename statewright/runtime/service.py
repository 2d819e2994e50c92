"""`Runtime`: the one service the hook, the proxy and the CLI use (docs/internals.md).

It resolves the project, the session and the run whose rules apply, loads workflows by name
(lazily importing `statewright.definition`, which needs pydantic), calls the pure engine, and
persists every outcome in one store transaction (the run, its history rows, child runs,
approvals, and the parents a finished child moves on).

Session resolution: a session bound to a fork branch (load_workflow(branch=...)) uses that
branch's run; else its own newest running-or-paused top-level run; else the `default`
session's. The *effective* run follows an invoke child and, for a fork, the first unfinished
branch (sequential mode).
"""

from __future__ import annotations

import os
import time

from ..config import Config, load_config, project_root_dir
from ..definition.compiled import BRANCH_DONE_PREFIX, CompiledWorkflow
from ..engine.run import COMPLETED, FAILED, PAUSED, RUNNING, Run
from ..errors import (
    INVALID_ARGUMENTS,
    NO_ACTIVE_RUN,
    NO_PENDING_APPROVAL,
    TOOL_DENIED,
    UNKNOWN_RUN,
    UNKNOWN_WORKFLOW,
    StatewrightError,
)
from ..store import Store, Tx

DEFAULT_SESSION = "default"
_MAX_DEPTH = 32  # nesting of invoke/fork children followed when resolving the effective run
# the engine's actor names (AGENT/HUMAN/SYSTEM), here so that defaults need no import
AGENT, HUMAN, SYSTEM = "agent", "human", "system"


class _LazyEngine:
    """`statewright.engine`, imported on first use: the hook's decisions never need the state
    machine (only transitions, interrupts and the state answer do)."""

    def __getattr__(self, name: str):
        from .. import engine as real

        globals()["engine"] = real
        return getattr(real, name)


engine = _LazyEngine()


def new_id(prefix: str) -> str:
    # os.urandom is what `secrets.token_hex` uses; `secrets` itself imports hmac, random, ...
    return f"{prefix}_{os.urandom(6).hex()}"


class Runtime:
    def __init__(self, root: str | os.PathLike[str], config: Config | None = None, *,
                 clock: Callable[[], float] = time.time) -> None:
        self.root_dir = os.fspath(root)  # the project root as a str (hot paths use this)
        self._root = None
        self.config = config if config is not None else load_config(self.root_dir)
        self.clock = clock
        self._store: Store | None = None
        self._extra: dict[str, CompiledWorkflow] = {}

    @classmethod
    def open(cls, project: str | os.PathLike[str] | None = None,
             cwd: str | os.PathLike[str] | None = None) -> Runtime:
        root = project_root_dir(project, cwd)
        return cls(root, load_config(root))

    @property
    def root(self) -> Path:
        """The project root as a `Path` (pathlib is imported on first use)."""
        if self._root is None:
            from pathlib import Path

            self._root = Path(self.root_dir)
        return self._root

    @property
    def store(self) -> Store:
        if self._store is None:
            self._store = Store.open(self.config.store_file)
        return self._store

    # -- sessions and workflows -------------------------------------------------------------
    @staticmethod
    def resolve_session(session: str | None = None) -> str:
        if session:
            return session
        return os.environ.get("STATEWRIGHT_SESSION") or DEFAULT_SESSION

    def register(self, compiled: CompiledWorkflow) -> None:
        """Make a compiled workflow startable by its id without a file (embedding, tests)."""
        self._extra[compiled.id] = compiled

    def load_definition(self, name: str) -> CompiledWorkflow:
        """Compile workflow `name` from the search path (UNKNOWN_WORKFLOW / INVALID_WORKFLOW)."""
        if name in self._extra:
            return self._extra[name]
        if not isinstance(name, str) or not name:
            raise StatewrightError(INVALID_ARGUMENTS, "a workflow name is required")
        from ..definition import load_path  # lazy: pydantic/jsonschema stay off the hook path
        from ..definition.discovery import find_workflow, make_resolver

        path = find_workflow(name, self.config)
        compiled = load_path(path, resolver=make_resolver(self.config))
        if compiled.id != name:  # pragma: no cover - find_workflow matches on id
            raise StatewrightError(UNKNOWN_WORKFLOW, f"{path} defines {compiled.id!r}, not {name!r}")
        return compiled

    def list_workflows(self) -> list[dict[str, Any]]:
        from ..definition.discovery import list_workflows

        out = []
        for e in list_workflows(self.config):
            if e.id is None or e.duplicate_of is not None:
                continue
            d = e.to_dict()
            d["valid"] = e.ok
            out.append(d)
        return out

    # -- resolution (inside a transaction) --------------------------------------------------
    def _session_top(self, tx: Tx, session: str) -> Run | None:
        return tx.resolve_session_run(session, DEFAULT_SESSION if session != DEFAULT_SESSION else None)

    def _chain(self, tx: Tx, top: Run) -> list[tuple[Run, CompiledWorkflow]]:
        chain = [(top, tx.definition_of(top.run_id))]
        cur = top
        for _ in range(_MAX_DEPTH):
            nxt_id = None
            if cur.child_run:
                nxt_id = cur.child_run
            elif cur.fork and not cur.fork.get("joined"):
                for name in cur.fork.get("order") or list(cur.fork["branches"]):
                    b = cur.fork["branches"][name]
                    if b.get("status") == RUNNING:
                        nxt_id = b["run_id"]
                        break
            if not nxt_id:
                break
            nxt = tx.get_run(nxt_id)
            if nxt is None or nxt.status not in (RUNNING, PAUSED):
                break
            chain.append((nxt, tx.definition_of(nxt.run_id)))
            cur = nxt
        return chain

    def _active(self, tx: Tx, session: str) -> tuple[Run, list[tuple[Run, CompiledWorkflow]]]:
        top = self._session_top(tx, session)
        if top is None:
            last = tx.latest_session_run(session)
            hint = (f" (the last run, {last.run_id} of '{last.workflow}', is {last.status} in "
                    f"state '{last.state}')" if last else "")
            raise StatewrightError(NO_ACTIVE_RUN, f"no active run for session '{session}'{hint}; "
                                   "start one with `statewright start NAME` or "
                                   "statewright_load_workflow")
        return top, self._chain(tx, top)

    def effective_run(self, session: str | None) -> tuple[Run, CompiledWorkflow] | None:
        """The run whose rules apply now, with its definition; None when nothing is running."""
        session = self.resolve_session(session)
        with self.store.read() as tx:
            return self.effective_in(tx, session)

    def effective_in(self, tx: Tx, session: str) -> tuple[Run, CompiledWorkflow] | None:
        """`effective_run` inside an open transaction (so a caller can read, decide and write
        in one transaction)."""
        top = self._session_top(tx, session)
        if top is None or top.status != RUNNING:
            return None
        return self._chain(tx, top)[-1]

    def protected_files(self, session: str | None = None) -> set[str]:
        """Workflow source files of the runs in use (running or paused, any session)."""
        with self.store.read() as tx:
            return tx.source_paths_in_use()

    # -- persistence of outcomes ------------------------------------------------------------
    def _apply(self, tx: Tx, before: Run | None, out: engine.Outcome,
               compiled: CompiledWorkflow, now: float) -> None:
        run = out.run
        if out.accepted and before is not None and run is not before:
            tx.save_run(run, expected_version=before.version)
        versions = {run.run_id: (run.version, run.state)}
        for child in out.children:
            tx.insert_run(child.run, child.compiled)
            versions[child.run.run_id] = (child.run.version, child.run.state)
        for ev in out.events:
            rid = ev.run_id or run.run_id
            v, st = versions.get(rid, (run.version, run.state))
            tx.append_event(rid, ev.kind, ev.actor, ev.data, now, v, st)
        if out.accepted and before is not None:
            self._sync_approvals(tx, before, run, out, now)
        for rid in out.stop:
            self._stop(tx, rid, now, f"stopped: parent run {run.run_id} moved on")
        if not out.accepted:
            return
        ended = [c.run for c in out.children if c.run.status in (COMPLETED, FAILED)]
        if run.parent_run and run.status in (COMPLETED, FAILED) and (
                before is None or before.status not in (COMPLETED, FAILED)):
            ended.append(run)
        for child in ended:
            self._settle(tx, child, now)

    def _settle(self, tx: Tx, child: Run, now: float) -> None:
        if not child.parent_run:
            return
        parent = tx.get_run(child.parent_run)
        if parent is None:
            return
        pc = tx.definition_of(parent.run_id)
        out = engine.child_settled(pc, parent, child, now)
        if out.accepted:
            self._apply(tx, parent, out, pc, now)

    def _stop(self, tx: Tx, run_id: str, now: float, reason: str) -> None:
        r = tx.get_run(run_id)
        if r is None or r.status not in (RUNNING, PAUSED):
            return
        stopped = r.with_(status=FAILED, version=r.version + 1, updated_at=now)
        tx.save_run(stopped, expected_version=r.version)
        tx.append_event(run_id, "completed", SYSTEM,
                        {"status": FAILED, "reason": reason, "state": r.state}, now,
                        stopped.version, stopped.state)
        if r.pending_approval:
            tx.decide_approval(r.pending_approval["approval_id"], "dropped", now, SYSTEM, reason)
        kids = [r.child_run] if r.child_run else []
        if r.fork and not r.fork.get("joined"):
            kids += [b["run_id"] for b in r.fork["branches"].values() if b["status"] == RUNNING]
        for k in kids:
            self._stop(tx, k, now, f"stopped: parent run {run_id} stopped")

    def _sync_approvals(self, tx: Tx, before: Run, after: Run, out: engine.Outcome,
                        now: float) -> None:
        old, new = before.pending_approval, after.pending_approval
        if new and (not old or old.get("approval_id") != new.get("approval_id")):
            tx.put_approval(after.run_id, new)
        if old and (not new or old.get("approval_id") != new.get("approval_id")):
            kinds = {e.kind for e in out.events}
            actor = next((e.actor for e in out.events), SYSTEM)
            reason = None
            if "approved" in kinds:
                status = "approved"
            elif "rejected_by_human" in kinds:
                status = "rejected"
                reason = next((e.data.get("reason") for e in out.events
                               if e.kind == "rejected_by_human"), None)
            else:
                status, reason = "dropped", "superseded"
            tx.decide_approval(old["approval_id"], status, now, actor, reason)

    # -- the state answer -------------------------------------------------------------------
    def _answer(self, tx: Tx, chain: list[tuple[Run, CompiledWorkflow]],
                top: Run | None = None) -> dict[str, Any]:
        run, compiled = chain[-1]
        top = top or chain[0][0]
        st = compiled.states.get(run.state)
        status = PAUSED if top.status == PAUSED else run.status
        transitions = engine.transitions(compiled, run) if status == RUNNING else [
            {**t, "passes": False} for t in engine.transitions(compiled, run)]
        fork_info = None
        owner = next((r for r, _ in reversed(chain) if r.fork), None)
        if run.branch is not None and run.parent_run:
            parent = next((r for r, _ in chain if r.run_id == run.parent_run), None) or tx.get_run(run.parent_run)
            if parent is not None and parent.fork:
                owner = parent
        if owner is not None and owner.fork:
            f = owner.fork
            fork_info = {
                "parent_run": owner.run_id, "branch": run.branch if run.parent_run == owner.run_id else None,
                "join": f.get("join"), "joined": bool(f.get("joined")), "event": f.get("event"),
                "on_complete": f.get("on_complete"), "on_fail": f.get("on_fail"),
                "branches": {n: {"run_id": b["run_id"], "status": b["status"],
                                 "initial": b["initial"], "terminal": b["terminal"]}
                             for n, b in f["branches"].items()},
            }
            for n, b in f["branches"].items():
                transitions.append({"event": f"{BRANCH_DONE_PREFIX}{n}", "target": None,
                                    "guards": [], "requires_approval": False,
                                    "passes": b["status"] == COMPLETED and status == RUNNING})
        return {
            "run_id": run.run_id,
            "workflow": compiled.id,
            "state": run.state,
            "status": status,
            "version": run.version,
            "is_final": bool(st and st.final),
            "instructions": st.instructions if st else None,
            "allowed_tools": None if not st or st.allowed_tools is None else list(st.allowed_tools),
            "allowed_commands": None if not st or st.allowed_commands is None else list(st.allowed_commands),
            "blocked_env": list(st.blocked_env) if st else [],
            "counters": {
                "iterations": run.iterations,
                "max_iterations": st.max_iterations if st else None,
                "files_edited": list(run.files_edited),
                "max_files_per_state": st.max_files_per_state if st else None,
                "bytes": run.bytes_read,
                "context_budget_bytes": st.context_budget_bytes if st else None,
            },
            "transitions": transitions,
            "context": run.context,
            "pending_approval": run.pending_approval,
            "interrupt": ({"name": run.interrupt, "return_to": run.interrupt_return}
                          if run.interrupt else None),
            "fork": fork_info,
        }

    def _answer_for_run(self, tx: Tx, run: Run) -> dict[str, Any]:
        """The answer for `run` itself, following its children (after it may have ended)."""
        return self._answer(tx, self._chain(tx, run), run)

    def _top_of(self, tx: Tx, run: Run) -> Run:
        cur = run
        for _ in range(_MAX_DEPTH):
            if not cur.parent_run:
                break
            p = tx.get_run(cur.parent_run)
            if p is None:
                break
            cur = p
        return cur

    # -- operations -------------------------------------------------------------------------
    def get_state(self, session: str | None = None) -> dict[str, Any]:
        """The state answer of the session's run. With no running or paused run, the session's
        latest run (else the `default` session's) when it has ended, so the agent can see that
        its run completed or failed (`ended_answer`); NO_ACTIVE_RUN only when there never was
        a run."""
        session = self.resolve_session(session)
        with self.store.read() as tx:
            top = self._session_top(tx, session)
            if top is None:
                last = tx.latest_session_run(session)
                if last is None and session != DEFAULT_SESSION:
                    last = tx.latest_session_run(DEFAULT_SESSION)
                if last is not None and last.status in (COMPLETED, FAILED):
                    return self._ended_answer(tx, last)
            top, chain = self._active(tx, session)
            return self._answer(tx, chain, top)

    def _ended_answer(self, tx: Tx, run: Run) -> dict[str, Any]:
        """The answer for a run that has completed or failed: nothing is enforced any more, no
        event moves it, and `advice` says how to go on."""
        answer = self._answer(tx, [(run, tx.definition_of(run.run_id))], run)
        answer["status"] = run.status
        answer["is_final"] = True
        answer["transitions"] = []
        how = "completed" if run.status == COMPLETED else "failed"
        answer["advice"] = (f"run {run.run_id} of workflow '{run.workflow}' has {how} in state "
                            f"'{run.state}'; nothing is enforced any more. Start a new run with "
                            "`statewright start NAME` or statewright_load_workflow.")
        return answer

    def _refuse_if_running(self, tx: Tx, session: str) -> None:
        top = self._session_top(tx, session)
        if top is not None and top.status == RUNNING:
            raise StatewrightError(
                INVALID_ARGUMENTS,
                f"session '{top.session}' already has running run {top.run_id} of workflow "
                f"'{top.workflow}' (state '{top.state}'); finish it or pause it before starting "
                "another", state=self._answer(tx, self._chain(tx, top), top))

    def start(self, name: str, session: str | None = None, input: Any = None,
              actor: str = HUMAN) -> dict[str, Any]:
        session = self.resolve_session(session)
        compiled = self.load_definition(name)
        now = self.clock()
        with self.store.transaction() as tx:
            self._refuse_if_running(tx, session)
            out = engine.start(compiled, new_id("run"), session, now, input, actor)
            if not out.accepted:
                raise out.error()
            tx.insert_run(out.run, compiled)
            self._apply(tx, None, engine.Outcome(True, out.run, out.events), compiled, now)
            return self._answer_for_run(tx, out.run)

    def load_workflow(self, name: str, session: str | None = None, resume: bool = False,
                      branch: str | None = None, input: Any = None,
                      actor: str = AGENT) -> dict[str, Any]:
        if branch is not None:
            return self._bind_branch(name, self.resolve_session(session), branch)
        if resume:
            return self.resume(name, session, actor=actor)
        return self.start(name, session, input=input, actor=actor)

    def _bind_branch(self, name: str, session: str, branch: str) -> dict[str, Any]:
        now = self.clock()
        with self.store.transaction() as tx:
            candidates = []
            top = self._session_top(tx, session)
            if top is not None:
                candidates += [r for r, _ in self._chain(tx, top)]
            if top is None or top.status != RUNNING:
                # A session that a running run governs may only bind to a branch of a fork in
                # that run's own chain: binding elsewhere would trade its rules for another's.
                candidates += [r for r in tx.running_runs() if r.workflow == name]
            for r in candidates:
                f = r.fork
                if r.workflow == name and f and not f.get("joined") and branch in f["branches"]:
                    b = f["branches"][branch]
                    if b["status"] != RUNNING:
                        raise StatewrightError(INVALID_ARGUMENTS,
                                               f"branch '{branch}' of run {r.run_id} is {b['status']}")
                    tx.bind(session, b["run_id"], now)
                    child = tx.require_run(b["run_id"])
                    return self._answer(tx, self._chain(tx, child), child)
            raise StatewrightError(NO_ACTIVE_RUN, f"no running run of '{name}' has an active fork "
                                   f"with a branch named '{branch}'")

    def transition(self, session: str | None, event: str, data: Any = None,
                   expected_version: int | None = None, actor: str = AGENT) -> dict[str, Any]:
        session = self.resolve_session(session)
        if expected_version is not None and (isinstance(expected_version, bool)
                                             or not isinstance(expected_version, int)):
            raise StatewrightError(INVALID_ARGUMENTS, "expected_version must be an integer")
        now = self.clock()
        error: StatewrightError | None = None
        with self.store.transaction() as tx:
            top, chain = self._active(tx, session)
            if top.status == PAUSED:
                raise StatewrightError(NO_ACTIVE_RUN, f"run {top.run_id} is paused; resume it with "
                                       f"`statewright resume {top.workflow}`",
                                       state=self._answer(tx, chain, top))
            eff, eff_c = chain[-1]
            target, target_c = eff, eff_c
            if isinstance(event, str) and event.startswith(BRANCH_DONE_PREFIX):
                name = event[len(BRANCH_DONE_PREFIX):]
                for r, c in reversed(chain):
                    if r.fork and name in r.fork.get("branches", {}):
                        target, target_c = r, c
                        break
            ev_version = expected_version
            if target is not eff and expected_version is not None:
                if expected_version != eff.version:
                    target, target_c = eff, eff_c  # stale: let the engine reject it on the run seen
                else:
                    ev_version = None
            out = engine.fire(target_c, target, event, data, now=now, actor=actor,
                              expected_version=ev_version, new_id=new_id,
                              resolve=self.load_definition)
            self._apply(tx, target, out, target_c, now)
            if target is top and not out.children and not (out.run.parent_run and out.run.status in (COMPLETED, FAILED)):
                top_now = out.run  # nothing else changed: no need to read it back
            else:
                top_now = tx.require_run(top.run_id)
            answer = self._answer(tx, self._chain(tx, top_now), top_now)
            if not out.accepted:
                error = StatewrightError(out.code, out.message, state=answer)
        if error is not None:
            raise error  # after COMMIT: the `rejected` history row is kept
        if out.advice:
            answer["advice"] = out.advice
        if out.parked:
            answer["advice"] = out.message
        return answer

    def pause(self, session: str | None = None, actor: str = AGENT) -> dict[str, Any]:
        """Pause the session's top run. A human may always; the agent only when every workflow
        whose rules the pause would lift (the top run's and those of the invoked / branch runs
        it governs through) opts in (`engine.agent_may_pause`); else TOOL_DENIED, recorded."""
        session = self.resolve_session(session)

        def op(c: CompiledWorkflow, top: Run, now: float,
               chain: list[tuple[Run, CompiledWorkflow]]) -> engine.Outcome:
            if actor != HUMAN:
                # the first workflow of the chain that does not let the agent pause decides
                c = next((cc for _r, cc in chain if not engine.agent_may_pause(cc)), c)
            return engine.pause(c, top, now=now, actor=actor)

        return self._top_op(session, op, with_chain=True)

    def _top_op(self, session: str, op: Callable[..., engine.Outcome],
                with_chain: bool = False) -> dict[str, Any]:
        now = self.clock()
        with self.store.transaction() as tx:
            top, chain = self._active(tx, session)
            c = tx.definition_of(top.run_id)
            out = op(c, top, now, chain) if with_chain else op(c, top, now)
            answer, error = self._commit_top(tx, top, out, c, now)
        if error is not None:
            raise error  # after COMMIT: a refusal's history row is kept
        return answer

    def _commit_top(self, tx: Tx, top: Run, out: engine.Outcome, c: CompiledWorkflow,
                    now: float) -> tuple[dict[str, Any], StatewrightError | None]:
        """Persist an outcome on the session's own run; its answer, and the refusal if any."""
        self._apply(tx, top, out, c, now)
        answer = self._answer_for_run(tx, tx.require_run(top.run_id))
        error = None if out.accepted else StatewrightError(out.code, out.message, state=answer)
        return answer, error

    def resume(self, name: str, session: str | None = None,
               actor: str = AGENT) -> dict[str, Any]:
        session = self.resolve_session(session)
        now = self.clock()
        with self.store.transaction() as tx:
            self._refuse_if_running(tx, session)
            paused = tx.newest_paused(name)
            if paused is not None:
                c = tx.definition_of(paused.run_id)
                out = engine.resume(c, paused, now=now, actor=actor, session=session)
                self._apply(tx, paused, out, c, now)
                return self._answer_for_run(tx, out.run)
        return self.start(name, session, actor=actor)  # no paused run: start fresh

    def force_state(self, session: str | None, state: str, context: Any = None,
                    actor: str = HUMAN) -> dict[str, Any]:
        session = self.resolve_session(session)
        now = self.clock()
        with self.store.transaction() as tx:
            top = self._session_top(tx, session)
            if top is None and actor == HUMAN:
                top = tx.latest_session_run(session)
            if top is None:
                top, _chain = self._active(tx, session)  # raises NO_ACTIVE_RUN
            # the session's own run jumps (engine.force_state stops its fork/invoke children)
            c = tx.definition_of(top.run_id)
            out = engine.force_state(c, top, state, context, now=now, actor=actor)
            answer, error = self._commit_top(tx, top, out, c, now)
        if error is not None:
            raise error
        return answer

    def _approval_target(self, tx: Tx, session: str, approval_id: str | None) -> Run:
        if approval_id:
            a = tx.approval(approval_id)
            if a is None:
                raise StatewrightError(NO_PENDING_APPROVAL, f"no approval request {approval_id}; "
                                       "`statewright status` shows the pending one")
            if a["status"] != "pending":
                raise StatewrightError(NO_PENDING_APPROVAL,
                                       f"approval {approval_id} is already {a['status']}")
            return tx.require_run(a["run_id"])
        top = self._session_top(tx, session)
        if top is not None:
            for r, _ in reversed(self._chain(tx, top)):
                if r.pending_approval:
                    return r
        pending = tx.pending_approvals()
        if len(pending) == 1:
            return tx.require_run(pending[0]["run_id"])
        if not pending:
            raise StatewrightError(NO_PENDING_APPROVAL, "no transition is waiting for approval")
        ids = ", ".join(p["approval_id"] for p in pending)
        raise StatewrightError(NO_PENDING_APPROVAL, f"several approvals are pending ({ids}); "
                               "name the one you mean")

    def _decide(self, session: str | None, approval_id: str | None, actor: str,
                op: Callable[[CompiledWorkflow, Run, float], engine.Outcome]) -> dict[str, Any]:
        if actor != HUMAN:
            raise StatewrightError(TOOL_DENIED, "only a human can approve or reject a transition "
                                   "(statewright approve / reject)")
        session = self.resolve_session(session)
        now = self.clock()
        with self.store.transaction() as tx:
            run = self._approval_target(tx, session, approval_id)
            c = tx.definition_of(run.run_id)
            out = op(c, run, now)
            if not out.accepted:
                raise out.error()
            self._apply(tx, run, out, c, now)
            top = self._top_of(tx, tx.require_run(run.run_id))
            return self._answer_for_run(tx, top)

    def approve(self, session: str | None = None, approval_id: str | None = None,
                actor: str = HUMAN) -> dict[str, Any]:
        return self._decide(session, approval_id, actor,
                            lambda c, r, now: engine.approve(c, r, approval_id, now=now, actor=actor))

    def reject(self, session: str | None = None, approval_id: str | None = None,
               reason: str | None = None, actor: str = HUMAN) -> dict[str, Any]:
        return self._decide(session, approval_id, actor,
                            lambda c, r, now: engine.reject_approval(c, r, approval_id, reason,
                                                                     now=now, actor=actor))

    def fire_interrupt(self, session: str | None, relpath: str) -> dict[str, Any] | None:
        """Fire the first interrupt of the effective run whose `file_pattern` matches `relpath`;
        the new state answer, or None when none fires."""
        from ..policy.paths import glob_match

        session = self.resolve_session(session)
        eff = self.effective_run(session)
        if eff is None:
            return None
        run, c = eff
        if not any(glob_match(i.file_pattern, relpath) for i in c.interrupts):
            return None  # the common case: no write transaction at all
        with self.store.transaction() as tx:
            return self.fire_interrupt_in(tx, session, relpath, self.clock())

    def fire_interrupt_in(self, tx: Tx, session: str, relpath: str,
                          now: float) -> dict[str, Any] | None:
        """`fire_interrupt` inside an open write transaction."""
        from ..policy.paths import glob_match

        top = self._session_top(tx, session)
        if top is None or top.status != RUNNING:
            return None
        chain = self._chain(tx, top)
        run, c = chain[-1]
        for i in c.interrupts:
            if glob_match(i.file_pattern, relpath) and engine.can_interrupt(c, run, i):
                out = engine.fire_interrupt(c, run, i, now=now, path=relpath)
                self._apply(tx, run, out, c, now)
                top_now = tx.require_run(top.run_id)
                return self._answer(tx, self._chain(tx, top_now), top_now)
        return None

    # -- listing ----------------------------------------------------------------------------
    def list_runs(self, session: str | None = None) -> list[dict[str, Any]]:
        with self.store.read() as tx:
            runs = tx.list_runs(session)
        return [{"run_id": r.run_id, "workflow": r.workflow, "session": r.session,
                 "state": r.state, "status": r.status, "version": r.version,
                 "transition_count": r.transition_count, "parent_run": r.parent_run,
                 "branch": r.branch, "pending_approval": (r.pending_approval or {}).get("approval_id"),
                 "created_at": r.created_at, "updated_at": r.updated_at} for r in runs]

    def history(self, run_id: str | None = None, session: str | None = None) -> list[dict[str, Any]]:
        """The history of a run and of its children (fork branches, invoked runs), in order.
        Without `run_id`: the session's current run, else its latest."""
        with self.store.read() as tx:
            if run_id is None:
                s = self.resolve_session(session)
                top = self._session_top(tx, s) or tx.latest_session_run(s)
                if top is None:
                    raise StatewrightError(NO_ACTIVE_RUN, f"session '{s}' has no runs")
                run_id = top.run_id
            if tx.get_run(run_id) is None:
                raise StatewrightError(UNKNOWN_RUN, f"no run with id {run_id}")
            ids, frontier = [run_id], [run_id]
            while frontier and len(ids) < 1000:
                marks = ",".join("?" * len(frontier))
                rows = tx.conn.execute(f"SELECT run_id FROM runs WHERE parent_run IN ({marks})",
                                       frontier).fetchall()
                frontier = [r[0] for r in rows if r[0] not in ids]
                ids += frontier
            return tx.history(ids)

    # -- enforcement (runtime/enforcement.py) -------------------------------------------------
    def authorize(self, session: str | None, call: Any) -> Any:
        from .enforcement import authorize

        return authorize(self, self.resolve_session(session), call)

    def record(self, session: str | None, result: Any) -> Any:
        from .enforcement import record

        return record(self, self.resolve_session(session), result)
