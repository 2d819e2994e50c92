"""Code that bash runs from text that looks inert (escape class 2 of issue 10): arithmetic and
array subscripts.

Bash evaluates some words as arithmetic or as variable names with a subscript, and that
evaluation expands `$(...)`, backticks and `$[...]` found in the text, even text that was
single-quoted on the line (`printf -v 'a[$(cmd)]' x`), and evaluates the *value* of every
variable it names as an expression in turn (`x='a[$(cmd)]'; echo $((x))`). tree-sitter shows
no substitution there. The contexts (checked with bash 5.2; `tests/security/corpus/
bash_contexts.txt` holds one line per context, run through real bash by its test):

- arithmetic: `$(( ))`, `$[ ]`, `(( ))`, `let`, `for (( ; ; ))`, the operands of `[[ A -eq B ]]`
  (`-ne -lt -le -gt -ge`), the offset and length of `${s:OFF:LEN}`, array subscripts
  (`${a[I]}`, `a[I]=`, `([I]=v)`), values assigned to a variable declared `-i`;
- names with a subscript: `printf -v NAME`, `read NAME`, `unset NAME`, `declare`/`typeset`/
  `local`/`export`/`readonly NAME=`, `wait -p NAME`, `[[ -v NAME ]]`, `test -v NAME`,
  `[ -v NAME ]`, `${!NAME}` (the value of NAME is a name), `declare -n REF=NAME`.

The rule: text evaluated there may hold no `$` or backtick at all, no command substitution's
output may be evaluated there, and no variable evaluated there may hold text the line does not
fix: a variable the line assigns from anything but fixed text without `$` or backtick (a
command's output, `read`, `mapfile`, `printf -v`, `getopts`, a loop over words that are not
fixed text) or a positional parameter. Variables the line does not assign come from the
environment of the host's shell (each call of Claude Code's Bash tool is a new shell), which
the agent does not set. A line that breaks the rule does not parse as what it runs: check 5
refuses it (a problem) and so does check 6 (the hidden code could print the environment).
"""

from __future__ import annotations

from ...lean import TYPE_CHECKING, LazyRe
from ..programs.spec import getopt
from .records import Word
from .words import make_word

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from .records import Word
    from .walk import Walk

#: `[[ A OP B ]]` operators whose operands are arithmetic
ARITH_TEST_OPS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
#: special parameters that always hold a number
NUMERIC_SPECIALS = frozenset({"#", "?", "$", "!", "-", "0"})
#: builtins that give their operands (or an option's value) a value read from elsewhere:
#: those names hold text the line does not fix
READERS = frozenset({"read", "mapfile", "readarray", "getopts", "select"})
#: the value of a variable a builtin sets from its input (`read X`, `printf -v X`): anything
READ_VALUE = Word(text="<read>", value="", pattern="*", literal=False, dynamic=True)
_IDENT_RE = LazyRe(r"[A-Za-z_][A-Za-z0-9_]*")


def text_problem(text: str, where: str) -> str | None:
    """Why `text`, evaluated as arithmetic or a subscript, would run code (None: it would not)."""
    if "$" in text or "`" in text:
        return (f"{where}: bash evaluates `{text[:60]}` as arithmetic or an array subscript, "
                "and would run the `$(...)`/backtick/`$` code in it")
    return None


def identifiers(text: str) -> list[str]:
    """The variable names arithmetic text refers to (every identifier: `a[i+j]` -> a, i, j)."""
    if not any(c.isalpha() or c == "_" for c in text):
        return []
    return _IDENT_RE.get().findall(text)


def operand_indexes(name: str, vals: list[str]) -> list[int]:
    """The argument indexes of builtin `name` that bash evaluates as arithmetic or as a name
    with a subscript."""
    if name == "let":
        return list(range(len(vals)))
    if name in ("printf", "wait"):
        # (`-v NAME`, or glued: `-vNAME`, whose word then holds the name)
        return [i + 1 for i, v in enumerate(vals[:-1]) if v in ("-v", "-p")] + [
            i for i, v in enumerate(vals) if v[:2] in ("-v", "-p") and len(v) > 2]
    if name in ("test", "["):
        return [i + 1 for i, v in enumerate(vals[:-1]) if v == "-v"] + [
            k for i, v in enumerate(vals) if v in ARITH_TEST_OPS
            for k in (i - 1, i + 1) if 0 <= k < len(vals)]
    if name in ("read", "unset"):
        # (options in every getopt spelling: `read -a NAME`, `-raNAME` hold a name too)
        opts, operands = getopt(vals, _READ_VALUES if name == "read" else "", ())
        return sorted([at for o, v, _, at in opts if o == "-a" and v is not None] + operands)
    return []


