"""The walk: `analyze(line)` turns a parse tree into a `ShellAnalysis`.

`Walker` visits the tree node by node (one method per kind of node that matters; anything else
is walked for what it holds), records every command with its unquoted argv, every redirection,
assignment, variable expansion, word and function, and hands each command to `wrappers` to
find the commands it runs itself. Anything the walk cannot see through is a problem.
"""

from __future__ import annotations

from ...lean import TYPE_CHECKING, lru_cache
from .. import programs
from ..paths import has_surrogate
from ..programs import program_name
from ..programs.spec import EXACT_ONLY, respell, spell_argv
from ..types import CACHE_MAX_LINE
from . import arith
from .cwds import DIR_CHANGERS
from .parser import TYPE_OF, first_error, has_job_token, parse_line, status_node
from .records import Word, new_analysis, new_command, new_redirect
from .redirects import herestring_text, redirect, redirected
from .words import PLAIN_WORDS, WORD_CACHE, WORD_NODES, literal_word, make_word, part_word
from .wrappers import WRAPPERS, inner_commands

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable
    from typing import Any

    from .records import Command, Redirect, ShellAnalysis

_MAX_DEPTH = 8
_LEAF_WORDS = frozenset({"word", "raw_string"})  # `number` may hold `16#$(cmd)`
_REDIRECT_NODES = frozenset({"file_redirect", "herestring_redirect", "heredoc_redirect"})
known_word = WORD_CACHE.get
_NO_FUNCTIONS: frozenset[str] = frozenset()  # (one for every line that defines none)
_NO_FACTS: tuple[tuple[Any, ...], tuple[Any, ...]] = ((), ())  # (`programs.facts`, no name)


def analyze(command_line: str) -> ShellAnalysis:
    """Parse `command_line` and list everything that would run. Never raises on any input.

    The analysis is a pure function of the text and immutable, so it is cached (LRU) for lines
    up to 4 KiB (256 lines): a long-running front end (the proxy, `statewright check`) sees the
    same lines again and again."""
    if type(command_line) is str and len(command_line) <= CACHE_MAX_LINE:
        return _analyze_cached(command_line)
    return _analyze(command_line)


@lru_cache(maxsize=256)
def _analyze_cached(command_line: str) -> ShellAnalysis:
    return _analyze(command_line)


def _analyze(command_line: str) -> ShellAnalysis:
    w = Walker()
    try:
        w.run(command_line, "top", 0)
    except RecursionError:
        w.problems.append("shell code nested too deeply to analyse")
        w.status_command = -1  # (as when the walk did not end)
    # (`hidden_code` finds nothing in a line with nothing evaluated)
    hidden = w.hidden_code() if w.evaluated or w.integers else []
    w.problems += hidden
    return new_analysis(command_line, tuple(w.commands), tuple(w.redirects),
                        tuple(w.assignments), tuple(w.variables),
                        frozenset(w.functions) if w.functions else _NO_FUNCTIONS,
                        tuple(w.words), tuple(w.problems), w.changes_dir, w.status_command,
                        tuple(hidden), tuple(w.job_tokens.items()))


def _text(node: Any) -> str:
    return node.text.decode("utf-8", "replace")


