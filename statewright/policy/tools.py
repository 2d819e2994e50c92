"""Tool-name matching (DESIGN.md section 4, check 2)."""

from __future__ import annotations

from ..lean import TYPE_CHECKING, lru_cache
from ..names import OWN_TOOLS, PROXY_PREFIXES, RESERVED_SERVERS
from ..wildcards import name_matches
from . import edits
from .paths import glob_match  # noqa: F401  (re-exported for callers that match files too)

_PROXY_PREFIX = PROXY_PREFIXES[0]
# The exemption is by exact name: a tool of another MCP server called `statewright_x`, or one of
# these names under another server (`mcp__github__statewright_pause`), is an ordinary tool
# subject to `allowed_tools`.
_OWN_NAMES = frozenset(OWN_TOOLS | {p + t for p in PROXY_PREFIXES for t in OWN_TOOLS})

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Iterable
    from typing import Any

#: the host's file tools that read, and whether each searches below what it names (Grep, Glob):
#: with MCP tools, the only tools whose path arguments could read a process environment
#: (`policy.channels.environ_read_problem`)
FILE_READERS = {"Read": False, "Grep": True, "Glob": True, "LS": True, "NotebookRead": False}


def normalize_tool_name(name: str) -> str:
    """The name a workflow uses for a tool, whichever path the call came by.

    Claude Code reports a tool forwarded by our proxy from downstream server `github` as
    `mcp__statewright__github__create_issue` (or, with the plugin,
    `mcp__plugin_statewright_statewright__github__create_issue`); workflows call it
    `mcp__github__create_issue`. The proxy's own tools
    (`mcp__statewright__statewright_get_state`) stay as they are, and so does a name whose
    forwarded server part is reserved (`mcp__statewright__statewright__statewright_transition`
    would otherwise normalise to one of our own, exempt, names).
    """
    if not isinstance(name, str):
        return ""
    rest = _after_proxy_prefix(name)
    if rest is not None:
        server, sep, _tool = rest.partition("__")
        if sep and rest not in OWN_TOOLS and server.lower() not in RESERVED_SERVERS:
            return "mcp__" + rest
    return name


def _after_proxy_prefix(name: str) -> str | None:
    """What follows `mcp__statewright__` (or the plugin's prefix) in a tool name, else None."""
    for prefix in PROXY_PREFIXES:
        if name.startswith(prefix):
            return name[len(prefix):]
    return None


def gated_by_proxy(name: str, servers: Iterable[object]) -> bool:
    """Is this a call statewright's own proxy gates and accounts itself, so the hook leaves it
    alone? `servers`: the downstream server names of the project's `statewright.json`.

    Exactly two kinds: one of statewright's own tools under the proxy's names
    (`mcp__statewright__statewright_transition`, ...), and a tool the proxy forwards from one of
    those servers (`mcp__statewright__<server>__<tool>`). Anything else named like the proxy's
    tools is another server registered under that name, and gets the normal decision."""
    rest = _after_proxy_prefix(name)
    if rest is None:
        return False
    if is_statewright_tool(name):
        return True
    return any(isinstance(server, str) and server and server.lower() not in RESERVED_SERVERS
               and rest.startswith(server + "__") and len(rest) > len(server) + 2
               for server in servers)


def is_statewright_tool(name: str) -> bool:
    """statewright's own tools, and only those: one of the `OWN_TOOLS` by its bare name
    (as the proxy sees its own tools) or as Claude Code names them
    (`mcp__statewright__statewright_get_state`,
    `mcp__plugin_statewright_statewright__statewright_get_state`). Exact names only: a tool
    called `statewright_*` on any other server, or an unknown `statewright_*` name, is not
    exempt (else any MCP server could escape `allowed_tools: []` by naming a tool so)."""
    return name in _OWN_NAMES


def tool_allowed(name: str, allowed_tools: tuple[str, ...] | list[str] | None,
                 disallowed_tools: tuple[str, ...] | list[str] = ()) -> bool:
    """Whether the (already normalised) tool `name` may be called.

    `allowed_tools` None: no restriction; empty: only statewright's own tools. Entries are exact
    names or `*` globs (`mcp__github__*`). `disallowed_tools` applies after the allow list.
    """
    try:
        return _tool_allowed(name, None if allowed_tools is None else tuple(allowed_tools),
                             tuple(disallowed_tools))
    except TypeError:  # an unhashable entry: decide without the cache
        return _tool_allowed.__wrapped__(name, allowed_tools, disallowed_tools)


@lru_cache(maxsize=4096)
def _tool_allowed(name: str, allowed_tools: Any, disallowed_tools: Any) -> bool:
    if is_statewright_tool(name):
        return True
    if allowed_tools is not None and not any(name_matches(e, name) for e in allowed_tools):
        return False
    return not any(name_matches(e, name) for e in disallowed_tools)


@lru_cache(maxsize=2048)
def tool_facts(raw: str) -> tuple[str, str, bool, bool, bool, bool]:
    """(normalised name, first trace line, statewright's own tool, may write files, edits
    files as counted by checks 7-8, moves/deletes what it names) for a tool name as reported.

    An MCP tool may write unless its name reads as a read-only one (`read_*`, `list_*`,
    `get_*`, `search_*`, `git_status`, ...): an unknown MCP tool is taken as a writer, so it
    may not name a workflow in use or statewright's configuration."""
    name = normalize_tool_name(raw)
    first = f"tool: {raw} (as {name})" if name != raw else "tool: " + raw
    mcp = name.startswith("mcp__")
    part = edits.mcp_tool_part(name) if mcp else name
    counted = name in edits.HOST_EDIT_TOOLS or (mcp and edits.is_mcp_edit_tool(part))
    write = counted or (mcp and not edits.is_mcp_read_tool(part))
    tree = mcp and edits.is_mcp_tree_tool(part)
    return name, first, bool(name) and is_statewright_tool(name), write, counted, tree
