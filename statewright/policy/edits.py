"""Lines per edit operation and the files a call edits (DESIGN.md section 4, checks 7 and 8)."""

from __future__ import annotations

import os

from ..lean import TYPE_CHECKING, LazyRe, lru_cache
from .paths import is_path_key, tool_paths

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable
    from typing import Any

#: host edit tools -> the argument holding the file path
HOST_EDIT_TOOLS = {"Edit": "file_path", "Write": "file_path", "MultiEdit": "file_path",
                   "NotebookEdit": "notebook_path"}
#: MCP filesystem-style tools that write (matched on the tool part of `mcp__<server>__<tool>`)
MCP_EDIT_TOOLS = {"write_file", "edit_file", "create_file", "move_file", "delete_file",
                  "create_directory", "append_file", "replace_in_file", "str_replace",
                  "write", "edit"}


#: words of an MCP tool name (`write_file`, `git_commit`) that mean it changes something
_WRITE_WORDS = frozenset({
    "write", "edit", "create", "append", "replace", "patch", "insert", "save", "put", "move",
    "mv", "rename", "delete", "remove", "rm", "unlink", "trash", "copy", "cp", "set", "update",
    "upload", "commit", "add", "reset", "checkout", "init", "branch", "mkdir", "touch",
    "chmod", "chown", "truncate", "apply", "overwrite", "str", "push", "merge", "rebase",
    "stash", "clean", "restore", "exec", "execute", "run", "shell", "eval", "modify", "change",
    "new", "make", "store", "upsert", "drop", "destroy", "kill", "send", "post"})
#: words that mean it only reads (`read_text_file`, `list_directory`, `git_status`)
_READ_WORDS = frozenset({
    "read", "get", "list", "search", "find", "view", "show", "describe", "directory", "tree",
    "stat", "info", "head", "tail", "query", "fetch", "grep", "glob", "ls", "cat", "count",
    "diff", "log", "status", "lookup", "inspect", "print", "explain", "echo", "now",
    "convert", "time"})
_EDIT_WORDS = frozenset({"write", "edit", "append", "replace", "patch", "insert", "overwrite",
                         "save", "str"})
_TREE_WORDS = frozenset({"move", "mv", "rename", "delete", "remove", "rm", "unlink", "trash"})


_CAMEL_RE = LazyRe(r"([a-z0-9])([A-Z])")
_NON_WORD_RE = LazyRe(r"[^a-z0-9]+")


def _words(part: str) -> list[str]:
    return [w for w in _NON_WORD_RE.split(_CAMEL_RE.sub(r"\1_\2", part).lower()) if w]


@lru_cache(maxsize=1024)
def is_mcp_read_tool(part: str) -> bool:
    """Does the tool part of an MCP name read as read-only? Unknown names do not."""
    words = _words(part)
    if not words or any(w in _WRITE_WORDS for w in words):
        return False
    return words[0] in _READ_WORDS or (len(words) > 1 and words[1] in _READ_WORDS)


@lru_cache(maxsize=1024)
def is_mcp_edit_tool(part: str) -> bool:
    """An MCP tool that edits files, counted by checks 7 and 8 (`write_file`, `edit_file`,
    `write_text_file`, `str_replace_editor`, `create_file`, ...)."""
    if part in MCP_EDIT_TOOLS:
        return True
    words = _words(part)
    return any(w in _EDIT_WORDS for w in words) or (
        "create" in words and ("file" in words or "files" in words)) or \
        bool(_TREE_WORDS.intersection(words) and ("file" in words or "files" in words))


@lru_cache(maxsize=1024)
def is_mcp_tree_tool(part: str) -> bool:
    """An MCP tool that moves, renames or deletes what it names."""
    return bool(_TREE_WORDS.intersection(_words(part)))


def count_lines(text: Any) -> int:
    """Lines of a text argument. A value of another type (a list of lines, an object, a
    number: whatever a front end might coerce into text) counts every line of every string
    in it, so an odd shape can never make an edit look smaller than it is."""
    if isinstance(text, str):
        return len(text.splitlines())  # ("" has none; any other text at least one)
    return _flat_lines(text, 0)


