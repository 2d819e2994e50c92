"""`Runtime`: the one service the hook, the proxy and the CLI use (DESIGN.md section 1).

It resolves the project, the session and the run whose rules apply (`chain`), loads workflows
by name (lazily importing `statewright.definition`, which needs pydantic), calls the pure
engine, and persists every outcome in one store transaction (`persist`); state-changing
operations answer the state answer (`answer`). Tool calls are decided and accounted by
`authorize` / `record` (`enforcement`); what the agent is told is worded in `messages`.
"""

from __future__ import annotations

import os
import time

from .. import engine
from ..config import Config, load_config, project_root_dir, refuse_venv_store
from ..engine.run import AGENT, FINISHED, HUMAN, PAUSED, RUNNING, Run
from ..errors import (
    INVALID_ARGUMENTS,
    NO_ACTIVE_RUN,
    NO_PENDING_APPROVAL,
    TOOL_DENIED,
    UNKNOWN_RUN,
    UNKNOWN_WORKFLOW,
    StatewrightError,
)
from ..lean import TYPE_CHECKING
from ..names import STORE_FILE
from ..store import Store, Tx, open_store
from . import chain as chains
from .answer import answer_for_run, definition_status, ended_answer, state_answer
from .chain import DEFAULT_SESSION, active_chain, chain_of, effective_in, session_top, top_of
from .persist import apply_outcome, new_id, start_run

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

    from ..definition.compiled import CompiledWorkflow, State
    from ..policy.types import Decision, ToolCall, ToolResult
    from .enforcement import RecordOutcome

    Chain = list[tuple[Run, CompiledWorkflow]]
    CheckProgress = Callable[[str, float, float, str], None]


AGENT_CALL_TTL_S = 120.0  # how long the proxy honours the hook's note of a sub-agent's call


_LOADED: list[Any] = []  # runtime.enforcement, once imported


def _enforcement() -> Any:
    # the policy layer loads with the first tool call decided (not with `statewright.runtime`);
    # kept: `from . import` runs the import system's `_handle_fromlist` (Python) every time
    if not _LOADED:
        from . import enforcement

        _LOADED.append(enforcement)
    return _LOADED[0]