#: the short options of `read` and of `mapfile`/`readarray` that take a value (`read -t 5`;
#: `mapfile -t` trims: a flag)
_READ_VALUES = "adinNptu"
_MAPFILE_VALUES = "dnOsuCc"


def tainted_by_reader(name: str, vals: list[str]) -> list[str]:
    """The variables a reader builtin (`read`, `mapfile`, `printf -v`, `wait -p`, ...) sets
    from text the line does not fix (a subscripted name, `PATH[0]`, by its name)."""
    return [n.split("[", 1)[0] for n in _set_by_reader(name, vals)]


def _set_by_reader(name: str, vals: list[str]) -> list[str]:
    if name in ("printf", "wait"):
        return [vals[i + 1] for i, v in enumerate(vals[:-1]) if v in ("-v", "-p")] + [
            v[2:] for v in vals if v[:2] in ("-v", "-p") and len(v) > 2]
    if name == "read":
        opts, operands = getopt(vals, _READ_VALUES, ())
        return [v for o, v, _, _ in opts if o == "-a" and v is not None] + [
            vals[i] for i in operands] or ["REPLY"]
    if name == "getopts":
        return [*vals[1:2], "OPTARG"]
    if name in ("mapfile", "readarray", "select"):
        ops = [vals[i] for i in getopt(vals, _MAPFILE_VALUES, ())[1]]
        if name == "select":
            return ops[:1]
        return ops or ["MAPFILE"]
    return []


def findings(uses: list[tuple[str, str]], tainted: set[str]) -> list[str]:
    """Problems from what the walk saw evaluated: (`var`, name) a variable evaluated as
    arithmetic or a name, (`subst`, text) a substitution's output evaluated, (`text`, why) text
    with code in it (already a reason)."""
    out: list[str] = []
    for kind, what in uses:
        if kind == "text":
            out.append(what)
        elif kind == "subst":
            out.append(f"the output of `{what[:60]}` would be evaluated as arithmetic or an "
                       "array subscript, where bash runs the `$(...)` found in it")
        elif what in tainted or (what[:1].isdigit() and what != "0") or what in ("@", "*"):
            out.append(f"`{what}` is evaluated as arithmetic or a name, and holds text the line "
                       "does not fix (bash would run the `$(...)` found in its value)")
    return list(dict.fromkeys(out))


# -- the walk of what bash evaluates (called by `walker.Walker`) --------------------------------

def _text(node: Any) -> str:
    return node.text.decode("utf-8", "replace")


def walk(w: Walk, node: Any, context: str, depth: int, stdin: str = "inherit") -> None:
    """Walk `node`, which bash evaluates as arithmetic."""
    t = node.type
    if t == "variable_name" or t == "word":
        text = _text(node)
        why = text_problem(text, "arithmetic") if t == "word" else None
        if why:
            w.evaluated.append(("text", why))
        w.evaluated += [("var", n) for n in identifiers(text)]
        if t == "variable_name":
            w.variables.append(text)
    elif t in ("raw_string", "ansi_c_string", "string_content"):
        value = _text(node) if t == "string_content" else make_word(node, []).value
        why = text_problem(value, "quoted text in arithmetic")
        if why:
            w.evaluated.append(("text", why))
        w.evaluated += [("var", n) for n in identifiers(value)]
    elif t == "simple_expansion" or t == "expansion":
        w.evaluated.append(("var", _expanded_name(node)))
        w._expansion(node, context, depth)
    elif t == "command_substitution" or t == "process_substitution":
        w.evaluated.append(("subst", _text(node)))
        w.node(node, context, depth)
    elif t == "number" and not node.named_children:
        return
    else:
        for ch in node.named_children:
            walk(w, ch, context, depth)