def _flat_lines(v: Any, depth: int) -> int:
    if depth > 32:
        raise ValueError("the tool input is nested too deeply to count its lines")
    if v is None or isinstance(v, bool):
        return 0
    if isinstance(v, str):
        return count_lines(v)
    if isinstance(v, (int, float)):
        return 1
    if isinstance(v, dict):
        return sum(_flat_lines(x, depth + 1) for x in v.values())
    if isinstance(v, (list, tuple)):
        return sum(_flat_lines(x, depth + 1) for x in v)
    return count_lines(str(v))


#: above this many candidate pairs of equal lines (old line, new line) in the part of a Write
#: that differs, lines that repeat often stop anchoring the comparison (difflib's `autojunk`):
#: comparing them exactly is quadratic (9 s for 1,150 alternating lines, inside the store's
#: write transaction), and without them as anchors the count can only err towards more lines
MAX_MATCH_PAIRS = 200_000


def write_lines(new: str, old: str | None) -> int:
    """Lines of `new` that differ from `old` (all lines for a new file)."""
    if old is None:
        return count_lines(new)
    # lines compared with their endings: rewriting every `\n` as `\r\n` changes every line
    a, b = old.splitlines(True), new.splitlines(True)
    # the common head and tail are unchanged: only what lies between is compared
    top = min(len(a), len(b))
    lo = 0
    while lo < top and a[lo] == b[lo]:
        lo += 1
    hi = 0
    while hi < top - lo and a[-1 - hi] == b[-1 - hi]:
        hi += 1
    a, b = a[lo:len(a) - hi], b[lo:len(b) - hi]
    if not a or not b:
        return len(a) + len(b)
    in_b: dict[str, int] = {}
    for line in b:
        in_b[line] = in_b.get(line, 0) + 1
    pairs = sum(in_b.get(line, 0) for line in a)
    import difflib  # only a Write over an existing file needs it (~2 ms to import)

    matcher = difflib.SequenceMatcher(None, a, b, autojunk=pairs > MAX_MATCH_PAIRS)
    changed = 0
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
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
    if tool == "Edit":
        o, nw = args.get("old_string"), args.get("new_string")
        # (`count_lines`, inlined for text: every Edit decision counts two)
        n = max(len(o.splitlines()) if type(o) is str else count_lines(o),
                len(nw.splitlines()) if type(nw) is str else count_lines(nw))
        if args.get("replace_all"):
            # every occurrence is replaced: the edit changes that many copies
            old = _old_text(args.get("file_path"), read_text, resolve, base)
            n *= max(1, _occurrences(old, args.get("old_string")))
        return n
    if tool == "MultiEdit":
        edits = args.get("edits")
        if isinstance(edits, dict):
            edits = list(edits.values())
        if not isinstance(edits, list):
            return count_lines(edits)
        total = 0
        current = None
        if any(isinstance(e, dict) and e.get("replace_all") for e in edits):
            current = _old_text(args.get("file_path"), read_text, resolve, base)
        for e in edits:
            if not isinstance(e, dict):
                total += count_lines(e)
                continue
            o, nw = e.get("old_string"), e.get("new_string")
            n = max(count_lines(o), count_lines(nw))
            if e.get("replace_all"):
                n *= max(1, _occurrences(current, o))
            if isinstance(current, str) and isinstance(o, str) and o and isinstance(nw, str):
                current = current.replace(o, nw) if e.get("replace_all") else \
                    current.replace(o, nw, 1)
            total += n
        return total
    if tool == "Write":
        content = args.get("content")
        if not isinstance(content, str):
            return count_lines(content)
        return write_lines(content, _old_text(args.get("file_path"), read_text, resolve, base))
    if tool == "NotebookEdit":
        return notebook_lines(args, _old_text(args.get("notebook_path"), read_text, resolve,
                                              base))
    part = mcp_tool_part(tool)
    if tool.startswith("mcp__") and is_mcp_edit_tool(part):
        return _mcp_lines(part, args, lambda path: _old_text(path, read_text, resolve, base))
    return None


def notebook_lines(args: dict[str, Any], notebook: str | None) -> int:
    """NotebookEdit (DESIGN section 4, check 7): the lines of the cell it replaces or deletes
    and of the new source, as Edit counts them: insert = the new lines, delete = the cell's
    lines, replace = the larger of the two. A cell that cannot be found (no such id, an
    unreadable notebook) counts as the notebook's largest cell, never as nothing."""
    mode = args.get("edit_mode") or "replace"
    new = count_lines(args.get("new_source")) if mode != "delete" else 0
    if mode == "insert":
        return new
    return max(new, _cell_lines(notebook, args.get("cell_id")))