class Walker:
    """What the walk has found so far (the fields of `ShellAnalysis`, as lists)."""

    __slots__ = ("_ascii", "_clean", "_status", "assignments", "changes_dir", "commands",
                 "evaluated", "functions", "integers", "job_tokens", "problems", "redirects",
                 "status_command", "tainted", "variables", "words")

    def __init__(self) -> None:
        self.commands: list[Command] = []
        self.redirects: list[Redirect] = []
        self.assignments: list[tuple[str, Word]] = []
        self.variables: list[str] = []
        self.functions: set[str] = set()
        self.words: list[Word] = []
        self.problems: list[str] = []
        self.changes_dir = False
        self.status_command = -1  # see ShellAnalysis.status_command
        # the `command` node whose exit status is the line's (`parser.status_node`)
        self._status: Any = None
        # what bash evaluates as arithmetic or a name with a subscript (`arith`): uses,
        # variables holding text the line does not fix, variables declared `-i` or `-n`
        # (what is assigned to them is evaluated)
        self.evaluated: list[tuple[str, str]] = []
        self.tainted: set[str] = set()
        self.integers: set[str] = set()
        self.job_tokens: dict[str, bool] = {}  # see ShellAnalysis.job_tokens
        # the text the tree being walked was parsed from, when it is ASCII (its byte offsets
        # are then its character offsets: a node's text is a slice of it); None otherwise
        self._ascii: str | None = None
        self._clean = False  # the tree being walked holds no error

    def text(self, node: Any) -> str:
        """The text of a node of the tree being walked."""
        src = self._ascii
        if src is not None:
            return src[node.start_byte:node.end_byte]
        return node.text.decode("utf-8", "replace")

    def hidden_code(self) -> list[str]:
        """Why code would run from text bash evaluates as arithmetic or a subscript."""
        uses = self.evaluated
        if self.integers:
            uses = list(uses)
            for name, value in self.assignments:
                if name in self.integers:
                    uses += arith.value_uses(value)
        if not uses:
            return []
        return arith.findings(uses, self.tainted)

    # -- entry ------------------------------------------------------------------------------
    def run(self, source: str, context: str, depth: int, parent: int | None = None,
            offset: int = 0) -> None:
        """Parse `source` and walk it. `parent`: the index of the command that runs this code
        (`sh -c`, `eval`, ...), which then owns its top-level commands."""
        if depth > _MAX_DEPTH:
            self.problems.append("shell code nested too deeply to analyse")
            return
        if "\x00" in source:
            self.problems.append("NUL byte in the command line")
            return
        if not source.isascii() and has_surrogate(source):
            # not valid Unicode: what the shell would run (the front end re-encodes it) is not
            # the text analysed here
            self.problems.append("the command line holds text that is not valid Unicode "
                                 "(a lone surrogate)")
            return
        root, data, source = parse_line(source)
        if "&" in source:
            self.job_tokens[source] = has_job_token(root, data)
        # (`has_missing(root)` of a tree without errors is `root.is_missing`)
        clean = not (root.has_error or root.is_missing)
        if not clean:
            where = first_error(root)
            self.problems.append(f"the command line does not parse cleanly ({where})")
        start = len(self.commands)
        if depth == 0 and parent is None:
            # (the node object the walk meets: `_command` compares objects, not node ids)
            self._status = status_node(root)
        outer, outer_clean = self._ascii, self._clean
        self._ascii = source if source.isascii() else None
        self._clean = clean
        try:
            self.node(root, context, depth)
        finally:
            self._ascii, self._clean = outer, outer_clean
        if parent is not None:
            # the top-level commands of re-parsed code belong to the command that runs it
            for i in range(start, len(self.commands)):
                c = self.commands[i]
                if c.parent is None:
                    self.commands[i] = c.replace(parent=parent, offset=offset)

    # -- what wrappers and evaluators run (used by `wrappers`) -------------------------------
    def sub(self, parent: int, words: list[Word], start: int, label: str, depth: int) -> None:
        """The command `words[start:]` that the command at index `parent` runs itself."""
        rest = words[start:]
        if not rest:
            return
        self.add_inner(parent, tuple(rest), label, start + 1, depth)

    def add_inner(self, parent: int, argv: tuple[Word, ...], label: str, offset: int,
                  depth: int) -> None:
        name = argv[0].value if argv[0].literal else ""
        prog = name if "/" not in name else program_name(name)  # (`/usr/bin/env`: `env`)
        if prog not in EXACT_ONLY and (spelled := spell_argv(prog, argv, self.problems)):
            argv = respell(self.words, argv, spelled)  # (`--chd=DIR`: `--chdir=DIR`)
        args = argv[1:]
        risks, outputs = programs.facts(name, args) if name else _NO_FACTS
        self.commands.append(new_command(argv, " ".join([a.text for a in argv]), label, (), (),
                                         "inherit", None, parent, offset, False, "simple",
                                         risks, args))
        if name in DIR_CHANGERS:  # (`builtin cd DIR`, `command cd DIR`)
            self.changes_dir = True
        if name in arith.EVALUATING or name in arith.DECLARING:
            arith.wrapped_builtin(self, name, [a.value for a in args], label)
        if outputs:
            self._option_outputs(args, outputs)
        if prog in WRAPPERS:
            inner_commands(self, self.commands[-1], len(self.commands) - 1, depth + 1)

    def _option_outputs(self, args: tuple[Word, ...], outputs: programs.Outputs) -> None:
        """Files an option or argument says the command writes (`git diff --output=F`,
        `sort -o F`, `tee F`, `cp a DEST`: `programs.facts`): recorded as output redirects, so
        they obey the same rule (inside the project, not into `.git/`, `.claude/`, the store or
        a protected file)."""
        for op, at, part in outputs:
            if at < 0:
                target = literal_word(part or ".")
            else:
                word = args[at]
                target = word if part is None else part_word(word, part)
            self.redirects.append(new_redirect(op, None, target, True))

    def code(self, parent: int, words: list[Word], label: str, offset: int, depth: int) -> None:
        """Shell code given as words (`sh -c CODE`, `eval WORDS`): parsed and walked."""
        if not all(w.literal for w in words):
            self.problems.append(f"{label}: the code it runs is not literal text")
            return
        self.run(" ".join(w.value for w in words), label, depth + 1, parent=parent,
                 offset=offset)

    # -- nodes ------------------------------------------------------------------------------
    def children(self, node: Any, context: str, depth: int) -> None:
        for ch in node.named_children:
            self.node(ch, context, depth)

    def node(self, node: Any, context: str, depth: int, stdin: str = "inherit",
             redirects: tuple[Redirect, ...] = (), stdin_text: str | None = None) -> None:
        t = TYPE_OF[node.kind_id]  # (`node.type`: see `parser.TYPE_OF`)
        if t == "command":
            self._command(node, context, depth, stdin, redirects, stdin_text)
            return
        visit = _VISIT.get(t)
        if visit is not None:
            visit(self, node, context, depth, stdin)
        elif t == "declaration_command" or t == "unset_command":
            self._declaration(node, context, depth, redirects)
        elif t != "comment":
            for ch in node.named_children:
                self.node(ch, context, depth)

    def _pipeline(self, node: Any, context: str, depth: int, stdin: str) -> None:
        inner = context if context != "top" else "pipeline"
        for ch in node.named_children:
            self.node(ch, inner, depth, stdin)
            stdin = "pipe"

    def _function(self, node: Any, context: str, depth: int, stdin: str) -> None:
        name_node = node.child_by_field_name("name") or node.named_children[0]
        name = _text(name_node)
        self.functions.add(name)
        for ch in node.named_children:
            if ch is not name_node and ch.id != name_node.id:
                self.node(ch, f"function {name}", depth)

    def _leaf(self, node: Any, context: str, depth: int, stdin: str) -> None:
        """A kind of node with nothing of its own to record (what `node` does with any such
        kind, without listing the children of a node that has none)."""
        if node.named_child_count:
            self.children(node, context, depth)

    def _variable_name(self, node: Any, context: str, depth: int, stdin: str) -> None:
        # a bare name inside arithmetic ($((V)), ((V++)), array subscripts) is a read
        self.variables.append(_text(node))

    def _heredoc_body(self, node: Any, context: str, depth: int, stdin: str) -> None:
        self.children(node, context, depth)
        for ch in node.named_children:
            if ch.type == "heredoc_content" and "`" in _text(ch):
                self.problems.append("backticks inside a here-document are not analysed")

    def _for(self, node: Any, context: str, depth: int, stdin: str) -> None:
        # the loop variable is assigned, not read
        var = None
        for ch in node.named_children:
            if ch.type == "variable_name":
                var = ch.text.decode()
                self.assignments.append((var, literal_word("")))
                continue
            if var is not None and ch.type != "do_group" and not arith.fixed_text(ch):
                self.tainted.add(var)
            self.node(ch, context, depth)

    def _word(self, node: Any, context: str, depth: int, stdin: str) -> None:
        src = self._ascii
        text = (src[node.start_byte:node.end_byte] if src is not None  # (`self.text(node)`)
                else node.text.decode("utf-8", "replace"))
        self.words.append(make_word(node, self.problems, text, None, src))
        if node.named_child_count:
            self.children(node, context, depth)

    def _after_word(self, node: Any, t: str, context: str, depth: int) -> None:
        """Walk what is nested in a word already recorded (without recording it again); `t`:
        its type."""
        if t in _LEAF_WORDS:
            return  # nothing nested in a bare word, number or single-quoted string
        if t in PLAIN_WORDS:
            if node.named_child_count:
                self.children(node, context, depth)
        else:
            self.node(node, context, depth)

    def _expansion(self, node: Any, context: str, depth: int, stdin: str = "inherit") -> None:
        indirect = offsets = prompt = False  # `${!...}`, `${s:OFF:LEN}`, `${x@P}`
        name = None  # the first variable name in it
        named: list[Any] = []
        for c in node.children:
            if c.is_named:
                named.append(c)
                if name is None and TYPE_OF[c.kind_id] == "variable_name":
                    name = c
            else:
                ct = TYPE_OF[c.kind_id]
                if ct == "!":
                    indirect = True
                elif ct == ":":
                    offsets = True
                elif ct == "P":  # (the `@P` operator: the value expanded as a prompt)
                    prompt = True
        if name is not None:
            nm = self.text(name)
            self.variables.append(("!" + nm) if indirect else nm)
            if prompt:
                arith.prompt_code(self, nm, depth)
            if indirect:
                self.evaluated.append(("var", nm))  # its value is a name
        elif indirect:
            # ${!...} with specials ($@, $1, $$): record the raw text
            self.variables.append("!" + self.text(node))
        first = True
        for ch in named:
            if first:
                first = False
                if TYPE_OF[ch.kind_id] == "variable_name":
                    continue
            elif offsets:
                arith.walk(self, ch, context, depth)
                continue
            self.node(ch, context, depth)

    def _assignment_node(self, node: Any, context: str, depth: int, stdin: str) -> None:
        self._assignment(node, context, depth)

    def _assignment(self, node: Any, context: str, depth: int,
                    evaluated: str = "") -> tuple[str, Word]:
        """An assignment; `evaluated`: `i` when its value is arithmetic (`declare -i`), `n`
        when it is a name (`declare -n`)."""
        name_node = node.named_children[0] if node.named_children else None
        name = ""
        if name_node is not None:
            if name_node.type == "subscript":
                sub = name_node.named_children
                name = _text(sub[0]) if sub else ""
                for s in sub[1:]:
                    arith.walk(self, s, context, depth)
            else:
                name = _text(name_node)
        vals = node.named_children[1:]
        if vals:
            value = make_word(vals[0], self.problems) if vals[0].type in WORD_NODES else Word(
                text=_text(vals[0]), value="", pattern="*", literal=False, dynamic=True)
            for v in vals:
                if evaluated == "i":
                    arith.walk(self, v, context, depth)
                elif evaluated == "n":
                    arith.name_operand(self, v, context, depth)
                else:
                    self.node(v, context, depth)
            if not (arith.fixed_text(vals[0])
                    or vals[0].type in ("arithmetic_expansion", "number")):
                self.tainted.add(name)
        else:
            value = literal_word("")
        self.assignments.append((name, value))
        self.words.append(value)
        if name in arith.PROMPT_VARS:  # (`PS4='$(cmd)'; set -x`: its `$(...)` runs)
            arith.prompt_code(self, name, depth)
        return name, value

    # -- commands ---------------------------------------------------------------------------
    def _declaration(self, node: Any, context: str, depth: int,
                     redirects: tuple[Redirect, ...]) -> None:
        kw = next((c.text.decode() for c in node.children if not c.is_named), "")
        argv = [literal_word(kw)]
        flags = "".join(_text(c)[1:] for c in node.named_children
                        if c.type == "word" and _text(c).startswith("-"))
        evaluated = "i" if "i" in flags else "n" if "n" in flags else ""
        for ch in node.named_children:
            if ch.type == "variable_assignment":
                name, value = self._assignment(ch, context, depth, evaluated)
                if evaluated:
                    self.integers.add(name)
                if evaluated == "n":  # (`declare -n r=PATH`: assigning `r` assigns PATH)
                    self.assignments.append((value.value, arith.READ_VALUE))
                argv.append(Word(text=_text(ch), value=name + "=" + value.value, pattern="*",
                                 literal=value.literal, dynamic=value.dynamic))
            elif ch.type == "variable_name":
                argv.append(literal_word(_text(ch)))
                if evaluated:
                    self.integers.add(_text(ch))
            else:
                w = make_word(ch, self.problems)
                self.words.append(w)
                argv.append(w)
                if kw != "unset" and ((not w.literal and w.value[:1] in ("-", "")) or (
                        w.value[:1] == "-" and "n" in w.value[1:])):
                    # (`declare "-n" r`, `declare $f r`: which variable an assignment to `r`
                    # then sets is not fixed)
                    self.problems.append(f"`{kw} {w.text}`: a name reference (-n) makes an "
                                         "assignment set another variable")
                if w.value.startswith("-") and w.literal:
                    self.node(ch, context, depth)
                else:
                    arith.name_operand(self, ch, context, depth)
                    if evaluated:
                        self.integers.add(w.value)
        self.commands.append(new_command(tuple(argv), _text(node), context, (), redirects,
                                         "inherit", None, None, 0, False,
                                         "unset" if kw == "unset" else "declaration", ()))

    def _command(self, node: Any, context: str, depth: int, stdin: str,
                 redirects: tuple[Redirect, ...], stdin_text: str | None,
                 more: list[Any] | None = None) -> None:
        """A simple command; `more`: the words after the targets of its `redirects`, which
        bash passes to it too (see `redirects`)."""
        src = self._ascii
        text = (src[node.start_byte:node.end_byte] if src is not None  # (`self.text(node)`)
                else node.text.decode("utf-8", "replace"))
        plain = _PLAIN_COMMANDS.get(text) if self._clean and more is None else None
        if plain is not None:
            # (a command of plain words met before: its words are not listed again)
            words_of, args, name, prog, risks, outputs = plain
            self.words += words_of
            assigns: tuple[tuple[str, Word], ...] = ()
        else:
            found = self._command_words(node, context, depth, stdin, redirects, stdin_text,
                                        more, text)
            if found is None:
                return
            words_of, assigns, redirects, stdin, stdin_text, name, keep = found
            prog = name if name is None or "/" not in name else program_name(name)
            if prog is not None and prog not in EXACT_ONLY:
                seen = len(self.problems)
                spelled = spell_argv(prog, words_of, self.problems)
                if spelled:
                    words_of = respell(self.words, words_of, spelled)  # (`--chd`: `--chdir`)
                if spelled or len(self.problems) != seen:
                    keep = False  # (not kept: a problem it adds is each line's)
            args = words_of[1:]
            risks, outputs = programs.facts(name, args) if name else _NO_FACTS
            if keep and self._clean and more is None and _plain_command(text, words_of, name):
                if len(_PLAIN_COMMANDS) >= _PLAIN_MAX:
                    _PLAIN_COMMANDS.clear()
                _PLAIN_COMMANDS[text] = (words_of, args, name, prog, risks, outputs)
        cmd = new_command(words_of, text, context, assigns, redirects, stdin, stdin_text,
                          None, 0, name in self.functions if name else False, "simple",
                          risks, args)
        commands = self.commands
        idx = len(commands)
        commands.append(cmd)
        if node is self._status:
            self.status_command = idx
        if name in DIR_CHANGERS:
            self.changes_dir = True
        if outputs:
            self._option_outputs(args, outputs)
        if prog in WRAPPERS:  # (what `inner_commands` looks into)
            inner_commands(self, cmd, idx, depth)

    def _command_words(self, node: Any, context: str, depth: int, stdin: str,
                       redirects: tuple[Redirect, ...], stdin_text: str | None,
                       more: list[Any] | None, text: str) -> tuple[Any, ...] | None:
        """Walk the children of `command` node `node`: (its argv, assignments, redirections,
        stdin, stdin text, name: None when not fixed text, whether it has only words and each
        a shared plain bare word), or None when it has no word."""
        plain = True
        assigns: list[tuple[str, Word]] = []
        argv: list[Word] = []
        extra_redirects = list(redirects)
        problems = self.problems
        words = self.words
        src = self._ascii
        children = node.named_children
        if more:
            children += more  # (`named_children` is a new list each time)
        for ch in children:
            t = TYPE_OF[ch.kind_id]
            if t == "word":  # (an argument: the common case first)
                pass
            elif t == "command_name":
                # (`named_child(0)`: one node, not one per child and a list)
                first = ch.named_child(0)
                if first is not None:
                    ch = first
                    t = TYPE_OF[ch.kind_id]
            elif t == "variable_assignment":
                assigns.append(self._assignment(ch, context, depth))
                plain = False
                continue
            elif t in _REDIRECT_NODES:
                if t == "herestring_redirect":
                    stdin = "herestring"
                    stdin_text = herestring_text(self, ch, stdin_text)
                r = redirect(self, ch, context, depth)
                if r is not None:
                    extra_redirects.append(r)
                plain = False
                continue
            word_text = (src[ch.start_byte:ch.end_byte] if src is not None
                         else ch.text.decode("utf-8", "replace"))
            if t == "word":  # (no node nested in it; `make_word`'s common case first)
                w = known_word(word_text)
                if w is None:
                    w = make_word(ch, problems, word_text, t, src)
                    plain = False  # (kept once its words are shared)
                argv.append(w)
                words.append(w)
                continue
            plain = False
            w = make_word(ch, problems, word_text, t, src)
            argv.append(w)
            words.append(w)
            if t not in _LEAF_WORDS:
                self._after_word(ch, t, context, depth)
        if not argv:
            return None
        name = argv[0].value if argv[0].literal else None
        if name in arith.EVALUATING:
            arith.evaluated_operands(self, name, argv, _word_nodes(node, more), context,
                                     depth)
        return (tuple(argv), tuple(assigns), tuple(extra_redirects), stdin, stdin_text, name,
                plain)