class Runtime:
    def __init__(self, root: str | os.PathLike[str], config: Config | None = None, *,
                 clock: Callable[[], float] = time.time, resident: bool = False) -> None:
        self.root_dir = os.fspath(root)  # the project root as a str (hot paths use this)
        self._root: Path | None = None
        self.config = config if config is not None else load_config(self.root_dir)
        self.clock = clock
        self.resident = resident  # a long-running process (serve, ui): see `Store`
        self._store: Store | None = None
        self._store_dir: str | None = None  # (where the store lives is read once: hot paths)
        self._store_file: str | None = None
        self.store_url = self.config.store_url  # a team's shared store; None: the SQLite file
        # the session a file watcher of this process (serve's watchdog) fires interrupts for:
        # its calls leave out the per-call comparison of file marks (`runtime.watch`)
        self.watching: str | None = None
        self.gate_facts: Any = None  # the last call's gate facts (`enforcement.gate_context`)
        # `runtime.timeouts`: the store's change mark at the last look, and the next deadline
        self._timeouts_seen: int | None = None

    @classmethod
    def open(cls, project: str | os.PathLike[str] | None = None,
             cwd: str | os.PathLike[str] | None = None, *, resident: bool = False) -> Runtime:
        root = project_root_dir(project, cwd)
        return cls(root, load_config(root), resident=resident)

    @property
    def root(self) -> Path:
        """The project root as a `Path` (pathlib is imported on first use)."""
        if self._root is None:
            from pathlib import Path

            self._root = Path(self.root_dir)
        return self._root

    @property
    def store_dir(self) -> str:
        """The store's directory (`config.store_dir_str`, read once)."""
        d = self._store_dir
        if d is None:
            d = self._store_dir = self.config.store_dir_str
        return d

    @property
    def store_file(self) -> str:
        f = self._store_file
        if f is None:
            f = self._store_file = os.path.join(self.store_dir, STORE_FILE)
        return f

    @property
    def store(self) -> Store:
        if self._store is None:  # the project's SQLite file, or a team's shared store
            refuse_venv_store(self.store_dir, self.store_file)
            self._store = open_store(self)
        return self._store

    def close(self) -> None:
        """Close the store's connections (a long-running process letting this runtime go)."""
        store, self._store = self._store, None
        if store is not None:
            store.close()

    # -- sessions and workflows -------------------------------------------------------------
    @staticmethod
    def resolve_session(session: str | None = None) -> str:
        if session:
            return session
        return os.environ.get("STATEWRIGHT_SESSION") or DEFAULT_SESSION

    def load_definition(self, name: str) -> CompiledWorkflow:
        """Compile workflow `name` from the search path (UNKNOWN_WORKFLOW / INVALID_WORKFLOW)."""
        if not isinstance(name, str) or not name:
            raise StatewrightError(INVALID_ARGUMENTS, "a workflow name is required")
        from ..definition import load_path  # lazy: pydantic/jsonschema stay off the hook path
        from ..definition.discovery import find_workflow, make_resolver

        path = find_workflow(name, self.config)
        compiled = load_path(path, resolver=make_resolver(self.config))
        if compiled.id != name:  # pragma: no cover - find_workflow matches on id
            raise StatewrightError(UNKNOWN_WORKFLOW,
                                   f"{path} defines {compiled.id!r}, not {name!r}")
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

    def effective_run(self, session: str | None) -> tuple[Run, CompiledWorkflow] | None:
        """The run whose rules apply now, with its definition; None when nothing is running.
        A project without a store file has no runs: nothing is created on disk for it (a
        user-scope install touches every project)."""
        if not self.has_store():
            return None
        with self.store.read() as tx:
            return effective_in(tx, self.resolve_session(session))

    def has_store(self) -> bool:
        """Whether the project has a store file (reading needs none: no store, no runs; DESIGN
        section 5). Another file put in the place of the one opened is opened afresh."""
        store = self._store
        if store is None:
            return self.store_url is not None or os.path.exists(self.store_file)
        here = store.still_here()
        if here is False:
            self.close()  # (the next use opens the file that is there now)
        return here is not None

    def require_store(self, session: str, code: str = NO_ACTIVE_RUN) -> None:
        """No store, no runs: refuse before opening one (a failed command creates nothing)."""
        if not self.has_store():
            raise chains.no_runs_yet(code, session, self.root_dir)

    def protected_files(self) -> set[str]:
        """Workflow source files of the runs in use (running or paused, any session)."""
        if not self.has_store():
            return set()
        with self.store.read() as tx:
            return set(tx.source_paths_in_use())

    # -- the state answer -------------------------------------------------------------------
    def get_state(self, session: str | None = None) -> dict[str, Any]:
        """The state answer of the session's run. With no running or paused run, the session's
        (else `default`'s) latest run when it has ended, so the agent sees that it completed or
        failed (`ended_answer`); NO_ACTIVE_RUN only when there never was a run."""
        session = self.resolve_session(session)
        if not self.has_store():
            raise StatewrightError(NO_ACTIVE_RUN, f"no runs yet in this project ({self.root_dir}); "
                                   "start one with `statewright start NAME` or "
                                   "statewright_load_workflow")
        with self.store.read() as tx:
            if session_top(tx, session) is None:
                last = tx.latest_session_run(session)
                if last is None and session != DEFAULT_SESSION:
                    last = tx.latest_session_run(DEFAULT_SESSION)
                if last is not None and last.status in FINISHED:
                    return ended_answer(tx, last)
            top, chain = active_chain(tx, session)
            answer = state_answer(tx, chain, top)
            status = definition_status(tx, answer["run_id"])
            if status is not None:
                answer["definition"] = status
            return answer

    # -- starting ---------------------------------------------------------------------------
    def _refuse_if_running(self, tx: Tx, session: str) -> None:
        top = session_top(tx, session)
        if top is not None and top.status == RUNNING:
            raise chains.run_in_the_way(session, top, answer_for_run(tx, top))

    def start(self, name: str, session: str | None = None, input: Any = None,
              actor: str = HUMAN) -> dict[str, Any]:
        session = self.resolve_session(session)
        compiled = self.load_definition(name)
        frozen = None
        if any(c.read_only for c in compiled.checks.values()):
            from .checks import fingerprints

            frozen = fingerprints(self.root_dir, compiled)
        now = self.clock()
        with self.store.transaction() as tx:
            self._refuse_if_running(tx, session)
            out = engine.start(compiled, new_id("run"), session, now, input, actor,
                               frozen=frozen)
            if not out.accepted:
                raise out.error()
            start_run(tx, out, compiled, now)
            return answer_for_run(tx, out.run)

    def load_workflow(self, name: str, session: str | None = None, resume: bool = False,
                      branch: str | None = None, input: Any = None,
                      actor: str = AGENT) -> dict[str, Any]:
        if branch is not None:
            if not isinstance(name, str) or not name:
                raise StatewrightError(INVALID_ARGUMENTS, "a workflow name is required")
            return self.fork(session, branch, actor=actor, workflow=name)
        if resume:
            return self.resume(name, session, actor=actor)
        return self.start(name, session, input=input, actor=actor)

    # -- sub-agents calling statewright's own tools through the proxy --------------------------
    def note_agent_call(self, session: str, agent_key: str, tool: str, args: Any) -> None:
        """The hook saw a sub-agent call one of statewright's own tools; the proxy answering it
        sees only the session (one MCP connection), so the key is left for it."""
        from . import forks

        forks.note_agent_call(self, session, agent_key, tool, args)

    def agent_for_call(self, session: str, tool: str, args: Any) -> str:
        """The key the proxy acts for: the sub-agent the hook saw make this exact call (oldest
        first, within `AGENT_CALL_TTL_S`), else the session."""
        from . import forks

        return forks.agent_for_call(self, session, tool, args, AGENT_CALL_TTL_S)

    def fork(self, session: str | None = None, branch: str | None = None, actor: str = AGENT,
             workflow: str | None = None) -> dict[str, Any]:
        """Without `branch`: the fork the session's run waits on or works in, its branches and
        who works each. With `branch`: bind the caller (a session, or a sub-agent's key) to
        it; its calls obey the branch's rules from then on (`runtime.forks`). A session that a
        running run governs may only bind to a branch of a fork in that run's own chain:
        binding elsewhere would trade its rules for another's."""
        from . import forks

        session = self.resolve_session(session)
        if branch is None:
            if not self.has_store():
                raise StatewrightError(NO_ACTIVE_RUN, "no runs yet in this project")
            with self.store.read() as tx:
                return forks.fork_overview(tx, session)
        self.require_store(session)
        with self.store.transaction() as tx:
            answer, error = forks.bind(tx, session, branch, self.clock(), actor, workflow)
        if error is not None:
            raise error
        return answer

    # -- moving the run ---------------------------------------------------------------------
    def transition(self, session: str | None, event: str, data: Any = None,
                   expected_version: int | None = None, actor: str = AGENT,
                   progress: CheckProgress | None = None) -> dict[str, Any]:
        """Fire `event` (`runtime.transition`). When its transition names checks, statewright
        runs them first, outside the store's lock, and the engine records their outcomes before
        it evaluates guards; `progress(check, elapsed_s, timeout_s, last_line)` meanwhile."""
        from .transition import transition

        return transition(self, self.resolve_session(session), event, data, expected_version,
                          actor, progress)

    def pause(self, session: str | None = None, actor: str = AGENT) -> dict[str, Any]:
        """Pause the session's top run. A human may always; the agent only when every workflow
        whose rules the pause would lift (the top run's and those of the invoked / branch runs
        it governs through) opts in (`engine.agent_may_pause`); else TOOL_DENIED, recorded."""

        def op(c: CompiledWorkflow, top: Run, now: float, chain: Chain) -> engine.Outcome:
            if actor != HUMAN:
                # the first workflow of the chain that does not let the agent pause decides
                c = next((cc for _r, cc in chain if not engine.agent_may_pause(cc)), c)
            return engine.pause(c, top, now=now, actor=actor)

        return self._on_top_run(self.resolve_session(session), op)

    def end(self, session: str | None = None, reason: str | None = None,
            actor: str = AGENT) -> dict[str, Any]:
        """Close the session's top run for good (status `ended`, the reason recorded); only a
        human may (`engine.end`), else TOOL_DENIED, recorded."""

        def op(c: CompiledWorkflow, top: Run, now: float, chain: Chain) -> engine.Outcome:
            return engine.end(top, now=now, actor=actor, reason=reason)

        return self._on_top_run(self.resolve_session(session), op)

    def _on_top_run(self, session: str,
                    op: Callable[[CompiledWorkflow, Run, float, Chain], engine.Outcome],
                    ) -> dict[str, Any]:
        self.require_store(session)
        now = self.clock()
        with self.store.transaction() as tx:
            top, chain = active_chain(tx, session)
            answer, error = self._commit_top(tx, top, op(chain[0][1], top, now, chain), now)
        if error is not None:
            raise error  # after COMMIT: a refusal's history row is kept
        return answer

    def _commit_top(self, tx: Tx, top: Run, out: engine.Outcome,
                    now: float) -> tuple[dict[str, Any], StatewrightError | None]:
        """Persist an outcome on the session's own run; its answer, and the refusal if any."""
        apply_outcome(tx, top, out, now)
        answer = answer_for_run(tx, tx.require_run(top.run_id))
        error = None if out.accepted else StatewrightError(out.code, out.message, state=answer)
        return answer, error

    def resume(self, name: str | None, session: str | None = None,
               actor: str = AGENT) -> dict[str, Any]:
        """Resume the newest paused run of workflow `name` (else start it fresh); without a
        name, the session's own paused run (NO_ACTIVE_RUN when it has none)."""
        session = self.resolve_session(session)
        if name is None:
            self.require_store(session)
        now = self.clock()
        with self.store.transaction() as tx:
            self._refuse_if_running(tx, session)
            if name is None:
                paused = session_top(tx, session)
                if paused is None or paused.status != PAUSED:
                    raise StatewrightError(NO_ACTIVE_RUN, f"session '{session}' has no paused "
                                           "run; name the workflow to resume (its newest "
                                           "paused run, else a fresh one)")
            else:
                paused = tx.newest_paused(name)
            if paused is not None:
                c = tx.definition_of(paused.run_id)
                out = engine.resume(c, paused, now=now, actor=actor, session=session)
                apply_outcome(tx, paused, out, now)
                return answer_for_run(tx, out.run)
        assert name is not None  # (without a name, a paused run was found or refused above)
        return self.start(name, session, actor=actor)  # no paused run: start fresh

    def force_state(self, session: str | None, state: str, context: Any = None,
                    actor: str = HUMAN) -> dict[str, Any]:
        session = self.resolve_session(session)
        self.require_store(session)
        now = self.clock()
        with self.store.transaction() as tx:
            top = session_top(tx, session)
            if top is None and actor == HUMAN:
                top = tx.latest_session_run(session)
            if top is None:
                top, _chain = active_chain(tx, session)  # raises NO_ACTIVE_RUN
            # the session's own run jumps (engine.force_state stops its fork/invoke children)
            c = tx.definition_of(top.run_id)
            out = engine.force_state(c, top, state, context, now=now, actor=actor)
            answer, error = self._commit_top(tx, top, out, now)
        if error is not None:
            raise error
        return answer

    # -- approvals --------------------------------------------------------------------------
    def _decide_where(self, message: str, run_id: str) -> str:
        """A parked transition's message, saying where a human decides it."""
        url = self.page_url()
        where = f"on the web page {url}/runs/{run_id} or " if url else ""
        return f"{message} (a human decides it {where}with `statewright approve` / `reject`)"

    def _decide(self, session: str | None, approval_id: str | None, actor: str,
                op: Callable[[CompiledWorkflow, Run, float], engine.Outcome],
                approver: str | None = None) -> dict[str, Any]:
        if actor != HUMAN:
            raise StatewrightError(TOOL_DENIED, "only a human can approve or reject a transition "
                                   "(statewright approve / reject)")
        from . import people  # (`approver`: who decides, by their token)

        session = self.resolve_session(session)
        self.require_store(session, NO_PENDING_APPROVAL)
        from .approvals import approval_target  # (a human's command: off the hook's path)

        now = self.clock()
        with self.store.transaction() as tx:
            run = approval_target(tx, session, approval_id)
            out = op(tx.definition_of(run.run_id), run, now)
            if not out.accepted:
                raise out.error()
            out = people.named(self, tx, run, out, approver)
            apply_outcome(tx, run, out, now)
            people.record_approver(tx, run, approver)
            return answer_for_run(tx, top_of(tx, tx.require_run(run.run_id)))

    def approve(self, session: str | None = None, approval_id: str | None = None,
                actor: str = HUMAN, approver: str | None = None) -> dict[str, Any]:
        return self._decide(session, approval_id, actor,
                            lambda c, r, now: engine.approve(c, r, approval_id, now=now,
                                                             actor=actor), approver)

    def reject(self, session: str | None = None, approval_id: str | None = None,
               reason: str | None = None, actor: str = HUMAN,
               approver: str | None = None) -> dict[str, Any]:
        return self._decide(session, approval_id, actor,
                            lambda c, r, now: engine.reject_approval(c, r, approval_id, reason,
                                                                     now=now, actor=actor),
                            approver)

    # -- interrupts -------------------------------------------------------------------------
    def fire_interrupt(self, session: str | None, relpath: str) -> dict[str, Any] | None:
        """Fire the first interrupt of the effective run whose `file_pattern` matches `relpath`;
        the new state answer, or None when none fires."""
        from ..policy.paths import glob_match

        session = self.resolve_session(session)
        eff = self.effective_run(session)
        if eff is None:
            return None
        _run, c = eff
        if not any(glob_match(i.file_pattern, relpath) for i in c.interrupts):
            return None  # the common case: no write transaction at all
        with self.store.transaction() as tx:
            return self.fire_interrupt_in(tx, session, relpath, self.clock())

    def fire_interrupt_in(self, tx: Tx, session: str, relpath: str,
                          now: float) -> dict[str, Any] | None:
        """`fire_interrupt` inside an open write transaction. An interrupt that matches while
        another's handler is active is queued (`engine.fire_interrupt`); the answer then says
        so under `queued` (the run has not moved)."""
        from ..policy.paths import glob_match

        top = session_top(tx, session)
        if top is None or top.status != RUNNING:
            return None
        run, c = chain_of(tx, top)[-1]
        for i in c.interrupts:
            if not glob_match(i.file_pattern, relpath):
                continue
            out = engine.fire_interrupt(c, run, i, now=now, path=relpath)
            if not out.accepted:
                continue
            apply_outcome(tx, run, out, now)
            answer = answer_for_run(tx, tx.require_run(top.run_id))
            if out.run.interrupt != i.name:
                answer["queued"] = {"interrupt": i.name, "file": relpath}
            return answer
        return None

    # -- state timeouts (`runtime.timeouts`) ----------------------------------------------------
    def fire_due_timeouts(self, limit: int = 500, quiet: bool = False) -> list[dict[str, Any]]:
        """Fire every due state timeout, whichever session's (resident servers, serve)."""
        from .timeouts import fire_due

        return fire_due(self, limit, quiet)

    def seconds_to_next_timeout(self) -> float | None:
        """How long until the earliest state timeout the last look saw, if any."""
        from .timeouts import next_due

        at = next_due(self)
        return None if at is None else max(0.0, at - self.clock())

    def fire_timeout_in(self, tx: Tx, run_id: str, now: float) -> dict[str, Any] | None:
        """Inside a write transaction: fire run `run_id`'s timeout when it is due."""
        from .timeouts import fire_in

        return fire_in(self, tx, run_id, now)

    # -- listing ----------------------------------------------------------------------------
    def list_runs(self, session: str | None = None,
                  all_projects: bool = False) -> list[dict[str, Any]]:
        """Runs newest first; on a shared store with their project and machine (`views`)."""
        if not self.has_store():
            return []
        from .views import run_rows

        with self.store.read() as tx:
            runs = tx.list_runs(session, all_projects=all_projects)
            return run_rows(tx, runs, self.store_url is not None)

    def history(self, run_id: str | None = None,
                session: str | None = None) -> list[dict[str, Any]]:
        """The history of a run and of its children (fork branches, invoked runs), in order.
        Without `run_id`: the session's current run, else its latest (`views.history`)."""
        from .views import history

        return history(self, run_id, self.resolve_session(session))

    def runs_on_older_file(self, workflow: str) -> list[str]:
        """Running or paused runs of `workflow` whose file changed since they started."""
        if not self.has_store():
            return []
        from .answer import runs_on_older_file

        with self.store.read() as tx:
            return runs_on_older_file(tx, workflow)

    # -- the web page (statewright ui; runtime/views.py, runtime/page.py) --------------------
    def page_url(self) -> str | None:
        """Where `statewright ui` serves this project's page now, else None."""
        from .page import page_url

        return page_url(self.config.store_dir_str)

    def runs_overview(self, limit: int = 100, offset: int = 0) -> dict[str, Any]:
        """Runs newest first (`limit` from `offset`), their number, the pending approvals."""
        if not self.has_store():
            return {"runs": [], "total": 0, "pending": [], "mark": 0}
        with self.store.read() as tx:
            from . import views  # (only the web page reads these: off the hook's path)

            return views.runs_overview(tx, limit, offset, self.store_url is not None)

    def run_view(self, run_id: str, history_limit: int = 200) -> dict[str, Any]:
        """One run's own state answer, definition, child runs and newest history."""
        if not self.has_store():
            raise StatewrightError(UNKNOWN_RUN, f"no run with id {run_id}")
        with self.store.read() as tx:
            from . import views

            return views.run_view(tx, run_id, history_limit)

    def change_mark(self) -> int:
        """Grows whenever any run changes (the newest history row's number)."""
        if not self.has_store():
            return 0
        with self.store.read() as tx:
            return tx.last_event_seq()

    # -- tool calls (runtime/enforcement.py) -------------------------------------------------
    def gated_by_proxy(self, tool_name: str) -> bool:
        """Does this project's statewright proxy gate and account this call itself (its own
        tools, and those it forwards from `statewright.json`'s servers)? The hook then leaves
        it alone."""
        from ..policy.tools import gated_by_proxy

        servers = self.config.mcp_servers
        return gated_by_proxy(tool_name, servers if isinstance(servers, dict) else ())

    def authorize(self, session: str | None, call: ToolCall) -> Decision:
        """Decide a tool call and account it (DESIGN section 4). Never raises."""
        return _enforcement().authorize(self, self.resolve_session(session), call)

    def explain(self, session: str | None,
                call: ToolCall) -> tuple[Decision, Run | None, CompiledWorkflow | None]:
        """`authorize` as a dry run: nothing is accounted (`statewright check`)."""
        return _enforcement().explain(self, self.resolve_session(session), call)

    def record(self, session: str | None, result: ToolResult) -> RecordOutcome:
        """Account what an allowed call did; the messages the agent must read."""
        return _enforcement().record(self, self.resolve_session(session), result)

    def failure_decision(self, exc: BaseException) -> Decision:
        """The decision when deciding a call failed: deny with the cause, or allow under
        `fail_open` (`enforcement.failure_decision`, the one place it is honoured)."""
        return _enforcement().failure_decision(self, exc)

    @staticmethod
    def enforced_state(run: Run, wf: CompiledWorkflow) -> State | None:
        """The compiled state whose rules apply to `run`, or None when nothing is enforced."""
        return _enforcement().enforced_state(run, wf)

    @staticmethod
    def record_is_quiet(run: Run, wf: CompiledWorkflow) -> bool:
        """`record` cannot add anything to the result of a call on `run` that changes no file
        (a front end may answer first and record after)."""
        return _enforcement().record_is_quiet(run, wf)

    def stop_reminder(self, session: str | None) -> str | None:
        """The Stop hook's reminder while the run is in a non-final state (at most 3 per state)."""
        from .briefings import stop_reminder
        return stop_reminder(self, self.resolve_session(session))

    def briefing(self, session: str | None) -> str | None:
        """The briefing on the session's running run (SessionStart / UserPromptSubmit)."""
        from .briefings import current_briefing
        return current_briefing(self, self.resolve_session(session))
