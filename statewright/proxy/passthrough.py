"""What the proxy passes through from downstream servers besides tools (DESIGN.md section 5,
"Forwarding"): resources, resource templates, prompts, logging and progress.

- **Resources** keep their URIs (tool results and prompts link to them by URI); `resources/read`
  goes to the server that listed the URI, else the one whose template matches it. Every read
  is a governed call: `Runtime.authorize` judges it as the read-only MCP tool
  `mcp__<server>__resources/read` (a name no MCP tool can have) with the URI and, for a
  `file://` URI, its local path as arguments, so the policy's own rules apply (self-protection
  refuses a read of a protected path; `allowed_tools` decides like for any tool of that
  server); `Runtime.record` accounts it. A refusal is a JSON-RPC error.
- **Prompts** are listed as `<server>__<prompt>` (named like forwarded tools) and allowed.
- **Logging**: `logging/setLevel` is passed to every server that offers logging, and their
  `notifications/message` reach every handshake-era client, the logger named after the server.
- **Progress** of a forwarded `tools/call` that carries a progress token reaches the caller
  (`Proxy.forward_raw(progress=...)` -> `Downstream.call`).
- List changes of resources and prompts are announced on both protocol generations.

The handlers are registered only when `mcpServers` names at least one server, so the
capabilities the SDK derives from them are offered only when there is something to serve.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote, urlsplit

import anyio
import mcp_types as types
from mcp import MCPError
from mcp.server import ServerRequestContext
from mcp.server.subscriptions import PromptsListChanged, ResourcesListChanged
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.shared.uri_template import UriTemplate

from ..errors import TOOL_DENIED
from ..policy.types import ToolCall, ToolResult
from .config import forwarded_name
from .downstream import Downstream, describe

INVALID_PARAMS = -32602
RESOURCE_NOT_FOUND = -32002  # the specification's code for an unknown resource
REFUSED = -32000  # a governed request statewright refused (JSON-RPC server error range)
READ_RESOURCE = "resources/read"  # the tool part of the name `authorize` judges a read by

Ctx = ServerRequestContext[Any, Any]


def resource_call(server: str, uri: str) -> ToolCall:
    """The call `authorize` judges for a read of `uri` from `server`: a read-only MCP tool
    whose arguments are the URI and, for a `file://` URI, the local path it names."""
    args: dict[str, Any] = {"uri": uri}
    parts = urlsplit(uri)
    if parts.scheme.lower() == "file":
        args["path"] = unquote(parts.path)
    return ToolCall(f"mcp__{server}__{READ_RESOURCE}", args, source="proxy")


def _offers(d: Downstream, what: str) -> bool:
    caps = d.capabilities
    return caps is not None and getattr(caps, what, None) is not None


class Passthrough:
    """Resources, prompts and logging of the downstream servers, served by one proxy."""

    def __init__(self, proxy: Any) -> None:
        self.proxy = proxy
        self.servers: dict[str, Downstream] = proxy.downstream.servers
        self._uris: dict[str, str] = {}  # resource URI -> server, from the last listing
        self._templates: list[tuple[UriTemplate, str]] = []
        self._prompts: dict[str, tuple[str, str]] = {}  # listed name -> (server, prompt)
        self._log_level: types.LoggingLevel | None = None

    def install(self, server: Any) -> None:
        if not self.servers:
            return
        add = server.add_request_handler
        add("resources/list", types.PaginatedRequestParams, self.list_resources)
        add("resources/templates/list", types.PaginatedRequestParams, self.list_templates)
        add("resources/read", types.ReadResourceRequestParams, self.read_resource)
        add("prompts/list", types.PaginatedRequestParams, self.list_prompts)
        add("prompts/get", types.GetPromptRequestParams, self.get_prompt)
        add("logging/setLevel", types.SetLevelRequestParams, self.set_level)

    # ---- helpers ----------------------------------------------------------------------------
    async def _ready(self, what: str) -> list[Downstream]:
        await self.proxy.wait_downstream()
        return [d for d in self.servers.values() if d.status == "up" and _offers(d, what)]

    @staticmethod
    async def _pages(fetch: Callable[[str | None], Any], items: str) -> list[Any]:
        out: list[Any] = []
        cursor: str | None = None
        for _ in range(100):
            page = await fetch(cursor)
            out.extend(getattr(page, items))
            cursor = page.next_cursor
            if not cursor:
                break
        return out

    async def _each(self, what: str, fetch: Callable[[Any, str | None], Any],
                    items: str) -> list[tuple[Downstream, list[Any]]]:
        """`fetch(client, cursor)` every page of `items` from every server offering `what`."""
        found: list[tuple[Downstream, list[Any]]] = []
        for d in await self._ready(what):
            try:
                client = await d.ensure_up()

                def page(cursor: str | None, client: Any = client) -> Any:
                    return fetch(client, cursor)

                found.append((d, await self._pages(page, items)))
            except Exception as exc:  # one server's fault does not hide the others'
                print(f"statewright: {items} of downstream server '{d.name}' unavailable: "
                      f"{describe(exc)}", file=self.proxy.errlog, flush=True)
        return found

    # ---- resources ----------------------------------------------------------------------------
    async def list_resources(self, ctx: Ctx, params: Any) -> types.ListResourcesResult:
        found = await self._each("resources", lambda cl, c: cl.session.list_resources(
            params=types.PaginatedRequestParams(cursor=c)), "resources")
        uris: dict[str, str] = {}
        out: list[types.Resource] = []
        for d, resources in found:
            for r in resources:
                uris.setdefault(str(r.uri), d.name)
                out.append(r)
        self._uris = uris
        return types.ListResourcesResult(resources=out)

    async def list_templates(self, ctx: Ctx, params: Any) -> types.ListResourceTemplatesResult:
        found = await self._each("resources", lambda cl, c: cl.session.list_resource_templates(
            params=types.PaginatedRequestParams(cursor=c)), "resource_templates")
        self._templates = []
        out: list[types.ResourceTemplate] = []
        for d, templates in found:
            for t in templates:
                out.append(t)
                try:
                    self._templates.append((UriTemplate.parse(t.uri_template), d.name))
                except ValueError:
                    pass
        return types.ListResourceTemplatesResult(resource_templates=out)

    async def _resource_server(self, uri: str) -> Downstream:
        """The server a URI belongs to: the one that listed it, else the one whose template
        matches, else the only server offering resources."""
        if uri not in self._uris and not self._templates:
            await self.list_resources(None, None)  # type: ignore[arg-type]
            await self.list_templates(None, None)  # type: ignore[arg-type]
        name = self._uris.get(uri)
        if name is None:
            name = next((s for t, s in self._templates if t.match(uri) is not None), None)
        if name is None:
            offering = [d for d in self.servers.values() if _offers(d, "resources")]
            if len(offering) == 1:
                name = offering[0].name
        if name is None:
            raise MCPError(RESOURCE_NOT_FOUND, f"resource not found: {uri!r} (no server "
                           "listed it; call resources/list)")
        return self.servers[name]

    async def read_resource(self, ctx: Ctx, params: types.ReadResourceRequestParams
                            ) -> types.ReadResourceResult:
        uri = str(params.uri)
        d = await self._resource_server(uri)
        rt, session = self.proxy.rt, self.proxy.session
        call = resource_call(d.name, uri)
        decision = rt.authorize(session, call)
        if not decision.allowed:
            raise MCPError(REFUSED, f"[statewright] {decision.code or TOOL_DENIED}: "
                           f"{decision.reason}", {"code": decision.code or TOOL_DENIED})
        try:
            client = await d.ensure_up()
            result = await client.session.read_resource(uri)
        except MCPError:
            raise
        except Exception as exc:
            raise MCPError(REFUSED, f"[statewright] DOWNSTREAM_ERROR: server {d.name!r}: "
                           f"{describe(exc)}") from None
        nbytes = sum(len(getattr(c, "text", None) or getattr(c, "blob", None) or "")
                     for c in result.contents)
        try:
            outcome = rt.record(session, ToolResult(call.tool_name, call.tool_input,
                                                    output_bytes=nbytes))
        except Exception as exc:
            print(f"statewright: could not record a read of {uri}: {describe(exc)}",
                  file=self.proxy.errlog, flush=True)
            outcome = None
        if outcome is not None and outcome.interrupts:
            await self.proxy.check_state_change()
        return result

    # ---- prompts ------------------------------------------------------------------------------
    async def list_prompts(self, ctx: Ctx, params: Any) -> types.ListPromptsResult:
        found = await self._each("prompts", lambda cl, c: cl.session.list_prompts(
            params=types.PaginatedRequestParams(cursor=c)), "prompts")
        names: dict[str, tuple[str, str]] = {}
        out: list[types.Prompt] = []
        for d, prompts in found:
            for p in prompts:
                listed = forwarded_name(d.name, p.name, names.keys())
                names[listed] = (d.name, p.name)
                out.append(p.model_copy(update={"name": listed}))
        self._prompts = names
        return types.ListPromptsResult(prompts=out)

    async def get_prompt(self, ctx: Ctx, params: types.GetPromptRequestParams
                         ) -> types.GetPromptResult:
        if params.name not in self._prompts:
            await self.list_prompts(ctx, None)
        target = self._prompts.get(params.name)
        if target is None:
            raise MCPError(INVALID_PARAMS, f"unknown prompt {params.name!r}: call prompts/list")
        d = self.servers[target[0]]
        try:
            client = await d.ensure_up()
            return await client.session.get_prompt(target[1], params.arguments)
        except MCPError:
            raise
        except Exception as exc:
            raise MCPError(REFUSED, f"[statewright] DOWNSTREAM_ERROR: server {d.name!r}: "
                           f"{describe(exc)}") from None

    # ---- logging --------------------------------------------------------------------------
    async def set_level(self, ctx: Ctx, params: types.SetLevelRequestParams) -> types.EmptyResult:
        self._log_level = params.level
        for d in await self._ready("logging"):
            await self.apply_level(d)
        return types.EmptyResult()

    async def apply_level(self, d: Downstream) -> None:
        """Pass the client's log level on to `d`."""
        if self._log_level is None or not _offers(d, "logging") or d.client is None:
            return
        try:
            with warnings.catch_warnings():
                # the SDK marks logging deprecated for the 2026 era; downstreams speak 2025
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await d.client.session.set_logging_level(self._log_level)
        except Exception as exc:
            print(f"statewright: downstream server '{d.name}' refused logging/setLevel: "
                  f"{describe(exc)}", file=self.proxy.errlog, flush=True)

    async def notification(self, server: str, note: Any) -> None:
        """A notification of downstream `server` that the clients should see."""
        if isinstance(note, types.LoggingMessageNotification):
            p = note.params
            logger = f"{server}/{p.logger}" if p.logger else server
            body: dict[str, Any] = {"level": p.level, "logger": logger, "data": p.data}
            await self.proxy.notify_legacy("notifications/message", body)
        elif isinstance(note, types.ResourceListChangedNotification):
            self._uris, self._templates = {}, []
            await self.proxy.notify_legacy("notifications/resources/list_changed", None)
            await self.proxy.bus.publish(ResourcesListChanged())
        elif isinstance(note, types.PromptListChangedNotification):
            self._prompts = {}
            await self.proxy.notify_legacy("notifications/prompts/list_changed", None)
            await self.proxy.bus.publish(PromptsListChanged())


async def call_with_progress(ctx: Ctx, forward: Callable[..., Any]) -> Any:
    """Run `forward(progress=callback)` and relay every progress report it gets to the
    caller of the current request, in order, before its result."""
    send, recv = anyio.create_memory_object_stream[tuple[float, float | None, str | None]](math.inf)

    async def relay() -> None:
        async with recv:
            async for progress, total, message in recv:
                try:
                    await ctx.session.report_progress(progress, total, message)
                except Exception:
                    pass

    def report(progress: float, total: float | None, message: str | None) -> None:
        try:
            send.send_nowait((progress, total, message))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    async with anyio.create_task_group() as tg:
        tg.start_soon(relay)
        try:
            return await forward(progress=report)
        finally:
            send.close()