#: the words and `programs.facts` of each command of plain bare words met so far, by its text
#: (`_plain_command`; text -> (argv, args, name, program, risks, outputs)): in a tree without
#: errors, a `command` node with that text is those words again, and its walk a pure function
#: of them (`git status --short`, `npm test`, `cat` come back line after line). Emptied when it
#: holds `_PLAIN_MAX` commands.
_PLAIN_COMMANDS: dict[str, tuple[Any, ...]] = {}
_PLAIN_MAX = 1024


def _plain_command(text: str, argv: tuple[Word, ...], name: str | None) -> bool:
    """Whether the walk of a command of words alone, each a shared plain bare word
    (`words.WORD_CACHE`: nothing to unquote, expand or glob), may be kept in
    `_PLAIN_COMMANDS`: its text is its words (no other node of its own) apart from each other
    by one space, with no `#` (a comment) and no `=` in its name (an assignment)."""
    if not name or name in arith.EVALUATING or "=" in name or "#" in text:
        return False
    return len(argv) == text.count(" ") + 1 and " ".join([w.text for w in argv]) == text


def _word_nodes(node: Any, more: list[Any] | None) -> list[Any]:
    """The nodes of the words of `command` node `node` and then of `more` (see `_command`), in
    the order of its argv (not its assignments and redirections; the word in its name)."""
    out = []
    for ch in node.named_children:
        t = TYPE_OF[ch.kind_id]
        if t == "command_name":
            out.append(ch.named_child(0) or ch)
        elif t != "variable_assignment" and t not in _REDIRECT_NODES:
            out.append(ch)
    return out + more if more else out


#: the other kinds of node that need more than a walk through their children
_VISIT: dict[str, Callable[[Walker, Any, str, int, str], None]] = {
    "redirected_statement": redirected,
    "pipeline": Walker._pipeline,
    "function_definition": Walker._function,
    "variable_assignment": Walker._assignment_node,
    "simple_expansion": Walker._expansion,
    "expansion": Walker._expansion,
    "variable_name": Walker._variable_name,
    "heredoc_body": Walker._heredoc_body,
    "for_statement": Walker._for,
    "arithmetic_expansion": arith.arithmetic_expansion,
    "compound_statement": arith.compound,
    "c_style_for_statement": arith.c_for,
    "test_command": arith.test_command,
    "subscript": arith.subscript,
    "array": arith.array,
    **dict.fromkeys(PLAIN_WORDS, Walker._word),
    # (tokens, as the grammar has it; `_leaf` walks their children all the same if they had)
    **dict.fromkeys(("string_content", "special_variable_name", "heredoc_content",
                     "heredoc_start", "heredoc_end", "test_operator", "regex",
                     "extglob_pattern", "file_descriptor"), Walker._leaf),
}
