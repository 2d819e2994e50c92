"""The tree-sitter-bash parser, loaded the first time a line is parsed (never on import), and
the questions asked of a parse tree besides its walk: does it hold an error, and where; does it
hold a `&` job token or a process substitution; which command's exit status is the whole line's.
"""

from __future__ import annotations

import sys

from ...lean import TYPE_CHECKING, load_extension

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

_PARSER: Any = None

#: the type of a node (`node.type`) by its kind (`node.kind_id`), as the same str objects as
#: the names in the code (interned): `TYPE_OF[node.kind_id]` costs half of `node.type`, which
#: makes a new str each time, and the name's hash is then known (the walk looks each type up
#: in a dict or a set). Filled when the parser is loaded; kinds 65534-65535 are errors.
TYPE_OF: dict[int, str] = {}
#: the id of a field by its name (`node.child_by_field_id(FIELD_ID["body"])` does not look the
#: name up among the grammar's field names, as `child_by_field_name("body")` does)
FIELD_ID: dict[str, int] = {}


def bash_parser() -> Any:
    global _PARSER
    if _PARSER is None:
        parser_cls, language_cls, bash_language = _tree_sitter()
        language = language_cls(bash_language())
        for kind in (*range(language.node_kind_count), 65534, 65535):
            TYPE_OF[kind] = sys.intern(language.node_kind_for_id(kind) or "")
        FIELD_ID["body"] = language.field_id_for_name("body")
        _PARSER = parser_cls(language)
    return _PARSER


def has_job_token(root: Any, source: bytes | None = None) -> bool:
    """Whether the parse tree under `root` holds a `&` token (a job left running; not `&&`,
    `>&`, `&>`, which are tokens of their own). `source`: the bytes `root` was parsed from
    (default: `root.text`).

    A tree without errors holds no zero-width (missing) node, so each `&` token covers one `&`
    byte of the text, and it is the smallest node spanning that byte (a token has no
    children): the smallest node at each `&` byte is asked, in C (a tree-sitter query costs
    ten times as much, and its compilation ~7.5 ms), once per `&&` token. The grammar gives
    arithmetic's bitwise and (`$(( 5 & 3 ))`, `${a[1&2]}`, `(( x & 1 ))`) the same token; there
    its parent is a `binary_expression`, and no job runs. A tree with errors is searched node
    by node, every `&` counted (bitwise or not: what bash makes of a broken line is not
    known)."""
    if not root.has_error:
        if source is None:
            text, base = root.text, root.start_byte
        else:
            text, base = source, 0
        find = text.find
        at = find(b"&")
        while at >= 0:
            node = root.descendant_for_byte_range(base + at, base + at + 1)
            t = TYPE_OF[node.kind_id]
            if t == "&" and TYPE_OF[node.parent.kind_id] != "binary_expression":
                return True
            # (a `&&` token covers its second `&` too: no `&` token can be there)
            at = find(b"&", node.end_byte - base if t == "&&" else at + 1)
        return False
    stack = [root]
    while stack:
        n = stack.pop()
        if n.type == "&":
            return True
        stack.extend(n.children)
    return False


def has_process_substitution(root: Any, source: bytes | None = None) -> bool:
    """Whether the parse tree under `root` holds a process substitution (`<(...)`, `>(...)`):
    bash starts it and does not wait for it, so it may go on after the line ends. Asked as
    `has_job_token` asks for `&`: the smallest node at each `<(` / `>(` pair of bytes. A tree
    with errors: any such pair counts (what bash makes of a broken line is not known)."""
    if source is None:
        text, base = root.text, root.start_byte
    else:
        text, base = source, 0
    for opener in (b"<(", b">("):
        at = text.find(opener)
        while at >= 0:
            if root.has_error:
                return True
            node = root.descendant_for_byte_range(base + at, base + at + 2)
            if TYPE_OF[node.kind_id] == opener.decode() and node.parent is not None and \
                    TYPE_OF[node.parent.kind_id] == "process_substitution":
                return True
            at = text.find(opener, at + 1)
    return False


def _tree_sitter() -> tuple[Any, Any, Any]:
    """(`Parser`, `Language`, the Bash grammar's `language()`), from the packages' C extensions
    loaded without their `__init__` (`statewright.lean.load_extension`: the hook pays for
    neither `typing` nor `importlib.resources`). Any problem falls back to a plain import."""
    try:
        core = load_extension("tree_sitter", defer=("re",))  # (no `re` for a hook process)
        bash = load_extension("tree_sitter_bash")
        return core.Parser, core.Language, bash.language
    except Exception:
        import tree_sitter
        import tree_sitter_bash

        return tree_sitter.Parser, tree_sitter.Language, tree_sitter_bash.language


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


