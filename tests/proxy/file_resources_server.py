"""A small downstream MCP server for the resource tests: the files of a directory as `file://`
resources, plus the template `file:///{+path}` that reads any file (as a careless server
would), over stdio with the SDK's low-level `Server`. No official npm server offers `file://`
resources; the proxy's gate, not this server, must keep protected files out of reach.

Usage: python file_resources_server.py DIR
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import anyio
import mcp_types as types
from mcp import MCPError
from mcp.server import Server
from mcp.server.stdio import stdio_server

ROOT = Path(sys.argv[1]).resolve()


async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
    files = sorted(p for p in ROOT.iterdir() if p.is_file())
    return types.ListResourcesResult(resources=[
        types.Resource(uri=p.as_uri(), name=p.name, mime_type="text/plain") for p in files])


async def list_templates(ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
    return types.ListResourceTemplatesResult(resource_templates=[
        types.ResourceTemplate(uri_template="file:///{+path}", name="any file")])


async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
    uri = str(params.uri)
    path = Path(unquote(urlsplit(uri).path))
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        raise MCPError(-32002, f"cannot read {uri}: {exc}") from None
    return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, text=text)])


server: Server[Any] = Server("file-resources", on_list_resources=list_resources,
                             on_list_resource_templates=list_templates,
                             on_read_resource=read_resource)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
