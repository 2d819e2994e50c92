"""Shell command-line analysis with tree-sitter-bash (DESIGN.md section 4, checks 5 and 6).

`analyze(line)` parses a Bash command line and lists every command that would run, wherever it
sits (lists, pipelines, subshells, `$(...)`, backticks, process substitution, if/while/for/case,
function bodies, here-docs and `-c` strings handed to shells, `eval` arguments, the inner
command of wrappers such as `env`, `sudo`, `timeout`, `xargs`, `find -exec`), each with its
unquoted argv, plus redirections, variable expansions and the functions it defines. Anything the
analysis cannot see through is recorded as a problem, and every check fails closed on problems.

`check_commands(analysis, allowed)` and `check_env(analysis, blocked)` turn the analysis into
verdicts. Both are pure; tree-sitter is imported the first time a line must be parsed, and the
parser is cached at module level.
"""

from __future__ import annotations

import fnmatch
import re

from .._record import Record, _set
from ._lazy import CACHE_MAX_LINE as _CACHE_MAX_LINE
from ._lazy import LazyRe, lru_cache

TYPE_CHECKING = False  # (not `typing.TYPE_CHECKING`: `typing` costs ~10 ms to import)
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable
    from typing import Any

# `re` and `fnmatch` are imported at module level: this module is imported only when a shell
# line is analysed, and tree-sitter's binding imports `re` (and with it `functools`) anyway.
# The data types are `statewright._record` records, not dataclasses (see its docstring).

# --------------------------------------------------------------------------------------------
# data

_EMPTY: frozenset = frozenset()


class Word(Record):
    """One shell word after unquoting.

    `value` is the unquoted text with every dynamic part (expansions, substitutions) removed;
    `pattern` is an fnmatch pattern of what the word could expand to (dynamic parts become `*`,
    quoted glob characters are escaped); `literal` is true when the word is fixed text with no
    expansion, glob, brace expansion or leading tilde.
    """

    __slots__ = __match_args__ = _fields = ("text", "value", "pattern", "literal", "dynamic",
                                            "glob", "tilde")

    def __init__(self, text: str, value: str, pattern: str, literal: bool,
                 dynamic: bool = False, glob: bool = False, tilde: bool = False) -> None:
        _set(self, "text", text)
        _set(self, "value", value)
        _set(self, "pattern", pattern)
        _set(self, "literal", literal)
        _set(self, "dynamic", dynamic)  # contains $var, ${...}, $(...), `...`, $((...))
        _set(self, "glob", glob)  # unquoted * ? [
        _set(self, "tilde", tilde)  # leading unquoted ~


class Redirect(Record):
    __slots__ = __match_args__ = _fields = ("op", "fd", "target", "output")

    def __init__(self, op: str, fd: str | None, target: Word | None, output: bool) -> None:
        _set(self, "op", op)  # '>', '>>', '<', '&>', '>&', '<<', '<<<', ...
        _set(self, "fd", fd)
        _set(self, "target", target)  # None for here-docs
        _set(self, "output", output)  # writes (or truncates) its target


class Command(Record):
    """One command that would run. `argv[0]` is the command name (as a Word)."""

    __slots__ = __match_args__ = _fields = ("argv", "text", "context", "assignments",
                                            "redirects", "stdin", "stdin_text", "parent",
                                            "offset", "function_call", "kind")

    def __init__(self, argv: tuple[Word, ...], text: str, context: str = "top",
                 assignments: tuple[tuple[str, Word], ...] = (),
                 redirects: tuple[Redirect, ...] = (), stdin: str = "inherit",
                 stdin_text: str | None = None, parent: int | None = None, offset: int = 0,
                 function_call: bool = False, kind: str = "simple") -> None:
        _set(self, "argv", argv)
        _set(self, "text", text)
        # where it sits: top, $(...), pipeline, function f, sh -c, env, ...
        _set(self, "context", context)
        _set(self, "assignments", assignments)  # `VAR=value cmd`
        _set(self, "redirects", redirects)
        _set(self, "stdin", stdin)  # inherit | pipe | heredoc | herestring | file
        _set(self, "stdin_text", stdin_text)  # literal here-doc / here-string text fed to it
        _set(self, "parent", parent)  # index of the wrapper command this one was found inside
        _set(self, "offset", offset)  # position in the parent's argv where this command starts
        _set(self, "function_call", function_call)  # calls a function defined in the same line
        _set(self, "kind", kind)  # simple | declaration | unset

    @property
    def name(self) -> str:
        return self.argv[0].value if self.argv else ""

    @property
    def name_literal(self) -> bool:
        return bool(self.argv) and self.argv[0].literal

    @property
    def args(self) -> tuple[Word, ...]:
        return self.argv[1:]

    def values(self) -> list[str]:
        return [w.value for w in self.argv]


class ShellAnalysis(Record):
    __slots__ = __match_args__ = _fields = ("source", "commands", "redirects", "assignments",
                                            "variables", "functions", "words", "problems",
                                            "changes_dir")

    def __init__(self, source: str, commands: tuple[Command, ...] = (),
                 redirects: tuple[Redirect, ...] = (),
                 assignments: tuple[tuple[str, Word], ...] = (),
                 variables: tuple[str, ...] = (), functions: frozenset[str] = _EMPTY,
                 words: tuple[Word, ...] = (), problems: tuple[str, ...] = (),
                 changes_dir: bool = False) -> None:
        _set(self, "source", source)
        _set(self, "commands", commands)
        _set(self, "redirects", redirects)  # every redirection in the line
        # every assignment (standalone and prefix)
        _set(self, "assignments", assignments)
        _set(self, "variables", variables)  # every variable expanded (`!name` for indirect)
        _set(self, "functions", functions)
        _set(self, "words", words)  # every word seen (arguments, targets, values)
        # why the line cannot be trusted (parse errors, opaque code)
        _set(self, "problems", problems)
        _set(self, "changes_dir", changes_dir)  # contains cd/pushd/popd

    @property
    def ok(self) -> bool:
        return not self.problems


class Verdict(Record):
    __slots__ = __match_args__ = _fields = ("allowed", "reason", "trace")

    def __init__(self, allowed: bool, reason: str = "", trace: tuple[str, ...] = ()) -> None:
        _set(self, "allowed", allowed)
        _set(self, "reason", reason)  # for the agent (empty when allowed)
        _set(self, "trace", trace)  # one line per command / rule, for `statewright check`


def has_surrogate(text: str) -> bool:
    """Whether `text` holds a lone surrogate (U+D800..U+DFFF), the only code points UTF-8
    cannot encode: such text is valid JSON but not valid Unicode."""
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


# --------------------------------------------------------------------------------------------
# tree-sitter (lazy)

_PARSER: Any = None


def _parser() -> Any:
    global _PARSER
    if _PARSER is None:
        parser_cls, language_cls, bash_language = _tree_sitter()
        _PARSER = parser_cls(language_cls(bash_language()))
    return _PARSER