def status_node(root: Any) -> Any:
    """The `command` node whose exit status is the whole line's, or None.

    The line's last statement decides its status. It counts only when nothing after it can
    change that status: no `&` (the line ends before it does), and inside it no `||` (a left
    side that succeeds skips it), no negation, no later pipeline stage; `a && cmd` is fine (a
    failing `a` skips `cmd` but then the line fails too), and so is a redirection around it.
    Compound statements (subshells, braces, loops, conditionals) are not looked into."""
    last = None
    background = False
    for ch in root.children:
        if ch.is_named:
            if TYPE_OF[ch.kind_id] != "comment":
                last, background = ch, False
        elif TYPE_OF[ch.kind_id] == "&":
            background = True
    if last is None or background:
        return None
    node = last
    while True:
        t = TYPE_OF[node.kind_id]
        if t == "command":
            return node
        if t == "redirected_statement":
            named = node.named_children
            body = body_of(node, named)
            # a here-document with a pipeline hanging off it (`cat <<EOF | sh`) runs more
            if body is None:
                return None
            for ch in named:  # (a loop, not `any`: cheaper for a few children)
                if TYPE_OF[ch.kind_id] == "pipeline":
                    return None
            node = body
        elif t == "list":
            op = last = None  # the last operator, and the last statement, of the list
            for ch in node.children:
                if ch.is_named:
                    last = ch
                else:
                    op = TYPE_OF[ch.kind_id]
            if op != "&&":
                return None
            node = last
        else:
            return None


#: the kinds of node that are not the body of a redirected statement (`body_of`)
_NOT_BODIES = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect", "comment",
                         "ERROR"})


def body_of(node: Any, named: list[Any]) -> Any:
    """The body of `redirected_statement` node `node`, None when it has none, as the node
    object of `named` (its named children, whose own children the walk lists). Without an
    error in it, its body is its first child (the grammar: a statement and its redirections,
    or redirections alone), so its first named child unless that is a redirection; else its
    `body` field (`child_by_field_id` searches its children and makes a node object)."""
    if named and not node.has_error:
        first = named[0]
        return None if TYPE_OF[first.kind_id] in _NOT_BODIES else first
    body = node.child_by_field_id(FIELD_ID["body"])
    if body is not None:
        body_id = body.id
        for ch in named:
            if ch.id == body_id:
                return ch
    return body


#: the bytes of a variable's name after `$` (a digit first: one positional parameter)
_NAME_CHARS = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_0123456789")
#: the special parameters (`$@`, `$*`, `$?`, `$-`, `$!`, `$#`: one character each)
_SPECIAL = frozenset(b"@*?-!#")


def parse_line(source: str) -> tuple[Any, bytes, str]:
    """(the root node of `source`'s tree, its bytes, the text), with every expansion the
    grammar split off its word braced first (`split_expansions`; the text then shows `${B}`)."""
    data = source.encode("utf-8", "surrogatepass")
    root = bash_parser().parse(data).root_node
    if "$" in source:  # (the grammar reads `'a'/$B.c` as two words)
        fixed = split_expansions(root, data)
        while fixed is not None:  # (each round braces one more `$NAME` at least)
            data = fixed
            source = fixed.decode("utf-8", "surrogatepass")
            root = bash_parser().parse(data).root_node
            fixed = split_expansions(root, data)
    return root, data, source


def split_expansions(root: Any, data: bytes) -> bytes | None:
    """`data` with each expansion the grammar split off its word braced (`$B` -> `${B}`, the
    same to bash), or None when there is none.

    tree-sitter-bash reads `$A/$B.json` as two words: `$A/$` (the second `$` a bare token) and
    `B.json`, so `rm $D/$F.json` looked like `rm` of `B.json`-like text and a word ending in a
    literal `$`; `X=$A/$B.c env` ran `B.c`; a special parameter too (`'w/'fl$@ow.json`, `$@`
    empty: `w/flow.json`). A `$` token not under an expansion, followed by a
    name, is always that split (a literal `$` before a name does not exist in bash outside
    quotes, which the grammar reads as strings). The smallest node at each such `$` is asked,
    in C, as `has_job_token` does for `&`."""
    find = data.find
    at = find(b"$")
    fixes: list[tuple[int, int]] = []
    n = len(data)
    while at >= 0:
        if at + 1 < n and (data[at + 1] in _NAME_CHARS or data[at + 1] in _SPECIAL):
            node = root.descendant_for_byte_range(at, at + 1)
            if TYPE_OF[node.kind_id] == "$" and node.end_byte == at + 1 and \
                    node.parent is not None and \
                    TYPE_OF[node.parent.kind_id] not in ("simple_expansion", "expansion"):
                end = at + 2
                if data[at + 1] in _NAME_CHARS and data[at + 1] not in b"0123456789":
                    while end < n and data[end] in _NAME_CHARS:
                        end += 1
                fixes.append((at, end))
        at = find(b"$", at + 1)
    if not fixes:
        return None
    out = bytearray(data)
    for start, end in reversed(fixes):
        out[start:end] = b"${" + data[start + 1:end] + b"}"
    return bytes(out)