def name_operand(w: Walk, node: Any, context: str, depth: int) -> None:
    """Walk a word bash takes as a variable name, whose subscript it evaluates
    (`printf -v NAME`, `unset NAME`, `[[ -v NAME ]]`)."""
    value = make_word(node, []).value
    if "[" in value:
        sub = value[value.index("["):]
        why = text_problem(sub, "an array subscript")
        if why:
            w.evaluated.append(("text", why))
        w.evaluated += [("var", n) for n in identifiers(sub)]
    for d in _dynamic_parts(node):
        if d.type == "command_substitution" or d.type == "process_substitution":
            w.evaluated.append(("subst", _text(d)))
        else:
            w.evaluated.append(("var", _expanded_name(d)))
    w.node(node, context, depth)

def compound(w: Walk, node: Any, context: str, depth: int, stdin: str) -> None:
    if node.children and node.children[0].type == "((":
        for ch in node.named_children:
            walk(w, ch, context, depth)
    else:
        w.children(node, context, depth)

def c_for(w: Walk, node: Any, context: str, depth: int, stdin: str) -> None:
    for ch in node.named_children:
        if ch.type == "do_group" or ch.type == "compound_statement":
            w.node(ch, context, depth)
        else:
            walk(w, ch, context, depth)

def test_command(w: Walk, node: Any, context: str, depth: int, stdin: str = "inherit") -> None:
    """`[[ ... ]]`: the operands of `-eq`-style operators are arithmetic, `-v` takes a
    name."""
    for ch in node.named_children:
        t = ch.type
        kids = ch.named_children
        op = next((k for k in kids if k.type == "test_operator"), None)
        if t == "binary_expression" and op is not None and _text(op) in ARITH_TEST_OPS:
            for k in kids:
                if k is not op and k.id != op.id:
                    walk(w, k, context, depth)
        elif t == "unary_expression" and op is not None and _text(op) == "-v":
            for k in kids:
                if k.id != op.id:
                    name_operand(w, k, context, depth)
        elif t in ("binary_expression", "unary_expression", "parenthesized_expression"):
            test_command(w, ch, context, depth)
        else:
            w.node(ch, context, depth)

def subscript(w: Walk, node: Any, context: str, depth: int, stdin: str = "inherit") -> None:
    kids = node.named_children
    if kids:
        w.node(kids[0], context, depth)
    for k in kids[1:]:
        walk(w, k, context, depth)

def array(w: Walk, node: Any, context: str, depth: int, stdin: str) -> None:
    """`(a b [KEY]=v)`: a `[KEY]=` key is a subscript."""
    for ch in node.named_children:
        parts = ch.named_children if ch.type == "concatenation" else []
        if parts and _text(parts[0]) == "[":
            key = True
            for p in parts[1:]:
                if key and _text(p).startswith("]"):
                    key = False
                if key:
                    walk(w, p, context, depth)
                else:
                    w.node(p, context, depth)
            w.words.append(make_word(ch, w.problems))
        else:
            w.node(ch, context, depth)


def arithmetic_expansion(w: Walk, node: Any, context: str, depth: int, stdin: str) -> None:
    for ch in node.named_children:
        walk(w, ch, context, depth)


#: variables whose value bash runs as code: expanded as a prompt (`set -x` prints PS4 so,
#: an interactive shell PS0-PS2), or run before a prompt (PROMPT_COMMAND)
PROMPT_VARS = frozenset({"PS0", "PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND"})


def prompt_code(w: Walk, name: str, depth: int) -> None:
    """Variable `name`'s value run as code (`${x@P}`, `PS4` under `set -x`, PROMPT_COMMAND):
    walked as a line when the line assigns it fixed text, else a problem."""
    value = next((v for n, v in reversed(w.assignments) if n == name), None)
    if value is not None and value.literal:
        text = value.value
        if name == "PROMPT_COMMAND" or "$" in text or "`" in text:
            # (a prompt's text runs only its expansions: read as a line, over-approximated)
            w.run(text, f"prompt {name}", depth + 1)
    else:
        w.problems.append(f"`{name}` is expanded as a prompt (its `$(...)` runs), and its value "
                          "is not fixed text on the line")


