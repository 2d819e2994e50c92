"""Lines per edit operation and the files a call edits (DESIGN.md section 4, checks 7 and 8)."""

from __future__ import annotations

import difflib
import os
from typing import Any, Callable

#: host edit tools -> the argument holding the file path
HOST_EDIT_TOOLS = {"Edit": "file_path", "Write": "file_path", "MultiEdit": "file_path",
                   "NotebookEdit": "notebook_path"}
#: MCP filesystem-style tools that write (matched on the tool part of `mcp__<server>__<tool>`)
MCP_EDIT_TOOLS = {"write_file", "edit_file", "create_file", "move_file", "delete_file",
                  "create_directory", "append_file", "replace_in_file", "str_replace",
                  "write", "edit"}


def count_lines(text: Any) -> int:
    if not isinstance(text, str) or text == "":
        return 0
    return len(text.splitlines()) or 1


def _s(v: Any) -> str:
    return v if isinstance(v, str) else ("" if v is None else str(v))


def write_lines(new: str, old: str | None) -> int:
    """Lines of `new` that differ from `old` (all lines for a new file)."""
    if old is None:
        return count_lines(new)
    a, b = old.splitlines(), new.splitlines()
    changed = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            changed += max(i2 - i1, j2 - j1)
    return changed


def mcp_tool_part(name: str) -> str:
    return name.rsplit("__", 1)[-1] if name.startswith("mcp__") else name


def edit_lines(tool: str, args: dict[str, Any], read_text: Callable[[str], str | None] | None,
               resolve: Callable[[str], str] | None = None, base: str | None = None
               ) -> int | None:
    """Lines this call edits, or None if it is not an edit operation.

    `resolve` (or `base`, a directory relative paths are joined to) turns the path argument
    into the absolute path `read_text` expects.
    """
    def old(path: Any) -> str | None:
        if read_text is None or not isinstance(path, str):
            return None
        if resolve is not None:
            return read_text(resolve(path))
        return read_text(os.path.join(base, path) if base is not None else path)

    if tool == "Edit":
        return max(count_lines(args.get("old_string")), count_lines(args.get("new_string")))
    if tool == "MultiEdit":
        edits = args.get("edits")
        if not isinstance(edits, list):
            return 0
        return sum(max(count_lines(e.get("old_string")), count_lines(e.get("new_string")))
                   for e in edits if isinstance(e, dict))
    if tool == "Write":
        return write_lines(_s(args.get("content")), old(args.get("file_path")))
    if tool == "NotebookEdit":
        return count_lines(args.get("new_source"))
    part = mcp_tool_part(tool)
    if tool.startswith("mcp__") and part in MCP_EDIT_TOOLS:
        if isinstance(args.get("edits"), list):
            return sum(max(count_lines(e.get("oldText", e.get("old_string"))),
                           count_lines(e.get("newText", e.get("new_string"))))
                       for e in args["edits"] if isinstance(e, dict))
        if "content" in args:
            return write_lines(_s(args.get("content")), old(args.get("path")))
        if "old_string" in args or "new_string" in args:
            return max(count_lines(args.get("old_string")), count_lines(args.get("new_string")))
        return 0
    return None


def edited_paths(tool: str, args: dict[str, Any]) -> list[str]:
    """The raw path arguments of the files this call would change (not resolved)."""
    if tool in HOST_EDIT_TOOLS:
        p = args.get(HOST_EDIT_TOOLS[tool])
        return [p] if isinstance(p, str) else []
    part = mcp_tool_part(tool)
    if tool.startswith("mcp__") and part in MCP_EDIT_TOOLS:
        out = []
        for k in ("path", "file_path", "source", "destination"):
            if isinstance(args.get(k), str):
                out.append(args[k])
        return out
    return []