def _tree_sitter() -> tuple[Any, Any, Any]:
    """(`Parser`, `Language`, the Bash grammar's `language()`).

    The packages' `__init__` modules are skipped when they are not imported yet:
    `tree_sitter`'s imports `typing` (~10 ms) and `tree_sitter_bash`'s imports
    `importlib.resources` (~11 ms) for a query file this module never reads, and a hook
    process pays both on every Bash call. Their C extensions (`tree_sitter._binding`,
    `tree_sitter_bash._binding`, which hold everything used here) are loaded directly, from
    the package directories an import would find, and registered under their own names (so
    a later `import tree_sitter` shares them; only the packages' attribute `_binding` is not
    set then, as the import system sets it only when it loads the module itself). Any problem
    falls back to a plain import."""
    try:
        core = _binding("tree_sitter")
        bash = _binding("tree_sitter_bash")
        return core.Parser, core.Language, bash.language
    except Exception:
        import tree_sitter
        import tree_sitter_bash

        return tree_sitter.Parser, tree_sitter.Language, tree_sitter_bash.language


def _binding(package: str) -> Any:
    """The `_binding` extension module of `package`, loaded without the package's `__init__`
    (the imported package's own when it is already imported)."""
    import sys

    name = package + "._binding"
    mod = sys.modules.get(name)
    if mod is not None:
        return mod
    pkg = sys.modules.get(package)
    if pkg is not None:  # imported already: use what it imported
        return getattr(pkg, "_binding", None) or __import__(name, fromlist=["_"])
    import _imp
    import os

    bootstrap = sys.modules["_frozen_importlib"]
    external = sys.modules["_frozen_importlib_external"]
    for entry in sys.path:
        directory = os.path.join(entry or os.getcwd(), package)
        if not os.path.isfile(os.path.join(directory, "__init__.py")):
            continue  # (a zip entry, a namespace package, ...: not this package)
        # the first extension suffix present wins, as in the import system's file finder
        for suffix in _imp.extension_suffixes():
            path = os.path.join(directory, "_binding" + suffix)
            if os.path.isfile(path):
                loader = external.ExtensionFileLoader(name, path)
                spec = bootstrap.ModuleSpec(name, loader, origin=path)
                spec.has_location = True  # (sets `__file__`, as an import would)
                mod = bootstrap.module_from_spec(spec)
                loader.exec_module(mod)
                sys.modules[name] = mod
                return mod
        break  # the package found first has no extension: let the import system decide
    raise ImportError(f"no {name} extension found on sys.path")


# --------------------------------------------------------------------------------------------
# words

_GLOB_CHARS = set("*?[")
_ANSI_SIMPLE = {
    "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r",
    "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?",
}
_BRACE_RE = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")


def decode_ansi_c(body: str) -> str:
    """Decode the body of a `$'...'` string as bash does."""
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c != "\\" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        d = body[i + 1]
        if d in _ANSI_SIMPLE:
            out.append(_ANSI_SIMPLE[d])
            i += 2
        elif d == "x":
            m = re.match(r"[0-9A-Fa-f]{1,2}", body[i + 2:])
            if m:
                out.append(chr(int(m.group(), 16)))
                i += 2 + len(m.group())
            else:
                out.append("\\x")
                i += 2
        elif d in "uU":
            m = re.match(r"[0-9A-Fa-f]{1,%d}" % (4 if d == "u" else 8), body[i + 2:])
            if m:
                try:
                    out.append(chr(int(m.group(), 16)))
                except ValueError:
                    out.append("?")
                i += 2 + len(m.group())
            else:
                out.append("\\" + d)
                i += 2
        elif d in "01234567":
            m = re.match(r"[0-7]{1,3}", body[i + 1:])
            assert m is not None
            out.append(chr(int(m.group(), 8) & 0xFF))
            i += 1 + len(m.group())
        elif d == "c" and i + 2 < n:
            out.append(chr(ord(body[i + 2]) & 0x1F))
            i += 3
        else:
            out.append("\\" + d)
            i += 2
    return "".join(out)


def _unescape_unquoted(text: str) -> tuple[str, str, bool]:
    """Unquote a bare word: returns (value, fnmatch pattern, has unquoted glob)."""
    if "\\" not in text:  # nothing escaped: the text is its own value and pattern
        return text, text, ("*" in text or "?" in text or "[" in text)
    val: list[str] = []
    pat: list[str] = []
    glob = False
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n:
            d = text[i + 1]
            i += 2
            if d == "\n":
                continue
            val.append(d)
            pat.append("[" + d + "]" if d in "*?[]" else d)
            continue
        if c in _GLOB_CHARS:
            glob = True
        val.append(c)
        pat.append(c)
        i += 1
    return "".join(val), "".join(pat), glob