def _cell_lines(notebook: str | None, cell_id: Any) -> int:
    if notebook is None:
        return 0
    from ..lean import loads

    try:
        doc = loads(notebook)
        cells = doc.get("cells") if isinstance(doc, dict) else None
    except ValueError:
        cells = None
    if not isinstance(cells, list):
        return count_lines(notebook)  # not a notebook we can read: all of it
    sizes = [count_lines("".join(map(str, c["source"])) if isinstance(c.get("source"), list)
                         else c.get("source")) if isinstance(c, dict) else 0 for c in cells]
    for i, c in enumerate(cells):
        if isinstance(c, dict) and cell_id is not None and (
                c.get("id") == cell_id or str(cell_id) in (f"cell-{i}", str(i))):
            return sizes[i] if i < len(sizes) else 0
    return max(sizes, default=0)


def _old_text(path: Any, read_text: Callable[[str], str | None] | None,
              resolve: Callable[[str], str] | None, base: str | None) -> str | None:
    """The current text of the file an edit names (None: no such file, or no way to read)."""
    if read_text is None or not isinstance(path, str):
        return None
    if resolve is not None:
        return read_text(resolve(path))
    return read_text(os.path.join(base, path) if base is not None else path)


_OLD_KEYS = ("oldText", "old_string", "old_text", "old", "search", "find", "old_str",
             "oldString")
_NEW_KEYS = ("newText", "new_string", "new_text", "new", "replace", "replacement", "new_str",
             "newString")
_FLAG_TYPES = (bool, int, float, type(None))


def _mcp_lines(part: str, args: dict[str, Any], old: Callable[[Any], str | None]) -> int:
    """Lines an MCP file-editing call changes: `edits[{oldText,newText}]` as a MultiEdit;
    old/new pairs as an Edit; a single text argument of a write tool as a Write (compared
    with the file); anything else: every line of every text argument that is not a path."""
    edits = args.get("edits")
    if isinstance(edits, dict):
        edits = list(edits.values())
    if isinstance(edits, list):
        total = 0
        for e in edits:
            if not isinstance(e, dict):
                total += count_lines(e)
                continue
            o = [e[k] for k in _OLD_KEYS if k in e]
            nw = [e[k] for k in _NEW_KEYS if k in e]
            rest = [v for k, v in e.items() if k not in _OLD_KEYS and k not in _NEW_KEYS
                    and not isinstance(v, _FLAG_TYPES)]
            total += max(count_lines(o), count_lines(nw)) + count_lines(rest)
        return total
    o = [args[k] for k in _OLD_KEYS if k in args]
    nw = [args[k] for k in _NEW_KEYS if k in args]
    if o or nw:
        return max(count_lines(o), count_lines(nw))
    texts = {k: v for k, v in args.items() if not is_path_key(k) and k != "edits"
             and not isinstance(v, _FLAG_TYPES)}
    path = next((args[k] for k in ("path", "file_path", "filePath", "file", "filename")
                 if isinstance(args.get(k), str)), None)
    words = _words(part)
    if len(texts) == 1 and path is not None and ("write" in words or "create" in words or
                                                  "overwrite" in words):
        (text,) = texts.values()
        if isinstance(text, str):
            return write_lines(text, old(path))
    return count_lines(list(texts.values()))


def _occurrences(text: Any, needle: Any) -> int:
    if not isinstance(text, str) or not isinstance(needle, str) or not needle:
        return 1
    return text.count(needle)


def edited_paths(tool: str, args: dict[str, Any]) -> list[str]:
    """The raw path arguments of the files this call would change (not resolved)."""
    if tool in HOST_EDIT_TOOLS:
        p = args.get(HOST_EDIT_TOOLS[tool])
        return [p] if isinstance(p, str) else []
    part = mcp_tool_part(tool)
    if tool.startswith("mcp__") and is_mcp_edit_tool(part):
        return list(dict.fromkeys(tool_paths(args)))
    return []
