"""The records a shell analysis is made of: `Word`, `Redirect`, `Command`, `ShellAnalysis`, and
the `Verdict` of a check. Immutable `statewright._record` records (not dataclasses: see its
docstring)."""

from __future__ import annotations

from ...lean import TYPE_CHECKING, Record, set_field

if TYPE_CHECKING:  # pragma: no cover
    from ..programs.spec import Risk

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
    text: str
    value: str
    pattern: str
    literal: bool
    dynamic: bool
    glob: bool
    tilde: bool

    def __init__(self, text: str, value: str, pattern: str, literal: bool,
                 dynamic: bool = False, glob: bool = False, tilde: bool = False) -> None:
        set_field(self, "text", text)
        set_field(self, "value", value)
        set_field(self, "pattern", pattern)
        set_field(self, "literal", literal)
        set_field(self, "dynamic", dynamic)  # contains $var, ${...}, $(...), `...`, $((...))
        set_field(self, "glob", glob)  # unquoted * ? [
        set_field(self, "tilde", tilde)  # leading unquoted ~


class Redirect(Record):
    """One redirection, or a file an option or argument says the command writes."""

    __slots__ = __match_args__ = _fields = ("op", "fd", "target", "output")
    op: str
    fd: str | None
    target: Word | None
    output: bool

    def __init__(self, op: str, fd: str | None, target: Word | None, output: bool) -> None:
        set_field(self, "op", op)  # '>', '>>', '<', '&>', '>&', '<<', '<<<', ...
        set_field(self, "fd", fd)
        set_field(self, "target", target)  # None for here-docs
        set_field(self, "output", output)  # writes (or truncates) its target


class Command(Record):
    """One command that would run. `argv[0]` is the command name (as a Word)."""

    __slots__ = __match_args__ = _fields = ("argv", "text", "context", "assignments",
                                            "redirects", "stdin", "stdin_text", "parent",
                                            "offset", "function_call", "kind", "risks")
    argv: tuple[Word, ...]
    text: str
    context: str
    assignments: tuple[tuple[str, Word], ...]
    redirects: tuple[Redirect, ...]
    stdin: str
    stdin_text: str | None
    parent: int | None
    offset: int
    function_call: bool
    kind: str
    risks: tuple[Risk, ...]

    def __init__(self, argv: tuple[Word, ...], text: str, context: str = "top",
                 assignments: tuple[tuple[str, Word], ...] = (),
                 redirects: tuple[Redirect, ...] = (), stdin: str = "inherit",
                 stdin_text: str | None = None, parent: int | None = None, offset: int = 0,
                 function_call: bool = False, kind: str = "simple",
                 risks: tuple[Risk, ...] = ()) -> None:
        set_field(self, "argv", argv)
        set_field(self, "text", text)
        # where it sits: top, $(...), pipeline, function f, sh -c, env, ...
        set_field(self, "context", context)
        set_field(self, "assignments", assignments)  # `VAR=value cmd`
        set_field(self, "redirects", redirects)
        set_field(self, "stdin", stdin)  # inherit | pipe | heredoc | herestring | file
        set_field(self, "stdin_text", stdin_text)  # literal here-doc / here-string text fed to it
        set_field(self, "parent", parent)  # index of the wrapper command this one was found inside
        set_field(self, "offset", offset)  # position in the parent's argv where this command starts
        set_field(self, "function_call", function_call)  # calls a function defined in the same line
        set_field(self, "kind", kind)  # simple | declaration | unset
        # what its options and subcommands tell it to do beyond its name (`policy.programs`)
        set_field(self, "risks", risks)

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
    """Everything a command line would run, read and write, as far as the text tells."""

    __slots__ = __match_args__ = _fields = ("source", "commands", "redirects", "assignments",
                                            "variables", "functions", "words", "problems",
                                            "changes_dir", "status_command", "hidden_code",
                                            "job_tokens")
    source: str
    commands: tuple[Command, ...]
    redirects: tuple[Redirect, ...]
    assignments: tuple[tuple[str, Word], ...]
    variables: tuple[str, ...]
    functions: frozenset[str]
    words: tuple[Word, ...]
    problems: tuple[str, ...]
    changes_dir: bool
    status_command: int
    hidden_code: tuple[str, ...]
    job_tokens: tuple[tuple[str, bool], ...]

    def __init__(self, source: str, commands: tuple[Command, ...] = (),
                 redirects: tuple[Redirect, ...] = (),
                 assignments: tuple[tuple[str, Word], ...] = (),
                 variables: tuple[str, ...] = (), functions: frozenset[str] = _EMPTY,
                 words: tuple[Word, ...] = (), problems: tuple[str, ...] = (),
                 changes_dir: bool = False, status_command: int = -1,
                 hidden_code: tuple[str, ...] = (),
                 job_tokens: tuple[tuple[str, bool], ...] = ()) -> None:
        set_field(self, "source", source)
        set_field(self, "commands", commands)
        set_field(self, "redirects", redirects)  # every redirection in the line
        # every assignment (standalone and prefix)
        set_field(self, "assignments", assignments)
        set_field(self, "variables", variables)  # every variable expanded (`!name` for indirect)
        set_field(self, "functions", functions)
        set_field(self, "words", words)  # every word seen (arguments, targets, values)
        # why the line cannot be trusted (parse errors, opaque code)
        set_field(self, "problems", problems)
        set_field(self, "changes_dir", changes_dir)  # contains cd/pushd/popd
        # index of the command whose exit status is the line's own (the last top-level
        # command, after `;` or `&&` only, not negated, backgrounded or piped onward); -1 when
        # the line's status may come from elsewhere (`||`, `;` after it, `|`, `!`, `&`, ...)
        set_field(self, "status_command", status_command)
        # code bash would run from text it evaluates as arithmetic or a subscript (`arith`);
        # also among `problems`
        set_field(self, "hidden_code", hidden_code)
        # each text holding `&` that the walk parsed (the line, code run by `sh -c`, `eval`,
        # ...), and whether its parse tree holds a `&` token (`parser.has_job_token`)
        set_field(self, "job_tokens", job_tokens)

    @property
    def ok(self) -> bool:
        return not self.problems


class Verdict(Record):
    """What check 5 or 6 says about a line."""

    __slots__ = __match_args__ = _fields = ("allowed", "reason", "trace")
    allowed: bool
    reason: str
    trace: tuple[str, ...]

    def __init__(self, allowed: bool, reason: str = "", trace: tuple[str, ...] = ()) -> None:
        set_field(self, "allowed", allowed)
        set_field(self, "reason", reason)  # for the agent (empty when allowed)
        set_field(self, "trace", trace)  # one line per command / rule, for `statewright check`
