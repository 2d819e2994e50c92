"""Tool-name matching (DESIGN.md section 4, check 2)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from .paths import glob_match  # noqa: F401  (re-exported for callers that match files too)

_PROXY_PREFIX = "mcp__statewright__"


def normalize_tool_name(name: str) -> str:
    """The name a workflow uses for a tool, whichever path the call came by.

    Claude Code reports a tool forwarded by our proxy from downstream server `github` as
    `mcp__statewright__github__create_issue`; workflows call it `mcp__github__create_issue`.
    The proxy's own tools (`mcp__statewright__statewright_get_state`) stay as they are.
    """
    if not isinstance(name, str):
        return ""
    if name.startswith(_PROXY_PREFIX):
        rest = name[len(_PROXY_PREFIX):]
        if "__" in rest and not rest.startswith("statewright_"):
            return "mcp__" + rest
    return name


def is_statewright_tool(name: str) -> bool:
    """`statewright_*` tools, bare or as `mcp__<anything>__statewright_*`: always allowed."""
    if name.startswith("statewright_"):
        return True
    if name.startswith("mcp__"):
        tail = name.rsplit("__", 1)[-1]
        return tail.startswith("statewright_") and len(name.split("__")) >= 3
    return False


@lru_cache(maxsize=1024)
def _pattern(entry: str) -> re.Pattern[str]:
    # `*` matches any run of characters (tool names have no path structure), `?` one character
    return re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c)
                              for c in entry) + r"\Z")


def name_matches(entry: str, name: str) -> bool:
    if "*" not in entry and "?" not in entry:
        return entry == name
    return _pattern(entry).match(name) is not None


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
