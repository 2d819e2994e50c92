"""The tree-sitter-bash parser, loaded the first time a line is parsed (never on import), and
the two questions asked of a parse tree before it is walked: does it hold an error, and where.
"""

from __future__ import annotations

from ...lean import TYPE_CHECKING, load_extension

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

_PARSER: Any = None
_JOBS: list[Any] = []  # [the `QueryCursor` of `"&"`, or None] once made (`has_job_token`)
#: trees searched node by node before the query is compiled: compiling it costs ~7.5 ms, more
#: than a process hook deciding one line spends on the walk; a long-running process (the
#: proxy, the resident hook server) decides many and compiles it once
QUERY_AFTER = 16
_SEARCHED = [0]


def bash_parser() -> Any:
    global _PARSER
    if _PARSER is None:
        parser_cls, language_cls, bash_language = _tree_sitter()
        _PARSER = parser_cls(language_cls(bash_language()))
    return _PARSER


def has_job_token(root: Any) -> bool:
    """Whether the parse tree under `root` holds a `&` token (a job left running; not `&&`,
    `>&`, `&>`, which are tokens of their own). A tree without errors is searched by a
    tree-sitter query (in C) once `QUERY_AFTER` trees were searched node by node; one with
    errors always node by node, every node visited."""
    if not root.has_error and _SEARCHED[0] >= QUERY_AFTER:
        if not _JOBS:
            _JOBS.append(_job_query())
        cursor = _JOBS[0]
        if cursor is not None:
            return bool(cursor.captures(root))
    _SEARCHED[0] += 1
    stack = [root]
    while stack:
        n = stack.pop()
        if n.type == "&":
            return True
        stack.extend(n.children)
    return False


def _job_query() -> Any:
    """A `QueryCursor` matching `&` tokens, or None where the binding offers none."""
    try:
        core = load_extension("tree_sitter")
        return core.QueryCursor(core.Query(bash_parser().language, '"&" @job'))
    except Exception:  # pragma: no cover - an older binding: the node-by-node search
        return None


def _tree_sitter() -> tuple[Any, Any, Any]:
    """(`Parser`, `Language`, the Bash grammar's `language()`), from the packages' C extensions
    loaded without their `__init__` (`statewright.lean.load_extension`: the hook pays for
    neither `typing` nor `importlib.resources`). Any problem falls back to a plain import."""
    try:
        core = load_extension("tree_sitter")
        bash = load_extension("tree_sitter_bash")
        return core.Parser, core.Language, bash.language
    except Exception:
        import tree_sitter
        import tree_sitter_bash

        return tree_sitter.Parser, tree_sitter.Language, tree_sitter_bash.language


def has_missing(node: Any) -> bool:
    if node.is_missing:
        return True
    if not node.has_error:
        # missing nodes also set has_error on ancestors in tree-sitter; cheap early exit
        return False
    return any(has_missing(c) for c in node.children)


def first_error(node: Any) -> str:
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "ERROR" or n.is_missing:
            col = n.start_point[1] + 1
            return f"line {n.start_point[0] + 1}, column {col}: " + (
                f"missing {n.type!r}" if n.is_missing else
                f"unexpected {n.text.decode('utf-8', 'replace')[:30]!r}")
        stack.extend(reversed(n.children))
    return "syntax error"

