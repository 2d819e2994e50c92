"""The `mcpServers` part of `statewright.json` (the shape of Claude Code's `.mcp.json`) and the
names forwarded tools get. Stdlib only, so `statewright serve` reports a bad config before it
pays for importing the MCP SDK; and light (no `typing`, `dataclasses`, `re` or `hashlib` at
import: `lean`'s stand-ins), since `serve` on stdio imports it before its first answer."""

from __future__ import annotations

import os

from ..config import expand_env_refs
from ..errors import INVALID_ARGUMENTS, StatewrightError
from ..lean import TYPE_CHECKING, LazyRe, Record, set_field
from ..names import RESERVED_SERVERS

if TYPE_CHECKING:
    from collections.abc import Container
    from typing import Any

MAX_TOOL_NAME = 128  # SEP-986: ^[A-Za-z0-9._-]{1,128}$
SEPARATOR = "__"
_NAME_OK = LazyRe(r"^[A-Za-z0-9._-]{1,128}$")
_NAME_BAD_CHARS = LazyRe(r"[^A-Za-z0-9._-]")
_SERVER_NAME = LazyRe(r"^[A-Za-z0-9_-]{1,64}$")


# -- configuration ---------------------------------------------------------------------------

class ServerSpec(Record):
    """One entry of `mcpServers`, in the shape of Claude Code's `.mcp.json`."""

    name: str
    kind: str  # "stdio" | "http"
    command: str | None
    args: tuple[str, ...]
    env: dict[str, str]
    cwd: str | None
    url: str | None
    headers: dict[str, str]

    __slots__ = ("args", "command", "cwd", "env", "headers", "kind", "name", "url")
    _fields = __match_args__ = ("name", "kind", "command", "args", "env", "cwd", "url", "headers")

    def __init__(self, name: str, kind: str, command: str | None = None,
                 args: tuple[str, ...] = (), env: dict[str, str] | None = None,
                 cwd: str | None = None, url: str | None = None,
                 headers: dict[str, str] | None = None) -> None:
        set_field(self, "name", name)
        set_field(self, "kind", kind)
        set_field(self, "command", command)
        set_field(self, "args", args)
        set_field(self, "env", {} if env is None else env)
        set_field(self, "cwd", cwd)
        set_field(self, "url", url)
        set_field(self, "headers", {} if headers is None else headers)




def parse_servers(servers: dict[str, Any], environ: dict[str, str] | None = None,
                  root: str | None = None) -> list[ServerSpec]:
    """Turn the config's `mcpServers` object into specs. Every problem is reported at once,
    each with its JSON Pointer, as one INVALID_ARGUMENTS error: a typo in the config must not
    silently drop a server."""
    env = dict(os.environ if environ is None else environ)
    if root:
        env.setdefault("CLAUDE_PROJECT_DIR", root)
    problems: list[str] = []
    specs: list[ServerSpec] = []
    if not isinstance(servers, dict):
        raise StatewrightError(INVALID_ARGUMENTS,
                               "/mcpServers: must be an object of server objects")
    for name, raw in servers.items():
        ptr = f"/mcpServers/{name.replace('~', '~0').replace('/', '~1')}"
        if not isinstance(name, str) or not _SERVER_NAME.match(name):
            problems.append(f"{ptr}: server names may use only letters, digits, '_' and '-' "
                            "(1-64 chars)")
            continue
        if name.lower() in RESERVED_SERVERS:
            # tools under these names are taken for the proxy's own (policy.tools)
            problems.append(f"{ptr}: the name {name!r} is reserved for the proxy itself")
            continue
        if not isinstance(raw, dict):
            problems.append(f"{ptr}: must be an object")
            continue
        kind = raw.get("type", "stdio" if "command" in raw else None)
        if kind in ("http", "streamable-http", "streamableHttp", "sse"):
            if kind == "sse":
                problems.append(f"{ptr}/type: 'sse' servers are not supported; "
                                "use 'http' (streamable HTTP)")
                continue
            url = raw.get("url")
            if not isinstance(url, str) or not url.startswith(("http://", "https://")):
                problems.append(f"{ptr}/url: an http server needs a 'url' starting with "
                                "http:// or https://")
                continue
            headers = raw.get("headers", {})
            if not isinstance(headers, dict) or not all(isinstance(v, str)
                                                        for v in headers.values()):
                problems.append(f"{ptr}/headers: must map header names to strings")
                continue
            specs.append(ServerSpec(
                name=name, kind="http", url=expand_env_refs(url, env),
                headers={k: expand_env_refs(v, env) for k, v in headers.items()}))
        elif kind == "stdio":
            command = raw.get("command")
            if not isinstance(command, str) or not command.strip():
                problems.append(f"{ptr}/command: a stdio server needs a non-empty 'command'")
                continue
            args = raw.get("args", [])
            if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
                problems.append(f"{ptr}/args: must be a list of strings")
                continue
            senv = raw.get("env", {})
            if not isinstance(senv, dict) or not all(isinstance(v, str) for v in senv.values()):
                problems.append(f"{ptr}/env: must map variable names to strings")
                continue
            cwd = raw.get("cwd")
            if cwd is not None and not isinstance(cwd, str):
                problems.append(f"{ptr}/cwd: must be a string")
                continue
            if cwd and root and not os.path.isabs(cwd):
                cwd = os.path.join(root, cwd)
            specs.append(ServerSpec(
                name=name, kind="stdio", command=expand_env_refs(command, env),
                args=tuple(expand_env_refs(a, env) for a in args),
                env={k: expand_env_refs(v, env) for k, v in senv.items()},
                cwd=expand_env_refs(cwd, env) if cwd else None))
        else:
            problems.append(f"{ptr}: needs either 'command' (stdio) or 'type': 'http' with a 'url'")
    if problems:
        raise StatewrightError(INVALID_ARGUMENTS, "statewright.json: " + "; ".join(problems))
    return specs


# -- names -----------------------------------------------------------------------------------

def forwarded_name(server: str, tool: str, taken: Container[str] = frozenset()) -> str:
    """`<server>__<tool>`, made a legal MCP tool name: characters outside `[A-Za-z0-9._-]` become
    `_`, and a name that is too long (or collides after that) is cut and given a short hash of
    the original so it stays unique and stable across restarts."""
    name = f"{server}{SEPARATOR}{tool}"
    if _NAME_OK.match(name) and name not in taken:
        return name
    clean = _NAME_BAD_CHARS.sub("_", name)
    if len(clean) <= MAX_TOOL_NAME and clean not in taken:
        return clean
    import hashlib

    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return clean[: MAX_TOOL_NAME - 9] + "-" + digest


def workflow_tool_name(server: str, tool: str) -> str:
    """How workflows name a forwarded tool (DESIGN section 4)."""
    return f"mcp__{server}__{tool}"


def resolve_session(explicit: str | None = None) -> str:
    """DESIGN section 5: `$STATEWRIGHT_SESSION`, else `$CLAUDE_CODE_SESSION_ID`, else `default`."""
    import os

    return (explicit or os.environ.get("STATEWRIGHT_SESSION")
            or os.environ.get("CLAUDE_CODE_SESSION_ID") or "default")