#: builtins that declare or export variables (a line's own `declare x=1` is a declaration)
DECLARING = frozenset({"declare", "typeset", "local", "export", "readonly"})


def wrapped_builtin(w: Walk, name: str, vals: list[str], label: str) -> None:
    """A builtin another runs (`builtin let ...`, `command printf -v X`, `builtin export
    PATH=...`): what it evaluates or assigns is read only where it stands alone, so one that
    evaluates or assigns anything is a problem."""
    assigns = name in READERS or (name in ("printf", "wait") and tainted_by_reader(name, vals))
    if name in DECLARING or assigns or operand_indexes(name, vals):
        w.problems.append(f"`{label} {name}`: a builtin run by another is not read as itself "
                          "(what it evaluates or assigns)")


#: builtins that evaluate some of their operands as arithmetic or names, or set variables
EVALUATING = frozenset({"let", "printf", "wait", "test", "[", "read", "unset", *READERS})


def evaluated_operands(w: Walk, name: str, argv: list[Word], nodes: list[Any],
                        context: str, depth: int) -> None:
    """The operands of builtin `name` that bash evaluates (`evaluated_operands`), and
    the variables it sets from text the line does not fix (`read x`)."""
    vals = [a.value for a in argv[1:]]
    for i in operand_indexes(name, vals):
        node = nodes[i + 1]
        if name == "let" or (name in ("test", "[") and vals[i - 1:i] != ["-v"]):
            w.evaluated += [("var", n) for n in identifiers(argv[i + 1].value)]
            why = text_problem(argv[i + 1].value, f"`{name}`")
            if why:
                w.evaluated.append(("text", why))
            for d in _dynamic_parts(node):
                w.evaluated.append(("subst", _text(d)) if "substitution" in d.type
                                      else ("var", _expanded_name(d)))
        else:
            name_operand(w, node, context, depth)
    set_by_reader = tainted_by_reader(name, vals)
    w.tainted.update(set_by_reader)
    # (they are assigned as `NAME=...` is: `printf -v PATH ./bin:...` changes what later
    # commands run, `read X` drops a pinned value)
    w.assignments += [(n, READ_VALUE) for n in set_by_reader]


def _expanded_name(node: Any) -> str:
    """The variable a `$x` / `${x...}` node expands (`1`, `@`, `#` for specials)."""
    for c in node.named_children:
        if c.type in ("variable_name", "special_variable_name"):
            return _text(c)
        if c.type == "subscript" and c.named_children:
            return _text(c.named_children[0])
    return _text(node).lstrip("${!#").rstrip("}")[:1] or "?"


def _dynamic_parts(node: Any) -> list[Any]:
    """The expansions and substitutions in a word (not inside nested substitutions)."""
    out: list[Any] = []
    stack = list(node.named_children) if node.type in ("concatenation", "string") else [node]
    while stack:
        n = stack.pop()
        t = n.type
        if t in ("simple_expansion", "expansion", "command_substitution",
                 "process_substitution", "arithmetic_expansion"):
            if t != "arithmetic_expansion":
                out.append(n)
        elif t in ("concatenation", "string"):
            stack.extend(n.named_children)
    return out


def fixed_text(node: Any) -> bool:
    """Whether a value node is fixed text without `$` or backtick (bash would evaluate nothing
    in it)."""
    t = node.type
    if t in ("word", "raw_string", "number", "string_content"):
        text = _text(node)
        return "$" not in text and "`" not in text
    if t in ("string", "concatenation", "array"):
        return all(fixed_text(c) for c in node.named_children)
    return False


def value_uses(value: Word) -> list[tuple[str, str]]:
    """What assigning `value` to a variable declared `-i` evaluates."""
    if not value.literal:
        if value.text.startswith(("$((", "$[")):
            return []  # already a number
        return [("subst", value.text)]
    why = text_problem(value.value, "a value assigned to an integer variable")
    return ([("text", why)] if why else []) + [("var", n) for n in identifiers(value.value)]
