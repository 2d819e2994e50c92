"""`statewright serve`: the MCP server the agent talks to (DESIGN.md sections 4 and 5).

It offers the `statewright_*` tools and forwards every tool of every downstream server in
`statewright.json` `mcpServers` as `<server>__<tool>`. It decides nothing itself: every
forwarded call goes through `Runtime.authorize` before it is sent and `Runtime.record` after,
and the tool list is filtered by asking the policy which tool names the state allows.

Both protocol generations are answered (the SDK's dual-era loop): handshake-era clients get
`notifications/tools/list_changed` on the connection's session; 2026-era clients get
`ToolsListChanged` on their `subscriptions/listen` streams. State changes made by other
processes (the CLI, the hook) are noticed by a cheap poll of the run's version, or on a shared
store by its notices (LISTEN/NOTIFY, `store.pg_listen`).
"""

from __future__ import annotations

import json
import logging
import os
import sys
import weakref
from typing import Any

import anyio
import mcp_types as types
from mcp import MCPError
from mcp.server import Server, ServerRequestContext
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ..errors import (
    DOWNSTREAM_ERROR,
    INVALID_ARGUMENTS,
    NO_ACTIVE_RUN,
    TOOL_DENIED,
    StatewrightError,
)
from ..names import HOOK_TOOL
from ..policy.evidence import exit_code_of_result
from ..policy.types import ToolCall, ToolResult
from . import checks as own_checks
from . import tools as own
from .bearer import CALLER, calling
from .capabilities import ProxyServer
from .config import resolve_session
from .downstream import DownstreamError, DownstreamManager, Progress, Route, ServerSpec, describe
from .hooktool import HookTool, not_served
from .limits import (
    MAX_ARGUMENT_BYTES,
    argument_size_problem,
    blocked_anywhere,
    cut_to_budget,
    launcher_of,
    raw_result_bytes,
)
from .passthrough import INVALID_PARAMS, Passthrough, call_with_progress

log = logging.getLogger("statewright.proxy")

POLL_INTERVAL = float(os.environ.get("STATEWRIGHT_POLL_INTERVAL", "0.25"))
FIRST_LIST_WAIT = 60.0  # the first tools/list waits (at most this) for the downstream servers
EARLY_LANE_MARK = ("answered by the early lane",)  # a fingerprint no state has
MAX_SUBJECTS = 256  # the token subjects of a shared proxy whose runs are followed


def _text(text: str) -> types.TextContent:
    return types.TextContent(type="text", text=text)


def _json_result(payload: dict[str, Any], is_error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[_text(json.dumps(payload, indent=1, default=str))],
                                structured_content=payload, is_error=is_error)