def _unescape_double(text: str) -> str:
    # inside "...", backslash only escapes $ ` " \ and newline
    if "\\" not in text:
        return text
    return re.sub(r'\\([$`"\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), text)


def _escape_pattern(s: str) -> str:
    return "".join("[" + c + "]" if c in "*?[]" else c for c in s)


class _W:
    __slots__ = ("dynamic", "glob", "literal", "pat", "val")

    def __init__(self) -> None:
        self.val: list[str] = []
        self.pat: list[str] = []
        self.literal = True
        self.dynamic = False
        self.glob = False


def _word_parts(node: Any, w: _W, problems: list[str]) -> None:
    t = node.type
    text = node.text.decode("utf-8", "replace")
    if t in ("word", "number", "extglob_pattern", "regex", "special_character", "test_operator",
             "file_descriptor", "heredoc_start", "variable_name"):
        if "`" in text.replace("\\`", "") or "$(" in text:
            problems.append(f"a command substitution the parser kept as text: {text!r}")
            w.literal = False
            w.dynamic = True
        val, pat, glob = _unescape_unquoted(text)
        if glob and t != "variable_name":
            w.glob = True
            w.literal = False
        if t == "word" and _BRACE_RE.search(text):
            w.literal = False
            w.glob = True
            pat = pat.replace("{", "*").replace("}", "*")
        w.val.append(val)
        w.pat.append(pat)
    elif t == "raw_string":
        body = text[1:-1]
        w.val.append(body)
        w.pat.append(_escape_pattern(body))
    elif t == "ansi_c_string":
        body = decode_ansi_c(text[2:-1])
        w.val.append(body)
        w.pat.append(_escape_pattern(body))
    elif t in ("string", "translated_string"):
        for ch in node.named_children:
            if ch.type == "string_content":
                s = _unescape_double(ch.text.decode("utf-8", "replace"))
                w.val.append(s)
                w.pat.append(_escape_pattern(s))
            else:
                _word_parts(ch, w, problems)
    elif t == "concatenation":
        for ch in node.children:
            if ch.is_named:
                _word_parts(ch, w, problems)
            else:
                s = ch.text.decode("utf-8", "replace")
                w.val.append(s)
                w.pat.append(_escape_pattern(s))
    elif t == "brace_expression":
        w.literal = False
        w.glob = True
        w.pat.append("*")
    else:  # expansions, substitutions, arithmetic, arrays: value unknown
        w.literal = False
        w.dynamic = True
        w.pat.append("*")


_PLAIN_WORD_RE = re.compile(r"[^\\*?\[\]{}$`~]+\Z")


def make_word(node: Any, problems: list[str]) -> Word:
    if node.type == "word":
        text = node.text.decode("utf-8", "replace")
        if _PLAIN_WORD_RE.match(text):
            # the common case: a bare word with nothing to unquote, expand or glob
            return Word(text=text, value=text, pattern=text, literal=True)
    w = _W()
    _word_parts(node, w, problems)
    text = node.text.decode("utf-8", "replace")
    tilde = node.type in ("word", "concatenation") and text.startswith("~")
    pat = "".join(w.pat)
    return Word(text=text, value="".join(w.val), pattern=pat,
                literal=w.literal and not tilde, dynamic=w.dynamic, glob=w.glob, tilde=tilde)


def literal_word(s: str) -> Word:
    return Word(text=s, value=s, pattern=_escape_pattern(s), literal=True)


# --------------------------------------------------------------------------------------------
# the walk

_SHELLS = {"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "rbash"}
_OUTPUT_OPS = {">", ">>", ">|", "&>", "&>>", "<>", ">&"}
_WORD_NODES = {"word", "string", "raw_string", "ansi_c_string", "concatenation", "number",
               "simple_expansion", "expansion", "command_substitution", "process_substitution",
               "arithmetic_expansion", "translated_string", "brace_expression"}
_MAX_DEPTH = 8
_LEAF_WORDS = frozenset({"word", "raw_string"})  # `number` may hold `16#$(cmd)`
_PLAIN_WORDS = {"word", "concatenation", "string", "raw_string", "ansi_c_string", "number",
                "translated_string"}



class _Walker:
    def __init__(self, source: str) -> None:
        self.source = source
        self.commands: list[Command] = []
        self.redirects: list[Redirect] = []
        self.assignments: list[tuple[str, Word]] = []
        self.variables: list[str] = []
        self.functions: set[str] = set()
        self.words: list[Word] = []
        self.problems: list[str] = []
        self.changes_dir = False

    # -- entry ------------------------------------------------------------------------------
    def run(self, source: str, context: str, depth: int, parent: int | None = None,
            offset: int = 0) -> None:
        if depth > _MAX_DEPTH:
            self.problems.append("shell code nested too deeply to analyse")
            return
        if "\x00" in source:
            self.problems.append("NUL byte in the command line")
            return
        if has_surrogate(source):
            # not valid Unicode: what the shell would run (the front end re-encodes it) is not
            # the text analysed here
            self.problems.append("the command line holds text that is not valid Unicode "
                                 "(a lone surrogate)")
            return
        tree = _parser().parse(source.encode("utf-8", "surrogatepass"))
        root = tree.root_node
        if root.has_error or _has_missing(root):
            where = _first_error(root)
            self.problems.append(f"the command line does not parse cleanly ({where})")
        start = len(self.commands)
        self._node(root, context, depth, stdin="inherit")
        if parent is not None:
            # the top-level commands of re-parsed code belong to the command that runs it
            for i in range(start, len(self.commands)):
                c = self.commands[i]
                if c.parent is None:
                    self.commands[i] = _replace(c, parent=parent, offset=offset)

    # -- nodes ------------------------------------------------------------------------------
    def _children(self, node: Any, context: str, depth: int) -> None:
        for ch in node.named_children:
            self._node(ch, context, depth)

    def _node(self, node: Any, context: str, depth: int, stdin: str = "inherit",
              redirects: tuple[Redirect, ...] = (), stdin_text: str | None = None) -> None:
        t = node.type
        if t == "comment":
            return
        if t == "command":
            self._command(node, context, depth, stdin, redirects, stdin_text)
        elif t == "declaration_command" or t == "unset_command":
            self._declaration(node, context, depth, redirects)
        elif t == "redirected_statement":
            self._redirected(node, context, depth, stdin)
        elif t == "pipeline":
            first = True
            for ch in node.named_children:
                self._node(ch, context if context != "top" else "pipeline", depth,
                           stdin=stdin if first else "pipe")
                first = False
        elif t == "function_definition":
            name_node = node.child_by_field_name("name") or node.named_children[0]
            name = name_node.text.decode("utf-8", "replace")
            self.functions.add(name)
            for ch in node.named_children:
                if ch is not name_node and ch.id != name_node.id:
                    self._node(ch, f"function {name}", depth)
        elif t == "variable_assignment":
            self._assignment(node, context, depth)
        elif t in ("simple_expansion", "expansion"):
            self._expansion(node, context, depth)
        elif t == "variable_name":
            # a bare name inside arithmetic ($((V)), ((V++)), array subscripts) is a read
            self.variables.append(node.text.decode("utf-8", "replace"))
        elif t == "heredoc_body":
            self._children(node, context, depth)
            for ch in node.named_children:
                if ch.type == "heredoc_content" and "`" in ch.text.decode("utf-8", "replace"):
                    self.problems.append("backticks inside a here-document are not analysed")
        elif t == "for_statement":
            # the loop variable is assigned, not read
            for ch in node.named_children:
                if ch.type == "variable_name":
                    self.assignments.append((ch.text.decode(), literal_word("")))
                    continue
                self._node(ch, context, depth)
        elif t in ("word", "concatenation", "string", "raw_string", "ansi_c_string",
                   "number", "translated_string"):
            w = make_word(node, self.problems)
            self.words.append(w)
            self._children(node, context, depth)
        elif t == "ERROR":
            self._children(node, context, depth)
        else:
            self._children(node, context, depth)

    def _after_word(self, node: Any, context: str, depth: int) -> None:
        """Walk what is nested in a word already recorded (without recording it again)."""
        t = node.type
        if t in _LEAF_WORDS:
            return  # nothing nested in a bare word, number or single-quoted string
        if t in _PLAIN_WORDS:
            self._children(node, context, depth)
        else:
            self._node(node, context, depth)

    def _expansion(self, node: Any, context: str, depth: int) -> None:
        names = [c for c in node.named_children if c.type == "variable_name"]
        indirect = any(not c.is_named and c.type == "!" for c in node.children)
        if names:
            nm = names[0].text.decode("utf-8", "replace")
            self.variables.append(("!" + nm) if indirect else nm)
        elif node.type == "simple_expansion" or node.type == "expansion":
            # $@, $1, $$, ${!...} with specials: record the raw text
            raw = node.text.decode("utf-8", "replace")
            if indirect:
                self.variables.append("!" + raw)
        for ch in node.named_children:
            if ch.type == "variable_name":
                continue
            self._node(ch, context, depth)

    def _assignment(self, node: Any, context: str, depth: int) -> tuple[str, Word]:
        name_node = node.named_children[0] if node.named_children else None
        name = ""
        if name_node is not None:
            if name_node.type == "subscript":
                sub = name_node.named_children
                name = sub[0].text.decode("utf-8", "replace") if sub else ""
                for s in sub[1:]:
                    self._node(s, context, depth)
            else:
                name = name_node.text.decode("utf-8", "replace")
        vals = node.named_children[1:]
        if vals:
            value = make_word(vals[0], self.problems) if vals[0].type in _WORD_NODES else Word(
                text=vals[0].text.decode("utf-8", "replace"), value="", pattern="*",
                literal=False, dynamic=True)
            for v in vals:
                self._node(v, context, depth)
        else:
            value = literal_word("")
        self.assignments.append((name, value))
        self.words.append(value)
        return name, value

    def _redirect(self, node: Any, context: str, depth: int) -> Redirect | None:
        t = node.type
        if t == "file_redirect":
            fd = None
            op = ""
            target = None
            for ch in node.children:
                if ch.type == "file_descriptor":
                    fd = ch.text.decode()
                elif not ch.is_named:
                    op = ch.text.decode()
                elif target is None:
                    target = make_word(ch, self.problems)
                    self.words.append(target)
                    self._node(ch, context, depth)
            output = op in _OUTPUT_OPS or (op.startswith(">") and op != ">&-")
            if op in (">&", "<&", ">&-", "<&-") and target is not None and (
                    target.value.isdigit() or target.value == "-"):
                output = False  # fd duplication / closing, not a file
            r = Redirect(op=op, fd=fd, target=target, output=output)
            self.redirects.append(r)
            return r
        if t == "herestring_redirect":
            for ch in node.named_children:
                self._node(ch, context, depth)
            return Redirect(op="<<<", fd=None, target=None, output=False)
        if t == "heredoc_redirect":
            return Redirect(op="<<", fd=None, target=None, output=False)
        return None

    def _redirected(self, node: Any, context: str, depth: int, stdin: str) -> None:
        body = node.child_by_field_name("body")
        redirects: list[Redirect] = []
        stdin_kind = stdin
        stdin_text: str | None = None
        later: list[Any] = []
        for ch in node.named_children:
            if body is not None and ch.id == body.id:
                continue
            if ch.type == "heredoc_redirect":
                quoted = False
                for h in ch.named_children:
                    if h.type == "heredoc_start":
                        quoted = any(q in h.text.decode() for q in "'\"\\")
                    elif h.type == "heredoc_body":
                        stdin_text = h.text.decode("utf-8", "replace")
                        self._node(h, context, depth)
                        if not quoted and h.named_children == [] and (
                                "$" in stdin_text or "`" in stdin_text):
                            self.problems.append("unparsed expansion in a here-document")
                    elif h.type in ("file_redirect", "herestring_redirect"):
                        r = self._redirect(h, context, depth)
                        if r is not None:
                            redirects.append(r)
                    elif h.type != "heredoc_end":
                        later.append(h)  # `cat <<EOF | sh`: the pipeline hangs off the heredoc
                stdin_kind = "heredoc"
                redirects.append(Redirect(op="<<", fd=None, target=None, output=False))
            elif ch.type == "herestring_redirect":
                for s in ch.named_children:
                    w = make_word(s, self.problems)
                    stdin_text = w.value if w.literal else None
                stdin_kind = "herestring"
                r = self._redirect(ch, context, depth)
                if r is not None:
                    redirects.append(r)
            elif ch.type == "file_redirect":
                r = self._redirect(ch, context, depth)
                if r is not None:
                    redirects.append(r)
                    if r.op == "<" and stdin_kind == "inherit":
                        stdin_kind = "file"
            else:
                self._node(ch, context, depth)
        if body is not None:
            self._node(body, context, depth, stdin=stdin_kind, redirects=tuple(redirects),
                       stdin_text=stdin_text)
        for h in later:
            if h.type == "pipeline":
                first = True
                for p in h.named_children:
                    self._node(p, context if context != "top" else "pipeline", depth,
                               stdin="pipe")
                    first = False
            else:
                self._node(h, context, depth, stdin="pipe")

    def _declaration(self, node: Any, context: str, depth: int,
                     redirects: tuple[Redirect, ...]) -> None:
        kw = next((c.text.decode() for c in node.children if not c.is_named), "")
        argv = [literal_word(kw)]
        for ch in node.named_children:
            if ch.type == "variable_assignment":
                name, value = self._assignment(ch, context, depth)
                argv.append(Word(text=ch.text.decode("utf-8", "replace"),
                                 value=name + "=" + value.value, pattern="*",
                                 literal=value.literal, dynamic=value.dynamic))
            elif ch.type == "variable_name":
                argv.append(literal_word(ch.text.decode("utf-8", "replace")))
            else:
                w = make_word(ch, self.problems)
                self.words.append(w)
                argv.append(w)
                self._node(ch, context, depth)
        self.commands.append(Command(argv=tuple(argv), text=node.text.decode("utf-8", "replace"),
                                     context=context, redirects=redirects,
                                     kind="unset" if kw == "unset" else "declaration"))

    def _command(self, node: Any, context: str, depth: int, stdin: str,
                 redirects: tuple[Redirect, ...], stdin_text: str | None) -> None:
        assigns: list[tuple[str, Word]] = []
        argv: list[Word] = []
        extra_redirects = list(redirects)
        for ch in node.named_children:
            t = ch.type
            if t == "variable_assignment":
                assigns.append(self._assignment(ch, context, depth))
            elif t == "command_name":
                inner = ch.named_children[0] if ch.named_children else ch
                w = make_word(inner, self.problems)
                argv.append(w)
                self.words.append(w)
                self._after_word(inner, context, depth)
            elif t in ("file_redirect", "herestring_redirect", "heredoc_redirect"):
                if t == "herestring_redirect":
                    stdin = "herestring"
                    for s in ch.named_children:
                        w = make_word(s, self.problems)
                        stdin_text = w.value if w.literal else None
                r = self._redirect(ch, context, depth)
                if r is not None:
                    extra_redirects.append(r)
            else:
                w = make_word(ch, self.problems)
                argv.append(w)
                self.words.append(w)
                self._after_word(ch, context, depth)
        text = node.text.decode("utf-8", "replace")
        if not argv:
            return
        name = argv[0].value if argv[0].literal else None
        cmd = Command(argv=tuple(argv), text=text, context=context, assignments=tuple(assigns),
                      redirects=tuple(extra_redirects), stdin=stdin, stdin_text=stdin_text,
                      function_call=name in self.functions if name else False)
        idx = len(self.commands)
        self.commands.append(cmd)
        if name in ("cd", "pushd", "popd"):
            self.changes_dir = True
        self._option_outputs(cmd)
        self._inner(cmd, idx, depth)

    def _option_outputs(self, cmd: Command) -> None:
        """Files a command writes because an option or argument says so (`git diff
        --output=F`, `sort -o F`, `tee F`, `dd of=F`, `pytest --basetemp=D`): recorded as
        output redirects, so they obey the same rule (inside the project, not into `.git/`,
        `.claude/`, the store or a protected file)."""
        _option_output_targets(cmd, self.redirects)

    # -- what runs inside a command ----------------------------------------------------------
    def _inner(self, cmd: Command, idx: int, depth: int) -> None:
        """Find commands that `cmd` runs itself (wrappers, evaluators, shells)."""
        if not cmd.name_literal:
            return
        name = cmd.name
        args = list(cmd.args)
        vals = [a.value for a in args]

        def sub(start: int, label: str) -> None:
            rest = args[start:]
            if not rest:
                return
            self.commands.append(Command(argv=tuple(rest), text=" ".join(a.text for a in rest),
                                         context=label, parent=idx, offset=start + 1))
            self._inner(self.commands[-1], len(self.commands) - 1, depth + 1)

        def code(words: list[Word], label: str, offset: int) -> None:
            if not all(w.literal for w in words):
                self.problems.append(f"{label}: the code it runs is not literal text")
                return
            self.run(" ".join(w.value for w in words), label, depth + 1, parent=idx,
                     offset=offset)

        def opaque(why: str) -> None:
            self.problems.append(f"`{name}`: {why}")

        base = name
        if base in _SHELLS or (base == "busybox" and vals[:1] and vals[0] in _SHELLS):
            if base == "busybox":
                args, vals = args[1:], vals[1:]
            i = 0
            while i < len(vals):
                v = vals[i]
                if v == "-c" or (v.startswith("-") and not v.startswith("--") and "c" in v[1:]):
                    if i + 1 < len(args):
                        code([args[i + 1]], f"{name} -c", i + 2)
                    else:
                        opaque("-c without code")
                    return
                if v in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
                    i += 2
                    continue
                if v.startswith(("-", "+")) and v not in ("-", "--"):
                    if "s" in v[1:] and not v.startswith("--"):
                        break  # -s: read commands from stdin
                    i += 1
                    continue
                if v == "--":
                    i += 1
                if i < len(vals):
                    return  # runs a script file: the shell itself must be allowed
                break
            # reads commands from stdin
            if cmd.stdin in ("heredoc", "herestring") and cmd.stdin_text is not None:
                self.run(cmd.stdin_text, f"{name} <<", depth + 1, parent=idx, offset=len(cmd.argv))
            else:
                opaque("reads commands from its input, which cannot be checked")
            return
        if base == "eval":
            code(args, "eval", 1)
        elif base in ("exec", "command", "builtin", "nohup", "time", "setsid", "coproc",
                      "chroot", "unbuffer", "caffeinate", "flock"):
            i = 0
            if base == "exec":
                while i < len(vals) and vals[i].startswith("-"):
                    i += 2 if vals[i] == "-a" else 1
            elif base == "command":
                if any(v in ("-v", "-V") for v in vals[:1]):
                    return  # lookup only
                while i < len(vals) and vals[i].startswith("-"):
                    i += 1
            elif base in ("time", "setsid"):
                while i < len(vals) and vals[i].startswith("-"):
                    i += 2 if vals[i] in ("-f", "-o", "--format", "--output") else 1
            elif base == "flock":
                while i < len(vals) and vals[i].startswith("-"):
                    if vals[i] in ("-c", "--command"):
                        code(args[i + 1:i + 2], "flock -c", i + 2)
                        return
                    i += 2 if vals[i] in ("-w", "--timeout", "-E") else 1
                i += 1  # the lock file
            elif base == "chroot":
                i = 1
            elif i < len(vals) and vals[i] == "--":
                i += 1
            if i < len(vals) and vals[i] == "--":
                i += 1
            sub(i, name)
        elif base in ("sudo", "doas"):
            i = 0
            with_arg = {"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-R", "-T"}
            while i < len(vals) and vals[i].startswith("-") and vals[i] != "--":
                if vals[i] in ("-s", "-i", "--shell", "--login", "-e", "--edit"):
                    opaque("starts a shell or editor")
                    return
                i += 2 if vals[i] in with_arg else 1
            if i < len(vals) and vals[i] == "--":
                i += 1
            while i < len(vals) and "=" in vals[i] and not vals[i].startswith("="):
                i += 1
            sub(i, name)
        elif base == "su":
            for j, v in enumerate(vals):
                if v in ("-c", "--command", "--session-command"):
                    code(args[j + 1:j + 2], "su -c", j + 2)
                    return
            opaque("starts a shell")
        elif base == "env":
            i = 0
            while i < len(vals):
                v = vals[i]
                if v in ("-S", "--split-string") or v.startswith(("-S", "--split-string=")):
                    opaque("-S splits a string into a command")
                    return
                if v in ("-u", "--unset", "-C", "--chdir"):
                    i += 2
                    continue
                if v == "--":
                    i += 1
                    break
                if v.startswith("-") and v != "-":
                    i += 1
                    continue
                if v == "-":
                    i += 1
                    continue
                if "=" in v and not v.startswith("="):
                    nm = v.split("=", 1)[0]
                    self.assignments.append((nm, literal_word(v.split("=", 1)[1])))
                    i += 1
                    continue
                break
            while i < len(vals) and "=" in vals[i] and not vals[i].startswith("="):
                nm = vals[i].split("=", 1)[0]
                self.assignments.append((nm, literal_word(vals[i].split("=", 1)[1])))
                i += 1
            sub(i, name)
        elif base in ("nice", "ionice", "stdbuf", "timeout", "taskset", "chrt", "prlimit",
                      "cpulimit", "unshare", "nsenter", "firejail", "torsocks", "proxychains",
                      "strace", "ltrace", "valgrind", "gdb", "catchsegv", "faketime", "xvfb-run",
                      "dbus-run-session", "systemd-run", "runuser", "pkexec", "sg", "newgrp"):
            i = 0
            with_arg = {
                "nice": {"-n", "--adjustment"},
                "ionice": {"-c", "-n", "-p", "-P", "-u", "--class", "--classdata"},
                "stdbuf": {"-i", "-o", "-e"},
                "timeout": {"-s", "-k", "--signal", "--kill-after"},
                "taskset": set(),
                "chrt": set(),
            }.get(base, set())
            while i < len(vals) and vals[i].startswith("-") and vals[i] != "--":
                i += 2 if vals[i] in with_arg else 1
            if i < len(vals) and vals[i] == "--":
                i += 1
            if base == "timeout" and i < len(vals):
                i += 1  # the duration
            if base in ("taskset", "chrt") and i < len(vals):
                i += 1  # mask / priority
            if base in ("runuser", "sg", "newgrp", "pkexec", "gdb", "nsenter", "unshare",
                        "systemd-run", "firejail"):
                if base == "runuser" and "-c" in vals:
                    code(args[vals.index("-c") + 1:vals.index("-c") + 2], "runuser -c",
                         vals.index("-c") + 2)
                    return
                opaque("runs commands in ways that are not analysed")
                return
            sub(i, name)
        elif base == "xargs":
            i = 0
            with_arg = {"-a", "-d", "-E", "-e", "-I", "-L", "-l", "-n", "-P", "-s",
                        "--arg-file", "--delimiter", "--eof", "--max-lines", "--max-args",
                        "--max-procs", "--max-chars", "--process-slot-var"}
            while i < len(vals) and vals[i].startswith("-") and vals[i] != "--":
                v = vals[i]
                i += 2 if v in with_arg else 1
            if i < len(vals) and vals[i] == "--":
                i += 1
            if i >= len(vals):
                self.commands.append(Command(argv=(literal_word("echo"),), text="echo",
                                             context="xargs (default command)", parent=idx,
                                             offset=len(cmd.argv)))
            else:
                sub(i, name)
        elif base == "find":
            j = 0
            while j < len(vals):
                if vals[j] in ("-exec", "-execdir", "-ok", "-okdir"):
                    k = j + 1
                    while k < len(vals) and vals[k] not in (";", "+"):
                        k += 1
                    inner = args[j + 1:k]
                    if inner:
                        self.commands.append(Command(
                            argv=tuple(inner), text=" ".join(a.text for a in inner),
                            context=f"find {vals[j]}", parent=idx, offset=j + 2))
                        self._inner(self.commands[-1], len(self.commands) - 1, depth + 1)
                    j = k + 1
                    continue
                j += 1
        elif base in ("watch",):
            i = 0
            while i < len(vals) and vals[i].startswith("-"):
                i += 2 if vals[i] in ("-n", "--interval", "-d", "--differences", "-q") else 1
            code(args[i:], "watch", i + 1)
        elif base == "script":
            for j, v in enumerate(vals):
                if v in ("-c", "--command"):
                    code(args[j + 1:j + 2], "script -c", j + 2)
                    return
            opaque("starts an interactive shell")
        elif base in ("parallel", "rush", "sem"):
            opaque("builds commands from its input")
        elif base in ("source", "."):
            pass  # runs a file: the command itself must be allowed
        elif base == "busybox":
            sub(0, name)
        elif base == "git":
            self._git(cmd, vals)

    def _git(self, cmd: Command, vals: list[str]) -> None:
        i = 0
        while i < len(vals) and vals[i].startswith("-"):
            v = vals[i]
            if v in ("-c", "--config-env") or v.startswith(("--config-env=", "--exec-path")):
                self.problems.append(
                    "`git -c` / `--config-env` / `--exec-path` can make git run any command")
                return
            i += 2 if v in ("-C", "--git-dir", "--work-tree", "--namespace") else 1
        if i < len(vals) and vals[i].startswith("!"):
            self.problems.append("a git alias that runs a shell command")


#: long options that name a file or directory the command writes (or, `--basetemp`, empties)
_OUTPUT_LONG = frozenset({
    "--output", "--output-file", "--output-document", "--output-directory", "--outfile",
    "--out-file", "--log-file", "--logfile", "--junitxml", "--junit-xml", "--junit-prefix",
    "--basetemp", "--result-log", "--resultlog", "--report-log", "--html", "--cov-report",
    "--debug", "--dump", "--save", "--write", "--out", "--output-dir", "--outdir",
    "--out-dir", "--target-dir", "--cache-dir", "--reportlog", "--json-report-file"})
#: short options that name a written file, per command
_OUTPUT_SHORT = {"git": {"-o"}, "sort": {"-o"}, "curl": {"-o"}, "wget": {"-O", "-o", "-a"},
                 "gcc": {"-o"}, "cc": {"-o"}, "g++": {"-o"}, "clang": {"-o"}, "c++": {"-o"},
                 "ld": {"-o"}, "go": {"-o"}, "rustc": {"-o"}, "uniq": set(), "split": set(),
                 "script": set(), "npm": set()}
#: commands whose plain arguments are files they write
_ARGS_WRITTEN = frozenset({"tee", "touch", "truncate", "sponge"})


def _option_output_targets(cmd: Command, out: list[Redirect]) -> None:
    if not cmd.name_literal:
        return
    name = cmd.name
    args = cmd.args
    short = _OUTPUT_SHORT.get(name, ())

    def add(op: str, w: Word, value: str | None = None) -> None:
        if value is not None:
            w = literal_word(value) if w.literal else Word(
                text=w.text, value=value, pattern="*", literal=False, dynamic=w.dynamic,
                glob=w.glob)
        out.append(Redirect(op=op, fd=None, target=w, output=True))

    i, n = 0, len(args)
    past_options = False
    while i < n:
        w = args[i]
        v = w.value
        if v == "--":
            past_options = True
            i += 1
            continue
        if name in _ARGS_WRITTEN:
            if past_options or not v.startswith("-") or not w.literal:
                add(name, w)
            i += 1
            continue
        if name == "dd" and v.startswith("of="):
            add("dd of=", w, v[3:])
        elif not past_options and v.startswith("--"):
            opt, eq, val = v.partition("=")
            if opt in _OUTPUT_LONG:
                if opt == "--cov-report" and ":" in val:
                    val = val.split(":", 1)[1]
                elif opt == "--cov-report":
                    val = ""
                if eq and val:
                    add(opt, w, val)
                elif not eq and opt not in ("--cov-report", "--debug") and i + 1 < n:
                    add(opt, args[i + 1])
                    i += 1
        elif not past_options and short and v[:2] in short and v.startswith("-"):
            if len(v) > 2:
                add(v[:2], w, v[2:])
            elif i + 1 < n:
                add(v, args[i + 1])
                i += 1
        i += 1


def _replace(c: Command, **kw: Any) -> Command:
    return c.replace(**kw)


def _has_missing(node: Any) -> bool:
    if node.is_missing:
        return True
    if not node.has_error:
        # missing nodes also set has_error on ancestors in tree-sitter; cheap early exit
        return False
    return any(_has_missing(c) for c in node.children)


def _first_error(node: Any) -> str:
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


def analyze(command_line: str) -> ShellAnalysis:
    """Parse `command_line` and list everything that would run. Never raises on any input.

    The analysis is a pure function of the text and immutable, so it is cached (LRU) for lines
    up to 4 KiB (256 lines): a long-running front end (the proxy, `statewright check`) sees the same lines
    again and again."""
    if type(command_line) is str and len(command_line) <= _CACHE_MAX_LINE:
        return _analyze_cached(command_line)
    return _analyze(command_line)


@lru_cache(maxsize=256)
def _analyze_cached(command_line: str) -> ShellAnalysis:
    return _analyze(command_line)


def _analyze(command_line: str) -> ShellAnalysis:
    w = _Walker(command_line)
    try:
        w.run(command_line, "top", 0)
    except RecursionError:
        w.problems.append("shell code nested too deeply to analyse")
    return ShellAnalysis(
        source=command_line, commands=tuple(w.commands), redirects=tuple(w.redirects),
        assignments=tuple(w.assignments), variables=tuple(w.variables),
        functions=frozenset(w.functions), words=tuple(w.words), problems=tuple(w.problems),
        changes_dir=w.changes_dir,
    )


# --------------------------------------------------------------------------------------------
# check 5: allowed_commands

#: Harmless builtins that never need to be listed: they run nothing and write nothing.
IMPLICIT_COMMANDS = frozenset({"true", "false", ":"})

#: Variables whose value changes what a command runs or loads. Setting them (`VAR=x cmd`,
#: `VAR=x; cmd`, `env VAR=x cmd`) would let an allowed command run arbitrary code.
_DANGEROUS_VAR_RE = LazyRe(
    r"^(PATH|LD_\w*|DYLD_\w*|BASH_ENV|ENV|IFS|CDPATH|GLOBIGNORE|SHELLOPTS|BASHOPTS|PS[0-4]|"
    r"PROMPT_COMMAND|BASH_FUNC_\w*|BASH_LOADABLES_PATH|HOME|XDG_\w+|GIT_\w*|PYTHON\w*|NODE_\w*|"
    r"NPM_\w*|npm_\w*|PERL\w*|RUBY\w*|GEM_\w*|BUNDLE_\w*|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|"
    r"\w*_OPTIONS|\w*_OPTS|PAGER|\w*PAGER|EDITOR|VISUAL|BROWSER|LESS\w*|MANPAGER|SHELL|"
    r"TERMINFO\w*|GCONV_PATH|HOSTALIASES|LOCPATH|NLSPATH|MALLOC_\w+|SSH_ASKPASS\w*|"
    r"SUDO_ASKPASS|GNUPGHOME|TMPDIR|PYTEST_\w*|COV_\w*|TOX_\w*|VIRTUAL_ENV|CONDA_\w*|"
    r"PIP_\w*|UV_\w*|CARGO_\w*|RUSTC\w*|RUSTFLAGS|CC|CXX|LD|MAKEFLAGS|MAKE|GOFLAGS|"
    r"DOCKER_HOST|KUBECONFIG|STATEWRIGHT_\w*|CLAUDE_\w*)$")


def dangerous_assignment(name: str) -> bool:
    return bool(_DANGEROUS_VAR_RE.match(name))


#: characters `shlex.split` treats as plain word characters (no quoting, escaping, comments
#: or unusual whitespace): a prefix made of these and spaces splits on its spaces
_PLAIN_PREFIX_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                "0123456789-_./:=@+,%^ ")


@lru_cache(maxsize=1024)
def _prefix_tokens(prefix: str) -> tuple[str, ...]:
    if type(prefix) is str and _PLAIN_PREFIX_CHARS.issuperset(prefix):
        return tuple(t for t in prefix.split(" ") if t)  # what shlex.split gives, without it
    import shlex

    try:
        return tuple(shlex.split(prefix))
    except ValueError:
        return tuple(prefix.split())


def match_prefix(argv: tuple[Word, ...], allowed: tuple[str, ...]) -> str | None:
    """The longest allowed prefix that `argv` starts with, token by token after unquoting.

    Every token of the prefix must be matched by a literal word of exactly that value.
    """
    if not argv or not argv[0].literal:
        return None
    best: str | None = None
    best_len = -1
    n = len(argv)
    for p, toks in _prefix_index(tuple(allowed)).get(argv[0].value, ()):
        k = len(toks)
        if k > n or k <= best_len:
            continue
        i = 1
        while i < k:
            w = argv[i]
            if not w.literal or w.value != toks[i]:
                break
            i += 1
        else:
            best, best_len = p, k
    return best


@lru_cache(maxsize=256)
def _prefix_index(allowed: tuple[str, ...]) -> dict[str, tuple[tuple[str, tuple[str, ...]], ...]]:
    """Allowed prefixes grouped by their first token (in the order given)."""
    out: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
    for p in allowed:
        toks = _prefix_tokens(p)
        if toks:
            out.setdefault(toks[0], []).append((p, toks))
    return {k: tuple(v) for k, v in out.items()}


def check_commands(analysis: ShellAnalysis, allowed_commands: tuple[str, ...] | list[str],
                   cd_check: Callable[[Command], str | None] | None = None) -> Verdict:
    """Check 5: every command must match an allowed prefix; fail closed on any doubt.

    `cd_check(command)` (given by the gate) decides a `cd` that no allowed prefix covers: it
    returns None when the directory change stays inside the project, else why it is refused.
    """
    allowed = tuple(allowed_commands)
    trace: list[str] = []
    denied: list[str] = []
    for p in analysis.problems:
        trace.append(f"problem: {p} -> deny")
        denied.append(p)
    matched: dict[int, int] = {}  # command index -> number of tokens its prefix covered
    for idx, c in enumerate(analysis.commands):
        shown = " ".join(w.text for w in c.argv)[:120]
        where = f" [{c.context}]" if c.context not in ("top", "pipeline") else ""
        if c.kind == "unset":
            trace.append(f"`{shown}`{where}: unset is always allowed")
            matched[idx] = 1
            continue
        if not c.name_literal:
            why = f"`{c.argv[0].text}`: the command name is not a literal word"
            trace.append(f"`{shown}`{where}: {why} -> deny")
            denied.append(why)
            continue
        name = c.name
        for nm, val in c.assignments:
            if dangerous_assignment(nm):
                why = f"`{nm}=...` changes what `{name}` runs"
                trace.append(f"`{shown}`{where}: {why} -> deny")
                denied.append(why)
        if c.parent is not None and matched.get(c.parent, 0) > c.offset:
            trace.append(f"`{shown}`{where}: covered by the allowed prefix of its wrapper")
            matched[idx] = len(c.argv)
            continue
        p = match_prefix(c.argv, allowed)
        if p is not None:
            matched[idx] = len(_prefix_tokens(p))
            trace.append(f"`{shown}`{where}: allowed by `{p}`")
            continue
        if c.function_call and c.parent is None:
            matched[idx] = 1
            trace.append(f"`{shown}`{where}: calls the function `{name}` defined in this line "
                         "(its body is checked command by command)")
            continue
        if name == "cd" and cd_check is not None and c.parent is None:
            why = cd_check(c)
            if why is None:
                matched[idx] = 1
                trace.append(f"`{shown}`{where}: changes directory inside the project")
                continue
            trace.append(f"`{shown}`{where}: {why} -> deny")
            denied.append(why)
            continue
        if name in IMPLICIT_COMMANDS:
            matched[idx] = 1
            trace.append(f"`{shown}`{where}: `{name}` is always allowed")
            continue
        if "/" in name:
            why = f"`{name}` is a path; only the bare names in allowed_commands may run"
        else:
            why = f"`{shown[:60]}` does not match any allowed command"
        trace.append(f"`{shown}`{where}: no allowed prefix matches -> deny")
        denied.append(why)
    for nm, val in analysis.assignments:
        if dangerous_assignment(nm) and not any(
                nm == a for c in analysis.commands for a, _ in c.assignments):
            why = f"assigning `{nm}` changes what later commands run"
            trace.append(f"`{nm}=`: {why} -> deny")
            denied.append(why)
    if not analysis.commands and not analysis.problems:
        trace.append("no commands")
    if denied:
        uniq = list(dict.fromkeys(denied))
        return Verdict(False, "; ".join(uniq[:4]) + (" ..." if len(uniq) > 4 else ""),
                       tuple(trace))
    return Verdict(True, "", tuple(trace))


# --------------------------------------------------------------------------------------------
# check 6: blocked_env

_DUMP_ALWAYS = {"printenv"}
_INTERPRETERS = {"python", "python2", "python3", "node", "nodejs", "deno", "bun", "perl", "ruby",
                 "php", "lua", "luajit", "Rscript", "R", "osascript", "awk", "gawk", "mawk", "nawk",
                 "jq", "tclsh", "wish", "pwsh", "powershell", "julia", "groovy", "scala", "java",
                 "jshell", "irb", "sed", "expect", "gdb"}
_ENV_API_RE = LazyRe(
    r"environ|getenv|ENVIRON|process\.env|%ENV|\$ENV|ENV\[|ENV\.|\bENV\b|Deno\.env|"
    r"Sys\.getenv|\$env:|System\.getenv|\benv\b|os\.Environ|printenv|/proc/")


def _is_python(name: str) -> bool:
    return re.fullmatch(r"python[0-9.]*|pypy[0-9.]*", name) is not None


def _env_dump(c: Command) -> str | None:
    """Why this command dumps the environment (None if it does not)."""
    if not c.name_literal:
        return None
    n = c.name
    vals = [a.value for a in c.args]
    if n in _DUMP_ALWAYS:
        return f"`{n}` prints environment variables"
    if n == "env":
        # env with no command prints the environment
        rest = [v for v in vals if not (v.startswith("-") or ("=" in v and not v.startswith("=")))]
        if not rest:
            return "`env` without a command prints the environment"
        return None
    if n == "set" and not any(v.startswith(("-", "+")) and v not in ("-o", "+o") for v in vals):
        return "`set` prints every shell variable"
    if n == "set" and vals and vals[-1] in ("-o", "+o"):
        return None
    if n in ("declare", "typeset", "local"):
        if not vals or any(v.startswith("-") and set(v[1:]) & set("pxF") for v in vals):
            if not any("=" in v for v in vals) or "-p" in vals:
                return f"`{n} {' '.join(vals)}` lists variables"
    if n in ("export", "readonly"):
        if not vals or "-p" in vals:
            return f"`{n}` without names lists variables"
    if n == "compgen" and any(v in ("-v", "-e", "-A") or v.startswith(("-v", "-e"))
                              for v in vals):
        return "`compgen -v/-e/-A` lists variable names"
    if n == "ps" and any((re.fullmatch(r"-?[a-zA-Z]*e[a-zA-Z]*", v) and not v.startswith("-"))
                         or v in ("-E",) for v in vals):
        return "`ps e` shows the environment of processes"
    if n == "alias" or n == "trap":
        return None
    return None


@lru_cache(maxsize=256)
def _name_re(name: str) -> re.Pattern[str]:
    return re.compile(r"(?<![A-Za-z0-9_])" + re.escape(name) + r"(?![A-Za-z0-9_])")


def _mentions(text: str, names: tuple[str, ...]) -> list[str]:
    return [n for n in names if n in text and _name_re(n).search(text)]


def _could_be_proc_environ(w: Word) -> bool:
    if "environ" in w.value or w.value.startswith("/proc") or "/proc/" in w.value:
        return True
    if not (w.glob or w.dynamic):
        return False
    comps = [c for c in w.pattern.split("/") if c]
    if len(comps) < 2:
        return False
    for target in (["proc", "self", "environ"], ["proc", "1", "environ"],
                   ["proc", "self", "task", "1", "environ"], ["proc", "thread-self", "environ"]):
        if len(comps) <= len(target) and all(
                fnmatch.fnmatchcase(t, c) for t, c in zip(target[-len(comps):], comps)):
            if comps[-1] != "*" or len(comps) >= 3:
                return True
    return False


def check_env(analysis: ShellAnalysis, blocked_env: tuple[str, ...] | list[str]) -> Verdict:
    """Check 6: refuse anything that could read a blocked variable."""
    blocked = tuple(blocked_env)
    if not blocked:
        return Verdict(True, "", ("no blocked variables",))
    trace: list[str] = []
    denied: list[str] = []
    for v in analysis.variables:
        if v.startswith("!"):
            why = f"indirect expansion `${{{v}}}` could read any variable"
            trace.append(why + " -> deny")
            denied.append(why)
        elif v in blocked:
            why = f"expands the blocked variable `{v}`"
            trace.append(why + " -> deny")
            denied.append(why)
    named = _mentions(analysis.source, blocked)
    for c in analysis.commands:
        if c.stdin_text:
            named += _mentions(c.stdin_text, blocked)
        for w in c.argv:
            named += _mentions(w.value, blocked)
    for n in dict.fromkeys(named):
        why = f"names the blocked variable `{n}`"
        trace.append(why + " -> deny")
        denied.append(why)
    for c in analysis.commands:
        d = _env_dump(c)
        if d:
            trace.append(d + " -> deny")
            denied.append(d)
        if c.name_literal and (c.name in _INTERPRETERS or _is_python(c.name)):
            code = " ".join(a.value for a in c.args) + "\n" + (c.stdin_text or "")
            if _ENV_API_RE.search(code):
                why = f"`{c.name}` is given code that reads the environment"
                trace.append(why + " -> deny")
                denied.append(why)
            elif c.stdin in ("pipe", "file", "inherit") and not c.args and c.name != "sed":
                pass  # the interpreter itself must be allowed by check 5
    for w in analysis.words:
        if _could_be_proc_environ(w):
            why = f"`{w.text}` could read a process environment (/proc/*/environ)"
            trace.append(why + " -> deny")
            denied.append(why)
    for r in analysis.redirects:
        if r.target is not None and _could_be_proc_environ(r.target):
            why = "redirects from a process environment (/proc/*/environ)"
            trace.append(why + " -> deny")
            denied.append(why)
    if denied:
        uniq = list(dict.fromkeys(denied))
        return Verdict(False, "; ".join(uniq[:4]), tuple(trace))
    trace.append(f"no read of {', '.join(blocked)} found")
    return Verdict(True, "", tuple(trace))


# --------------------------------------------------------------------------------------------
# rewriting (updatedInput)


def rewrite_for_env(command: str, blocked_env: tuple[str, ...] | list[str],
                    env_overrides: dict[str, str]) -> str:
    """The command run with the blocked variables unset and the overrides exported."""
    parts: list[str] = []
    # a variable name is its own shell quoting (`shlex.quote(n) == n` for these names)
    names = [n for n in blocked_env if _VAR_NAME_RE.fullmatch(n)]
    if names:
        parts.append("unset " + " ".join(names))
    for k, v in env_overrides.items():
        if _VAR_NAME_RE.fullmatch(k):
            import shlex

            parts.append(f"export {k}={shlex.quote(str(v))}")
    if not parts:
        return command
    return "; ".join(parts) + "\n" + command


_VAR_NAME_RE = LazyRe(r"[A-Za-z_][A-Za-z0-9_]*")