def _raw_error(text: str, structured: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": True}
    if structured is not None:
        out["structuredContent"] = structured
    return out


class Proxy:
    """One proxy: the runtime, the downstream servers, and the upstream MCP server."""

    def __init__(self, rt: Any, specs: list[ServerSpec], *, session: str | None = None,
                 connect_timeout: float = 30.0, errlog: Any = None) -> None:
        self.rt = rt
        self._session = resolve_session(session)
        self.errlog = errlog if errlog is not None else sys.stderr
        self.downstream = DownstreamManager(specs, connect_timeout=connect_timeout,
                                            on_tools_changed=self.notify_tools_changed,
                                            on_notification=self._downstream_notification,
                                            errlog=self.errlog, launcher=launcher_of(rt))
        self.downstream.withhold(blocked_anywhere(rt))
        self.bus = InMemorySubscriptionBus()
        self._legacy_sessions: weakref.WeakSet[Any] = weakref.WeakSet()
        self._fingerprint: tuple[Any, ...] | None = None
        # a shared proxy's callers (their tokens' subjects) and what each one's tool list
        # depends on: their runs are followed like the proxy's own (`check_state_change`)
        self._subjects: dict[str, tuple[Any, ...]] = {}
        # True while the current state cannot make `record` say anything (no run, or a state
        # without budgets): a call that edits no file may then be answered before it is
        # recorded. Refreshed with the fingerprint (every poll, after our own tools and
        # interrupts); False when unknown.
        self._quiet = False
        # messages `record` produced after an early answer was already written (only when
        # `_quiet` was stale): they go out with the next forwarded result
        self._late: list[str] = []
        self._ready = False
        # Claude Code's mcp_tool hooks (never listed); answered only on stdio (`run_stdio`),
        # where the one client is the host that started us
        self.hook_tool = HookTool(rt)
        self.serve_hook_tool = False
        self.server: Server[Any] = ProxyServer(
            "statewright", version=own.server_version(), instructions=own.INSTRUCTIONS,
            on_list_tools=self._list_tools, on_call_tool=self._call_tool,
            on_subscriptions_listen=ListenHandler(self.bus))
        # Our middleware only remembers handshake-era sessions (to notify them later); the
        # default OpenTelemetry middleware is dropped: it is a no-op here and costs time.
        self.server.middleware = [self._remember_session]
        # resources, prompts and logging of the downstream servers (only when there are some)
        self.passthrough = Passthrough(self)
        self.passthrough.install(self.server)

    # ---- sessions and notifications -------------------------------------------------------
    async def _remember_session(self, ctx: ServerRequestContext[Any, Any], call_next: Any) -> Any:
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            # `ctx.session` is a per-request wrapper; the connection outlives it and owns the
            # standalone channel that server-initiated notifications use.
            conn = getattr(ctx.session, "_connection", None)
            self._legacy_sessions.add(conn if conn is not None else ctx.session)
        with calling(ctx):  # (a shared proxy: the caller's token names the session, `bearer`)
            who = CALLER.get()
            if who is not None and who not in self._subjects \
                    and len(self._subjects) < MAX_SUBJECTS:
                self._subjects[who] = own_checks.fingerprint_of(self.rt, who)
            return await call_next(ctx)

    @property
    def session(self) -> str:  # the session of the request being handled (`bearer.calling`)
        return CALLER.get() or self._session

    async def notify_legacy(self, method: str, params: dict[str, Any] | None) -> None:
        """A notification to every connected handshake-era client."""
        for s in list(self._legacy_sessions):
            try:
                await s.notify(method, params)
            except Exception:
                self._legacy_sessions.discard(s)

    async def _downstream_notification(self, server: str, note: Any) -> None:
        await self.passthrough.notification(server, note)

    async def notify_tools_changed(self) -> None:
        """Tell every connected client that the tool list changed (both protocol eras)."""
        for s in list(self._legacy_sessions):
            try:
                await s.send_tool_list_changed()
            except Exception:
                self._legacy_sessions.discard(s)
        await self.bus.publish(ToolsListChanged())

    def _current_fingerprint(self) -> tuple[Any, ...]:
        """The fingerprint of the session being served; with it, whether `record` can say
        anything in its state (`_quiet`) and the variables its state blocks (withheld)."""
        self._quiet = False
        try:
            eff = self.rt.effective_run(self.session)
        except Exception as exc:
            return ("error", describe(exc))
        if eff is None:
            self._quiet = True
            return ("none",)
        run, wf = eff
        try:
            self._quiet = self.rt.record_is_quiet(run, wf)
            state = self.rt.enforced_state(run, wf)
            if state is not None and state.blocked_env:
                self.downstream.withhold(frozenset(state.blocked_env))
        except Exception:
            self._quiet = False
        return own_checks.identity(run, wf)

    def mark_list_stale(self) -> None:
        """The early lane answered before this proxy existed (a tools/list, a hook call that may
        have moved the run): the first state check announces a change, so the host re-lists.
        (Replayed requests -- their answers dropped -- leave the mark alone: `visible_tools`.)"""
        self._fingerprint = EARLY_LANE_MARK

    def _note(self, fp: tuple[Any, ...]) -> bool:
        """Keep `fp` for the session served (a shared proxy's caller, else our own); whether
        it differs from the one kept before it (never on a first)."""
        who = CALLER.get()
        if who is None:
            before, self._fingerprint = self._fingerprint, fp
        elif (before := self._subjects.get(who)) is not None:
            self._subjects[who] = fp
        return before is not None and before != fp

    async def check_state_change(self) -> bool:
        """Announce a tool-list change when the run of the session served or of a shared
        proxy's caller moved (every client hears it: 2026 subscriptions cannot be aimed)."""
        changed, caller = self._note(self._current_fingerprint()), CALLER.get()
        for who, before in list(self._subjects.items()):
            if who != caller:
                self._subjects[who] = now = own_checks.fingerprint_of(self.rt, who)
                changed = changed or now != before
        if changed:
            await self.notify_tools_changed()
        return changed

    async def watch_store(self) -> None:
        """Changes made by other processes (CLI approve, the hook, another machine)."""
        await own_checks.follow_store(self, POLL_INTERVAL)

    # ---- tools/list -----------------------------------------------------------------------
    async def _list_tools(self, ctx: ServerRequestContext[Any, Any],
                          params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        await self.wait_downstream()
        return types.ListToolsResult(tools=self.visible_tools())

    async def wait_downstream(self) -> None:
        """The first list (or call) waits until each downstream is up or failed."""
        if not self._ready:
            with anyio.move_on_after(FIRST_LIST_WAIT):
                await self.downstream.wait_ready()
            self._ready = True

    def visible_tools(self) -> list[types.Tool]:
        fingerprint = self._current_fingerprint()
        if CALLER.get() is not None or self._fingerprint != EARLY_LANE_MARK:  # mark_list_stale
            self._note(fingerprint)
        debug = False
        allowed = None  # None: every forwarded tool
        try:
            eff = self.rt.effective_run(self.session)
            if eff is not None:
                run, wf = eff
                debug = own.debug_run(run, wf)
                state = self.rt.enforced_state(run, wf)
                if state is not None:
                    allowed = own.name_filter(state)
        except Exception as exc:
            print(f"statewright: cannot read the run state ({describe(exc)}); listing only "
                  "statewright tools", file=self.errlog, flush=True)
            return own.own_tools(False)
        out = own.own_tools(debug)
        for tool, route in self.downstream.tools():
            if allowed is None or allowed(route.workflow_name):
                out.append(tool)
        return out

    # ---- tools/call -----------------------------------------------------------------------
    async def _call_tool(self, ctx: ServerRequestContext[Any, Any],
                         params: types.CallToolRequestParams) -> types.CallToolResult:
        name = params.name
        args = params.arguments if params.arguments is not None else {}
        if name == HOOK_TOOL and self.serve_hook_tool:
            return await self.answer_hook(args, getattr(params, "meta", None))
        if name in own.OWN_TOOLS:
            try:
                meta = params.meta
                if name == "statewright_transition" and meta is not None and \
                        meta.get("progress_token") is not None:
                    # the checks statewright runs report progress to this caller
                    return await call_with_progress(
                        ctx, lambda progress: self._own_tool(name, args, progress))
                return await self._own_tool(name, args)
            finally:
                await self.check_state_change()
        route = self.downstream.route(name)
        if route is None and not self._ready:
            # a call before the first tools/list: the catalogues may still be loading
            await self.wait_downstream()
            route = self.downstream.route(name)
        if route is None and name == HOOK_TOOL:
            err = not_served()
            return self._error(err.code, err.message, with_state=False)
        if route is None:
            # a protocol error (the specification's -32602), not a tool result
            raise MCPError(INVALID_PARAMS, f"unknown tool {name!r}: call tools/list for the "
                           "tools this state offers, or statewright_get_state for what it allows")
        meta = params.meta
        if meta is not None and meta.get("progress_token") is not None:
            # progress of the downstream call reaches this caller (the stdio fast lane leaves
            # requests with `_meta` to this handler)
            return types.CallToolResult.model_validate(await call_with_progress(
                ctx, lambda progress: self.forward_raw(route, name, args, progress=progress)))
        return await self._forward(route, name, args)

    async def answer_hook(self, args: dict[str, Any], meta: Any = None) -> types.CallToolResult:
        """A hook-tool call (SDK lane); the stdio fast path answers it with `hook_answer`."""
        return types.CallToolResult(content=[_text(self.hook_answer(args, meta))])

    def server_meta(self) -> dict[str, Any]:
        """The `_meta` of a 2026-era result: who answered (as the SDK writes it)."""
        return {"io.modelcontextprotocol/serverInfo": {"name": self.server.name,
                                                       "version": self.server.version}}

    def hook_answer(self, args: Any, meta: Any = None) -> str:
        """The hook's JSON answer. (A PostToolUse that moves the run -- an interrupt -- is
        announced as a tool-list change by `watch_store`, like any other state change.)"""
        return self.hook_tool.answer(args, meta)

    async def _forward(self, route: Route, name: str, args: dict[str, Any]) -> types.CallToolResult:
        return types.CallToolResult.model_validate(await self.forward_raw(route, name, args))

    async def forward_raw(self, route: Route, name: str, args: dict[str, Any],
                          size_hint: int | None = None, progress: Progress | None = None
                          ) -> dict[str, Any]:
        """The governed path of one forwarded call, on wire-shaped dicts (`_forward` wraps it
        for the SDK handler). `size_hint`: the request's size on the wire when known, which
        saves re-serialising the arguments. `progress`: told each progress report."""
        refusal, call_args, _ = self.admit(route, name, args, size_hint)
        if refusal is not None:
            return refusal
        return await self._call_and_settle(route, name, call_args, progress)

    async def _call_and_settle(self, route: Route, name: str, call_args: dict[str, Any],
                               progress: Progress | None = None) -> dict[str, Any]:
        """Call the admitted tool downstream, account the result, announce an interrupt."""
        try:
            result = await self.downstream.call(route, call_args, progress=progress)
        except Exception as exc:
            result = self.call_failed(route, exc)
        result, interrupted = self.settle(route, name, call_args, result)
        if interrupted:
            await self.check_state_change()
        return result

    def forward_now(self, route: Route, name: str, args: dict[str, Any], size_hint: int | None,
                    reply: Any, spawn: Any) -> bool:
        """`forward_raw` without a task or an await, for the stdio fast path: admit, send down a
        live stdio connection, and when the answer comes settle it and `reply(result)` from the
        downstream reader. `spawn(coro_fn)` runs the rare follow-up that must await (announcing
        a tool-list change after an interrupt, before the reply). False, with nothing done,
        when the server is not directly reachable now: use `forward_raw`.

        Answer first, account after: when `admit` says `record` cannot add anything to the
        result (the call edits no file, and the state has no budget that could warn), the
        result is replied before `record` runs -- still synchronously, in the same callback,
        so the call is accounted before the event loop reads the next request."""
        if not self.downstream.can_send_now(route):
            return False
        refusal, call_args, early = self.admit(route, name, args, size_hint)
        if refusal is not None:
            reply(refusal)
            return True

        def done(result: dict[str, Any] | None, exc: BaseException | None) -> None:
            if exc is not None or result is None:
                result = self.call_failed(route, exc or DownstreamError("no answer"))
            if early:
                self._reply_then_record(route, name, call_args, result, reply, spawn)
                return
            result, interrupted = self.settle(route, name, call_args, result)
            if not interrupted:
                reply(result)
                return

            async def announce_then_reply() -> None:
                try:
                    await self.check_state_change()
                finally:
                    reply(result)

            spawn(announce_then_reply)

        if self.downstream.send_now(route, call_args, done):
            return True
        # the connection broke between the check and the send: settle as the slow path would
        spawn(self._finish_slow, route, name, call_args, reply)
        return True

    def _reply_then_record(self, route: Route, name: str, call_args: dict[str, Any],
                           result: dict[str, Any], reply: Any, spawn: Any) -> None:
        """The early answer: reply, then `record` at once (same callback, nothing awaited in
        between). Should `record` have something to say after all (the state changed in
        another process since `_quiet` was read), its messages go out with the next forwarded
        result and the list change is announced."""
        content = result.get("content")
        if not isinstance(content, list):
            content = result["content"] = []
        if self._late:
            content.extend({"type": "text", "text": m} for m in self._late)
            self._late.clear()
        nbytes = raw_result_bytes(result)
        is_error = result.get("isError") is True
        reply(result)
        outcome = self._record(route, name, call_args, nbytes, is_error, result)
        if outcome is not None and (outcome.messages or outcome.interrupts):
            self._quiet = False
            self._late.extend(outcome.messages)
            spawn(self.check_state_change)

    async def _finish_slow(self, route: Route, name: str, call_args: dict[str, Any],
                           reply: Any) -> None:
        reply(await self._call_and_settle(route, name, call_args))

    def admit(self, route: Route, name: str, args: dict[str, Any],
              size_hint: int | None = None) -> tuple[dict[str, Any] | None, dict[str, Any], bool]:
        """Argument checks and `authorize`: (refusal result, args, False) or (None, arguments
        to send, early) where `early` says the result may be answered before it is recorded
        (the call edits no file and the state has nothing `record` could warn about)."""
        problem = (argument_size_problem(args)
                   if size_hint is None or size_hint > MAX_ARGUMENT_BYTES else None)
        if problem is None:
            schema = self.downstream.tool_schema(name)
            errors = own.check_arguments(schema, args) if schema else []
            if errors:
                problem = f"arguments of {name} do not match its input schema: " + "; ".join(errors)
        if problem:
            body = {"error": {"code": INVALID_ARGUMENTS, "message": problem}}
            return _raw_error(f"[statewright] {INVALID_ARGUMENTS}: {problem}", body), args, False
        quiet = self._quiet  # read before authorize: a fresher value can only be less quiet
        decision = self.rt.authorize(self.session,
                                     ToolCall(route.workflow_name, args, source="proxy"))
        if not decision.allowed:
            refusal = f"[statewright] {decision.code or TOOL_DENIED}: {decision.reason}"
            return _raw_error(refusal), args, False
        early = quiet and not decision.files and CALLER.get() is None  # (quiet: own session's)
        return None, (decision.updated_input if decision.updated_input is not None else args), early

    @staticmethod
    def call_failed(route: Route, exc: BaseException) -> dict[str, Any]:
        """The result the agent gets when forwarding failed."""
        if isinstance(exc, DownstreamError):
            return _raw_error(f"[statewright] {DOWNSTREAM_ERROR}: {exc}")
        # the downstream answered with a JSON-RPC error
        msg = getattr(exc, "message", None) or describe(exc)
        return _raw_error(f"[statewright] {DOWNSTREAM_ERROR}: server {route.server!r} "
                          f"refused {route.tool!r}: {msg}")

    def settle(self, route: Route, name: str, call_args: dict[str, Any],
               result: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        """`record` the call; append the runtime's messages. (result, interrupts fired)."""
        content = result.get("content")
        if not isinstance(content, list):
            content = result["content"] = []
        nbytes = raw_result_bytes(result)
        outcome = self._record(route, name, call_args, nbytes, result.get("isError") is True,
                               result)
        if outcome is not None and outcome.budget is not None and \
                outcome.bytes_read > outcome.budget:
            result = cut_to_budget(result, outcome.budget - (outcome.bytes_read - nbytes),
                                   outcome.budget)
            content = result["content"]
        if self._late:
            content.extend({"type": "text", "text": m} for m in self._late)
            self._late.clear()
        if outcome is None:
            return result, False
        if outcome.messages:
            content.extend({"type": "text", "text": m} for m in outcome.messages)
        return result, bool(outcome.interrupts)

    def _record(self, route: Route, name: str, call_args: dict[str, Any], nbytes: int,
                is_error: bool, result: dict[str, Any]) -> Any:
        try:
            return self.rt.record(self.session, ToolResult(
                route.workflow_name, call_args, output_bytes=nbytes, is_error=is_error,
                exit_code=exit_code_of_result(result)))
        except Exception as exc:
            print(f"statewright: could not record {name}: {describe(exc)}", file=self.errlog,
                  flush=True)
            return None

    # ---- statewright_* tools ----------------------------------------------------------------
    async def _own_tool(self, name: str, args: dict[str, Any],
                        progress: Any = None) -> types.CallToolResult:
        problem = argument_size_problem(args)
        if problem is None:
            args = own.drop_nulls(name, args)
            errors = own.check_arguments(own.TOOL_SPECS[name]["schema"], args)
            if errors:
                problem = f"invalid arguments for {name}: " + "; ".join(errors)
        if problem:
            return self._error(INVALID_ARGUMENTS, problem)
        rt = self.rt
        try:
            # a sub-agent's call: the hook saw its agent_id and left its key for this call
            session = rt.agent_for_call(self.session, name, args)
            if name == "statewright_get_state":
                answer = rt.get_state(session)
            elif name == "statewright_list_workflows":
                listed = rt.list_workflows()
                answer = listed if isinstance(listed, dict) else {"workflows": listed}
                return _json_result(answer)
            elif name == "statewright_load_workflow":
                answer = rt.load_workflow(args["name"], session,
                                          resume=bool(args.get("resume", False)),
                                          branch=args.get("branch"), input=args.get("input"),
                                          actor="agent")
            elif name == "statewright_transition":
                answer = await own_checks.transition(rt, session, args, progress)
            elif name == "statewright_pause":
                answer = rt.pause(session, actor="agent")
            elif name == "statewright_resume":
                answer = rt.resume(args.get("name"), session, actor="agent")
            elif name == "statewright_fork":
                answer = rt.fork(session, args.get("branch"), actor="agent")
            elif name == own.FORCE_STATE:
                answer = rt.force_state(session, args["state"], context=args.get("context"),
                                        actor="agent")
            else:  # pragma: no cover - OWN_TOOLS and this dispatch are the same list
                return self._error(INVALID_ARGUMENTS, f"unknown tool {name!r}")
        except StatewrightError as exc:
            return self._error(exc.code, exc.message, state=exc.state, details=exc.details)
        except Exception as exc:
            return self._error("INTERNAL", f"{name} failed: {describe(exc)}")
        return _json_result(self._with_downstream(dict(answer)))

    def _with_downstream(self, answer: dict[str, Any]) -> dict[str, Any]:
        if self.downstream.servers:
            answer["downstream"] = self.downstream.status()
        return answer

    def _error(self, code: str, message: str, *, state: dict[str, Any] | None = None,
               details: dict[str, Any] | None = None,
               with_state: bool = True) -> types.CallToolResult:
        payload: dict[str, Any] = {"error": {"code": code, "message": message}}
        if details:
            payload["error"]["details"] = details
        if state is None and with_state:
            try:
                state = self.rt.get_state(self.session)
            except StatewrightError as exc:
                if exc.code != NO_ACTIVE_RUN:
                    payload["error"]["state_unavailable"] = exc.message
            except Exception as exc:
                payload["error"]["state_unavailable"] = describe(exc)
        if state:
            for k, v in state.items():
                if k != "error":
                    payload[k] = v
        if with_state:
            payload = self._with_downstream(payload)
        return _json_result(payload, is_error=True)

    # ---- running --------------------------------------------------------------------------
    def init_options(self) -> Any:
        return self.server.create_initialization_options()

    def start_file_watcher(self) -> Any:
        """Watch the project (`runtime.filewatch`); when an interrupt leaves a notice, the next
        result is recorded before it is answered, so the notice goes out with it."""
        from ..runtime.filewatch import start_watcher

        return start_watcher(self.rt, self.session, self.errlog,
                             on_message=lambda _m: setattr(self, "_quiet", False))

    async def run_stdio(self, prefeed: bytes = b"", drop_ids: set[Any] | None = None,
                        drop_acks: set[Any] | None = None) -> None:
        """Serve stdio; `prefeed`/`drop_ids` continue what the early lane began (`early.py`)."""
        from .fastpath import stdio_streams

        self.serve_hook_tool = True
        watcher = self.start_file_watcher()
        try:
            async with anyio.create_task_group() as tg:
                await self.downstream.run(tg)
                tg.start_soon(self.watch_store)
                async with stdio_streams(self, prefeed, drop_ids, drop_acks) as (read, write):
                    await self.server.run(read, write, self.init_options())
                await self.downstream.stop()
                tg.cancel_scope.cancel()
        finally:
            if watcher is not None:
                watcher.stop()

    async def run_http(self, host: str, port: int, *, ready: Any = None) -> None:
        import uvicorn

        from . import bearer, hostcheck
        from .events import RETRY_MS, MemoryEventStore

        app = bearer.gated(self.server.streamable_http_app(  # (bearer tokens, Host check)
            host=host, event_store=MemoryEventStore(), retry_interval=RETRY_MS,  # (resumable SSE)
            transport_security=hostcheck.local_host_check(host, port)), self.rt)
        config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
        userver = uvicorn.Server(config)
        watcher = self.start_file_watcher()
        try:
            async with anyio.create_task_group() as tg:
                await self.downstream.run(tg)
                tg.start_soon(self.watch_store)
                await userver.serve()
                await self.downstream.stop()
                tg.cancel_scope.cancel()
        finally:
            if watcher is not None:
                watcher.stop()

